/* sweep_eval_cuda.c - the sweep evaluator over the GPU replay (sweep_eval_cuda.h).
 *
 * Built on the model evaluator (sweep_eval_model.h): its checks, point profiles and keys,
 * so a point file is the same whichever engine wrote it, and the merge is the CPU sweep's.
 * prepare() replays the fixed-hint points of a batch on the GPU, one launch per trace, and
 * keeps their results for eval(); an "auto" point is the recommender's (rec_run on the CPU,
 * through the model evaluator), whose ranking this engine does not repeat.
 */
#include "sweep/sweep_eval_cuda.h"

#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_eval_model.h"
#include "sweep_eval_source.h" /* generated: SWEEP_EVAL_SOURCE */

#ifndef HS_CUDA_SWEEP_NOTE
#define HS_CUDA_SWEEP_NOTE "built"
#endif

typedef struct {
    size_t index;
    sweep_result_t r;
} cached_t;

typedef struct {
    sweep_eval_t model;
    const sweep_grid_t *g;
    pred_mode_t mode;
    scu_ctx_t *cu;      /* opened at the first batch */
    cached_t *cache;    /* the last batch's results, in the order prepare was given */
    size_t ncache, cursor;
} eval_cuda_t;

const char *scu_build_note(void)
{
    return HS_CUDA_SWEEP_NOTE;
}

static hs_status_t ec_check(void *ctx, const sweep_grid_t *g)
{
    eval_cuda_t *c = ctx;

    return c->model.ops->check(c->model.ctx, g);
}

static hs_status_t ec_profile_hash(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                                   uint64_t *out)
{
    eval_cuda_t *c = ctx;

    return c->model.ops->profile_hash(c->model.ctx, g, pt, out);
}

/* The points of batch pts[0..n) on trace t with a fixed hint, replayed on the GPU; their
 * results appended to the cache. */
static hs_status_t run_trace(eval_cuda_t *c, size_t t, const sweep_point_t *const *pts, size_t n)
{
    const trace_t *tr = sweep_eval_model_trace(&c->model, t);
    profile_t **profs = calloc(n ? n : 1, sizeof(*profs));
    uint64_t *hints = calloc(n ? n : 1, sizeof(*hints));
    pred_result_t *res = calloc(n ? n : 1, sizeof(*res));
    size_t *at = calloc(n ? n : 1, sizeof(*at)), m = 0;
    double seg_ll = -1, seg_bw = -1;
    pred_opts_t o;
    hs_status_t st = profs && hints && res && at ? HS_OK : HS_ERR_NOMEM;

    memset(&o, 0, sizeof(o));
    o.mode = c->mode;
    o.trace_name = c->g->traces[t].label;
    for (size_t i = 0; i < n && st == HS_OK; i++) {
        const sweep_hint_t *h = &c->g->hints[pts[i]->hint];
        if (pts[i]->trace != t || h->is_auto)
            continue;
        if ((st = sweep_eval_model_profile(&c->model, pts[i], &profs[m])) != HS_OK)
            break;
        /* what pred_run checks per point: the trace depends on the profile by its segments */
        if (profs[m]->ll_seg_bytes != seg_ll || profs[m]->bw_seg_bytes != seg_bw) {
            seg_ll = profs[m]->ll_seg_bytes;
            seg_bw = profs[m]->bw_seg_bytes;
            st = pred_check_trace(tr, profs[m], &o);
        }
        hints[m] = h->bytes;
        at[m++] = i;
    }
    if (st == HS_OK && m)
        st = scu_replay_batch(c->cu, tr, c->mode, pred_all_cold(tr),
                              (const profile_t *const *)profs, hints, m, res, NULL);
    for (size_t j = 0; j < m && st == HS_OK; j++) {
        cached_t *e = &c->cache[c->ncache++];
        e->index = pts[at[j]]->index;
        sweep_eval_model_result(&c->model, &res[j], &e->r);
    }
    for (size_t j = 0; j < n && profs; j++)
        profile_free(profs[j]);
    for (size_t j = 0; j < n && res; j++)
        pred_result_release(&res[j]);
    free(profs);
    free(hints);
    free(res);
    free(at);
    return st;
}

static hs_status_t ec_prepare(void *ctx, const sweep_grid_t *g, const sweep_point_t *const *pts,
                              size_t n)
{
    eval_cuda_t *c = ctx;
    hs_status_t st = HS_OK;

    free(c->cache);
    c->ncache = c->cursor = 0;
    c->cache = calloc(n ? n : 1, sizeof(*c->cache));
    if (!c->cache)
        return HS_ERR_NOMEM;
    if (!c->cu && (st = scu_open(-1, &c->cu)) != HS_OK)
        return st;
    for (size_t t = 0; t < g->ntraces && st == HS_OK; t++)
        st = run_trace(c, t, pts, n);
    return st;
}

/* The cached result of point index (looked for from where the last one was found: eval
 * follows prepare's order). */
static const sweep_result_t *cache_find(eval_cuda_t *c, size_t index)
{
    for (size_t k = 0; k < c->ncache; k++) {
        size_t j = (c->cursor + k) % c->ncache;
        if (c->cache[j].index == index) {
            c->cursor = j + 1;
            return &c->cache[j].r;
        }
    }
    return NULL;
}

static hs_status_t ec_eval(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                           sweep_result_t *out)
{
    eval_cuda_t *c = ctx;
    const sweep_result_t *r;
    hs_status_t st;

    if (g->hints[pt->hint].is_auto) /* the recommender's ranking: rec_run, on the CPU */
        return c->model.ops->eval(c->model.ctx, g, pt, out);
    if (!(r = cache_find(c, pt->index))) {
        if ((st = ec_prepare(ctx, g, &pt, 1)) != HS_OK)
            return st;
        if (!(r = cache_find(c, pt->index)))
            return HS_ERR_INTERNAL;
    }
    *out = *r;
    return HS_OK;
}

static const sweep_eval_ops_t g_eval_cuda_ops = {
    "cuda", ec_check, ec_profile_hash, ec_eval, ec_prepare, SWEEP_EVAL_SOURCE,
};

hs_status_t sweep_eval_cuda_create(const sweep_grid_t *g, sweep_eval_t *out)
{
    eval_cuda_t *c;
    hs_status_t st;

    if (strcmp(g->engine, "model") != 0) {
        hs_log_error("%s: engine '%s': --engine cuda replays the analytical model only "
                     "(engine \"model\")", g->path, g->engine);
        return HS_ERR_USAGE;
    }
    if (!(c = calloc(1, sizeof(*c))))
        return HS_ERR_NOMEM;
    c->g = g;
    c->mode = strcmp(g->mode, "closed") == 0 ? PRED_CLOSED : PRED_OPEN;
    if ((st = sweep_eval_model_create(g, &c->model)) != HS_OK) {
        free(c);
        return st;
    }
    out->ops = &g_eval_cuda_ops;
    out->ctx = c;
    return HS_OK;
}

void sweep_eval_cuda_destroy(sweep_eval_t *ev)
{
    eval_cuda_t *c = ev->ctx;

    if (c) {
        sweep_eval_model_destroy(&c->model);
        scu_close(c->cu);
        free(c->cache);
        free(c);
    }
    ev->ctx = NULL;
    ev->ops = NULL;
}
