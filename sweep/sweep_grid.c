/* sweep_grid.c - parse and check a grid file (format in sweep/GRID.md), expand it into points.
 *
 * Everything the user can get wrong is checked here, before any point runs: unknown
 * top-level keys, unknown profile parameters (the PROFILE_PARAMS table of model/profile/profile.h
 * is the list of valid keys), values that do not parse, empty axes, duplicate values,
 * missing trace or profile files. Each error names the grid file and the entry.
 */
#include "sweep/sweep_grid.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hs_json.h"
#include "common/hs_util.h"
#include "model/predict/objective.h"
#include "model/profile/profile.h"

#define SWEEP_MAX_TEXT 128

typedef struct {
    const char *key;
    prof_kind_t kind;
} sweep_param_t;

static const sweep_param_t g_params[] = {
#define X(field, key, kind, unit, def, doc) {key, kind},
    PROFILE_PARAMS(X)
#undef X
};

static const sweep_param_t *param_find(const char *key)
{
    for (size_t i = 0; i < sizeof(g_params) / sizeof(g_params[0]); i++)
        if (strcmp(g_params[i].key, key) == 0)
            return &g_params[i];
    return NULL;
}

const char *sweep_axis_value(const sweep_axis_t *ax, size_t i)
{
    const char *eq = strchr(ax->assign[i], '=');
    return eq ? eq + 1 : ax->assign[i];
}

hs_status_t sweep_value_canon(const char *where, const char *key, const char *text, char *buf,
                              size_t buflen)
{
    const sweep_param_t *p = param_find(key);
    uint64_t u;
    double d;

    if (!p) {
        hs_log_error("%s: unknown parameter '%s' (see 'hintsim profile show NAME')", where, key);
        return HS_ERR_INVALID;
    }
    if (p->kind == PROF_INT) {
        if (hs_parse_size(text, &u) != HS_OK) {
            hs_log_error("%s: '%s' is not a whole number >= 0 (suffixes K M G allowed)", where,
                         text);
            return HS_ERR_INVALID;
        }
        snprintf(buf, buflen, "%llu", (unsigned long long)u);
        return HS_OK;
    }
    if (hs_parse_double(text, &d) != HS_OK || d < 0) {
        hs_log_error("%s: '%s' is not a finite number >= 0", where, text);
        return HS_ERR_INVALID;
    }
    snprintf(buf, buflen, "%.15g", d);
    return HS_OK;
}

/* Text of a JSON scalar (number or string) for value parsing; NULL for other types. */
static const char *json_scalar_text(const cJSON *v, char *buf, size_t buflen)
{
    if (cJSON_IsString(v))
        return v->valuestring;
    if (cJSON_IsNumber(v)) {
        snprintf(buf, buflen, "%.17g", v->valuedouble);
        return buf;
    }
    return NULL;
}

static char *assign_dup(const char *key, const char *value)
{
    size_t len = strlen(key) + strlen(value) + 2;
    char *s = malloc(len);

    if (s)
        snprintf(s, len, "%s=%s", key, value);
    return s;
}

/* Canonical "KEY=VALUE" from a JSON entry; where names it for errors. */
static hs_status_t assign_from_json(const char *where, const char *key, const cJSON *v,
                                    char **out)
{
    char num[64], canon[SWEEP_MAX_TEXT];
    const char *text = json_scalar_text(v, num, sizeof(num));
    hs_status_t st;

    if (!text) {
        hs_log_error("%s: expected a number or a string", where);
        return HS_ERR_INVALID;
    }
    st = sweep_value_canon(where, key, text, canon, sizeof(canon));
    if (st != HS_OK)
        return st;
    *out = assign_dup(key, canon);
    return *out ? HS_OK : HS_ERR_NOMEM;
}

/* Parse one --set "KEY=VALUE" from the command line into canonical form. */
static hs_status_t assign_from_text(const char *text, char **out)
{
    char key[SWEEP_MAX_TEXT], canon[SWEEP_MAX_TEXT], where[SWEEP_MAX_TEXT + 16];
    const char *eq = strchr(text, '=');
    hs_status_t st;

    if (!eq || eq == text || (size_t)(eq - text) >= sizeof(key)) {
        hs_log_error("--set '%s': expected KEY=VALUE", text);
        return HS_ERR_INVALID;
    }
    memcpy(key, text, (size_t)(eq - text));
    key[eq - text] = '\0';
    snprintf(where, sizeof(where), "--set %s", key);
    st = sweep_value_canon(where, key, eq + 1, canon, sizeof(canon));
    if (st != HS_OK)
        return st;
    *out = assign_dup(key, canon);
    return *out ? HS_OK : HS_ERR_NOMEM;
}

