/* pred_json.c - prediction results as the JSON of CLI.md. */
#include <string.h>

#include <cjson/cJSON.h>

#include "model/predict.h"

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

static cJSON *classes_to_json(const pred_result_t *r)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; arr && i < r->nclasses; i++) {
        const pred_class_t *c = &r->classes[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddNumberToObject(o, "min_bytes", (double)c->min_bytes);
        cJSON_AddNumberToObject(o, "max_bytes", (double)c->max_bytes);
        cJSON_AddNumberToObject(o, "count", (double)c->count);
        cJSON_AddNumberToObject(o, "p50_us", c->p50_us);
        cJSON_AddNumberToObject(o, "p99_us", c->p99_us);
    }
    return arr;
}

static void add_costs(cJSON *o, const pred_costs_t *c)
{
    cJSON *k = cJSON_AddObjectToObject(o, "costs_us");

    if (!k)
        return;
    cJSON_AddNumberToObject(k, "queue", c->queue_us);
    cJSON_AddNumberToObject(k, "drain", c->drain_us);
    cJSON_AddNumberToObject(k, "coalesce", c->coalesce_us);
    cJSON_AddNumberToObject(k, "l1", c->l1_us);
    cJSON_AddNumberToObject(k, "base", c->base_us);
}

void pred_figures_to_json(cJSON *o, const pred_result_t *r)
{
    cJSON_AddNumberToObject(o, "p50_us", r->p50_us);
    cJSON_AddNumberToObject(o, "p90_us", r->p90_us);
    cJSON_AddNumberToObject(o, "p99_us", r->p99_us);
    cJSON_AddNumberToObject(o, "p999_us", r->p999_us);
    cJSON_AddNumberToObject(o, "max_us", r->max_us);
    cJSON_AddNumberToObject(o, "mean_us", r->mean_us);
    cJSON_AddNumberToObject(o, "throughput_gbps", r->throughput_gbps);
    cJSON_AddNumberToObject(o, "ll_fraction", r->ll_fraction);
    cJSON_AddNumberToObject(o, "switches", (double)r->switches);
    cJSON_AddNumberToObject(o, "drain_us_total", r->drain_us_total);
    cJSON_AddNumberToObject(o, "sq_full_stalls", (double)r->sq_full_stalls);
}

cJSON *pred_result_to_json(const pred_result_t *r)
{
    cJSON *o = cJSON_CreateObject(), *cls, *cold;

    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "hint", (double)r->hint_bytes);
    cJSON_AddNumberToObject(o, "count", (double)r->count);
    pred_figures_to_json(o, r);
    add_costs(o, &r->costs);
    cold = cJSON_AddObjectToObject(o, "cold");
    if (cold) {
        cJSON_AddNumberToObject(cold, "count", (double)r->cold_count);
        cJSON_AddNumberToObject(cold, "p50_us", r->cold_p50_us);
        cJSON_AddNumberToObject(cold, "p99_us", r->cold_p99_us);
        cJSON_AddNumberToObject(cold, "max_us", r->cold_max_us);
    }
    cls = classes_to_json(r);
    if (!cls || !cJSON_AddItemToObject(o, "by_size_class", cls)) {
        cJSON_Delete(cls);
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
