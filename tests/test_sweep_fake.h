/* test_sweep_fake.h - a closed-form stand-in evaluator for testing the sweep machinery
 * (keys, resume, local/MPI/Slurm engines, merge) without the model. Its value is a fixed
 * function of the point's inputs, so two runs agree exactly and a test can recompute it. */
#ifndef HS_TEST_SWEEP_FAKE_H
#define HS_TEST_SWEEP_FAKE_H

#include "sweep/sweep_eval.h"

typedef struct {
    unsigned delay_us;   /* sleep per point (to interrupt a sweep midway) */
    unsigned evals;      /* points evaluated by this process */
    size_t fail_index;   /* a point index whose evaluation fails; SIZE_MAX for none */
    size_t nan_index1;   /* 1 + a point index whose value comes out NaN; 0 for none */
} test_sweep_fake_t;

extern const sweep_eval_ops_t test_sweep_fake_ops;

/* The value the fake computes for pt (what a test expects in the outputs). */
double test_sweep_fake_value(const sweep_grid_t *g, const sweep_point_t *pt);
/* Write a grid file text to path; returns 0 on success. */
int test_sweep_write(const char *path, const char *text);

#endif
