/* trace_types.c - in-memory trace objects and header defaults. */
#include "traces/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hs_mem.h"

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
            if (!nr)
                return HS_ERR_NOMEM;
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
    if (n > SIZE_MAX / sizeof(*tr->recs))
        return HS_ERR_NOMEM;
    trace_rec_t *nr = hs_alloc_big(n * sizeof(*nr));
    if (!nr)
        return HS_ERR_NOMEM;
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
    free(tr);
}
