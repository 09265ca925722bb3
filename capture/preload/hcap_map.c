/* hcap_map.c - see hcap_map.h. A value is stored before its key is published (release),
 * so a reader that sees the key sees the value. */
#include "capture/preload/hcap_map.h"

#include <stdlib.h>

int hcap_map_init(hcap_map_t *m, unsigned order)
{
    m->slots = calloc((size_t)1 << order, sizeof(*m->slots));
    if (!m->slots)
        return -1;
    m->mask = ((uint64_t)1 << order) - 1;
    return 0;
}

void hcap_map_release(hcap_map_t *m)
{
    free(m->slots);
    m->slots = NULL;
}

int hcap_map_put(hcap_map_t *m, uint64_t key, void *val)
{
    uint64_t i = hcap_map_hash(key) & m->mask, n;
    hcap_map_slot_t *free_slot = NULL;

    for (n = 0; n <= m->mask; n++, i = (i + 1) & m->mask) {
        uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_relaxed);

        if (k == key) {
            atomic_store_explicit(&m->slots[i].val, val, memory_order_release);
            return 0;
        }
        if (k == HCAP_MAP_TOMB && !free_slot)
            free_slot = &m->slots[i];
        if (k == 0) {
            if (!free_slot)
                free_slot = &m->slots[i];
            break;
        }
    }
    if (!free_slot)
        return -1;
    atomic_store_explicit(&free_slot->val, val, memory_order_relaxed);
    atomic_store_explicit(&free_slot->key, key, memory_order_release);
    return 0;
}

/* Slot i's key was removed. No probe passes an empty slot, so with the next slot empty no
 * probe runs through i to a key beyond it: i becomes empty, and so do the tombstones just
 * before it. Otherwise i becomes a tombstone. A lookup in flight is not misled either way:
 * the probes of the keys present keep every slot they cross. */
static void map_vacate(hcap_map_t *m, uint64_t i)
{
    uint64_t n;

    if (atomic_load_explicit(&m->slots[(i + 1) & m->mask].key, memory_order_relaxed) != 0) {
        atomic_store_explicit(&m->slots[i].key, HCAP_MAP_TOMB, memory_order_release);
        return;
    }
    for (n = 0; n <= m->mask; n++) {
        atomic_store_explicit(&m->slots[i].key, 0, memory_order_release);
        i = (i - 1) & m->mask;
        if (atomic_load_explicit(&m->slots[i].key, memory_order_relaxed) != HCAP_MAP_TOMB)
            break;
    }
}

void *hcap_map_del(hcap_map_t *m, uint64_t key)
{
    uint64_t i = hcap_map_hash(key) & m->mask, n;

    for (n = 0; n <= m->mask; n++, i = (i + 1) & m->mask) {
        uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_relaxed);

        if (k == key) {
            void *v = atomic_load_explicit(&m->slots[i].val, memory_order_relaxed);
            map_vacate(m, i);
            return v;
        }
        if (k == 0)
            return NULL;
    }
    return NULL;
}

uint64_t hcap_map_used(const hcap_map_t *m)
{
    uint64_t n = 0;

    for (uint64_t i = 0; i <= m->mask; i++)
        n += atomic_load(&m->slots[i].key) != 0;
    return n;
}
