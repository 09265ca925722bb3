/* objective.h - what a recommendation optimises: the one definition of the objectives.
 *
 * Each objective is a row of OBJ_TABLE: its enum value, its name (on the command line, in
 * sweep grids and in every JSON report), the pred_result_t figure it reads, the figure's
 * unit and whether a higher figure is better. recommend, validate, sweep, the reports and
 * the CLI take every name, list, value and direction from here. */
#ifndef HS_OBJECTIVE_H
#define HS_OBJECTIVE_H

#include <stddef.h>

#include "common/hs_status.h"
#include "model/predict/predict.h"

/* The objectives that are one figure of one result: X(ID, name, field, unit, higher_better,
 * quantile): quantile is the share of messages at or below the figure where the figure is a
 * quantile of the messages' latencies (p99: 0.99), else 0.
 * The first row is written with F and the others with X, so that a list of the names needs
 * no separator removed (OBJ_CHOICES); pass the same macro as both when that does not matter. */
#define OBJ_FIGURES(F, X)                                \
    F(P99, "p99", p99_us, "us", 0, 0.99)                 \
    X(P50, "p50", p50_us, "us", 0, 0.50)                 \
    X(MEAN, "mean", mean_us, "us", 0, 0)                 \
    X(THROUGHPUT, "throughput", throughput_gbps, "Gb/s", 1, 0)

/* The objectives that rank by a figure under a rule over all the candidates. balanced:
 * lowest p99 among the hints within 5% of the best throughput (model/recommend/recommend.c). */
#define OBJ_RULES(X) X(BALANCED, "balanced", p99_us, "us", 0, 0.99)

#define OBJ_TABLE(X) OBJ_FIGURES(X, X) OBJ_RULES(X)

#define OBJ_ENUM_(id, name, field, unit, higher, q) OBJ_##id,
typedef enum { OBJ_TABLE(OBJ_ENUM_) OBJ_COUNT } obj_t;
#undef OBJ_ENUM_

/* The names joined by '|', as string literals for option tables and usage lines:
 * OBJ_CHOICES "p99|p50|mean|throughput|balanced", OBJ_FIGURE_CHOICES without the rules. */
#define OBJ_NAME_(id, name, field, unit, higher, q) name
#define OBJ_PIPE_(id, name, field, unit, higher, q) "|" name
#define OBJ_CHOICES OBJ_FIGURES(OBJ_NAME_, OBJ_PIPE_) OBJ_RULES(OBJ_PIPE_)
#define OBJ_FIGURE_CHOICES OBJ_FIGURES(OBJ_NAME_, OBJ_PIPE_)

/* The name ("p99", ..., "balanced"); "unknown" for a value out of range. */
const char *obj_name(obj_t obj);
/* The objective named text; HS_ERR_INVALID (nothing logged) when no objective has that name. */
hs_status_t obj_parse(const char *text, obj_t *out);
/* 1 when obj is one figure of one result (not a rule over the candidates, as balanced is). */
int obj_is_figure(obj_t obj);
/* 1 when a higher figure is better (throughput). */
int obj_higher_better(obj_t obj);
/* The quantile obj's figure is of the messages' latencies (p99 and balanced: 0.99, p50:
 * 0.5); 0 when it is not a quantile (mean, throughput). */
double obj_quantile(obj_t obj);
/* The figure obj ranks by in r (balanced: p99), as it is: throughput in Gb/s, higher better. */
double obj_value(obj_t obj, const pred_result_t *r);
/* The same figure oriented so that lower is better (throughput negated). */
double obj_cost(obj_t obj, const pred_result_t *r);
/* The unit of obj_value ("us", "Gb/s"). */
const char *obj_unit(obj_t obj);
/* The names, figures only when figures_only, joined as "p99, p50, mean, throughput or
 * balanced" into buf (truncated to len); returns buf. For error messages. */
const char *obj_list(char *buf, size_t len, int figures_only);

#endif
