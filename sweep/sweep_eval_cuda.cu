/* sweep_eval_cuda.cu - the GPU replay of sweep_eval_cuda.h: the model's base recursion
 * (model/model.c with pred_opts_t.every_chunk) for one replay per thread.
 *
 * Each function below is the one of model.c named in its comment, with the same operations
 * in the same order (built with -fmad=false, so every double is the host's): a replay's
 * figures are those of model_engine_ops with every_chunk, and latencies are reported in
 * message order (a switch closes the old path's open batch, so at most one batch has
 * members), so the summary's sums are the host's too; the profile's jitter (MODEL.md
 * section 8) is added to each latency as pred_jitter_apply adds it. A block is one warp of
 * W replays (W = 1..32) walking the trace in step, the trace staged through shared memory
 * (the next stage copied asynchronously while this one is replayed). A replay is a long
 * chain of dependent steps, so a launch is latency-bound: W is the smallest that leaves
 * about 8 warps per multiprocessor (more registers than that would not be resident at
 * once), so that small batches still give each multiprocessor several warps to switch
 * between; replays that branch alike share a warp (scu_order_t), a warp runs the kernel
 * compiled for the shape its replays share (SCU_DIRECT, SCU_ONEWR, SCU_PLAIN: shape_code),
 * each run of warps of one shape a launch of its own on one of SCU_STREAMS streams, and a
 * replay's constants are copied into its registers before its first message. The later of
 * two times is a compare and two selects (a > b ? a : b), not fmax: sm_90 has no double
 * max instruction, and fmax compiles to DSETP.MAX and moves (bench_sweep_cuda: 7% slower).
 */
/* the project's C headers, with C linkage (their guards make later includes no-ops) */
extern "C" {
#include "common/hs_status.h"
#include "model/path_rules.h"
#include "model/predict/predict.h"
#include "model/predict/pred_jitter_rule.h"
#include "model/profile/profile.h"
#include "traces/trace.h"
}
#include "sweep/sweep_eval_cuda.h"

#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/lat_hist.h"
#include "model/path_rules.h"

#define SCU_COLD (1ull << 63) /* a record's size word: cold-start flag (sizes < 2^41) */
#define SCU_STAGE 128         /* records per stage of the trace in shared memory */
static_assert((SCU_STAGE & (SCU_STAGE - 1)) == 0, "a stage index wraps by a mask");
#define SCU_THREADS 32        /* the most replays per block (one warp) */
#define SCU_WARPS_PER_SM 8    /* the warps per multiprocessor a launch aims at */
#define SCU_STREAMS 8         /* streams a launch's kernels (one per shape) share out */

/* A path whose batch is one WR and that has no timer is direct: each chunk is reported as it
 * completes and no batch is ever left open. A warp whose replays all have path k direct runs
 * code compiled for it (template parameter SHAPE, one bit per path): the same operations
 * less those that never apply (the timer, the open batch, its members). */
#define SCU_DIRECT(k) (1u << (k))
/* A path whose segment holds every message of the trace (no segmenting, or the largest
 * message no larger than the segment) takes one WR per message: its code has no WR count to
 * work out, no split cost, no chunk shares (the same doubles: x * 1 and x / 1 are x). */
#define SCU_ONEWR(k) (4u << (k))
/* A point whose profile has no size factors and no perturbation (no window, or a factor of
 * 1: the term it adds is then +0 or -0, which leaves every sum's bits as they are) runs code
 * without them. */
#define SCU_PLAIN 16u

/* What a replay needs, filled on the host (prules_init and the arena layout). */
typedef struct {
    prules_t r;
    profile_t prof;          /* size factors (prules_per_byte); pointers in it unused */
    uint64_t hint;
    double jit[2][4];        /* the two jitter sets' points (pjr_points) */
    int has_jit;             /* pred_has_jitter */
    uint32_t cap[2];         /* ring capacity per path (a power of two >= window + 2) */
    size_t ring_off[2];      /* byte offsets of the rings and member arrays in the arena */
    size_t mem_off[2];
    unsigned shape;          /* SCU_DIRECT(k), SCU_ONEWR(k) for each path that is so; SCU_PLAIN */
} scu_param_t;

/* What a replay leaves, read back by the host. */
typedef struct {
    double t_last_done_ns, sum_lat_ns, queue, drain, coalesce, l1, drain_us_total;
    double hsum, hmin, hmax;
    unsigned long long hn, nll, switches, stalls;
    double pct[4];           /* p50, p90, p99, p999 */
} scu_out_t;

/* One trace record on the device: size (with the cold flag) and time, 16 bytes (one
 * asynchronous copy each). */
typedef struct {
    uint64_t size;
    double t;
} scu_rec_t;

typedef struct {
    double close_ns;
    uint32_t nwr;
} dbatch_t;

typedef struct {
    double tref_ns, hw_ns;
    uint64_t ic; /* the message's index in the trace, SCU_COLD when it is flagged cold-start */
} dmember_t;

/* A path's state and its constants (c), copied into registers once: a constant read from
 * memory where used puts an L1 hit on the replay's chain of dependent steps. That takes
 * 230-255 registers a thread (nvcc -Xptxas -v; the jitter kernels spill 12-20 bytes), and
 * 8 warps of them are still resident per multiprocessor. */
typedef struct {
    prules_path_t c;
    uint32_t mask;
    dbatch_t *ring;
    uint32_t head, count, used, open_n, nmem;
    uint32_t head_nwr;       /* ring[head] in registers, loaded when it became the head, */
    double head_close_ns;    /* read at the next look: the load is off the replay's chain */
    double h1_ns, timer_close_ns, timer_r_ns, last_r_ns;
    dmember_t *mem;
} dpath_t;

typedef struct {
    double post_ns, post_share_ns, ser_ns, ser_share_ns;
    uint32_t nwr;
} dcost_t;

typedef struct {
    dpath_t path[2];
    const profile_t *prof;
    prules_t R;             /* the shared constants, in registers (as dpath_t.c) */
    const scu_param_t *P;   /* the replay's parameters (jitter), read where used */
    size_t nfactors;
    uint64_t hint;
    double cpu_free_ns, link_free_ns;
    double pert_from_ns, pert_until_ns;
    double t_last_done_ns, sum_lat_ns, drain_us_total;
    double queue, drain, coalesce, l1;
    unsigned long long switches, stalls;
    prules_router_t route;
    const scu_rec_t *recs;  /* the trace (closed loop: each record's think time, for the jitter) */
    int prev_path, include_cold, has_jit, closed;
    /* the summary (predict.c's summarize_walk, in message order); the extremes of the
     * float latencies as floats (one instruction each; widened exactly at the end) */
    uint32_t *bins;
    unsigned long long hn, nll;
    double hsum;
    float hmin, hmax;
} dstate_t;

