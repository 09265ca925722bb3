/* recommend.c - candidate hints, parallel evaluation, ranking, the deciding cost term and
 * the source documents' warnings (seed 000's pitfalls, seed 002's cold start). */
#include "model/recommend/recommend.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/recommend/hint_class.h"
#include "model/model.h"
#include "model/path_rules.h"

#define REC_SAMPLE_MAX 1000000
#define REC_TIE_REL 1e-9

void rec_format_hint(uint64_t b, char *buf, size_t len)
{
    if (b && b % (1ULL << 30) == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(b >> 30));
    else if (b && b % (1ULL << 20) == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(b >> 20));
    else if (b && b % 1024 == 0)
        snprintf(buf, len, "%lluK", (unsigned long long)(b >> 10));
    else
        snprintf(buf, len, "%lluB", (unsigned long long)b);
}

void rec_label_hint(uint64_t b, char *buf, size_t len)
{
    char short_form[32];

    rec_format_hint(b, short_form, sizeof(short_form));
    if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%llu (%s)", (unsigned long long)b, short_form);
    else
        snprintf(buf, len, "%llu", (unsigned long long)b);
}

const char *rec_fmt_cell(double v, int width, char *buf, size_t len)
{
    for (int d = 3; d >= 0; d--)
        if (snprintf(buf, len, "%.*f", d, v) <= width)
            return buf;
    snprintf(buf, len, "%.*e", width > 8 ? width - 7 : 1, v);
    return buf;
}

/* ---- candidates ------------------------------------------------------------------- */

/* Sorted sample of at most REC_SAMPLE_MAX sizes, evenly strided. */
static hs_status_t size_sample(const trace_t *tr, uint64_t **out, size_t *n_out)
{
    size_t stride = tr->n > REC_SAMPLE_MAX ? tr->n / REC_SAMPLE_MAX + 1 : 1;
    size_t n = (tr->n + stride - 1) / stride;
    uint64_t *s = malloc((n ? n : 1) * sizeof(*s));

    if (!s)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        s[i] = tr->recs[i * stride].size_bytes;
    qsort(s, n, sizeof(*s), hs_cmp_u64);
    *out = s;
    *n_out = n;
    return HS_OK;
}

static uint64_t sample_q(const uint64_t *s, size_t n, double q)
{
    size_t i = (size_t)ceil(q * (double)n);
    return s[i ? (i > n ? n - 1 : i - 1) : 0];
}

static const double g_quantiles[] = {0.10, 0.25, 0.50, 0.75, 0.90, 0.99};

/* Keep the smallest of the sorted hints c[0..*n) that are one configuration over tr (the
 * same class, model/recommend/hint_class.h: 57344 and 65536 when the largest size is 57344), so no
 * two candidates rank noise against each other. */
static hs_status_t one_per_class(const trace_t *tr, uint64_t *c, size_t *n)
{
    rec_class_sizes_t cls;
    size_t u = 0;
    hs_status_t st = rec_class_scan(tr, &cls);

    if (st != HS_OK)
        return st;
    for (size_t i = 0; i < *n; i++)
        if (u == 0 || !rec_class_same(&cls, c[i], c[u - 1]))
            c[u++] = c[i];
    rec_class_release(&cls);
    *n = u;
    return HS_OK;
}

hs_status_t rec_candidates_auto(const trace_t *tr, uint64_t **out, size_t *n_out)
{
    uint64_t *s = NULL, *c = NULL, lo, hi;
    size_t ns = 0, n = 0;
    hs_status_t st = size_sample(tr, &s, &ns);

    if (st != HS_OK)
        return st;
    if (ns == 0) {
        free(s);
        hs_log_error("the trace has no records: no candidate hints");
        return HS_ERR_INVALID;
    }
    c = malloc((8 + 70) * sizeof(*c));
    if (!c) {
        free(s);
        return HS_ERR_NOMEM;
    }
    lo = s[0] ? s[0] : 1;
    hi = s[ns - 1];
    for (size_t i = 0; i < tr->n; i++) /* the sample may miss the true maximum */
        if (tr->recs[i].size_bytes > hi)
            hi = tr->recs[i].size_bytes;
    c[n++] = 0;
    for (unsigned k = 63u - (unsigned)__builtin_clzll(lo); k < 64; k++) {
        c[n++] = 1ULL << k;
        if ((1ULL << k) >= hi)
            break;
    }
    for (size_t q = 0; q < sizeof(g_quantiles) / sizeof(g_quantiles[0]); q++)
        c[n++] = sample_q(s, ns, g_quantiles[q]);
    c[n++] = hi; /* everything on LL */
    qsort(c, n, sizeof(*c), hs_cmp_u64);
    free(s);
    st = one_per_class(tr, c, &n);
    if (st != HS_OK) {
        free(c);
        return st;
    }
    *out = c;
    *n_out = n;
    return HS_OK;
}

