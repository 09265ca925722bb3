/* calib_run.c - calibrate's microbenchmarks through capture bench; see calib_run.h.
 *
 * Every benchmark writes its trace into a private temporary directory, which is read back
 * and split into rows: the fit then replays each row's own messages (sizes, post times,
 * warm-up) rather than an idealised picture of them.
 */
#include "calib/calib_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_bench.h"
#include "common/hs_util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n ? v[(n - 1) / 2] : 0;
}

static int in_list(uint64_t v, const uint64_t *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return n == 0;
}

static hs_status_t keep_sub(calib_meas_t *m, trace_t *sub)
{
    trace_t **ns = realloc(m->subs, (m->nsubs + 1) * sizeof(*ns));

    if (!ns)
        return HS_ERR_NOMEM;
    m->subs = ns;
    m->subs[m->nsubs++] = sub;
    return HS_OK;
}

/* One row [a, b) of tr: its sub-trace and measured median latency. */
static hs_status_t row_obs(const trace_t *tr, size_t a, size_t b, calib_obs_t *o,
                           calib_meas_t *m)
{
    double *us = malloc((b - a) * sizeof(*us));
    size_t n = 0;
    trace_t *sub = NULL;
    hs_status_t st = us ? trace_new(&sub) : HS_ERR_NOMEM;

    for (size_t i = a; st == HS_OK && i < b; i++) {
        const trace_rec_t *r = &tr->recs[i];
        st = trace_push(sub, r);
        if (!(r->flags & TRACE_F_COLD) && r->t_done_ns != TRACE_TIME_UNKNOWN &&
            r->t_done_ns >= r->t_post_ns)
            us[n++] = (double)(r->t_done_ns - r->t_post_ns) / 1e3;
    }
    if (st == HS_OK && n == 0) {
        hs_log_error("calibrate: benchmark row of %llu B has no warm completed message",
                     (unsigned long long)tr->recs[a].size_bytes);
        st = HS_ERR_INVALID;
    }
    if (st == HS_OK)
        st = keep_sub(m, sub);
    if (st != HS_OK)
        trace_free(sub);
    else {
        o->meas_us = median_of(us, n);
        o->trace = sub;
        o->size_bytes = tr->recs[a].size_bytes;
    }
    free(us);
    return st;
}

static int row_boundary(const trace_rec_t *prev, const trace_rec_t *r)
{
    return r->size_bytes != prev->size_bytes ||
           (r->flags & TRACE_F_PATH_MASK) != (prev->flags & TRACE_F_PATH_MASK) ||
           ((r->flags & TRACE_F_COLD) && !(prev->flags & TRACE_F_COLD));
}

hs_status_t calib_obs_from_trace(const trace_t *tr, const char *group_ll, const char *group_bw,
                                 uint64_t hint_ll, const char *set, const uint64_t *keep,
                                 size_t nkeep, calib_meas_t *m, calib_obs_t **obs, size_t *n)
{
    size_t a = 0;
    hs_status_t st = HS_OK;

    for (size_t i = 1; st == HS_OK && i <= tr->n; i++) {
        calib_obs_t o = {0}, *no;
        int ll;
        if (i < tr->n && !row_boundary(&tr->recs[i - 1], &tr->recs[i]))
            continue;
        ll = (tr->recs[a].flags & TRACE_F_PATH_MASK) == TRACE_F_PATH_LL;
        if (in_list(tr->recs[a].size_bytes, keep, nkeep)) {
            o.group = ll ? group_ll : group_bw;
            o.hint_bytes = ll ? hint_ll : 0;
            o.set = set;
            st = row_obs(tr, a, i, &o, m);
            no = st == HS_OK ? realloc(*obs, (*n + 1) * sizeof(*no)) : NULL;
            if (st == HS_OK && !no)
                st = HS_ERR_NOMEM;
            if (st == HS_OK) {
                *obs = no;
                (*obs)[(*n)++] = o;
            }
        }
        a = i;
    }
    return st;
}

typedef struct {
    const char *dir;   /* private temporary directory */
    unsigned seq;
} bench_tmp_t;

static void add_emulated(calib_meas_t *m, const char *pfx, const char *key, double v)
{
    char kv[48];

    snprintf(kv, sizeof(kv), "%s.%s=%.0f", pfx, key, v);
    for (size_t i = 0; i < m->nemulated; i++)
        if (strcmp(m->emulated[i], kv) == 0)
            return;
    if (m->nemulated < sizeof(m->emulated) / sizeof(m->emulated[0]))
        snprintf(m->emulated[m->nemulated++], sizeof(m->emulated[0]), "%s", kv);
}

