/* mdl_replay.c - the analytical replay engine (model_engine_ops): the recursion of
 * model/MODEL.md, message by message and, for a segmented message, chunk by chunk.
 *
 * Each path keeps a FIFO ring of closed-but-unreported completion batches (slots free when
 * a batch is reported) and one open batch with its member messages; the CPU and the link
 * are single FIFO resources shared by both paths (mdl_state.h; the steps: mdl_core.h).
 * Nothing is allocated per message. The loop (replay_mode) routes each message (section 1,
 * a switch drains the old path: section 4) and posts it (post_message): a message of one
 * WR through post_w1, of one chunk through post_one_chunk, a segmented one through
 * post_chunks, whose base is chunks_run: the first chunk, the full ones, the last one,
 * each a slot wait, a trip over the CPU and the link, and a batch (section 3).
 *
 * The accelerators (mdl_accel.h, each in a file of its own that states its invariant and
 * its condition) replay a segmented message, or a run of its chunks, in fewer steps, and
 * give what chunks_run gives: the skip and the idle-path entry inside chunks_run; before
 * it, the memo (an earlier replay shifted) and the closed forms (a window of one batch:
 * mdl_serial; a saturated path: mdl_steady_walk, then mdl_bound). A steady commit leaves
 * its ring lazy and sets s->gate[k] = 0, so that every message on that path comes to
 * post_message's slow branch, which replays it by the steady walk or writes the ring first
 * (mdl_steady_fill). pred_opts_t.model_off leaves any of them off.
 *
 * The loop is compiled once per mode (open / closed, hint 0 / routed); the routed one
 * posts through a copy per path, and a run of messages of the current path's class past
 * the perturbation window goes through replay_run, with no routing (measured:
 * bench_model). */
#include <string.h>

#include "model/engine/mdl_accel.h"
#include "model/engine/mdl_memo.h"
#include "model/model.h"

_Static_assert(TRACE_F_PATH_BW == TRACE_F_PATH_LL << 1, "path flags: BW = LL << 1");

/* ---- a message of one chunk --------------------------------------------------------- */

/* post_one_chunk for a message of one WR, the common case: the slot wait without what
 * cannot happen (b1: the path's batches hold one WR, so no open batch and no timer;
 * closed: the closed loop, whose poster force-closes every message's batch, so no open
 * batch and no timer either; callers pass constants so that each case compiles to its own
 * straight line; measured 12-15% faster on kv and burst). pert as mdl_chunk_hw's
 * MDL_HW_PERT. */
static MDL_HOT void post_w1(mdl_run_t *r, const mdl_msg_t *m, const mdl_size_t *z,
                            const int b1, const int pert, const int closed)
{
    mdl_state_t *s = r->s;
    mdl_path_t *pa = m->pa;

    s->cost_ns.l1 += s->l1x_ns;
    double t0 = m->t_ns > r->cpu_free_ns ? m->t_ns : r->cpu_free_ns;
    mdl_reap_due(r, pa, t0, !b1 && !closed);
    double t = t0 > r->cpu_free_ns ? t0 : r->cpu_free_ns;
    if (pa->used >= pa->window) {
        double t_wait = t;
        while (pa->used >= pa->window) {
            double r_ns = mdl_slot_pop(r, pa, !b1);
            t = r_ns > t ? r_ns : t;
        }
        s->stalls += t > t_wait;
        t = t > r->cpu_free_ns ? t : r->cpu_free_ns;
    }
    pa->used++;
    s->cost_ns.queue += t - t0;
    /* one WR: its shares of the post and of the link time are the whole (mdl_chunk_cost) */
    mdl_cost_t cc = {z->post_ns, z->post_ns, z->ser_ns, z->ser_ns, 1};
    double hw = mdl_chunk_hw(r, pa, &cc, z, t, pert ? MDL_HW_PERT : 0);
    if (b1)
        mdl_batch_one(s, pa, hw, m);
    else if (closed)
        mdl_batch_alone(s, pa, hw, m);
    else
        mdl_batch_add(s, pa, 1, hw, m);
}

/* Post message m, of 1 < nwr <= batch WRs (one chunk; so its path's batches hold more than
 * one WR); pert as post_w1's. */
