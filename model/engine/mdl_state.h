/* mdl_state.h - the replay engine's state (internal to model/engine/): per-path constants,
 * rings of closed completion batches, the open batch, the shared CPU and link, what each
 * accelerator keeps, and the per-message contexts (mdl_msg_t, mdl_seg_t). */
#ifndef HS_MDL_STATE_H
#define HS_MDL_STATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"
#include "model/path_rules.h"
#include "model/predict/predict.h"

typedef struct {
    double close_ns; /* when the batch closed; reported at close_ns + event_ns */
    uint32_t nwr;    /* WRs (slots) it holds */
} mdl_batch_t;

typedef struct {
    size_t idx;     /* message index */
    double tref_ns; /* latency reference: trace post time (open) or ready time (closed) */
    double hw_ns;   /* hardware completion of its last chunk */
} mdl_member_t;

typedef struct {
    /* constants (MODEL.md section 1); each path starts a cache line (measured: removing
     * one 8-byte field without this made bench_model's kv replay up to 10% slower) */
    _Alignas(64) uint32_t window; /* W_P = depth x qps */
    uint32_t batch;        /* E_P */
    uint64_t seg_bytes;    /* 0 = one WR per message */
    uint64_t inline_bytes;
    double period_ns, event_ns, fixed_ns, split_ns;
    /* closed, unreported batches: FIFO ring */
    mdl_batch_t *ring;
    uint32_t mask, head, count; /* capacity mask + 1 (a power of two) >= window + 1 */
    uint32_t used;         /* slots held: ring WRs + open WRs */
    double head_r_ns;      /* report time of the ring's oldest batch; HUGE_VAL if empty */
    uint64_t pushes;       /* batches ever queued on the ring */
    /* the open batch */
    uint32_t open_n;
    double h1_ns;          /* latest hardware completion in it */
    double timer_close_ns; /* first completion + period while a batch is open under a */
    double timer_r_ns;     /* timer, else HUGE_VAL; and that plus the event (its report) */
    mdl_member_t *mem;     /* batch entries */
    uint32_t nmem;
    double last_r_ns;      /* latest report time of this path */
} mdl_path_t;

typedef struct {
    double queue, drain, coalesce, l1;
} mdl_costs_ns_t;

/* What a message's size alone decides on one path, computed once per distinct size (the
 * replay's size cache: one per path, direct-mapped; a miss recomputes and replaces, for the
 * path the message takes only). */
#define MDL_SIZE_CACHE 256
typedef struct {
    uint64_t tag;   /* size + 1; 0 = empty */
    uint32_t nwr;   /* WRs of a message of this size */
    double npb_ns;  /* link ns per byte at this size (bw factor applied) */
    double ser_ns;  /* link time of the whole message: bytes and per-packet cost (like the
                     * post costs below, not set for a segmented size) */
    double lat_ns;  /* 2 x base latency, lat factor applied */
    double lf_ns;   /* lat_ns + the path's fixed_ns: a chunk's link end to its completion,
                     * one term (one add on the replay's chain, as the closed forms add it) */
    double dma_ns;  /* payload DMA: 0 when the payload goes inline */
    /* a message of one chunk (up to a batch of WRs): the CPU to post its WRs, one WR's
     * share of that, and one WR's share of ser_ns (chunk_cost, once per size; not set for
     * a segmented message: mdl_chunks_plan costs its chunks) */
    double post_ns, post_share_ns, ser_share_ns;
} mdl_size_t;

/* A chunk's costs: the CPU to post its WRs and one WR's share of it, its link time and one
 * WR's share of that (mdl_core.h, mdl_chunk_cost). Full chunks of a segmented message share one. */
typedef struct {
    double post_ns, post_share_ns, ser_ns, ser_share_ns;
    uint32_t nwr;
} mdl_cost_t;

/* A path's full chunk costs, kept for the link ns per byte they were computed at (it changes
 * with the message's size only under bw factors). */
