/* trace_header.c - the JSON header of a trace (every field of trace_hdr_t plus "extra"),
 * the enum name tables, and deep copies. Used by the .hst writer/reader and by the CSV
 * and JSON Lines converters, which carry the same object on their first line. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_json.h"
#include "traces/trace_format.h"

static const char *const g_mode_names[] = {"bench", "preload", "synthetic", "converted"};
static const char *const g_mem_names[] = {"host", "cuda"};
static const char *const g_hint_names[] = {"none", "env", "config", "code"};
static const struct {
    unsigned op;
    const char *name;
} g_ops[] = {
    {TRACE_OP_SEND, "send"},   {TRACE_OP_SEND_IMM, "send_imm"}, {TRACE_OP_WRITE, "write"},
    {TRACE_OP_WRITE_IMM, "write_imm"}, {TRACE_OP_READ, "read"}, {TRACE_OP_ATOMIC, "atomic"},
    {TRACE_OP_OTHER, "other"},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *tab, size_t n, unsigned v)
{
    return v < n ? tab[v] : "unknown";
}

static int parse_name(const char *const *tab, size_t n, const char *s, unsigned *out)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(tab[i], s) == 0) {
            *out = (unsigned)i;
            return 0;
        }
    return -1;
}

const char *trace_mode_str(trace_mode_t m) { return name_of(g_mode_names, NELEM(g_mode_names), m); }
const char *trace_mem_str(trace_mem_t m) { return name_of(g_mem_names, NELEM(g_mem_names), m); }
const char *trace_hint_src_str(trace_hint_src_t s)
{
    return name_of(g_hint_names, NELEM(g_hint_names), s);
}

int trace_mode_parse(const char *s, trace_mode_t *out)
{
    unsigned v;
    if (parse_name(g_mode_names, NELEM(g_mode_names), s, &v))
        return -1;
    *out = (trace_mode_t)v;
    return 0;
}

int trace_mem_parse(const char *s, trace_mem_t *out)
{
    unsigned v;
    if (parse_name(g_mem_names, NELEM(g_mem_names), s, &v))
        return -1;
    *out = (trace_mem_t)v;
    return 0;
}

int trace_hint_src_parse(const char *s, trace_hint_src_t *out)
{
    unsigned v;
    if (parse_name(g_hint_names, NELEM(g_hint_names), s, &v))
        return -1;
    *out = (trace_hint_src_t)v;
    return 0;
}

const char *trace_opcode_str(unsigned op)
{
    for (size_t i = 0; i < NELEM(g_ops); i++)
        if (g_ops[i].op == op)
            return g_ops[i].name;
    return "unknown";
}

int trace_opcode_parse(const char *s, uint8_t *out)
{
    for (size_t i = 0; s && i < NELEM(g_ops); i++)
        if (strcmp(g_ops[i].name, s) == 0) {
            *out = (uint8_t)g_ops[i].op;
            return 0;
        }
    return -1;
}

/* ---- to JSON ---------------------------------------------------------------------- */

int trace_u64_parse(const char *s, uint64_t *out)
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

int trace_json_u64_get(const cJSON *it, uint64_t lim, uint64_t *out)
{
    if (cJSON_IsString(it))
        return trace_u64_parse(it->valuestring, out) == 0 && *out <= lim ? 0 : -1;
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) ||
        it->valuedouble >= (double)TRACE_JSON_EXACT ||
        it->valuedouble != floor(it->valuedouble) || (uint64_t)it->valuedouble > lim)
        return -1;
    *out = (uint64_t)it->valuedouble;
    return 0;
}

int trace_json_u64_text(uint64_t v, char text[24])
{
    snprintf(text, 24, "%" PRIu64, v);
    return v >= TRACE_JSON_EXACT;
}

int trace_json_u64_add(cJSON *o, const char *key, uint64_t v)
{
    char text[24];

    /* raw digits: cJSON prints a double with 15 significant digits when they read back
     * "equal" within its epsilon, so 2^53 - 1 would come out as 9.00719925474099e+15 */
    if (!trace_json_u64_text(v, text))
        return cJSON_AddRawToObject(o, key, text) ? 0 : -1;
    return cJSON_AddStringToObject(o, key, text) ? 0 : -1;
}

