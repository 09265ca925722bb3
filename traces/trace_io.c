/* trace_io.c - trace_load and trace_save: whole traces in any supported format.
 * Input formats are recognised by content (the .hst magic, the CSV or JSON Lines first
 * line, perftest's report lines), output formats by --to name or extension (one table,
 * the viewers' formats included, and one rule for both: trace_fmt_pick). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hs_util.h"
#include "traces/trace_convert.h"
#include "traces/trace_format.h"

/* A first line that starts with a digit and has a comma: CSV records without their column
 * line (the CSV reader then says which line it expected). */
static int looks_like_records(const char *p, size_t len)
{
    const char *nl = memchr(p, '\n', len);
    size_t n = nl ? (size_t)(nl - p) : len;

    return n > 0 && isdigit((unsigned char)p[0]) && memchr(p, ',', n) != NULL;
}

/* The first line of p[0..len) that is neither blank nor a '#' comment: the column line of a
 * CSV whose comments come first; its length in *n, NULL when there is none in len. */
static const char *first_data_line(const char *p, size_t len, size_t *n)
{
    const char *end = p + len;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t k = 0;

        while (k < l && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
            k++;
        if (k < l && p[k] != '#') {
            *n = l;
            return p;
        }
        p += l + 1;
    }
    return NULL;
}

trace_fmt_t trace_fmt_sniff(const char *head, size_t len)
{
    const char *data;
    size_t i = 0, n;

    if (len >= TRACE_FILE_MAGIC_LEN && memcmp(head, TRACE_FILE_MAGIC, TRACE_FILE_MAGIC_LEN) == 0)
        return TRACE_FMT_HST;
    if (len >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 BOM (spreadsheets) */
        i = 3;
    while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i < len && head[i] == '{')
        return TRACE_FMT_JSONL;
    if (len - i >= 16 && memcmp(head + i, "# hintsim-trace ", 16) == 0)
        return TRACE_FMT_CSV;
    /* a column line before any perftest marker: a CSV, whatever its comments say */
    if ((data = first_data_line(head + i, len - i, &n)) && memmem(data, n, "t_post_ns", 9))
        return TRACE_FMT_CSV;
    if (memmem(head, len, "#, usec", 7) || memmem(head, len, "#, cycles", 9) ||
        memmem(head, len, "#bytes", 6) || memmem(head, len, "Latency Test", 12))
        return TRACE_FMT_PERFTEST;
    if (memmem(head, len, "t_post_ns", 9) || looks_like_records(head + i, len - i))
        return TRACE_FMT_CSV;
    return TRACE_FMT_UNKNOWN;
}

/* ---- output formats: by --to name and by extension ------------------------------------ */

/* Every format an output can be written in, its --to name and its extensions. */
static const struct {
    const char *name, *ext;
    trace_fmt_t fmt;
} g_out_fmts[] = {
    {"hst", ".hst", TRACE_FMT_HST},
    {"csv", ".csv", TRACE_FMT_CSV},
    {"jsonl", ".jsonl", TRACE_FMT_JSONL},
    {"perfetto", ".pftrace", TRACE_FMT_PERFETTO},
    {"perfetto", ".perfetto-trace", TRACE_FMT_PERFETTO},
    {"chrome-json", ".json", TRACE_FMT_CHROME_JSON},
};
#define N_OUT_FMTS (sizeof(g_out_fmts) / sizeof(g_out_fmts[0]))

static int is_trace_fmt(trace_fmt_t f)
{
    return f == TRACE_FMT_HST || f == TRACE_FMT_CSV || f == TRACE_FMT_JSONL;
}

trace_fmt_t trace_out_fmt_from_ext(const char *path)
{
    size_t len = strlen(path);

    for (size_t i = 0; i < N_OUT_FMTS; i++) {
        size_t el = strlen(g_out_fmts[i].ext);
        if (len >= el && strcmp(path + len - el, g_out_fmts[i].ext) == 0)
            return g_out_fmts[i].fmt;
    }
    return TRACE_FMT_UNKNOWN;
}

trace_fmt_t trace_fmt_from_ext(const char *path)
{
    trace_fmt_t f = trace_out_fmt_from_ext(path);

    return is_trace_fmt(f) ? f : TRACE_FMT_UNKNOWN;
}

const char *trace_fmt_name(trace_fmt_t fmt)
{
    for (size_t i = 0; i < N_OUT_FMTS; i++)
        if (g_out_fmts[i].fmt == fmt)
            return g_out_fmts[i].name;
    return "?";
}

