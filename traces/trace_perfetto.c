/* trace_perfetto.c - Chrome/Perfetto trace-event JSON (trace_perfetto.h says what a viewer
 * shows). The events are written in post order; the in-flight counters merge the posts with
 * the completions through a min-heap of pending completion times. */
#include "traces/trace_perfetto.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "traces/trace_format.h"

#define PF_PID 1

typedef struct {
    uint64_t t;
    uint32_t slot;
} pf_pending_t;

typedef struct {
    FILE *fp;
    const trace_t *tr;
    size_t *order;         /* record indices in post order; NULL = file order is */
    uint32_t *qps;         /* distinct QP indices, ascending */
    size_t nqp;
    uint64_t *inflight;    /* per QP slot */
    pf_pending_t *heap;    /* pending completions, earliest first */
    size_t nheap;
    unsigned long events;
} pf_ctx_t;

static const char *pf_path(uint16_t flags)
{
    switch (flags & TRACE_F_PATH_MASK) {
    case TRACE_F_PATH_LL:
        return "LL";
    case TRACE_F_PATH_BW:
        return "BW";
    default:
        return "unknown";
    }
}

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

/* ---- QP slots --------------------------------------------------------------------- */

static int pf_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static hs_status_t pf_qps_build(pf_ctx_t *c)
{
    const trace_t *tr = c->tr;
    size_t n = 0;

    if ((c->qps = malloc((tr->n ? tr->n : 1) * sizeof(*c->qps))) == NULL)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < tr->n; i++)
        c->qps[i] = tr->recs[i].qp;
    qsort(c->qps, tr->n, sizeof(*c->qps), pf_cmp_u32);
    for (size_t i = 0; i < tr->n; i++)
        if (n == 0 || c->qps[n - 1] != c->qps[i])
            c->qps[n++] = c->qps[i];
    c->nqp = n;
    if ((c->inflight = calloc(n ? n : 1, sizeof(*c->inflight))) == NULL)
        return HS_ERR_NOMEM;
    return HS_OK;
}

static uint32_t pf_slot(const pf_ctx_t *c, uint32_t qp)
{
    size_t lo = 0, hi = c->nqp;

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->qps[mid] <= qp)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* ---- post order ------------------------------------------------------------------- */

static const trace_rec_t *g_sort_recs; /* qsort has no context argument in C11 */

static int pf_cmp_post(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    uint64_t x = g_sort_recs[i].t_post_ns, y = g_sort_recs[j].t_post_ns;

    if (x != y)
        return (x > y) - (x < y);
    return (i > j) - (i < j); /* ties in file order */
}

static hs_status_t pf_order_build(pf_ctx_t *c)
{
    if (trace_unordered(c->tr) == 0)
        return HS_OK;
    if ((c->order = malloc(c->tr->n * sizeof(*c->order))) == NULL)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < c->tr->n; i++)
        c->order[i] = i;
    g_sort_recs = c->tr->recs;
    qsort(c->order, c->tr->n, sizeof(*c->order), pf_cmp_post);
    g_sort_recs = NULL;
    return HS_OK;
}

/* ---- pending completions (binary min-heap on t) ----------------------------------- */

static void pf_heap_push(pf_ctx_t *c, uint64_t t, uint32_t slot)
{
    size_t i = c->nheap++;

    while (i > 0 && c->heap[(i - 1) / 2].t > t) {
        c->heap[i] = c->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    c->heap[i] = (pf_pending_t){t, slot};
}

static pf_pending_t pf_heap_pop(pf_ctx_t *c)
{
    pf_pending_t top = c->heap[0], last = c->heap[--c->nheap];
    size_t i = 0;

    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= c->nheap)
            break;
        if (k + 1 < c->nheap && c->heap[k + 1].t < c->heap[k].t)
            k++;
        if (c->heap[k].t >= last.t)
            break;
        c->heap[i] = c->heap[k];
        i = k;
    }
    if (c->nheap)
        c->heap[i] = last;
    return top;
}

/* ---- events ----------------------------------------------------------------------- */

static void pf_counter(pf_ctx_t *c, uint32_t slot, uint64_t t)
{
    pf_next(c);
    fprintf(c->fp, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"QP %" PRIu32 " in flight\",\"ts\":",
            PF_PID, c->qps[slot]);
    pf_put_ts(c->fp, t);
    fprintf(c->fp, ",\"args\":{\"messages\":%" PRIu64 "}}", c->inflight[slot]);
}

