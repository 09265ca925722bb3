/* hcap_clock.h - libhintcap's time stamps: cheap in the hooks, exact in the trace.
 *
 * The hooks stamp events with hcap_stamp(): the TSC (rdtsc, a few ns) where the CPU says
 * it is invariant (constant rate, never stopped: CPUID 0x80000007 EDX bit 8), else
 * CLOCK_MONOTONIC itself (34-48 ns a read on some hosts). The writer thread turns stamps
 * into CLOCK_MONOTONIC ns off the hot path: at every pass over the rings it takes an anchor,
 * a (TSC, CLOCK_MONOTONIC) pair read back to back (the tightest of a few tries, its TSC the
 * midpoint of the two TSC reads around the clock read), and converts what it drains by linear
 * interpolation between the anchors around each stamp. So the trace holds ns of one clock,
 * CLOCK_MONOTONIC, exact at every anchor (within the anchor's bracket), following NTP's
 * rate corrections, with no drift between anchors beyond the TSC's own rate noise.
 *
 * Anchors kept are at least HCAP_CLOCK_MIN_GAP_NS apart (a newer one replaces the last
 * while closer), the last HCAP_CLOCK_ANCHORS of them; a stamp older than all of them (a
 * thread preempted for long between stamping and publishing) or newer than the last is
 * converted with the rate over all kept anchors; hcap_clock_init measures a first rate over
 * HCAP_CLOCK_MIN_GAP_NS.
 */
#ifndef HCAP_CLOCK_H
#define HCAP_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/hs_util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HCAP_HAVE_TSC 1
#else
#define HCAP_HAVE_TSC 0
#endif

/* The trace header's clock_source when stamped with the TSC (else "CLOCK_MONOTONIC"). */
#define HCAP_CLOCK_TSC_NAME "CLOCK_MONOTONIC via TSC"
#define HCAP_CLOCK_ANCHORS 64
#define HCAP_CLOCK_MIN_GAP_NS 100000ULL

/* What the hooks stamp with: 1 the TSC, 0 CLOCK_MONOTONIC ns. Set by hcap_clock_init
 * before a capture starts, constant while it runs. */
extern _Atomic int hcap_stamp_tsc;

/* The hot path's time stamp: TSC ticks or CLOCK_MONOTONIC ns (hcap_stamp_tsc). */
static inline uint64_t hcap_stamp(void)
{
#if HCAP_HAVE_TSC
    if (__builtin_expect(atomic_load_explicit(&hcap_stamp_tsc, memory_order_relaxed), 1))
        return __rdtsc();
#endif
    return hs_now_ns();
}

typedef struct {
    uint64_t tsc;
    uint64_t ns;
} hcap_anchor_t;

/* The writer's converter (one thread: the writer; hcap_clock_init before it starts). */
typedef struct {
    int tsc;                  /* stamps are TSC ticks; else ns already */
    hcap_anchor_t a[HCAP_CLOCK_ANCHORS]; /* ring of kept anchors, oldest at first */
    uint32_t first, n;        /* ring position of the oldest, anchors kept */
    uint64_t taken;           /* anchors taken (kept or replacing the last) */
    uint64_t max_bracket;     /* widest TSC bracket of an anchor taken, ticks */
    double ns_per_tick;       /* over all kept anchors (0 until there are two) */
    double last_rate;         /* ns per tick from the next-to-last anchor to the last */
    hcap_anchor_t seg;        /* the next-to-last anchor, where the last segment starts */
    uint64_t seg_ticks;       /* the last segment's length (0: none, every stamp goes the
                               * long way) */
    hcap_anchor_t last;       /* the last anchor (valid when seg_ticks is not 0) */
} hcap_clock_t;

/* Pick the stamp (use_tsc: the caller's wish, honoured only where the TSC is invariant),
 * set hcap_stamp_tsc, take the first anchor. */
void hcap_clock_init(hcap_clock_t *c, int use_tsc);
/* Take an anchor now (writer thread, at each pass before draining the rings). */
void hcap_clock_anchor(hcap_clock_t *c);
/* ns at stamp along the line through anchor a with slope rate (ns per tick). */
static inline uint64_t hcap_clock_along(const hcap_anchor_t *a, double rate, uint64_t stamp)
{
    uint64_t back;

    if (stamp >= a->tsc)
        return a->ns + (uint64_t)((double)(stamp - a->tsc) * rate + 0.5);
    back = (uint64_t)((double)(a->tsc - stamp) * rate + 0.5);
    return back < a->ns ? a->ns - back : 0;
}

/* hcap_clock_ns for a stamp outside the last segment. */
uint64_t hcap_clock_ns_search(const hcap_clock_t *c, uint64_t stamp);

/* A stamp as CLOCK_MONOTONIC ns. Inline for the stamps where a drain's fall (the writer
 * converts every event: a compare or two and a multiply-add then): in the last segment, or
 * newer than the last anchor (stamped while the pass that took it drains: most of them when
 * the rings are busy), carried at the rate over all kept anchors as hcap_clock_ns_search
 * does. */
static inline uint64_t hcap_clock_ns(const hcap_clock_t *c, uint64_t stamp)
{
    if (stamp - c->seg.tsc < c->seg_ticks) /* seg.tsc <= stamp < the last anchor's */
        return hcap_clock_along(&c->seg, c->last_rate, stamp);
    if (c->seg_ticks && stamp >= c->last.tsc)
        return hcap_clock_along(&c->last, c->ns_per_tick, stamp);
    return hcap_clock_ns_search(c, stamp);
}
/* TSC ticks per second over the kept anchors (0: not TSC, or one anchor only). */
double hcap_clock_hz(const hcap_clock_t *c);
/* The widest anchor bracket so far, in ns (the conversion's uncertainty at an anchor). */
double hcap_clock_bracket_ns(const hcap_clock_t *c);

#endif