static MDL_HOT void post_one_chunk(mdl_run_t *r, const mdl_msg_t *m, const mdl_size_t *z,
                                   const int pert)
{
    mdl_state_t *s = r->s;
    mdl_path_t *pa = m->pa;
    uint32_t nwr = z->nwr;
    int stalled = 0;

    s->cost_ns.l1 += (double)nwr * s->l1x_ns;
    double t0 = m->t_ns > r->cpu_free_ns ? m->t_ns : r->cpu_free_ns;
    double t_post = mdl_slots_acquire(r, pa, nwr, t0, &stalled, 1);
    mdl_cost_t cc = {z->post_ns, z->post_share_ns, z->ser_ns, z->ser_share_ns, nwr};
    s->cost_ns.queue += t_post - t0;
    double hw = mdl_chunk_hw(r, pa, &cc, z, t_post, MDL_HW_SPLIT | (pert ? MDL_HW_PERT : 0));
    mdl_batch_add(s, pa, nwr, hw, m);
    s->stalls += (uint64_t)stalled;
}

/* ---- a segmented message, chunk by chunk (MODEL.md section 3) ------------------------ */

/* One chunk of g, of costs cc (the message's last when is_last), from t_ch on: the slot
 * wait, the link, and its batch. Fills *st (regular: adding it queued exactly one batch,
 * of its own WRs: what the skip's run counts). */
static MDL_HOT void chunk_step(mdl_run_t *r, mdl_seg_t *g, const mdl_cost_t *cc, double t_ch,
                               int is_last, mdl_step_t *st)
{
    mdl_path_t *pa = g->m.pa;

    st->t_ns = mdl_slots_acquire(r, pa, cc->nwr, t_ch, &g->stalled, 1);
    st->hw_ns = mdl_chunk_hw(r, pa, cc, g->z, st->t_ns, is_last ? MDL_HW_SPLIT | MDL_HW_PERT
                                                                : MDL_HW_PERT);
    uint64_t pushes = pa->pushes;
    mdl_batch_add(r->s, pa, cc->nwr, st->hw_ns, is_last ? &g->m : NULL);
    st->regular = pa->pushes == pushes + 1 && mdl_ring_tail(pa)->nwr == cc->nwr;
}

/* chunk_step for a full chunk (a batch of WRs) that is not its message's last, on a path
 * with no open batch: its batch closes as it is added, so the step is the slot wait with
 * no timer to fire, the link, and one push (measured: bench_model phased). */
static MDL_HOT void chunk_full(mdl_run_t *r, mdl_seg_t *g, double t_ch, mdl_step_t *st)
{
    mdl_path_t *pa = g->m.pa;
    const mdl_cost_t *cc = g->full;

    st->t_ns = mdl_slots_acquire(r, pa, cc->nwr, t_ch, &g->stalled, 0);
    st->hw_ns = mdl_chunk_hw(r, pa, cc, g->z, st->t_ns, MDL_HW_PERT);
    mdl_ring_push(pa, st->hw_ns, cc->nwr);
    mdl_note_report(pa, st->hw_ns + pa->event_ns);
    st->regular = 1; /* its one push */
}

/* The first chunk of g (full: g->nwr > batch), which may meet an open batch and its timer;
 * notes when the open batch it met closed (with the first push: pops come before pushes in
 * a chunk), unless a forced close was popped at once. */
static MDL_HOT void chunk_first(mdl_run_t *r, mdl_seg_t *g, mdl_step_t *st)
{
    mdl_path_t *pa = g->m.pa;
    int had_open = pa->open_n > 0;

    chunk_step(r, g, g->full, g->t0, 0, st);
    g->queue_ns = st->t_ns - g->t0;
    r->s->cost_ns.queue += g->queue_ns;
    uint64_t pushed = pa->pushes - g->push0;
    g->entry_ok = !had_open || pushed <= pa->count;
    if (had_open && g->entry_ok)
        g->entry_close = pa->ring[(pa->head + pa->count - pushed) & pa->mask].close_ns;
}