/* ---- ranking --------------------------------------------------------------------- */

/* Whether two objective values are equal for ranking (to REC_TIE_REL). */
static int rec_tie(double va, double vb)
{
    return fabs(va - vb) <= REC_TIE_REL * fmax(fabs(va), fabs(vb));
}

/* Whether x may be recommended: under balanced only a hint within 5% of the best
 * throughput; under the other objectives every hint. */
static int rec_eligible(obj_t obj, const pred_result_t *x, double best_gbps)
{
    return obj != OBJ_BALANCED || x->throughput_gbps >= 0.95 * best_gbps;
}

/* 1 if a ranks before b under obj (ties: the smaller hint, seed 000's "median plus a bit,
 * not the maximum"). best_gbps is for balanced. */
static int rec_before(obj_t obj, const pred_result_t *a, const pred_result_t *b,
                      double best_gbps)
{
    double va = obj_value(obj, a), vb = obj_value(obj, b);
    int ea = rec_eligible(obj, a, best_gbps), eb = rec_eligible(obj, b, best_gbps);

    if (ea != eb)
        return ea;
    if (!rec_tie(va, vb))
        return obj_higher_better(obj) ? va > vb : va < vb;
    return a->hint_bytes < b->hint_bytes;
}

/* How much better a is than b on obj, relative to b (0.007: 0.7% lower latency or higher
 * throughput); negative when a is worse. A b of 0 gives 1 (100%) when a is better. */
static double rec_gain(obj_t obj, const pred_result_t *a, const pred_result_t *b)
{
    double va = obj_value(obj, a), vb = obj_value(obj, b);
    double d = obj_higher_better(obj) ? va - vb : vb - va;

    if (fabs(vb) > 0)
        return d / fabs(vb);
    return d > 0 ? 1.0 : 0.0;
}

/* The margin o asks for, as applied (0: strict). */
static double rec_margin(const rec_opts_t *o)
{
    if (o->margin < 0)
        return 0;
    return o->margin > 0 ? o->margin : REC_MARGIN_DEFAULT;
}

/* The smallest eligible hint that the best does not beat by more than the margin (results
 * are sorted by hint): a larger hint must earn its place (model/README.md, "How recommend
 * picks"). */
static size_t within_margin(const rec_report_t *r, double best_gbps)
{
    const pred_result_t *b = &r->results[r->best];

    for (size_t i = 0; i < r->n; i++)
        if (rec_eligible(r->objective, &r->results[i], best_gbps) &&
            rec_gain(r->objective, b, &r->results[i]) <= r->margin + REC_TIE_REL)
            return i;
    return r->best;
}

static void rank(rec_report_t *r)
{
    double best_gbps = 0;
    size_t w = 0, ru = SIZE_MAX;

    for (size_t i = 0; i < r->n; i++)
        best_gbps = fmax(best_gbps, r->results[i].throughput_gbps);
    for (size_t i = 1; i < r->n; i++)
        if (rec_before(r->objective, &r->results[i], &r->results[w], best_gbps))
            w = i;
    r->best = w;
    w = within_margin(r, best_gbps);
    for (size_t i = 0; i < r->n; i++)
        if (i != w && (ru == SIZE_MAX ||
                       rec_before(r->objective, &r->results[i], &r->results[ru], best_gbps)))
            ru = i;
    r->winner = w;
    r->runner_up = ru == SIZE_MAX ? w : ru; /* the best when the margin passed it over */
}

/* r->policy: why the winner and not the best, or by how much it beats every smaller
 * eligible hint. */
