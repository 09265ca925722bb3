/* hcap_ring.c - see hcap_ring.h. The producer keeps a cached copy of the consumer's tail
 * so the common case touches only its own cache line. */
#include "capture/preload/hcap_ring.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

hcap_ring_t *hcap_ring_new(unsigned order, int blocking)
{
    hcap_ring_t *r;
    size_t cap;

    if (order < 4)
        order = 4;
    if (order > 26)
        order = 26;
    cap = (size_t)1 << order;
    if (posix_memalign((void **)&r, 64, sizeof(*r) + cap * sizeof(hcap_ev_t)) != 0)
        return NULL;
    memset(r, 0, sizeof(*r));
    r->mask = cap - 1;
    r->blocking = blocking;
    return r;
}

uint64_t hcap_ring_reserve_slow(hcap_ring_t *r, uint64_t n)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

    for (;;) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + n - r->tail_cache <= r->mask + 1)
            return h;
        if (!r->blocking)
            break;
        sched_yield();
    }
    atomic_store_explicit(&r->dropped, atomic_load_explicit(&r->dropped, memory_order_relaxed) + n,
                          memory_order_relaxed);
    return UINT64_MAX;
}

size_t hcap_ring_peek(hcap_ring_t *r, hcap_ev_t **first, size_t max)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t n = (size_t)(h - t), to_end = (size_t)(r->mask + 1 - (t & r->mask));

    if (n > to_end)
        n = to_end;
    if (n > max)
        n = max;
    *first = &r->ev[t & r->mask];
    return n;
}

void hcap_ring_release(hcap_ring_t *r, size_t n)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

    atomic_store_explicit(&r->tail, t + n, memory_order_release);
}