typedef struct {
    double npb_ns; /* 0: none kept (a link ns per byte is > 0) */
    mdl_cost_t cost;
    uint64_t ties; /* bit e + 64: the costs or the path's event or timer tie in the binade
                    * of ulp 2^e (mdl_step_may_tie) */
} mdl_full_t;

/* A path's pipeline seen from a time t0 (every time relative to it): what a segmented
 * message's replay reads, and what it leaves (mdl_memo.c). */
#define MDL_MEMO_RING 64 /* closed batches at most */
#define MDL_MEMO_MEM 16  /* members of the open batch at most */
typedef struct {
    double cpu_ns, link_ns, last_r_ns;
    uint32_t used, count, open_n, nmem;
    /* the latest report is the newest batch's (close + event, bit for bit): restored so,
     * not shifted (mdl_view_restore) */
    int last_is_tail;
    double h1_ns, timer_ns; /* the open batch's latest completion and timer close (HUGE_VAL) */
    double t_min, t_max;    /* the earliest and the latest time it holds, t0 among them,
                             * absolute (mdl_shift_keep; not in a key: mdl_view_key) */
    double ring_ns[MDL_MEMO_RING];
    uint32_t ring_nwr[MDL_MEMO_RING];
    double mem_hw_ns[MDL_MEMO_MEM]; /* the open batch's members' completions */
} mdl_view_t;

/* A shift of kept times to a new t0 that rounds nowhere: every kept time and the kept t0 lay
 * in one binade [bin_lo, bin_hi) (so each time relative to t0 was exact, by Sterbenz), and
 * the new t0 and every time it gives (t0 + lo to t0 + hi) lie in it too, so each t0 + rel is
 * a multiple of that binade's ulp inside it: exact, and every tie among the kept times (a
 * CPU free exactly at a batch's report) holds after the shift as it held before. The two
 * t0s are an even number of ulps apart: a sum that lands exactly halfway between two times
 * rounds to the even one, so an odd shift would round it the other way. */
typedef struct {
    double bin_lo, bin_hi; /* the binade; bin_lo 0 when nothing was kept */
    double lo, hi;         /* the earliest and the latest kept time, relative (lo <= 0 <= hi) */
    uint64_t odd;          /* the kept t0's last bit */
} mdl_shift_t;

/* The span [*mn, *mx] grown to hold t. */
static inline void mdl_span_add(double *mn, double *mx, double t)
{
    *mn = t < *mn ? t : *mn;
    *mx = t > *mx ? t : *mx;
}

/* The last bit of t's significand: two times of one binade are an even number of its ulps
 * apart when theirs are equal. */
static inline uint64_t mdl_time_odd(double t)
{
    uint64_t bits;

    memcpy(&bits, &t, sizeof(bits));
    return bits & 1;
}

/* The start 2^e of the binade [2^e, 2^(e+1)) of a positive finite t. */
static inline double mdl_binade(double t)
{
    uint64_t bits;
    double b;

    memcpy(&bits, &t, sizeof(bits));
    bits &= 0x7ff0000000000000ull; /* the exponent alone */
    memcpy(&b, &bits, sizeof(b));
    return b;
}

/* The exponent e of the ulp 2^e of a positive normal t's binade. */
static inline int64_t mdl_ulp_e(double t)
{
    uint64_t bits;

    memcpy(&bits, &t, sizeof(bits));
    return (int64_t)(bits >> 52) - 1075;
}

/* The exponent e of the binade's ulp 2^e at which a cost c added to a time lands exactly
 * halfway between two doubles (c's lowest bit is 2^(e - 1)), and so rounds to the even
 * one; INT64_MIN for 0 or a subnormal c (below any time's half ulp). */
static inline int64_t mdl_cost_tie_e(double c)
{
    uint64_t b;

    memcpy(&b, &c, sizeof(b));
    uint64_t frac = b & ((1ull << 52) - 1);
    int64_t exp = (int64_t)((b >> 52) & 0x7ff);
    return exp == 0 ? INT64_MIN : exp - 1075 + (frac ? __builtin_ctzll(frac) : 52) + 1;
}