/* ---- batches (model.c) ------------------------------------------------------------------ */

__device__ __forceinline__ static void ring_push(dpath_t *pa, double close_ns, uint32_t nwr)
{
    dbatch_t *b = &pa->ring[(pa->head + pa->count) & pa->mask];

    b->close_ns = close_ns;
    b->nwr = nwr;
    if (pa->count++ == 0) {
        pa->head_close_ns = close_ns;
        pa->head_nwr = nwr;
    }
}

__device__ __forceinline__ static void note_report(dstate_t *s, dpath_t *pa, double r_ns)
{
    pa->last_r_ns = r_ns > pa->last_r_ns ? r_ns : pa->last_r_ns;
    s->t_last_done_ns = r_ns > s->t_last_done_ns ? r_ns : s->t_last_done_ns;
}

/* pred_jitter_apply's for message i of latency lat_us (model/predict/pred_jitter_rule.h,
 * the same code): the stall (J at 1), the message's cycle and its jitter at u. */
__device__ __forceinline__ static double jitter_of(const dstate_t *s, double u, float lat_us,
                                                  uint64_t i)
{
    const scu_param_t *P = s->P;
    const pjr_sets_t sets = {{P->jit[0], P->jit[1]},
                             {P->prof.jitter_cycle_us, P->prof.jitter_long_cycle_us}};
    double w = pjr_weight(sets.c[0], sets.c[1], lat_us), stall = pjr_mix(&sets, 1.0, w, 1.0);
    double think_us = s->closed && i ? s->recs[i].t * 1e-3 : 0;

    return pjr_mix(&sets, u, w,
                   pjr_cycle(lat_us, think_us, P->prof.jitter_think_reach, s->closed, stall));
}

/* pred_jitter_apply's draw for message i: hs_splitmix64 (common/hs_util.h) of i's own seed,
 * its top 53 bits as a uniform in [0, 1). */
__device__ __forceinline__ static double jitter_u(uint64_t i)
{
    uint64_t z = (i ^ 0x6a09e667f3bcc909ULL) + 0x9e3779b97f4a7c15ULL;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* One message's latency into the summary (summarize_walk), with its jitter when the profile
 * has one (pred_jitter_apply: added to the float latency, rounded to float again): the
 * messages come in order. The bin's count is an atomic add whose result is not read (a
 * reduction the replay does not wait for); only this thread adds to these bins. */
__device__ __forceinline__ static void summarize_one(dstate_t *s, float lat_us, int k, uint64_t ic)
{
    /* a cold-start message left out by selects, not a branch: it adds 0 to the counts (its
     * bin's too) and +0 to the sum (which only grows from +0: its bits as they are) */
    uint32_t keep = !(ic & SCU_COLD) || s->include_cold;
    if (s->has_jit) {
        uint64_t i = ic & ~SCU_COLD;
        lat_us = (float)(lat_us + jitter_of(s, jitter_u(i), lat_us, i));
    }
    atomicAdd(&s->bins[lat_hist_bin(lat_us)], keep);
    s->hn += keep;
    s->hsum += keep ? (double)lat_us : 0.0;
    s->hmin = keep && lat_us < s->hmin ? lat_us : s->hmin;
    s->hmax = keep && lat_us > s->hmax ? lat_us : s->hmax;
    s->nll += keep & (k == PRULES_LL);
}

/* One member of a batch closed at close_ns and reported at r_ns. */
template <int K>
__device__ __forceinline__ static void member_report(dstate_t *s, const dmember_t m,
                                                     double close_ns, double r_ns)
{
    double coal = close_ns > m.hw_ns ? close_ns - m.hw_ns : 0;
    summarize_one(s, (float)((r_ns - m.tref_ns) * 1e-3), K, m.ic);
    s->sum_lat_ns += r_ns - m.tref_ns;
    s->coalesce += coal;
}

/* Report the open batch's members, then last when given: the member whose chunk closed the
 * batch, not stored (a batch of one reads nothing back from memory). */
template <int K>
__device__ __forceinline__ static void batch_report(dstate_t *s, dpath_t *pa, double close_ns,
                                                    int queued, int has_last = 0,
                                                    const dmember_t last = dmember_t{0, 0, 0})
{
    double r_ns = close_ns + pa->c.event_ns;

    #pragma unroll 1
    for (uint32_t j = 0; j < pa->nmem; j++)
        member_report<K>(s, pa->mem[j], close_ns, r_ns);
    if (has_last)
        member_report<K>(s, last, close_ns, r_ns);
    if (queued)
        ring_push(pa, close_ns, pa->open_n);
    pa->nmem = 0;
    pa->open_n = 0;
    pa->timer_close_ns = pa->timer_r_ns = HUGE_VAL;
    note_report(s, pa, r_ns);
}

template <int K>
__device__ __forceinline__ static void batch_close(dstate_t *s, dpath_t *pa, double close_ns)
{
    if (pa->open_n)
        batch_report<K>(s, pa, close_ns, 1);
}

template <int K, int D>
__device__ __forceinline__ static void batch_force_close(dstate_t *s, dpath_t *pa)
{
    if (!D && pa->open_n)
        batch_close<K>(s, pa, pa->c.period_ns > 0 ? pa->timer_close_ns : pa->h1_ns);
}

__device__ __forceinline__ static double batch_pop(dstate_t *s, dpath_t *pa)
{
    double close_ns = pa->head_close_ns, r_ns = close_ns + pa->c.event_ns;

    s->cpu_free_ns = (s->cpu_free_ns > close_ns ? s->cpu_free_ns : close_ns) + pa->c.event_ns;
    pa->used -= pa->head_nwr;
    pa->head = (pa->head + 1) & pa->mask;
    pa->count--;
    const dbatch_t next = pa->ring[pa->head]; /* read when count says it is there */
    pa->head_close_ns = next.close_ns;
    pa->head_nwr = next.nwr;
    return r_ns;
}

template <int K>
__device__ __forceinline__ static double batch_close_pop(dstate_t *s, dpath_t *pa)
{
    double c = pa->c.period_ns > 0 ? pa->timer_close_ns : pa->h1_ns;
    uint32_t n = pa->open_n;

    batch_report<K>(s, pa, c, 0);
    s->cpu_free_ns = (s->cpu_free_ns > c ? s->cpu_free_ns : c) + pa->c.event_ns;
    pa->used -= n;
    pa->head = (pa->head + 1) & pa->mask;
    return c + pa->c.event_ns;
}

template <int K, int D>
__device__ __forceinline__ static double slot_pop(dstate_t *s, dpath_t *pa)
{
    return !D && !pa->count && pa->open_n ? batch_close_pop<K>(s, pa) : batch_pop(s, pa);
}

