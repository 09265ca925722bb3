/* hint_class.c - equivalence classes of hints over a trace (see hint_class.h). The scan
 * counts distinct sizes in an open-addressing hash (a count of 0 marks an empty slot;
 * consecutive equal sizes, the common case, skip the lookup), then sorts the m keys. Past
 * REC_CLASS_HASH_MAX distinct sizes the hash's misses cost more than sorting every size, so the
 * scan starts over with a copy of the sizes in an LSD radix sort (11-bit digits, only as
 * many passes as the largest size needs): O(n) either way. */
#include "model/recommend/hint_class.h"

#include <stdlib.h>
#include <string.h>

#include "common/hs_mem.h"

#define REC_CLASS_HASH_MAX (1u << 16)
#define REC_CLASS_DIGIT_BITS 11
#define REC_CLASS_BUCKETS (1u << REC_CLASS_DIGIT_BITS)

typedef struct {
    uint64_t key, count;
} rec_class_slot_t;

typedef struct {
    rec_class_slot_t *slot;
    size_t cap, used; /* cap a power of two, used < cap / 2 */
} rec_class_hash_t;

static size_t rec_class_hash_pos(const rec_class_hash_t *h, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 17) & (h->cap - 1);
}

static rec_class_slot_t *rec_class_hash_find(rec_class_hash_t *h, uint64_t key)
{
    size_t i = rec_class_hash_pos(h, key);

    while (h->slot[i].count && h->slot[i].key != key)
        i = (i + 1) & (h->cap - 1);
    return &h->slot[i];
}

static hs_status_t rec_class_hash_grow(rec_class_hash_t *h)
{
    rec_class_hash_t g = {calloc(h->cap * 2, sizeof(rec_class_slot_t)), h->cap * 2, h->used};

    if (!g.slot)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < h->cap; i++)
        if (h->slot[i].count)
            *rec_class_hash_find(&g, h->slot[i].key) = h->slot[i];
    free(h->slot);
    *h = g;
    return HS_OK;
}

/* Add n messages of size key. */
static hs_status_t rec_class_hash_add(rec_class_hash_t *h, uint64_t key, uint64_t n)
{
    rec_class_slot_t *e = rec_class_hash_find(h, key);

    if (e->count == 0) {
        if (2 * (h->used + 1) > h->cap) {
            hs_status_t st = rec_class_hash_grow(h);
            if (st != HS_OK)
                return st;
            e = rec_class_hash_find(h, key);
        }
        e->key = key;
        h->used++;
    }
    e->count += n;
    return HS_OK;
}

static int rec_class_cmp_slot(const void *a, const void *b)
{
    uint64_t x = ((const rec_class_slot_t *)a)->key, y = ((const rec_class_slot_t *)b)->key;

    return (x > y) - (x < y);
}

/* The hash's keys, sorted, into *out with their running counts. */
static hs_status_t rec_class_collect(rec_class_hash_t *h, rec_class_sizes_t *out)
{
    size_t m = 0;
    uint64_t run = 0;

    for (size_t i = 0; i < h->cap; i++)
        if (h->slot[i].count)
            h->slot[m++] = h->slot[i];
    qsort(h->slot, m, sizeof(*h->slot), rec_class_cmp_slot);
    out->size = malloc((m ? m : 1) * sizeof(*out->size));
    out->cum = malloc((m ? m : 1) * sizeof(*out->cum));
    if (!out->size || !out->cum) {
        rec_class_release(out);
        return HS_ERR_NOMEM;
    }
    for (size_t i = 0; i < m; i++) {
        run += h->slot[i].count;
        out->size[i] = h->slot[i].key;
        out->cum[i] = run;
    }
    out->n = m;
    out->msgs = run;
    return HS_OK;
}

/* Sizes from either a trace's records or a plain array. */
typedef struct {
    const trace_rec_t *recs;
    const uint64_t *sizes;
    size_t n;
} rec_class_src_t;

/* Size i; 0 counts as 1: both are on LL for every hint >= 1, on BW for hint 0. */
static uint64_t rec_class_src_at(const rec_class_src_t *src, size_t i)
{
    uint64_t v = src->recs ? src->recs[i].size_bytes : src->sizes[i];

    return v ? v : 1;
}

/* One LSD pass of the digit at shift from a into b. */
static void rec_class_radix_pass(const uint64_t *a, uint64_t *b, size_t n, unsigned shift)
{
    size_t count[REC_CLASS_BUCKETS] = {0}, sum = 0;

    for (size_t i = 0; i < n; i++)
        count[(a[i] >> shift) & (REC_CLASS_BUCKETS - 1)]++;
    for (size_t d = 0; d < REC_CLASS_BUCKETS; d++) {
        size_t c = count[d];
        count[d] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++)
        b[count[(a[i] >> shift) & (REC_CLASS_BUCKETS - 1)]++] = a[i];
}

/* Run lengths of the sorted v[0..n) into out. */
static hs_status_t rec_class_runs(const uint64_t *v, size_t n, rec_class_sizes_t *out)
{
    size_t m = 0;

    for (size_t i = 0; i < n; i++)
        m += i == 0 || v[i] != v[i - 1];
    out->size = malloc((m ? m : 1) * sizeof(*out->size));
    out->cum = malloc((m ? m : 1) * sizeof(*out->cum));
    if (!out->size || !out->cum) {
        rec_class_release(out);
        return HS_ERR_NOMEM;
    }
    m = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i] != v[i - 1])
            out->size[m++] = v[i];
        out->cum[m - 1] = i + 1;
    }
    out->n = m;
    out->msgs = n;
    return HS_OK;
}

