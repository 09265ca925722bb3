/* trace_perfetto_json.c - Chrome trace-event JSON (trace_perfetto.h says what a viewer
 * shows), written as the walk (trace_perfetto_walk.h) visits posts and completions. */
#include "traces/trace_perfetto.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "traces/trace_format.h"
#include "traces/trace_perfetto_walk.h"

#define PF_PID 1

typedef struct {
    FILE *fp;
    const trace_t *tr;
    unsigned long events;
} pf_ctx_t;

/* QP n's thread id (0 is no thread to some viewers). */
static uint64_t pf_tid(uint32_t qp)
{
    return (uint64_t)qp + 1;
}

/* ns as the format's microseconds, exactly: "12.345". */
static void pf_put_ts(FILE *fp, uint64_t ns)
{
    fprintf(fp, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* The separator before every event but the first. */
static void pf_next(pf_ctx_t *c)
{
    fputs(c->events++ ? ",\n" : "\n", c->fp);
}

/* ---- events ----------------------------------------------------------------------- */

static void pf_counter(pf_ctx_t *c, const pf_walk_t *w, uint32_t slot, uint64_t t)
{
    pf_next(c);
    fprintf(c->fp, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"QP %" PRIu32 " in flight\",\"ts\":",
            PF_PID, w->qps[slot]);
    pf_put_ts(c->fp, t);
    fprintf(c->fp, ",\"args\":{\"messages\":%" PRIu64 "}}", w->inflight[slot]);
}

static void pf_args(pf_ctx_t *c, const trace_rec_t *r, size_t file_idx)
{
    fprintf(c->fp,
            ",\"args\":{\"size\":%" PRIu64 ",\"path\":\"%s\",\"qp\":%" PRIu32
            ",\"op\":\"%s\",\"record\":%zu",
            r->size_bytes, pf_path_str(r->flags), r->qp, trace_opcode_str(r->opcode), file_idx);
    if (r->status || (r->flags & TRACE_F_ERROR))
        fprintf(c->fp, ",\"status\":%u", (unsigned)r->status);
    if (r->flags & TRACE_F_INLINE)
        fputs(",\"inline\":true", c->fp);
    if (r->flags & TRACE_F_SIGNALED)
        fputs(",\"signaled\":true", c->fp);
    if (r->flags & TRACE_F_COLD)
        fputs(",\"cold\":true", c->fp);
    if (r->flags & TRACE_F_IMPLICIT)
        fputs(",\"implicit_completion\":true", c->fp);
    if (r->t_done_ns == TRACE_TIME_UNKNOWN)
        fputs(",\"completion\":\"unknown\"", c->fp);
    fputs("}}", c->fp);
}

/* One async event of the record's QP/path track: ph b, e or n at t. */
static void pf_async(pf_ctx_t *c, const trace_rec_t *r, size_t file_idx, char ph, uint64_t t)
{
    const char *path = pf_path_str(r->flags);

    pf_next(c);
    fprintf(c->fp,
            "{\"ph\":\"%c\",\"pid\":%d,\"tid\":%" PRIu64 ",\"cat\":\"%s\",\"name\":\"QP %" PRIu32
            " %s\",\"id\":\"0x%zx\",\"ts\":",
            ph, PF_PID, pf_tid(r->qp), path, r->qp, path, file_idx);
    pf_put_ts(c->fp, t);
    if (ph == 'e')
        fputs("}", c->fp);
    else
        pf_args(c, r, file_idx);
}

static void pf_post(void *ctx, const pf_walk_t *w, size_t i, uint32_t slot)
{
    pf_ctx_t *c = ctx;
    const trace_rec_t *r = &c->tr->recs[i];
    size_t fi = trace_file_index(c->tr, i);

    if (r->flags & TRACE_F_SWITCH) {
        pf_next(c);
        fprintf(c->fp, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%" PRIu64
                ",\"name\":\"path switch\",\"ts\":", PF_PID, pf_tid(r->qp));
        pf_put_ts(c->fp, r->t_post_ns);
        fprintf(c->fp, ",\"args\":{\"to\":\"%s\",\"record\":%zu}}", pf_path_str(r->flags), fi);
    }
    if (r->t_done_ns == TRACE_TIME_UNKNOWN) {
        pf_async(c, r, fi, 'n', r->t_post_ns);
        return;
    }
    /* async events need no order: the end goes with its begin */
    pf_async(c, r, fi, 'b', r->t_post_ns);
    pf_async(c, r, fi, 'e', pf_done_ns(r));
    pf_counter(c, w, slot, r->t_post_ns);
}

static void pf_done(void *ctx, const pf_walk_t *w, size_t i, uint32_t slot)
{
    pf_counter(ctx, w, slot, pf_done_ns(&w->tr->recs[i]));
}

static void pf_metadata(pf_ctx_t *c, const pf_walk_t *w, const char *source)
{
    cJSON *name = cJSON_CreateString(source ? source : "trace");
    char *q = name ? cJSON_PrintUnformatted(name) : NULL;

    pf_next(c);
    fprintf(c->fp, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":%s}}",
            PF_PID, q ? q : "\"trace\"");
    for (size_t s = 0; s < w->nqp; s++) {
        pf_next(c);
        fprintf(c->fp, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu64
                ",\"name\":\"thread_name\",\"args\":{\"name\":\"QP %" PRIu32 "\"}}",
                PF_PID, pf_tid(w->qps[s]), w->qps[s]);
    }
    free(q);
    cJSON_Delete(name);
}

static void pf_other_data(pf_ctx_t *c)
{
    const trace_hdr_t *h = &c->tr->hdr;
    cJSON *o = cJSON_CreateObject();
    char *text;

    if (o == NULL)
        return;
    cJSON_AddStringToObject(o, "producer", h->producer);
    cJSON_AddStringToObject(o, "mode", trace_mode_str(h->mode));
    cJSON_AddStringToObject(o, "host", h->host);
    cJSON_AddStringToObject(o, "device", h->device);
    cJSON_AddStringToObject(o, "workload", h->workload);
    cJSON_AddStringToObject(o, "clock_source", h->clock_source);
    cJSON_AddNumberToObject(o, "hint_bytes", (double)h->hint_bytes);
    cJSON_AddNumberToObject(o, "records", (double)c->tr->n);
    cJSON_AddStringToObject(o, "converter", "hintsim trace convert --to chrome-json");
    if ((text = cJSON_PrintUnformatted(o)) != NULL)
        fprintf(c->fp, ",\n\"otherData\":%s", text);
    free(text);
    cJSON_Delete(o);
}

hs_status_t trace_chrome_json_write(FILE *fp, const trace_t *tr, const char *source)
{
    static const pf_walk_ops_t ops = {pf_post, pf_done};
    pf_ctx_t c = {.fp = fp, .tr = tr};
    pf_walk_t w;

    if (pf_walk_init(&w, tr) != HS_OK)
        return HS_ERR_NOMEM;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", fp);
    pf_metadata(&c, &w, source);
    pf_walk_run(&w, &ops, &c);
    fputs("\n]", fp);
    pf_other_data(&c);
    fputs("}\n", fp);
    pf_walk_free(&w);
    return ferror(fp) ? HS_ERR_IO : HS_OK;
}

hs_status_t trace_chrome_json_save(const char *path, const trace_t *tr, const char *source)
{
    return pf_save(path, trace_chrome_json_write, tr, source);
}