template <int K, int D>
__device__ __forceinline__ static void batch_add(dstate_t *s, dpath_t *pa, uint32_t nwr, double hw_ns,
                                 int is_last, double tref_ns, uint64_t ic)
{
    if (D) {
        /* batch_report of a batch of this chunk alone, closed at hw_ns: member_report's
         * steps less its coalescing term, which is 0 here (close_ns == hw_ns; an add of 0
         * to s->coalesce, which only ever grows from +0, leaves its bits as they are) */
        double r_ns = hw_ns + pa->c.event_ns;
        if (is_last) {
            summarize_one(s, (float)((r_ns - tref_ns) * 1e-3), K, ic);
            s->sum_lat_ns += r_ns - tref_ns;
        }
        ring_push(pa, hw_ns, nwr);
        note_report(s, pa, r_ns);
        return;
    }
    if (hw_ns > pa->timer_close_ns)
        batch_close<K>(s, pa, pa->timer_close_ns);
    /* the batch's first chunk sets its timer and latest completion: selects (chunk_hw) */
    int first = pa->open_n == 0, timer = first && pa->c.period_ns > 0;
    double tc = hw_ns + pa->c.period_ns;
    pa->timer_close_ns = timer ? tc : pa->timer_close_ns;
    pa->timer_r_ns = timer ? tc + pa->c.event_ns : pa->timer_r_ns;
    pa->h1_ns = first || hw_ns > pa->h1_ns ? hw_ns : pa->h1_ns;
    pa->open_n += nwr;
    const dmember_t m = dmember_t{tref_ns, hw_ns, ic};
    if (pa->open_n >= pa->c.batch) /* batch_close, this message's member in registers */
        batch_report<K>(s, pa, pa->h1_ns, 1, is_last, m);
    else if (is_last)
        pa->mem[pa->nmem++] = m;
}

template <int K, int D>
__device__ __forceinline__ static void reap_due(dstate_t *s, dpath_t *pa, double t)
{
    if (!D && pa->timer_r_ns <= t) {
        if (!pa->count) {
            batch_close_pop<K>(s, pa);
            return;
        }
        batch_close<K>(s, pa, pa->timer_close_ns);
    }
    #pragma unroll 1
    while (pa->count && pa->head_close_ns + pa->c.event_ns <= t)
        batch_pop(s, pa);
}

template <int K, int D>
__device__ __forceinline__ static double slots_acquire(dstate_t *s, dpath_t *pa, uint32_t nwr, double t_ns,
                                       int *stalled)
{
    reap_due<K, D>(s, pa, t_ns);
    if (s->cpu_free_ns > t_ns)
        t_ns = s->cpu_free_ns;
    #pragma unroll 1
    while (pa->used + nwr > pa->c.window) {
        double r_ns = slot_pop<K, D>(s, pa);
        if (r_ns > t_ns) {
            t_ns = r_ns;
            *stalled = 1;
        }
    }
    if (s->cpu_free_ns > t_ns)
        t_ns = s->cpu_free_ns;
    pa->used += nwr;
    return t_ns;
}

/* ---- one message (model.c) ------------------------------------------------------------- */

__device__ __forceinline__ static void chunk_cost(const dstate_t *s, double ser_ns, uint32_t c, dcost_t *cc)
{
    cc->nwr = c;
    cc->post_ns = c * (s->R.post_ns + s->R.l1x_ns) + s->R.doorbell_ns;
    cc->post_share_ns = c == 1 ? cc->post_ns : cc->post_ns / c;
    cc->ser_ns = ser_ns;
    cc->ser_share_ns = c == 1 ? ser_ns : ser_ns / c; /* x / 1 is x: no double division */
}

/* chunk_hw_p; lf: the size's latency plus the path's fixed cost (mdl_size_t.lf_ns); PLAIN:
 * the point has no perturbation (SCU_PLAIN); O: one WR a message, so split is 0 (a time
 * plus +0 is that time: no time is -0) */
template <int PLAIN, int O>
__device__ __forceinline__ static double chunk_hw(dstate_t *s, const dpath_t *pa, const dcost_t *cc, double dma,
                                  double lf, double split, double t_post)
{
    double nic, start, end;

    s->cpu_free_ns = t_post + cc->post_ns;
    nic = t_post + cc->post_share_ns + dma;
    start = nic > s->link_free_ns ? nic : s->link_free_ns;
    end = start + cc->ser_ns;
    /* selects, not branches (a warp stalls on each branch it resolves): an add of +0 leaves
     * a positive time's bits as they are, so the figures are the host's */
    double e2 = s->cpu_free_ns + dma + cc->ser_share_ns;
    end = cc->nwr > 1 && e2 > end ? e2 : end;
    s->link_free_ns = end;
    double hw = O ? end + lf : end + lf + split;
    if (PLAIN)
        return hw;
    int pert = t_post >= s->pert_from_ns && t_post < s->pert_until_ns;
    double extra = pert ? (s->R.perturb_factor - 1) * (hw - t_post - (start - nic)) : 0.0;
    hw += extra;
    s->drain += extra;
    return hw;
}

/* One chunk posted from t0 on (chunk_step): slot wait, link, batch. */
template <int K, int D, int PLAIN, int O>
__device__ __forceinline__ static double chunk_step(dstate_t *s, dpath_t *pa, const dcost_t *cc, double dma,
                                    double lf, double split, double t0, int is_last,
                                    double tref_ns, uint64_t ic, int *stalled, double *t_post)
{
    *t_post = slots_acquire<K, D>(s, pa, cc->nwr, t0, stalled);
    double hw = chunk_hw<PLAIN, O>(s, pa, cc, dma, lf, split, *t_post);
    batch_add<K, D>(s, pa, cc->nwr, hw, is_last, tref_ns, ic);
    return hw;
}

/* post_message with every_chunk: one chunk (post_w1, post_one_chunk) or chunks
 * (post_chunks, chunks_plan, chunks_run), for a warp of shape SHAPE. */
