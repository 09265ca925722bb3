/* trace_text.c - CSV and JSON Lines forms of a trace, both ways.
 *
 * CSV:   "# hintsim-trace v1 <header JSON>" then a column line, then one record per line.
 *        Columns may come in any order; t_post_ns and size_bytes are required, the rest
 *        default (t_done_ns unknown, qp 0, opcode write, status 0, flags 0). An empty
 *        t_done_ns or "unknown" means not known.
 * JSONL: {"hintsim_trace":1,"header":{...}} then one object per record. Integers above
 *        2^53 (not exact as JSON numbers) are written as decimal strings and read back.
 * Both: the first line's version is checked like .hst's; every line must end with a newline
 * (a last line without one is a file cut short). Every error names the file and the line
 * (and the column or key). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_json.h"
#include "traces/trace_convert.h"
#include "traces/trace_format.h"

#define CSV_PREFIX "# hintsim-trace "
#define CSV_MAGIC CSV_PREFIX "v1 "
#define CSV_COLUMNS "t_post_ns,t_done_ns,size_bytes,qp,opcode,status,flags"

/* ---- shared field parsing --------------------------------------------------------- */

enum { COL_POST, COL_DONE, COL_SIZE, COL_QP, COL_OP, COL_STATUS, COL_FLAGS, COL_N };
static const char *const g_cols[COL_N] = {"t_post_ns", "t_done_ns", "size_bytes", "qp",
                                           "opcode", "status", "flags"};

/* Set column c of rec from text; -1 with a reason on junk or out-of-range. */
static int rec_set(trace_rec_t *rec, int c, const char *v, char *why, size_t wl)
{
    uint64_t x = 0;

    if (c == COL_DONE && (!*v || strcmp(v, "unknown") == 0)) {
        rec->t_done_ns = TRACE_TIME_UNKNOWN;
        return 0;
    }
    if (c == COL_OP && !isdigit((unsigned char)*v)) {
        if (trace_opcode_parse(v, &rec->opcode) == 0)
            return 0;
        snprintf(why, wl, "'%s' is not an opcode (send, send_imm, write, write_imm, read, "
                 "atomic, other)", v);
        return -1;
    }
    if (trace_u64_parse(v, &x) != 0) {
        snprintf(why, wl, "'%s' is not a non-negative integer", v);
        return -1;
    }
    static const uint64_t lim[COL_N] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, 255, 255,
                                         65535};
    if (x > lim[c]) {
        snprintf(why, wl, "%" PRIu64 " exceeds %" PRIu64, x, lim[c]);
        return -1;
    }
    switch (c) {
    case COL_POST: rec->t_post_ns = x; break;
    case COL_DONE: rec->t_done_ns = x; break;
    case COL_SIZE: rec->size_bytes = x; break;
    case COL_QP: rec->qp = (uint32_t)x; break;
    case COL_OP: rec->opcode = (uint8_t)x; break;
    case COL_STATUS: rec->status = (uint8_t)x; break;
    default: rec->flags = (uint16_t)x; break;
    }
    return 0;
}

static void rec_defaults(trace_rec_t *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->t_done_ns = TRACE_TIME_UNKNOWN;
    rec->opcode = TRACE_OP_WRITE;
}

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

static char *trim(char *s)
{
    char *e;
    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        *--e = '\0';
    return s;
}

/* ---- reading lines ---------------------------------------------------------------- */

/* A text trace read line by line; lineno counts every line, blank ones included. */
typedef struct {
    FILE *fp;
    const char *path;
    char *line;
    size_t cap;
    unsigned long lineno;
    char *buf;          /* read-ahead from fp: lines are cut from it with memchr */
    size_t pos, len;
} text_in_t;

#define TEXT_BUF_BYTES (1u << 16)

/* The longest line read: a header line holds a JSON header of up to 1 MiB. */
#define TEXT_LINE_MAX (TRACE_JSON_MAX_BYTES + 4096)

/* Append n bytes to in->line (kept NUL-terminated after *len bytes); -1 out of memory,
 * -3 past TEXT_LINE_MAX. */
static int line_put(text_in_t *in, size_t *len, const char *p, size_t n)
{
    if (*len + n > TEXT_LINE_MAX)
        return -3;
    if (*len + n + 1 > in->cap) {
        size_t cap = in->cap ? in->cap : 256;
        char *l;
        while (cap < *len + n + 1)
            cap *= 2;
        if (!(l = realloc(in->line, cap)))
            return -1;
        in->line = l;
        in->cap = cap;
    }
    memcpy(in->line + *len, p, n);
    *len += n;
    in->line[*len] = '\0';
    return 0;
}

