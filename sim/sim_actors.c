/* sim_actors.c - the actors of one simulated replay (see sim_actors.h and README.md).
 *
 * The semantics are MODEL.md's, executed in simulated time instead of solved as a
 * recursion: the poster sleeps until each post time and only learns a completion when the
 * completion actor has seen the WR arrive; the link/wire time of every chunk is a SimGrid
 * communication over the platform, so several senders sharing the receiver's switch port
 * slow each other down (what the model cannot do). Known future values (a batch closed by
 * count at the last member's hardware completion, its report time R = close + event cost)
 * are computed when the last member arrives, as the model does.
 */
#include "sim/sim_actors.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/comm.h>
#include <simgrid/semaphore.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_platform.h"

typedef struct {
    size_t msg;
    uint32_t nwr;
    int path;
    uint8_t last, split, perturbed, arrived;
    uint64_t bytes;
    double nic_s;      /* earliest link start: post + cost / c + dma */
    double dma_s;
    double link_wait_s; /* link queueing in front of it: start - nic (not perturbed) */
    double cpu_done_s; /* poster CPU free after the chunk (pipelined multi-WR chunks) */
    double t_post_s, tref_s;
} sim_chunk_t;

typedef struct {
    double close_s;
    uint32_t nwr;
} sim_batch_t;

typedef struct {
    size_t idx;
    double tref_s, hw_s;
} sim_member_t;

typedef struct sim_flow sim_flow_t;

typedef struct {
    sim_flow_t *flow;
    const sim_path_cfg_t *pc;
    sim_batch_t *ring; /* closed, unreported batches (FIFO) */
    uint32_t cap, head, count, used;
    uint32_t open_n, nmem;
    double h0_s, h1_s, last_r_s;
    sim_member_t *mem;
    uint64_t posted, arrived; /* chunks */
} sim_path_t;

struct sim_flow {
    sim_world_t *world;
    unsigned id;
    sim_path_t path[SIM_NPATHS];
    sg_host_t sender;
    sg_mailbox_t mb;
    char mb_name[32];
    sim_chunk_t *q; /* chunks in flight, FIFO: [arr_head, nic_next, tail) */
    uint64_t qcap, tail, nic_next, arr_head;
    int nic_idle, poster_blocked;
    sim_path_t *wait_ph; /* what the blocked poster waits for (poster_waiting) */
    int wait_batch;
    double wait_until_s; /* when it wakes by itself: its path's timer close, or HUGE_VAL */
    sg_sem_t nic_sem, poster_sem;
    double cpu_free_s, link_free_s, s_per_byte;
    double pert_from_s, pert_until_s;
    sim_flow_out_t *out;
};

struct sim_world {
    sim_run_args_t args;
    sim_cfg_t cfg;
    sim_flow_t *flows;
    sg_host_t receiver;
    uint64_t t0_ns;
};