/* The format --to names among set, or TRACE_FMT_UNKNOWN. */
static trace_fmt_t fmt_by_name(const char *to, trace_out_set_t set)
{
    for (size_t i = 0; i < N_OUT_FMTS; i++)
        if (strcmp(to, g_out_fmts[i].name) == 0)
            return set == TRACE_OUT_VIEWERS || is_trace_fmt(g_out_fmts[i].fmt)
                       ? g_out_fmts[i].fmt : TRACE_FMT_UNKNOWN;
    return TRACE_FMT_UNKNOWN;
}

hs_status_t trace_fmt_pick(const char *to, const char *path, trace_out_set_t set,
                           trace_fmt_t *out)
{
    int viewers = set == TRACE_OUT_VIEWERS;
    const char *names = viewers ? "hst, csv, jsonl, perfetto or chrome-json"
                                : "hst, csv or jsonl";
    trace_fmt_t ext = trace_out_fmt_from_ext(path), want = to ? fmt_by_name(to, set) : ext;

    if (to && want == TRACE_FMT_UNKNOWN) {
        if (fmt_by_name(to, TRACE_OUT_VIEWERS) != TRACE_FMT_UNKNOWN)
            hs_log_error("--to %s: a viewer's format ('hintsim trace convert' writes it); "
                         "this output is a trace (%s)", to, names);
        else
            hs_log_error("--to %s: not a format (%s)", to, names);
        return HS_ERR_USAGE;
    }
    if (to && ext != TRACE_FMT_UNKNOWN && ext != want) {
        hs_log_error("--to %s: the output name %s says %s; name it for the format (or '-' "
                     "for standard output)", to, path, trace_fmt_name(ext));
        return HS_ERR_USAGE;
    }
    if (!to && strcmp(path, "-") == 0) {
        hs_log_error("-o -: standard output needs --to to name the format (%s)", names);
        return HS_ERR_USAGE;
    }
    if (!to && (want == TRACE_FMT_UNKNOWN || (!viewers && !is_trace_fmt(want)))) {
        hs_log_error("%s: the output name must end in .hst, .csv, .jsonl%s, or --to names the "
                     "format (%s), as it must for '-' (standard output) or a FIFO", path,
                     viewers ? ", .pftrace (perfetto) or .json (chrome-json)" : "", names);
        return HS_ERR_USAGE;
    }
    *out = want;
    return HS_OK;
}

/* fp: a seekable stream at its start (owned: closed here). */
static hs_status_t load_hst(FILE *fp, const char *path, trace_t **out)
{
    trace_reader_t *r = NULL;
    trace_t *tr = NULL;
    const trace_rec_t *recs;
    size_t n;
    int eof = 0;
    struct stat sb;
    int have_size = fstat(fileno(fp), &sb) == 0 && sb.st_size > 0;
    hs_status_t st = trace_reader_open_stream(fp, path, &r);

    if (st != HS_OK)
        return st;
    if ((st = trace_new(&tr)) != HS_OK)
        goto out;
    /* the file holds at most size / 32 records (each takes 32 bytes there, besides the
     * headers): one allocation, no copy on growth. Best effort: a file still growing, or
     * one (sparse, damaged) too large to reserve for, takes the loop's growth, and its
     * blocks' checks name what is wrong with it */
    if (have_size)
        (void)trace_reserve(tr, (size_t)sb.st_size / TRACE_REC_BYTES);
    while ((st = trace_reader_next_block(r, &recs, &n, &eof)) == HS_OK && !eof) {
        if (tr->n + n > tr->cap) {
            size_t ncap = tr->cap ? tr->cap : 65536;
            while (ncap < tr->n + n)
                ncap *= 2;
            if ((st = trace_reserve(tr, ncap)) != HS_OK)
                goto out;
        }
        memcpy(tr->recs + tr->n, recs, n * sizeof(*recs));
        tr->n += n;
    }
    if (st != HS_OK)
        goto out;
    trace_hdr_release(&tr->hdr);
    if ((st = trace_hdr_copy(&tr->hdr, trace_reader_header(r))) != HS_OK)
        goto out;
    *out = tr;
    tr = NULL;
out:
    trace_free(tr);
    trace_reader_close(r);
    return st;
}

#define HEAD_BYTES 4096 /* what the format is recognised from */

/* The first bytes of fp, to recognise the format by; a directory, an unreadable file and
 * an empty one are named as such. fp is left at its start. */