static void policy(rec_report_t *r)
{
    const pred_result_t *w = &r->results[r->winner];
    const char *obj = obj_name(r->objective);
    char hw[48], ho[48];
    double best_gbps = 0, closest = INFINITY;
    size_t near = SIZE_MAX;

    rec_label_hint(w->hint_bytes, hw, sizeof(hw));
    if (r->winner != r->best) {
        rec_label_hint(r->results[r->best].hint_bytes, ho, sizeof(ho));
        snprintf(r->policy, sizeof(r->policy), "hint %s is %.2g%% better than hint %s on %s, "
                 "under the %g%% margin: hint %s recommended (a larger hint must beat every "
                 "smaller one by more than the margin; --margin sets it)", ho,
                 100 * rec_gain(r->objective, &r->results[r->best], w), hw, obj,
                 100 * r->margin, hw);
        return;
    }
    for (size_t i = 0; i < r->n; i++)
        best_gbps = fmax(best_gbps, r->results[i].throughput_gbps);
    for (size_t i = 0; i < r->winner; i++) {
        double g = rec_gain(r->objective, w, &r->results[i]);
        if (rec_eligible(r->objective, &r->results[i], best_gbps) && g < closest) {
            closest = g;
            near = i;
        }
    }
    if (near == SIZE_MAX) {
        snprintf(r->policy, sizeof(r->policy), "hint %s is the smallest candidate%s and the "
                 "best on %s", hw, r->objective == OBJ_BALANCED ? " within 5%% of the best "
                 "throughput" : "", obj);
        return;
    }
    rec_label_hint(r->results[near].hint_bytes, ho, sizeof(ho));
    if (r->margin > 0)
        snprintf(r->policy, sizeof(r->policy), "hint %s beats every smaller hint on %s by "
                 "more than the %g%% margin (the closest, hint %s, by %.3g%%)", hw, obj,
                 100 * r->margin, ho, 100 * closest);
    else
        snprintf(r->policy, sizeof(r->policy), "hint %s is the best on %s, ranked strictly "
                 "(no margin; the closest smaller hint, %s, by %.3g%%)", hw, obj, ho,
                 100 * closest);
}

static const char *const g_terms[] = {"queue wait", "drain", "coalescing", "L1", "base"};
static const char *const g_term_keys[] = {"queue", "drain", "coalesce", "l1", "base"};

static void costs_array(const pred_costs_t *c, double v[5])
{
    v[0] = c->queue_us;
    v[1] = c->drain_us;
    v[2] = c->coalesce_us;
    v[3] = c->l1_us;
    v[4] = c->base_us;
}

/* The cost term whose total differs most between cost arrays cw and cu (index into
 * g_terms). */
static size_t separating_term(const double cw[5], const double cu[5])
{
    double best = -1;
    size_t k = 4;

    for (size_t t = 0; t < 5; t++)
        if (fabs(cu[t] - cw[t]) > best) {
            best = fabs(cu[t] - cw[t]);
            k = t;
        }
    return k;
}

static void explain(rec_report_t *r, size_t nmsg)
{
    const pred_result_t *w = &r->results[r->winner], *u = &r->results[r->runner_up];
    double cw[5], cu[5];
    double vw = obj_value(r->objective, w), vu = obj_value(r->objective, u);
    const char *obj = obj_name(r->objective);
    char hw[48], hu[48];

    if (r->winner == r->runner_up) {
        snprintf(r->why, sizeof(r->why), "only one candidate was evaluated: nothing to "
                 "compare it with");
        r->why_term = "none";
        return;
    }
    rec_label_hint(w->hint_bytes, hw, sizeof(hw));
    rec_label_hint(u->hint_bytes, hu, sizeof(hu));
    if (rec_tie(vw, vu)) {
        snprintf(r->why, sizeof(r->why), "hints %s and %s tie on %s (%.6g and %.6g): the "
                 "smaller hint is recommended (seed 000: cover the median plus a bit, not the "
                 "maximum); no cost term separates them", hw, hu, obj, vw, vu);
        r->why_term = "tie";
        return;
    }
    costs_array(&w->costs, cw);
    costs_array(&u->costs, cu);
    size_t k = separating_term(cw, cu);
    r->why_term = g_term_keys[k];
    if (r->winner != r->best) { /* the margin kept the smaller hint */
        snprintf(r->why, sizeof(r->why),
                 "hint %s has %s %.4g vs %.4g for hint %s, %.2g%% apart, within the %g%% "
                 "margin: the smaller hint is kept; the cost term that differs most is %s: "
                 "%.3f us per message with hint %s, %.3f with hint %s", hw, obj, vw, vu, hu,
                 100 * rec_gain(r->objective, u, w), 100 * r->margin, g_terms[k],
                 cw[k] / (double)nmsg, hw, cu[k] / (double)nmsg, hu);
        return;
    }
    if (obj_higher_better(r->objective)) {
        snprintf(r->why, sizeof(r->why),
                 "hint %s reaches %.4g Gb/s vs %.4g for hint %s (the replay of the whole trace "
                 "ends sooner); the cost term that differs most per message is %s: %.3f us "
                 "with hint %s, %.3f with hint %s", hw, vw, vu, hu, g_terms[k],
                 cw[k] / (double)nmsg, hw, cu[k] / (double)nmsg, hu);
        return;
    }
    snprintf(r->why, sizeof(r->why),
             "hint %s has %s %.4g vs %.4g for hint %s; the cost term that separates them is "
             "%s: %.3f us per message with hint %s, %.3f with hint %s (%s)",
             hw, obj, vw, vu, hu, g_terms[k], cw[k] / (double)nmsg, hw, cu[k] / (double)nmsg,
             hu, cw[k] < cu[k] ? "lower for the recommended hint"
                               : "higher for the recommended hint, which wins on other terms");
}