/* A path whose moderation the bench emulated (the device has none) signals one WR every
 * signal_every and never waits on a timer: the fit must replay that, not the profile's
 * count and period, or it attributes the batch wait of unsignalled WRs to the link. */
void calib_note_emulated(const cJSON *rep, calib_meas_t *m)
{
    const cJSON *paths = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "config"), "paths");
    static const char *const name[2] = {"LL", "BW"}, *const pfx[2] = {"ll", "bw"};

    for (int i = 0; i < 2; i++) {
        const cJSON *p = cJSON_GetObjectItem(paths, name[i]);
        const cJSON *mod = cJSON_GetObjectItem(p, "moderation");
        const cJSON *sig = cJSON_GetObjectItem(p, "signal_every");
        if (!cJSON_IsString(mod) || strcmp(mod->valuestring, "emulated") != 0 ||
            !cJSON_IsNumber(sig))
            continue;
        add_emulated(m, pfx[i], "coal_count", 1);
        add_emulated(m, pfx[i], "coal_period_us", 0);
        add_emulated(m, pfx[i], "signal_every", sig->valuedouble);
    }
}

/* One capture bench run (latency phase only) with an extra override; loads its trace. */
static hs_status_t bench_once(const calib_run_opts_t *o, bench_tmp_t *tmp, const uint64_t *sizes,
                              size_t ns, uint64_t hint, const char *extra_set, trace_t **tr,
                              cJSON **rep)
{
    const char *setv[64];
    hs_strlist_t sets = {setv, 0};
    char path[4096];
    cap_bench_opts_t b = {.live = o->live, .sizes = sizes, .nsizes = ns, .hints = &hint,
                          .nhints = 1, .iters = o->iters, .warmup = o->warmup ? o->warmup : 1,
                          .out_path = path, .phases = CAP_PHASE_LATENCY};
    hs_status_t st;

    for (size_t i = 0; o->live.sets && i < o->live.sets->n && i < 62; i++)
        setv[sets.n++] = o->live.sets->v[i];
    if (extra_set)
        setv[sets.n++] = extra_set;
    b.live.sets = &sets;
    snprintf(path, sizeof(path), "%s/bench%u.hst", tmp->dir, tmp->seq++);
    st = cap_bench_run(&b, rep);
    if (st == HS_OK)
        st = trace_load(path, tr);
    unlink(path);
    return st;
}

/* The forced-switch sequence: sizes alternating across the hint; each row after the first
 * switches path, and capture bench reports the measured drain of that switch. */
static hs_status_t measure_switch(const calib_run_opts_t *o, bench_tmp_t *tmp, calib_meas_t *m)
{
    uint64_t small = o->sizes[0], big = o->sizes[o->nsizes - 1], seq[8];
    double drains[8];
    trace_t *tr = NULL;
    cJSON *rep = NULL, *row, *rows;
    size_t n = 0;
    hs_status_t st;

    for (int i = 0; i < 8; i++)
        seq[i] = i % 2 ? big : small;
    st = bench_once(o, tmp, seq, 8, small, NULL, &tr, &rep);
    rows = rep ? cJSON_GetObjectItem(rep, "results") : NULL;
    cJSON_ArrayForEach(row, rows) {
        const cJSON *d = cJSON_GetObjectItem(row, "switch_drain_us");
        if (cJSON_IsNumber(d) && d->valuedouble > 0 && n < 8)
            drains[n++] = d->valuedouble;
    }
    if (st == HS_OK && n > 0) {
        double dev[8];
        m->drain_us_median = median_of(drains, n);
        for (size_t i = 0; i < n; i++)
            dev[i] = fabs(drains[i] - m->drain_us_median);
        m->drain_us_mad = median_of(dev, n);
    }
    m->nswitches = n;
    trace_free(tr);
    cJSON_Delete(rep);
    return st;
}

static size_t union_sizes(const calib_run_opts_t *o, uint64_t *all)
{
    size_t n = 0;

    for (size_t i = 0; i < o->nsizes; i++)
        all[n++] = o->sizes[i];
    for (size_t i = 0; i < o->nholdout; i++)
        all[n++] = o->holdout[i];
    return n;
}

static uint64_t max_of(const uint64_t *v, size_t n)
{
    uint64_t mx = 0;

    for (size_t i = 0; i < n; i++)
        mx = v[i] > mx ? v[i] : mx;
    return mx;
}

