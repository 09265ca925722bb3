/* profile_json.c - profiles to and from the JSON of model/MODEL.md section 9. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/hs_json.h"
#include "common/hs_util.h"
#include "model/profile/profile.h"
#include "model/profile/profile_builtin.h"

static hs_status_t parse_param(const char *path, profile_t *p, const cJSON *item)
{
    const prof_param_info_t *info = profile_param_find(item->string);
    const cJSON *val = item, *unit, *src;
    const char *source = "file";
    hs_status_t st;

    if (!info)
        return profile_set_value(p, item->string, 0, NULL); /* logs unknown key */
    if (cJSON_IsObject(item)) {
        val = cJSON_GetObjectItemCaseSensitive(item, "value");
        unit = cJSON_GetObjectItemCaseSensitive(item, "unit");
        src = cJSON_GetObjectItemCaseSensitive(item, "source");
        if (cJSON_IsString(unit) && strcmp(unit->valuestring, info->unit) != 0) {
            hs_log_error("%s: params.%s: unit '%s' but the model uses '%s'", path,
                         info->key, unit->valuestring, info->unit);
            return HS_ERR_INVALID;
        }
        if (cJSON_IsString(src))
            source = src->valuestring;
    }
    if (!cJSON_IsNumber(val)) {
        hs_log_error("%s: params.%s: expected a number or {\"value\": number, ...}", path,
                     info->key);
        return HS_ERR_INVALID;
    }
    st = profile_set_value(p, info->key, val->valuedouble, source);
    return st;
}

static hs_status_t parse_factors(const char *path, profile_t *p, const cJSON *arr)
{
    const cJSON *f;
    size_t i = 0;

    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > PROF_MAX_FACTORS) {
        hs_log_error("%s: factors: expected an array of at most %d objects", path,
                     PROF_MAX_FACTORS);
        return HS_ERR_INVALID;
    }
    cJSON_ArrayForEach(f, arr) {
        const cJSON *mb = cJSON_GetObjectItemCaseSensitive(f, "max_bytes");
        const cJSON *bw = cJSON_GetObjectItemCaseSensitive(f, "bw_factor");
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(f, "lat_factor");
        if (!cJSON_IsObject(f) || !cJSON_IsNumber(mb) || mb->valuedouble < 0 ||
            mb->valuedouble != floor(mb->valuedouble) || !cJSON_IsNumber(bw) ||
            (lat && !cJSON_IsNumber(lat))) {
            hs_log_error("%s: factors[%zu]: needs a whole max_bytes >= 0 and bw_factor (and "
                         "optional lat_factor) numbers", path, i);
            return HS_ERR_INVALID;
        }
        const cJSON *k;
        cJSON_ArrayForEach(k, f) {
            if (strcmp(k->string, "max_bytes") != 0 && strcmp(k->string, "bw_factor") != 0 &&
                strcmp(k->string, "lat_factor") != 0) {
                hs_log_error("%s: factors[%zu]: unknown key '%s' (expected max_bytes, "
                             "bw_factor, lat_factor)", path, i, k->string);
                return HS_ERR_INVALID;
            }
        }
        p->factors[i].max_bytes = mb->valuedouble >= 1.8446744073709552e19
                                      ? UINT64_MAX : (uint64_t)mb->valuedouble;
        p->factors[i].bw_factor = bw->valuedouble;
        p->factors[i].lat_factor = cJSON_IsNumber(lat) ? lat->valuedouble : 1.0;
        i++;
    }
    p->nfactors = i;
    return profile_check_factors(path, p);
}

