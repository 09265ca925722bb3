/* sweep_eval_model.c - the real evaluator (see sweep_eval_model.h).
 *
 * Traces are loaded once when the evaluator is created and base profiles once in check();
 * a point clones its base profile and applies the grid's overrides (fixed ones, then one
 * per axis), so its profile hash is the hash of the numbers the engine really used.
 * "auto" is the recommender's answer (rec_run over its auto candidates, one thread: the
 * sweep already runs one point per core), so a sweep agrees with `hintsim recommend`.
 */
#include "sweep/sweep_eval_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "model/recommend/recommend.h"
#include "sim/sim.h"
#include "sweep_eval_source.h" /* generated: SWEEP_EVAL_SOURCE */
#include "traces/trace.h"

typedef struct {
    const sweep_grid_t *g;
    const pred_engine_ops_t *eng;
    obj_t objective;
    trace_t **traces;     /* one per grid trace */
    profile_t **profiles; /* one per grid profile, loaded by check() */
    pred_raw_t buf;       /* per-message arrays for the longest trace, which every point's
                           * replay reuses: allocated at the first point, so in each forked
                           * worker (its copy of this context) */
} eval_model_t;

static void ctx_free(eval_model_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; m->traces && i < m->g->ntraces; i++)
        trace_free(m->traces[i]);
    for (size_t i = 0; m->profiles && i < m->g->nprofiles; i++)
        profile_free(m->profiles[i]);
    free(m->traces);
    free(m->profiles);
    pred_raw_free(&m->buf);
    free(m);
}

/* Name where profile i came from: the grid file's entry or the --profile option. */
static void profile_load_error(const sweep_grid_t *g, size_t i)
{
    if (i < g->nprofiles_grid)
        hs_log_error("%s: profiles[%zu]: cannot load '%s'", g->path, i, g->profiles[i]);
    else
        hs_log_error("--profile %s: cannot load it: expected a built-in profile name "
                     "(hintsim profile list) or a profile JSON file", g->profiles[i]);
}

static hs_status_t em_check(void *ctx, const sweep_grid_t *g)
{
    eval_model_t *m = ctx;
    hs_status_t st;

    if (obj_parse(g->objective, &m->objective) != HS_OK) {
        hs_log_error("%s: objective: '%s' is not one the recommender knows", g->path,
                     g->objective);
        return HS_ERR_INVALID;
    }
    for (size_t i = 0; i < g->nprofiles; i++) {
        if (m->profiles[i])
            continue;
        if ((st = profile_load(g->profiles[i], &m->profiles[i])) != HS_OK) {
            profile_load_error(g, i);
            return st;
        }
    }
    return HS_OK;
}

/* The point's profile: its base profile with every override applied, validated. */
static hs_status_t point_profile(eval_model_t *m, const sweep_grid_t *g, const sweep_point_t *pt,
                                 profile_t **out)
{
    const char *sets[256];
    size_t n = sweep_point_sets(g, pt, sets, 256);
    profile_t *p = NULL;
    hs_status_t st;

    if (n > 256)
        return HS_ERR_INVALID;
    if ((st = profile_clone(m->profiles[pt->profile], &p)) != HS_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        st = profile_set(p, sets[i]);
        if (st != HS_OK)
            goto free_profile;
    }
    st = profile_validate(p);
    if (st != HS_OK)
        goto free_profile;
    *out = p;
    return HS_OK;

free_profile:
    hs_log_error("%s: point %zu: profile '%s' with its overrides is not valid", g->path,
                 pt->index, g->profiles[pt->profile]);
    profile_free(p);
    return st;
}

static hs_status_t em_profile_hash(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                                   uint64_t *out)
{
    profile_t *p;
    hs_status_t st = point_profile(ctx, g, pt, &p);

    if (st != HS_OK)
        return st;
    *out = profile_hash(p);
    profile_free(p);
    return HS_OK;
}

static void fill_result(obj_t objective, const pred_result_t *r, sweep_result_t *out)
{
    out->hint_bytes = r->hint_bytes;
    out->value = obj_value(objective, r);
#define SWEEP_COPY_(member, kind) out->member = r->member;
    SWEEP_RESULT_FIGURES(SWEEP_COPY_)
#undef SWEEP_COPY_
    out->costs = r->costs;
}

static void pred_opts_fill(const eval_model_t *m, pred_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->mode = strcmp(m->g->mode, "closed") == 0 ? PRED_CLOSED : PRED_OPEN;
    o->flows = 1;
}

