/* bench_truth.c - does hintsim's recommendation hold on a live device? In the soft-RoCE VM
 * (bench/bench_truth.sh, through tests/vm/vm-ctest.sh) it calibrates rxe0, then for every
 * built-in workload and for random mixes (a new seed every run, printed) paced below the
 * calibrated link, runs `recommend` and `validate`; back on the host it prints a table of
 * regret, rank correlation and median |error|, each with its 95% interval and, beside it,
 * the noise measured in the same run (the same classes replayed against themselves: even
 * rounds against odd ones), against the goals: regret <= 5%, rank correlation >= 0.8,
 * median |error| <= 15%. A figure that misses its goal but lies within the noise says
 * "noise", one beyond it "MISS".
 *
 * Usage:
 *   bench_truth --hintsim BIN --vm-dir DIR --script SH --cache DIR --out DIR
 *               [--short] [--seed S] [--load F] [--objective p99|p50|mean] [--timeout SEC]
 *       run the VM, then print the table of what it left in --out
 *   bench_truth --table DIR [--gate]
 *       print the table of an earlier run; with --gate exit 1 when a built-in workload
 *       misses a goal beyond the noise or did not run (the vm CI test's check)
 *   bench_truth --missed DIR
 *       the built-in workloads of an earlier run that missed a goal beyond the noise or did
 *       not run, a name a line (what tests/vm/bench-truth-check.sh replicates)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/hs_host.h"
#include "common/hs_util.h"

#define GOAL_REGRET_PCT 5.0
#define GOAL_RANK 0.8
#define GOAL_ERR_PCT 15.0
#define MAX_ROWS 64

typedef enum { G_NA = 0, G_OK, G_NOISE, G_MISS } goal_t;

typedef struct {
    double v, lo, hi, noise;
    int has, has_noise;
} fig_t;

typedef struct {
    char name[64], kind[16], mode[16], failed[160], verdict[48], mix[160];
    int worse;      /* the recommendation verdict is "worse" in every session */
    int sessions;   /* validate sessions behind the figures: 1, or 2 (val2.json) */
    long records;
    double pace;
    int classes, classes_trace, saturated;
    double carried; /* median over classes of measured / predicted throughput */
    double drift;   /* validate's drift probe: its measured p50 against the model's, % */
    double tail;    /* the same probe's p99 (every round's messages pooled), %; shown only */
    double cal;     /* the calibration repeated: half of how far it moves the median class's
                     * prediction, % of the measured objective (NAN: no repeat) */
    int pairs_apart, pairs_otherwise; /* class pairs the device tells apart; of those, the
                                       * ones the model orders the other way round */
    fig_t regret, rank, err;
    goal_t g_regret, g_rank, g_err;
    size_t nobj;       /* the session's classes: hint, measured objective (validate's */
    double obj_hint[64], obj_meas[64], obj_pred[64]; /* objective_median), predicted */
    char obj_key[32];  /* the objective's key in the model's JSON ("p99_us") */
} row_t;

typedef struct {
    const char *hintsim, *vm_dir, *script, *cache, *out, *table, *missed, *objective;
    int short_mode, gate;
    unsigned long long seed;
    double load;
    int timeout_s;
} opts_t;

/* ---- reading one run ------------------------------------------------------------------ */

/* Value of KEY=... in DIR/meta into buf ("" when absent). */
static void meta_get(const char *dir, const char *key, char *buf, size_t len)
{
    char path[1100], line[512];
    size_t kl = strlen(key);
    FILE *f;

    buf[0] = 0;
    snprintf(path, sizeof(path), "%s/meta", dir);
    f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
            line[strcspn(line, "\n")] = 0;
            snprintf(buf, len, "%s", line + kl + 1);
        }
    fclose(f);
}