template <int K, unsigned SHAPE>
__device__ __forceinline__ static void post_message(dstate_t *s, uint64_t size, double t_ns, double tref_ns,
                                    uint64_t ic)
{
    constexpr int D = (SHAPE & SCU_DIRECT(K)) != 0, O = (SHAPE & SCU_ONEWR(K)) != 0;
    constexpr int PLAIN = (SHAPE & SCU_PLAIN) != 0;
    dpath_t *pa = &s->path[K];
    double npb = s->R.ns_per_byte, lat = s->R.wire2_ns;
    int stalled = 0;
    double t_post;

    if (!PLAIN && s->nfactors) {
        npb = prules_per_byte(s->prof, npb, size);
        lat *= prules_lat_factor(s->prof, size);
    }
    double lf = lat + pa->c.fixed_ns;
    uint64_t nwr = O ? 1 : prules_nwr(pa->c.seg_bytes, pa->c.seg_shift, size);
    double dma = size <= pa->c.inline_bytes ? 0 : s->R.dma_ns;
    if (O || nwr <= pa->c.batch) { /* O: one WR, and a batch is >= 1 (param_fill) */
        dcost_t cc;
        chunk_cost(s, (double)(int64_t)size * npb +
                          prules_npkt(s->R.mtu_bytes, s->R.mtu_shift, size) * s->R.pkt_ns +
                          (double)(uint32_t)nwr * s->R.wr_ns,
                   (uint32_t)nwr, &cc);
        s->l1 += (double)nwr * s->R.l1x_ns;
        double t0 = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
        chunk_step<K, D, PLAIN, O>(s, pa, &cc, dma, lf, nwr > 1 ? pa->c.split_ns : 0, t0, 1, tref_ns, ic,
                      &stalled, &t_post);
        s->queue += t_post - t0;
        s->stalls += (unsigned long long)stalled;
        return;
    }
    s->l1 += (double)(int64_t)nwr * s->R.l1x_ns;
    double t0 = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
    reap_due<K, D>(s, pa, t0);
    uint64_t full_bytes = (uint64_t)pa->c.batch * pa->c.seg_bytes;
    uint64_t nfull = (nwr - 1) / pa->c.batch;
    dcost_t full, last;
    chunk_cost(s, (double)full_bytes * npb +
                      prules_npkt(s->R.mtu_bytes, s->R.mtu_shift, full_bytes) * s->R.pkt_ns +
                      (double)pa->c.batch * s->R.wr_ns,
               pa->c.batch, &full);
    uint64_t lb = size - nfull * full_bytes;
    uint32_t last_nwr = (uint32_t)(nwr - nfull * pa->c.batch);
    chunk_cost(s, (double)(int64_t)lb * npb +
                      prules_npkt(s->R.mtu_bytes, s->R.mtu_shift, lb) * s->R.pkt_ns +
                      (double)last_nwr * s->R.wr_ns,
               last_nwr, &last);
    chunk_step<K, D, PLAIN, 0>(s, pa, &full, dma, lf, 0, t0, 0, tref_ns, ic, &stalled, &t_post);
    s->queue += t_post - t0;
    nwr -= pa->c.batch;
    while (nwr > pa->c.batch) {
        double t_ch = t_post > s->cpu_free_ns ? t_post : s->cpu_free_ns;
        chunk_step<K, D, PLAIN, 0>(s, pa, &full, dma, lf, 0, t_ch, 0, tref_ns, ic, &stalled, &t_post);
        nwr -= pa->c.batch;
    }
    double t_ch = t_post > s->cpu_free_ns ? t_post : s->cpu_free_ns;
    chunk_step<K, D, PLAIN, 0>(s, pa, &last, dma, lf, pa->c.split_ns, t_ch, 1, tref_ns, ic, &stalled, &t_post);
    s->stalls += (unsigned long long)stalled;
}

template <int K, unsigned SHAPE>
__device__ __forceinline__ static void force_close_k(dstate_t *s)
{
    batch_force_close<K, (SHAPE & SCU_DIRECT(K)) != 0>(s, &s->path[K]);
}

/* route(): the hysteresis router and the drain of a switch. */
template <unsigned SHAPE>
__device__ __forceinline__ static int route(dstate_t *s, uint64_t size, double *t_ns)
{
    int cls = prules_class(s->hint, size), from = s->route.cur;

    if (prules_route(&s->route, cls)) {
        double t0 = *t_ns > s->cpu_free_ns ? *t_ns : s->cpu_free_ns;
        if (from)
            force_close_k<1, SHAPE>(s);
        else
            force_close_k<0, SHAPE>(s);
        /* no index by a run-time value: the state stays in registers */
        double last_r = from ? s->path[1].last_r_ns : s->path[0].last_r_ns;
        double done = (t0 > last_r ? t0 : last_r) + s->R.drain_fixed_ns;
        s->switches++;
        s->drain_us_total += (done - *t_ns) * 1e-3;
        s->drain += done - t0;
        s->pert_from_ns = done;
        s->pert_until_ns = done + s->R.perturb_window_ns;
        *t_ns = done;
    }
    return s->route.cur;
}

/* ---- set-up, the loop, the summary ------------------------------------------------------ */

__device__ __forceinline__ static void path_init(dpath_t *pa, const prules_path_t *c, uint32_t cap,
                                                 char *arena, size_t ring_off, size_t mem_off)
{
    memset(pa, 0, sizeof(*pa));
    pa->c = *c;
    pa->mask = cap - 1;
    pa->ring = (dbatch_t *)(arena + ring_off);
    pa->mem = (dmember_t *)(arena + mem_off);
    pa->timer_close_ns = pa->timer_r_ns = HUGE_VAL;
}

__device__ __forceinline__ static void state_init(dstate_t *s, const scu_param_t *p, char *arena, uint32_t *bins,
                                  const scu_rec_t *recs, int closed, int include_cold, int has_jit)
{
    const prules_t *r = &p->r;

    memset(s, 0, sizeof(*s));
    for (int k = 0; k < 2; k++)
        path_init(&s->path[k], &r->path[k], p->cap[k], arena, p->ring_off[k], p->mem_off[k]);
    s->prof = &p->prof;
    s->nfactors = p->prof.nfactors;
    s->hint = p->hint;
    prules_router_init(&s->route, r->hysteresis);
    s->R = *r;
    s->P = p;
    s->has_jit = has_jit;
    s->pert_from_ns = s->pert_until_ns = -1;
    s->route.cur = prules_class(p->hint, recs[0].size & ~SCU_COLD);
    s->recs = recs;
    s->closed = closed;
    s->bins = bins;
    s->include_cold = include_cold;
    s->hmin = INFINITY;
}

/* Message i, record r: replay_mode's body (open: r.t is the post time from the first
 * record's; closed: the think time after the previous record's completion). */
template <int CLOSED, unsigned SHAPE>
__device__ __forceinline__ static void step(dstate_t *s, size_t i, const scu_rec_t r)
{
    uint64_t size = r.size & ~SCU_COLD, cold = r.size & SCU_COLD;
    double t = r.t;
    double prev_r = s->prev_path ? s->path[1].last_r_ns : s->path[0].last_r_ns;
    double ready = !CLOSED ? t : i == 0 ? 0 : prev_r + t;
    double tt = ready;
    int k = route<SHAPE>(s, size, &tt); /* hint 0: BW from the first message on, no switch */

    if (k)
        post_message<1, SHAPE>(s, size, tt, ready, i | cold);
    else
        post_message<0, SHAPE>(s, size, tt, ready, i | cold);
    if (CLOSED) {
        if (k)
            force_close_k<1, SHAPE>(s);
        else
            force_close_k<0, SHAPE>(s);
        s->prev_path = k;
    }
}

