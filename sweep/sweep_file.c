/* sweep_file.c - atomic outputs through mkstemp temporaries named for their writer, and the
 * sweep of stale ones (see sweep_file.h).
 */
#include "sweep/sweep_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hs_util.h"

#define TMP_TAG ".tmp."
#define STAGE_PREFIX ".hintsim-stage." /* hs_stage_name's, before HOST.SPACE.PID */

void sweep_file_owner(char *buf, size_t len)
{
    char name[512];
    size_t n = strlen(STAGE_PREFIX);

    hs_stage_name(name, sizeof(name), (long)getpid());
    if (strncmp(name, STAGE_PREFIX, n) == 0)
        snprintf(buf, len, "%s", name + n);
    else
        snprintf(buf, len, "localhost.00000000.%ld", (long)getpid());
}

hs_status_t sweep_afile_open(const char *path, hs_afile_t **out)
{
    char owner[512];

    sweep_file_owner(owner, sizeof(owner));
    return hs_afile_open_owned(path, owner, out);
}

hs_status_t sweep_file_write(const char *path, const char *text)
{
    hs_afile_t *af;
    hs_status_t st = sweep_afile_open(path, &af);

    if (st != HS_OK)
        return st;
    fputs(text, hs_afile_stream(af));
    return hs_afile_commit(af);
}

/* ---- stale temporaries ---------------------------------------------------------------- */

/* How a name after its last ".tmp." reads. */
typedef enum { TMP_NONE, TMP_OLD, TMP_OWNED } tmp_kind_t;

static int span_of(const char *s, size_t n, int (*ok)(int))
{
    for (size_t i = 0; i < n; i++)
        if (!ok((unsigned char)s[i]))
            return 0;
    return n > 0;
}

static int is_host_char(int c) { return isalnum(c) || c == '-'; }

/* tail = what follows the last ".tmp.": "HOST.SPACE.PID.XXXXXX" (TMP_OWNED, *owner_len the
 * length of "HOST.SPACE." and *pid the PID) or digits (TMP_OLD: hs_afile's "<pid>"). */
static tmp_kind_t tmp_parse(const char *tail, size_t *owner_len, long *pid)
{
    const char *dot[3], *p = tail;
    char *end;

    if (span_of(tail, strlen(tail), isdigit))
        return TMP_OLD;
    for (int i = 0; i < 3; i++) {
        if (!(dot[i] = strchr(p, '.')))
            return TMP_NONE;
        p = dot[i] + 1;
    }
    if (!span_of(tail, (size_t)(dot[0] - tail), is_host_char) || dot[1] - dot[0] != 9 ||
        !span_of(dot[0] + 1, 8, isxdigit) || !span_of(dot[1] + 1, (size_t)(dot[2] - dot[1] - 1),
                                                      isdigit) ||
        strlen(p) != 6 || !span_of(p, 6, isalnum))
        return TMP_NONE;
    *pid = strtol(dot[1] + 1, &end, 10);
    *owner_len = (size_t)(dot[1] + 1 - tail);
    return *pid > 0 ? TMP_OWNED : TMP_NONE;
}

/* Whether the temporary named name (a regular file, mtime given) is stale. */
static int tmp_is_stale(const char *name, time_t mtime, unsigned max_age_s, const char *mine)
{
    const char *tag = NULL, *p = name;
    size_t owner_len = 0;
    long pid = 0;
    tmp_kind_t kind;

    while ((p = strstr(p, TMP_TAG)) != NULL)
        tag = p++;
    if (!tag || tag == name)
        return 0;
    kind = tmp_parse(tag + strlen(TMP_TAG), &owner_len, &pid);
    if (kind == TMP_NONE)
        return 0;
    if (difftime(time(NULL), mtime) > (double)max_age_s)
        return 1;
    /* a writer of this host and PID namespace: stale when its process is gone */
    return kind == TMP_OWNED && strncmp(tag + strlen(TMP_TAG), mine, owner_len) == 0 &&
           strlen(mine) == owner_len && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

hs_status_t sweep_file_sweep_stale(const char *dir, unsigned max_age_s, size_t *removed)
{
    char mine[512], path[4400];
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    hs_status_t st = HS_OK;

    if (removed)
        *removed = 0;
    if (!d)
        return errno == ENOENT ? HS_OK : HS_ERR_IO;
    sweep_file_owner(mine, sizeof(mine));
    *(strrchr(mine, '.') + 1) = '\0'; /* "HOST.SPACE." */
    while ((e = readdir(d)) != NULL) {
        struct stat sb;
        if (!strstr(e->d_name, TMP_TAG))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
            !tmp_is_stale(e->d_name, sb.st_mtime, max_age_s, mine))
            continue;
        if (unlink(path) != 0 && errno != ENOENT) {
            hs_log_error("%s: cannot remove this stale temporary: %s", path, strerror(errno));
            st = HS_ERR_IO;
            continue;
        }
        hs_log_info("%s: removed a stale temporary (its writer is gone)", path);
        n++;
    }
    closedir(d);
    if (removed)
        *removed = n;
    return st;
}
