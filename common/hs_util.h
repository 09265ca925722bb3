/* hs_util.h - small helpers shared by every module: parsing sizes and numbers,
 * monotonic time, hashing, and atomic output files (write to a temporary, rename). */
#ifndef HS_UTIL_H
#define HS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/hs_status.h"

/* Parse a byte count with optional suffix K, M or G (powers of two; "16K" = 16384).
 * Accepts a trailing "B" or "iB" ("16KB", "16KiB"). Returns HS_ERR_INVALID on junk,
 * negative numbers or overflow; *out is set only on success. Does not log. */
hs_status_t hs_parse_size(const char *text, uint64_t *out);

/* Parse a comma-separated list of sizes ("8,64K,1M") into a malloc'ed array the caller
 * frees. Empty items are an error. Does not log. */
hs_status_t hs_parse_size_list(const char *text, uint64_t **out, size_t *n_out);

/* Parse a finite double (no NaN/inf). Does not log. */
hs_status_t hs_parse_double(const char *text, double *out);

/* Parse a non-negative integer that fits in uint64_t. Does not log. */
hs_status_t hs_parse_u64(const char *text, uint64_t *out);

/* Format a byte count for people: 8 -> "8B", 16384 -> "16K", 1572864 -> "1.5M". */
void hs_format_size(uint64_t bytes, char *buf, size_t buflen);

/* Write s for a terminal: control characters (C0, DEL, and C1 as UTF-8 encodes them) as
 * \xNN, so a string read from a file cannot move the cursor, retitle the window or hide
 * text. Returns the bytes written (for padding a column). */
size_t hs_fputs_plain(FILE *fp, const char *s);

/* The next value of a splitmix64 generator (Steele, Lea, Flood; any state *s, 0 included):
 * seeding a larger generator, or a short stream of well-mixed values from a seed. */
static inline uint64_t hs_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The next value of a xorshift64 generator (Marsaglia; state *s, never 0): shuffles,
 * bootstrap resampling and seeded test inputs, where a reproducible stream matters and
 * quality beyond that does not. */