/* Stage [base, base + SCU_STAGE) of the trace into buf with asynchronous copies (cp.async),
 * shared out among the block's threads; committed as one batch. */
__device__ __forceinline__ static void stage_load(scu_rec_t *buf, const scu_rec_t *recs,
                                                  size_t base, size_t n)
{
    for (unsigned j = threadIdx.x; j < SCU_STAGE && base + j < n; j += blockDim.x)
        __pipeline_memcpy_async(&buf[j], &recs[base + j], sizeof(scu_rec_t));
    __pipeline_commit();
}

/* Records [0, cnt) of a stage (base: the first one's index in the trace), two messages a
 * turn: each record is read one message ahead into the registers of the one just replayed,
 * so the read is off the next message's chain and no record is copied between registers.
 * A read past the records (past the buffer's end it wraps to the first) is not replayed. */
template <int CLOSED, unsigned SHAPE>
__device__ __forceinline__ static void replay_stage(dstate_t *s, const scu_rec_t *buf,
                                                    size_t base, int cnt)
{
    scu_rec_t a = buf[0];
    int q = 0;

#pragma unroll 1
    for (; q + 2 <= cnt; q += 2) {
        const scu_rec_t b = buf[q + 1];
        step<CLOSED, SHAPE>(s, base + (size_t)q, a);
        a = buf[(q + 2) & (SCU_STAGE - 1)];
        step<CLOSED, SHAPE>(s, base + (size_t)q + 1, b);
    }
    if (q < cnt)
        step<CLOSED, SHAPE>(s, base + (size_t)q, a);
}

/* The trace from the first record to the last through shared memory, for replays whose warp
 * has the shape SHAPE, then the open batches closed. */
template <int CLOSED, unsigned SHAPE>
__device__ __forceinline__ static void replay_all(dstate_t *s, int live, scu_rec_t (*buf)[SCU_STAGE],
                                                  const scu_rec_t *recs, size_t n)
{
    stage_load(buf[0], recs, 0, n);
    for (size_t base = 0, b = 0; base < n; base += SCU_STAGE, b ^= 1) {
        stage_load(buf[b ^ 1], recs, base + SCU_STAGE, n); /* an empty batch past the end */
        __pipeline_wait_prior(1);
        __syncwarp();
        if (live)
            replay_stage<CLOSED, SHAPE>(s, buf[b], base,
                                        n - base < SCU_STAGE ? (int)(n - base) : SCU_STAGE);
        __syncwarp(); /* every thread is done with buf[b] before it is refilled */
    }
    if (live) {
        force_close_k<0, SHAPE>(s);
        force_close_k<1, SHAPE>(s);
    }
}

/* One block: blockDim.x replays (one warp at most) walking the trace in step. The trace
 * comes through shared memory in stages of SCU_STAGE records, the next stage copied while
 * the replays step through this one, so that no step waits for device memory. SHAPE is what
 * all the block's replays share (shape_code; the kernel with jitter has the general code
 * only): a kernel per shape, each compiled apart (one kernel holding every shape's loop
 * took ptxas minutes).
 * Built with -DSCU_TIMING (CMAKE_CUDA_FLAGS), each replay prints a line "T <cycles> ..."
 * (clock64 over its whole replay) with its point's hint, link, windows, switches and stalls:
 * which points hold a launch. */
template <int CLOSED, int JIT, unsigned SHAPE>
__global__ void __launch_bounds__(SCU_THREADS, 1)
    scu_replay_kernel(const scu_rec_t *__restrict__ recs, size_t n,
                      const scu_param_t *params, char *arena, size_t arena_stride,
                      uint32_t *bins, scu_out_t *out, size_t nrep, int include_cold)
{
    __shared__ scu_rec_t buf[2][SCU_STAGE];
    size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    int live = id < nrep;
    dstate_t s;
#ifdef SCU_TIMING
    long long c0 = clock64();
#endif

    if (live)
        state_init(&s, &params[id], arena + id * arena_stride, bins + id * LAT_HIST_NBINS,
                   recs, CLOSED, include_cold, JIT);
    replay_all<CLOSED, SHAPE>(&s, live, buf, recs, n);
    if (!live)
        return;
    scu_out_t *o = &out[id];
    o->t_last_done_ns = s.t_last_done_ns;
    o->sum_lat_ns = s.sum_lat_ns;
    o->queue = s.queue;
    o->drain = s.drain;
    o->coalesce = s.coalesce;
    o->l1 = s.l1;
    o->drain_us_total = s.drain_us_total;
    o->hsum = s.hsum;
    o->hmin = s.hmin;
    o->hmax = s.hmax;
    o->hn = s.hn;
    o->nll = s.nll;
    o->switches = s.switches;
    o->stalls = s.stalls;
#ifdef SCU_TIMING
    printf("T %lld blk %u lane %u hint %llu npb %.6f w0 %u w1 %u b1 %u sw %llu st %llu\n",
           clock64() - c0, blockIdx.x, threadIdx.x, (unsigned long long)s.hint, s.R.ns_per_byte,
           s.path[0].c.window, s.path[1].c.window, s.path[1].c.batch, s.switches, s.stalls);
#endif
}

/* The percentiles of each replay's histogram (fill_main). */
__global__ void scu_pct_kernel(const uint32_t *bins, scu_out_t *out, size_t nrep)
{
    static const double q[4] = {0.50, 0.90, 0.99, 0.999};
    size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (id >= nrep)
        return;
    scu_out_t *o = &out[id];
    for (int k = 0; k < 4; k++)
        o->pct[k] = lat_hist_pct(bins + id * LAT_HIST_NBINS, o->hn, o->hmin, o->hmax, q[k]);
}

/* ---- host side ---------------------------------------------------------------------------- */

struct scu_ctx {
    int device, nsm;
    size_t smem_sm; /* shared memory per multiprocessor, bytes */
    char name[256];
    uint64_t print;    /* trace_print of the trace on the device */
    pred_mode_t mode;
    scu_rec_t *d_recs;
    size_t n;
    uint64_t max_size; /* its largest message, bytes (SCU_ONEWR) */
    cudaStream_t streams[SCU_STREAMS];
};

static hs_status_t cuda_fail(cudaError_t e, const char *what)
{
    hs_log_error("CUDA: %s: %s", what, cudaGetErrorString(e));
    return HS_ERR_ENV;
}