/* What the skip tracks over a message's full chunks, in O(1) per chunk: the previous
 * chunk's state relative to its post time, the run of equally spaced batches of this
 * message's full chunks at the ring's tail (pa's whole ring when run > count), and for the
 * roll the ring's head and count after the previous chunk (mdl_skip.c). */
typedef struct {
    double t_ns;            /* the previous full chunk's post time */
    double link_ns;         /* link free time then, relative to t_ns (the CPU's is always
                             * the full chunk's post cost) */
    double drain_ns;        /* cost_ns.drain after it */
    uint32_t used;          /* pa's slots held then */
    int valid;              /* the above describe the previous chunk */
    double close_ns;        /* the run's newest batch close */
    double gap_ns;          /* the run's spacing (run >= 2) */
    uint32_t run;           /* batches in the run */
    double head_ns;         /* the ring head's close after the previous full chunk */
    double reap_ns;         /* when the chunk after it reaped: the CPU free time then */
    uint32_t count;         /* the ring's batches then */
} mdl_track_t;

/* The start of a long message on an idle path (MODEL.md section 3): nothing queued on it,
 * the CPU and the link free when the message can start (t0), no perturbation window ahead.
 * Every such message's full chunks replay the same, relative to t0, until the skip takes
 * over, whatever the message's size, given the full chunk's costs: kept once per path,
 * from the first message whose skip fires, with every time relative to t0. */
typedef struct {
    int valid;
    uint64_t failed;        /* chunks of the longest message that was not kept */
    double ser_ns, lat_ns, dma_ns; /* the full chunk's link time, latency and DMA */
    uint32_t h;             /* full chunks replayed before the skip's test that jumped */
    double t_ns, hw_ns;     /* the h-th chunk's post and hardware completion */
    int regular, stalled;
    uint64_t pushes;
    mdl_track_t track;      /* the skip's tracker before the test */
    mdl_view_t view;        /* the path, the CPU and the link then (mdl_view_out) */
    mdl_shift_t shift;      /* its times' span: applied only where it shifts exactly */
} mdl_entry_t;

typedef struct mdl_memo mdl_memo_t;

/* The relation of a memo's key to the out view of the memo `from`, at the keeps of each
 * (gen); shift: the key's batches are that out's last ones, each later by d exactly. */
typedef struct {
    const mdl_memo_t *from;
    uint64_t from_gen, gen;
    int shift;
    double d;
} mdl_memo_rel_t;

/* One segmented message's replay, kept to be replayed again shifted: the pipeline it met
 * (key) and left (out), and what happened in between (MODEL.md section 3). */
struct mdl_memo {
    uint64_t seen; /* the size of the last message that came to this slot */
    uint64_t size;
    int k, pert, valid;
    int key_idle; /* the key is a path holding nothing, the CPU, the link and the latest
                   * report at or before t0 (every term 0): mdl_memo_matches tests that */
    mdl_view_t key, out;
    mdl_shift_t shift;             /* the times it restores: applied only where exact */
    double span_ns;                /* its last chunk's post, relative */
    double entry_close_ns;         /* the open batch it met closed then (key.open_n > 0) */
    double self_close_ns, self_hw_ns; /* its own batch's close (out.nmem == 0), its hw */
    double queue_ns, drain_ns;     /* the cost terms it added */
    uint64_t stalls, skipped, pushes;
    /* A ring that a memo r restored last (mdl_state_t.restored), popped but pushed nothing
     * since (r's applied_pushes), holds this memo's key batches, seen from t0, where they
     * are r's out ones' last, each later by one exact d, and t0 lies d after r's applied_t0:
     * mdl_memo_matches then need not compare them (mdl_memo.c, ring_shifted). */
    uint64_t gen;             /* bumped by each keep */
    double applied_t0;        /* where it was last applied (restored) */
    uint64_t applied_pushes;  /* the path's pushes after that; UINT64_MAX since a keep */
    mdl_memo_rel_t rel[2];    /* that relation to r, by r's slot (t0's last bit) */
};
#define MDL_MEMO_SLOTS 8