/* The chunks of g (planned; its reaping at g->t0 done): the first and the last through
 * chunk_step, the full ones between through chunk_full (no open batch: checked, not
 * assumed; with the skip off, chunk_step). With the skip on, each full chunk that leaves
 * more than one is tracked and the repeating ones jumped (mdl_skip.c), and on an idle path
 * the start an earlier message kept is applied, or this one's kept (mdl_entry.c). Fills
 * g's hw, t_last, stalled and entry_close / entry_ok. Not inlined: the caller's memo
 * bookkeeping would crowd this loop's registers (measured). */
static MDL_COLD void chunks_run(mdl_state_t *s, mdl_seg_t *g)
{
    mdl_path_t *pa = g->m.pa;
    uint64_t nwr = g->nwr, chunks = g->nfull + 1;
    int skip = !(s->off & MODEL_ACCEL_SKIP);
    mdl_step_t st;
    mdl_track_t track = {0};
    /* e stays set while this message's start is being kept */
    mdl_entry_t *e = !(s->off & MODEL_ACCEL_ENTRY) ? mdl_entry_of(s, g) : NULL;
    /* the chunks' steps on the times held apart; the skip and the entry read them in s */
    mdl_run_t run = mdl_run_take(s);

    if (e && e->valid && nwr > (uint64_t)e->h * pa->batch) { /* its h full chunks, then more */
        mdl_entry_apply(s, g, e, &track, &st);
        g->entry_ok = 1;
        nwr -= (uint64_t)e->h * pa->batch;
        if (nwr > pa->batch)
            mdl_skip_track(s, g, &track, &st, &nwr);
        mdl_run_get(&run);
        e = NULL;
    } else {
        if (e && (e->valid || chunks <= e->failed))
            e = NULL;
        chunk_first(&run, g, &st);
        nwr -= pa->batch;
        if (skip && nwr > pa->batch) {
            mdl_run_put(&run);
            if (e && !mdl_entry_snap(s, g, e, 1, &st, &track))
                e = NULL;
            mdl_skip_track(s, g, &track, &st, &nwr); /* cannot jump yet */
            mdl_run_get(&run);
        }
    }
    while (nwr > pa->batch) {
        double t_ch = st.t_ns > run.cpu_free_ns ? st.t_ns : run.cpu_free_ns;
        if (skip && pa->open_n == 0)
            chunk_full(&run, g, t_ch, &st);
        else
            chunk_step(&run, g, g->full, t_ch, 0, &st);
        nwr -= pa->batch;
        if (skip && nwr > pa->batch) {
            mdl_run_put(&run);
            /* while the start is kept, no chunk has been jumped: g->nwr - nwr full chunks */
            if (__builtin_expect(e != NULL, 0) &&
                !mdl_entry_snap(s, g, e, (uint32_t)((g->nwr - nwr) / pa->batch), &st, &track))
                e = NULL;
            if (mdl_skip_track(s, g, &track, &st, &nwr) && e) {
                e->valid = 1; /* kept: the skip jumped after the h-th chunk */
                e = NULL;
            }
            mdl_run_get(&run);
        }
    }
    if (e)
        e->failed = chunks > e->failed ? chunks : e->failed;
    /* the last chunk (planned: nwr is its WRs now) */
    double t_ch = st.t_ns > run.cpu_free_ns ? st.t_ns : run.cpu_free_ns;
    chunk_step(&run, g, &g->last, t_ch, 1, &st);
    mdl_run_put(&run);
    s->stalls += (uint64_t)g->stalled;
    g->hw = st.hw_ns;
    g->t_last = st.t_ns;
}

/* The closed forms for g (planned) from g->t0 on: a window of one batch (mdl_serial), a
 * saturated path (the steady walk, then mdl_bound); returns whether one applied. Kept apart
 * from chunks_run, whose frame and setup these messages do not need (measured:
 * bench_model phased). */
static MDL_COLD int chunks_closed(mdl_state_t *s, mdl_seg_t *g)
{
    if (mdl_serial_may(g->m.pa, g->nfull))
        return !(s->off & MODEL_ACCEL_SERIAL) && mdl_serial(s, g);
    if (s->off & MODEL_ACCEL_BOUND)
        return 0;
    return mdl_bound_may(s, g) &&
           ((!(s->off & MODEL_ACCEL_STEADY) && mdl_steady_walk(s, g, 0)) || mdl_bound(s, g));
}