#define CU_TRY(call, what)                                                                     \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            st = cuda_fail(e_, what);                                                          \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

static int local_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                       "SLURM_LOCALID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

extern "C" hs_status_t scu_open(int device, scu_ctx_t **out)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    cudaDeviceProp prop;

    *out = NULL;
    if (e != cudaSuccess || count == 0) {
        hs_log_error("sweep --engine cuda: no CUDA device: %s",
                     e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return HS_ERR_ENV;
    }
    if (device < 0)
        device = local_rank() % count;
    if (device >= count) {
        hs_log_error("sweep --engine cuda: device %d: only %d present", device, count);
        return HS_ERR_ENV;
    }
    if ((e = cudaSetDevice(device)) != cudaSuccess ||
        (e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess)
        return cuda_fail(e, "selecting the device");
    scu_ctx_t *c = (scu_ctx_t *)calloc(1, sizeof(*c));
    if (!c)
        return HS_ERR_NOMEM;
    c->device = device;
    c->nsm = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    c->smem_sm = prop.sharedMemPerMultiprocessor > 0 ? prop.sharedMemPerMultiprocessor : 1;
    snprintf(c->name, sizeof(c->name), "%s", prop.name);
    for (int k = 0; k < SCU_STREAMS; k++) {
        /* blocking: ordered after the default stream's work before them, and before its
         * work after them (the events, the summary kernel) */
        if ((e = cudaStreamCreate(&c->streams[k])) != cudaSuccess) {
            scu_close(c);
            return cuda_fail(e, "creating streams");
        }
    }
    *out = c;
    return HS_OK;
}

static void trace_drop(scu_ctx_t *c)
{
    cudaFree(c->d_recs);
    c->d_recs = NULL;
}

extern "C" void scu_close(scu_ctx_t *c)
{
    if (!c)
        return;
    trace_drop(c);
    for (int k = 0; k < SCU_STREAMS; k++)
        if (c->streams[k])
            cudaStreamDestroy(c->streams[k]);
    free(c);
}

/* What the device's copy of a trace is made of (the fields trace_upload reads), word by
 * word through a multiply-xorshift mix: a trace loaded again at the address of one freed,
 * or changed in place, is not taken for the one on the device. */
static uint64_t trace_print(const trace_t *tr)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ tr->n;

    for (size_t i = 0; i < tr->n; i++) {
        const trace_rec_t *r = &tr->recs[i];
        const uint64_t w[3] = {r->size_bytes ^ ((uint64_t)r->flags << 48), r->t_post_ns,
                               r->t_done_ns};
        for (int k = 0; k < 3; k++) {
            h = (h ^ w[k]) * 0xbf58476d1ce4e5b9ULL;
            h ^= h >> 29;
        }
    }
    return h;
}

/* The trace on the device: sizes with the cold flag, and per record the open-loop post time
 * from the first record's or the closed-loop think time (ready_time). Uploaded again unless
 * the one there has the same records (trace_print) and mode. */
static hs_status_t trace_upload(scu_ctx_t *c, const trace_t *tr, pred_mode_t mode)
{
    hs_status_t st = HS_OK;
    scu_rec_t *rec = NULL;
    uint64_t print = trace_print(tr);

    if (c->d_recs && c->print == print && c->n == tr->n && c->mode == mode)
        return HS_OK;
    trace_drop(c);
    if (!(rec = (scu_rec_t *)malloc(tr->n * sizeof(*rec))))
        return HS_ERR_NOMEM;
    c->max_size = 0;
    for (size_t i = 0; i < tr->n; i++) {
        const trace_rec_t *r = &tr->recs[i];
        c->max_size = r->size_bytes > c->max_size ? r->size_bytes : c->max_size;
        rec[i].size = r->size_bytes | ((r->flags & TRACE_F_COLD) ? SCU_COLD : 0);
        if (mode == PRED_OPEN)
            rec[i].t = (double)(r->t_post_ns - tr->recs[0].t_post_ns);
        else
            rec[i].t = i ? trace_think_ns(tr, i) : 0;
    }
    CU_TRY(cudaMalloc(&c->d_recs, tr->n * sizeof(*rec)), "allocating the trace");
    CU_TRY(cudaMemcpy(c->d_recs, rec, tr->n * sizeof(*rec), cudaMemcpyHostToDevice),
           "copying the trace");
    c->print = print;
    c->mode = mode;
    c->n = tr->n;
out:
    if (st != HS_OK)
        trace_drop(c);
    free(rec);
    return st;
}

static size_t align16(size_t v)
{
    return (v + 15) & ~(size_t)15;
}

/* Replay i's constants and arena layout for a trace whose largest message is max_size bytes;
 * its arena bytes into *bytes. */
static hs_status_t param_fill(const profile_t *p, uint64_t hint, uint64_t max_size,
                              scu_param_t *par, size_t *bytes)
{
    hs_status_t st;
    size_t off = 0;

    memset(par, 0, sizeof(*par));
    par->has_jit = pred_has_jitter(p); /* MODEL.md section 8 */
    pjr_points(par->jit[0], p->jitter_p90_us, p->jitter_p99_us, p->jitter_p999_us);
    pjr_points(par->jit[1], p->jitter_long_p90_us, p->jitter_long_p99_us, p->jitter_long_p999_us);
    if ((st = prules_init(p, hint, &par->r)) != HS_OK)
        return st;
    par->prof = *p;
    par->prof.notes = NULL;
    memset(par->prof.src, 0, sizeof(par->prof.src));
    par->hint = hint;
    for (int k = 0; k < 2; k++) {
        uint32_t cap = 1;
        while (cap < par->r.path[k].window + 2)
            cap <<= 1;
        par->cap[k] = cap;
        par->ring_off[k] = off;
        off = align16(off + cap * sizeof(dbatch_t));
        par->mem_off[k] = off;
        off = align16(off + par->r.path[k].batch * sizeof(dmember_t));
        if (par->r.path[k].batch == 1 && !(par->r.path[k].period_ns > 0))
            par->shape |= SCU_DIRECT(k);
        if (par->r.path[k].batch >= 1 &&
            prules_nwr(par->r.path[k].seg_bytes, par->r.path[k].seg_shift, max_size) == 1)
            par->shape |= SCU_ONEWR(k); /* and so every smaller message (prules_nwr) */
    }
    if (p->nfactors == 0 && (par->r.perturb_window_ns == 0 || par->r.perturb_factor == 1))
        par->shape |= SCU_PLAIN;
    *bytes = off;
    return HS_OK;
}

