/* hs_progress.c - terminal progress bar (see hs_progress.h). */
#include "common/hs_progress.h"

#include <stdio.h>
#include <unistd.h>

#include "common/hs_status.h"
#include "common/hs_util.h"

void hs_progress_start(hs_progress_t *pb, const char *label, uint64_t total)
{
    pb->label = label;
    pb->total = total ? total : 1;
    pb->start_ns = hs_now_ns();
    pb->last_draw_ns = 0;
    pb->enabled = isatty(STDERR_FILENO) && !hs_log_is_quiet();
}

void hs_progress_update(hs_progress_t *pb, uint64_t done)
{
    enum { WIDTH = 30 };
    uint64_t now;
    double frac, elapsed_s, eta_s;
    int fill;

    if (!pb->enabled)
        return;
    now = hs_now_ns();
    if (now - pb->last_draw_ns < 100000000ULL && done < pb->total)
        return;
    pb->last_draw_ns = now;
    frac = (double)done / (double)pb->total;
    if (frac > 1.0)
        frac = 1.0;
    elapsed_s = (double)(now - pb->start_ns) / 1e9;
    eta_s = frac > 0 ? elapsed_s * (1.0 - frac) / frac : 0;
    fill = (int)(frac * WIDTH);
    fprintf(stderr, "\r%-12s [%.*s%*s] %5.1f%%  ETA %4.0fs ", pb->label, fill,
            "==============================", WIDTH - fill, "", frac * 100.0, eta_s);
    fflush(stderr);
}

void hs_progress_finish(hs_progress_t *pb)
{
    if (!pb->enabled)
        return;
    fprintf(stderr, "\r%80s\r", "");
    fflush(stderr);
}