/* ---- warnings --------------------------------------------------------------------- */

static hs_status_t warn(rec_report_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static hs_status_t warn(rec_report_t *r, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    char **grown = realloc(r->warnings, (r->nwarnings + 1) * sizeof(*grown));

    if (!grown)
        return HS_ERR_NOMEM;
    r->warnings = grown;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    r->warnings[r->nwarnings] = strdup(buf);
    if (!r->warnings[r->nwarnings])
        return HS_ERR_NOMEM;
    r->nwarnings++;
    return HS_OK;
}

/* Open loop on a trace that offers more than the modelled link carries: every hint's
 * latency is the backlog, so the ranking says little (model_offered_load). */
static hs_status_t warn_overload(rec_report_t *r, const trace_t *tr, const profile_t *p,
                                 const pred_opts_t *po)
{
    char buf[400];

    if (po->mode != PRED_OPEN)
        return HS_OK;
    model_offered_load(tr, p, &r->load);
    if (!model_load_warning(&r->load, buf, sizeof(buf)))
        return HS_OK;
    r->overloaded = 1;
    return warn(r, "%s", buf);
}

/* Open loop on a request/response trace: when nearly every message was posted after the
 * previous one completed, the application waited for its completions, and replaying the
 * recorded post times regardless of the modelled completions overstates queueing and
 * coalescing (a batch that never fills is never reported). */
static hs_status_t warn_closed_shape(rec_report_t *r, const trace_t *tr, const pred_opts_t *po)
{
    size_t known = 0, after = 0;

    if (po->mode != PRED_OPEN || tr->n < 10)
        return HS_OK;
    for (size_t i = 1; i < tr->n; i++) {
        uint64_t done = tr->recs[i - 1].t_done_ns;
        if (done == TRACE_TIME_UNKNOWN)
            continue;
        known++;
        after += tr->recs[i].t_post_ns >= done;
    }
    if (known < tr->n / 2 || after < known * 9 / 10)
        return HS_OK;
    return warn(r, "%.1f%% of messages were posted after the previous one completed: the "
                "trace looks closed-loop (request/response), and open-loop replay overstates "
                "queueing and coalescing for it; rerun with --mode closed",
                100.0 * (double)after / (double)known);
}

static hs_status_t warn_sizes(rec_report_t *r, const trace_t *tr)
{
    uint64_t *s = NULL;
    size_t ns = 0;
    hs_status_t st = size_sample(tr, &s, &ns);

    if (st != HS_OK)
        return st;
    uint64_t p1 = sample_q(s, ns, 0.01), p99 = sample_q(s, ns, 0.99);
    free(s);
    if (p99 >= 1000 * (p1 ? p1 : 1))
        return warn(r, "message sizes span %.1f orders of magnitude (p1 %llu B, p99 %llu B): "
                    "seed 000 says no single hint helps much here; consider one connection "
                    "per size class or staying on the generic path",
                    log10((double)p99 / (double)(p1 ? p1 : 1)), (unsigned long long)p1,
                    (unsigned long long)p99);
    return HS_OK;
}

static hs_status_t warn_results(rec_report_t *r, const profile_t *p)
{
    const pred_result_t *w = &r->results[r->winner];
    hs_status_t st = HS_OK;
    char h[48];

    if (w->count && w->switches * 100 > w->count)
        st = warn(r, "the recommended hint switches paths on %.1f%% of messages (drain "
                  "%.1f us in total): seed 000 warns that switching oscillates; raise "
                  "switch.hysteresis or move the hint out of the medium band",
                  100.0 * (double)w->switches / (double)w->count, w->drain_us_total);
    const pred_result_t *b = &r->results[r->baseline], *worst = NULL;
    char list[256] = "";
    size_t len = 0, nbad = 0;
    for (size_t i = 0; st == HS_OK && i < r->n; i++) {
        const pred_result_t *c = &r->results[i];
        if (c->ll_fraction > 0 && c->count && c->p99_us >= 3 * c->p50_us &&
            c->p99_us >= 2 * b->p99_us) {
            rec_label_hint(c->hint_bytes, h, sizeof(h));
            if (len < sizeof(list) - 40)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
                                        nbad ? ", " : "", h);
            nbad++;
            if (!worst || c->p99_us > worst->p99_us)
                worst = c;
        }
    }
    if (st != HS_OK || !worst)
        return st;
    /* on an overloaded trace the backlog gives such tails too: not said to be pitfall 1 */
    char cause[320];
    if (r->overloaded)
        snprintf(cause, sizeof(cause), "; with the trace overloading the link (above) the "
                 "backlog can cause this as much as the shallow LL queue (ll.depth %g, seed "
                 "000 pitfall 1): check with --mode closed", p->ll_depth);
    else
        snprintf(cause, sizeof(cause), ": dense traffic on the shallow LL queue (ll.depth %g, "
                 "an event per message) gives periodic spikes, seed 000 pitfall 1; cover the "
                 "median plus a bit, not the maximum", p->ll_depth);
    return warn(r, "hint%s %s: p99 up to %.1f us, %.1fx its p50 and %.1fx hint 0's p99 "
                "(%llu queue-full stalls)%s", nbad > 1 ? "s" : "", list, worst->p99_us,
                worst->p99_us / worst->p50_us, worst->p99_us / b->p99_us,
                (unsigned long long)worst->sq_full_stalls, cause);
}

