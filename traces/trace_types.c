/* trace_types.c - in-memory trace objects and header defaults. */
#include "traces/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hs_mem.h"
#include "common/hs_status.h"
#include "traces/trace_format.h"

void trace_hdr_init(trace_hdr_t *hdr)
{
    memset(hdr, 0, sizeof(*hdr));
    hdr->version = TRACE_FORMAT_VERSION;
    snprintf(hdr->producer, sizeof(hdr->producer), "hintsim");
    snprintf(hdr->producer_version, sizeof(hdr->producer_version), "%s", HINTSIM_VERSION);
    hdr->mode = TRACE_MODE_SYNTHETIC;
    if (gethostname(hdr->host, sizeof(hdr->host) - 1) != 0)
        snprintf(hdr->host, sizeof(hdr->host), "unknown");
    hdr->mem = TRACE_MEM_HOST;
    snprintf(hdr->clock_source, sizeof(hdr->clock_source), "CLOCK_MONOTONIC");
    hdr->hint_source = TRACE_HINT_NONE;
    hdr->pid = -1;
    hdr->rank = -1;
}

void trace_hdr_init_unknown(trace_hdr_t *hdr)
{
    trace_hdr_init(hdr);
    snprintf(hdr->producer, sizeof(hdr->producer), "unknown");
    snprintf(hdr->producer_version, sizeof(hdr->producer_version), "unknown");
    snprintf(hdr->host, sizeof(hdr->host), "unknown");
    snprintf(hdr->device, sizeof(hdr->device), "unknown");
    snprintf(hdr->clock_source, sizeof(hdr->clock_source), "unknown");
    hdr->mode = TRACE_MODE_CONVERTED;
}

void trace_hdr_release(trace_hdr_t *hdr)
{
    free(hdr->extra_json);
    hdr->extra_json = NULL;
}

hs_status_t trace_new(trace_t **out)
{
    trace_t *tr = calloc(1, sizeof(*tr));

    if (!tr)
        return HS_ERR_NOMEM;
    trace_hdr_init(&tr->hdr);
    *out = tr;
    return HS_OK;
}

hs_status_t trace_push(trace_t *tr, const trace_rec_t *rec)
{
    if (tr->n == tr->cap) {
        size_t ncap = tr->cap ? tr->cap * 2 : 1024;
        if (ncap * sizeof(*tr->recs) >= HS_MEM_BIG_BYTES) { /* large: on huge pages */
            hs_status_t st = trace_reserve(tr, ncap);
            if (st != HS_OK)
                return st;
        } else {
            trace_rec_t *nr = realloc(tr->recs, ncap * sizeof(*nr));
            if (!nr) {
                hs_log_error("out of memory for %zu trace records", ncap);
                return HS_ERR_NOMEM;
            }
            tr->recs = nr;
            tr->cap = ncap;
        }
    }
    tr->recs[tr->n++] = *rec;
    return HS_OK;
}

hs_status_t trace_reserve(trace_t *tr, size_t n)
{
    if (n <= tr->cap)
        return HS_OK;
    trace_rec_t *nr = n > SIZE_MAX / sizeof(*tr->recs) ? NULL : hs_alloc_big(n * sizeof(*nr));
    if (!nr) {
        hs_log_error("out of memory for %zu trace records", n);
        return HS_ERR_NOMEM;
    }
    if (tr->n)
        memcpy(nr, tr->recs, tr->n * sizeof(*nr));
    free(tr->recs);
    tr->recs = nr;
    tr->cap = n;
    return HS_OK;
}

void trace_free(trace_t *tr)
{
    if (!tr)
        return;
    trace_hdr_release(&tr->hdr);
    free(tr->recs);
    free(tr->file_idx);
    free(tr);
}

/* A record's post time (relative to the earliest) and its index. */
typedef struct {
    uint64_t key, idx;
} post_key_t;

/* Stable LSD radix sort of a[0..n) by key, bits significant bits, through scratch b;
 * returns the array that holds the result. */
