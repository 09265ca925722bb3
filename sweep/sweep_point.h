/* sweep_point.h - point keys and point result files.
 *
 * A point's key hashes every input that decides its result: the trace's content, the
 * effective profile (hash after overrides), the hint, objective, engine, mode and the
 * hintsim version. Its result lives in DIR/points/<key as 16 hex digits>.json, written
 * atomically, so a file that exists is complete and a resumed sweep skips it.
 */
#ifndef HS_SWEEP_POINT_H
#define HS_SWEEP_POINT_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"

/* Compute every point's key (needs sweep_grid_hash_traces first). Logs on error. */
hs_status_t sweep_point_keys(const sweep_grid_t *g, sweep_plan_t *plan, const sweep_eval_t *ev);

/* Path of a point's result file under dir ("DIR/points/0123456789abcdef.json"). */
void sweep_point_path(const char *dir, uint64_t key, char *buf, size_t buflen);

/* Evaluate one point and write its result file atomically. Logs on error. */
hs_status_t sweep_point_run(const sweep_grid_t *g, const sweep_point_t *pt,
                            const sweep_eval_t *ev, const char *dir);

/* Add r's SWEEP_RESULT_FIGURES to the JSON object o, in table order. */
struct cJSON;
void sweep_result_figures_json(struct cJSON *o, const sweep_result_t *r);

/* Read a point's result file: HS_OK with *res filled, HS_ERR_IO when it does not exist,
 * HS_ERR_INVALID (logged) when it is damaged or belongs to another key. */
hs_status_t sweep_point_load(const char *dir, uint64_t key, sweep_result_t *res);

#endif
