/* trace_stats.c - the `trace info` summary of a trace, as text and as JSON. */
#include "traces/trace_stats.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_mem.h"
#include "common/hs_util.h"
#include "traces/trace_format.h"

static void stats_one(trace_stats_t *s, const trace_rec_t *r)
{
    s->hist[hs_size_class(r->size_bytes)]++;
    s->total_bytes += (double)r->size_bytes;
    if (r->size_bytes < s->size_min)
        s->size_min = r->size_bytes;
    if (r->size_bytes > s->size_max)
        s->size_max = r->size_bytes;
    if (r->t_post_ns < s->t_first_post_ns)
        s->t_first_post_ns = r->t_post_ns;
    if (r->t_post_ns > s->t_last_post_ns)
        s->t_last_post_ns = r->t_post_ns;
    if (r->t_done_ns != TRACE_TIME_UNKNOWN) {
        s->done_known++;
        if (r->t_done_ns > s->t_last_done_ns)
            s->t_last_done_ns = r->t_done_ns;
    }
    s->cold += !!(r->flags & TRACE_F_COLD);
    s->errors += !!(r->flags & TRACE_F_ERROR) || r->status;
    s->inline_n += !!(r->flags & TRACE_F_INLINE);
    s->signaled += !!(r->flags & TRACE_F_SIGNALED);
    s->path_ll += (r->flags & TRACE_F_PATH_MASK) == TRACE_F_PATH_LL;
    s->path_bw += (r->flags & TRACE_F_PATH_MASK) == TRACE_F_PATH_BW;
    s->path_unknown += (r->flags & TRACE_F_PATH_MASK) == 0;
    s->ops[r->opcode & 15]++;
}

hs_status_t trace_stats_compute(const trace_t *tr, trace_stats_t *out)
{
    trace_stats_t s;
    uint64_t *sizes = NULL;

    memset(&s, 0, sizeof(s));
    s.records = tr->n;
    s.size_min = s.t_first_post_ns = tr->n ? UINT64_MAX : 0;
    for (size_t i = 0; i < tr->n; i++)
        stats_one(&s, &tr->recs[i]);
    s.unordered = trace_unordered(tr);
    if (tr->n) {
        if (!(sizes = hs_alloc_big(tr->n * sizeof(*sizes))))
            return HS_ERR_NOMEM;
        for (size_t i = 0; i < tr->n; i++)
            sizes[i] = tr->recs[i].size_bytes;
        s.size_p50 = hs_select_u64(sizes, tr->n, (tr->n - 1) / 2);
        s.size_mean = s.total_bytes / (double)tr->n;
        for (size_t i = 0; i < tr->n; i++) /* distinct QPs (not the highest index + 1) */
            sizes[i] = tr->recs[i].qp;
        qsort(sizes, tr->n, sizeof(*sizes), hs_cmp_u64);
        for (size_t i = 0; i < tr->n; i++)
            s.qps += i == 0 || sizes[i] != sizes[i - 1];
        free(sizes);
    }
    *out = s;
    return HS_OK;
}

static double span_us(const trace_stats_t *s)
{
    uint64_t end = s->t_last_done_ns > s->t_last_post_ns ? s->t_last_done_ns : s->t_last_post_ns;
    return s->records ? (double)(end - s->t_first_post_ns) / 1000.0 : 0.0;
}

/* "label" then s (or "-" when empty) made plain, then tail. */
static void put_field(FILE *fp, const char *label, const char *s, const char *tail)
{
    fputs(label, fp);
    hs_fputs_plain(fp, *s ? s : "-");
    fputs(tail, fp);
}

static void print_header(FILE *fp, const char *path, const trace_hdr_t *h)
{
    fprintf(fp, "trace      %s\n", path);
    fputs("producer   ", fp);
    hs_fputs_plain(fp, h->producer);
    fputc(' ', fp);
    hs_fputs_plain(fp, h->producer_version);
    fprintf(fp, " (mode %s)\n", trace_mode_str(h->mode));
    put_field(fp, "host       ", h->host, "  ");
    put_field(fp, "device ", h->device, "  ");
    put_field(fp, "firmware ", h->firmware, "  ");
    fprintf(fp, "mem %s\n", trace_mem_str(h->mem));
    put_field(fp, "clock      ", h->clock_source, " (ns)\n");
    fprintf(fp, "hint       %" PRIu64 " bytes (source %s)\n", h->hint_bytes,
            trace_hint_src_str(h->hint_source));
    fprintf(fp, "pid/rank   %" PRId64 " / %" PRId32 "\n", h->pid, h->rank);
    if (*h->workload)
        put_field(fp, "workload   ", h->workload, "\n");
    if (h->extra_json)
        put_field(fp, "extra      ", h->extra_json, "\n");
}