/* The summary of one replay (pred_summarize, mdl_state_finish), or HS_ERR_INVALID. */
static hs_status_t result_fill(const scu_out_t *o, const profile_t *p, uint64_t hint,
                               double bytes, pred_result_t *r)
{
    memset(r, 0, sizeof(*r));
    if (!(o->t_last_done_ns * 1e-3 < FLT_MAX && o->sum_lat_ns * 1e-3 < DBL_MAX &&
          o->queue + o->drain + o->coalesce + o->l1 < DBL_MAX)) {
        hs_log_error("%s: the replay's times are not finite (last completion %g ns): a "
                     "parameter is outside the range path_rules.c bounds it to", p->origin,
                     o->t_last_done_ns);
        return HS_ERR_INVALID;
    }
    double span_us = o->t_last_done_ns * 1e-3;
    r->hint_bytes = hint;
    r->count = o->hn;
    r->p50_us = o->pct[0];
    r->p90_us = o->pct[1];
    r->p99_us = o->pct[2];
    r->p999_us = o->pct[3];
    r->max_us = o->hn ? o->hmax : 0;
    r->mean_us = o->hn ? o->hsum / (double)o->hn : 0;
    r->throughput_gbps = span_us > 0 ? bytes * 8.0 / (span_us * 1e3) : 0;
    r->ll_fraction = o->hn ? (double)o->nll / (double)o->hn : 0;
    r->switches = o->switches;
    r->drain_us_total = o->drain_us_total;
    r->sq_full_stalls = o->stalls;
    r->costs.queue_us = o->queue * 1e-3;
    r->costs.drain_us = o->drain * 1e-3;
    r->costs.coalesce_us = o->coalesce * 1e-3;
    r->costs.l1_us = o->l1 * 1e-3;
    r->costs.base_us = (o->sum_lat_ns - o->queue - o->drain - o->coalesce - o->l1) * 1e-3;
    return HS_OK;
}

/* The shared memory of kern: enough for its trace stages at the blocks per multiprocessor
 * the launch places (want) or its registers allow, whichever is fewer, the rest left to L1,
 * which holds the replays' rings and open batches (a kernel of few registers would otherwise
 * take shared memory for blocks the launch never places there, out of the rings' L1). */
static void carveout_set(const void *kern, const scu_ctx_t *c, int want)
{
    cudaFuncAttributes fa;
    int blocks = 0;

    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kern, SCU_THREADS, 0) != cudaSuccess)
        return;
    blocks = want < blocks ? want : blocks;
    size_t need = (size_t)blocks * (fa.sharedSizeBytes + 1024);
    int pct = (int)((need * 100 + c->smem_sm - 1) / c->smem_sm);
    cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, pct > 100 ? 100 : pct);
}

/* The code a block of replays runs: the shape bits all of them have (shape, the AND over the
 * block) reduced to a shape there is a kernel for: its direct paths, one WR on both paths or
 * on the LL path alone (on BW alone: the general code), plain. */
static unsigned shape_code(unsigned shape)
{
    unsigned o = shape & (SCU_ONEWR(0) | SCU_ONEWR(1));

    return (shape & (SCU_DIRECT(0) | SCU_DIRECT(1) | SCU_PLAIN)) | (o == SCU_ONEWR(1) ? 0 : o);
}

/* The replay kernels without jitter by mode (open, closed) and shape code (NULL: none). */
#define SCU_K(CL, S) (const void *)scu_replay_kernel<CL, 0, S>
#define SCU_K4(CL, S) SCU_K(CL, S), SCU_K(CL, (S) | 1), SCU_K(CL, (S) | 2), SCU_K(CL, (S) | 3)
#define SCU_KO(CL, P)                                                                           \
    SCU_K4(CL, P), SCU_K4(CL, (P) | SCU_ONEWR(0)), NULL, NULL, NULL, NULL,                      \
        SCU_K4(CL, (P) | SCU_ONEWR(0) | SCU_ONEWR(1))
static const void *const scu_kernels[2][32] = {
    {SCU_KO(0, 0), SCU_KO(0, SCU_PLAIN)},
    {SCU_KO(1, 0), SCU_KO(1, SCU_PLAIN)},
};
#undef SCU_KO
#undef SCU_K4
#undef SCU_K

/* The shape code of block b (replays [b w, (b + 1) w) of n). */
static unsigned block_code(const scu_param_t *par, size_t b, unsigned w, size_t n)
{
    unsigned shape = ~0u;

    for (size_t i = b * w; i < (b + 1) * w && i < n; i++)
        shape &= par[i].shape;
    return shape_code(shape);
}

/* One launch over reps [0, n), with jitter (jit) or none: params in, summaries out. Each run
 * of blocks of one shape code is a kernel of its own, on streams side by side. */
static hs_status_t launch(scu_ctx_t *c, pred_mode_t mode, int include_cold, int jit,
                          const scu_param_t *par, size_t stride, size_t n, scu_out_t *host_out,
                          double *gpu_s)
{
    hs_status_t st = HS_OK;
    scu_param_t *d_par = NULL;
    char *d_arena = NULL;
    uint32_t *d_bins = NULL;
    scu_out_t *d_out = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    unsigned width = 1;
    while (width < SCU_THREADS && (n + width - 1) / width > (size_t)c->nsm * SCU_WARPS_PER_SM)
        width *= 2;
    unsigned blocks = (unsigned)((n + width - 1) / width);
    float ms = 0;

    CU_TRY(cudaMalloc(&d_par, n * sizeof(*par)), "allocating the replays");
    CU_TRY(cudaMalloc(&d_arena, n * stride), "allocating the replays' rings");
    CU_TRY(cudaMalloc(&d_bins, n * LAT_HIST_NBINS * sizeof(uint32_t)), "allocating histograms");
    CU_TRY(cudaMalloc(&d_out, n * sizeof(*d_out)), "allocating the summaries");
    CU_TRY(cudaMemcpy(d_par, par, n * sizeof(*par), cudaMemcpyHostToDevice), "copying params");
    CU_TRY(cudaMemset(d_bins, 0, n * LAT_HIST_NBINS * sizeof(uint32_t)), "clearing histograms");
    CU_TRY(cudaEventCreate(&e0), "creating events");
    CU_TRY(cudaEventCreate(&e1), "creating events");
    CU_TRY(cudaEventRecord(e0), "recording an event");
    for (size_t b0 = 0, b1, g = 0; b0 < blocks; b0 = b1, g++) {
        unsigned code = jit ? 0 : block_code(par, b0, width, n);
        for (b1 = b0 + 1; b1 < blocks && (jit ? 0 : block_code(par, b1, width, n)) == code; b1++)
            ;
        const void *k = !jit ? scu_kernels[mode == PRED_CLOSED][code]
                        : mode == PRED_CLOSED ? (const void *)scu_replay_kernel<1, 1, 0>
                                              : (const void *)scu_replay_kernel<0, 1, 0>;
        size_t r0 = b0 * width, gn = (b1 * width < n ? b1 * width : n) - r0;
        const scu_param_t *gp = d_par + r0;
        char *ga = d_arena + r0 * stride;
        uint32_t *gb = d_bins + r0 * LAT_HIST_NBINS;
        scu_out_t *go = d_out + r0;
        void *args[] = {&c->d_recs, &c->n, &gp, &ga, &stride, &gb, &go, &gn, &include_cold};
        carveout_set(k, c, (int)((blocks + c->nsm - 1) / c->nsm));
        CU_TRY(cudaLaunchKernel(k, dim3((unsigned)(b1 - b0)), dim3(width), args, 0,
                                c->streams[g % SCU_STREAMS]),
               "launching the replay kernel");
    }
    CU_TRY(cudaGetLastError(), "launching the replay kernel");
    scu_pct_kernel<<<(unsigned)((n + 127) / 128), 128>>>(d_bins, d_out, n);
    CU_TRY(cudaGetLastError(), "launching the summary kernel");
    CU_TRY(cudaEventRecord(e1), "recording an event");
    CU_TRY(cudaEventSynchronize(e1), "running the replays");
    CU_TRY(cudaEventElapsedTime(&ms, e0, e1), "timing the replays");
    *gpu_s += ms * 1e-3;
    CU_TRY(cudaMemcpy(host_out, d_out, n * sizeof(*d_out), cudaMemcpyDeviceToHost),
           "copying the summaries");
out:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(d_par);
    cudaFree(d_arena);
    cudaFree(d_bins);
    cudaFree(d_out);
    return st;
}