static const cJSON *jobj(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A figure, its interval key and its noise (NULL: none). */
static fig_t fig_read(const cJSON *val, const char *key, const char *ci_key,
                      const cJSON *noise, const char *noise_key)
{
    const cJSON *v = jobj(val, key), *ci = jobj(val, ci_key);
    const cJSON *n = noise_key ? jobj(noise, noise_key) : NULL;
    fig_t f = {0};

    f.has = cJSON_IsNumber(v);
    f.v = f.has ? v->valuedouble : NAN;
    f.lo = cJSON_GetArraySize(ci) == 2 ? cJSON_GetArrayItem(ci, 0)->valuedouble : f.v;
    f.hi = cJSON_GetArraySize(ci) == 2 ? cJSON_GetArrayItem(ci, 1)->valuedouble : f.v;
    f.has_noise = cJSON_IsNumber(n);
    f.noise = f.has_noise ? n->valuedouble : NAN;
    return f;
}

/* Goals. regret: within noise when validate could not tell the recommended class from the
 * best (verdict other than "worse") or the regret is within its own noise (the recommended
 * and the best class's even/odd differences, summed). rank: within noise when its interval
 * reaches the goal, the measured order agrees with itself no better (noise rank) than the
 * interval's top, or the model orders no two classes that the device tells apart (rounds
 * that do not overlap) the other way round. |error|: within noise when its interval
 * reaches the goal or it is within the goal plus the median class's own even/odd difference
 * plus the error the device's drift from its profile explains (validate's probe) plus half
 * of how far the repeated calibration moves the predictions (cal). */
static void judge(row_t *r)
{
    const fig_t *g = &r->regret, *k = &r->rank, *e = &r->err;
    /* a device running at (1 + d) times its profile's latency: |pred - meas| / meas of
     * |d| / (1 + d) in every class, in the |error|'s own terms */
    double d = isnan(r->drift) || r->drift <= -100 ? 0 : r->drift / 100;
    double drift = fabs(d) / (1 + d) * 100, cal = isnan(r->cal) ? 0 : r->cal;

    r->g_regret = !g->has ? G_MISS : g->v <= GOAL_REGRET_PCT ? G_OK
                  : (!r->worse || (g->has_noise && g->v <= g->noise))
                      ? G_NOISE : G_MISS;
    r->g_rank = !k->has ? G_NA : k->v >= GOAL_RANK ? G_OK
                : (k->hi >= GOAL_RANK || r->pairs_otherwise == 0 ||
                   (k->has_noise && k->noise < GOAL_RANK && k->hi >= k->noise)) ? G_NOISE
                : G_MISS;
    r->g_err = !e->has ? G_MISS : e->v <= GOAL_ERR_PCT ? G_OK
               : (e->lo <= GOAL_ERR_PCT ||
                  (e->has_noise && e->v <= GOAL_ERR_PCT + e->noise + drift + cal)) ? G_NOISE
               : G_MISS;
}

/* Median over the results of measured / predicted throughput: how much of what the model
 * says the trace carries the device carried (below 1: it ran behind the trace). */
static double carried_share(const cJSON *results)
{
    double v[64];
    size_t n = 0;
    const cJSON *r;

    cJSON_ArrayForEach(r, results) {
        const cJSON *p = jobj(jobj(r, "predicted"), "throughput_gbps");
        const cJSON *m = jobj(jobj(r, "measured"), "throughput_gbps");
        if (n < 64 && cJSON_IsNumber(p) && cJSON_IsNumber(m) && p->valuedouble > 0)
            v[n++] = m->valuedouble / p->valuedouble;
    }
    return hs_median_double(v, n);
}

/* The key of objective obj in a result's "predicted" (the model's JSON names). */
static void obj_key(const char *obj, char *buf, size_t len)
{
    if (strcmp(obj, "throughput") == 0)
        snprintf(buf, len, "throughput_gbps");
    else
        snprintf(buf, len, "%.16s_us", obj);
}

/* rep's objective key and each result's hint, measured objective (validate's
 * objective_median) and predicted objective (NAN when absent) into r. */
static void obj_read(row_t *r, const cJSON *rep)
{
    const cJSON *obj = jobj(jobj(rep, "validation"), "objective"), *x;

    r->nobj = 0;
    r->obj_key[0] = 0; /* no objective: nothing predicted to compare */
    if (cJSON_IsString(obj))
        obj_key(obj->valuestring, r->obj_key, sizeof(r->obj_key));
    cJSON_ArrayForEach(x, jobj(rep, "results")) {
        const cJSON *h = jobj(x, "hint"), *m = jobj(jobj(x, "measured"), "objective_median");
        const cJSON *p = jobj(jobj(x, "predicted"), r->obj_key);
        if (r->nobj < 64 && cJSON_IsNumber(h) && cJSON_IsNumber(m) && m->valuedouble > 0) {
            r->obj_hint[r->nobj] = h->valuedouble;
            r->obj_pred[r->nobj] = cJSON_IsNumber(p) ? p->valuedouble : NAN;
            r->obj_meas[r->nobj++] = m->valuedouble;
        }
    }
}

static void row_from_json(row_t *r, const cJSON *rep)
{
    const cJSON *val = jobj(rep, "validation"), *noise = jobj(val, "noise");
    const cJSON *cls = jobj(val, "classes"), *rec = jobj(val, "recommendation");
    const cJSON *vd = jobj(rec, "verdict"), *sat = jobj(val, "saturated");

    const cJSON *pairs = jobj(val, "pairs"), *dp = jobj(jobj(val, "drift"), "drift_pct");
    const cJSON *tp = jobj(jobj(val, "drift"), "tail_drift_pct");
    const cJSON *pa = jobj(pairs, "apart"), *po = jobj(pairs, "ordered_otherwise");

    r->regret = fig_read(val, "regret_pct", "regret_ci_pct", noise, "regret_pct");
    r->rank = fig_read(val, "rank_correlation", "rank_correlation_ci", noise,
                       "rank_correlation");
    r->err = fig_read(val, "median_abs_error_pct", "median_abs_error_ci_pct", noise,
                      "median_pct");
    r->classes = cJSON_IsNumber(jobj(cls, "measured")) ? jobj(cls, "measured")->valueint : 0;
    r->classes_trace = cJSON_IsNumber(jobj(cls, "in_trace")) ? jobj(cls, "in_trace")->valueint
                                                               : 0;
    snprintf(r->verdict, sizeof(r->verdict), "%s", cJSON_IsString(vd) ? vd->valuestring : "?");
    r->worse = strcmp(r->verdict, "worse") == 0;
    r->sessions = 1;
    r->saturated = cJSON_IsTrue(sat);
    r->carried = carried_share(jobj(rep, "results"));
    r->drift = cJSON_IsNumber(dp) ? dp->valuedouble : NAN;
    r->tail = cJSON_IsNumber(tp) ? tp->valuedouble : NAN;
    r->pairs_apart = cJSON_IsNumber(pa) ? pa->valueint : 0;
    r->pairs_otherwise = cJSON_IsNumber(po) ? po->valueint : -1; /* unknown: not "none" */
    obj_read(r, rep);
    if (!cJSON_IsObject(val))
        snprintf(r->failed, sizeof(r->failed), "val.json has no \"validation\"");
}

/* Two sessions' figure: their mean, the union of their intervals and, unless half is NAN,
 * the larger within-session noise plus half (half of how far the sessions differ). */
static void fig_merge(fig_t *a, const fig_t *b, double half)
{
    if (!a->has || !b->has)
        return;
    a->v = (a->v + b->v) / 2;
    a->lo = fmin(a->lo, b->lo);
    a->hi = fmax(a->hi, b->hi);
    if (isnan(half))
        return;
    a->noise = fmax(a->has_noise ? a->noise : 0, b->has_noise ? b->noise : 0) + half;
    a->has_noise = 1;
}

/* Half of how far the two sessions measured the same classes apart, in |error|'s terms:
 * per class in both, |m1 - m2| / (m1 + m2), in %; the median over those classes. Two
 * sessions can err by the same |error| in opposite directions (one in a slow spell): their
 * |error|s then agree while their measurements do not. Without a class in both, half the
 * difference of their |error|s. */
static double sessions_half(const row_t *a, const row_t *b)
{
    double v[64];
    size_t n = 0;

    for (size_t i = 0; i < a->nobj; i++)
        for (size_t j = 0; j < b->nobj; j++)
            if (a->obj_hint[i] == b->obj_hint[j]) {
                v[n++] = fabs(a->obj_meas[i] - b->obj_meas[j]) /
                         (a->obj_meas[i] + b->obj_meas[j]) * 100;
                break;
            }
    return n ? hs_median_double(v, n) : fabs(a->err.v - b->err.v) / 2;
}

/* Fold the second session (b) into r: the figures' means (fig_merge), the drift's and the
 * throughput share's means, the pairs the worse session misorders, "worse" only when both
 * say so. */
static void row_merge(row_t *r, const row_t *b)
{
    char v[sizeof(r->verdict)];
    double err_half = sessions_half(r, b); /* before the merge changes r->err */

    fig_merge(&r->regret, &b->regret, fabs(r->regret.v - b->regret.v) / 2);
    fig_merge(&r->rank, &b->rank, NAN);
    fig_merge(&r->err, &b->err, err_half);
    r->drift = isnan(r->drift) || isnan(b->drift) ? NAN : (r->drift + b->drift) / 2;
    r->tail = isnan(r->tail) || isnan(b->tail) ? NAN : (r->tail + b->tail) / 2;
    r->carried = (r->carried + b->carried) / 2;
    r->pairs_apart = r->pairs_apart > b->pairs_apart ? r->pairs_apart : b->pairs_apart;
    r->pairs_otherwise = r->pairs_otherwise > b->pairs_otherwise ? r->pairs_otherwise
                                                                  : b->pairs_otherwise;
    r->saturated |= b->saturated;
    r->worse = r->worse && b->worse;
    snprintf(v, sizeof(v), "%.20s / %.20s", r->verdict, b->verdict);
    memcpy(r->verdict, v, sizeof(v));
    r->sessions = 2;
}

/* DIR/val2.json (bench_truth.sh's second session) into r, when it ran and parses. */
static void second_session(const char *dir, row_t *r)
{
    char path[1100], buf[32], *txt = NULL;
    cJSON *rep = NULL;
    row_t b;

    meta_get(dir, "validate2", buf, sizeof(buf));
    if (!buf[0]) /* one session: an earlier bench_truth.sh, or a random mix */
        return;
    snprintf(path, sizeof(path), "%s/val2.json", dir);
    if (strcmp(buf, "0") != 0 || hs_read_file(path, &txt, NULL) != HS_OK ||
        !(rep = cJSON_Parse(txt))) {
        snprintf(r->failed, sizeof(r->failed), "second session: validate exit %.8s "
                 "(its val2.err)", buf);
        goto free_txt;
    }
    memset(&b, 0, sizeof(b));
    row_from_json(&b, rep);
    if (!b.failed[0])
        row_merge(r, &b);
    cJSON_Delete(rep);
free_txt:
    free(txt);
}

/* Hint h's objective (key) in the model's JSON results (NAN: absent). */
static double pred_of(const cJSON *results, double h, const char *key)
{
    const cJSON *x;

    cJSON_ArrayForEach(x, results) {
        const cJSON *xh = jobj(x, "hint"), *v = jobj(x, key);
        if (cJSON_IsNumber(xh) && xh->valuedouble == h && cJSON_IsNumber(v))
            return v->valuedouble;
    }
    return NAN;
}

/* The calibration repeated (bench_truth.sh's DIR/pred2.json: validate's classes predicted
 * again under it): per class of r, half the two predictions' difference over the class's
 * measured objective, in %; the median over the classes (NAN: no repeat, or nothing to
 * compare). */
static double cal_noise(const char *dir, const row_t *r)
{
    char path[1100], buf[16], *txt = NULL;
    cJSON *p2 = NULL;
    double v[64], out = NAN;
    size_t n = 0;

    meta_get(dir, "predict2", buf, sizeof(buf));
    snprintf(path, sizeof(path), "%s/pred2.json", dir);
    if (strcmp(buf, "0") != 0 || hs_read_file(path, &txt, NULL) != HS_OK ||
        !(p2 = cJSON_Parse(txt)))
        goto free_txt;
    for (size_t i = 0; i < r->nobj; i++) {
        double pb = pred_of(jobj(p2, "results"), r->obj_hint[i], r->obj_key);
        if (!isnan(pb) && !isnan(r->obj_pred[i]))
            v[n++] = fabs(r->obj_pred[i] - pb) / 2 / r->obj_meas[i] * 100;
    }
    out = hs_median_double(v, n);
    cJSON_Delete(p2);
free_txt:
    free(txt);
    return out;
}

static void row_read(const char *dir, const char *name, row_t *r)
{
    char path[1100], buf[256], *txt = NULL;
    cJSON *rep = NULL;

    memset(r, 0, sizeof(*r));
    r->cal = NAN;
    if (name[0] == 'r')
        snprintf(r->name, sizeof(r->name), "mix %.40s", name + 2);
    else
        snprintf(r->name, sizeof(r->name), "%.60s", name + 2);
    meta_get(dir, "kind", r->kind, sizeof(r->kind));
    meta_get(dir, "mix", r->mix, sizeof(r->mix));
    meta_get(dir, "mode", r->mode, sizeof(r->mode));
    meta_get(dir, "records", buf, sizeof(buf));
    r->records = atol(buf);
    meta_get(dir, "pace", buf, sizeof(buf));
    r->pace = buf[0] ? atof(buf) : NAN;
    snprintf(path, sizeof(path), "%s/val.json", dir);
    meta_get(dir, "validate", buf, sizeof(buf));
    if (!buf[0]) { /* validate did not run: what stopped before it */
        meta_get(dir, "gen", buf, sizeof(buf));
        snprintf(r->failed, sizeof(r->failed), "%s failed (%.60s/)",
                 buf[0] ? "trace gen" : "recommend", name);
    } else if (strcmp(buf, "0") != 0)
        snprintf(r->failed, sizeof(r->failed), "validate exit %.8s (%.60s/val.err)", buf,
                 name);
    else if (hs_read_file(path, &txt, NULL) != HS_OK || !(rep = cJSON_Parse(txt)))
        snprintf(r->failed, sizeof(r->failed), "no validate report (%.60s/meta)", name);
    else {
        row_from_json(r, rep);
        r->cal = cal_noise(dir, r);
    }
    cJSON_Delete(rep);
    free(txt);
    if (!r->failed[0])
        second_session(dir, r);
    if (!r->failed[0])
        judge(r);
}

static int cmp_name(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    int kx = x->kind[0] == 'r', ky = y->kind[0] == 'r'; /* built-in first */

    return kx != ky ? kx - ky : strcmp(x->name, y->name);
}

static size_t rows_read(const char *out, row_t *rows)
{
    DIR *d = opendir(out);
    struct dirent *e;
    size_t n = 0;
    char path[1024];

    if (!d)
        return 0;
    while ((e = readdir(d)) && n < MAX_ROWS)
        if ((strncmp(e->d_name, "w-", 2) == 0 || strncmp(e->d_name, "r-", 2) == 0)) {
            snprintf(path, sizeof(path), "%s/%s", out, e->d_name);
            row_read(path, e->d_name, &rows[n++]);
        }
    closedir(d);
    qsort(rows, n, sizeof(*rows), cmp_name);
    return n;
}

/* ---- the table ------------------------------------------------------------------------- */

static const char *goal_word(goal_t g)
{
    static const char *const w[] = {"n/a", "ok", "noise", "MISS"};

    return w[g];
}

/* "12.3 [1.0, 40.2] n 3.1 ok" into buf: value, interval, noise, verdict on the goal. */
static void cell(const fig_t *f, goal_t g, int prec, char *buf, size_t len)
{
    char nz[24];

    if (!f->has) {
        snprintf(buf, len, "n/a");
        return;
    }
    if (f->has_noise)
        snprintf(nz, sizeof(nz), "%.*f", prec, f->noise);
    else
        snprintf(nz, sizeof(nz), "-");
    snprintf(buf, len, "%.*f [%.*f, %.*f] %s %s", prec, f->v, prec, f->lo, prec, f->hi, nz,
             goal_word(g));
}

/* v as a signed percentage with prec decimals; "-" when it is not a number. */
static void pct_cell(double v, int prec, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%+.*f%%", prec, v);
}

static void print_row(const row_t *r)
{
    char a[96], b[96], c[96], d[24], t[24], p[24], k[24];

    if (r->failed[0]) {
        printf("%-10s %-7s %-6s %5ld | failed: %s\n", r->name, r->kind, r->mode, r->records,
               r->failed);
        return;
    }
    cell(&r->regret, r->g_regret, 1, a, sizeof(a));
    cell(&r->rank, r->g_rank, 2, b, sizeof(b));
    cell(&r->err, r->g_err, 1, c, sizeof(c));
    pct_cell(r->drift, 1, d, sizeof(d));
    pct_cell(r->tail, 0, t, sizeof(t));
    if (isnan(r->cal))
        snprintf(k, sizeof(k), "-");
    else
        snprintf(k, sizeof(k), "%.1f%%", r->cal);
    if (r->pairs_otherwise < 0)
        snprintf(p, sizeof(p), "-");
    else
        snprintf(p, sizeof(p), "%d/%d", r->pairs_otherwise, r->pairs_apart);
    printf("%-10s %-7s %-6s %5ld %7.1f %3.0f%% %7s %6s %6s %2d/%-4d | %-32s | %-5s | %-30s | "
           "%-30s | %s%s\n", r->name, r->kind, r->mode, r->records, r->pace, r->carried * 100, d,
           t, k, r->classes, r->classes_trace, a, p, b, c, r->verdict,
           r->saturated ? " saturated" : "");
}

typedef struct {
    int rows, failed, miss, ok[3], noise[3], na_rank;
    int rows_missed; /* rows row_missed holds for: what --gate fails on */
} tally_t;

/* Did r not run, or does it miss a goal beyond the noise? The one rule of --gate and
 * --missed (the replication runs again exactly what the gate failed on). */
static int row_missed(const row_t *r)
{
    return r->failed[0] || r->g_regret == G_MISS || r->g_rank == G_MISS || r->g_err == G_MISS;
}

static void tally(const row_t *r, tally_t *t)
{
    const goal_t g[3] = {r->g_regret, r->g_rank, r->g_err};

    t->rows++;
    t->rows_missed += row_missed(r);
    if (r->failed[0]) {
        t->failed++;
        return;
    }
    for (int i = 0; i < 3; i++) {
        t->ok[i] += g[i] == G_OK;
        t->noise[i] += g[i] == G_NOISE;
        t->miss += g[i] == G_MISS;
    }
    t->na_rank += g[1] == G_NA;
}

static void print_tally(const char *what, const tally_t *t)
{
    printf("%s: %d traces (%d failed); regret met %d, within noise %d; rank correlation met "
           "%d, within noise %d, n/a %d; median |error| met %d, within noise %d; MISS beyond "
           "the noise: %d\n", what, t->rows, t->failed, t->ok[0], t->noise[0], t->ok[1],
           t->noise[1], t->na_rank, t->ok[2], t->noise[2], t->miss);
}

/* The first line of out/name into buf ("?" when absent). */
static void read_line(const char *out, const char *name, char *buf, size_t len)
{
    char path[1024], *txt = NULL;

    snprintf(path, sizeof(path), "%s/%s", out, name);
    if (access(path, R_OK) == 0 && hs_read_file(path, &txt, NULL) == HS_OK) {
        txt[strcspn(txt, "\n")] = 0;
        snprintf(buf, len, "%s", txt);
    } else {
        snprintf(buf, len, "?");
    }
    free(txt);
}

/* The calibrated profile's link.gbps (NAN without a profile). */
static double profile_link_gbps(const char *out)
{
    char path[1100], *txt = NULL;
    cJSON *p = NULL;
    double v = NAN;

    snprintf(path, sizeof(path), "%s/profile.json", out);
    if (access(path, R_OK) == 0 && hs_read_file(path, &txt, NULL) == HS_OK &&
        (p = cJSON_Parse(txt))) {
        const cJSON *g = jobj(jobj(jobj(p, "params"), "link.gbps"), "value");
        v = cJSON_IsNumber(g) ? g->valuedouble : NAN;
    }
    cJSON_Delete(p);
    free(txt);
    return v;
}

static void print_head(const char *out)
{
    char seed[64], mode[32], load[32], rc[32], obj[32], only[256];

    read_line(out, "only", only, sizeof(only)); /* "?": every workload ran */
    read_line(out, "seed", seed, sizeof(seed));
    read_line(out, "objective", obj, sizeof(obj));
    read_line(out, "mode", mode, sizeof(mode));
    read_line(out, "load", load, sizeof(load));
    read_line(out, "calibrate.rc", rc, sizeof(rc));
    double gbps = profile_link_gbps(out);
    char path[1100], *cal = NULL;

    snprintf(path, sizeof(path), "%s/calibrations", out);
    if (access(path, R_OK) == 0 && hs_read_file(path, &cal, NULL) == HS_OK) {
        for (char *c = cal; *c; c++)
            *c = *c == '\n' && c[1] ? ';' : *c == '\n' ? 0 : *c;
        printf("calibrations (kept when a validate of 8 B ping-pongs then finds the drift "
               "probe within 20%% and the p99 within 30%% of the profile and calibrate's own check "
               "passed; the one that passed is used, else the closest): "
               "%s\n", cal);
    }
    free(cal);

    printf("bench_truth: %s, objective %s, seed %s (random mixes and workloads), paced to %s "
           "of the calibrated link (link.gbps %.3g%s; calibrate exit %s)%s%s\n", mode,
           strcmp(obj, "?") ? obj : "p99", seed, load, isnan(gbps) ? 0 : gbps,
           isnan(gbps) ? ": no profile written, generic used" : "", rc,
           strcmp(only, "?") ? "; only " : "", strcmp(only, "?") ? only : "");
    printf("goals: regret <= %.0f%%, rank correlation >= %.1f, median |error| <= %.0f%%; each "
           "figure: value [95%% interval] noise verdict; a built-in workload is validated in "
           "two sessions minutes apart: value = their mean, interval = the union of theirs, "
           "and half their difference joins the noise (for |error|, half of how far they "
           "measured the same classes apart, the median class's); noise = the same "
           "classes replayed against themselves (validate's even rounds against its odd ones, "
           "the larger of the sessions'): the recommended and the best class each against "
           "itself, summed, for regret; the measured order with itself for rank correlation; "
           "the median class's difference, plus the error the drift explains (|d| / (1 + d)), "
           "plus cal, for |error|; \"noise\" = missed, but within it; stretch = how much the trace's "
           "post times were stretched to pace it; carr = measured throughput / predicted, "
           "median over the classes (below 100%%: the device ran behind the trace); drift = "
           "validate's probe (8 B single messages, what calibrate fits), its p50 measured "
           "against its prediction: how far the device ran from its profile during the run; "
           "tail = the same probe's p99 against its prediction (shown, not used: the "
           "session's tail state, which a closed loop's p99 follows); cal = the calibration "
           "repeated minutes after the first and kept by the same check, the classes predicted "
           "again under it: half of "
           "how far that moves the median class's prediction, in %% of its measured objective "
           "(how well the device's calibration reproduces itself); pairs = of the pairs of "
           "classes the device tells apart (rounds do not overlap), those the model orders "
           "the other way round where it tells them apart too (its predictions' own "
           "intervals do not overlap; none: the rank correlation is within noise)\n",
           GOAL_REGRET_PCT, GOAL_RANK, GOAL_ERR_PCT);
    printf("%-10s %-7s %-6s %5s %7s %4s %7s %6s %6s %-7s | %-32s | %-5s | %-30s | %-30s | %s\n",
           "trace", "kind", "mode", "msgs", "stretch", "carr", "drift", "tail", "cal", "classes",
           "regret %", "pairs", "rank correlation", "median |error| %", "recommendation");
}

/* Print the table of out; returns the exit status (1: --gate and a built-in miss). */
static int table(const char *out, int gate)
{
    static row_t rows[MAX_ROWS];
    size_t n = rows_read(out, rows);
    tally_t tb = {0}, tr = {0};

    print_head(out);
    for (size_t i = 0; i < n; i++) {
        print_row(&rows[i]);
        tally(&rows[i], strcmp(rows[i].kind, "builtin") == 0 ? &tb : &tr);
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i].mix[0])
            printf("%s: %s\n", rows[i].name, rows[i].mix);
    print_tally("built-in workloads", &tb);
    print_tally("random mixes", &tr);
    if (tb.rows == 0) {
        printf("bench_truth: no built-in workload ran (%s)\n", out);
        return 1;
    }
    if (gate && tb.rows_missed) {
        printf("bench_truth: FAIL: the built-in workloads miss a goal beyond the measured "
               "noise (%d) or did not run (%d)\n", tb.miss, tb.failed);
        return 1;
    }
    return 0;
}