/* Read one line into in->line (with its newline, NUL-terminated): its length, 0 at the end
 * of the file, -1 on a read error, -2 at a NUL byte (*col its column), -3 past
 * TEXT_LINE_MAX. Stops at the first bad byte, so a file of zeros (or garbage without line
 * ends) fails at once instead of being read whole into memory. */
static ssize_t line_read(text_in_t *in, size_t *col)
{
    size_t n = 0;

    if (!in->buf && !(in->buf = malloc(TEXT_BUF_BYTES)))
        return -1;
    for (;;) {
        const char *p = in->buf + in->pos, *nl, *nul;
        size_t avail = in->len - in->pos, take;
        int rc;

        if (avail == 0) {
            in->pos = 0;
            in->len = fread(in->buf, 1, TEXT_BUF_BYTES, in->fp);
            if (in->len == 0)
                return ferror(in->fp) ? -1 : (ssize_t)n;
            continue;
        }
        nl = memchr(p, '\n', avail);
        take = nl ? (size_t)(nl - p) + 1 : avail;
        if ((nul = memchr(p, '\0', take)) != NULL) {
            *col = n + (size_t)(nul - p) + 1;
            return -2;
        }
        if ((rc = line_put(in, &n, p, take)) != 0)
            return rc;
        in->pos += take;
        if (nl)
            return (ssize_t)n;
    }
}

/* The next line without its line end: 1 with a line, 0 at the end of the file, -1 with
 * why for a last line without a newline (a file cut short), a NUL byte, a line too long or
 * a read error. */
static int text_next(text_in_t *in, char *why, size_t wl)
{
    size_t col = 0;
    ssize_t n = line_read(in, &col);

    if (n == 0)
        return 0;
    in->lineno++;
    if (n == -2) {
        snprintf(why, wl, "NUL byte at column %zu: not a text file", col);
        return -1;
    }
    if (n == -3) {
        snprintf(why, wl, "line longer than %u bytes: not a text trace", TEXT_LINE_MAX);
        return -1;
    }
    if (n < 0) {
        snprintf(why, wl, "read error: %s", errno ? strerror(errno) : "out of memory");
        return -1;
    }
    if (in->line[n - 1] != '\n') {
        snprintf(why, wl, "truncated: no newline at the end of the file");
        return -1;
    }
    if (in->lineno == 1 && n >= 3 && memcmp(in->line, "\xEF\xBB\xBF", 3) == 0) /* UTF-8 BOM */
        memmove(in->line, in->line + 3, (size_t)n - 2);
    chomp(in->line);
    return 1;
}

static hs_status_t text_fail(const text_in_t *in, const char *why)
{
    hs_log_error("%s:%lu: %s", in->path, in->lineno, why);
    return HS_ERR_INVALID;
}

/* A new trace for a text file: until its header line says otherwise, nothing is known of
 * where the records came from (never this machine's name). */
static hs_status_t text_trace_new(trace_t **out)
{
    hs_status_t st = trace_new(out);

    if (st != HS_OK)
        return st;
    trace_hdr_init_unknown(&(*out)->hdr);
    return HS_OK;
}

/* What makes a record meaningless to every consumer (both path bits, completion before
 * post), named with its line. An unknown opcode number is kept: the writers carry raw
 * values, and validate reports it. */
static int rec_sane(const trace_rec_t *r, char *why, size_t wl)
{
    trace_rec_t known = *r;

    known.opcode = TRACE_OP_OTHER;
    return trace_rec_check(&known, why, wl);
}

/* ---- CSV -------------------------------------------------------------------------- */

typedef struct {
    int map[COL_N + 1]; /* file column -> COL_* */
    int n;
} csv_cols_t;

typedef struct {
    text_in_t in;
    trace_t *tr;
    csv_cols_t cols;
    int started; /* a non-blank line was seen (the header line must be the first) */
} csv_rd_t;