/* The serial closed form for g from g->t0 on, where it is on and mdl_serial_may holds:
 * planned here. Returns 0 where it does not apply. */
static MDL_HOT int serial_try(mdl_state_t *s, mdl_seg_t *g)
{
    if ((s->off & MODEL_ACCEL_SERIAL) || !mdl_serial_may(g->m.pa, 1))
        return 0;
    mdl_chunks_plan(s, g);
    return mdl_serial(s, g);
}

/* The memo for g: applies a kept replay (sets *applied), or returns the slot to keep this
 * message's replay in (NULL: none). A size is looked up and kept from its second message in
 * a row in its slot on, so that traces of ever-different sizes pay one comparison per
 * message. */
static MDL_HOT mdl_memo_t *memo_lookup(mdl_state_t *s, mdl_seg_t *g, int *applied)
{
    mdl_memo_t *slot = mdl_memo_slot(s, g->m.k, g->m.size, g->t0), *keep = NULL;

    *applied = 0;
    if (slot->seen == g->m.size) {
        if (mdl_memo_matches(s, slot, &g->m, g->t0)) {
            mdl_memo_apply(s, g, slot);
            *applied = 1;
            return NULL;
        }
        keep = slot;
    }
    slot->seen = g->m.size;
    return keep;
}

/* A segmented message's context for m (size terms z): what it is; its plan and record are
 * set as its replay goes (not zeroed: measured, 31 instructions a segmented message,
 * callgrind, bench_model allreduce). */
static MDL_HOT void seg_init(mdl_seg_t *g, const mdl_msg_t *m, const mdl_size_t *z)
{
    g->m.pa = m->pa; /* field by field: a struct copy here made the compiler build the loop's
                      * message in vector registers (measured: callgrind, bench_model) */
    g->m.k = m->k;
    g->m.idx = m->idx;
    g->m.size = m->size;
    g->m.t_ns = m->t_ns;
    g->m.tref_ns = m->tref_ns;
    g->z = z;
    g->nwr = z->nwr;
}

/* post_chunks's replay of g where neither the serial form nor the memo applied: the other
 * closed forms, or chunk by chunk; kept in slot (NULL: none) when its key fits a view. Apart
 * from post_chunks, so that a memo hit does not set up this frame, which holds the key
 * (measured: callgrind, bench_model allreduce). */
static MDL_COLD void chunks_replay(mdl_state_t *s, mdl_seg_t *g, mdl_memo_t *slot)
{
    mdl_view_t key;

    if (slot && !mdl_view_key(s, g->m.pa, g->t0, &key))
        slot = NULL;
    g->queue_ns = 0;
    g->d0 = s->cost_ns.drain;
    g->sk0 = s->chunks_skipped;
    g->push0 = g->m.pa->pushes;
    mdl_chunks_plan(s, g);
    if (!chunks_closed(s, g))
        chunks_run(s, g);
    if (slot && g->entry_ok) {
        if (s->steady[g->m.k].lazy) /* a steady commit: the memo reads the ring it left */
            mdl_steady_fill(s, g->m.k);
        mdl_memo_keep(s, g, &key, slot);
    }
}

/* Post segmented message g (nwr > batch WRs; seg_init): the serial closed form, the memo,
 * or chunks_replay; the replay then kept for the memo. */
static MDL_COLD void post_chunks(mdl_state_t *s, mdl_seg_t *g)
{
    mdl_memo_t *slot = NULL;

    s->cost_ns.l1 += (double)(int64_t)g->nwr * s->l1x_ns;
    g->t0 = g->m.t_ns > s->cpu_free_ns ? g->m.t_ns : s->cpu_free_ns;
    g->stalled = 0;
    g->entry_ok = 0;
    g->entry_close = 0;
    /* the first chunk's reaping (mdl_slots_acquire's first steps), here so that the memo
     * sees the pipeline it leaves */
    mdl_run_t run = mdl_run_take(s);
    mdl_reap_due(&run, g->m.pa, g->t0, 1);
    mdl_run_put(&run);
    /* a window of one batch: the closed form before the memo, as closed_next's (a formula
     * is cheaper than a lookup; measured: bench_model phased at hint 4K) */
    if (serial_try(s, g))
        return;
    if (!(s->off & MODEL_ACCEL_MEMO)) {
        int applied;
        slot = memo_lookup(s, g, &applied);
        if (applied)
            return;
    }
    chunks_replay(s, g, slot);
}