static hs_status_t warn_flat(rec_report_t *r)
{
    double lo = INFINITY, hi = -INFINITY;

    for (size_t i = 0; i < r->n; i++) {
        double v = obj_value(r->objective, &r->results[i]);
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    if (r->n > 1 && hi - lo <= 0.02 * fabs(lo))
        return warn(r, "every candidate is within 2%% on %s: the hint hardly matters for this "
                    "trace under this profile (a live run showing no difference may also mean "
                    "the hint is not honoured, seed 000 pitfall 2)",
                    obj_name(r->objective));
    if (r->results[r->winner].cold_count)
        return warn(r, "%llu cold-start messages are reported apart and not ranked (seed 002)",
                    (unsigned long long)r->results[r->winner].cold_count);
    return HS_OK;
}

/* ---- representativeness ----------------------------------------------------------- */

/* Fewer ranked messages than this: a p99 is the largest of them, one message decides. */
#define REC_MIN_MESSAGES 100
/* Fewer messages than this between the two hints compared: the choice rests on them. */
#define REC_MIN_DECIDING 20

/* Messages with size in (lo, hi]: the ones two hints route differently. */
static size_t sizes_between(const trace_t *tr, uint64_t lo, uint64_t hi)
{
    size_t k = 0;

    for (size_t i = 0; i < tr->n; i++)
        k += tr->recs[i].size_bytes > lo && tr->recs[i].size_bytes <= hi;
    return k;
}

/* The trace's span (first to last post), us. */
static double span_us(const trace_t *tr)
{
    uint64_t lo = UINT64_MAX, hi = 0;

    for (size_t i = 0; i < tr->n; i++) {
        lo = tr->recs[i].t_post_ns < lo ? tr->recs[i].t_post_ns : lo;
        hi = tr->recs[i].t_post_ns > hi ? tr->recs[i].t_post_ns : hi;
    }
    return tr->n ? (double)(hi - lo) * 1e-3 : 0;
}

/* A trace too small to stand for the workload: too few messages ranked, too few between
 * the hints that decide, or shorter than a path's warm-up (its moderation period; after a
 * switch the perturbation window). */
static hs_status_t warn_tiny(rec_report_t *r, const trace_t *tr, const profile_t *p)
{
    const pred_result_t *w = &r->results[r->winner], *u = &r->results[r->runner_up];
    double span = span_us(tr), warm = fmax(p->ll_coal_period_us, p->bw_coal_period_us);
    hs_status_t st = HS_OK;
    char hw[48], hu[48];

    if (w->count < REC_MIN_MESSAGES)
        st = warn(r, "only %llu message%s ranked: with fewer than %d a p99 is the largest of "
                  "them and one message decides; the recommendation does not stand for the "
                  "workload (capture a longer run)", (unsigned long long)w->count,
                  w->count == 1 ? " is" : "s are", REC_MIN_MESSAGES);
    if (st == HS_OK && r->runner_up != r->winner) {
        uint64_t lo = w->hint_bytes < u->hint_bytes ? w->hint_bytes : u->hint_bytes;
        uint64_t hi = w->hint_bytes ^ u->hint_bytes ^ lo;
        size_t k = sizes_between(tr, lo, hi);
        rec_label_hint(w->hint_bytes, hw, sizeof(hw));
        rec_label_hint(u->hint_bytes, hu, sizeof(hu));
        if (k < REC_MIN_DECIDING)
            st = warn(r, "hint %s against hint %s rests on %zu message%s (the sizes %llu..%llu "
                      "B the two route differently), fewer than %d: too few to tell the two "
                      "apart", hw, hu, k, k == 1 ? "" : "s", (unsigned long long)lo + 1,
                      (unsigned long long)hi, REC_MIN_DECIDING);
    }
    if (st == HS_OK && tr->n > 1 && span < warm)
        st = warn(r, "the trace lasts %.4g us, shorter than a path's moderation period (%g "
                  "us): its completions are reported by the timer alone, as in a path's "
                  "warm-up, not in steady state", span, warm);
    if (st == HS_OK && w->switches && span < p->switch_perturb_window_us)
        st = warn(r, "the trace lasts %.4g us, shorter than the %g us perturbation window "
                  "after a path switch (switch.perturb_window_us): every message after the "
                  "first switch is in it, so the figures are a warm-up's", span,
                  p->switch_perturb_window_us);
    return st;
}

/* ---- path load ------------------------------------------------------------------ */

/* Add one message of size s on path `path` of rules r to l's bound times (us): the CPU
 * (posts, doorbells, one completion event per batch) and the window (each WR holds its slot
 * from its post through the wire and back to its event; W_P slots). Each is the least the
 * message can cost there, so a path found saturated is saturated. */
static void path_msg(const profile_t *p, const prules_t *r, int path, uint64_t s,
                     rec_path_load_t *l)
{
    const prules_path_t *pp = &r->path[path];
    double nwr = (double)prules_nwr(pp->seg_bytes, pp->seg_shift, s);
    double ser = (double)s * prules_per_byte(p, r->ns_per_byte, s) +
                 prules_npkt(r->mtu_bytes, r->mtu_shift, s) * r->pkt_ns + nwr * r->wr_ns;
    double post_wr = r->post_ns + r->l1x_ns + r->doorbell_ns * ceil(nwr / pp->batch) / nwr;
    double event_wr = pp->event_ns / pp->batch;
    double dma = s <= pp->inline_bytes ? 0 : r->dma_ns;
    double hold = post_wr + dma + ser / nwr + r->wire2_ns * prules_lat_factor(p, s) +
                  pp->fixed_ns + pp->event_ns;

    l->cpu_us += nwr * (post_wr + event_wr) * 1e-3;
    l->window_us += nwr * hold / pp->window * 1e-3;
    l->count++;
    l->bytes += (double)s;
}

/* The binding bound of the path's own resources (CPU, window; the link both paths share
 * is the offered-load check's, model_offered_load). */
static void path_finish(rec_path_load_t *l, double span_us)
{
    double need = fmax(l->cpu_us, l->window_us);

    l->span_us = span_us;
    l->bound = need == l->cpu_us ? "CPU" : "window";
    l->sustained_gbps = need > 0 ? l->bytes * 8e-3 / need : 0;
    l->offered_gbps = span_us > 0 ? l->bytes * 8e-3 / span_us : 0;
    l->saturated = l->count > 1 && need > span_us;
}

hs_status_t rec_path_load(const trace_t *tr, const profile_t *p, uint64_t hint_bytes,
                          rec_path_load_t out[2])
{
    prules_t r;
    uint64_t t_min = UINT64_MAX, t_max = 0;
    hs_status_t st = prules_init(p, hint_bytes, &r);

    memset(out, 0, 2 * sizeof(*out));
    if (st != HS_OK)
        return st;
    for (int k = 0; k < PRULES_NPATHS; k++) {
        out[k].path = k;
        out[k].hint_bytes = hint_bytes;
        out[k].window = r.path[k].window;
        out[k].batch = r.path[k].batch;
        out[k].event_us = r.path[k].event_ns * 1e-3;
    }
    for (size_t i = 0; i < tr->n; i++) {
        const trace_rec_t *x = &tr->recs[i];
        t_min = x->t_post_ns < t_min ? x->t_post_ns : t_min;
        t_max = x->t_post_ns > t_max ? x->t_post_ns : t_max;
        int k = prules_class(hint_bytes, x->size_bytes);
        path_msg(p, &r, k, x->size_bytes, &out[k]);
    }
    for (int k = 0; k < PRULES_NPATHS; k++)
        path_finish(&out[k], tr->n ? (double)(t_max - t_min) * 1e-3 : 0);
    return HS_OK;
}

int rec_path_load_warning(const rec_path_load_t *l, char *buf, size_t len)
{
    const char *name = l->path == PRULES_LL ? "LL" : "BW";
    char h[48], why[160];

    if (!l->saturated)
        return 0;
    rec_label_hint(l->hint_bytes, h, sizeof(h));
    if (strcmp(l->bound, "CPU") == 0)
        snprintf(why, sizeof(why), "the CPU: posts, and a %.3g us completion event every %u "
                 "WR%s", l->event_us, l->batch, l->batch == 1 ? "" : "s");
    else
        snprintf(why, sizeof(why), "its %u-WR window, each slot held for a round trip",
                 l->window);
    snprintf(buf, len, "hint %s: the %s path sustains %.3g Gb/s for the %zu messages it "
             "carries (bound by %s), this trace offers %.3g Gb/s on it: open-loop latencies "
             "measure the backlog on the %s path (seed 000 pitfall 1); a smaller hint, a "
             "deeper %s queue or fewer completion events relieve it", h, name,
             l->sustained_gbps, l->count, why, l->offered_gbps, name, name);
    return 1;
}

/* Open loop: every candidate's paths against what the trace offers them; one warning for
 * the recommended hint's saturated paths, one naming the other candidates where the LL
 * path saturates; each saturated path kept for the JSON (path_load). */
static hs_status_t warn_paths(rec_report_t *r, const trace_t *tr, const profile_t *p,
                              const pred_opts_t *po)
{
    char buf[600], list[256] = "";
    size_t len = 0, nother = 0;
    rec_path_load_t last = {0};
    hs_status_t st = HS_OK;

    if (po->mode != PRED_OPEN)
        return HS_OK;
    r->path_load = calloc(2 * r->n, sizeof(*r->path_load));
    if (!r->path_load)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < r->n && st == HS_OK; i++) {
        rec_path_load_t l[2];
        st = rec_path_load(tr, p, r->results[i].hint_bytes, l);
        for (int k = 0; st == HS_OK && k < PRULES_NPATHS; k++) {
            if (!l[k].saturated)
                continue;
            r->path_load[r->npath_load++] = l[k];
            if (i == r->winner && rec_path_load_warning(&l[k], buf, sizeof(buf)))
                st = warn(r, "%s", buf);
            else if (k == PRULES_LL && len < sizeof(list) - 40) {
                rec_label_hint(l[k].hint_bytes, buf, sizeof(buf));
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
                                        nother++ ? ", " : "", buf);
                last = l[k];
            }
        }
    }
    if (st == HS_OK && nother)
        st = warn(r, "the LL path cannot carry what this trace offers it at hint%s %s (at "
                  "the last: it sustains %.3g Gb/s, bound by the %s, against %.3g Gb/s "
                  "offered; report.json path_load has each): their open-loop latencies "
                  "measure a backlog", nother > 1 ? "s" : "", list, last.sustained_gbps,
                  last.bound, last.offered_gbps);
    return st;
}