static int csv_columns(char *line, csv_cols_t *cols, char *why, size_t wl)
{
    int seen[COL_N] = {0};
    char *save = NULL;

    cols->n = 0;
    for (char *tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *name = trim(tok);
        int c = 0;
        while (c < COL_N && strcmp(g_cols[c], name) != 0)
            c++;
        if (c == COL_N || seen[c] || cols->n == COL_N) {
            snprintf(why, wl, "column '%s' is %s (the column line names some of %s)", name,
                     c == COL_N ? "unknown" : "repeated", CSV_COLUMNS);
            return -1;
        }
        seen[c] = 1;
        cols->map[cols->n++] = c;
    }
    if (!seen[COL_POST] || !seen[COL_SIZE]) {
        snprintf(why, wl, "the column line must name t_post_ns and size_bytes");
        return -1;
    }
    return 0;
}

static int csv_record(char *line, const csv_cols_t *cols, trace_rec_t *rec, char *why, size_t wl)
{
    char *p = line;
    int i = 0;

    rec_defaults(rec);
    for (;; i++) {
        char *comma = strchr(p, ',');
        char why2[200];
        if (comma)
            *comma = '\0';
        if (i >= cols->n) {
            snprintf(why, wl, "more than the %d columns of the column line", cols->n);
            return -1;
        }
        if (rec_set(rec, cols->map[i], trim(p), why2, sizeof(why2)) != 0) {
            snprintf(why, wl, "column '%s': %s", g_cols[cols->map[i]], why2);
            return -1;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (i + 1 != cols->n) {
        snprintf(why, wl, "%d columns, the column line has %d", i + 1, cols->n);
        return -1;
    }
    return rec_sane(rec, why, wl);
}

/* "# hintsim-trace v<N> <header JSON>": another version is refused before its JSON is read. */
static int csv_header_line(const char *line, trace_t *tr, char *why, size_t wl)
{
    const char *p = line + strlen(CSV_PREFIX);
    char *json = NULL;
    unsigned long long v = 0;

    errno = 0;
    if (*p == 'v' && isdigit((unsigned char)p[1]))
        v = strtoull(p + 1, &json, 10);
    if (!json || errno || (*json != ' ' && *json != '\0')) {
        snprintf(why, wl, "expected \"%sv%d <header JSON>\"", CSV_PREFIX, TRACE_FORMAT_VERSION);
        return -1;
    }
    if (trace_version_check(v, "", why, wl) != 0)
        return -1;
    json += *json == ' '; /* byte offsets in errors count from the JSON's first byte */
    return trace_hdr_from_json(json, strlen(json), &tr->hdr, why, wl);
}

/* Records before the column line: say which line was expected. */
static int csv_columns_expected(const char *line, char *why, size_t wl)
{
    snprintf(why, wl, "expected the column line \"%s\" (or some of its columns), found a record "
             "'%.40s'", CSV_COLUMNS, line);
    return -1;
}

/* One line: the header line (first), a comment, the column line, or a record (*is_rec). */
static int csv_line(csv_rd_t *r, trace_rec_t *rec, int *is_rec, char *why, size_t wl)
{
    char *line = r->in.line;
    int first = !r->started;

    *is_rec = 0;
    if (!*trim(line))
        return 0;
    r->started = 1;
    if (first && strncmp(line, CSV_PREFIX, strlen(CSV_PREFIX)) == 0)
        return csv_header_line(line, r->tr, why, wl);
    if (line[0] == '#')
        return 0;
    if (!r->cols.n && isdigit((unsigned char)*trim(line)))
        return csv_columns_expected(line, why, wl);
    if (!r->cols.n)
        return csv_columns(line, &r->cols, why, wl);
    if (csv_record(line, &r->cols, rec, why, wl) != 0)
        return -1;
    *is_rec = 1;
    return 0;
}

/* With TRACE_READ_STRICT, what trace_rec_check refuses in a record rec_sane let through
 * (an unknown opcode number): 0 or -1 with why. */
static int rec_strict(const trace_rec_t *r, unsigned flags, char *why, size_t wl)
{
    return (flags & TRACE_READ_STRICT) ? trace_rec_check(r, why, wl) : 0;
}

hs_status_t trace_csv_read(FILE *fp, const char *path, trace_t **out)
{
    return trace_csv_read_flags(fp, path, 0, out);
}

hs_status_t trace_csv_read_flags(FILE *fp, const char *path, unsigned flags, trace_t **out)
{
    csv_rd_t r = {.in = {.fp = fp, .path = path}};
    trace_rec_t rec;
    char why[512];
    int rc, is_rec = 0;
    hs_status_t st = text_trace_new(&r.tr);

    if (st != HS_OK)
        return st;
    while ((rc = text_next(&r.in, why, sizeof(why))) > 0) {
        if ((rc = csv_line(&r, &rec, &is_rec, why, sizeof(why))) != 0 ||
            (is_rec && (rc = rec_strict(&rec, flags, why, sizeof(why))) != 0))
            break;
        if (is_rec && (st = trace_push(r.tr, &rec)) != HS_OK)
            goto out;
    }
    if (rc < 0) {
        st = text_fail(&r.in, why);
        goto out;
    }
    if (!r.cols.n) {
        hs_log_error("%s:%lu: expected the column line \"%s\", found the end of the file", path,
                     r.in.lineno + 1, CSV_COLUMNS);
        st = HS_ERR_INVALID;
        goto out;
    }
    *out = r.tr;
    r.tr = NULL;
out:
    free(r.in.line);
    free(r.in.buf);
    trace_free(r.tr);
    return st;
}

hs_status_t trace_csv_write(FILE *fp, const trace_t *tr)
{
    char *json = NULL;
    hs_status_t st = trace_hdr_to_json(&tr->hdr, &json);

    if (st != HS_OK)
        return st;
    fprintf(fp, "%s%s\n", CSV_MAGIC, json);
    free(json);
    fprintf(fp, "%s\n", CSV_COLUMNS);
    for (size_t i = 0; i < tr->n; i++) {
        const trace_rec_t *r = &tr->recs[i];
        char done[24] = "", op[8];
        const char *opname = trace_opcode_str(r->opcode);
        if (r->t_done_ns != TRACE_TIME_UNKNOWN)
            snprintf(done, sizeof(done), "%" PRIu64, r->t_done_ns);
        if (strcmp(opname, "unknown") == 0) { /* keep the raw value */
            snprintf(op, sizeof(op), "%u", r->opcode);
            opname = op;
        }
        fprintf(fp, "%" PRIu64 ",%s,%" PRIu64 ",%" PRIu32 ",%s,%u,0x%04x\n", r->t_post_ns, done,
                r->size_bytes, r->qp, opname, r->status, r->flags);
    }
    return ferror(fp) ? HS_ERR_IO : HS_OK;
}

/* ---- JSON Lines ------------------------------------------------------------------- */

static int jsonl_field(const cJSON *o, int c, trace_rec_t *rec, char *why, size_t wl)
{
    static const uint64_t lim[COL_N] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, 255, 255,
                                         65535};
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, g_cols[c]);
    uint64_t x;

    if (!it || (c == COL_DONE && cJSON_IsNull(it))) {
        if (c == COL_POST || c == COL_SIZE) {
            snprintf(why, wl, "key '%s' is missing", g_cols[c]);
            return -1;
        }
        return 0;
    }
    if (c == COL_OP && cJSON_IsString(it) && !isdigit((unsigned char)it->valuestring[0]))
        return rec_set(rec, c, it->valuestring, why, wl) == 0 ? 0 :
               (snprintf(why, wl, "key 'opcode': unknown opcode '%s'", it->valuestring), -1);
    if (trace_json_u64_get(it, lim[c], &x) != 0) {
        snprintf(why, wl, "key '%s' must be an integer in 0..%" PRIu64 " (from 2^53 on, a "
                 "decimal string: a JSON number that large is rounded)", g_cols[c], lim[c]);
        return -1;
    }
    char text[32];
    snprintf(text, sizeof(text), "%" PRIu64, x);
    return rec_set(rec, c, text, why, wl);
}