/* Latency by size on one path: fit sizes to m->fit, held-out sizes to m->held. */
static hs_status_t measure_path(const calib_run_opts_t *o, bench_tmp_t *tmp, int ll,
                                calib_meas_t *m)
{
    uint64_t all[128];
    size_t n = union_sizes(o, all);
    uint64_t hint = ll ? max_of(all, n) : 0;
    const char *g = ll ? "lat_ll" : "lat_bw";
    trace_t *tr = NULL;
    cJSON *rep = NULL;
    hs_status_t st = bench_once(o, tmp, all, n, hint, NULL, &tr, &rep);

    if (st == HS_OK)
        calib_note_emulated(rep, m);
    if (st == HS_OK && !m->device[0]) {
        snprintf(m->device, sizeof(m->device), "%s", tr->hdr.device);
        snprintf(m->firmware, sizeof(m->firmware), "%s", tr->hdr.firmware);
        snprintf(m->host, sizeof(m->host), "%s", tr->hdr.host);
        const cJSON *peer = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "config"), "peer");
        const cJSON *addr = cJSON_GetObjectItem(peer, "address");
        snprintf(m->peer, sizeof(m->peer), "%s", cJSON_IsString(addr) ? addr->valuestring : "");
    }
    if (st == HS_OK)
        st = calib_obs_from_trace(tr, g, g, hint, NULL, o->sizes, o->nsizes, m, &m->fit,
                                  &m->nfit);
    if (st == HS_OK && o->nholdout)
        st = calib_obs_from_trace(tr, g, g, hint, NULL, o->holdout, o->nholdout, m, &m->held,
                                  &m->nheld);
    trace_free(tr);
    cJSON_Delete(rep);
    return st;
}

/* One variant of a path (an override) on a few fit sizes. */
static hs_status_t measure_variant(const calib_run_opts_t *o, bench_tmp_t *tmp, int ll,
                                   const char *group, const char *set, uint64_t max_size,
                                   calib_meas_t *m)
{
    uint64_t sizes[3];
    size_t n = 0;
    trace_t *tr = NULL;
    cJSON *rep = NULL;
    hs_status_t st;

    for (size_t i = 0; i < o->nsizes && n < 3; i++)
        if (o->sizes[i] <= max_size)
            sizes[n++] = o->sizes[i];
    if (n == 0)
        sizes[n++] = o->sizes[0];
    st = bench_once(o, tmp, sizes, n, ll ? max_of(sizes, n) : 0, set, &tr, &rep);
    if (st == HS_OK)
        st = calib_obs_from_trace(tr, group, group, ll ? max_of(sizes, n) : 0, set, NULL, 0,
                                  m, &m->fit, &m->nfit);
    trace_free(tr);
    cJSON_Delete(rep);
    return st;
}

uint64_t calib_run_steps(const calib_run_opts_t *o)
{
    (void)o;
    return 6;
}

hs_status_t calib_measure(const calib_run_opts_t *o, hs_progress_t *pb, calib_meas_t *out)
{
    char dir[] = "/tmp/hintsim-calib-XXXXXX";
    bench_tmp_t tmp = {dir, 0};
    calib_meas_t m = {0};
    hs_status_t st = HS_OK;

    if (o->nsizes < 2 || o->nsizes + o->nholdout > 128) {
        hs_log_error("calibrate: --sizes needs 2..128 sizes (with --holdout)");
        return HS_ERR_USAGE;
    }
    if (!mkdtemp(dir)) {
        hs_log_error("calibrate: cannot create a temporary directory under /tmp");
        return HS_ERR_IO;
    }
    st = measure_path(o, &tmp, 1, &m);
    hs_progress_update(pb, 1);
    if (st == HS_OK)
        st = measure_path(o, &tmp, 0, &m);
    hs_progress_update(pb, 2);
    if (st == HS_OK)
        st = measure_variant(o, &tmp, 1, "lat_ll_noinline", "ll.inline_bytes=0", 256, &m);
    hs_progress_update(pb, 3);
    if (st == HS_OK)
        st = measure_variant(o, &tmp, 1, "lat_ll_sig4", "ll.signal_every=4", 4096, &m);
    hs_progress_update(pb, 4);
    if (st == HS_OK)
        st = measure_variant(o, &tmp, 0, "lat_bw_depth16", "bw.depth=16", 65536, &m);
    hs_progress_update(pb, 5);
    if (st == HS_OK)
        st = measure_switch(o, &tmp, &m);
    hs_progress_update(pb, 6);
    rmdir(dir);
    if (st != HS_OK) {
        calib_meas_release(&m);
        return st;
    }
    *out = m;
    return HS_OK;
}

void calib_meas_release(calib_meas_t *m)
{
    for (size_t i = 0; i < m->nsubs; i++)
        trace_free(m->subs[i]);
    free(m->subs);
    free(m->fit);
    free(m->held);
    memset(m, 0, sizeof(*m));
}