/* ---- the profile ------------------------------------------------------------------ */

const char *rec_profile_caveat(const profile_t *p)
{
    int measured = 0;

    for (int k = 0; k < PROF_NPARAMS; k++)
        measured |= strncmp(profile_source(p, (prof_param_id_t)k), "default", 7) != 0;
    if (measured && strcmp(p->origin, "builtin:generic") != 0)
        return NULL;
    return "this profile holds defaults only, with no measurement behind them: the figures "
           "below do not describe any real host; use a seed profile (hintsim profile list) "
           "or one made by hintsim calibrate on the target host";
}

/* ---- entry ------------------------------------------------------------------------ */

static hs_status_t candidate_list(const trace_t *tr, const rec_opts_t *o, uint64_t **out,
                                  size_t *n)
{
    uint64_t *c;

    if (!o->candidates)
        return rec_candidates_auto(tr, out, n);
    c = malloc((o->ncandidates + 1) * sizeof(*c));
    if (!c)
        return HS_ERR_NOMEM;
    c[0] = 0; /* hint 0 is always shown */
    memcpy(c + 1, o->candidates, o->ncandidates * sizeof(*c));
    qsort(c, o->ncandidates + 1, sizeof(*c), hs_cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i <= o->ncandidates; i++)
        if (i == 0 || c[i] != c[u - 1])
            c[u++] = c[i];
    *out = c;
    *n = u;
    return HS_OK;
}

