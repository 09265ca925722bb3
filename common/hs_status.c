/* hs_status.c - status strings, exit-code mapping and the stderr logger. */
#include "common/hs_status.h"

#include <stdio.h>

static int g_quiet; /* set once by main from --quiet; read-only afterwards */

#define HS_STATUS_MAP(X)                                     \
    X(HS_OK, "success", 0)                                   \
    X(HS_ERR_INVALID, "invalid input", 1)                    \
    X(HS_ERR_IO, "input/output error", 1)                    \
    X(HS_ERR_NOMEM, "out of memory", 1)                      \
    X(HS_ERR_USAGE, "usage error", 2)                        \
    X(HS_ERR_ENV, "environment problem", 3)                  \
    X(HS_ERR_CHECK, "check failed", 1)                       \
    X(HS_ERR_TIMEOUT, "timed out", 1)                        \
    X(HS_ERR_UNSUPPORTED, "not supported here", 3)           \
    X(HS_ERR_INTERNAL, "internal error", 1)

const char *hs_status_str(hs_status_t st)
{
    switch (st) {
#define X(id, str, code) case id: return str;
        HS_STATUS_MAP(X)
#undef X
    }
    return "unknown status";
}

int hs_status_exit_code(hs_status_t st)
{
    switch (st) {
#define X(id, str, code) case id: return code;
        HS_STATUS_MAP(X)
#undef X
    }
    return 1;
}

static void log_v(const char *tag, const char *fmt, va_list ap)
{
    fputs("hintsim: ", stderr);
    if (tag)
        fputs(tag, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void hs_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_v("error: ", fmt, ap);
    va_end(ap);
}

void hs_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_v("warning: ", fmt, ap);
    va_end(ap);
}

void hs_log_info(const char *fmt, ...)
{
    va_list ap;
    if (g_quiet)
        return;
    va_start(ap, fmt);
    log_v(NULL, fmt, ap);
    va_end(ap);
}

void hs_log_set_quiet(int quiet) { g_quiet = quiet; }
int hs_log_is_quiet(void) { return g_quiet; }