/* Print the names of out's built-in workloads that missed (row_missed), a line each;
 * returns 1 when out holds no built-in workload. */
static int missed(const char *out)
{
    static row_t rows[MAX_ROWS];
    size_t n = rows_read(out, rows), builtin = 0;

    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].kind, "builtin") != 0)
            continue;
        builtin++;
        if (row_missed(&rows[i]))
            printf("%s\n", rows[i].name);
    }
    return builtin == 0;
}

/* ---- running the VM -------------------------------------------------------------------- */

static int run_vm(const opts_t *o)
{
    char cmd[4096];
    int rc;

    snprintf(cmd, sizeof(cmd), "bash '%s/vm-ctest.sh' '%s' - --timeout %d --hintsim '%s' "
             "--cache '%s' '%s' %s %llu %g %s", o->vm_dir, o->out, o->timeout_s, o->hintsim,
             o->cache, o->script, o->short_mode ? "short" : "full", o->seed, o->load,
             o->objective);
    fprintf(stderr, "bench_truth: %s\n", cmd);
    rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc))
        return 1;
    return WEXITSTATUS(rc);
}

static int parse(int argc, char **argv, opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **s = strcmp(a, "--hintsim") == 0 ? &o->hintsim
                         : strcmp(a, "--vm-dir") == 0 ? &o->vm_dir
                         : strcmp(a, "--script") == 0 ? &o->script
                         : strcmp(a, "--cache") == 0 ? &o->cache
                         : strcmp(a, "--out") == 0 ? &o->out
                         : strcmp(a, "--table") == 0 ? &o->table
                         : strcmp(a, "--missed") == 0 ? &o->missed
                         : strcmp(a, "--objective") == 0 ? &o->objective : NULL;
        if (strcmp(a, "--short") == 0)
            o->short_mode = 1;
        else if (strcmp(a, "--gate") == 0)
            o->gate = 1;
        else if (s && v)
            *s = argv[++i];
        else if (strcmp(a, "--seed") == 0 && v)
            o->seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--load") == 0 && v)
            o->load = atof(argv[++i]);
        else if (strcmp(a, "--timeout") == 0 && v)
            o->timeout_s = atoi(argv[++i]);
        else
            return 2;
    }
    if (o->table || o->missed)
        return 0;
    if (!o->hintsim || !o->vm_dir || !o->script || !o->cache || !o->out || !(o->load > 0) ||
        o->load > 1 || o->timeout_s <= 0 ||
        strspn(o->objective, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(o->objective))
        return 2;
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o = {.load = 0.5, .timeout_s = 3600, .objective = "p99"};
    int rc;

    rc = parse(argc, argv, &o);
    if (rc == 0 && o.missed) /* names only: what a script reads */
        return missed(o.missed);
    hs_host_print(stdout);
    if (rc != 0) {
        fprintf(stderr, "usage: bench_truth --hintsim BIN --vm-dir DIR --script SH --cache DIR "
                "--out DIR [--short] [--seed S] [--load F (0, 1]] [--objective p99|p50|mean] "
                "[--timeout SEC]\n"
                "       bench_truth --table DIR [--gate]\n"
                "       bench_truth --missed DIR\n");
        return 2;
    }
    if (o.table)
        return table(o.table, o.gate);
    rc = run_vm(&o);
    if (rc == 77) {
        printf("bench_truth: skipped: the soft-RoCE VM cannot boot here\n");
        return 0;
    }
    if (rc != 0)
        fprintf(stderr, "bench_truth: the VM run exited %d; the table shows what it left\n", rc);
    return table(o.out, 0) || rc;
}