/* Completions at or before t leave the in-flight counters. */
static void pf_complete_until(pf_ctx_t *c, uint64_t t)
{
    while (c->nheap && c->heap[0].t <= t) {
        pf_pending_t p = pf_heap_pop(c);
        c->inflight[p.slot]--;
        pf_counter(c, p.slot, p.t);
    }
}

static void pf_args(pf_ctx_t *c, const trace_rec_t *r, size_t file_idx)
{
    fprintf(c->fp,
            ",\"args\":{\"size\":%" PRIu64 ",\"path\":\"%s\",\"qp\":%" PRIu32
            ",\"op\":\"%s\",\"record\":%zu",
            r->size_bytes, pf_path(r->flags), r->qp, trace_opcode_str(r->opcode), file_idx);
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
    const char *path = pf_path(r->flags);

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

static void pf_message(pf_ctx_t *c, size_t i)
{
    const trace_rec_t *r = &c->tr->recs[i];
    size_t fi = trace_file_index(c->tr, i);
    uint32_t slot = pf_slot(c, r->qp);

    pf_complete_until(c, r->t_post_ns);
    if (r->flags & TRACE_F_SWITCH) {
        pf_next(c);
        fprintf(c->fp, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%" PRIu64
                ",\"name\":\"path switch\",\"ts\":", PF_PID, pf_tid(r->qp));
        pf_put_ts(c->fp, r->t_post_ns);
        fprintf(c->fp, ",\"args\":{\"to\":\"%s\",\"record\":%zu}}", pf_path(r->flags), fi);
    }
    if (r->t_done_ns == TRACE_TIME_UNKNOWN) {
        pf_async(c, r, fi, 'n', r->t_post_ns);
        return;
    }
    pf_async(c, r, fi, 'b', r->t_post_ns);
    /* a completion before its post (trace_rec_check refuses it) is drawn as an instant */
    pf_async(c, r, fi, 'e', r->t_done_ns > r->t_post_ns ? r->t_done_ns : r->t_post_ns);
    c->inflight[slot]++;
    pf_counter(c, slot, r->t_post_ns);
    pf_heap_push(c, r->t_done_ns > r->t_post_ns ? r->t_done_ns : r->t_post_ns, slot);
}

static void pf_metadata(pf_ctx_t *c, const char *source)
{
    cJSON *name = cJSON_CreateString(source ? source : "trace");
    char *q = name ? cJSON_PrintUnformatted(name) : NULL;

    pf_next(c);
    fprintf(c->fp, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":%s}}",
            PF_PID, q ? q : "\"trace\"");
    for (size_t s = 0; s < c->nqp; s++) {
        pf_next(c);
        fprintf(c->fp, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu64
                ",\"name\":\"thread_name\",\"args\":{\"name\":\"QP %" PRIu32 "\"}}",
                PF_PID, pf_tid(c->qps[s]), c->qps[s]);
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
    cJSON_AddStringToObject(o, "converter", "hintsim trace convert --to perfetto");
    if ((text = cJSON_PrintUnformatted(o)) != NULL)
        fprintf(c->fp, ",\n\"otherData\":%s", text);
    free(text);
    cJSON_Delete(o);
}

hs_status_t trace_perfetto_write(FILE *fp, const trace_t *tr, const char *source)
{
    pf_ctx_t c = {.fp = fp, .tr = tr};
    hs_status_t st;

    if ((st = pf_qps_build(&c)) != HS_OK || (st = pf_order_build(&c)) != HS_OK)
        goto free_ctx;
    if ((c.heap = malloc((tr->n ? tr->n : 1) * sizeof(*c.heap))) == NULL) {
        st = HS_ERR_NOMEM;
        goto free_ctx;
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", fp);
    pf_metadata(&c, source);
    for (size_t k = 0; k < tr->n; k++)
        pf_message(&c, c.order ? c.order[k] : k);
    pf_complete_until(&c, UINT64_MAX);
    fputs("\n]", fp);
    pf_other_data(&c);
    fputs("}\n", fp);
    st = ferror(fp) ? HS_ERR_IO : HS_OK;
free_ctx:
    free(c.heap);
    free(c.order);
    free(c.inflight);
    free(c.qps);
    return st;
}

hs_status_t trace_perfetto_save(const char *path, const trace_t *tr, const char *source)
{
    hs_afile_t *af;
    hs_status_t st;

    if ((st = hs_afile_open(path, &af)) != HS_OK)
        return st;
    if ((st = trace_perfetto_write(hs_afile_stream(af), tr, source)) != HS_OK) {
        hs_log_error("%s: write failed", path);
        hs_afile_abort(af);
        return st;
    }
    return hs_afile_commit(af);
}