static hs_status_t read_head(FILE *fp, const char *path, char *head, size_t *len)
{
    struct stat sb;

    if (fstat(fileno(fp), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        hs_log_error("%s: is a directory, not a trace file", path);
        return HS_ERR_IO;
    }
    *len = fread(head, 1, HEAD_BYTES, fp);
    if (ferror(fp)) {
        hs_log_error("%s: cannot read: %s", path, strerror(errno));
        return HS_ERR_IO;
    }
    if (*len == 0) {
        hs_log_error("%s: empty file: not a trace", path);
        return HS_ERR_INVALID;
    }
    rewind(fp);
    return HS_OK;
}

/* Content not recognised: a .csv or .jsonl name picks its reader (which names the line it
 * expected), a .hst name the .hst reader (which names the magic); else say what is known. */
static trace_fmt_t fmt_unknown(const char *path, const char *head, size_t len)
{
    trace_fmt_t fmt = trace_fmt_from_ext(path);
    size_t i = 0;

    if (fmt != TRACE_FMT_UNKNOWN)
        return fmt;
    while (i < len && isspace((unsigned char)head[i]))
        i++;
    if (i == len && len < HEAD_BYTES)
        hs_log_error("%s: only blank lines: not a trace", path);
    else
        hs_log_error("%s: not a trace: neither .hst (magic at byte offset 0), CSV (first line "
                     "\"# hintsim-trace v1 ...\" or the column line \"t_post_ns,...\"), JSON Lines "
                     "nor perftest -U output", path);
    return TRACE_FMT_UNKNOWN;
}

hs_status_t trace_load(const char *path, trace_t **out)
{
    return trace_load_flags(path, 0, out);
}

hs_status_t trace_load_flags(const char *path, unsigned flags, trace_t **out)
{
    FILE *fp = trace_input_fopen(path); /* "-", pipes, FIFOs without a writer: no wait */

    return fp ? trace_load_stream(fp, path, flags, out) : HS_ERR_IO;
}

hs_status_t trace_load_stream(FILE *fp, const char *path, unsigned flags, trace_t **out)
{
    char head[HEAD_BYTES];
    size_t len = 0;
    trace_fmt_t fmt;
    hs_status_t st;

    if ((st = read_head(fp, path, head, &len)) != HS_OK)
        goto out;
    fmt = trace_fmt_sniff(head, len);
    if (fmt == TRACE_FMT_UNKNOWN)
        fmt = fmt_unknown(path, head, len);
    if (fmt != TRACE_FMT_HST && fmt != TRACE_FMT_UNKNOWN && memchr(head, '\0', len)) {
        /* at once: a text reader would read on to the first line end, which a file of
         * zeros does not have */
        hs_log_error("%s: NUL byte at byte offset %td: not a text trace (CSV, JSON Lines, "
                     "perftest output)", path, (const char *)memchr(head, '\0', len) - head);
        st = HS_ERR_INVALID;
        goto out;
    }
    switch (fmt) {
    case TRACE_FMT_HST:
        return load_hst(fp, path, out);
    case TRACE_FMT_CSV:
        st = trace_csv_read_flags(fp, path, flags, out);
        break;
    case TRACE_FMT_JSONL:
        st = trace_jsonl_read_flags(fp, path, flags, out);
        break;
    case TRACE_FMT_PERFTEST:
        st = trace_perftest_read(fp, path, out);
        break;
    default:
        st = HS_ERR_INVALID;
    }
out:
    fclose(fp);
    return st;
}

static hs_status_t save_hst(const char *path, const trace_t *tr)
{
    trace_writer_t *w;
    hs_status_t st = trace_writer_open(path, &tr->hdr, &w);

    if (st != HS_OK)
        return st;
    st = trace_writer_append_many(w, tr->recs, tr->n);
    if (st != HS_OK) {
        trace_writer_abort(w);
        return st;
    }
    trace_writer_set_dropped(w, tr->hdr.dropped);
    return trace_writer_close(w);
}

hs_status_t trace_save(const char *path, const trace_t *tr)
{
    return trace_save_as(path, trace_fmt_from_ext(path), tr);
}

hs_status_t trace_save_as(const char *path, trace_fmt_t fmt, const trace_t *tr)
{
    hs_afile_t *af;
    hs_status_t st;

    if (fmt == TRACE_FMT_HST)
        return save_hst(path, tr);
    if (fmt != TRACE_FMT_CSV && fmt != TRACE_FMT_JSONL) {
        hs_log_error("%s: unknown output format: the name must end in .hst, .csv or .jsonl", path);
        return HS_ERR_USAGE;
    }
    trace_clean_stale_tmp(path);
    if ((st = hs_afile_open(path, &af)) != HS_OK)
        return st;
    if (fmt == TRACE_FMT_CSV)
        st = trace_csv_write(hs_afile_stream(af), tr);
    else
        st = trace_jsonl_write(hs_afile_stream(af), tr);
    if (st != HS_OK) {
        hs_log_error("%s: write failed", path);
        hs_afile_abort(af);
        return st;
    }
    return hs_afile_commit(af);
}