/* Segmented message g (seg_init) in closed form before post_chunks and its memo (a formula
 * is cheaper than a lookup, and post_chunks's frame is not needed; measured: bench_model
 * phased), where nothing on its path is due by then: lazy, the steady walk on the ring the
 * previous message left lazy; else the serial form on a window of one batch. Returns 0,
 * with nothing changed, where it does not apply (a lazy ring must then be written). */
static MDL_HOT int closed_next(mdl_state_t *s, mdl_seg_t *g, const int lazy)
{
    g->t0 = g->m.t_ns > s->cpu_free_ns ? g->m.t_ns : s->cpu_free_ns;
    if (!(g->m.pa->head_r_ns > g->t0 && g->m.pa->timer_r_ns > g->t0))
        return 0;
    if (lazy) {
        mdl_chunks_plan(s, g);
        if (!mdl_bound_may(s, g) || !mdl_steady_walk(s, g, 1))
            return 0;
    } else if (!serial_try(s, g)) {
        return 0;
    }
    s->cost_ns.l1 += (double)g->z->nwr * s->l1x_ns; /* post_chunks's first step */
    return 1;
}

/* A message above s->seg_min[k] (segmented, no size cache), or any message while its
 * path's ring is lazy (s->gate[k] = 0). Returns 1 when it was posted. */
static MDL_HOT int post_gated(mdl_state_t *s, const mdl_msg_t *m)
{
    int k = m->k;

    if (m->size > s->seg_min[k]) {
        mdl_size_t zs;
        mdl_seg_t g;
        mdl_size_seg(s, k, m->size, &zs);
        seg_init(&g, m, &zs);
        if (s->steady[k].lazy) {
            if (closed_next(s, &g, 1))
                return 1;
            mdl_steady_fill(s, k);
        } else if (m->pa->window < 2 * m->pa->batch && closed_next(s, &g, 0)) {
            return 1;
        }
        post_chunks(s, &g);
        return 1;
    }
    mdl_steady_fill(s, k); /* lazy: written before anything else reads it */
    return 0;
}

/* Post message msg: one WR, one chunk, or chunks; pert and closed as post_w1's. By value:
 * the loop's message then stays in registers (measured: bench_model cycle at hint 4K, 10%
 * faster than through a pointer). */
static MDL_HOT void post_message(mdl_run_t *r, const mdl_msg_t msg, const int pert,
                                 const int closed)
{
    mdl_state_t *s = r->s;
    const mdl_msg_t *m = &msg;
    int k = m->k;

    if (__builtin_expect(m->size >= s->gate[k], 0)) { /* through s (mdl_run_t) */
        mdl_run_put(r);
        int posted = post_gated(s, m);
        mdl_run_get(r);
        if (posted)
            return;
    }
    const mdl_size_t *z = mdl_size_of(s, k, m->size);
    uint32_t nwr = z->nwr;

    if (nwr == 1) {
        if (m->pa->batch == 1)
            post_w1(r, m, z, 1, pert, closed);
        else
            post_w1(r, m, z, 0, pert, closed);
    } else if (nwr <= m->pa->batch) {
        post_one_chunk(r, m, z, pert);
    } else {
        mdl_seg_t g;
        seg_init(&g, m, z);
        mdl_run_put(r);
        post_chunks(s, &g);
        mdl_run_get(r);
    }
}

/* ---- routing and the loop (MODEL.md sections 1, 4, 7) --------------------------------- */

/* Hysteresis policy (prules_route): which path a message of size bytes takes (0 LL, 1 BW);
 * performs the drain of a switch (moves *t_ns to its end). Not called at hint 0
 * (replay_mode's one loop), so the class is prules_class's, size > hint. */