/* Every size copied and radix sorted: for traces with many distinct sizes. */
static hs_status_t rec_class_scan_sorted(const rec_class_src_t *src, rec_class_sizes_t *out)
{
    uint64_t *a = hs_alloc_big(src->n * sizeof(*a)), *b = hs_alloc_big(src->n * sizeof(*b));
    uint64_t top = 0;
    hs_status_t st = HS_ERR_NOMEM;

    if (!a || !b)
        goto free_bufs;
    for (size_t i = 0; i < src->n; i++) {
        a[i] = rec_class_src_at(src, i);
        top |= a[i];
    }
    for (unsigned sh = 0; sh < 64 && (top >> sh); sh += REC_CLASS_DIGIT_BITS) {
        uint64_t *t = a;
        rec_class_radix_pass(a, b, src->n, sh);
        a = b;
        b = t;
    }
    st = rec_class_runs(a, src->n, out);
free_bufs:
    free(a);
    free(b);
    return st;
}

static hs_status_t rec_class_scan_src(const rec_class_src_t *src, rec_class_sizes_t *out)
{
    rec_class_hash_t h = {calloc(64, sizeof(rec_class_slot_t)), 64, 0};
    hs_status_t st = h.slot ? HS_OK : HS_ERR_NOMEM;
    size_t i = 0;

    memset(out, 0, sizeof(*out));
    while (st == HS_OK && i < src->n && h.used <= REC_CLASS_HASH_MAX) {
        uint64_t key = rec_class_src_at(src, i), run = 1;
        while (i + run < src->n && rec_class_src_at(src, i + run) == key)
            run++;
        st = rec_class_hash_add(&h, key, run);
        i += run;
    }
    if (st != HS_OK)
        goto free_slots;
    if (h.used > REC_CLASS_HASH_MAX)
        st = rec_class_scan_sorted(src, out);
    else
        st = rec_class_collect(&h, out);
free_slots:
    free(h.slot);
    return st;
}

hs_status_t rec_class_scan(const trace_t *tr, rec_class_sizes_t *out)
{
    rec_class_src_t src = {tr->recs, NULL, tr->n};

    return rec_class_scan_src(&src, out);
}

hs_status_t rec_class_scan_sizes(const uint64_t *sizes, size_t n, rec_class_sizes_t *out)
{
    rec_class_src_t src = {NULL, sizes, n};

    return rec_class_scan_src(&src, out);
}

void rec_class_release(rec_class_sizes_t *s)
{
    free(s->size);
    free(s->cum);
    memset(s, 0, sizeof(*s));
}

/* Whether there is a class of hints >= 1 that put nothing on LL. */
static int rec_class_has_none(const rec_class_sizes_t *s)
{
    return s->n == 0 || s->size[0] >= 2;
}

size_t rec_class_count(const rec_class_sizes_t *s)
{
    return 1 + (size_t)rec_class_has_none(s) + s->n;
}

/* Distinct sizes <= hint (binary search). */
static size_t rec_class_at_or_below(const rec_class_sizes_t *s, uint64_t hint)
{
    size_t lo = 0, hi = s->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->size[mid] <= hint)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t rec_class_index(const rec_class_sizes_t *s, uint64_t hint)
{
    if (hint == 0)
        return 0;
    return (size_t)rec_class_has_none(s) + rec_class_at_or_below(s, hint);
}

void rec_class_get(const rec_class_sizes_t *s, size_t index, rec_class_t *out)
{
    size_t k = index - (size_t)rec_class_has_none(s); /* distinct sizes on LL, for index >= 1 */

    memset(out, 0, sizeof(*out));
    out->index = index;
    if (index == 0)
        return; /* hint 0: [0, 0], nothing on LL */
    out->ll_sizes = k;
    out->ll_msgs = k ? s->cum[k - 1] : 0;
    out->lo = k == 0 ? 1 : s->size[k - 1];
    out->hi = k < s->n ? s->size[k] - 1 : UINT64_MAX;
    out->canonical = out->lo;
}

int rec_class_same(const rec_class_sizes_t *s, uint64_t a, uint64_t b)
{
    return rec_class_index(s, a) == rec_class_index(s, b);
}

/* Insert v into the ascending out[0..n) unless present; returns the new n. */
static size_t rec_class_insert(size_t *out, size_t n, size_t v)
{
    size_t i = n;

    for (size_t j = 0; j < n; j++)
        if (out[j] == v)
            return n;
    while (i > 0 && out[i - 1] > v) {
        out[i] = out[i - 1];
        i--;
    }
    out[i] = v;
    return n + 1;
}

size_t rec_class_spread(const rec_class_sizes_t *s, const size_t *must, size_t nmust, size_t k,
                   size_t *out)
{
    size_t count = rec_class_count(s), n = 0;

    if (count <= k) {
        for (size_t i = 0; i < count; i++)
            out[i] = i;
        return count;
    }
    for (size_t i = 0; i < nmust; i++)
        if (must[i] < count)
            n = rec_class_insert(out, n, must[i]);
    if (n < k)
        n = rec_class_insert(out, n, 0);
    if (n < k)
        n = rec_class_insert(out, n, count - 1);
    while (n < k) { /* the widest gap's midpoint; a gap > 1 exists since n < count */
        size_t gap = 0, at = 0;
        for (size_t i = 0; i + 1 < n; i++)
            if (out[i + 1] - out[i] > gap) {
                gap = out[i + 1] - out[i];
                at = i;
            }
        n = rec_class_insert(out, n, out[at] + gap / 2);
    }
    return n;
}