cJSON *trace_hdr_to_cjson(const trace_hdr_t *hdr)
{
    cJSON *o = cJSON_CreateObject(), *extra = NULL;

    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "format_version", TRACE_FORMAT_VERSION);
    cJSON_AddStringToObject(o, "producer", hdr->producer);
    cJSON_AddStringToObject(o, "producer_version", hdr->producer_version);
    cJSON_AddStringToObject(o, "mode", trace_mode_str(hdr->mode));
    cJSON_AddStringToObject(o, "host", hdr->host);
    cJSON_AddStringToObject(o, "device", hdr->device);
    cJSON_AddStringToObject(o, "firmware", hdr->firmware);
    cJSON_AddStringToObject(o, "mem", trace_mem_str(hdr->mem));
    cJSON_AddStringToObject(o, "clock_source", hdr->clock_source);
    cJSON_AddStringToObject(o, "clock_unit", "ns");
    trace_json_u64_add(o, "hint_bytes", hdr->hint_bytes);
    cJSON_AddStringToObject(o, "hint_source", trace_hint_src_str(hdr->hint_source));
    cJSON_AddNumberToObject(o, "pid", (double)hdr->pid);
    cJSON_AddNumberToObject(o, "rank", hdr->rank);
    trace_json_u64_add(o, "dropped", hdr->dropped);
    cJSON_AddStringToObject(o, "workload", hdr->workload);
    if (hdr->extra_json && *hdr->extra_json)
        extra = cJSON_Parse(hdr->extra_json);
    cJSON_AddItemToObject(o, "extra", extra ? extra : cJSON_CreateObject());
    return o;
}

/* The header's extra as it was read (a parse and print would change how numbers are
 * spelled, "1e5" -> "100000", so a header read within the size limit could be written past
 * it); NULL when there is none or it is not valid JSON (written as {}, as before). */
static const char *extra_verbatim(const trace_hdr_t *hdr)
{
    cJSON *e;
    int ok;

    if (!hdr->extra_json || !*hdr->extra_json)
        return NULL;
    e = cJSON_Parse(hdr->extra_json);
    ok = cJSON_IsObject(e);
    cJSON_Delete(e);
    return ok ? hdr->extra_json : NULL;
}

hs_status_t trace_hdr_to_json(const trace_hdr_t *hdr, char **out)
{
    const char *extra = extra_verbatim(hdr);
    cJSON *o = trace_hdr_to_cjson(hdr);
    char *text, *all;
    size_t n, m;

    if (!o)
        return HS_ERR_NOMEM;
    if (extra) /* spliced in below, in the same place (last) */
        cJSON_DeleteItemFromObjectCaseSensitive(o, "extra");
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text)
        return HS_ERR_NOMEM;
    if (!extra) {
        *out = text;
        return HS_OK;
    }
    n = strlen(text); /* "{...}": the last byte is the closing brace */
    m = strlen(extra);
    all = malloc(n + m + 16);
    if (all) {
        memcpy(all, text, n - 1);
        memcpy(all + n - 1, ",\"extra\":", 9);
        memcpy(all + n + 8, extra, m);
        memcpy(all + n + 8 + m, "}", 2);
    }
    free(text);
    if (!all)
        return HS_ERR_NOMEM;
    *out = all;
    return HS_OK;
}

/* ---- from JSON -------------------------------------------------------------------- */

static int get_str(const cJSON *o, const char *key, char *dst, size_t cap, char *why, size_t wl)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!it)
        return 0;
    if (!cJSON_IsString(it) || strlen(it->valuestring) >= cap) {
        snprintf(why, wl, "field '%s' must be a string of at most %zu bytes", key, cap - 1);
        return -1;
    }
    memcpy(dst, it->valuestring, strlen(it->valuestring) + 1);
    return 0;
}

static int get_num(const cJSON *o, const char *key, double lo, double hi, double *dst, char *why,
                   size_t wl)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!it)
        return 1;
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= lo && it->valuedouble <= hi) ||
        it->valuedouble != floor(it->valuedouble)) {
        snprintf(why, wl, "field '%s' must be an integer in %.0f..%.0f", key, lo, hi);
        return -1;
    }
    *dst = it->valuedouble;
    return 0;
}

static int get_enum(const cJSON *o, const char *key, const char *const *tab, size_t n,
                    unsigned *dst, char *why, size_t wl)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!it)
        return 0;
    if (!cJSON_IsString(it) || parse_name(tab, n, it->valuestring, dst) != 0) {
        snprintf(why, wl, "field '%s' must be one of the names in FORMAT.md", key);
        return -1;
    }
    return 0;
}

static int get_strings(const cJSON *o, trace_hdr_t *h, char *why, size_t wl)
{
    if (get_str(o, "producer", h->producer, sizeof(h->producer), why, wl) ||
        get_str(o, "producer_version", h->producer_version, sizeof(h->producer_version), why, wl) ||
        get_str(o, "host", h->host, sizeof(h->host), why, wl) ||
        get_str(o, "device", h->device, sizeof(h->device), why, wl) ||
        get_str(o, "firmware", h->firmware, sizeof(h->firmware), why, wl) ||
        get_str(o, "clock_source", h->clock_source, sizeof(h->clock_source), why, wl) ||
        get_str(o, "workload", h->workload, sizeof(h->workload), why, wl))
        return -1;
    return 0;
}

