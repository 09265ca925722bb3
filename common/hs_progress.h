/* hs_progress.h - a progress bar with ETA on stderr, drawn only when stderr is a terminal
 * and logging is not quiet. Redraws at most ~10 times a second, so hs_progress_update
 * is cheap enough to call per work item. */
#ifndef HS_PROGRESS_H
#define HS_PROGRESS_H

#include <stdint.h>

typedef struct {
    const char *label;
    uint64_t total;
    uint64_t start_ns;
    uint64_t last_draw_ns;
    int enabled;
} hs_progress_t;

/* Start a bar for total units of work (label is borrowed, must outlive the bar). */
void hs_progress_start(hs_progress_t *pb, const char *label, uint64_t total);
/* Report that done units are finished. */
void hs_progress_update(hs_progress_t *pb, uint64_t done);
/* Erase the bar. */
void hs_progress_finish(hs_progress_t *pb);

#endif