static inline uint64_t hs_xorshift64(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Power-of-two size classes, as hints split sizes (a size <= hint takes the LL path):
 * class 0 holds sizes 0 and 1, class 1 size 2, class k >= 2 sizes (2^(k-1), 2^k];
 * HS_SIZE_CLASSES in all. model's by-size results and trace info's histogram use them. */
#define HS_SIZE_CLASSES 65
static inline unsigned hs_size_class(uint64_t size)
{
    return size <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(size - 1);
}
/* The smallest and largest size of class k. */
void hs_size_class_bounds(unsigned k, uint64_t *lo, uint64_t *hi);

/* qsort comparator for uint64_t, ascending. */
int hs_cmp_u64(const void *a, const void *b);
/* qsort comparator for double, ascending (no NaN: they would compare equal to all). */
int hs_cmp_double(const void *a, const void *b);
/* The median of v[0..n): the middle value, or the mean of the two middle ones (v is sorted
 * in place; NAN when n is 0). */
double hs_median_double(double *v, size_t n);

/* The k-th smallest of v[0..n) (k < n, 0-based), in O(n) expected and O(n log n) at worst;
 * reorders v. */
uint64_t hs_select_u64(uint64_t *v, size_t n, size_t k);

/* Sort v[0..n) ascending when every value is positive and finite (their bit patterns then
 * order as unsigned integers): a radix sort, O(n), with an n-value scratch array of its
 * own. HS_ERR_NOMEM when that cannot be had (v untouched). */
hs_status_t hs_sort_pos_floats(float *v, size_t n);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t hs_now_ns(void);

/* 64-bit FNV-1a hash of a buffer, chainable through seed (start with HS_FNV_SEED). */
#define HS_FNV_SEED 1469598103934665603ULL
uint64_t hs_hash64(const void *buf, size_t len, uint64_t seed);

/* An output file that appears under its final name only when complete.
 * hs_afile_open creates "<path>.tmp.<pid>" next to path; hs_afile_commit fsyncs, closes and
 * renames it over path; hs_afile_abort closes and removes the temporary. Exactly one of
 * commit/abort must be called; both free the object. Errors are logged with the path.
 * "-" is standard output, and a path that names something other than a regular file (a
 * FIFO, /dev/stdout, a terminal) is written in place: neither can be made atomic, so an
 * abort leaves what was written there. */
typedef struct hs_afile hs_afile_t;
hs_status_t hs_afile_open(const char *path, hs_afile_t **out);
/* The pid of the writer whose temporary name is name ("<path>.tmp.<pid>", where the last
 * ".tmp." starts at name + *path_len); 0 when name is not one. */
long hs_afile_tmp_pid(const char *name, size_t *path_len);
/* hs_afile_open for files other processes read, maybe on other hosts (a sweep's): the
 * temporary is made by mkstemp (O_EXCL) as "<path>.tmp.<owner>.XXXXXX", so two writers never
 * share one, with mode 0666 less the umask (mkstemp's 0600 would hide it from the group);
 * path is always a regular file here (no "-", no in-place write). */
hs_status_t hs_afile_open_owned(const char *path, const char *owner, hs_afile_t **out);
FILE *hs_afile_stream(hs_afile_t *af);
hs_status_t hs_afile_commit(hs_afile_t *af);
void hs_afile_abort(hs_afile_t *af);

/* Write a whole NUL-terminated string to path atomically (via hs_afile). */
hs_status_t hs_write_file_atomic(const char *path, const char *text);

/* hs_hash64 of a whole file's bytes (from seed) and its length, read in pieces: constant
 * memory whatever the file's size. Logs on error. */
hs_status_t hs_hash_file(const char *path, uint64_t seed, uint64_t *hash_out, size_t *len_out);

/* Read a whole file into a malloc'ed NUL-terminated buffer (caller frees). Logs on error.
 * A regular file or a pipe, "-" for standard input (a FIFO without a writer reads as empty,
 * never waits); devices,
 * sockets and directories are refused (HS_ERR_IO), and so is a file larger than
 * HS_READ_FILE_MAX bytes (HS_ERR_INVALID). */
#define HS_READ_FILE_MAX ((size_t)256 << 20)
hs_status_t hs_read_file(const char *path, char **out, size_t *len_out);

/* Whether a file can be written at path later (its directory exists and is writable, and
 * path is not a directory): checked before a long run whose result goes there, so that a
 * typo fails at once. HS_ERR_IO naming the path and why, logged; else HS_OK. */
hs_status_t hs_check_out_path(const char *path);

/* mkdir -p. Logs on error. */
hs_status_t hs_mkdir_p(const char *path);

/* Outputs that replace DIR's earlier ones together (a report): written into a staging
 * folder DIR/.hintsim-stage.HOST.SPACE.PID (hs_stage_open creates DIR too), then moved in by
 * hs_stage_commit, which also removes the files of DIR that owns() claims and the new set
 * lacks (an earlier run's figure this one did not draw); hs_stage_abort removes the stage
 * and leaves DIR as it was. stage is a buffer of len bytes. hs_stage_open also removes
 * the stage folders in DIR of this host and PID namespace (named exactly as hs_stage_name,
 * real directories) whose process is gone (kill(PID, 0): ESRCH), left by killed runs; never
 * one whose PID is alive (a concurrent run), nor another host's (DIR on a shared file
 * system) or another PID namespace's (containers sharing a host name and DIR). */
hs_status_t hs_stage_open(const char *dir, char *stage, size_t len); /* stage "" on failure */
/* The stage folder name of process pid on this host: ".hintsim-stage.HOST.SPACE.PID", HOST
 * the host name with characters other than letters, digits and '-' made '-', SPACE 8 hex
 * digits naming the PID namespace (a hash of /proc/self/ns/pid). */
void hs_stage_name(char *buf, size_t len, long pid);
hs_status_t hs_stage_commit(const char *stage, const char *dir, int (*owns)(const char *name));
void hs_stage_abort(const char *stage);

#endif
