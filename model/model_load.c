/* model_load.c - offered load of a trace against the modelled link (model.h): the open-loop
 * overload check behind the "open-loop latencies measure the backlog" warning. */
#include "model/model.h"
#include "model/path_rules.h"

#include <stdio.h>

/* Link time of one message sent alone as one chunk (MODEL.md section 3; the rules of
 * path_rules.h, as the replay's). */
static double msg_link_ns(const profile_t *p, uint64_t size)
{
    uint64_t mtu = p->link_mtu_bytes > 0 ? (uint64_t)p->link_mtu_bytes : 1;
    double npb = prules_per_byte(p, 8.0 / p->link_gbps, size);

    return (double)size * npb + prules_npkt(mtu, prules_log2_exact(mtu), size) * p->link_pkt_ns +
           p->link_wr_ns;
}

void model_offered_load(const trace_t *tr, const profile_t *p, model_load_t *out)
{
    uint64_t t_min = UINT64_MAX, t_max = 0;
    double bytes = 0, link_ns = 0;

    for (size_t i = 0; i < tr->n; i++) {
        const trace_rec_t *r = &tr->recs[i];
        t_min = r->t_post_ns < t_min ? r->t_post_ns : t_min;
        t_max = r->t_post_ns > t_max ? r->t_post_ns : t_max;
        bytes += (double)r->size_bytes;
        link_ns += msg_link_ns(p, r->size_bytes);
    }
    out->bytes = bytes;
    out->span_us = tr->n ? (double)(t_max - t_min) * 1e-3 : 0;
    out->link_busy_us = link_ns * 1e-3;
    out->capacity_gbps = link_ns > 0 ? bytes * 8.0 / link_ns : p->link_gbps;
    out->offered_gbps = out->span_us > 0 ? bytes * 8.0 / (out->span_us * 1e3) : 0;
    /* More link time than trace time: the backlog grows for the whole replay. A trace
     * posted all at once (span 0, a bandwidth test) is overloaded by construction. */
    out->overloaded = tr->n > 1 && out->link_busy_us > out->span_us;
}

int model_load_warning(const model_load_t *l, char *buf, size_t len)
{
    if (!l->overloaded)
        return 0;
    if (l->span_us > 0)
        snprintf(buf, len,
                 "offered load %.2f Gb/s exceeds the modelled link %.2f Gb/s (%.0f%%): "
                 "open-loop latencies measure the backlog; use --mode closed or a profile of "
                 "the capture host", l->offered_gbps, l->capacity_gbps,
                 100.0 * l->link_busy_us / l->span_us);
    else
        snprintf(buf, len,
                 "the trace posts every message at the same time (a bandwidth test): the "
                 "modelled link %.2f Gb/s needs %.1f us for them, so open-loop latencies "
                 "measure the backlog; use --mode closed or compare throughput",
                 l->capacity_gbps, l->link_busy_us);
    return 1;
}
