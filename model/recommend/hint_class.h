/* hint_class.h - hints grouped into equivalence classes over one trace.
 *
 * A hint decides two things: which messages go on the LL path (a size is LL iff
 * hint > 0 && size <= hint, then the profile's switch hysteresis applies to that class
 * sequence) and whether the BW path runs at bw.depth (hint 0) or bw.depth_hinted (any other
 * hint). Two hints that agree on both are one configuration of the replay: every engine
 * (model, sim, live) runs them identically, so ranking them against each other ranks noise.
 *
 * Over a trace whose distinct sizes are s_1 < ... < s_m the classes are, in index order:
 *   0                 hint 0: everything on BW at bw.depth ("no hint")
 *   [1, s_1 - 1]      hinted, nothing on LL (only when s_1 >= 2; [1, max] for a trace
 *                     with no messages)
 *   [s_k, s_k+1 - 1]  the k smallest distinct sizes on LL (k = 1..m; s_m's class has no upper
 *                     bound: everything LL)
 * A size 0 counts as 1 here: both are on LL for every hint >= 1.
 * Each is reported as a range [lo, hi] with a canonical value, lo: the smallest hint of the
 * class, which for k >= 1 is the largest size on LL. Equal class sequences give equal routes
 * whatever the hysteresis; with hysteresis > 1 two classes can still route alike (a size
 * seen only in runs shorter than the hysteresis never switches), so the classes never merge
 * two configurations but may, there, split one.
 *
 * rec_class_scan reads the trace once (a hash of distinct sizes, then a sort of those; past 65536
 * distinct sizes a radix sort of every size instead: O(n) expected either way); every query
 * after it is O(log m). */
#ifndef HS_HINT_CLASS_H
#define HS_HINT_CLASS_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"
#include "traces/trace.h"

/* The trace's distinct sizes, ascending, with the messages at or below each. */
typedef struct {
    uint64_t *size;    /* owned: the m distinct sizes, ascending */
    uint64_t *cum;     /* owned: cum[i] = messages of size <= size[i] */
    size_t n;          /* m */
    uint64_t msgs;     /* messages scanned */
} rec_class_sizes_t;

/* One class of hints. */
typedef struct {
    size_t index;        /* 0 = hint 0, then ascending (see above) */
    uint64_t lo, hi;     /* hints lo..hi inclusive; hi == UINT64_MAX: no upper bound */
    uint64_t canonical;  /* the hint that stands for the class: lo */
    size_t ll_sizes;     /* distinct sizes on LL */
    uint64_t ll_msgs;    /* messages whose class is LL */
} rec_class_t;

/* Scan tr's sizes into *out (the caller releases it with rec_class_release). */
hs_status_t rec_class_scan(const trace_t *tr, rec_class_sizes_t *out);
/* The same from a plain array of n sizes (the scan's core; tests use it). */
hs_status_t rec_class_scan_sizes(const uint64_t *sizes, size_t n, rec_class_sizes_t *out);
void rec_class_release(rec_class_sizes_t *s);

/* Number of classes: 1 + (m == 0 || s_1 >= 2) + m. */
size_t rec_class_count(const rec_class_sizes_t *s);
/* The class index of a hint (O(log m)). */
size_t rec_class_index(const rec_class_sizes_t *s, uint64_t hint);
/* Class number index (< rec_class_count) into *out. */
void rec_class_get(const rec_class_sizes_t *s, size_t index, rec_class_t *out);
/* Whether hints a and b are one configuration over this trace. */
int rec_class_same(const rec_class_sizes_t *s, uint64_t a, uint64_t b);

/* Class indices spread over [0, count): the nmust indices in must (duplicates dropped) and
 * then, while fewer than k, the midpoint of the widest gap between chosen indices (the ends
 * 0 and count - 1 are taken first), i.e. by quantiles of the distinct sizes; every class
 * when there are at most k. Writes the indices ascending into out (room for k + nmust)
 * and returns how many. */
size_t rec_class_spread(const rec_class_sizes_t *s, const size_t *must, size_t nmust, size_t k,
                   size_t *out);

#endif
