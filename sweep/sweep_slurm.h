/* sweep_slurm.h - a Slurm script for a sweep. Run from a shell (`bash FILE`), it submits an
 * array job whose task I runs the same sweep restricted to slice I/N (`--slice I/N`), and a
 * merge job (`--dependency=afterany:<array job>`) that runs the sweep with `--merge` once
 * every task has ended: the one process that writes the merged outputs. Given to sbatch
 * directly it runs the array alone. Every job first checks that it sees the output
 * directory's marker (SWEEP_SLURM_MARKER), written by --emit-slurm: the directory must be
 * on a file system shared by every node (sweep/GRID.md).
 */
#ifndef HS_SWEEP_SLURM_H
#define HS_SWEEP_SLURM_H

#include <stddef.h>

#include "common/hs_status.h"

/* The file in the output directory that every job must see (a shared file system). */
#define SWEEP_SLURM_MARKER ".hintsim-sweep"

/* Default number of array tasks for npoints points: at least SWEEP_SLURM_MIN_PER_TASK points a
 * task (a task's start, scheduling, loading the trace and profiles, costs as much as several
 * points), at most SWEEP_SLURM_MAX_TASKS tasks, and never more tasks than points. */
#define SWEEP_SLURM_MIN_PER_TASK 8u
#define SWEEP_SLURM_MAX_TASKS 64u
unsigned sweep_slurm_default_slices(size_t npoints);

typedef struct {
    const char *path;         /* the script; "-" = standard output */
    const char *const *args;  /* the command each job runs: the hintsim binary first, then
                               * "sweep" and its inputs, absolute paths */
    size_t nargs;
    size_t npoints;           /* for the comment */
    unsigned nslices;         /* array tasks, >= 1 */
    const char *dir;          /* the output directory, absolute: job logs and the marker */
} sweep_slurm_script_t;

/* Write the script (atomically unless to standard output). Each array task appends
 * "--jobs ${SLURM_CPUS_PER_TASK:-1} --slice ${SLURM_ARRAY_TASK_ID}/N" to args, the merge job
 * "--merge", then both the script's own arguments. */
hs_status_t sweep_slurm_write(const sweep_slurm_script_t *s);

/* Write DIR/SWEEP_SLURM_MARKER (naming this host), which every job checks it can see. */
hs_status_t sweep_slurm_mark_dir(const char *dir);

/* Parse "I/N" (0 <= I < N). Does not log. */
hs_status_t sweep_slice_parse(const char *text, unsigned *i, unsigned *n);

#endif
