/* cap_hist.c - the log-linear duration histogram of cap_hist.h. */
#include "capture/cap_hist.h"

#include <math.h>

static unsigned hist_bin(uint64_t v)
{
    unsigned e;

    if (v < CAP_HIST_SUB)
        return (unsigned)v;
    e = 63u - (unsigned)__builtin_clzll(v); /* >= CAP_HIST_SUB_BITS */
    return (e - CAP_HIST_SUB_BITS + 1u) * CAP_HIST_SUB +
           (unsigned)((v >> (e - CAP_HIST_SUB_BITS)) - CAP_HIST_SUB);
}

/* The middle of bin b's range of values. */
static double hist_value(unsigned b)
{
    unsigned e, sub;

    if (b < CAP_HIST_SUB)
        return b;
    e = b / CAP_HIST_SUB + CAP_HIST_SUB_BITS - 1u;
    sub = b % CAP_HIST_SUB;
    return ldexp((double)(CAP_HIST_SUB + sub) + 0.5, (int)(e - CAP_HIST_SUB_BITS));
}

void cap_hist_add(cap_hist_t *h, uint64_t ns)
{
    h->bin[hist_bin(ns)]++;
    h->n++;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

double cap_hist_pctl_us(const cap_hist_t *h, double q)
{
    uint64_t rank = (uint64_t)ceil(q * (double)h->n), seen = 0;

    if (h->n == 0)
        return 0;
    if (rank == 0)
        rank = 1;
    for (unsigned b = 0; b < CAP_HIST_BINS; b++) {
        seen += h->bin[b];
        if (seen >= rank)
            return fmin(hist_value(b), (double)h->max_ns) / 1e3;
    }
    return (double)h->max_ns / 1e3;
}

double cap_hist_max_us(const cap_hist_t *h)
{
    return (double)h->max_ns / 1e3;
}

cJSON *cap_hist_triple_json(double p50_us, double p99_us, double max_us)
{
    cJSON *j = cJSON_CreateObject();

    if (!j)
        return NULL;
    cJSON_AddNumberToObject(j, "p50", p50_us);
    cJSON_AddNumberToObject(j, "p99", p99_us);
    cJSON_AddNumberToObject(j, "max", max_us);
    return j;
}

cJSON *cap_hist_json(const cap_hist_t *h)
{
    return cap_hist_triple_json(cap_hist_pctl_us(h, 0.50), cap_hist_pctl_us(h, 0.99),
                                cap_hist_max_us(h));
}