static post_key_t *radix_keys(post_key_t *a, post_key_t *b, size_t n, unsigned bits)
{
    for (unsigned shift = 0; shift < bits; shift += 11) {
        size_t pos[2048] = {0};
        for (size_t i = 0; i < n; i++)
            pos[(a[i].key >> shift) & 2047]++;
        for (size_t d = 0, sum = 0; d < 2048; d++) {
            size_t c = pos[d];
            pos[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            b[pos[(a[i].key >> shift) & 2047]++] = a[i];
        post_key_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

size_t trace_unordered(const trace_t *tr)
{
    size_t bad = 0;

    for (size_t i = 1; i < tr->n; i++)
        bad += tr->recs[i].t_post_ns < tr->recs[i - 1].t_post_ns;
    return bad;
}

hs_status_t trace_sort_posts(trace_t *tr, size_t *moved)
{
    size_t n = tr->n;
    uint64_t lo = UINT64_MAX, hi = 0;
    hs_status_t st = HS_ERR_NOMEM;

    if ((*moved = trace_unordered(tr)) == 0)
        return HS_OK;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = tr->recs[i].t_post_ns;
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    post_key_t *a = hs_alloc_big(n * sizeof(*a)), *b = hs_alloc_big(n * sizeof(*b));
    trace_rec_t *out = hs_alloc_big(n * sizeof(*out));
    size_t *idx = hs_alloc_big(n * sizeof(*idx));
    if (!a || !b || !out || !idx)
        goto out;
    for (size_t i = 0; i < n; i++)
        a[i] = (post_key_t){tr->recs[i].t_post_ns - lo, i};
    const post_key_t *s = radix_keys(a, b, n, 64u - (unsigned)__builtin_clzll(hi - lo));
    for (size_t i = 0; i < n; i++) {
        out[i] = tr->recs[s[i].idx];
        idx[i] = trace_file_index(tr, s[i].idx);
    }
    free(tr->recs);
    free(tr->file_idx);
    tr->recs = out;
    tr->cap = n;
    tr->file_idx = idx;
    out = NULL;
    idx = NULL;
    st = HS_OK;
out:
    free(a);
    free(b);
    free(out);
    free(idx);
    return st;
}

size_t trace_count_insane(const trace_t *tr, size_t *first, char *why, size_t wl)
{
    size_t n = 0;

    for (size_t i = 0; i < tr->n; i++) {
        trace_rec_t r = tr->recs[i];
        char w[200];
        r.opcode = TRACE_OP_OTHER; /* an unknown opcode number is carried, not refused */
        if (trace_rec_check(&r, w, sizeof(w)) == 0)
            continue;
        if (n++ == 0) {
            *first = i;
            snprintf(why, wl, "%s", w);
        }
    }
    return n;
}

hs_status_t trace_load_posts(const char *path, int note, trace_t **out)
{
    trace_t *tr = NULL;
    size_t moved, first = 0, bad;
    char why[200];
    hs_status_t st = trace_load(path, &tr);

    if (st == HS_OK && note && (bad = trace_count_insane(tr, &first, why, sizeof(why))) != 0)
        hs_log_warn("%s: %zu record%s that no replay can take as recorded (first: record %zu, "
                    "%s): replayed as they are, figures from them are not to be trusted "
                    "('hintsim trace validate' names them)", path, bad, bad == 1 ? "" : "s",
                    first, why);

    if (st == HS_OK && (st = trace_sort_posts(tr, &moved)) != HS_OK)
        trace_free(tr);
    if (st != HS_OK)
        return st;
    if (moved && note)
        hs_log_info("%s: %zu record%s out of post order (posted before the record ahead in "
                    "the file: a capture writes records as they complete, and drains several threads' "
                    "rings in turn): replayed in post order", path,
                    moved, moved == 1 ? "" : "s");
    *out = tr;
    return HS_OK;
}