static int get_enums(const cJSON *o, trace_hdr_t *h, char *why, size_t wl)
{
    unsigned mode = h->mode, mem = h->mem, src = h->hint_source;

    if (get_enum(o, "mode", g_mode_names, NELEM(g_mode_names), &mode, why, wl) ||
        get_enum(o, "mem", g_mem_names, NELEM(g_mem_names), &mem, why, wl) ||
        get_enum(o, "hint_source", g_hint_names, NELEM(g_hint_names), &src, why, wl))
        return -1;
    h->mode = (trace_mode_t)mode;
    h->mem = (trace_mem_t)mem;
    h->hint_source = (trace_hint_src_t)src;
    return 0;
}

/* A u64 member (absent: 1, untouched); -1 with a reason when it is not one. */
static int get_u64(const cJSON *o, const char *key, uint64_t *dst, char *why, size_t wl)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!it)
        return 1;
    if (trace_json_u64_get(it, UINT64_MAX, dst) != 0) {
        snprintf(why, wl, "field '%s' must be a non-negative integer (from 2^53 on, a decimal "
                 "string: a JSON number that large is rounded)", key);
        return -1;
    }
    return 0;
}

static int get_numbers(const cJSON *o, trace_hdr_t *h, char *why, size_t wl)
{
    /* from 2^53 on a JSON number is not exact (2^53 + 1 parses as 2^53): refused, not rounded */
    const double max53 = (double)(TRACE_JSON_EXACT - 1);
    double v;
    int rc;

    if (get_u64(o, "hint_bytes", &h->hint_bytes, why, wl) < 0 ||
        get_u64(o, "dropped", &h->dropped, why, wl) < 0)
        return -1;
    if ((rc = get_num(o, "pid", -1, max53, &v, why, wl)) < 0)
        return -1;
    if (rc == 0)
        h->pid = (int64_t)v;
    if ((rc = get_num(o, "rank", -1, 2147483647.0, &v, why, wl)) < 0)
        return -1;
    if (rc == 0)
        h->rank = (int32_t)v;
    return 0;
}

static int get_unit(const cJSON *o, char *why, size_t wl)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "clock_unit");

    if (it && !(cJSON_IsString(it) && strcmp(it->valuestring, "ns") == 0)) {
        snprintf(why, wl, "field 'clock_unit' must be \"ns\"");
        return -1;
    }
    return 0;
}

static int get_extra(const cJSON *o, trace_hdr_t *h, char *why, size_t wl)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "extra");
    char *text;

    if (!it || (cJSON_IsObject(it) && !it->child))
        return 0;
    if (!cJSON_IsObject(it)) {
        snprintf(why, wl, "field 'extra' must be an object");
        return -1;
    }
    text = cJSON_PrintUnformatted(it);
    if (!text) {
        snprintf(why, wl, "out of memory");
        return -1;
    }
    free(h->extra_json);
    h->extra_json = text;
    return 0;
}

int trace_hdr_from_cjson(const cJSON *obj, trace_hdr_t *hdr, char *why, size_t whylen)
{
    if (!cJSON_IsObject(obj)) {
        snprintf(why, whylen, "the header is not a JSON object");
        return -1;
    }
    if (get_strings(obj, hdr, why, whylen) || get_enums(obj, hdr, why, whylen) ||
        get_numbers(obj, hdr, why, whylen) || get_unit(obj, why, whylen) ||
        get_extra(obj, hdr, why, whylen))
        return -1;
    hdr->version = TRACE_FORMAT_VERSION;
    return 0;
}

int trace_hdr_from_json(const char *text, size_t len, trace_hdr_t *hdr, char *why, size_t whylen)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    int rc;

    if (!o) {
        snprintf(why, whylen, "JSON syntax error at byte %td of the header",
                 end ? end - text : (ptrdiff_t)0);
        return -1;
    }
    if (hs_json_strict_check(text, len, why, whylen)) {
        size_t n = strlen(why); /* the offset counts from the JSON's first byte */
        snprintf(why + n, whylen - n, " of the header");
        cJSON_Delete(o);
        return -1;
    }
    rc = trace_hdr_from_cjson(o, hdr, why, whylen);
    cJSON_Delete(o);
    if (rc == 0 && trace_hdr_keep_extra(text, len, hdr) != HS_OK) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return rc;
}

hs_status_t trace_hdr_keep_extra(const char *text, size_t len, trace_hdr_t *hdr)
{
    size_t off, n;
    char *raw;

    if (!hdr->extra_json || hs_json_member_span(text, len, "extra", &off, &n) != 0)
        return HS_OK; /* an empty extra, or none */
    if (!(raw = malloc(n + 1)))
        return HS_ERR_NOMEM;
    memcpy(raw, text + off, n);
    raw[hs_json_minify(raw, n)] = '\0';
    free(hdr->extra_json);
    hdr->extra_json = raw;
    return HS_OK;
}

hs_status_t trace_hdr_copy(trace_hdr_t *dst, const trace_hdr_t *src)
{
    char *extra = NULL;

    if (src->extra_json && !(extra = strdup(src->extra_json)))
        return HS_ERR_NOMEM;
    *dst = *src;
    dst->extra_json = extra;
    return HS_OK;
}
