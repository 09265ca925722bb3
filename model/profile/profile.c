/* profile.c - profiles: the parameter table, built-ins, JSON files, overrides, validation,
 * hashing. The JSON format is documented in model/MODEL.md section 9. */
#include "model/profile/profile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/hs_util.h"
#include "model/path_rules.h"
#include "model/profile/profile_builtin.h"

static const prof_param_info_t g_params[PROF_NPARAMS] = {
#define X(field, key, kind, unit, def, doc) {key, kind, unit, def, doc, offsetof(profile_t, field)},
    PROFILE_PARAMS(X)
#undef X
};

const prof_param_info_t *profile_params(void)
{
    return g_params;
}

const prof_param_info_t *profile_param_find(const char *key)
{
    for (size_t i = 0; i < PROF_NPARAMS; i++)
        if (strcmp(g_params[i].key, key) == 0)
            return &g_params[i];
    return NULL;
}

static double *param_ptr(profile_t *p, const prof_param_info_t *info)
{
    return (double *)((char *)p + info->offset);
}

double profile_get(const profile_t *p, prof_param_id_t id)
{
    return *(const double *)((const char *)p + g_params[id].offset);
}

static const prof_builtin_t *builtin_find(const char *name)
{
    for (const prof_builtin_t *const *b = profile_builtins(); *b; b++)
        if (strcmp((*b)->name, name) == 0)
            return *b;
    return NULL;
}

const char *const *profile_builtin_names(void)
{
    return profile_builtin_name_list();
}

const char *profile_builtin_summary(const char *name)
{
    const prof_builtin_t *b = builtin_find(name);
    return b ? b->summary : NULL;
}

const char *profile_source(const profile_t *p, prof_param_id_t id)
{
    return p->src[id] ? p->src[id] : "default of model/profile/profile.h (generic RoCE host)";
}

void profile_free(profile_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < PROF_NPARAMS; i++)
        free(p->src[i]);
    free(p->notes);
    free(p);
}

profile_t *profile_alloc_defaults(void)
{
    profile_t *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    for (size_t i = 0; i < PROF_NPARAMS; i++)
        *param_ptr(p, &g_params[i]) = g_params[i].def;
    return p;
}

hs_status_t profile_set_src(profile_t *p, size_t id, const char *source)
{
    char *dup;

    if (!source)
        return HS_OK;
    dup = strdup(source);
    if (!dup)
        return HS_ERR_NOMEM;
    free(p->src[id]);
    p->src[id] = dup;
    return HS_OK;
}

/* Check one value against its kind and the model's constraints; logs with ctx. */
static hs_status_t check_value(const char *ctx, const prof_param_info_t *info, double v)
{
    if (!isfinite(v)) {
        hs_log_error("%s: parameter '%s' is not a finite number", ctx, info->key);
        return HS_ERR_INVALID;
    }
    if (v < 0) {
        hs_log_error("%s: parameter '%s' = %g is negative", ctx, info->key, v);
        return HS_ERR_INVALID;
    }
    if (info->kind == PROF_INT && (v != floor(v) || v > 9007199254740992.0)) {
        hs_log_error("%s: parameter '%s' = %g must be a whole number", ctx, info->key, v);
        return HS_ERR_INVALID;
    }
    static const char *const at_least_one[] = {
        "ll.depth", "bw.depth", "bw.depth_hinted", "ll.signal_every", "bw.signal_every",
        "ll.coal_count", "bw.coal_count", "conn.qps", "host.wqe_bb_bytes", "link.mtu_bytes",
        "switch.hysteresis", "switch.perturb_factor", NULL};
    for (size_t i = 0; at_least_one[i]; i++)
        if (strcmp(info->key, at_least_one[i]) == 0 && v < 1) {
            hs_log_error("%s: parameter '%s' = %g must be at least 1", ctx, info->key, v);
            return HS_ERR_INVALID;
        }
    if (strcmp(info->key, "link.gbps") == 0 && v <= 0) {
        hs_log_error("%s: parameter 'link.gbps' must be > 0", ctx);
        return HS_ERR_INVALID;
    }
    if ((strcmp(info->key, "host.l1_sq_share") == 0 || strstr(info->key, ".irq") ||
         strcmp(info->key, "jitter.think_reach") == 0) && v > 1) {
        hs_log_error("%s: parameter '%s' = %g must be between 0 and 1", ctx, info->key, v);
        return HS_ERR_INVALID;
    }
    /* the range the engines compute in (path_rules.c): every derived time finite */
    return prules_check_param(ctx, info, v);
}

