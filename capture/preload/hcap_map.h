/* hcap_map.h - a fixed-capacity open-addressing map from a non-zero 64-bit key to a
 * pointer, with lock-free lookups. Inserts and removals must be serialised by the caller
 * (they happen when verbs objects are created and destroyed, a slow path); lookups may run
 * concurrently from any thread (the post and poll paths). A removed slot becomes a
 * tombstone, which an insert reuses, or empty again where no probe runs through it: a
 * map whose keys come and go (QPs created and destroyed) does not fill with tombstones,
 * which would make every miss scan the whole map.
 */
#ifndef HCAP_MAP_H
#define HCAP_MAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    _Atomic uint64_t key; /* 0 = empty, HCAP_MAP_TOMB = removed */
    _Atomic(void *) val;
} hcap_map_slot_t;

typedef struct {
    hcap_map_slot_t *slots; /* owned */
    uint64_t mask;
} hcap_map_t;

#define HCAP_MAP_TOMB UINT64_MAX

/* A map of 2^order slots. Returns -1 when out of memory. */
int hcap_map_init(hcap_map_t *m, unsigned order);
void hcap_map_release(hcap_map_t *m);
/* Insert or replace. Returns -1 when the map is full. key must not be 0 or HCAP_MAP_TOMB. */
int hcap_map_put(hcap_map_t *m, uint64_t key, void *val);
/* Remove key if present; returns its value or NULL. */
void *hcap_map_del(hcap_map_t *m, uint64_t key);
/* Slots holding a key or a tombstone (what a miss may have to probe through); with the
 * caller's inserts and removals serialised, as they are. */
uint64_t hcap_map_used(const hcap_map_t *m);

static inline uint64_t hcap_map_hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return key;
}

/* The value stored under key, or NULL. */
static inline void *hcap_map_get(const hcap_map_t *m, uint64_t key)
{
    uint64_t i = hcap_map_hash(key) & m->mask, n;

    for (n = 0; n <= m->mask; n++, i = (i + 1) & m->mask) {
        uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_acquire);

        if (k == key)
            return atomic_load_explicit(&m->slots[i].val, memory_order_relaxed);
        if (k == 0)
            return NULL;
    }
    return NULL;
}

#endif
