/* cap_pace.c - the pacing progress loop of cap_pace.h. */
#include "capture/cap_pace.h"

#include <string.h>

#include "common/hs_util.h"

void cap_pace_init(cap_pace_t *w, cap_ep_t *ep)
{
    memset(w, 0, sizeof(*w));
    w->ep = ep;
    w->pass_ns = 1000;
    ep->progress = cap_pace_progress;
    ep->progress_arg = w;
}

void cap_pace_fini(cap_pace_t *w)
{
    w->ep->progress = NULL;
    w->ep->progress_arg = NULL;
}

/* No clock read unless a completion is there (cap_qp_poll stamps it). */
hs_status_t cap_pace_progress(void *arg)
{
    cap_pace_t *w = arg;
    hs_status_t st = HS_OK;

    w->passes++;
    w->polls++;
    for (int p = 0; st == HS_OK && p < CAP_NPATHS; p++)
        st = cap_qp_poll(w->ep, &w->ep->qp[p]);
    return st;
}

uint64_t cap_pace_clock(cap_pace_t *w)
{
    uint64_t now = hs_now_ns();

    if (w->clock_ns != 0 && w->passes == 0)
        return now; /* no poll since: the interval goes on */
    if (w->clock_ns != 0) {
        w->pass_ns = (now - w->clock_ns) / w->passes;
        if (w->pass_ns == 0)
            w->pass_ns = 1;
        cap_hist_add(&w->gap, w->pass_ns);
    }
    w->clock_ns = now;
    w->passes = 0;
    return now;
}

hs_status_t cap_pace_until(cap_pace_t *w, uint64_t t_ns)
{
    uint64_t now;
    hs_status_t st = cap_pace_progress(w);

    for (now = cap_pace_clock(w); st == HS_OK && now < t_ns; now = cap_pace_clock(w)) {
        uint64_t n = (t_ns - now) / (2 * w->pass_ns);
        if (n < 1)
            n = 1;
        if (n > CAP_PACE_MAX_PASSES)
            n = CAP_PACE_MAX_PASSES;
        for (uint64_t k = 0; st == HS_OK && k < n; k++)
            st = cap_pace_progress(w);
    }
    return st;
}
