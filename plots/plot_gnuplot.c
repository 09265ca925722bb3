/* plot_gnuplot.c - locate and run gnuplot; see plot_gnuplot.h.
 *
 * gnuplot runs as a child process in the output directory (so the scripts name their
 * files relative to it) with stdout/stderr sent to NAME.log, which is quoted in the
 * error message when gnuplot fails and removed when it succeeds.
 */
#include "plots/plot_gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_util.h"

static int is_executable(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

hs_status_t plot_gnuplot_find(char *buf, size_t len)
{
    const char *env = getenv("HINTSIM_GNUPLOT");
    const char *path = getenv("PATH");
    char cand[4096];

    if (env && *env) {
        if (!is_executable(env))
            return HS_ERR_ENV;
        snprintf(buf, len, "%s", env);
        return HS_OK;
    }
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);

        if (n > 0 && n < sizeof(cand) - 16) {
            snprintf(cand, sizeof(cand), "%.*s/gnuplot", (int)n, path);
            if (is_executable(cand)) {
                snprintf(buf, len, "%s", cand);
                return HS_OK;
            }
        }
        path = colon ? colon + 1 : NULL;
    }
    return HS_ERR_ENV;
}

/* Run gnuplot with one argument in dir, output to logname (relative to dir); expr, when not
 * NULL, is given first as `-e expr`. Returns the exit status, or -1 if it could not be
 * started. */
static int run_gnuplot(const char *gp, const char *dir, const char *expr, const char *arg,
                       const char *logname)
{
    pid_t pid;
    int status;

    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd;

        if (dir && chdir(dir) != 0)
            _exit(126);
        fd = open(logname, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        if (expr)
            execl(gp, "gnuplot", "-e", expr, arg, (char *)NULL);
        else
            execl(gp, "gnuplot", arg, (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

hs_status_t plot_gnuplot_version(char *buf, size_t len)
{
    char gp[4096], tmpl[] = "/tmp/hintsim-gpver-XXXXXX";
    hs_status_t st = HS_ERR_ENV;
    int fd;

    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK)
        return HS_ERR_ENV;
    fd = mkstemp(tmpl);
    if (fd < 0)
        return HS_ERR_IO;
    close(fd);
    if (run_gnuplot(gp, NULL, NULL, "--version", tmpl) == 0) {
        FILE *fp = fopen(tmpl, "r");
        char line[256] = "";

        if (fp && fgets(line, sizeof(line), fp)) {
            line[strcspn(line, "\r\n")] = '\0';
            snprintf(buf, len, "%s", line);
            st = HS_OK;
        }
        if (fp)
            fclose(fp);
    }
    unlink(tmpl);
    return st;
}

void plot_gp_set_str(FILE *fp, const char *var, const char *text)
{
    fprintf(fp, "%s = '", var);
    for (const char *c = text ? text : ""; *c; c++) {
        if (*c == '\'')
            fputs("''", fp);
        else if (*c == '\n' || *c == '\r')
            fputc(' ', fp);
        else
            fputc(*c, fp);
    }
    fputs("'\n", fp);
}

static hs_status_t write_program(const char *path, const char *script, const char *prelude)
{
    const char *body = plot_script_get(script);
    hs_afile_t *af;
    FILE *fp;
    hs_status_t st;

    if (!body || !plot_script_get("common") || !plot_script_get("finish")) {
        hs_log_error("internal: no gnuplot script '%s' in this build", script);
        return HS_ERR_INTERNAL;
    }
    st = hs_afile_open(path, &af);
    if (st != HS_OK)
        return st;
    fp = hs_afile_stream(af);
    fprintf(fp, "# hintsim %s: generated prelude, then plots/gp/%s.gp\n", HINTSIM_VERSION,
            script);
    fputs(prelude, fp);
    fputs(plot_script_get("common"), fp);
    fputs(body, fp);
    fputs(plot_script_get("finish"), fp);
    return hs_afile_commit(af);
}

/* Quote the first lines of gnuplot's log in the error message. */
static void log_gnuplot_failure(const char *dir, const char *name, int rc)
{
    char path[4096], *text = NULL;
    size_t len = 0;

    snprintf(path, sizeof(path), "%s/%s.log", dir, name);
    if (hs_read_file(path, &text, &len) == HS_OK && len > 600)
        text[600] = '\0';
    hs_log_error("gnuplot failed (exit %d) on %s/%s.gp: %s", rc, dir, name,
                 text && *text ? text : "(no output)");
    free(text);
}

static hs_status_t rename_output(const char *dir, const char *name, const char *ext)
{
    char tmp[4096], fin[4096];

    snprintf(tmp, sizeof(tmp), "%s/%s.%s.tmp", dir, name, ext);
    snprintf(fin, sizeof(fin), "%s/%s.%s", dir, name, ext);
    if (rename(tmp, fin) == 0)
        return HS_OK;
    int err = errno;
    if (access(tmp, F_OK) != 0)
        hs_log_error("gnuplot did not write %s", tmp);
    else
        hs_log_error("cannot put the plot in place: %s: %s", fin, strerror(err));
    return HS_ERR_IO;
}

/* Remove what a render that could not finish left: its temporaries and its log. */
static void render_cleanup(const char *dir, const char *name)
{
    static const char *const ext[] = {"png.tmp", "svg.tmp", "log"};
    char path[4096];

    for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext[i]);
        unlink(path);
    }
}

hs_status_t plot_gnuplot_render(const char *dir, const char *name, const char *script,
                                const char *prelude)
{
    char gp[4096], path[4096], arg[512], log[512];
    hs_status_t st;
    int rc;

    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK) {
        hs_log_error("gnuplot not found (PATH or $HINTSIM_GNUPLOT); install the Debian "
                     "package %s", PLOT_GNUPLOT_PACKAGE);
        return HS_ERR_ENV;
    }
    snprintf(path, sizeof(path), "%s/%s.gp", dir, name);
    st = write_program(path, script, prelude);
    if (st != HS_OK)
        return st;
    snprintf(arg, sizeof(arg), "%s.gp", name);
    snprintf(log, sizeof(log), "%s.log", name);
    rc = run_gnuplot(gp, dir, "hs_out_suffix = '.tmp'", arg, log);
    if (rc != 0) {
        log_gnuplot_failure(dir, name, rc);
        return rc == 127 ? HS_ERR_ENV : HS_ERR_IO;
    }
    st = rename_output(dir, name, "png");
    if (st != HS_OK)
        goto clean_render;
    st = rename_output(dir, name, "svg");
clean_render:
    render_cleanup(dir, name); /* the log too: gnuplot succeeded, the error said the rest */
    return st;
}
