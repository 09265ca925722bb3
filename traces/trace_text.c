/* trace_text.c - CSV and JSON Lines forms of a trace, both ways.
 *
 * CSV:   "# hintsim-trace v1 <header JSON>" then a column line, then one record per line.
 *        Columns may come in any order; t_post_ns and size_bytes are required, the rest
 *        default (t_done_ns unknown, qp 0, opcode write, status 0, flags 0). An empty
 *        t_done_ns or "unknown" means not known.
 * JSONL: {"hintsim_trace":1,"header":{...}} then one object per record. Integers above
 *        2^53 (not exact as JSON numbers) are written as decimal strings and read back.
 * Every error names the file and the line (and the column or key). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traces/trace_convert.h"
#include "traces/trace_format.h"

#define CSV_MAGIC "# hintsim-trace v1 "
#define MAX53 9007199254740992ULL

/* ---- shared field parsing --------------------------------------------------------- */

static int parse_u64_text(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0; /* decimal, or hexadecimal with 0x (flags); never octal */
    v = strtoull(s, &end, (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

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
    if (parse_u64_text(v, &x) != 0) {
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

/* ---- CSV -------------------------------------------------------------------------- */

typedef struct {
    int map[COL_N + 1]; /* file column -> COL_* */
    int n;
} csv_cols_t;

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
            snprintf(why, wl, "column '%s' is %s", name, c == COL_N ? "unknown" : "repeated");
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
    return 0;
}

static int csv_header_line(char *line, trace_t *tr, char *why, size_t wl)
{
    const char *json = line + strlen(CSV_MAGIC);
    return trace_hdr_from_json(json, strlen(json), &tr->hdr, why, wl);
}

hs_status_t trace_csv_read(FILE *fp, const char *path, trace_t **out)
{
    char *line = NULL, why[512];
    size_t cap = 0;
    unsigned long lineno = 0;
    csv_cols_t cols = {.n = 0};
    trace_t *tr = NULL;
    trace_rec_t rec;
    hs_status_t st = trace_new(&tr);

    if (st != HS_OK)
        return st;
    tr->hdr.mode = TRACE_MODE_CONVERTED;
    while (getline(&line, &cap, fp) != -1) {
        lineno++;
        chomp(line);
        if (strncmp(line, CSV_MAGIC, strlen(CSV_MAGIC)) == 0 && lineno == 1) {
            if (csv_header_line(line, tr, why, sizeof(why)) != 0)
                goto bad;
            continue;
        }
        if (line[0] == '#' || !*trim(line))
            continue;
        if (!cols.n) {
            if (csv_columns(line, &cols, why, sizeof(why)) != 0)
                goto bad;
            continue;
        }
        if (csv_record(line, &cols, &rec, why, sizeof(why)) != 0)
            goto bad;
        if ((st = trace_push(tr, &rec)) != HS_OK)
            goto out;
    }
    if (!cols.n) {
        hs_log_error("%s: no column line (expected e.g. \"t_post_ns,size_bytes\")", path);
        st = HS_ERR_INVALID;
        goto out;
    }
    *out = tr;
    tr = NULL;
    goto out;
bad:
    hs_log_error("%s:%lu: %s", path, lineno, why);
    st = HS_ERR_INVALID;
out:
    free(line);
    trace_free(tr);
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
    fprintf(fp, "t_post_ns,t_done_ns,size_bytes,qp,opcode,status,flags\n");
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

static int json_u64(const cJSON *it, uint64_t lim, uint64_t *out)
{
    if (cJSON_IsString(it))
        return parse_u64_text(it->valuestring, out) == 0 && *out <= lim ? 0 : -1;
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) || it->valuedouble > (double)MAX53 ||
        it->valuedouble != floor(it->valuedouble) || (uint64_t)it->valuedouble > lim)
        return -1;
    *out = (uint64_t)it->valuedouble;
    return 0;
}

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
    if (json_u64(it, lim[c], &x) != 0) {
        snprintf(why, wl, "key '%s' must be an integer in 0..%" PRIu64 " (a decimal string "
                 "above 2^53)", g_cols[c], lim[c]);
        return -1;
    }
    char text[32];
    snprintf(text, sizeof(text), "%" PRIu64, x);
    return rec_set(rec, c, text, why, wl);
}

static int jsonl_line(const char *line, trace_t *tr, int first, trace_rec_t *rec, int *is_rec,
                      char *why, size_t wl)
{
    cJSON *o = cJSON_Parse(line);
    int rc = -1;

    *is_rec = 0;
    if (!o || !cJSON_IsObject(o)) {
        snprintf(why, wl, "not a JSON object");
        goto out;
    }
    if (first && cJSON_GetObjectItemCaseSensitive(o, "hintsim_trace")) {
        rc = trace_hdr_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "header"), &tr->hdr, why, wl);
        goto out;
    }
    rec_defaults(rec);
    for (int c = 0; c < COL_N; c++)
        if (jsonl_field(o, c, rec, why, wl) != 0)
            goto out;
    *is_rec = 1;
    rc = 0;
out:
    cJSON_Delete(o);
    return rc;
}

hs_status_t trace_jsonl_read(FILE *fp, const char *path, trace_t **out)
{
    char *line = NULL, why[512];
    size_t cap = 0;
    unsigned long lineno = 0;
    trace_t *tr = NULL;
    trace_rec_t rec;
    int is_rec;
    hs_status_t st = trace_new(&tr);

    if (st != HS_OK)
        return st;
    tr->hdr.mode = TRACE_MODE_CONVERTED;
    while (getline(&line, &cap, fp) != -1) {
        lineno++;
        chomp(line);
        if (!*trim(line))
            continue;
        if (jsonl_line(line, tr, lineno == 1, &rec, &is_rec, why, sizeof(why)) != 0) {
            hs_log_error("%s:%lu: %s", path, lineno, why);
            st = HS_ERR_INVALID;
            goto out;
        }
        if (is_rec && (st = trace_push(tr, &rec)) != HS_OK)
            goto out;
    }
    *out = tr;
    tr = NULL;
out:
    free(line);
    trace_free(tr);
    return st;
}

static void json_u64_put(FILE *fp, const char *key, uint64_t v, int comma)
{
    if (v <= MAX53)
        fprintf(fp, "\"%s\":%" PRIu64 "%s", key, v, comma ? "," : "");
    else
        fprintf(fp, "\"%s\":\"%" PRIu64 "\"%s", key, v, comma ? "," : "");
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
