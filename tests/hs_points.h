/* hs_points.h - what-if points at random for the tests that compare engines over a grid
 * (tests/test_model_grid.c, tests/gpu/test_sweep_cuda.c): one definition of the grid. */
#ifndef HS_POINTS_H
#define HS_POINTS_H

#include <stdint.h>

#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "traces/trace.h"

#define HS_POINTS_N 256 /* points per trace, profile and mode */

/* A what-if point of base: about a third of the parameters moved within their bounds
 * (path_rules.c): scaled, a zero one set to a small value, segments of none, 3000 B (not a
 * power of two), 4 KB or 64 KB, MTUs of 1500 or 9000 B among the others, irq on or off; the
 * size factors scaled. Valid (profile_validate, prules_init at hints 0 and 1); the caller
 * frees it. rng: an xorshift64 state. */
profile_t *hs_point_of(const profile_t *base, uint64_t *rng);
/* A hint from none to everything-LL. */
uint64_t hs_point_hint(uint64_t *rng);

/* One cell of the grid: a sample trace, a built-in profile (the base of its points) and
 * a mode, with their names for messages. */
typedef struct {
    const trace_t *tr;
    const profile_t *base;
    pred_opts_t o;           /* the mode, nothing else set */
    const char *path, *profile;
} hs_cell_t;

/* A point of cell c (hs_point_of its base) that c's trace allows (pred_check_trace: its
 * segments), and its hint (hs_point_hint), drawn again until one does; the caller frees
 * it. */
profile_t *hs_point_draw(const hs_cell_t *c, uint64_t *rng, uint64_t *hint);
/* fn on every cell: each sample trace (the .hst files of traces/samples) x built-in
 * profile x open and closed loop, the profiles and modes of one trace in a row, less the
 * cells whose trace the base profile cannot replay in that mode (a closed loop without
 * completions); logs quiet meanwhile. Returns the traces. */
size_t hs_points_samples(void (*fn)(const hs_cell_t *c));

#endif
