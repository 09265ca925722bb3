/* sweep_slurm.h - a Slurm batch script for a sweep: `sbatch --array` where array task I runs
 * the same sweep restricted to slice I/N (`--slice I/N`). Slices share the output directory
 * (a shared file system); the task that finds every point done writes the merged outputs,
 * and re-running the sweep without --slice merges too, recomputing nothing.
 */
#ifndef HS_SWEEP_SLURM_H
#define HS_SWEEP_SLURM_H

#include <stddef.h>

#include "common/hs_status.h"

/* Write the script to path atomically. args[0..nargs) is the command each task runs (the
 * hintsim binary first; absolute paths), to which "--slice ${SLURM_ARRAY_TASK_ID}/N" is
 * appended, then the script's own arguments. npoints is for the comment; nslices >= 1
 * array tasks; dir gets the task logs. */
hs_status_t sweep_slurm_write(const char *path, const char *const *args, size_t nargs,
                              size_t npoints, unsigned nslices, const char *dir);

/* Parse "I/N" (0 <= I < N). Does not log. */
hs_status_t sweep_slice_parse(const char *text, unsigned *i, unsigned *n);

#endif