static double now_s(void)
{
    return simgrid_get_clock();
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

/* When the open batch of ph closes by its moderation timer (h0 + period), HUGE_VAL when it
 * has none: no timer, or no open batch. */
static double timer_close_s(const sim_path_t *ph)
{
    return ph->open_n && ph->pc->period_s > 0 ? ph->h0_s + ph->pc->period_s : HUGE_VAL;
}

/* Whether the poster still waits: for every chunk posted on its path to arrive, or (batch)
 * for that or a closed batch on the path's ring, which the open batch's timer gives at its
 * close: a batch opened since the poster blocked wakes it, to sleep until that close
 * instead. Only arrivals and closes change any of this, and each one asks before a wake: a
 * wake the poster would only answer by blocking again costs two context switches of the
 * simulation (bench_sim, hint 2K: about two such wakes a message). */
static int poster_waiting(const sim_flow_t *f)
{
    const sim_path_t *ph = f->wait_ph;

    if (f->wait_batch && timer_close_s(ph) < f->wait_until_s)
        return 0;
    return ph->arrived < ph->posted && !(f->wait_batch && ph->count);
}

static void poster_wake(sim_flow_t *f)
{
    if (f->poster_blocked && !poster_waiting(f)) {
        f->poster_blocked = 0;
        sg_sem_release(f->poster_sem);
    }
}

static void batch_close(sim_path_t *ph, double close_s);

/* The moderation timer (MODEL.md section 3): the open batch of ph closes at h0 + period on
 * its own. No actor fires it: whoever looks at the path next closes it, at that time (the
 * close time, not the time of the look): a chunk arriving after it (batch_add) and the
 * poster (slots_acquire, poster_block), which sleeps until it when it waits for a batch.
 * An actor per path cost a wake, a sleep and a block per batch (bench_sim). */
static void timer_fire(sim_path_t *ph)
{
    double close = timer_close_s(ph);

    if (close <= now_s())
        batch_close(ph, close);
}

/* Block until the condition poster_waiting describes no longer holds (batch: as its), or,
 * waiting for a batch, until the open batch's timer closes it. */
static void poster_block(sim_path_t *ph, int batch)
{
    sim_flow_t *f = ph->flow;
    double until = batch ? timer_close_s(ph) : HUGE_VAL;

    f->wait_ph = ph;
    f->wait_batch = batch;
    f->wait_until_s = until;
    f->poster_blocked = 1;
    if (until == HUGE_VAL)
        sg_sem_acquire(f->poster_sem);
    else if (sg_sem_acquire_timeout(f->poster_sem, until - now_s()) != 0)
        f->poster_blocked = 0; /* timed out: no wake is owed (one given now is taken and
                                * answered by the loop around this call) */
    if (batch)
        timer_fire(ph);
}

/* ---- completion batches (MODEL.md section 3) ------------------------------------- */

/* Close the open batch at close_s: report its members at R = close + event cost. */
static void batch_close(sim_path_t *ph, double close_s)
{
    sim_flow_out_t *o = ph->flow->out;
    double r = close_s + ph->pc->event_s;
    uint32_t j;

    if (ph->open_n == 0)
        return;
    for (j = 0; j < ph->nmem; j++) {
        const sim_member_t *m = &ph->mem[j];
        o->lat_us[m->idx] = (float)((r - m->tref_s) * 1e6);
        o->lat_sum_s += r - m->tref_s;
        o->coalesce_s += close_s > m->hw_s ? close_s - m->hw_s : 0;
        o->nseen++;
    }
    ph->ring[(ph->head + ph->count) % ph->cap] = (sim_batch_t){close_s, ph->open_n};
    ph->count++;
    ph->nmem = ph->open_n = 0;
    ph->last_r_s = dmax(ph->last_r_s, r);
    o->t_last_done_s = dmax(o->t_last_done_s, r);
    poster_wake(ph->flow);
}

static void batch_add(sim_path_t *ph, const sim_chunk_t *c, double hw)
{
    const sim_path_cfg_t *pc = ph->pc;
    double close = timer_close_s(ph);

    if (hw > close)
        batch_close(ph, close);
    if (ph->open_n == 0)
        ph->h0_s = ph->h1_s = hw;
    else if (hw > ph->h1_s)
        ph->h1_s = hw;
    ph->open_n += c->nwr;
    if (c->last)
        ph->mem[ph->nmem++] = (sim_member_t){c->msg, c->tref_s, hw};
    if (ph->open_n >= pc->batch)
        batch_close(ph, ph->h1_s);
}

/* ---- completion side: chunks arrive from the wire --------------------------------- */

/* Hardware completion of a chunk that just arrived: wire end plus the per-path fixed cost,
 * the latency-factor excess, the split cost, the perturbation (MODEL.md 3, 4: the factor
 * applies to the chunk's own latency, without the link queueing in front of it). */
static double chunk_hw(sim_flow_t *f, const sim_chunk_t *c)
{
    const sim_cfg_t *cfg = &f->world->cfg;
    const sim_path_cfg_t *pc = &cfg->path[c->path];
    uint64_t size = f->world->args.tr->recs[c->msg].size_bytes;
    double hw = now_s() + pc->fixed_s + cfg->wire2_s * (prules_lat_factor(cfg->p, size) - 1);

    if (c->split)
        hw += pc->split_s;
    if (c->perturbed) {
        double extra = (cfg->perturb_factor - 1) * (hw - c->t_post_s - c->link_wait_s);
        hw += extra;
        f->out->drain_s += extra;
    }
    return hw;
}

static void cq_main(int argc, char **argv)
{
    sim_flow_t *f = sg_actor_self_get_data();

    (void)argc;
    (void)argv;
    sg_mailbox_set_receiver(f->mb_name);
    for (;;) {
        sim_chunk_t *c = sg_mailbox_get(f->mb);
        c->arrived = 1;
        /* RC completes in order: a chunk overtaken on a shared port waits for its elders */
        while (f->arr_head < f->nic_next && f->q[f->arr_head % f->qcap].arrived) {
            sim_chunk_t *x = &f->q[f->arr_head % f->qcap];
            sim_path_t *ph = &f->path[x->path];
            batch_add(ph, x, chunk_hw(f, x));
            ph->arrived++;
            f->arr_head++;
        }
        poster_wake(f);
    }
}

/* ---- NIC send engine: one FIFO link for both paths (MODEL.md section 2) ---------- */

static void nic_main(int argc, char **argv)
{
    sim_flow_t *f = sg_actor_self_get_data();
    const sim_cfg_t *cfg = &f->world->cfg;

    (void)argc;
    (void)argv;
    for (;;) {
        sim_chunk_t *c;
        double spb, wire, ser, start, end;
        uint64_t size;

        if (f->nic_next == f->tail) {
            f->nic_idle = 1;
            sg_sem_acquire(f->nic_sem);
            continue;
        }
        c = &f->q[f->nic_next % f->qcap];
        size = f->world->args.tr->recs[c->msg].size_bytes;
        spb = prules_per_byte(cfg->p, f->s_per_byte, size);
        wire = (double)c->bytes * spb;
        ser = wire + prules_npkt(cfg->mtu_bytes, cfg->mtu_shift, c->bytes) * cfg->pkt_s +
              c->nwr * cfg->wr_s;
        start = dmax(c->nic_s, f->link_free_s);
        c->link_wait_s = start - c->nic_s;
        end = start + ser;
        if (c->nwr > 1)
            end = dmax(end, c->cpu_done_s + c->dma_s + ser / c->nwr);
        f->link_free_s = end;
        if (end - wire > now_s())
            sg_actor_sleep_until(end - wire);
        f->nic_next++;
        /* the wire: bytes scaled by the size's bandwidth factor so the route's rate applies */
        sg_comm_detach(sg_mailbox_put_init(f->mb, c, (long)(wire / f->s_per_byte + 0.5)), NULL);
    }
}

static void nic_kick(sim_flow_t *f)
{
    if (f->nic_idle) {
        f->nic_idle = 0;
        sg_sem_release(f->nic_sem);
    }
}

/* ---- poster ------------------------------------------------------------------------ */

static void sleep_to(double t)
{
    if (t > now_s())
        sg_actor_sleep_until(t);
}

/* Pop the oldest closed batch: its slots free and its event costs the CPU. */
static double batch_pop(sim_path_t *ph)
{
    sim_flow_t *f = ph->flow;
    const sim_batch_t *b = &ph->ring[ph->head];
    double r = b->close_s + ph->pc->event_s;

    f->cpu_free_s = dmax(f->cpu_free_s, b->close_s) + ph->pc->event_s;
    ph->used -= b->nwr;
    ph->head = (ph->head + 1) % ph->cap;
    ph->count--;
    return r;
}

/* The poster needs the open batch closed: wait until every posted chunk of the path has
 * arrived, then the timer ends it if there is one, else the poster polls (h1). */
static void batch_force_close(sim_path_t *ph)
{
    while (ph->arrived < ph->posted)
        poster_block(ph, 0);
    if (ph->open_n)
        batch_close(ph, ph->pc->period_s > 0 ? ph->h0_s + ph->pc->period_s : ph->h1_s);
}

/* Wait until nwr slots are free on ph at or after t; returns the time they are. */
static double slots_acquire(sim_path_t *ph, uint32_t nwr, double t, int *stalled)
{
    sim_flow_t *f = ph->flow;

    sleep_to(t); /* everything that completes by t is known now */
    timer_fire(ph);
    while (ph->count && ph->ring[ph->head].close_s + ph->pc->event_s <= t)
        batch_pop(ph);
    t = dmax(t, f->cpu_free_s);
    while (ph->used + nwr > ph->pc->window) {
        double r;
        /* the model closes in-flight chunks at post time: wait for them to arrive */
        while (!ph->count && ph->arrived < ph->posted)
            poster_block(ph, 1);
        if (!ph->count)
            batch_force_close(ph);
        r = batch_pop(ph);
        if (r > t) {
            t = r;
            *stalled = 1;
        }
    }
    t = dmax(t, f->cpu_free_s);
    ph->used += nwr;
    return t;
}

/* Post one chunk at its t_post_s; hands it to the NIC. want: what the poster decides (msg,
 * nwr, path, last, split, bytes, t_post_s, tref_s); the rest is derived here. */
static void chunk_post(sim_flow_t *f, const sim_chunk_t *want)
{
    const sim_cfg_t *cfg = &f->world->cfg;
    const sim_path_cfg_t *pc = &cfg->path[want->path];
    double cost = want->nwr * (cfg->post_s + cfg->l1x_s) + cfg->doorbell_s;
    sim_chunk_t *ch = &f->q[f->tail % f->qcap];

    *ch = *want;
    ch->dma_s = f->world->args.tr->recs[ch->msg].size_bytes <= pc->inline_bytes ? 0
                                                                               : cfg->dma_s;
    ch->cpu_done_s = ch->t_post_s + cost;
    ch->nic_s = ch->t_post_s + cost / ch->nwr + ch->dma_s;
    ch->perturbed = (uint8_t)(ch->t_post_s >= f->pert_from_s && ch->t_post_s < f->pert_until_s);
    f->cpu_free_s = ch->cpu_done_s;
    f->tail++;
    f->path[ch->path].posted++;
    nic_kick(f);
}

/* Post message i on path p from t on, in chunks at batch boundaries (MODEL.md 3). */
static void post_message(sim_flow_t *f, int p, size_t i, double t, double tref)
{
    sim_path_t *ph = &f->path[p];
    const sim_path_cfg_t *pc = ph->pc;
    uint64_t size = f->world->args.tr->recs[i].size_bytes, left = size;
    uint64_t nwr = prules_nwr(pc->seg_bytes, pc->seg_shift, size);
    int stalled = 0, first = 1, only = nwr == 1;

    f->out->l1_s += (double)nwr * f->world->cfg.l1x_s;
    while (nwr > 0) {
        uint32_t c = nwr < pc->batch ? (uint32_t)nwr : pc->batch;
        uint64_t bytes = pc->seg_bytes && nwr > c ? (uint64_t)c * pc->seg_bytes : left;
        double t0 = dmax(t, f->cpu_free_s);
        double t_post = slots_acquire(ph, c, t0, &stalled);
        if (first)
            f->out->queue_s += t_post - t0;
        nwr -= c;
        left -= bytes;
        chunk_post(f, &(sim_chunk_t){.msg = i, .nwr = c, .path = p, .last = nwr == 0,
                                     .split = nwr == 0 && !only, .bytes = bytes,
                                     .t_post_s = t_post, .tref_s = tref});
        first = 0;
        t = t_post;
    }
    f->out->sq_full_stalls += (uint64_t)stalled;
    f->out->path[i] = p == SIM_LL ? TRACE_F_PATH_LL : TRACE_F_PATH_BW;
}

/* Switch from path old before a message ready at *t: drain, fixed cost, perturbation. */
static void poster_drain(sim_flow_t *f, int old, double *t)
{
    const sim_cfg_t *cfg = &f->world->cfg;
    sim_path_t *ph = &f->path[old];
    double t0 = dmax(*t, f->cpu_free_s), done;

    sleep_to(t0);
    batch_force_close(ph);
    done = dmax(t0, ph->last_r_s) + cfg->drain_fixed_s;
    f->out->switches++;
    f->out->drain_total_s += done - *t;
    f->out->drain_s += done - t0;
    f->pert_from_s = done;
    f->pert_until_s = done + cfg->perturb_window_s;
    *t = done;
}

static double ready_time(sim_flow_t *f, size_t i, int prev_path)
{
    const trace_t *tr = f->world->args.tr;
    const trace_rec_t *r = &tr->recs[i];

    if (f->world->args.mode == PRED_OPEN)
        return r->t_post_ns > f->world->t0_ns ? (double)(r->t_post_ns - f->world->t0_ns) * 1e-9 : 0;
    if (i == 0)
        return 0;
    return f->path[prev_path].last_r_s + trace_think_ns(tr, i) * 1e-9;
}

static void poster_main(int argc, char **argv)
{
    sim_flow_t *f = sg_actor_self_get_data();
    const sim_run_args_t *a = &f->world->args;
    prules_router_t router;
    int prev_path = 0;
    size_t i;

    (void)argc;
    (void)argv;
    prules_router_init(&router, f->world->cfg.hysteresis);
    for (i = 0; i < a->tr->n; i++) {
        int old = router.cur, p;
        int cls = prules_class(f->world->cfg.hint_bytes, a->tr->recs[i].size_bytes);
        double ready = ready_time(f, i, prev_path), t = ready;
        if (prules_route(&router, cls))
            poster_drain(f, old, &t);
        p = router.cur;
        if (i == 0)
            f->out->t_first_post_s = dmax(t, f->cpu_free_s);
        post_message(f, p, i, t, ready);
        if (a->mode == PRED_CLOSED) {
            batch_force_close(&f->path[p]);
            prev_path = p;
        }
    }
    batch_force_close(&f->path[SIM_LL]);
    batch_force_close(&f->path[SIM_BW]);
}

/* ---- world ------------------------------------------------------------------------- */

static hs_status_t start_actor(const char *name, sg_host_t host, void (*code)(int, char **),
                               void *data, int daemon)
{
    sg_actor_t a = sg_actor_init(name, host);

    if (!a)
        return HS_ERR_INTERNAL;
    sg_actor_set_data(a, data);
    sg_actor_start(a, code, 0, NULL);
    if (daemon)
        sg_actor_daemonize(a);
    return HS_OK;
}

static hs_status_t path_setup(sim_flow_t *f, int p)
{
    sim_path_t *ph = &f->path[p];

    ph->flow = f;
    ph->pc = &f->world->cfg.path[p];
    ph->cap = ph->pc->window + 2;
    ph->ring = malloc(ph->cap * sizeof(*ph->ring));
    ph->mem = malloc(ph->pc->batch * sizeof(*ph->mem));
    return ph->ring && ph->mem ? HS_OK : HS_ERR_NOMEM;
}

static hs_status_t flow_setup(sim_world_t *w, unsigned id, const char *platform_name)
{
    sim_flow_t *f = &w->flows[id];
    char name[48];
    hs_status_t st;
    int p;

    f->world = w;
    f->id = id;
    f->out = &w->args.out[id];
    f->pert_from_s = f->pert_until_s = -1;
    sim_platform_sender_name(id, name, sizeof(name));
    f->sender = sg_host_by_name(name);
    if (!f->sender) {
        hs_log_error("%s: no host named '%s' (a platform for %u flow(s) needs hosts "
                     "sender0..sender%u and '%s')", platform_name, name, w->args.nflows,
                     w->args.nflows - 1, SIM_RECEIVER_HOST);
        return HS_ERR_INVALID;
    }
    /* SimGrid 3.32 crashes on a missing route: leave a mark so the parent can say which */
    fprintf(stderr, SIM_STAGE_MARK "the route from '%s' to '%s'\n", name, SIM_RECEIVER_HOST);
    fflush(stderr);
    f->s_per_byte = 1.0 / sg_host_get_route_bandwidth(f->sender, w->receiver);
    fprintf(stderr, SIM_STAGE_MARK "\n"); /* the lookup returned: clear the mark */
    if (!(f->s_per_byte > 0) || f->s_per_byte > 1) {
        hs_log_error("%s: the route from '%s' to '%s' has no usable bandwidth", platform_name,
                     name, SIM_RECEIVER_HOST);
        return HS_ERR_INVALID;
    }
    snprintf(f->mb_name, sizeof(f->mb_name), "wire.%u", id);
    f->mb = sg_mailbox_by_name(f->mb_name);
    f->qcap = (uint64_t)w->cfg.path[SIM_LL].window + w->cfg.path[SIM_BW].window + 2;
    f->q = calloc(f->qcap, sizeof(*f->q));
    if (!f->q)
        return HS_ERR_NOMEM;
    f->nic_sem = sg_sem_init(0);
    f->poster_sem = sg_sem_init(0);
    for (p = 0; p < SIM_NPATHS; p++) {
        st = path_setup(f, p);
        if (st != HS_OK)
            return st;
    }
    snprintf(name, sizeof(name), "nic.%u", id);
    st = start_actor(name, f->sender, nic_main, f, 1);
    if (st != HS_OK)
        return st;
    snprintf(name, sizeof(name), "cq.%u", id);
    st = start_actor(name, w->receiver, cq_main, f, 1);
    if (st != HS_OK)
        return st;
    snprintf(name, sizeof(name), "poster.%u", id);
    return start_actor(name, f->sender, poster_main, f, 0);
}

hs_status_t sim_world_create(const sim_run_args_t *args, const char *platform_name,
                             sim_world_t **out)
{
    sim_world_t *w = calloc(1, sizeof(*w));
    hs_status_t st = HS_OK;
    unsigned i;

    if (!w)
        return HS_ERR_NOMEM;
    w->args = *args;
    w->cfg = *args->cfg;
    w->t0_ns = args->tr->recs[0].t_post_ns;
    w->receiver = sg_host_by_name(SIM_RECEIVER_HOST);
    if (!w->receiver) {
        hs_log_error("%s: no host named '%s' (the receiver every sender replays into)",
                     platform_name, SIM_RECEIVER_HOST);
        st = HS_ERR_INVALID;
    }
    w->flows = calloc(args->nflows, sizeof(*w->flows));
    if (st == HS_OK && !w->flows)
        st = HS_ERR_NOMEM;
    for (i = 0; st == HS_OK && i < args->nflows; i++)
        st = flow_setup(w, i, platform_name);
    if (st != HS_OK) {
        sim_world_destroy(w);
        return st;
    }
    *out = w;
    return HS_OK;
}

hs_status_t sim_world_check(const sim_world_t *w)
{
    unsigned i;

    for (i = 0; i < w->args.nflows; i++) {
        if (w->args.out[i].nseen != w->args.tr->n) {
            hs_log_error("simulation ended with flow %u having completed %llu of %zu messages",
                         i, (unsigned long long)w->args.out[i].nseen, w->args.tr->n);
            return HS_ERR_INTERNAL;
        }
    }
    return HS_OK;
}

void sim_world_destroy(sim_world_t *w)
{
    unsigned i;
    int p;

    if (!w)
        return;
    for (i = 0; w->flows && i < w->args.nflows; i++) {
        for (p = 0; p < SIM_NPATHS; p++) {
            free(w->flows[i].path[p].ring);
            free(w->flows[i].path[p].mem);
        }
        free(w->flows[i].q);
    }
    free(w->flows);
    free(w);
}
