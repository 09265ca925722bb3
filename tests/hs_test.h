/* hs_test.h - shared helpers for hintsim's cmocka tests: temp dirs and running the CLI. */
#ifndef HS_TEST_H
#define HS_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Make a fresh temporary directory (mkdtemp under $TMPDIR or /tmp); caller frees the path. */
char *hs_test_tmpdir(void);
/* Path of the hintsim binary under test (env HINTSIM_BIN, set by CTest). */
const char *hs_test_bin(void);
/* Path of a file in the source tree (env HINTSIM_SRC + rel); static buffer. */
const char *hs_test_src(const char *rel);
/* Run a shell command line; returns its exit status (0-255) or -1. stdout+stderr are
 * captured into *out (malloc'ed, caller frees) when out is non-NULL. */
int hs_test_run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What this process writes to stderr between hs_test_stderr_begin and hs_test_stderr_end
 * (into a temp file, stderr put back after): the text, malloc'ed, caller frees; it is
 * also written to the real stderr, for the test's log. hs_test_capture_begin does the same
 * for stdout (target 1) or stderr (2); hs_test_stderr_end ends either. */
typedef struct {
    char path[64];
    int fd, saved, target;
} hs_test_stderr_t;
void hs_test_capture_begin(hs_test_stderr_t *c, int target);
void hs_test_stderr_begin(hs_test_stderr_t *c);
char *hs_test_stderr_end(hs_test_stderr_t *c);

#endif
