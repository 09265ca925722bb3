/* hcap_ring.h - libhintcap's per-thread event ring: one producer (the application thread
 * that owns it), one consumer (the background writer). No lock on either side.
 *
 * The hooks append 32-byte events (a posted WR, a polled completion, a QP destroyed); the
 * writer drains them. A full ring drops the event and counts it (never silent) unless the
 * ring was made blocking, in which case the producer spins until the writer makes room.
 */
#ifndef HCAP_RING_H
#define HCAP_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    HCAP_EV_POST = 1, /* a send-side WR was posted */
    HCAP_EV_COMP = 2, /* a send-side completion was polled */
    HCAP_EV_GONE = 3, /* the QP was destroyed: what is still pending never completes */
} hcap_ev_kind_t;

/* One event. 32 bytes. For POST: op = trace_opcode_t, flags = TRACE_F_*; for COMP:
 * op = ibv_wc_status, size_bytes = the QP number (for the exit summary). */
typedef struct {
    uint64_t t_ns;       /* hcap_stamp(); CLOCK_MONOTONIC ns once the writer converted it */
    uint64_t wr_id;
    uint64_t size_bytes;
    uint32_t qp;         /* QP index within the process */
    uint8_t kind;        /* hcap_ev_kind_t */
    uint8_t op;
    uint16_t flags;
} hcap_ev_t;

typedef struct hcap_ring {
    /* producer's cache line */
    _Atomic uint64_t head;   /* events published */
    uint64_t tail_cache;     /* producer's last view of tail */
    _Atomic uint64_t dropped; /* events lost to a full ring (written by the producer only) */
    char pad0[40];
    /* consumer's cache line */
    _Atomic uint64_t tail;   /* events consumed */
    char pad1[56];
    _Atomic int dead;        /* the owning thread exited: free once drained */
    int blocking;            /* spin instead of dropping when full */
    uint64_t mask;           /* capacity - 1 */
    struct hcap_ring *next;  /* the writer's list of rings */
    hcap_ev_t ev[];
} hcap_ring_t;

/* A ring of 2^order events (order 4..26). Returns NULL when out of memory. Free with free(). */
hcap_ring_t *hcap_ring_new(unsigned order, int blocking);

/* Reserve n consecutive slots for the producer; returns the first slot index (use
 * hcap_ring_slot) or UINT64_MAX when they do not fit (the n events are then counted as
 * dropped, or, blocking, after waiting for room). n must be <= capacity. */
static inline uint64_t hcap_ring_reserve(hcap_ring_t *r, uint64_t n);
/* Publish the n slots reserved last. */
static inline void hcap_ring_publish(hcap_ring_t *r, uint64_t n);

static inline hcap_ev_t *hcap_ring_slot(hcap_ring_t *r, uint64_t idx)
{
    return &r->ev[idx & r->mask];
}

/* Slow path of hcap_ring_reserve: refresh the view of tail, wait if blocking, else drop. */
uint64_t hcap_ring_reserve_slow(hcap_ring_t *r, uint64_t n);

static inline uint64_t hcap_ring_reserve(hcap_ring_t *r, uint64_t n)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

    if (h + n - r->tail_cache <= r->mask + 1)
        return h;
    return hcap_ring_reserve_slow(r, n);
}

static inline void hcap_ring_publish(hcap_ring_t *r, uint64_t n)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

    atomic_store_explicit(&r->head, h + n, memory_order_release);
}

/* Consumer: the published events from the tail on, in place (*first), up to max and up to
 * the ring's end (the rest come at the next call); returns how many. They stay the
 * consumer's, to read and change, until hcap_ring_release gives their slots back. */
size_t hcap_ring_peek(hcap_ring_t *r, hcap_ev_t **first, size_t max);
/* Consumer: give back the n oldest published slots (n <= what hcap_ring_peek returned). */
void hcap_ring_release(hcap_ring_t *r, size_t n);

#endif
