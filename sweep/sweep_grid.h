/* sweep_grid.h - a what-if grid (sweep/GRID.md): what to vary, and its expansion into points.
 *
 * A grid names traces, profiles, fixed overrides, axes of profile parameters to vary,
 * hints (sizes or "auto"), an objective, an engine and a replay mode. sweep_grid_load
 * parses and checks it (every error names the file and the entry, before any point runs);
 * sweep_plan_build expands it into points in a fixed order: traces, profiles, then each
 * axis in file order (the first outermost), hints innermost.
 */
#ifndef HS_SWEEP_GRID_H
#define HS_SWEEP_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"

/* One axis: a profile parameter and the values it takes, each kept as the override
 * "KEY=VALUE" with the value in canonical text ("ll.depth=16"). */
typedef struct {
    char *key;
    char **assign;
    size_t n;
} sweep_axis_t;

/* The value part of an axis entry ("16" of "ll.depth=16"). */
const char *sweep_axis_value(const sweep_axis_t *ax, size_t i);

typedef struct {
    char *path;          /* resolved path (relative entries are relative to the grid file) */
    char *label;         /* what the outputs name: as written in the grid; for --trace, the
                          * canonical absolute path (the same however it was typed) */
    uint64_t hash;       /* FNV-1a of the file's bytes (sweep_grid_hash_traces) */
    uint64_t size_bytes;
} sweep_trace_t;

typedef struct {
    int is_auto;         /* 1: the recommended hint (the engine searches) */
    uint64_t bytes;      /* the hint when !is_auto (0 = no hint) */
} sweep_hint_t;

typedef struct {
    char *path;                    /* the grid file as given ("-": standard input) */
    char *canon;                   /* what the outputs name: its canonical absolute path
                                    * (realpath), the same however it was typed; "-" */
    sweep_trace_t *traces;
    size_t ntraces;
    char **profiles;               /* built-in names, or files by canonical absolute path */
    size_t nprofiles;
    size_t nprofiles_grid;         /* profiles[0..nprofiles_grid) are the grid file's, the
                                    * rest came from --profile (for error messages) */
    char **fixed;                  /* "KEY=VALUE" applied to every point, canonical */
    size_t nfixed;
    sweep_axis_t *axes;
    size_t naxes;
    sweep_hint_t *hints;
    size_t nhints;
    char objective[16];            /* p99|p50|mean|throughput|balanced */
    char engine[16];               /* model|sim */
    char mode[8];                  /* open|closed */
} sweep_grid_t;

/* Extra entries from the command line (--trace, --profile, --set), appended to the grid's. */
typedef struct {
    const char *const *traces;
    size_t ntraces;
    const char *const *profiles;
    size_t nprofiles;
    const char *const *sets;
    size_t nsets;
} sweep_grid_extra_t;

/* Parse and check the grid file at path plus extra (may be NULL). Checks every key, value,
 * axis and that each trace file exists; logs the first error naming file and entry.
 * The caller owns *out (sweep_grid_free). */
hs_status_t sweep_grid_load(const char *path, const sweep_grid_extra_t *extra,
                            sweep_grid_t **out);
/* Read every trace file and fill its content hash and size. Logs the file on error. */
hs_status_t sweep_grid_hash_traces(sweep_grid_t *g);
void sweep_grid_free(sweep_grid_t *g);

/* Canonical text for a profile value ("48K" -> "49152", "1.50" -> "1.5"); key must be a
 * known profile parameter. Logs "<where>: ..." on error. buf gets at most buflen bytes. */
hs_status_t sweep_value_canon(const char *where, const char *key, const char *text, char *buf,
                              size_t buflen);

/* One point of the expanded grid. */
typedef struct {
    size_t index;     /* position in the plan (stable for a given grid) */
    size_t trace;     /* index into grid->traces */
    size_t profile;   /* index into grid->profiles */
    const size_t *ax; /* grid->naxes value indices, one per axis (points into the plan) */
    size_t hint;      /* index into grid->hints */
    uint64_t key;     /* hash of every input (sweep_point_keys); 0 until computed */
} sweep_point_t;

typedef struct {
    sweep_point_t *pts;
    size_t n;
    size_t *ax_store; /* n * naxes indices */
} sweep_plan_t;

/* Expand g into points (no evaluation). Caller frees with sweep_plan_free. */
hs_status_t sweep_plan_build(const sweep_grid_t *g, sweep_plan_t **out);
void sweep_plan_free(sweep_plan_t *plan);

/* The overrides of one point as "KEY=VALUE" strings: fixed ones first, then one per axis.
 * Fills at most cap pointers (borrowed from g) and returns how many there are. */
size_t sweep_point_sets(const sweep_grid_t *g, const sweep_point_t *pt, const char **sets,
                        size_t cap);
/* Text of a point's hint: "auto" or the byte count. */
void sweep_hint_text(const sweep_hint_t *h, char *buf, size_t buflen);

#endif