/* One line as a JSON object (nothing may follow it); a syntax error names its column. */
static cJSON *jsonl_parse(const char *line, char *why, size_t wl)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(line, &end, 1);

    if (!o) {
        if (end)
            snprintf(why, wl, "JSON syntax error at column %td", end - line + 1);
        else
            snprintf(why, wl, "JSON syntax error");
        return NULL;
    }
    if (hs_json_strict_check(line, strlen(line), why, wl)) {
        cJSON_Delete(o);
        return NULL;
    }
    if (!cJSON_IsObject(o)) {
        snprintf(why, wl, "expected a JSON object, found %s",
                 cJSON_IsArray(o) ? "an array" : "a single value");
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* {"hintsim_trace":<version>,"header":{...}}: another version is refused before the header. */
static int jsonl_header(const cJSON *o, trace_t *tr, char *why, size_t wl)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "hintsim_trace");

    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > (double)UINT32_MAX ||
        v->valuedouble != floor(v->valuedouble)) {
        snprintf(why, wl, "key 'hintsim_trace' must be the format version, an integer");
        return -1;
    }
    if (trace_version_check((uint64_t)v->valuedouble, "", why, wl) != 0)
        return -1;
    return trace_hdr_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "header"), &tr->hdr, why, wl);
}

static int jsonl_record(const cJSON *o, trace_rec_t *rec, char *why, size_t wl)
{
    rec_defaults(rec);
    for (int c = 0; c < COL_N; c++)
        if (jsonl_field(o, c, rec, why, wl) != 0)
            return -1;
    return rec_sane(rec, why, wl);
}

