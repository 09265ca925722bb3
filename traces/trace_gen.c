/* trace_gen.c - the synthetic workload generator.
 *
 * Randomness is xoshiro256** seeded through splitmix64 (never rand()), so a seed fixes
 * the output on every platform. Each workload below walks a clock t (ns) and emits
 * records; emission stops after exactly `count` records. Post times never go backwards
 * (one poster thread). See WORKLOADS.md for what each one stands for. */
#include "traces/trace_gen.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "traces/trace_convert.h"
#include "traces/trace_format.h"

#define GEN_MAX_PARAMS 16

struct trace_gen_ctx {
    uint64_t s[4];                 /* xoshiro256** state */
    double p[GEN_MAX_PARAMS];      /* the workload's parameters, in table order */
    double lat_base_ns, bw_gbps, jitter;
    uint64_t count, emitted;
    trace_writer_t *w;             /* streaming .hst output, or */
    trace_t *tr;                   /* in-memory output for the text formats */
    hs_status_t st;
};

/* ---- PRNG ------------------------------------------------------------------------- */

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(trace_gen_ctx_t *g)
{
    uint64_t *s = g->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Uniform in [0, 1). */
static double rng_unit(trace_gen_ctx_t *g) { return (double)(rng_next(g) >> 11) * 0x1.0p-53; }

/* Exponential with the given mean (Poisson arrivals). */
static double rng_exp(trace_gen_ctx_t *g, double mean) { return -mean * log(1.0 - rng_unit(g)); }

/* Log-uniform integer size in [lo, hi]. */
static uint64_t rng_logsize(trace_gen_ctx_t *g, double lo, double hi)
{
    double v = exp(log(lo) + rng_unit(g) * (log(hi) - log(lo)));
    uint64_t s = (uint64_t)llround(v);
    return s < (uint64_t)lo ? (uint64_t)lo : (s > (uint64_t)hi ? (uint64_t)hi : s);
}

/* A gap of mean ns with the common +-jitter fraction, uniform. */
static uint64_t gap(trace_gen_ctx_t *g, double mean)
{
    double f = 1.0 + g->jitter * (2.0 * rng_unit(g) - 1.0);
    return (uint64_t)llround(mean * f);
}

/* ---- emission --------------------------------------------------------------------- */

static int gen_done(const trace_gen_ctx_t *g) { return g->emitted >= g->count || g->st != HS_OK; }

/* Emit one record posted at t; returns its (synthetic) completion time. */
static uint64_t emit(trace_gen_ctx_t *g, uint64_t t, uint64_t size, uint32_t qp, uint8_t op,
                     uint16_t flags, double lat_factor)
{
    trace_rec_t r = {.t_post_ns = t, .size_bytes = size, .qp = qp, .opcode = op, .flags = flags};
    double lat = (g->lat_base_ns + (double)size * 8.0 / g->bw_gbps) * lat_factor;
    uint64_t done = t + (uint64_t)llround(lat);

    r.t_done_ns = (flags & TRACE_F_SIGNALED) ? done : TRACE_TIME_UNKNOWN;
    if (gen_done(g))
        return done;
    g->st = g->w ? trace_writer_append(g->w, &r) : trace_push(g->tr, &r);
    g->emitted++;
    return done;
}

#define SIG TRACE_F_SIGNALED

/* The time from a post of size bytes to the next: gap_ns, stretched where the message's wire
 * time at the common bw_gbps would take more than max_load of it (0: never), so that a
 * workload of large messages does not offer more than that share of the link. */
static uint64_t paced(const trace_gen_ctx_t *g, uint64_t size, uint64_t gap_ns, double max_load)
{
    double min_ns = max_load > 0 ? (double)size * 8.0 / g->bw_gbps / max_load : 0;

    return (double)gap_ns >= min_ns ? gap_ns : (uint64_t)ceil(min_ns);
}

/* ---- workloads -------------------------------------------------------------------- */

/* The size of the next record under a perftest-style range (ib_write_bw -a, nccl-tests
 * -b/-e/-f): lo, lo x f, lo x f^2, ... up to hi, the trace's count split evenly over them,
 * smallest first; lo alone when hi is 0 or below lo, or lo is 0. */
static uint64_t range_size(const trace_gen_ctx_t *g, double lo_d, double hi_d, double f_d)
{
    uint64_t lo = (uint64_t)lo_d, hi = (uint64_t)hi_d, f = (uint64_t)f_d, n = 1, s = lo;

    if (lo == 0 || hi <= lo)
        return lo;
    for (uint64_t x = lo; x <= hi / f; x *= f)
        n++;
    for (uint64_t k = g->emitted * n / g->count; k > 0; k--)
        s *= f;
    return s;
}

static void wl_pingpong(trace_gen_ctx_t *g)
{
    uint64_t t = 0;
    while (!gen_done(g))
        t = emit(g, t, range_size(g, g->p[0], g->p[2], g->p[3]), 0, TRACE_OP_WRITE, SIG, 1.0) +
            gap(g, g->p[1]);
}

static void wl_stream(trace_gen_ctx_t *g)
{
    uint64_t t = 0, every = (uint64_t)g->p[2];
    for (uint64_t i = 0; !gen_done(g); i++) {
        emit(g, t, range_size(g, g->p[0], g->p[3], g->p[4]), 0, TRACE_OP_WRITE,
             (i + 1) % every == 0 ? SIG : 0, 1.0);
        t += gap(g, g->p[1]);
    }
}

static void wl_allreduce(trace_gen_ctx_t *g)
{
    uint64_t t = 0, ranks = (uint64_t)g->p[1], chunk = (uint64_t)g->p[0] / ranks;
    while (!gen_done(g)) {
        /* one ring AllReduce: reduce-scatter then all-gather, 2 (ranks - 1) chunk steps,
         * each announced by small control messages and gated on the previous chunk */
        for (uint64_t s = 0; s < 2 * (ranks - 1) && !gen_done(g); s++) {
            for (uint64_t c = 0; c < (uint64_t)g->p[3]; c++)
                t = emit(g, t, (uint64_t)g->p[2], 1, TRACE_OP_SEND, SIG, 1.0) + gap(g, 200);
            t = emit(g, t, chunk, 0, TRACE_OP_WRITE, SIG, 1.0) + gap(g, 1000);
        }
        t += gap(g, g->p[4]); /* compute of the next layer / iteration */
    }
}

static void wl_kv(trace_gen_ctx_t *g)
{
    uint64_t t = 0;
    while (!gen_done(g)) {
        emit(g, t, (uint64_t)g->p[1], 1, TRACE_OP_SEND, SIG, 1.0); /* request / key */
        if (rng_unit(g) < g->p[2])
            emit(g, t + gap(g, 100), (uint64_t)g->p[0], 0, TRACE_OP_WRITE, SIG, 1.0);
        t += (uint64_t)llround(rng_exp(g, g->p[3])) + 200;
    }
}

static void wl_wide(trace_gen_ctx_t *g)
{
    uint64_t t = 0;
    while (!gen_done(g)) {
        int bulk = rng_unit(g) * g->p[2] < 1.0;
        uint64_t size = (uint64_t)g->p[bulk ? 1 : 0];
        emit(g, t, size, bulk ? 0 : 1, bulk ? TRACE_OP_WRITE : TRACE_OP_SEND, SIG, 1.0);
        t += paced(g, size, (uint64_t)llround(rng_exp(g, g->p[3])) + 100, g->p[4]);
    }
}

static void wl_burst(trace_gen_ctx_t *g)
{
    uint64_t t = 0, next_burst = (uint64_t)g->p[2];
    while (!gen_done(g)) {
        if (t >= next_burst) { /* a dense run of medium messages, faster than LL drains */
            for (uint64_t i = 0; i < (uint64_t)g->p[3] && !gen_done(g); i++) {
                emit(g, t, rng_logsize(g, g->p[4], g->p[5]), 0, TRACE_OP_WRITE, SIG, 1.0);
                t += gap(g, g->p[6]);
            }
            next_burst = t + gap(g, g->p[2]);
            continue;
        }
        emit(g, t, (uint64_t)g->p[0], 0, TRACE_OP_WRITE, SIG, 1.0);
        t += (uint64_t)llround(rng_exp(g, g->p[1])) + 50;
    }
}

static void wl_phased(trace_gen_ctx_t *g)
{
    uint64_t t = 0, segments = 3 * (uint64_t)g->p[4];
    for (uint64_t seg = 0; !gen_done(g); seg++) {
        uint64_t end = seg + 1 >= segments ? g->count : g->count * (seg + 1) / segments;
        double mid = g->p[seg % 3], spread = g->p[3];
        double lo = mid / spread < 1 ? 1 : mid / spread, hi = mid * spread;
        while (g->emitted < end && !gen_done(g)) {
            uint64_t size = rng_logsize(g, lo, hi);
            emit(g, t, size, 0, TRACE_OP_WRITE, SIG, 1.0);
            t += paced(g, size, gap(g, g->p[5]), g->p[6]);
        }
    }
}

static void wl_coldstart(trace_gen_ctx_t *g)
{
    uint64_t t = 0, cold = (uint64_t)g->p[1];
    for (uint64_t i = 0; !gen_done(g); i++) {
        /* the first messages pay allocation, JIT and handshake: the first one cold_factor
         * times the steady latency, decaying linearly to steady state after cold_count */
        double f = i < cold ? 1.0 + (g->p[2] - 1.0) * (double)(cold - i) / (double)cold : 1.0;
        uint16_t flags = SIG | (i < cold ? TRACE_F_COLD : 0);
        t = emit(g, t, (uint64_t)g->p[0], 0, TRACE_OP_WRITE, flags, f) + gap(g, g->p[3]);
    }
}

/* ---- tables ----------------------------------------------------------------------- */

#define P_END {NULL, 0, 0, 0, 0, NULL}
#define BIG 1e15
#define MAX_LOAD_HELP "a post waits until the previous message used at most this share of " \
                      "bw_gbps (0: no limit, the link can be overloaded)"

static const trace_gen_param_t g_common[] = {
    {"lat_base_ns", TRACE_GEN_DOUBLE, 2500, 0, BIG, "fixed part of the synthetic latency"},
    {"bw_gbps", TRACE_GEN_DOUBLE, 100, 0.001, 1e6, "bandwidth of the synthetic latency (Gb/s)"},
    {"jitter", TRACE_GEN_DOUBLE, 0.1, 0, 1, "+- fraction applied to fixed gaps"},
    P_END,
};

#define SIZE_MAX_HELP "with size_factor, sizes from size up to this, the records split " \
                      "evenly (perftest -a, nccl-tests -b/-e/-f); 0: size alone"
#define SIZE_FACTOR_HELP "each size of the range is the previous one times this"

static const trace_gen_param_t g_p_pingpong[] = {
    {"size", TRACE_GEN_SIZE, 8, 0, BIG, "message size (the first of a range)"},
    {"think_ns", TRACE_GEN_DOUBLE, 1000, 0, BIG, "time between a completion and the next post"},
    {"size_max", TRACE_GEN_SIZE, 0, 0, BIG, SIZE_MAX_HELP},
    {"size_factor", TRACE_GEN_U64, 2, 2, 1 << 20, SIZE_FACTOR_HELP},
    P_END,
};
static const trace_gen_param_t g_p_stream[] = {
    {"size", TRACE_GEN_SIZE, 4096, 0, BIG, "message size (the first of a range)"},
    {"post_gap_ns", TRACE_GEN_DOUBLE, 100, 0, BIG, "time between posts"},
    {"signal_every", TRACE_GEN_U64, 1, 1, 65536, "every k-th WR signalled (others: t_done unknown)"},
    {"size_max", TRACE_GEN_SIZE, 0, 0, BIG, SIZE_MAX_HELP},
    {"size_factor", TRACE_GEN_U64, 2, 2, 1 << 20, SIZE_FACTOR_HELP},
    P_END,
};
static const trace_gen_param_t g_p_allreduce[] = {
    {"grad_bytes", TRACE_GEN_SIZE, 16 << 20, 1, BIG, "gradient bytes per AllReduce"},
    {"ranks", TRACE_GEN_U64, 8, 2, 65536, "ranks in the ring (chunk = grad_bytes / ranks)"},
    {"ctrl_bytes", TRACE_GEN_SIZE, 64, 0, BIG, "control message size"},
    {"ctrl_per_chunk", TRACE_GEN_U64, 1, 0, 64, "control messages before each chunk"},
    {"step_gap_ns", TRACE_GEN_DOUBLE, 200000, 0, BIG, "compute time between AllReduces"},
    P_END,
};
static const trace_gen_param_t g_p_kv[] = {
    {"value_bytes", TRACE_GEN_SIZE, 4096, 0, BIG, "value size"},
    {"ctrl_bytes", TRACE_GEN_SIZE, 64, 0, BIG, "request/key message size"},
    {"value_fraction", TRACE_GEN_DOUBLE, 0.5, 0, 1, "requests followed by a value"},
    {"mean_gap_ns", TRACE_GEN_DOUBLE, 2000, 0, BIG, "mean time between requests (Poisson)"},
    P_END,
};
static const trace_gen_param_t g_p_wide[] = {
    {"ctrl_bytes", TRACE_GEN_SIZE, 16, 0, BIG, "control message size"},
    {"bulk_bytes", TRACE_GEN_SIZE, 64 << 20, 0, BIG, "bulk transfer size"},
    {"bulk_every", TRACE_GEN_DOUBLE, 50, 1, BIG, "one message in this many is bulk (mean)"},
    {"mean_gap_ns", TRACE_GEN_DOUBLE, 5000, 0, BIG, "mean time between posts (Poisson)"},
    {"max_load", TRACE_GEN_DOUBLE, 0.5, 0, 1, MAX_LOAD_HELP},
    P_END,
};
static const trace_gen_param_t g_p_burst[] = {
    {"small_bytes", TRACE_GEN_SIZE, 8, 0, BIG, "background message size"},
    {"small_gap_ns", TRACE_GEN_DOUBLE, 2000, 0, BIG, "mean gap of the background (Poisson)"},
    {"burst_every_ns", TRACE_GEN_DOUBLE, 500000, 1, BIG, "time between bursts"},
    {"burst_len", TRACE_GEN_U64, 64, 1, 1 << 20, "messages per burst"},
    {"burst_min", TRACE_GEN_SIZE, 256, 1, BIG, "smallest burst message (log-uniform)"},
    {"burst_max", TRACE_GEN_SIZE, 4096, 1, BIG, "largest burst message"},
    {"burst_gap_ns", TRACE_GEN_DOUBLE, 50, 0, BIG, "gap inside a burst"},
    P_END,
};
static const trace_gen_param_t g_p_phased[] = {
    {"phase1_bytes", TRACE_GEN_SIZE, 64, 1, BIG, "typical size of phase 1"},
    {"phase2_bytes", TRACE_GEN_SIZE, 16384, 1, BIG, "typical size of phase 2"},
    {"phase3_bytes", TRACE_GEN_SIZE, 1 << 20, 1, BIG, "typical size of phase 3"},
    {"spread", TRACE_GEN_DOUBLE, 2, 1, 1e6, "sizes log-uniform in [typical/spread, typical*spread]"},
    {"cycles", TRACE_GEN_U64, 1, 1, 1 << 20, "times the three phases repeat"},
    {"gap_ns", TRACE_GEN_DOUBLE, 2000, 0, BIG, "time between posts"},
    {"max_load", TRACE_GEN_DOUBLE, 0.5, 0, 1, MAX_LOAD_HELP},
    P_END,
};
static const trace_gen_param_t g_p_coldstart[] = {
    {"size", TRACE_GEN_SIZE, 4096, 0, BIG, "message size"},
    {"cold_count", TRACE_GEN_U64, 16, 1, 1 << 30, "messages flagged cold"},
    {"cold_factor", TRACE_GEN_DOUBLE, 11.4, 1, 1e6, "first message latency / steady (3.2 ms / 280 us)"},
    {"think_ns", TRACE_GEN_DOUBLE, 5000, 0, BIG, "time between a completion and the next post"},
    P_END,
};

static const trace_gen_workload_t g_workloads[] = {
    {"pingpong", "fixed-size ping-pong, closed loop (8 B; seed 000 measurements, ib_write_lat)",
     "000 measurements; 001 perftest", g_p_pingpong, wl_pingpong},
    {"stream", "back-to-back stream of one size (bandwidth; seed 003 ib_write_bw, 4 KB)",
     "003 experiment D", g_p_stream, wl_stream},
    {"allreduce", "ring AllReduce: chunks of grad_bytes/ranks plus 64 B control (seed 000)",
     "000 hint = gradient / ranks + 20%", g_p_allreduce, wl_allreduce},
    {"kv", "key-value: 64 B requests, half followed by a 4 KB value, Poisson arrivals",
     "000 narrow stable band", g_p_kv, wl_kv},
    {"wide", "16 B control mixed with 64 MB bulk: the case where no hint helps (seed 000)",
     "000 don't use when sizes span orders of magnitude", g_p_wide, wl_wide},
    {"burst", "8 B background plus dense 256 B-4 KB bursts that fill a shallow queue",
     "000 pitfall 1", g_p_burst, wl_burst},
    {"phased", "three phases (64 B, 16 KB, 1 MB typical): the size distribution shifts",
     "000 irregular distributions make switching oscillate", g_p_phased, wl_phased},
    {"coldstart", "closed loop whose first messages are slow and flagged cold (seed 002)",
     "002 first call 3.2 ms vs 280 us", g_p_coldstart, wl_coldstart},
};

const trace_gen_workload_t *trace_gen_workloads(size_t *n)
{
    *n = sizeof(g_workloads) / sizeof(g_workloads[0]);
    return g_workloads;
}

const trace_gen_workload_t *trace_gen_find(const char *name)
{
    size_t n;
    const trace_gen_workload_t *w = trace_gen_workloads(&n);

    for (size_t i = 0; i < n; i++)
        if (strcmp(w[i].name, name) == 0)
            return &w[i];
    return NULL;
}

const trace_gen_param_t *trace_gen_common_params(void) { return g_common; }

/* ---- parameters ------------------------------------------------------------------- */

static const trace_gen_param_t *param_find(const trace_gen_param_t *tab, const char *key,
                                           size_t keylen, size_t *idx)
{
    for (size_t i = 0; tab[i].key; i++)
        if (strlen(tab[i].key) == keylen && strncmp(tab[i].key, key, keylen) == 0) {
            *idx = i;
            return &tab[i];
        }
    return NULL;
}

static hs_status_t param_value(const trace_gen_param_t *p, const char *text, double *out)
{
    uint64_t u;
    double d;

    if (p->type == TRACE_GEN_DOUBLE) {
        if (hs_parse_double(text, &d) != HS_OK)
            return HS_ERR_INVALID;
    } else {
        if ((p->type == TRACE_GEN_SIZE ? hs_parse_size(text, &u) : hs_parse_u64(text, &u)) != HS_OK)
            return HS_ERR_INVALID;
        d = (double)u;
    }
    if (!(d >= p->lo && d <= p->hi))
        return HS_ERR_INVALID;
    *out = d;
    return HS_OK;
}

static void param_list(const trace_gen_param_t *tab, char *buf, size_t len)
{
    for (size_t i = 0; tab[i].key; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", tab[i].key);
    }
}

/* Apply one "KEY=VALUE" to the workload's (wp) or the common (cp) values. */
/* A parameter value as a user types it: sizes as 16M, integers whole, others %g. */
static void param_text(const trace_gen_param_t *p, double v, char *buf, size_t len)
{
    if (p->type == TRACE_GEN_SIZE && v >= 0 && v < 1.8e19)
        hs_format_size((uint64_t)v, buf, len);
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%g", v);
}

static hs_status_t param_apply(const trace_gen_workload_t *wl, const char *set, double *wp,
                               double *cp)
{
    const char *eq = strchr(set, '=');
    const trace_gen_param_t *p;
    size_t idx, klen = eq ? (size_t)(eq - set) : strlen(set);
    char known[512] = "";

    if ((p = param_find(wl->params, set, klen, &idx)) == NULL &&
        (p = param_find(g_common, set, klen, &idx)) != NULL)
        wp = cp;
    if (!p) {
        param_list(wl->params, known, sizeof(known));
        param_list(g_common, known, sizeof(known));
        hs_log_error("--set %s: unknown parameter '%.*s' for workload '%s' (known: %s)", set,
                     (int)klen, set, wl->name, known);
        return HS_ERR_INVALID;
    }
    if (!eq || param_value(p, eq + 1, &wp[idx]) != HS_OK) {
        char lo[32], hi[32];
        param_text(p, p->lo, lo, sizeof(lo));
        param_text(p, p->hi, hi, sizeof(hi));
        hs_log_error("--set %s: parameter '%s' needs a %s in %s..%s", set, p->key,
                     p->type == TRACE_GEN_DOUBLE ? "number" : p->type == TRACE_GEN_SIZE ?
                     "size (K/M/G suffixes)" : "non-negative integer", lo, hi);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

static void json_params(cJSON *o, const trace_gen_param_t *tab, const double *v)
{
    for (size_t i = 0; tab[i].key; i++)
        cJSON_AddNumberToObject(o, tab[i].key, v[i]);
}

static hs_status_t gen_header(trace_hdr_t *h, const trace_gen_workload_t *wl, uint64_t count,
                              uint64_t seed, const double *wp, const double *cp)
{
    cJSON *o = cJSON_CreateObject(), *g;

    trace_hdr_init(h);
    snprintf(h->producer, sizeof(h->producer), "hintsim trace gen");
    h->host[0] = '\0'; /* synthetic: byte-identical wherever it is generated */
    snprintf(h->clock_source, sizeof(h->clock_source), "synthetic");
    snprintf(h->workload, sizeof(h->workload), "%s", wl->name);
    if (!o)
        return HS_ERR_NOMEM;
    g = cJSON_AddObjectToObject(o, "generator");
    cJSON_AddStringToObject(g, "workload", wl->name);
    if (seed <= (1ULL << 53))
        cJSON_AddNumberToObject(g, "seed", (double)seed);
    else {
        char text[24];
        snprintf(text, sizeof(text), "%" PRIu64, seed);
        cJSON_AddStringToObject(g, "seed", text);
    }
    cJSON_AddNumberToObject(g, "count", (double)count);
    cJSON_AddStringToObject(g, "source", wl->source);
    json_params(cJSON_AddObjectToObject(g, "params"), wl->params, wp);
    json_params(cJSON_AddObjectToObject(g, "common"), g_common, cp);
    cJSON_AddStringToObject(o, "timing", "t_done = t_post + lat_base_ns + size*8/bw_gbps "
                            "(x cold factor), no queueing; unsignalled WRs have t_done unknown");
    h->extra_json = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return h->extra_json ? HS_OK : HS_ERR_NOMEM;
}

/* A pair of parameters X_min and X_max must bound a range (X_min <= X_max). */
static hs_status_t check_ranges(const trace_gen_workload_t *wl, const double *wp)
{
    for (size_t i = 0; wl->params[i].key; i++) {
        const char *k = wl->params[i].key;
        size_t len = strlen(k);
        if (len < 5 || strcmp(k + len - 4, "_min") != 0)
            continue;
        for (size_t j = 0; wl->params[j].key; j++) {
            const char *m = wl->params[j].key;
            if (strlen(m) == len && strncmp(m, k, len - 4) == 0 &&
                strcmp(m + len - 4, "_max") == 0 && wp[i] > wp[j]) {
                hs_log_error("--set: %s %.0f is above %s %.0f: expected %s <= %s", k, wp[i], m,
                             wp[j], k, m);
                return HS_ERR_INVALID;
            }
        }
    }
    return HS_OK;
}

static hs_status_t gen_params(const trace_gen_workload_t *wl, const char *const *sets,
                              size_t nsets, double *wp, double *cp)
{
    for (size_t i = 0; wl->params[i].key; i++)
        wp[i] = wl->params[i].def;
    for (size_t i = 0; g_common[i].key; i++)
        cp[i] = g_common[i].def;
    for (size_t i = 0; i < nsets; i++)
        if (param_apply(wl, sets[i], wp, cp) != HS_OK)
            return HS_ERR_INVALID;
    return check_ranges(wl, wp);
}

static void gen_seed(trace_gen_ctx_t *g, const trace_gen_workload_t *wl, uint64_t seed)
{
    uint64_t x = seed ^ hs_hash64(wl->name, strlen(wl->name), HS_FNV_SEED);
    for (int i = 0; i < 4; i++)
        g->s[i] = hs_splitmix64(&x);
}

static hs_status_t gen_output(trace_gen_ctx_t *g, const trace_gen_workload_t *wl,
                              const trace_hdr_t *h, trace_fmt_t fmt, const char *path)
{
    hs_status_t st;

    if (fmt == TRACE_FMT_UNKNOWN)
        fmt = trace_fmt_from_ext(path);

    if (fmt == TRACE_FMT_UNKNOWN) {
        hs_log_error("%s: unknown output format: the name must end in .hst, .csv or .jsonl, or "
                     "--to names the format", path);
        return HS_ERR_USAGE;
    }
    if (fmt == TRACE_FMT_HST) {
        if ((st = trace_writer_open(path, h, &g->w)) != HS_OK)
            return st;
        wl->run(g);
        if (g->st != HS_OK) {
            trace_writer_abort(g->w);
            return g->st;
        }
        return trace_writer_close(g->w);
    }
    if ((st = trace_new(&g->tr)) != HS_OK)
        return st;
    trace_hdr_release(&g->tr->hdr);
    st = trace_hdr_copy(&g->tr->hdr, h);
    if (st != HS_OK)
        goto free_trace;
    wl->run(g);
    st = g->st != HS_OK ? g->st : trace_save_as(path, fmt, g->tr);
free_trace:
    trace_free(g->tr);
    return st;
}

hs_status_t trace_gen_run(const char *name, uint64_t count, uint64_t seed,
                          const char *const *sets, size_t nsets, const char *path)
{
    return trace_gen_run_as(name, count, seed, sets, nsets, TRACE_FMT_UNKNOWN, path);
}

hs_status_t trace_gen_run_as(const char *name, uint64_t count, uint64_t seed,
                             const char *const *sets, size_t nsets, trace_fmt_t fmt,
                             const char *path)
{
    const trace_gen_workload_t *wl = trace_gen_find(name);
    trace_gen_ctx_t g = {.count = count};
    double cp[GEN_MAX_PARAMS];
    trace_hdr_t h;
    hs_status_t st;

    if (!wl) {
        hs_log_error("--workload %s: unknown workload (see 'hintsim trace workloads')", name);
        return HS_ERR_INVALID;
    }
    if ((st = gen_params(wl, sets, nsets, g.p, cp)) != HS_OK)
        return st;
    g.lat_base_ns = cp[0];
    g.bw_gbps = cp[1];
    g.jitter = cp[2];
    gen_seed(&g, wl, seed);
    if ((st = gen_header(&h, wl, count, seed, g.p, cp)) == HS_OK)
        st = gen_output(&g, wl, &h, fmt, path);
    trace_hdr_release(&h);
    return st;
}

void trace_gen_print_workloads(FILE *fp, int verbose)
{
    size_t n;
    const trace_gen_workload_t *w = trace_gen_workloads(&n);

    for (size_t i = 0; i < n; i++) {
        fprintf(fp, "%-10s %s\n", w[i].name, w[i].summary);
        for (size_t k = 0; verbose && w[i].params[k].key; k++) {
            char d[32];
            param_text(&w[i].params[k], w[i].params[k].def, d, sizeof(d));
            fprintf(fp, "    %-16s %-12s %s\n", w[i].params[k].key, d, w[i].params[k].help);
        }
    }
    if (!verbose)
        return;
    fprintf(fp, "common to all:\n");
    for (size_t k = 0; g_common[k].key; k++) {
        char d[32];
        param_text(&g_common[k], g_common[k].def, d, sizeof(d));
        fprintf(fp, "    %-16s %-12s %s\n", g_common[k].key, d, g_common[k].help);
    }
}
