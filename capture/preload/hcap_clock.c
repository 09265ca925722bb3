/* hcap_clock.c - see hcap_clock.h. */
#include "capture/preload/hcap_clock.h"

#include <string.h>

#include "common/hs_host.h"

_Atomic int hcap_stamp_tsc;

#define HCAP_ANCHOR_TRIES 3
/* An anchor whose clock read took longer than this (the writer was preempted in all its
 * tries) is not kept: its CLOCK_MONOTONIC could be anywhere in the bracket. ~5 us at 4 GHz. */
#define HCAP_ANCHOR_MAX_TICKS 20000u
#define HCAP_ANCHOR_FIRST_TRIES 1000

static hcap_anchor_t *anchor_at(hcap_clock_t *c, uint32_t i)
{
    return &c->a[(c->first + i) % HCAP_CLOCK_ANCHORS];
}

static const hcap_anchor_t *anchor_get(const hcap_clock_t *c, uint32_t i)
{
    return &c->a[(c->first + i) % HCAP_CLOCK_ANCHORS];
}

#if HCAP_HAVE_TSC
/* rdtsc after every earlier instruction has completed (as the vDSO reads it). */
static inline uint64_t tsc_ordered(void)
{
    _mm_lfence();
    return __rdtsc();
}
#endif

/* The tightest of a few (TSC, CLOCK_MONOTONIC) pairs; *bracket = its TSC read width. */
static hcap_anchor_t anchor_read(uint64_t *bracket)
{
    hcap_anchor_t best = {0, 0};
#if HCAP_HAVE_TSC
    uint64_t width = UINT64_MAX;
    int i;

    for (i = 0; i < HCAP_ANCHOR_TRIES; i++) {
        uint64_t t1 = tsc_ordered(), ns = hs_now_ns(), t2 = tsc_ordered();

        if (t2 - t1 < width) {
            width = t2 - t1;
            best.tsc = t1 + (t2 - t1) / 2;
            best.ns = ns;
        }
    }
    *bracket = width;
#else
    *bracket = 0;
#endif
    return best;
}

/* ns per tick from anchor lo to a later one, hi (anchors' TSCs strictly increase). */
static double seg_rate(const hcap_anchor_t *lo, const hcap_anchor_t *hi)
{
    return (double)(hi->ns - lo->ns) / (double)(hi->tsc - lo->tsc);
}

/* The rates after the anchors changed: over all of them, and over the last segment (where
 * most stamps of a drain fall: kept, so that converting one costs no division). */
static void rate_update(hcap_clock_t *c)
{
    const hcap_anchor_t *lo = anchor_get(c, 0), *hi = anchor_get(c, c->n - 1);

    if (c->n >= 2 && hi->tsc > lo->tsc) {
        c->ns_per_tick = seg_rate(lo, hi);
        c->seg = *anchor_get(c, c->n - 2);
        c->seg_ticks = hi->tsc - c->seg.tsc;
        c->last = *hi;
        c->last_rate = seg_rate(&c->seg, hi);
    }
}

/* A first rate over HCAP_CLOCK_MIN_GAP_NS (spent here, once, at the first device open), so
 * that the stamps of the writer's first passes are not carried at a rate measured over a
 * few microseconds. Gives up after 10 gaps (a host preempting every read). */
static void rate_seed(hcap_clock_t *c)
{
    uint64_t t0 = hs_now_ns();

    while (c->tsc && (c->n < 2 || anchor_get(c, c->n - 1)->ns - anchor_get(c, 0)->ns <
                                       HCAP_CLOCK_MIN_GAP_NS) &&
           hs_now_ns() - t0 < 10 * HCAP_CLOCK_MIN_GAP_NS)
        hcap_clock_anchor(c);
}

void hcap_clock_init(hcap_clock_t *c, int use_tsc)
{
    int i;

    memset(c, 0, sizeof(*c));
    c->tsc = HCAP_HAVE_TSC && use_tsc && hs_tsc_invariant();
    atomic_store(&hcap_stamp_tsc, c->tsc);
    for (i = 0; i < HCAP_ANCHOR_FIRST_TRIES && c->tsc && c->n == 0; i++)
        hcap_clock_anchor(c);
    if (c->tsc && c->n == 0) { /* never a tight read: keep the last, the best there is */
        uint64_t bracket;

        c->a[0] = anchor_read(&bracket);
        c->n = 1;
    }
    rate_seed(c);
}

void hcap_clock_anchor(hcap_clock_t *c)
{
    uint64_t bracket;
    hcap_anchor_t a, *last;

    if (!c->tsc)
        return;
    a = anchor_read(&bracket);
    if (bracket > HCAP_ANCHOR_MAX_TICKS)
        return;
    c->taken++;
    if (bracket > c->max_bracket)
        c->max_bracket = bracket;
    if (c->n == 0) {
        c->a[0] = a;
        c->n = 1;
        return;
    }
    last = anchor_at(c, c->n - 1);
    if (a.tsc <= last->tsc)
        return; /* no tick since: nothing new */
    if (a.ns < last->ns)
        a.ns = last->ns; /* the clock never runs back */
    if (c->n >= 2 && last->ns - anchor_at(c, c->n - 2)->ns < HCAP_CLOCK_MIN_GAP_NS) {
        *last = a; /* the last segment is still short: move its end */
    } else if (c->n < HCAP_CLOCK_ANCHORS) {
        *anchor_at(c, c->n++) = a;
    } else {
        c->first = (c->first + 1) % HCAP_CLOCK_ANCHORS;
        *anchor_at(c, c->n - 1) = a;
    }
    rate_update(c);
}

uint64_t hcap_clock_ns_search(const hcap_clock_t *c, uint64_t stamp)
{
    const hcap_anchor_t *lo, *hi;
    uint32_t a, b;

    if (!c->tsc)
        return stamp;
    if (c->n < 2) /* no rate yet: cannot happen after a drain, but stay finite */
        return c->n ? anchor_get(c, 0)->ns : hs_now_ns();
    hi = anchor_get(c, c->n - 1);
    if (stamp >= hi->tsc)
        return hcap_clock_along(hi, c->ns_per_tick, stamp);
    if (stamp < anchor_get(c, 0)->tsc)
        return hcap_clock_along(anchor_get(c, 0), c->ns_per_tick, stamp);
    a = c->n - 2; /* most stamps are in the last segment; else search [0, n-1) */
    if (stamp < anchor_get(c, a)->tsc) {
        a = 0;
        b = c->n - 2;
        while (b - a > 1) { /* anchor a <= stamp < anchor b */
            uint32_t m = a + (b - a) / 2;

            if (stamp >= anchor_get(c, m)->tsc)
                a = m;
            else
                b = m;
        }
    }
    lo = anchor_get(c, a);
    return hcap_clock_along(lo, a == c->n - 2 ? c->last_rate : seg_rate(lo, anchor_get(c, a + 1)),
                           stamp);
}

double hcap_clock_hz(const hcap_clock_t *c)
{
    return c->tsc && c->ns_per_tick > 0 ? 1e9 / c->ns_per_tick : 0;
}

double hcap_clock_bracket_ns(const hcap_clock_t *c)
{
    return (double)c->max_bracket * c->ns_per_tick;
}