static MDL_HOT int route(mdl_run_t *r, uint64_t size, double *t_ns)
{
    mdl_state_t *s = r->s;
    int cls = size > s->hint, from = s->route.cur;

    if (prules_route(&s->route, cls)) {
        mdl_path_t *old = &s->path[from];
        double t0 = *t_ns > r->cpu_free_ns ? *t_ns : r->cpu_free_ns;
        mdl_batch_force_close(s, old);
        double done = (t0 > old->last_r_ns ? t0 : old->last_r_ns) + s->drain_fixed_ns;
        s->switches++;
        s->drain_us_total += (done - *t_ns) * 1e-3;
        s->cost_ns.drain += done - t0;
        s->pert_from_ns = done;
        s->pert_until_ns = done + s->pert_window_ns;
        *t_ns = done;
    }
    return s->route.cur;
}

/* When message i is ready under mode (a constant per caller): its trace post time (open),
 * or the previous message's report plus the trace's think time (closed). recs and t0 are
 * s->tr's records and first post time, as the loop holds them: read through s, they were
 * loaded again after every store the replay makes to its state. */
static MDL_HOT hs_status_t ready_time(mdl_state_t *s, const trace_rec_t *recs, uint64_t t0,
                                      size_t i, const pred_mode_t mode, double *ready_ns)
{
    if (mode == PRED_OPEN) {
        *ready_ns = (double)(recs[i].t_post_ns - t0);
        return HS_OK;
    }
    if (i == 0) {
        *ready_ns = 0;
        return HS_OK;
    }
    const trace_rec_t *prev = &recs[i - 1];
    if (prev->t_done_ns == TRACE_TIME_UNKNOWN) {
        hs_log_error("closed-loop replay needs completion times: record %zu has none "
                     "(use --mode open)", i - 1);
        return HS_ERR_INVALID;
    }
    *ready_ns = s->path[s->prev_path].last_r_ns + trace_think_ns(s->tr, i);
    return HS_OK;
}

/* Messages from i on while each one's class is K (a constant: the current path, so no
 * switch), all ready after the perturbation window: no routing, no perturbation test, and
 * K's fields at fixed offsets (measured: callgrind at hint 4K, phased 25-26% fewer
 * instructions a message). Under mode, as replay_mode. Returns the index of the first
 * message not replayed (*st set on an error). */
static MDL_HOT size_t replay_run(mdl_run_t *run, const pred_mode_t mode, const int K, size_t i,
                                 hs_status_t *st)
{
    mdl_state_t *s = run->s;
    const trace_rec_t *recs = s->tr->recs;
    const uint64_t t0 = s->t0_ns;
    size_t n = s->tr->n, i0 = i;
    uint8_t *restrict pathv = s->pathv;
    uint64_t hint = s->hint;
    mdl_path_t *pa = &s->path[K];

    for (; i < n; i++) {
        const trace_rec_t *r = &recs[i];
        double ready;
        if ((r->size_bytes > hint) != K)
            break;
        if ((*st = ready_time(s, recs, t0, i, mode, &ready)) != HS_OK)
            break;
        pathv[i] = (uint8_t)(TRACE_F_PATH_LL << K);
        mdl_msg_t m = {pa, K, i, r->size_bytes, ready, ready};
        post_message(run, m, 0, mode == PRED_CLOSED);
        if (mode == PRED_CLOSED)
            mdl_batch_force_close(s, pa); /* prev_path is K already */
    }
    if (i != i0)
        s->route.run = 0; /* as route on a message of the current class */
    return i;
}

/* The replay of every message under one mode (a constant per call, so that each mode
 * compiles to its own loop). one: every message takes the BW path (hint 0, a constant):
 * no routing, no switch, so no perturbation window (measured: bench_model's hint 0 rows). */