void trace_stats_print(FILE *fp, const char *path, const trace_t *tr, const trace_stats_t *s)
{
    char a[32], b[32], c[32];
    uint64_t lo, hi;

    print_header(fp, path, &tr->hdr);
    fprintf(fp, "records    %" PRIu64 " (dropped by the producer: %" PRIu64 ")\n", s->records,
            tr->hdr.dropped);
    if (!s->records)
        return;
    hs_format_size(s->size_min, a, sizeof(a));
    hs_format_size(s->size_p50, b, sizeof(b));
    hs_format_size(s->size_max, c, sizeof(c));
    fprintf(fp, "sizes      min %s  p50 %s  max %s  mean %.1f B  total %.0f B\n", a, b, c,
            s->size_mean, s->total_bytes);
    fprintf(fp, "time span  %.3f us (first post to last post/completion)\n", span_us(s));
    fprintf(fp, "completion %" PRIu64 " of %" PRIu64 " known (%.1f%%)\n", s->done_known,
            s->records, 100.0 * (double)s->done_known / (double)s->records);
    fprintf(fp, "cold start %" PRIu64 "   errors %" PRIu64 "   inline %" PRIu64 "   QPs %" PRIu64
            "\n", s->cold, s->errors, s->inline_n, s->qps);
    fprintf(fp, "path       LL %" PRIu64 "  BW %" PRIu64 "  unknown %" PRIu64 "\n", s->path_ll,
            s->path_bw, s->path_unknown);
    if (s->unordered)
        fprintf(fp, "order      %" PRIu64 " records posted before the record ahead of them "
                "(a capture writes records as they complete, and drains several threads' "
                "rings in turn): model, sim and recommend replay them in post order\n",
                s->unordered);
    fprintf(fp, "size histogram (power-of-two classes, as model's; a size <= hint goes LL):\n");
    for (unsigned k = 0; k < TRACE_STATS_BUCKETS; k++) {
        if (!s->hist[k])
            continue;
        hs_size_class_bounds(k, &lo, &hi);
        hs_format_size(k >= 2 ? lo - 1 : lo, a, sizeof(a));
        hs_format_size(hi, b, sizeof(b));
        fprintf(fp, "  %s%6s, %6s] %10" PRIu64 "  %5.1f%%\n", k >= 2 ? "(" : "[", a, b,
                s->hist[k], 100.0 * (double)s->hist[k] / (double)s->records);
    }
}

static cJSON *hist_json(const trace_stats_t *s)
{
    cJSON *arr = cJSON_CreateArray();
    uint64_t lo, hi;

    for (unsigned k = 0; arr && k < TRACE_STATS_BUCKETS; k++) {
        cJSON *b;
        if (!s->hist[k])
            continue;
        hs_size_class_bounds(k, &lo, &hi);
        b = cJSON_CreateObject();
        cJSON_AddNumberToObject(b, "min_bytes", (double)lo);
        cJSON_AddNumberToObject(b, "max_bytes", (double)hi);
        cJSON_AddNumberToObject(b, "count", (double)s->hist[k]);
        cJSON_AddItemToArray(arr, b);
    }
    return arr;
}

char *trace_stats_json(const char *path, const trace_t *tr, const trace_stats_t *s)
{
    cJSON *o = cJSON_CreateObject(), *sz, *path_o;
    char *text;

    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddItemToObject(o, "header", trace_hdr_to_cjson(&tr->hdr));
    cJSON_AddNumberToObject(o, "records", (double)s->records);
    cJSON_AddNumberToObject(o, "dropped", (double)tr->hdr.dropped);
    sz = cJSON_AddObjectToObject(o, "size_bytes");
    cJSON_AddNumberToObject(sz, "min", (double)s->size_min);
    cJSON_AddNumberToObject(sz, "p50", (double)s->size_p50);
    cJSON_AddNumberToObject(sz, "max", (double)s->size_max);
    cJSON_AddNumberToObject(sz, "mean", s->size_mean);
    cJSON_AddNumberToObject(sz, "total", s->total_bytes);
    cJSON_AddItemToObject(o, "size_histogram", hist_json(s));
    cJSON_AddNumberToObject(o, "time_span_us", span_us(s));
    cJSON_AddNumberToObject(o, "t_first_post_ns", (double)s->t_first_post_ns);
    cJSON_AddNumberToObject(o, "t_last_post_ns", (double)s->t_last_post_ns);
    cJSON_AddNumberToObject(o, "completion_known", (double)s->done_known);
    cJSON_AddNumberToObject(o, "completion_coverage",
                            s->records ? (double)s->done_known / (double)s->records : 0.0);
    cJSON_AddNumberToObject(o, "cold_start", (double)s->cold);
    cJSON_AddNumberToObject(o, "errors", (double)s->errors);
    cJSON_AddNumberToObject(o, "inline", (double)s->inline_n);
    cJSON_AddNumberToObject(o, "qps", (double)s->qps);
    cJSON_AddNumberToObject(o, "out_of_post_order", (double)s->unordered);
    path_o = cJSON_AddObjectToObject(o, "path_split");
    cJSON_AddNumberToObject(path_o, "ll", (double)s->path_ll);
    cJSON_AddNumberToObject(path_o, "bw", (double)s->path_bw);
    cJSON_AddNumberToObject(path_o, "unknown", (double)s->path_unknown);
    text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}