static hs_status_t evaluate(const pred_engine_ops_t *eng, const trace_t *tr,
                            const profile_t *p, const rec_opts_t *o, const uint64_t *hints,
                            rec_report_t *out)
{
    pred_ctx_t c = {eng, tr, p, &o->pred};
    hs_progress_t bar;
    hs_status_t st;

    if (o->progress)
        hs_progress_start(&bar, "candidates", out->n);
    out->threads_used = pred_threads(o->threads);
    st = pred_run_hints(&c, hints, out->n, out->threads_used, out->results,
                        o->progress ? &bar : NULL);
    if (o->progress)
        hs_progress_finish(&bar);
    return st;
}

/* The warnings on a ranked report, in the order they print. */
static hs_status_t rec_warn_all(rec_report_t *out, const trace_t *tr, const profile_t *p,
                                const rec_opts_t *o, int cold_only)
{
    hs_status_t st = warn_overload(out, tr, p, &o->pred);

    if (st != HS_OK)
        return st;
    st = warn_tiny(out, tr, p);
    if (st != HS_OK)
        return st;
    st = warn_paths(out, tr, p, &o->pred);
    if (st != HS_OK)
        return st;
    st = warn_closed_shape(out, tr, &o->pred);
    if (st != HS_OK)
        return st;
    st = warn_sizes(out, tr);
    if (st != HS_OK)
        return st;
    st = warn_results(out, p);
    if (st != HS_OK)
        return st;
    st = warn_flat(out);
    if (st != HS_OK || !cold_only)
        return st;
    return warn(out, "every one of the %zu messages is flagged cold-start: ranked on them "
                "all, as with --include-cold (with none in steady state there is nothing "
                "else to rank)", tr->n);
}

