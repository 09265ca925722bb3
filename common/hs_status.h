/* hs_status.h - one status type for all of hintsim (0 ok, negative errors).
 *
 * Library code returns an hs_status_t and logs the error once, where it is first
 * understood (hs_log_error). main() maps the status to the exit code of CLI.md:
 * 0 ok, 1 bad input or failed check, 2 usage, 3 environment (device, tool missing).
 */
#ifndef HS_STATUS_H
#define HS_STATUS_H

#include <stdarg.h>

typedef enum {
    HS_OK = 0,
    HS_ERR_INVALID = -1,     /* bad input: file content, parameter value -> exit 1 */
    HS_ERR_IO = -2,          /* file missing, unreadable, unwritable -> exit 1 */
    HS_ERR_NOMEM = -3,       /* allocation failed -> exit 1 */
    HS_ERR_USAGE = -4,       /* bad command line -> exit 2 */
    HS_ERR_ENV = -5,         /* missing device, tool, CUDA -> exit 3 */
    HS_ERR_CHECK = -6,       /* a check the user asked for failed -> exit 1 */
    HS_ERR_TIMEOUT = -7,     /* a bounded wait ran out (peer, device) -> exit 1 */
    HS_ERR_UNSUPPORTED = -8, /* not available in this build or on this device -> exit 3 */
    HS_ERR_INTERNAL = -9,    /* a bug in hintsim -> exit 1 */
} hs_status_t;

/* Short constant description of a status ("invalid input", ...); never NULL. */
const char *hs_status_str(hs_status_t st);

/* The process exit code CLI.md assigns to a status. */
int hs_status_exit_code(hs_status_t st);

/* Print "hintsim: error: <msg>\n" to stderr. Use once per error, where it is understood. */
void hs_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "hintsim: warning: <msg>\n" to stderr. */
void hs_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "hintsim: <msg>\n" to stderr unless quiet was requested (hs_log_set_quiet). */
void hs_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Silence hs_log_info (errors and warnings still print). */
void hs_log_set_quiet(int quiet);
int hs_log_is_quiet(void);

#endif