hs_status_t profile_check_factors(const char *ctx, const profile_t *p)
{
    for (size_t i = 0; i < p->nfactors; i++) {
        const prof_factor_t *f = &p->factors[i];
        if (!isfinite(f->bw_factor) || f->bw_factor <= 0 || !isfinite(f->lat_factor) ||
            f->lat_factor < 0) {
            hs_log_error("%s: factors[%zu]: bw_factor must be > 0 and lat_factor >= 0", ctx, i);
            return HS_ERR_INVALID;
        }
        /* the range the engines compute in (path_rules.c): every derived time finite */
        if (prules_check_factor(ctx, i, f) != HS_OK)
            return HS_ERR_INVALID;
        if (i > 0 && f->max_bytes <= p->factors[i - 1].max_bytes) {
            hs_log_error("%s: factors[%zu]: max_bytes must increase", ctx, i);
            return HS_ERR_INVALID;
        }
    }
    return HS_OK;
}

hs_status_t profile_validate(const profile_t *p)
{
    hs_status_t st;

    for (size_t i = 0; i < PROF_NPARAMS; i++) {
        st = check_value(p->origin, &g_params[i], profile_get(p, (prof_param_id_t)i));
        if (st != HS_OK)
            return st;
    }
    if ((st = prules_check_windows(p)) != HS_OK)
        return st;
    return profile_check_factors(p->origin, p);
}

double profile_bw_factor(const profile_t *p, uint64_t size_bytes)
{
    const prof_factor_t *f = prules_factor_of(p, size_bytes);

    return f ? f->bw_factor : 1.0;
}

double profile_lat_factor(const profile_t *p, uint64_t size_bytes)
{
    return prules_lat_factor(p, size_bytes);
}

static hs_status_t load_builtin(const prof_builtin_t *b, profile_t **out)
{
    profile_t *p = profile_alloc_defaults();
    hs_status_t st = HS_ERR_NOMEM;

    if (!p)
        return HS_ERR_NOMEM;
    snprintf(p->name, sizeof(p->name), "%s", b->name);
    snprintf(p->origin, sizeof(p->origin), "builtin:%s", b->name);
    p->notes = strdup(b->notes ? b->notes : "");
    if (!p->notes)
        goto out_free;
    for (size_t i = 0; i < PROF_NPARAMS; i++)
        if ((st = profile_set_src(p, i, b->default_source)) != HS_OK)
            goto out_free;
    for (const prof_builtin_val_t *v = b->vals; v && v->key; v++) {
        const prof_param_info_t *info = profile_param_find(v->key);
        if (!info) { /* a bug in profile_builtin.c */
            hs_log_error("builtin:%s: unknown parameter '%s'", b->name, v->key);
            st = HS_ERR_INTERNAL;
            goto out_free;
        }
        *param_ptr(p, info) = v->value;
        if ((st = profile_set_src(p, (size_t)(info - g_params), v->source)) != HS_OK)
            goto out_free;
    }
    if (b->nfactors) /* b->factors is NULL when there are none: memcpy(.., NULL, 0) is UB */
        memcpy(p->factors, b->factors, b->nfactors * sizeof(*b->factors));
    p->nfactors = b->nfactors;
    *out = p;
    return HS_OK;
out_free:
    profile_free(p);
    return st;
}

/* Levenshtein distance, bounded strings (keys are short). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];

    if (la > 63 || lb > 63)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t sub = diag + (a[i - 1] != b[j - 1]);
            size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[lb];
}

static void log_unknown_key(const char *ctx, const char *key)
{
    char near[512] = "";
    size_t len = 0;
    const char *dot = strrchr(key, '.');

    for (size_t i = 0; i < PROF_NPARAMS && len < sizeof(near) - 64; i++) {
        const char *k = g_params[i].key;
        const char *kdot = strrchr(k, '.');
        int close = edit_distance(key, k) <= 3 ||
                    (dot && kdot && strcmp(dot, kdot) == 0) || strstr(k, key);
        if (close)
            len += (size_t)snprintf(near + len, sizeof(near) - len, "%s%s", len ? ", " : "", k);
    }
    if (len)
        hs_log_error("%s: unknown profile parameter '%s' (did you mean: %s?)", ctx, key, near);
    else
        hs_log_error("%s: unknown profile parameter '%s' (`hintsim profile show generic` "
                     "lists them all)", ctx, key);
}

hs_status_t profile_set_value(profile_t *p, const char *key, double value, const char *source)
{
    const prof_param_info_t *info = profile_param_find(key);
    hs_status_t st;

    if (!info) {
        log_unknown_key(p->origin, key);
        return HS_ERR_INVALID;
    }
    st = check_value(p->origin, info, value);
    if (st != HS_OK)
        return st;
    st = profile_set_src(p, (size_t)(info - g_params), source);
    if (st != HS_OK)
        return st;
    *param_ptr(p, info) = value;
    return HS_OK;
}

/* "factors.N.bw_factor=V" and friends. */
static hs_status_t set_factor(profile_t *p, const char *key, const char *val)
{
    char *end;
    unsigned long idx = strtoul(key + strlen("factors."), &end, 10);
    double v;

    if (*end != '.' || idx >= PROF_MAX_FACTORS || idx > p->nfactors) {
        hs_log_error("--set %s: expected factors.N.bw_factor|lat_factor|max_bytes with N <= %zu",
                     key, p->nfactors);
        return HS_ERR_INVALID;
    }
    prof_factor_t *f = &p->factors[idx];
    if (idx == p->nfactors)
        *f = (prof_factor_t){UINT64_MAX, 1.0, 1.0};
    if (strcmp(end + 1, "max_bytes") == 0) {
        uint64_t b;
        if (hs_parse_size(val, &b) != HS_OK) {
            hs_log_error("--set %s: '%s' is not a size", key, val);
            return HS_ERR_INVALID;
        }
        f->max_bytes = b;
    } else if (hs_parse_double(val, &v) != HS_OK ||
               (strcmp(end + 1, "bw_factor") != 0 && strcmp(end + 1, "lat_factor") != 0)) {
        hs_log_error("--set %s=%s: unknown factor field or not a finite number", key, val);
        return HS_ERR_INVALID;
    } else if (strcmp(end + 1, "bw_factor") == 0) {
        f->bw_factor = v;
    } else {
        f->lat_factor = v;
    }
    if (idx == p->nfactors)
        p->nfactors++;
    return profile_check_factors("--set", p);
}