static hs_status_t parse_root(const char *path, profile_t *p, const cJSON *root)
{
    const cJSON *it;
    hs_status_t st = HS_OK;

    cJSON_ArrayForEach(it, root) {
        if (strcmp(it->string, "name") == 0 && cJSON_IsString(it)) {
            snprintf(p->name, sizeof(p->name), "%s", it->valuestring);
        } else if (strcmp(it->string, "notes") == 0 && cJSON_IsString(it)) {
            free(p->notes);
            p->notes = strdup(it->valuestring);
            if (!p->notes)
                return HS_ERR_NOMEM;
        } else if (strcmp(it->string, "params") == 0 && cJSON_IsObject(it)) {
            const cJSON *prm;
            cJSON_ArrayForEach(prm, it) {
                if ((st = parse_param(path, p, prm)) != HS_OK)
                    return st;
            }
        } else if (strcmp(it->string, "factors") == 0) {
            if ((st = parse_factors(path, p, it)) != HS_OK)
                return st;
        } else if (strcmp(it->string, "hash") != 0 && strcmp(it->string, "origin") != 0 &&
                   strcmp(it->string, "meta") != 0) {
            hs_log_error("%s: unknown or mistyped top-level key '%s' (expected name, notes, "
                         "params, factors, meta)", path, it->string);
            return HS_ERR_INVALID;
        }
    }
    return st;
}

hs_status_t profile_json_parse(const char *path, const char *text, profile_t **out)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1); /* nothing may follow the object */
    profile_t *p = NULL;
    char why[160];
    hs_status_t st = HS_ERR_INVALID;

    if (!root) {
        hs_log_error("%s: JSON syntax error at byte offset %ld (expected one JSON object and "
                     "nothing after it)", path, end ? (long)(end - text) : 0L);
        goto out;
    }
    if (hs_json_strict_check(text, strlen(text), why, sizeof(why))) {
        hs_log_error("%s: %s", path, why);
        goto out;
    }
    if (!cJSON_IsObject(root)) {
        hs_log_error("%s: not a JSON object: a profile file is one object with name, notes, "
                     "params, factors", path);
        goto out;
    }
    p = profile_alloc_defaults();
    if (!p) {
        st = HS_ERR_NOMEM;
        goto out;
    }
    snprintf(p->origin, sizeof(p->origin), "%s", path);
    const char *base = strrchr(path, '/');
    snprintf(p->name, sizeof(p->name), "%s", base ? base + 1 : path);
    if ((st = parse_root(path, p, root)) != HS_OK || (st = profile_validate(p)) != HS_OK)
        goto out;
    *out = p;
    p = NULL;
out:
    profile_free(p);
    cJSON_Delete(root);
    return st;
}

static cJSON *factors_to_json(const profile_t *p)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; arr && i < p->nfactors; i++) {
        cJSON *f = cJSON_CreateObject();
        if (!f || !cJSON_AddItemToArray(arr, f)) {
            cJSON_Delete(f);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddNumberToObject(f, "max_bytes", (double)p->factors[i].max_bytes);
        cJSON_AddNumberToObject(f, "bw_factor", p->factors[i].bw_factor);
        cJSON_AddNumberToObject(f, "lat_factor", p->factors[i].lat_factor);
    }
    return arr;
}

void profile_ident_json(cJSON *o, const profile_t *p)
{
    char hash[32];

    snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)profile_hash(p));
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddStringToObject(o, "origin", p->origin);
    cJSON_AddStringToObject(o, "hash", hash);
}

cJSON *profile_to_json(const profile_t *p)
{
    cJSON *root = cJSON_CreateObject(), *params, *fac;

    if (!root)
        return NULL;
    profile_ident_json(root, p);
    cJSON_AddStringToObject(root, "notes", p->notes ? p->notes : "");
    params = cJSON_AddObjectToObject(root, "params");
    for (size_t i = 0; params && i < PROF_NPARAMS; i++) {
        const prof_param_info_t *info = &profile_params()[i];
        cJSON *o = cJSON_AddObjectToObject(params, info->key);
        if (!o)
            break;
        cJSON_AddNumberToObject(o, "value", profile_get(p, (prof_param_id_t)i));
        cJSON_AddStringToObject(o, "unit", info->unit);
        cJSON_AddStringToObject(o, "source", profile_source(p, (prof_param_id_t)i));
    }
    fac = factors_to_json(p);
    if (!params || !fac || !cJSON_AddItemToObject(root, "factors", fac)) {
        cJSON_Delete(fac);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

hs_status_t profile_save(const profile_t *p, const char *path)
{
    cJSON *j = profile_to_json(p);
    char *text;
    hs_status_t st;

    if (!j)
        return HS_ERR_NOMEM;
    text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text)
        return HS_ERR_NOMEM;
    st = hs_write_file_atomic(path, text);
    free(text);
    return st;
}
