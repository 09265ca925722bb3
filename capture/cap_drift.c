/* cap_drift.c - the drift probe of validate (cap_drift.h). */
#include "capture/cap_drift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_replay.h"
#include "capture/cap_validate.h"
#include "common/hs_mem.h"
#include "model/model.h"

#define PROBE_GAP_NS 1000 /* trace time between posts; closed loop replays none of it */

/* Closed loop and hint CAP_DRIFT_BYTES: every message on LL, posted when the last is done. */
static const pred_opts_t probe_opts = {.mode = PRED_CLOSED, .flows = 1};

/* CAP_DRIFT_PRED_MSGS messages, each posted as the previous one completes (no think time). */
static hs_status_t probe_trace(trace_t **out)
{
    hs_status_t st = trace_new(out);

    for (uint64_t i = 0; st == HS_OK && i < CAP_DRIFT_PRED_MSGS; i++) {
        trace_rec_t r = {.t_post_ns = i * PROBE_GAP_NS, .t_done_ns = (i + 1) * PROBE_GAP_NS,
                         .size_bytes = CAP_DRIFT_BYTES, .opcode = TRACE_OP_SEND};
        st = trace_push(*out, &r);
    }
    return st;
}

hs_status_t cap_drift_init(cap_drift_t *d, const profile_t *prof, uint64_t rounds)
{
    pred_result_t res;
    hs_status_t st;

    memset(d, 0, sizeof(*d));
    d->rounds = rounds;
    d->meas_p50_us = calloc(rounds ? rounds : 1, sizeof(*d->meas_p50_us));
    d->meas_lat_us = calloc((rounds ? rounds : 1) * CAP_DRIFT_MSGS, sizeof(*d->meas_lat_us));
    if (!d->meas_p50_us || !d->meas_lat_us)
        return HS_ERR_NOMEM;
    st = probe_trace(&d->tr);
    if (st != HS_OK)
        return st;
    st = pred_run(&(pred_ctx_t){&model_engine_ops, d->tr, prof, &probe_opts}, CAP_DRIFT_BYTES,
                  0, &res);
    if (st != HS_OK)
        return st;
    d->pred_p50_us = res.p50_us;
    d->pred_p99_us = res.p99_us;
    pred_result_release(&res);
    return HS_OK;
}

hs_status_t cap_drift_measure(cap_drift_t *d, const cap_drift_run_t *run, uint64_t r)
{
    trace_t probe = *d->tr; /* the first CAP_DRIFT_MSGS of the predicted probe */
    pred_raw_t raw;
    pred_result_t res;
    cap_conn_t *c = NULL;
    hs_status_t st;

    if (r >= d->rounds)
        return HS_ERR_INVALID;
    probe.n = CAP_DRIFT_MSGS;
    st = pred_raw_alloc(&raw, probe.n);
    if (st != HS_OK)
        return st;
    st = cap_live_connect(run->o, run->live, run->max_msg, CAP_DRIFT_BYTES, &c);
    if (st != HS_OK)
        goto free_raw;
    cap_replay_opts_t ro = {.tr = &probe, .hint = CAP_DRIFT_BYTES,
                            .hysteresis = run->hysteresis, .mode = PRED_CLOSED};

    st = cap_replay_warmup(c, &ro);
    if (st == HS_OK)
        st = cap_replay_run(c, &ro, &raw);
    cap_conn_close(c, run->more && st == HS_OK);
    if (st != HS_OK)
        goto free_raw;
    st = pred_summarize(&probe, &probe_opts, &raw, CAP_DRIFT_BYTES, &res);
    if (st != HS_OK)
        goto free_raw;
    d->meas_p50_us[r] = res.p50_us;
    memcpy(d->meas_lat_us + r * CAP_DRIFT_MSGS, raw.lat_us, CAP_DRIFT_MSGS * sizeof(float));
    d->measured = r + 1 > d->measured ? r + 1 : d->measured;
    pred_result_release(&res);
free_raw:
    pred_raw_free(&raw);
    return st;
}

static double measured_median(const cap_drift_t *d)
{
    double *tmp = d->measured ? malloc(d->measured * sizeof(*tmp)) : NULL, m;

    if (!tmp)
        return NAN;
    memcpy(tmp, d->meas_p50_us, d->measured * sizeof(*tmp));
    m = cap_median(tmp, d->measured);
    free(tmp);
    return m;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

/* p99 of every measured round's messages (nearest rank), NAN before a round was
 * measured. */
static double measured_p99(const cap_drift_t *d)
{
    size_t n = d->measured * CAP_DRIFT_MSGS;
    float *tmp = n ? malloc(n * sizeof(*tmp)) : NULL;
    double v;

    if (!tmp)
        return NAN;
    memcpy(tmp, d->meas_lat_us, n * sizeof(*tmp));
    qsort(tmp, n, sizeof(*tmp), cmp_float);
    v = tmp[(size_t)ceil(0.99 * (double)n) - 1];
    free(tmp);
    return v;
}

/* 100 (measured - predicted) / predicted; NAN without a measurement. */
static double rel_pct(double meas, double pred)
{
    return isnan(meas) || !(pred > 0) ? NAN : (meas / pred - 1) * 100.0;
}

/* KEY: v, or null when it is not a number. */
static void add_num(cJSON *j, const char *key, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(j, key);
    else
        cJSON_AddNumberToObject(j, key, v);
}

cJSON *cap_drift_json(const cap_drift_t *d)
{
    cJSON *j = cJSON_CreateObject(), *a;
    char probe[200];

    snprintf(probe, sizeof(probe), "%d messages of %d B on LL, closed loop, no think time "
             "(what calibrate fits), once per round; p99 over every round's messages",
             CAP_DRIFT_MSGS, CAP_DRIFT_BYTES);
    cJSON_AddStringToObject(j, "probe", probe);
    double m50 = measured_median(d), m99 = measured_p99(d);

    cJSON_AddNumberToObject(j, "predicted_p50_us", d->pred_p50_us);
    add_num(j, "measured_p50_us", m50);
    add_num(j, "drift_pct", rel_pct(m50, d->pred_p50_us));
    a = cJSON_AddArrayToObject(j, "rounds_p50_us");
    for (uint64_t r = 0; r < d->measured; r++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(d->meas_p50_us[r]));
    cJSON_AddNumberToObject(j, "predicted_p99_us", d->pred_p99_us);
    add_num(j, "measured_p99_us", m99);
    add_num(j, "tail_drift_pct", rel_pct(m99, d->pred_p99_us));
    return j;
}

void cap_drift_release(cap_drift_t *d)
{
    if (d->tr)
        trace_free(d->tr);
    free(d->meas_p50_us);
    free(d->meas_lat_us);
    memset(d, 0, sizeof(*d));
}