hs_status_t profile_set(profile_t *p, const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    char key[128], src[192];
    double v;

    if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof(key)) {
        hs_log_error("--set '%s': expected KEY=VALUE", assignment);
        return HS_ERR_INVALID;
    }
    memcpy(key, assignment, (size_t)(eq - assignment));
    key[eq - assignment] = '\0';
    if (strncmp(key, "factors.", 8) == 0)
        return set_factor(p, key, eq + 1);
    if (!profile_param_find(key)) {
        log_unknown_key("--set", key);
        return HS_ERR_INVALID;
    }
    if (hs_parse_double(eq + 1, &v) != HS_OK) {
        uint64_t b;
        if (hs_parse_size(eq + 1, &b) != HS_OK) {
            hs_log_error("--set %s: '%s' is not a finite number", key, eq + 1);
            return HS_ERR_INVALID;
        }
        v = (double)b;
    }
    snprintf(src, sizeof(src), "--set %s", assignment);
    return profile_set_value(p, key, v, src);
}

uint64_t profile_hash(const profile_t *p)
{
    uint64_t h = HS_FNV_SEED;

    for (size_t i = 0; i < PROF_NPARAMS; i++) {
        double v = profile_get(p, (prof_param_id_t)i);
        h = hs_hash64(&v, sizeof(v), h);
    }
    for (size_t i = 0; i < p->nfactors; i++) {
        const prof_factor_t *f = &p->factors[i];
        h = hs_hash64(&f->max_bytes, sizeof(f->max_bytes), h);
        h = hs_hash64(&f->bw_factor, sizeof(f->bw_factor), h);
        h = hs_hash64(&f->lat_factor, sizeof(f->lat_factor), h);
    }
    return h;
}

hs_status_t profile_clone(const profile_t *p, profile_t **out)
{
    profile_t *c = malloc(sizeof(*c));

    if (!c)
        return HS_ERR_NOMEM;
    *c = *p;
    c->notes = NULL;
    memset(c->src, 0, sizeof(c->src));
    if (p->notes && !(c->notes = strdup(p->notes)))
        goto out_nomem;
    for (size_t i = 0; i < PROF_NPARAMS; i++)
        if (profile_set_src(c, i, p->src[i]) != HS_OK)
            goto out_nomem;
    *out = c;
    return HS_OK;
out_nomem:
    profile_free(c);
    return HS_ERR_NOMEM;
}

/* ---- JSON ------------------------------------------------------------------------ */

hs_status_t profile_load(const char *name_or_path, profile_t **out)
{
    const prof_builtin_t *b = builtin_find(name_or_path);
    char *text = NULL;
    size_t len = 0;
    hs_status_t st;

    if (b)
        return load_builtin(b, out);
    int is_stdin = strcmp(name_or_path, "-") == 0; /* "-": standard input */

    if (!is_stdin && access(name_or_path, F_OK) != 0 &&
        (strchr(name_or_path, '/') || strstr(name_or_path, ".json"))) {
        hs_log_error("%s: cannot read the profile file: %s", name_or_path, strerror(errno));
        return HS_ERR_IO;
    }
    if (!is_stdin && access(name_or_path, F_OK) != 0) {
        const char *const *n = profile_builtin_names();
        hs_log_error("profile '%s' is neither a built-in (%s, %s, %s) nor a .json file",
                     name_or_path, n[0], n[1] ? n[1] : "", n[2] ? n[2] : "");
        return HS_ERR_INVALID;
    }
    st = hs_read_file(name_or_path, &text, &len);
    if (st != HS_OK)
        return st;
    if (strlen(text) != len) {
        hs_log_error("%s: a NUL byte at offset %zu: not a profile's JSON text", name_or_path,
                     strlen(text));
        free(text);
        return HS_ERR_INVALID;
    }
    st = profile_json_parse(name_or_path, text, out);
    free(text);
    return st;
}
