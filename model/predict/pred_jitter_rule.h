/* pred_jitter_rule.h - the jitter's arithmetic (model/MODEL.md section 8), written once for
 * the CPU engines (predict.c: pred_jitter_*) and, under nvcc, for the CUDA sweep engine
 * (sweep/sweep_eval_cuda.cu), so that both add the same jitter bit for bit. Values in, value
 * out: the callers read the profile (or the kernel's copy of it) and the trace. */
#ifndef HS_PRED_JITTER_RULE_H
#define HS_PRED_JITTER_RULE_H

#ifdef __CUDACC__
#define PJR_HD __host__ __device__
#else
#define PJR_HD
#endif

/* The share of the first set's messages a stall hit (its top quantiles, beyond p99): the
 * part of each set whose share scales with the cycle; the rest, the body, keeps its shape. */
#define PRED_JITTER_STALL_SHARE 0.01

/* The two jitter sets: each one's points v (pjr_points) and the cycle c it was measured at
 * (0: the first set, jitter.*; 1: the long one, jitter.long_*). */
typedef struct {
    const double *v[2];
    double c[2];
} pjr_sets_t;

/* A set's points v = {0, p90, p99, p999}, each raised to the one before. */
static inline PJR_HD void pjr_points(double v[4], double p90, double p99, double p999)
{
    v[0] = 0;
    v[1] = p90 > v[0] ? p90 : v[0];
    v[2] = p99 > v[1] ? p99 : v[1];
    v[3] = p999 > v[2] ? p999 : v[2];
}

static inline PJR_HD double pjr_lin(const double *v, int k, double u, double q0, double q1)
{
    return v[k - 1] + (v[k] - v[k - 1]) * (u - q0) / (q1 - q0);
}

/* A set's jitter at quantile u: 0 up to the median, then linear through (0.9, v1),
 * (0.99, v2), (0.999, v3), v3 above. */
static inline PJR_HD double pjr_quantile(const double *v, double u)
{
    if (u <= 0.5)
        return 0;
    if (u < 0.9)
        return pjr_lin(v, 1, u, 0.5, 0.9);
    if (u < 0.99)
        return pjr_lin(v, 2, u, 0.9, 0.99);
    if (u < 0.999)
        return pjr_lin(v, 3, u, 0.99, 0.999);
    return v[3];
}

/* The long set's weight for a message of latency lat_us: 0 at the first set's cycle c0 and
 * below, 1 at the long set's c1 and above; 0 without a long set (c1 not above c0). */
static inline PJR_HD double pjr_weight(double c0, double c1, float lat_us)
{
    double w;

    if (!(c0 > 0 && c1 > c0))
        return 0;
    w = ((double)lat_us - c0) / (c1 - c0);
    return w < 0 ? 0 : w > 1 ? 1 : w;
}

/* u for a message of cycle cycle_us from a set measured at cycle c whose top `tail` of
 * quantiles is the stall: that share scaled by cycle_us / c, the body below it keeping its
 * shape in what is left (u when c is 0). */
static inline PJR_HD double pjr_scaled(double u, double c, double tail, double cycle_us)
{
    double body;

    if (!(c > 0))
        return u;
    body = 1.0 - tail * cycle_us / c;
    if (!(body > 0) || u >= body)
        return 1.0 - (1.0 - u) * c / cycle_us;
    return u * (1.0 - tail) / body;
}

/* The jitter at u of a message of cycle cycle_us whose latency gave the long set weight w:
 * each set at its own scaled u, mixed by w; at u = 1, the stall's size. */
static inline PJR_HD double pjr_mix(const pjr_sets_t *s, double u, double w, double cycle_us)
{
    double c0 = s->c[0], c1 = s->c[1];
    double j0 = pjr_quantile(s->v[0], pjr_scaled(u, c0, PRED_JITTER_STALL_SHARE, cycle_us)), j1;

    if (!(w > 0))
        return j0;
    /* the long set's stall share: the first's, by its cycle (pjr_weight: c1 > c0) */
    j1 = pjr_quantile(s->v[1], pjr_scaled(u, c1, PRED_JITTER_STALL_SHARE * c1 / c0, cycle_us));
    return j0 + (j1 - j0) * w;
}

/* A message's cycle: its latency plus the time before its post a stall of stall_us reaches
 * across (closed loop: the share `share` of its think time, at most the stall; open loop: the
 * whole stall). */
static inline PJR_HD double pjr_cycle(float lat_us, double think_us, double share, int closed,
                                      double stall_us)
{
    double reach = stall_us;

    if (closed)
        reach = share * think_us < stall_us ? share * think_us : stall_us;
    return (double)lat_us + reach;
}

#endif
