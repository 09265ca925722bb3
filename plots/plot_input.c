/* plot_input.c - provenance helpers for plot_input_t; see plot_input.h. */
#include "plots/plot_input.h"

#include <stdio.h>
#include <string.h>

#include "common/hs_util.h"

const char *plot_source_str(plot_source_t src)
{
    static const char *const names[] = {"measured", "simulated", "modelled", "synthetic"};

    if ((unsigned)src < sizeof(names) / sizeof(names[0]))
        return names[src];
    return "unknown";
}

plot_source_t plot_input_pred_source(const plot_input_t *in)
{
    return in->engine && strcmp(in->engine, "sim") == 0 ? PLOT_SRC_SIMULATED
                                                         : PLOT_SRC_MODELLED;
}

plot_source_t plot_input_trace_source(const plot_input_t *in)
{
    return in->trace->hdr.mode == TRACE_MODE_SYNTHETIC ? PLOT_SRC_SYNTHETIC
                                                       : PLOT_SRC_MEASURED;
}

int plot_input_hint0_idx(const plot_input_t *in)
{
    for (size_t i = 0; i < in->npred; i++)
        if (in->pred[i].hint_bytes == 0)
            return (int)i;
    return -1;
}

hs_status_t plot_input_check(const plot_input_t *in)
{
    if (!in->trace || !in->profile || !in->pred || in->npred == 0) {
        hs_log_error("report: nothing to draw (trace, profile and at least one predicted "
                     "hint are needed)");
        return HS_ERR_INVALID;
    }
    if (in->rec_idx >= (int)in->npred || in->runner_idx >= (int)in->npred) {
        hs_log_error("report: recommended/runner-up index out of range (%d, %d of %zu)",
                     in->rec_idx, in->runner_idx, in->npred);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

void plot_size_label(uint64_t bytes, char *buf, size_t len)
{
    if (bytes < 1024 || bytes % 1024 == 0)
        hs_format_size(bytes, buf, len);
    else
        snprintf(buf, len, "%lluB", (unsigned long long)bytes);
}