hs_status_t rec_run(const pred_engine_ops_t *eng, const trace_t *tr, const profile_t *p,
                    const rec_opts_t *o, rec_report_t *out)
{
    uint64_t *hints = NULL, t0 = hs_now_ns();
    int cold_only = !o->pred.include_cold && pred_all_cold(tr); /* pred_summarize counts them */
    hs_status_t st;

    memset(out, 0, sizeof(*out));
    out->objective = o->objective;
    out->margin = rec_margin(o);
    if (tr->n == 0) {
        hs_log_error("the trace has no records: nothing to recommend");
        return HS_ERR_INVALID;
    }
    st = candidate_list(tr, o, &hints, &out->n);
    if (st != HS_OK)
        return st;
    out->results = calloc(out->n, sizeof(*out->results));
    st = out->results ? evaluate(eng, tr, p, o, hints, out) : HS_ERR_NOMEM;
    out->wall_s = (double)(hs_now_ns() - t0) * 1e-9;
    if (st != HS_OK)
        goto release_report;
    rank(out);
    explain(out, tr->n);
    policy(out);
    st = rec_warn_all(out, tr, p, o, cold_only);
    if (st != HS_OK)
        goto release_report;
    free(hints);
    return HS_OK;

release_report:
    rec_report_release(out);
    free(hints);
    return st;
}

void rec_report_release(rec_report_t *r)
{
    for (size_t i = 0; r->results && i < r->n; i++)
        pred_result_release(&r->results[i]);
    free(r->results);
    for (size_t i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    free(r->path_load);
    memset(r, 0, sizeof(*r));
}