/* A path's ring as a link-bound segmented message left it (mdl_steady.c, mdl_steady_note): its own
 * last B - 1 full batches, S apart (B = window / batch), and its last chunk's batch, open
 * under a timer or closed. While the path is as left, the next such message on it is replayed
 * by formulas (mdl_steady_walk). */
typedef struct {
    uint32_t B;    /* window / batch, and whether the window is B >= 3 whole batches (the */
    int shape;     /* only shape kept): the path's, set once (mdl_state_init) */
    int valid;
    uint64_t pushes;
    uint32_t head, count, open_n;
    double S, tail_close_ns, timer_close_ns;
    /* lazy: the ring's first B - 1 batches from its head (the message's own full batches
     * q1, q1 + 1, ..) are not written yet; batch j closes at L0 + (q1 + j) S + lf and holds a
     * batch of WRs (mdl_steady_walk's commit leaves them so; mdl_steady_fill writes them before
     * anything else reads the ring) */
    int lazy;
    double L0, q1, lf;
    double c0;     /* batch 0's close (the ring's head) */
} mdl_steady_t;

typedef struct {
    const trace_t *tr;
    const profile_t *p;
    pred_raw_t *raw;
    float *lat_us;          /* raw->lat_us and raw->path (borrowed); raw's counters are */
    uint8_t *pathv;         /* kept here and copied to raw by mdl_state_finish */
    uint64_t switches, stalls;
    double drain_us_total;
    pred_mode_t mode;
    uint64_t hint;
    uint64_t t0_ns;         /* first record's post time */
    mdl_path_t path[2];     /* [0] LL, [1] BW */
    prules_router_t route;  /* the current path and the hysteresis run (path_rules.h) */
    int prev_path;
    double cpu_free_ns, link_free_ns;
    double ns_per_byte, pkt_ns, wr_ns, dma_ns, wire2_ns, post_ns, doorbell_ns, l1x_ns;
    uint64_t mtu;
    double drain_fixed_ns, pert_window_ns, pert_factor, pert_from_ns, pert_until_ns;
    double t_last_done_ns, sum_lat_ns;
    mdl_costs_ns_t cost_ns;
    mdl_size_t *sizes;      /* MDL_SIZE_CACHE entries per path, LL's first */
    unsigned off;           /* MODEL_ACCEL_* bits of the accelerators left off (pred_opts_t) */
    uint64_t chunks_skipped;
    mdl_memo_t *memo;       /* 2 MDL_MEMO_SLOTS per path, direct-mapped by size and t0's
                             * last bit (mdl_shift_t) */
    uint64_t memo_hits;
    const mdl_memo_t *restored[2]; /* the memo path k's ring was last restored from by
                                    * mdl_memo_apply; NULL after any other restore */
    mdl_entry_t *entry;     /* two per path, by t0's last bit (mdl_shift_t) */
    uint64_t entry_hits;
    uint64_t bound_hits;    /* messages mdl_bound replayed */
    uint64_t steady_hits;   /* of those, by mdl_steady_walk */
    uint64_t lazy_hits;     /* of those, on a ring left lazy (closed_next) */
    uint64_t serial_hits;   /* messages mdl_serial replayed */
    mdl_steady_t steady[2]; /* each path's ring as mdl_bound left it */
    uint32_t mtu_shift;     /* log2(mtu) when a power of two, else MDL_NO_SHIFT */
    uint32_t seg_shift[2];  /* log2(each path's seg_bytes) likewise (the size cache's miss
                             * divides by neither then: bench_model phased) */
    uint32_t batch_shift[2]; /* log2(each path's batch) likewise (mdl_chunks_plan) */
    mdl_full_t full[2];     /* each path's full chunk costs, last computed */
    uint64_t seg_min[2];    /* sizes above this on path k are segmented (more than a batch
                             * of WRs) and need no size cache (no size-dependent factors:
                             * size_seg); UINT64_MAX where that does not hold */
    uint64_t gate[2];       /* post_message's one test (size >= gate): seg_min + 1 (sizes
                             * are at most 2^40), or 0 while path k's ring is lazy
                             * (mdl_steady_t), so that every size, 0 too, looks there first */
} mdl_state_t;

