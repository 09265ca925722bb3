/* mdl_entry.c - the start of a long message on an idle path, kept (MODEL.md section 3;
 * MODEL_ACCEL_ENTRY, which needs MODEL_ACCEL_SKIP).
 *
 * Invariant: a segmented message that can start at t0 on an idle path (nothing queued on
 * it, no open batch, the CPU and the link free by t0) replays its full chunks the same,
 * relative to t0, whatever its size, given the full chunk's costs (link time, latency,
 * DMA), until the skip takes over.
 * Condition: the path is idle at t0 and no perturbation-window edge lies at or after t0;
 * the record was kept from the first such message whose skip jumped (after its h-th full
 * chunk), for the same full-chunk costs (a record kept for others is dropped), its times
 * shift to t0 exactly (mdl_shift_t: a record per last bit of t0, and one kept in another
 * binade is kept again), and the message has more than h full chunks. The record holds the pipeline after chunk h and the
 * skip's tracker before its test, relative to t0 (mdl_entry_t). */
#include "model/engine/mdl_accel.h"
#include "model/engine/mdl_memo.h"

MDL_ACCEL mdl_entry_t *mdl_entry_of(mdl_state_t *s, const mdl_seg_t *g)
{
    const mdl_path_t *pa = g->m.pa;
    double t0 = g->t0;
    mdl_entry_t *e = &s->entry[2 * g->m.k + (int)mdl_time_odd(t0)];

    if (pa->count || pa->open_n || s->link_free_ns > t0 || s->cpu_free_ns > t0 ||
        mdl_edge_ahead(s, t0))
        return NULL;
    if (e->ser_ns != g->full->ser_ns || e->lat_ns != g->z->lat_ns || e->dma_ns != g->z->dma_ns) {
        e->valid = 0;
        e->failed = 0;
        e->ser_ns = g->full->ser_ns;
        e->lat_ns = g->z->lat_ns;
        e->dma_ns = g->z->dma_ns;
    }
    if (e->valid && !mdl_shift_exact(&e->shift, t0)) { /* kept in another binade: again */
        e->valid = 0;
        e->failed = 0;
    }
    return e;
}

/* The tracker k with every time moved by d (and its drain total by drain). */
static void track_shift(mdl_track_t *k, double d, double drain)
{
    k->t_ns += d;
    k->close_ns += d;
    k->head_ns += d;
    k->reap_ns += d;
    k->drain_ns += drain;
}

MDL_ACCEL MDL_COLD int mdl_entry_snap(const mdl_state_t *s, const mdl_seg_t *g, mdl_entry_t *e,
                                      uint32_t h, const mdl_step_t *st, const mdl_track_t *k)
{
    const mdl_path_t *pa = g->m.pa;
    double t0 = g->t0;

    if (!mdl_view_out(s, pa, t0, &e->view))
        return 0;
    double mn = e->view.t_min, mx = e->view.t_max;
    mdl_span_add(&mn, &mx, st->t_ns);
    mdl_span_add(&mn, &mx, st->hw_ns);
    /* the tracker's times (those it has set: an unset one is 0, and never read) */
    const double kt[] = {k->t_ns, k->close_ns, k->head_ns, k->reap_ns};
    for (size_t j = 0; j < sizeof(kt) / sizeof(kt[0]); j++)
        if (kt[j] > 0)
            mdl_span_add(&mn, &mx, kt[j]);
    if (!mdl_shift_keep(&e->shift, t0, mn, mx))
        return 0;
    e->h = h;
    e->t_ns = st->t_ns - t0;
    e->hw_ns = st->hw_ns - t0;
    e->regular = st->regular;
    e->stalled = g->stalled;
    e->pushes = pa->pushes - g->push0;
    e->track = *k;
    track_shift(&e->track, -t0, -s->cost_ns.drain);
    return 1;
}

/* As if e's h full chunks had been replayed from t0 (counted as skipped). The first chunk
 * on an idle path does not wait: no queue cost, and no drain outside the window. */
MDL_ACCEL MDL_COLD void mdl_entry_apply(mdl_state_t *s, mdl_seg_t *g, const mdl_entry_t *e,
                                        mdl_track_t *k, mdl_step_t *st)
{
    mdl_path_t *pa = g->m.pa;
    double t0 = g->t0;

    /* nothing was queued at t0, so the latest report is the kept one's (mdl_view_restore
     * sets it, as mdl_note_report would) */
    mdl_view_restore(s, pa, &e->view, t0);
    pa->pushes += e->pushes;
    s->chunks_skipped += e->h;
    st->t_ns = t0 + e->t_ns;
    st->hw_ns = t0 + e->hw_ns;
    st->regular = e->regular;
    g->stalled = e->stalled;
    *k = e->track;
    track_shift(k, t0, s->cost_ns.drain);
    s->entry_hits++;
}
