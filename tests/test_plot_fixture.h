/* test_plot_fixture.h - a report input for the plots/report tests: a deterministic trace,
 * a fake engine with known path costs, and per-hint results computed from it. */
#ifndef HS_TEST_PLOT_FIXTURE_H
#define HS_TEST_PLOT_FIXTURE_H

#include "plots/plot_input.h"

/* The fake engine: LL costs 1 + s/1000 us, BW 3 + s/4000 us (crossover 2667 B, so the
 * first power of two where BW is no slower is 4096), times a deterministic 0-9% jitter. */
extern const pred_engine_ops_t fixture_engine_ops;

typedef struct {
    plot_input_t in;
    trace_t *tr;
    profile_t *prof;
    pred_result_t pred[4];
    pred_result_t meas[4];
} fixture_t;

/* Build the fixture; with_meas adds measured figures (predicted x 1.1) as validate would. */
fixture_t *fixture_new(int with_meas);
void fixture_free(fixture_t *f);

#endif
