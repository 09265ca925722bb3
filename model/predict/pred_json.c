/* pred_json.c - prediction results and their provenance as the JSON of CLI.md, each
 * written from the field tables of predict.h. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "model/predict/predict.h"

hs_status_t pred_mode_parse(const char *text, pred_mode_t *out)
{
    if (strcmp(text, "open") == 0)
        *out = PRED_OPEN;
    else if (strcmp(text, "closed") == 0)
        *out = PRED_CLOSED;
    else
        return HS_ERR_INVALID;
    return HS_OK;
}

#define PRED_JSON_NUM_(member, kind) cJSON_AddNumberToObject(o, #member, (double)r->member);
#define PRED_JSON_KEYED_(member, key) cJSON_AddNumberToObject(o, key, (double)r->member);
#define PRED_JSON_COLD_(member, kind, key) PRED_JSON_KEYED_(member, key)
#define PRED_JSON_FIGURE_(member, kind, head, width, form) PRED_JSON_NUM_(member, kind)

static cJSON *classes_to_json(const pred_result_t *res)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; arr && i < res->nclasses; i++) {
        const pred_class_t *r = &res->classes[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            cJSON_Delete(arr);
            return NULL;
        }
        PRED_CLASS_FIELDS(PRED_JSON_NUM_)
    }
    return arr;
}

void pred_costs_to_json(cJSON *parent, const pred_costs_t *r)
{
    cJSON *o = cJSON_AddObjectToObject(parent, "costs_us");

    if (!o)
        return;
    PRED_COSTS(PRED_JSON_KEYED_)
}

hs_status_t pred_costs_from_json(const cJSON *parent, pred_costs_t *c)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, "costs_us"), *v;

    if (!cJSON_IsObject(o))
        return HS_ERR_INVALID;
#define PRED_COST_PARSE_(member, key)                                                       \
    v = cJSON_GetObjectItemCaseSensitive(o, key);                                           \
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))                                    \
        return HS_ERR_INVALID;                                                              \
    c->member = v->valuedouble;
    PRED_COSTS(PRED_COST_PARSE_)
#undef PRED_COST_PARSE_
    return HS_OK;
}

static void add_cold(cJSON *parent, const pred_result_t *r)
{
    cJSON *o = cJSON_AddObjectToObject(parent, "cold");

    if (!o)
        return;
    PRED_COLD_FIGURES(PRED_JSON_COLD_)
}

void pred_figures_to_json(cJSON *o, const pred_result_t *r)
{
    PRED_FIGURES(PRED_JSON_FIGURE_)
}

cJSON *pred_result_to_json(const pred_result_t *r)
{
    cJSON *o = cJSON_CreateObject(), *cls;

    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "hint", (double)r->hint_bytes);
    cJSON_AddNumberToObject(o, "count", (double)r->count);
    pred_figures_to_json(o, r);
    pred_costs_to_json(o, &r->costs);
    add_cold(o, r);
    cls = classes_to_json(r);
    if (!cls || !cJSON_AddItemToObject(o, "by_size_class", cls)) {
        cJSON_Delete(cls);
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- provenance: what a result was computed from ------------------------------------ */

cJSON *pred_profile_json(const profile_t *p)
{
    cJSON *o = cJSON_CreateObject();

    if (o)
        profile_ident_json(o, p);
    return o;
}

cJSON *pred_trace_json(const char *path, const trace_t *tr)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddNumberToObject(o, "records", (double)tr->n);
    cJSON_AddStringToObject(o, "producer", tr->hdr.producer);
    cJSON_AddStringToObject(o, "workload", tr->hdr.workload);
    cJSON_AddNumberToObject(o, "hint_bytes", (double)tr->hdr.hint_bytes);
    return o;
}