/* One message as the replay posts it (the per-message context): where routing sent it and
 * when it may go. */
typedef struct {
    mdl_path_t *pa;  /* the path it takes */
    int k;           /* that path's index: 0 LL, 1 BW */
    size_t idx;      /* its index in the trace: its latency's slot */
    uint64_t size;   /* bytes */
    double t_ns;     /* the earliest it may post: ready, or a switch's drain done */
    double tref_ns;  /* its latency's reference: trace post (open) or ready (closed) */
} mdl_msg_t;

/* A segmented message (more than a batch of WRs) while its chunks are replayed: the
 * message, its size's terms, its chunks (mdl_chunks_plan), and what its replay did (what
 * the memo keeps: mdl_memo_keep). Every time is absolute. */
typedef struct {
    mdl_msg_t m;
    const mdl_size_t *z;    /* its size's terms: DMA, latency, link ns per byte */
    uint64_t nwr;           /* its WRs */
    double t0;              /* its start: max(t_ns, CPU free), its first reaping done */
    const mdl_cost_t *full; /* a full chunk's costs (s->full[k]) */
    mdl_cost_t last;        /* the last chunk's (the rest of the WRs) */
    uint64_t nfull;         /* full chunks before the last */
    double link_step;       /* S on a saturated link from now on (mdl_bound_may) */
    /* what the replay did */
    int stalled;            /* a chunk waited for its slots */
    double queue_ns;        /* its queue cost term (its first chunk's wait: one add) */
    double d0;              /* the drain total at its start */
    uint64_t sk0, push0;    /* chunks skipped and pa's pushes at its start */
    int entry_ok;           /* entry_close is known */
    double entry_close;     /* when the open batch it met closed */
    double hw, t_last;      /* its last chunk's hardware completion and post */
} mdl_seg_t;

#define MDL_NO_SHIFT PRULES_NO_SHIFT

/* ceil(a / d), with d = 2^sh unless sh is MDL_NO_SHIFT (path_rules.h). */
static inline uint64_t mdl_div_up(uint64_t a, uint64_t d, uint32_t sh)
{
    return prules_div_up(a, d, sh);
}

/* post_message's test on path k while its ring is written (mdl_state_t.gate). */
static inline uint64_t mdl_gate(const mdl_state_t *s, int k)
{
    return s->seg_min[k] == UINT64_MAX ? UINT64_MAX : s->seg_min[k] + 1;
}

/* Set up s for one replay: every constant from prules_init (path_rules.h, once), and the
 * rings; release with mdl_state_release (also after a failure). */
hs_status_t mdl_state_init(mdl_state_t *s, const trace_t *tr, const profile_t *p,
                           const pred_opts_t *o, uint64_t hint_bytes, pred_raw_t *raw);
/* Copy the totals (costs, last completion) into raw; HS_ERR_INVALID (logged) when a time
 * is not finite. */
hs_status_t mdl_state_finish(mdl_state_t *s);
void mdl_state_release(mdl_state_t *s);

/* Whether a message posted at t gets the switch perturbation (MODEL.md section 4). */
static inline int mdl_in_window(const mdl_state_t *s, double t)
{
    return t >= s->pert_from_ns && t < s->pert_until_ns;
}

/* The first perturbation-window edge after t (HUGE_VAL when none is ahead). */
static inline double mdl_next_edge(const mdl_state_t *s, double t)
{
    return t < s->pert_from_ns ? s->pert_from_ns : t < s->pert_until_ns ? s->pert_until_ns
                                                                        : HUGE_VAL;
}

/* Whether a perturbation-window edge lies after t (mdl_next_edge(s, t) != HUGE_VAL): the
 * window's end does (its start is never after it). */
static inline int mdl_edge_ahead(const mdl_state_t *s, double t)
{
    return t < s->pert_until_ns;
}

#endif