static MDL_HOT hs_status_t replay_mode(mdl_state_t *s, const pred_mode_t mode, const int one)
{
    mdl_run_t run = mdl_run_take(s);
    hs_status_t st = HS_OK;
    const trace_rec_t *recs = s->tr->recs;
    const uint64_t t0 = s->t0_ns;
    size_t n = s->tr->n;
    /* restrict: a path byte written per message aliases nothing the replay reads */
    uint8_t *restrict pathv = s->pathv;

    if (one)
        memset(pathv, TRACE_F_PATH_BW, n);
    for (size_t i = 0; i < n; i++) {
        const trace_rec_t *r = &recs[i];
        double ready, t;
        if ((st = ready_time(s, recs, t0, i, mode, &ready)) != HS_OK)
            break;
        t = ready;
        int k = one ? 1 : route(&run, r->size_bytes, &t);
        mdl_path_t *pa = &s->path[k];
        if (!one)
            pathv[i] = (uint8_t)(TRACE_F_PATH_LL << k); /* BW = LL << 1 (trace.h) */
        if (one) {
            mdl_msg_t m = {&s->path[1], 1, i, r->size_bytes, t, ready};
            post_message(&run, m, 0, mode == PRED_CLOSED);
        } else if (k) { /* each path its own copy: its branches predicted apart */
            mdl_msg_t m = {&s->path[1], 1, i, r->size_bytes, t, ready};
            post_message(&run, m, 1, mode == PRED_CLOSED);
        } else {
            mdl_msg_t m = {&s->path[0], 0, i, r->size_bytes, t, ready};
            post_message(&run, m, 1, mode == PRED_CLOSED);
        }
        if (mode == PRED_CLOSED) {
            mdl_batch_force_close(s, pa);
            s->prev_path = k;
        }
        if (!one && ready >= s->pert_until_ns) {
            /* past the perturbation window (every later message is: ready times do not
             * decrease, pred_check_trace): the rest of the run on path k */
            size_t j = k ? replay_run(&run, mode, 1, i + 1, &st)
                         : replay_run(&run, mode, 0, i + 1, &st);
            if (st != HS_OK)
                break;
            i = j - 1;
        }
    }
    mdl_run_put(&run);
    return st;
}

/* Each mode's loop is a function of its own, so that one's code does not move with
 * another's (measured: bench_model wide at hint 0, 13% slower when replay_run's loops were
 * added to the one function holding all four). */
static MDL_COLD hs_status_t replay_open_one(mdl_state_t *s)
{
    return replay_mode(s, PRED_OPEN, 1);
}

static MDL_COLD hs_status_t replay_closed_one(mdl_state_t *s)
{
    return replay_mode(s, PRED_CLOSED, 1);
}

static MDL_COLD hs_status_t replay_open_routed(mdl_state_t *s)
{
    return replay_mode(s, PRED_OPEN, 0);
}

static MDL_COLD hs_status_t replay_closed_routed(mdl_state_t *s)
{
    return replay_mode(s, PRED_CLOSED, 0);
}

static hs_status_t replay_loop(mdl_state_t *s)
{
    /* the first message is ready at time 0 (open loop: times are relative to its post)
     * on an idle host, and takes its own class's path with nothing to switch from */
    s->raw->t_first_post_us = 0;
    s->route.cur = prules_class(s->hint, s->tr->recs[0].size_bytes);
    if (s->hint == 0)
        return s->mode == PRED_OPEN ? replay_open_one(s) : replay_closed_one(s);
    return s->mode == PRED_OPEN ? replay_open_routed(s) : replay_closed_routed(s);
}

static hs_status_t model_replay(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                                uint64_t hint_bytes, pred_raw_t *raw)
{
    mdl_state_t s;
    hs_status_t st;

    if (tr->n == 0) {
        hs_log_error("the trace has no records: nothing to replay");
        return HS_ERR_INVALID;
    }
    st = mdl_state_init(&s, tr, p, o, hint_bytes, raw);
    if (st != HS_OK)
        return st;
    st = replay_loop(&s);
    if (st != HS_OK)
        goto release_state;
    mdl_batch_force_close(&s, &s.path[0]);
    mdl_batch_force_close(&s, &s.path[1]);
    st = mdl_state_finish(&s);
release_state:
    mdl_state_release(&s);
    return st;
}

const pred_engine_ops_t model_engine_ops = {.name = "model", .replay = model_replay};