/* m->buf, allocated for the grid's longest trace at the first call. */
static hs_status_t point_buf(eval_model_t *m)
{
    size_t n = 0;

    if (m->buf.lat_us)
        return HS_OK;
    for (size_t i = 0; i < m->g->ntraces; i++)
        n = m->traces[i]->n > n ? m->traces[i]->n : n;
    return pred_raw_alloc(&m->buf, n);
}

static hs_status_t run_hint(eval_model_t *m, const trace_t *tr, const profile_t *p,
                            uint64_t hint, sweep_result_t *out)
{
    pred_opts_t o;
    pred_result_t r;
    hs_status_t st = point_buf(m);

    if (st != HS_OK)
        return st;
    pred_opts_fill(m, &o);
    memset(&r, 0, sizeof(r));
    st = pred_check_trace(tr, p, &o);
    if (st != HS_OK)
        goto release_result;
    st = pred_run_into(&(pred_ctx_t){m->eng, tr, p, &o}, hint, &m->buf, &r);
    if (st != HS_OK)
        goto release_result;
    fill_result(m->objective, &r, out);
release_result:
    pred_result_release(&r);
    return st;
}

static hs_status_t run_auto(const eval_model_t *m, const trace_t *tr, const profile_t *p,
                            sweep_result_t *out)
{
    rec_opts_t o;
    rec_report_t rep;
    hs_status_t st;

    memset(&o, 0, sizeof(o));
    memset(&rep, 0, sizeof(rep));
    o.objective = m->objective;
    o.threads = 1;
    pred_opts_fill(m, &o.pred);
    st = rec_run(m->eng, tr, p, &o, &rep);
    if (st != HS_OK)
        goto release_report;
    fill_result(m->objective, &rep.results[rep.winner], out);
release_report:
    rec_report_release(&rep);
    return st;
}

static hs_status_t em_eval(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                           sweep_result_t *out)
{
    eval_model_t *m = ctx;
    const sweep_hint_t *h = &g->hints[pt->hint];
    profile_t *p;
    hs_status_t st = point_profile(m, g, pt, &p);

    if (st != HS_OK)
        return st;
    if (h->is_auto)
        st = run_auto(m, m->traces[pt->trace], p, out);
    else
        st = run_hint(m, m->traces[pt->trace], p, h->bytes, out);
    profile_free(p);
    return st;
}

static const sweep_eval_ops_t g_eval_model_ops = {
    "model", em_check, em_profile_hash, em_eval, NULL, SWEEP_EVAL_SOURCE,
};

const char *sweep_eval_source(void) { return SWEEP_EVAL_SOURCE; }

hs_status_t sweep_eval_model_create(const sweep_grid_t *g, sweep_eval_t *out)
{
    eval_model_t *m = calloc(1, sizeof(*m));
    hs_status_t st = HS_ERR_NOMEM;

    if (!m)
        return HS_ERR_NOMEM;
    m->g = g;
    m->eng = strcmp(g->engine, "sim") == 0 ? &sim_engine_ops : &model_engine_ops;
    m->traces = calloc(g->ntraces, sizeof(*m->traces));
    m->profiles = calloc(g->nprofiles, sizeof(*m->profiles));
    if (!m->traces || !m->profiles)
        goto fail;
    for (size_t i = 0; i < g->ntraces; i++) {
        if ((st = trace_load_posts(g->traces[i].path, 1, &m->traces[i])) != HS_OK) {
            hs_log_error("%s: traces[%zu]: cannot load '%s'", g->path, i, g->traces[i].label);
            goto fail;
        }
    }
    out->ops = &g_eval_model_ops;
    out->ctx = m;
    return HS_OK;
fail:
    ctx_free(m);
    return st;
}

hs_status_t sweep_eval_model_profile(const sweep_eval_t *ev, const sweep_point_t *pt,
                                     profile_t **out)
{
    eval_model_t *m = ev->ctx;

    return point_profile(m, m->g, pt, out);
}

const trace_t *sweep_eval_model_trace(const sweep_eval_t *ev, size_t i)
{
    return ((const eval_model_t *)ev->ctx)->traces[i];
}

void sweep_eval_model_result(const sweep_eval_t *ev, const pred_result_t *r, sweep_result_t *out)
{
    fill_result(((const eval_model_t *)ev->ctx)->objective, r, out);
}

void sweep_eval_model_destroy(sweep_eval_t *ev)
{
    ctx_free(ev->ctx);
    ev->ctx = NULL;
    ev->ops = NULL;
}