/* Launch order: replays of one link rate and one hint (then of one window on each path)
 * side by side, so that a warp's threads take the same branches (a link saturated or not,
 * the same path, the same switches) for most messages: a warp runs every branch any of its
 * threads takes (bench_sweep_cuda: 1.4x over hint and windows alone; link rate first or
 * hint first, the same). Replays with jitter first, launched apart: the kernel without it
 * has none of its code. */
typedef struct {
    int jit;
    unsigned shape;
    uint64_t hint;
    uint32_t w1, w0, b1;
    double npb; /* the link's ns per byte */
    size_t idx;
} scu_order_t;

static int order_cmp(const void *a, const void *b)
{
    const scu_order_t *x = (const scu_order_t *)a, *y = (const scu_order_t *)b;

    if (x->jit != y->jit)
        return x->jit < y->jit ? -1 : 1;
    if (x->shape != y->shape)
        return x->shape < y->shape ? -1 : 1;
    if (x->npb != y->npb)
        return x->npb < y->npb ? -1 : 1;
    if (x->hint != y->hint)
        return x->hint < y->hint ? -1 : 1;
    if (x->w1 != y->w1)
        return x->w1 < y->w1 ? -1 : 1;
    if (x->w0 != y->w0)
        return x->w0 < y->w0 ? -1 : 1;
    if (x->b1 != y->b1)
        return x->b1 < y->b1 ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Replays per launch: what a quarter of the free memory holds (at most all of them). */
static size_t batch_cap(size_t per_rep, size_t n)
{
    size_t free_b = 0, total_b = 0;

    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b == 0)
        return n < 4096 ? n : 4096;
    size_t cap = free_b / 4 / per_rep;
    return cap < 1 ? 1 : cap > n ? n : cap;
}

extern "C" hs_status_t scu_replay_batch(scu_ctx_t *c, const trace_t *tr, pred_mode_t mode,
                                        int include_cold, const profile_t *const *profiles,
                                        const uint64_t *hints, size_t n, pred_result_t *out,
                                        scu_stats_t *stats)
{
    hs_status_t st;
    scu_param_t *par = NULL, *sorted = NULL;
    scu_out_t *o = NULL, *so = NULL;
    scu_order_t *ord = NULL;
    size_t stride = 0, bytes;
    double msg_bytes = 0;
    scu_stats_t sd;

    memset(&sd, 0, sizeof(sd));
    if (n == 0)
        return HS_OK;
    if (tr->n == 0) {
        hs_log_error("the trace has no records: nothing to replay");
        return HS_ERR_INVALID;
    }
    if ((st = trace_upload(c, tr, mode)) != HS_OK)
        return st;
    par = (scu_param_t *)calloc(n, sizeof(*par));
    sorted = (scu_param_t *)calloc(n, sizeof(*sorted));
    o = (scu_out_t *)calloc(n, sizeof(*o));
    so = (scu_out_t *)calloc(n, sizeof(*so));
    ord = (scu_order_t *)calloc(n, sizeof(*ord));
    if (!par || !o || !sorted || !so || !ord) {
        st = HS_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if ((st = param_fill(profiles[i], hints[i], c->max_size, &par[i], &bytes)) != HS_OK)
            goto out;
        stride = bytes > stride ? bytes : stride;
        ord[i] = scu_order_t{par[i].has_jit, par[i].shape, hints[i], par[i].r.path[1].window, par[i].r.path[0].window,
                             par[i].r.path[1].batch, par[i].r.ns_per_byte, i};
    }
    qsort(ord, n, sizeof(*ord), order_cmp);
    for (size_t j = 0; j < n; j++)
        sorted[j] = par[ord[j].idx];
    for (size_t i = 0; i < tr->n; i++) /* summarize_walk's bytes, in the same order */
        if (include_cold || !(tr->recs[i].flags & TRACE_F_COLD))
            msg_bytes += (double)tr->recs[i].size_bytes;
    sd.bytes_per_replay = stride + LAT_HIST_NBINS * sizeof(uint32_t) + sizeof(scu_param_t) +
                          sizeof(scu_out_t);
    sd.batch = batch_cap(sd.bytes_per_replay, n);
    for (size_t i = 0, m; i < n && st == HS_OK; i += m) { /* the jitter kernel apart */
        int jit = sorted[i].has_jit;
        for (m = 1; i + m < n && m < sd.batch && sorted[i + m].has_jit == jit; m++)
            ;
        st = launch(c, mode, include_cold, jit, sorted + i, stride, m, so + i, &sd.kernel_s);
        sd.launches++;
    }
    for (size_t j = 0; j < n; j++)
        o[ord[j].idx] = so[j];
    for (size_t i = 0; i < n && st == HS_OK; i++)
        st = result_fill(&o[i], profiles[i], hints[i], msg_bytes, &out[i]);
    sd.device = c->device;
    snprintf(sd.device_name, sizeof(sd.device_name), "%.127s", c->name);
    if (stats)
        *stats = sd;
out:
    free(par);
    free(sorted);
    free(o);
    free(so);
    free(ord);
    return st;
}

extern "C" int scu_built(void)
{
    return 1;
}
