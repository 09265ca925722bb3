/* sweep_file.h - how a sweep writes the files that other processes read, maybe on other
 * hosts of a shared file system (point files, sweep.csv, sweep.json, the Slurm script):
 * each is written to a temporary made by mkstemp (O_EXCL) in the target's own folder,
 * named "<file>.tmp.<host>.<space>.<pid>.XXXXXX", and renamed over the target when
 * complete, so a file that exists under its name is whole and two writers never share a
 * temporary, whatever host or PID namespace they run in. <host> is the host name with
 * every character but letters, digits and '-' made '-', <space> 8 hex digits naming the
 * PID namespace (as hs_stage_name). A killed writer's temporary stays until a sweep of
 * stale temporaries (sweep_file_sweep_stale) removes it.
 */
#ifndef HS_SWEEP_FILE_H
#define HS_SWEEP_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "common/hs_status.h"
#include "common/hs_util.h"

/* A temporary older than this many seconds is stale whoever wrote it: a temporary lives
 * only while one file is written (milliseconds), so an hour means its writer died. */
#define SWEEP_TMP_STALE_S 3600u

/* An output file that appears under its name only when complete: hs_afile_open_owned
 * (common/hs_util.h) with this process's sweep_file_owner; written, committed and aborted
 * with hs_afile_stream, hs_afile_commit and hs_afile_abort. */
hs_status_t sweep_afile_open(const char *path, hs_afile_t **out);

/* Write a whole NUL-terminated string to path that way. */
hs_status_t sweep_file_write(const char *path, const char *text);

/* This process's "<host>.<space>.<pid>" token (what follows ".tmp." in its temporaries). */
void sweep_file_owner(char *buf, size_t len);

/* Remove the stale temporaries in dir (not below it): files named "<file>.tmp.<owner>.XXXXXX"
 * older than max_age_s seconds, or written on this host and PID namespace by a process
 * that is gone (kill(pid, 0): ESRCH); also the "<file>.tmp.<pid>" of older hintsim
 * versions once older than max_age_s. A temporary of a live process, or another host's
 * younger than max_age_s (it may be being written), stays. A missing dir is no error.
 * *removed (may be NULL) counts the files removed; each is logged as info. */
hs_status_t sweep_file_sweep_stale(const char *dir, unsigned max_age_s, size_t *removed);

#endif