/* One non-blank line: the header line (if first) or a record (*is_rec). */
static int jsonl_line(const char *line, trace_t *tr, int first, trace_rec_t *rec, int *is_rec,
                      char *why, size_t wl)
{
    cJSON *o = jsonl_parse(line, why, wl);
    int rc;

    *is_rec = 0;
    if (!o)
        return -1;
    if (first && cJSON_GetObjectItemCaseSensitive(o, "hintsim_trace")) {
        size_t off, n;
        rc = jsonl_header(o, tr, why, wl);
        if (rc == 0 && hs_json_member_span(line, strlen(line), "header", &off, &n) == 0 &&
            trace_hdr_keep_extra(line + off, n, &tr->hdr) != HS_OK) {
            snprintf(why, wl, "out of memory");
            rc = -1;
        }
    } else {
        rc = jsonl_record(o, rec, why, wl);
        *is_rec = rc == 0;
    }
    cJSON_Delete(o);
    return rc;
}

hs_status_t trace_jsonl_read(FILE *fp, const char *path, trace_t **out)
{
    return trace_jsonl_read_flags(fp, path, 0, out);
}

hs_status_t trace_jsonl_read_flags(FILE *fp, const char *path, unsigned flags, trace_t **out)
{
    text_in_t in = {.fp = fp, .path = path};
    char why[512];
    trace_t *tr = NULL;
    trace_rec_t rec;
    int rc, is_rec, started = 0;
    hs_status_t st = text_trace_new(&tr);

    if (st != HS_OK)
        return st;
    while ((rc = text_next(&in, why, sizeof(why))) > 0) {
        if (!*trim(in.line))
            continue;
        if ((rc = jsonl_line(in.line, tr, !started, &rec, &is_rec, why, sizeof(why))) != 0 ||
            (is_rec && (rc = rec_strict(&rec, flags, why, sizeof(why))) != 0))
            break;
        started = 1;
        if (is_rec && (st = trace_push(tr, &rec)) != HS_OK)
            goto out;
    }
    if (rc < 0) {
        st = text_fail(&in, why);
        goto out;
    }
    *out = tr;
    tr = NULL;
out:
    free(in.line);
    free(in.buf);
    trace_free(tr);
    return st;
}

static void json_u64_put(FILE *fp, const char *key, uint64_t v, int comma)
{
    char text[24];
    const char *q = trace_json_u64_text(v, text) ? "\"" : "";

    fprintf(fp, "\"%s\":%s%s%s%s", key, q, text, q, comma ? "," : "");
}

hs_status_t trace_jsonl_write(FILE *fp, const trace_t *tr)
{
    char *json = NULL;
    hs_status_t st = trace_hdr_to_json(&tr->hdr, &json);

    if (st != HS_OK)
        return st;
    fprintf(fp, "{\"hintsim_trace\":1,\"header\":%s}\n", json);
    free(json);
    for (size_t i = 0; i < tr->n; i++) {
        const trace_rec_t *r = &tr->recs[i];
        fputc('{', fp);
        json_u64_put(fp, "t_post_ns", r->t_post_ns, 1);
        if (r->t_done_ns == TRACE_TIME_UNKNOWN)
            fputs("\"t_done_ns\":null,", fp);
        else
            json_u64_put(fp, "t_done_ns", r->t_done_ns, 1);
        json_u64_put(fp, "size_bytes", r->size_bytes, 1);
        fprintf(fp, "\"qp\":%" PRIu32 ",", r->qp);
        if (strcmp(trace_opcode_str(r->opcode), "unknown") == 0)
            fprintf(fp, "\"opcode\":%u,", r->opcode);
        else
            fprintf(fp, "\"opcode\":\"%s\",", trace_opcode_str(r->opcode));
        fprintf(fp, "\"status\":%u,\"flags\":%u}\n", r->status, r->flags);
    }
    return ferror(fp) ? HS_ERR_IO : HS_OK;
}