/* A path from the grid, relative to the grid file's directory unless absolute. */
static char *resolve_path(const char *grid_path, const char *p)
{
    char *dup, *dir, *res;
    size_t len;

    if (p[0] == '/' || !grid_path)
        return strdup(p);
    dup = strdup(grid_path);
    if (!dup)
        return NULL;
    dir = dirname(dup);
    len = strlen(dir) + strlen(p) + 2;
    res = malloc(len);
    if (res)
        snprintf(res, len, "%s/%s", dir, p);
    free(dup);
    return res;
}

static int looks_like_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

static hs_status_t check_file(const char *where, const char *path)
{
    struct stat sb;

    if (stat(path, &sb) != 0) {
        hs_log_error("%s: '%s': %s", where, path, strerror(errno));
        return HS_ERR_INVALID;
    }
    if (!S_ISREG(sb.st_mode)) {
        hs_log_error("%s: '%s': not a regular file", where, path);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

/* path (an existing file) made canonical and absolute, so that what the outputs name does
 * not depend on the working directory or on how the path was typed (./a, a, /x/a). */
static hs_status_t canon_path(char **path)
{
    char *r = realpath(*path, NULL);

    if (!r) {
        hs_log_error("%s: cannot resolve path: %s", *path, strerror(errno));
        return HS_ERR_IO;
    }
    free(*path);
    *path = r;
    return HS_OK;
}

static hs_status_t grid_add_trace(sweep_grid_t *g, const char *where, const char *label,
                                  const char *base)
{
    sweep_trace_t *t;
    char *path = resolve_path(base, label);
    hs_status_t st;

    if (!path)
        return HS_ERR_NOMEM;
    if (strcmp(label, "-") == 0) { /* not stdin: every point (and Slurm task) reads it again */
        hs_log_error("%s: '-': a sweep reads each trace again for every point: give it as a "
                     "file (hintsim trace convert - -o FILE.hst)", where);
        free(path);
        return HS_ERR_INVALID;
    }
    st = check_file(where, path);
    if (st == HS_OK && !base) /* from --trace: named by its canonical path */
        st = canon_path(&path);
    if (st != HS_OK) {
        free(path);
        return st;
    }
    t = realloc(g->traces, (g->ntraces + 1) * sizeof(*t));
    if (!t) {
        free(path);
        return HS_ERR_NOMEM;
    }
    g->traces = t;
    t = &g->traces[g->ntraces++];
    memset(t, 0, sizeof(*t));
    t->path = path;
    t->label = strdup(base ? label : path);
    return t->label ? HS_OK : HS_ERR_NOMEM;
}

static hs_status_t grid_add_profile(sweep_grid_t *g, const char *where, const char *name,
                                    const char *base)
{
    char **v;
    char *p = looks_like_path(name) ? resolve_path(base, name) : strdup(name);
    hs_status_t st;

    if (!p)
        return HS_ERR_NOMEM;
    if (looks_like_path(name) && ((st = check_file(where, p)) != HS_OK ||
                                  (st = canon_path(&p)) != HS_OK)) {
        free(p);
        return st;
    }
    v = realloc(g->profiles, (g->nprofiles + 1) * sizeof(*v));
    if (!v) {
        free(p);
        return HS_ERR_NOMEM;
    }
    g->profiles = v;
    g->profiles[g->nprofiles++] = p;
    return HS_OK;
}

static int grid_has_key(const sweep_grid_t *g, const char *key)
{
    size_t klen = strlen(key);

    for (size_t i = 0; i < g->nfixed; i++)
        if (strncmp(g->fixed[i], key, klen) == 0 && g->fixed[i][klen] == '=')
            return 1;
    for (size_t i = 0; i < g->naxes; i++)
        if (strcmp(g->axes[i].key, key) == 0)
            return 1;
    return 0;
}

static hs_status_t grid_add_fixed(sweep_grid_t *g, const char *where, char *assign)
{
    char key[SWEEP_MAX_TEXT];
    size_t klen = (size_t)(strchr(assign, '=') - assign);
    char **v;

    snprintf(key, sizeof(key), "%.*s", (int)klen, assign);
    if (grid_has_key(g, key)) {
        hs_log_error("%s: '%s' is set twice (in 'set', 'vary' or --set)", where, key);
        free(assign);
        return HS_ERR_INVALID;
    }
    v = realloc(g->fixed, (g->nfixed + 1) * sizeof(*v));
    if (!v) {
        free(assign);
        return HS_ERR_NOMEM;
    }
    g->fixed = v;
    g->fixed[g->nfixed++] = assign;
    return HS_OK;
}

/* ---- the JSON sections -------------------------------------------------------------- */

typedef hs_status_t (*str_adder_t)(sweep_grid_t *g, const char *where, const char *s,
                                   const char *base);

/* A string or an array of strings ("traces", "profiles"). */
static hs_status_t parse_str_list(sweep_grid_t *g, const cJSON *v, const char *name,
                                  str_adder_t add)
{
    char where[SWEEP_MAX_TEXT + 300];
    const cJSON *it;
    int i = 0;
    hs_status_t st;

    if (cJSON_IsString(v)) {
        snprintf(where, sizeof(where), "%s: %s", g->path, name);
        return add(g, where, v->valuestring, g->path);
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
        hs_log_error("%s: %s: expected a non-empty array of strings", g->path, name);
        return HS_ERR_INVALID;
    }
    cJSON_ArrayForEach(it, v) {
        snprintf(where, sizeof(where), "%s: %s[%d]", g->path, name, i++);
        if (!cJSON_IsString(it)) {
            hs_log_error("%s: expected a string", where);
            return HS_ERR_INVALID;
        }
        if ((st = add(g, where, it->valuestring, g->path)) != HS_OK)
            return st;
    }
    return HS_OK;
}

static hs_status_t parse_set(sweep_grid_t *g, const cJSON *v)
{
    char where[SWEEP_MAX_TEXT + 300];
    const cJSON *it;
    char *assign;
    hs_status_t st;

    if (!cJSON_IsObject(v)) {
        hs_log_error("%s: set: expected an object {\"KEY\": VALUE, ...}", g->path);
        return HS_ERR_INVALID;
    }
    cJSON_ArrayForEach(it, v) {
        snprintf(where, sizeof(where), "%s: set.%s", g->path, it->string);
        if ((st = assign_from_json(where, it->string, it, &assign)) != HS_OK)
            return st;
        if ((st = grid_add_fixed(g, where, assign)) != HS_OK)
            return st;
    }
    return HS_OK;
}

static hs_status_t axis_fill(sweep_grid_t *g, sweep_axis_t *ax, const cJSON *arr,
                             const char *where)
{
    char w[SWEEP_MAX_TEXT + 320];
    const cJSON *it;
    hs_status_t st;

    ax->assign = calloc((size_t)cJSON_GetArraySize(arr), sizeof(char *));
    if (!ax->assign)
        return HS_ERR_NOMEM;
    cJSON_ArrayForEach(it, arr) {
        snprintf(w, sizeof(w), "%s[%zu]", where, ax->n);
        if ((st = assign_from_json(w, ax->key, it, &ax->assign[ax->n])) != HS_OK)
            return st;
        for (size_t j = 0; j < ax->n; j++) {
            if (strcmp(ax->assign[j], ax->assign[ax->n]) == 0) {
                hs_log_error("%s: duplicate value '%s'", w, sweep_axis_value(ax, j));
                free(ax->assign[ax->n]);
                return HS_ERR_INVALID;
            }
        }
        ax->n++;
    }
    (void)g;
    return HS_OK;
}

static hs_status_t parse_axis(sweep_grid_t *g, const cJSON *it)
{
    char where[SWEEP_MAX_TEXT + 300];
    sweep_axis_t *axes;

    snprintf(where, sizeof(where), "%s: vary.%s", g->path, it->string);
    if (!param_find(it->string)) {
        hs_log_error("%s: unknown parameter '%s' (see 'hintsim profile show NAME')", where,
                     it->string);
        return HS_ERR_INVALID;
    }
    if (grid_has_key(g, it->string)) {
        hs_log_error("%s: '%s' is set twice (in 'set', 'vary' or --set)", where, it->string);
        return HS_ERR_INVALID;
    }
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0) {
        hs_log_error("%s: empty axis: expected a non-empty array of values", where);
        return HS_ERR_INVALID;
    }
    axes = realloc(g->axes, (g->naxes + 1) * sizeof(*axes));
    if (!axes)
        return HS_ERR_NOMEM;
    g->axes = axes;
    memset(&g->axes[g->naxes], 0, sizeof(g->axes[0]));
    g->axes[g->naxes].key = strdup(it->string);
    g->naxes++;
    if (!g->axes[g->naxes - 1].key)
        return HS_ERR_NOMEM;
    return axis_fill(g, &g->axes[g->naxes - 1], it, where);
}

static hs_status_t parse_vary(sweep_grid_t *g, const cJSON *v)
{
    const cJSON *it;
    hs_status_t st;

    if (!cJSON_IsObject(v)) {
        hs_log_error("%s: vary: expected an object {\"KEY\": [VALUES], ...}", g->path);
        return HS_ERR_INVALID;
    }
    cJSON_ArrayForEach(it, v) {
        if ((st = parse_axis(g, it)) != HS_OK)
            return st;
    }
    return HS_OK;
}

static hs_status_t hint_from_json(const char *where, const cJSON *v, sweep_hint_t *h)
{
    char num[64];
    const char *text = json_scalar_text(v, num, sizeof(num));

    memset(h, 0, sizeof(*h));
    if (text && strcmp(text, "auto") == 0) {
        h->is_auto = 1;
        return HS_OK;
    }
    if (!text || hs_parse_size(text, &h->bytes) != HS_OK) {
        hs_log_error("%s: expected \"auto\" or a size in bytes (suffixes K M G allowed)",
                     where);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

static hs_status_t parse_hints(sweep_grid_t *g, const cJSON *v)
{
    char where[SWEEP_MAX_TEXT + 300];
    const cJSON *it;
    hs_status_t st;

    if (g->hints) { /* hs_json_strict_check refuses a second "hints"; never append to one */
        hs_log_error("%s: hints: given twice", g->path);
        return HS_ERR_INVALID;
    }
    if (!cJSON_IsArray(v)) {
        g->hints = calloc(1, sizeof(*g->hints));
        if (!g->hints)
            return HS_ERR_NOMEM;
        g->nhints = 1;
        snprintf(where, sizeof(where), "%s: hints", g->path);
        return hint_from_json(where, v, &g->hints[0]);
    }
    if (cJSON_GetArraySize(v) == 0) {
        hs_log_error("%s: hints: empty axis: expected \"auto\" or a non-empty array", g->path);
        return HS_ERR_INVALID;
    }
    g->hints = calloc((size_t)cJSON_GetArraySize(v), sizeof(*g->hints));
    if (!g->hints)
        return HS_ERR_NOMEM;
    cJSON_ArrayForEach(it, v) {
        snprintf(where, sizeof(where), "%s: hints[%zu]", g->path, g->nhints);
        if ((st = hint_from_json(where, it, &g->hints[g->nhints])) != HS_OK)
            return st;
        for (size_t j = 0; j < g->nhints; j++) {
            if (g->hints[j].is_auto == g->hints[g->nhints].is_auto &&
                g->hints[j].bytes == g->hints[g->nhints].bytes) {
                hs_log_error("%s: duplicate hint", where);
                return HS_ERR_INVALID;
            }
        }
        g->nhints++;
    }
    return HS_OK;
}

/* A string field that must be one of a '|'-separated list of choices. */
static hs_status_t parse_choice(const sweep_grid_t *g, const cJSON *v, const char *name,
                                const char *choices, char *dst, size_t dstlen)
{
    const char *s;
    size_t n;

    if (!cJSON_IsString(v) || !(n = strlen(v->valuestring)) || n >= dstlen)
        goto bad;
    for (s = choices; s; s = strchr(s, '|') ? strchr(s, '|') + 1 : NULL) {
        if (strncmp(s, v->valuestring, n) == 0 && (s[n] == '|' || s[n] == '\0')) {
            memcpy(dst, v->valuestring, n + 1);
            return HS_OK;
        }
    }
bad:
    hs_log_error("%s: %s: expected one of %s", g->path, name, choices);
    return HS_ERR_INVALID;
}

static hs_status_t parse_field(sweep_grid_t *g, const cJSON *it)
{
    const char *k = it->string;

    if (strcmp(k, "traces") == 0)
        return parse_str_list(g, it, k, grid_add_trace);
    if (strcmp(k, "profiles") == 0)
        return parse_str_list(g, it, k, grid_add_profile);
    if (strcmp(k, "set") == 0)
        return parse_set(g, it);
    if (strcmp(k, "vary") == 0)
        return parse_vary(g, it);
    if (strcmp(k, "hints") == 0)
        return parse_hints(g, it);
    if (strcmp(k, "objective") == 0)
        return parse_choice(g, it, k, OBJ_CHOICES, g->objective, sizeof(g->objective));
    if (strcmp(k, "engine") == 0)
        return parse_choice(g, it, k, "model|sim", g->engine, sizeof(g->engine));
    if (strcmp(k, "mode") == 0)
        return parse_choice(g, it, k, "open|closed", g->mode, sizeof(g->mode));
    if (strcmp(k, "description") == 0 && cJSON_IsString(it))
        return HS_OK;
    hs_log_error("%s: unknown key '%s' (expected traces, profiles, set, vary, hints, "
                 "objective, engine, mode, description)", g->path, k);
    return HS_ERR_INVALID;
}

static hs_status_t parse_json(sweep_grid_t *g, const char *text, size_t len)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    const cJSON *it;
    char why[160];
    hs_status_t st = HS_OK;

    if (!root) {
        hs_log_error("%s: not valid JSON near byte offset %zu", g->path,
                     end ? (size_t)(end - text) : (size_t)0);
        return HS_ERR_INVALID;
    }
    if (hs_json_strict_check(text, len, why, sizeof(why))) {
        hs_log_error("%s: %s", g->path, why);
        st = HS_ERR_INVALID;
        goto out;
    }
    if (!cJSON_IsObject(root)) {
        hs_log_error("%s: expected a JSON object at the top level", g->path);
        st = HS_ERR_INVALID;
        goto out;
    }
    cJSON_ArrayForEach(it, root) {
        if ((st = parse_field(g, it)) != HS_OK)
            goto out;
    }
out:
    cJSON_Delete(root);
    return st;
}

static hs_status_t grid_add_extra(sweep_grid_t *g, const sweep_grid_extra_t *x)
{
    hs_status_t st;
    char *assign;

    for (size_t i = 0; i < x->ntraces; i++) {
        st = grid_add_trace(g, "--trace", x->traces[i], NULL);
        if (st != HS_OK)
            return st;
    }
    for (size_t i = 0; i < x->nprofiles; i++) {
        st = grid_add_profile(g, "--profile", x->profiles[i], NULL);
        if (st != HS_OK)
            return st;
    }
    for (size_t i = 0; i < x->nsets; i++) {
        st = assign_from_text(x->sets[i], &assign);
        if (st != HS_OK)
            return st;
        st = grid_add_fixed(g, "--set", assign);
        if (st != HS_OK)
            return st;
    }
    return HS_OK;
}

static hs_status_t grid_defaults(sweep_grid_t *g)
{
    if (g->ntraces == 0) {
        hs_log_error("%s: no traces: give \"traces\" in the grid or --trace", g->path);
        return HS_ERR_INVALID;
    }
    if (g->nprofiles == 0) {
        hs_log_error("%s: no profiles: give \"profiles\" in the grid or --profile", g->path);
        return HS_ERR_INVALID;
    }
    if (g->nhints == 0) {
        g->hints = calloc(1, sizeof(*g->hints));
        if (!g->hints)
            return HS_ERR_NOMEM;
        g->hints[0].is_auto = 1;
        g->nhints = 1;
    }
    return HS_OK;
}

/* The grid's text: from standard input for "-" (a pipe or a redirected file; its relative
 * paths are then relative to the working directory), else from a regular file (a FIFO
 * would block the read until some writer came). Sets g->canon. */
static hs_status_t grid_read(sweep_grid_t *g, char **text, size_t *len)
{
    hs_status_t st;

    if (strcmp(g->path, "-") == 0) {
        g->canon = strdup("-");
        if (!g->canon)
            return HS_ERR_NOMEM;
        if ((st = hs_read_file("/dev/stdin", text, len)) != HS_OK)
            hs_log_error("--grid -: cannot read the grid from standard input");
        return st;
    }
    if ((st = check_file("grid", g->path)) != HS_OK)
        return st;
    g->canon = strdup(g->path);
    if (!g->canon)
        return HS_ERR_NOMEM;
    if ((st = canon_path(&g->canon)) != HS_OK)
        return st;
    return hs_read_file(g->path, text, len);
}

hs_status_t sweep_grid_load(const char *path, const sweep_grid_extra_t *extra,
                            sweep_grid_t **out)
{
    sweep_grid_t *g = calloc(1, sizeof(*g));
    char *text = NULL;
    size_t len = 0;
    hs_status_t st = HS_ERR_NOMEM;

    if (!g || !(g->path = strdup(path)))
        goto out;
    strcpy(g->objective, "p99");
    strcpy(g->engine, "model");
    strcpy(g->mode, "open");
    if ((st = grid_read(g, &text, &len)) != HS_OK)
        goto out;
    if ((st = parse_json(g, text, len)) != HS_OK)
        goto out;
    g->nprofiles_grid = g->nprofiles;
    if (extra && (st = grid_add_extra(g, extra)) != HS_OK)
        goto out;
    st = grid_defaults(g);
out:
    free(text);
    if (st != HS_OK) {
        sweep_grid_free(g);
        return st;
    }
    *out = g;
    return HS_OK;
}

hs_status_t sweep_grid_hash_traces(sweep_grid_t *g)
{
    for (size_t i = 0; i < g->ntraces; i++) {
        size_t len;
        hs_status_t st = hs_hash_file(g->traces[i].path, HS_FNV_SEED, &g->traces[i].hash, &len);

        if (st != HS_OK)
            return st;
        g->traces[i].size_bytes = len;
    }
    return HS_OK;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void sweep_grid_free(sweep_grid_t *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->ntraces; i++) {
        free(g->traces[i].path);
        free(g->traces[i].label);
    }
    free(g->traces);
    free_strv(g->profiles, g->nprofiles);
    free_strv(g->fixed, g->nfixed);
    for (size_t i = 0; i < g->naxes; i++) {
        free(g->axes[i].key);
        free_strv(g->axes[i].assign, g->axes[i].n);
    }
    free(g->axes);
    free(g->hints);
    free(g->path);
    free(g->canon);
    free(g);
}

/* ---- expansion ---------------------------------------------------------------------- */

/* More points than this is a mistake in the grid, not a sweep. */
#define SWEEP_MAX_POINTS (1u << 24)

hs_status_t sweep_plan_build(const sweep_grid_t *g, sweep_plan_t **out)
{
    sweep_plan_t *plan;
    size_t n = g->ntraces * g->nprofiles * g->nhints, stride = g->naxes ? g->naxes : 1;

    for (size_t a = 0; a < g->naxes && n <= SWEEP_MAX_POINTS; a++)
        n *= g->axes[a].n;
    if (n > SWEEP_MAX_POINTS) {
        hs_log_error("%s: the grid expands to more than %u points", g->path, SWEEP_MAX_POINTS);
        return HS_ERR_INVALID;
    }
    if (!(plan = calloc(1, sizeof(*plan))))
        return HS_ERR_NOMEM;
    plan->pts = calloc(n, sizeof(*plan->pts));
    plan->ax_store = calloc(n * stride, sizeof(size_t));
    if (!plan->pts || !plan->ax_store) {
        sweep_plan_free(plan);
        return HS_ERR_NOMEM;
    }
    plan->n = n;
    for (size_t i = 0; i < n; i++) {
        sweep_point_t *pt = &plan->pts[i];
        size_t rem = i;
        size_t *ax = &plan->ax_store[i * stride];

        pt->index = i;
        pt->ax = ax;
        pt->hint = rem % g->nhints;
        rem /= g->nhints;
        for (size_t a = g->naxes; a-- > 0;) {
            ax[a] = rem % g->axes[a].n;
            rem /= g->axes[a].n;
        }
        pt->profile = rem % g->nprofiles;
        pt->trace = rem / g->nprofiles;
    }
    *out = plan;
    return HS_OK;
}

void sweep_plan_free(sweep_plan_t *plan)
{
    if (!plan)
        return;
    free(plan->pts);
    free(plan->ax_store);
    free(plan);
}

size_t sweep_point_sets(const sweep_grid_t *g, const sweep_point_t *pt, const char **sets,
                        size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i < g->nfixed; i++, n++)
        if (n < cap)
            sets[n] = g->fixed[i];
    for (size_t a = 0; a < g->naxes; a++, n++)
        if (n < cap)
            sets[n] = g->axes[a].assign[pt->ax[a]];
    return n;
}

void sweep_hint_text(const sweep_hint_t *h, char *buf, size_t buflen)
{
    if (h->is_auto)
        snprintf(buf, buflen, "auto");
    else
        snprintf(buf, buflen, "%llu", (unsigned long long)h->bytes);
}
