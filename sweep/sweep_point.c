/* sweep_point.c - point keys, and the one-file-per-point results that make a sweep resumable.
 *
 * The key chains FNV-1a over a fixed-layout record of the inputs, so it is the same on every
 * host, rank and run. A result file carries the key and the inputs (for people reading it),
 * the result, and who computed it when (pid, time: never copied into the merged outputs,
 * they are what proves a resumed sweep did not recompute a point).
 */
#include "sweep/sweep_point.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "sweep/sweep_file.h"

#define SWEEP_POINT_FORMAT "hintsim-sweep-point"
#define SWEEP_POINT_VERSION 1

int sweep_objective_lower_better(const char *objective)
{
    return strcmp(objective, "throughput") != 0;
}

static uint64_t hash_str(const char *s, uint64_t h)
{
    return hs_hash64(s, strlen(s) + 1, h); /* the NUL separates fields */
}

static uint64_t point_key(const sweep_grid_t *g, const sweep_point_t *pt, uint64_t prof_hash,
                          const char *source)
{
    const sweep_hint_t *hint = &g->hints[pt->hint];
    uint64_t h = hash_str("hintsim-sweep-key/1", HS_FNV_SEED);
    uint64_t words[4] = {g->traces[pt->trace].hash, g->traces[pt->trace].size_bytes, prof_hash,
                         hint->bytes};

    h = hash_str(HINTSIM_VERSION, h);
    h = hash_str(source ? source : "", h);
    h = hs_hash64(words, sizeof(words), h);
    h = hash_str(hint->is_auto ? "auto" : "fixed", h);
    h = hash_str(g->objective, h);
    h = hash_str(g->engine, h);
    return hash_str(g->mode, h);
}

hs_status_t sweep_point_keys(const sweep_grid_t *g, sweep_plan_t *plan, const sweep_eval_t *ev)
{
    for (size_t i = 0; i < plan->n; i++) {
        uint64_t ph;
        hs_status_t st = ev->ops->profile_hash(ev->ctx, g, &plan->pts[i], &ph);

        if (st != HS_OK)
            return st;
        plan->pts[i].key = point_key(g, &plan->pts[i], ph, ev->ops->source);
    }
    return HS_OK;
}

void sweep_point_path(const char *dir, uint64_t key, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "%s/points/%016" PRIx64 ".json", dir, key);
}

static cJSON *inputs_json(const sweep_grid_t *g, const sweep_point_t *pt, const char *source)
{
    cJSON *o = cJSON_CreateObject(), *sets = cJSON_CreateArray();
    const char *sv[256];
    size_t ns = sweep_point_sets(g, pt, sv, 256);
    char buf[64];

    if (!o || !sets || !cJSON_AddItemToObject(o, "set", sets)) {
        cJSON_Delete(sets);
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddStringToObject(o, "trace", g->traces[pt->trace].label);
    snprintf(buf, sizeof(buf), "%016" PRIx64, g->traces[pt->trace].hash);
    cJSON_AddStringToObject(o, "trace_hash", buf);
    cJSON_AddStringToObject(o, "profile", g->profiles[pt->profile]);
    for (size_t i = 0; i < ns && i < 256; i++)
        cJSON_AddItemToArray(sets, cJSON_CreateString(sv[i]));
    sweep_hint_text(&g->hints[pt->hint], buf, sizeof(buf));
    cJSON_AddStringToObject(o, "hint", buf);
    cJSON_AddStringToObject(o, "objective", g->objective);
    cJSON_AddStringToObject(o, "engine", g->engine);
    cJSON_AddStringToObject(o, "mode", g->mode);
    cJSON_AddStringToObject(o, "hintsim", HINTSIM_VERSION);
    cJSON_AddStringToObject(o, "evaluator_source", source ? source : "");
    return o;
}

static cJSON *result_json(const sweep_result_t *r)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "hint", (double)r->hint_bytes);
    cJSON_AddNumberToObject(o, "value", r->value);
    sweep_result_figures_json(o, r);
    return o;
}

void sweep_result_figures_json(cJSON *o, const sweep_result_t *r)
{
#define SWEEP_JSON_NUM_(member, kind) cJSON_AddNumberToObject(o, #member, (double)r->member);
    SWEEP_RESULT_FIGURES(SWEEP_JSON_NUM_)
#undef SWEEP_JSON_NUM_
    pred_costs_to_json(o, &r->costs);
}

static cJSON *computed_json(uint64_t wall_ns)
{
    cJSON *o = cJSON_CreateObject();
    struct timespec ts;

    if (!o)
        return NULL;
    clock_gettime(CLOCK_REALTIME, &ts);
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    cJSON_AddNumberToObject(o, "unix_ns", (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec);
    cJSON_AddNumberToObject(o, "wall_us", (double)wall_ns / 1e3);
    return o;
}

static hs_status_t point_write(const char *path, const sweep_grid_t *g, const sweep_point_t *pt,
                               const char *source, const sweep_result_t *r, uint64_t wall_ns)
{
    cJSON *root = cJSON_CreateObject();
    char keybuf[32], *text = NULL;
    hs_status_t st = HS_ERR_NOMEM;

    if (!root)
        return HS_ERR_NOMEM;
    snprintf(keybuf, sizeof(keybuf), "%016" PRIx64, pt->key);
    cJSON_AddStringToObject(root, "format", SWEEP_POINT_FORMAT);
    cJSON_AddNumberToObject(root, "version", SWEEP_POINT_VERSION);
    cJSON_AddStringToObject(root, "key", keybuf);
    if (!cJSON_AddItemToObject(root, "inputs", inputs_json(g, pt, source)) ||
        !cJSON_AddItemToObject(root, "result", result_json(r)) ||
        !cJSON_AddItemToObject(root, "computed", computed_json(wall_ns)))
        goto out;
    text = cJSON_Print(root);
    if (!text)
        goto out;
    st = sweep_file_write(path, text);
out:
    free(text);
    cJSON_Delete(root);
    return st;
}

/* The first figure of r that is not finite (its name), or NULL: a point file holds finite
 * figures only, so that no NaN is merged, ranked or printed. */
static const char *result_nonfinite(const sweep_result_t *r)
{
    if (!isfinite(r->value))
        return "value";
#define SWEEP_NONFINITE_F64_(member) if (!isfinite(r->member)) return #member;
#define SWEEP_NONFINITE_U64_(member)
#define SWEEP_NONFINITE_(member, kind) SWEEP_NONFINITE_##kind##_(member)
    SWEEP_RESULT_FIGURES(SWEEP_NONFINITE_)
#undef SWEEP_NONFINITE_
#undef SWEEP_NONFINITE_U64_
#undef SWEEP_NONFINITE_F64_
#define SWEEP_NONFINITE_COST_(member, key) if (!isfinite(r->costs.member)) return key;
    PRED_COSTS(SWEEP_NONFINITE_COST_)
#undef SWEEP_NONFINITE_COST_
    return NULL;
}

hs_status_t sweep_point_run(const sweep_grid_t *g, const sweep_point_t *pt,
                            const sweep_eval_t *ev, const char *dir)
{
    char path[4096];
    sweep_result_t r;
    uint64_t t0 = hs_now_ns();
    hs_status_t st;

    memset(&r, 0, sizeof(r));
    st = ev->ops->eval(ev->ctx, g, pt, &r);
    if (st != HS_OK) {
        hs_log_error("sweep point %zu (trace %s, profile %s) failed: %s", pt->index,
                     g->traces[pt->trace].label, g->profiles[pt->profile], hs_status_str(st));
        return st;
    }
    const char *bad = result_nonfinite(&r);
    if (bad) {
        hs_log_error("sweep point %zu (trace %s, profile %s): its %s is not a finite number; "
                     "nothing kept", pt->index, g->traces[pt->trace].label,
                     g->profiles[pt->profile], bad);
        return HS_ERR_INVALID;
    }
    sweep_point_path(dir, pt->key, path, sizeof(path));
    return point_write(path, g, pt, ev->ops->source, &r, hs_now_ns() - t0);
}

static int get_num(const cJSON *o, const char *name, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

    if (!cJSON_IsNumber(v)) /* null too: what cJSON writes for a non-finite number */
        return 0;
    *out = v->valuedouble;
    return 1;
}

static hs_status_t result_parse(const cJSON *o, sweep_result_t *r)
{
    double v;

    if (!cJSON_IsObject(o) || !get_num(o, "hint", &v) || !hs_field_from_U64(v, &r->hint_bytes) ||
        !get_num(o, "value", &v) || !hs_field_from_F64(v, &r->value))
        return HS_ERR_INVALID;
#define SWEEP_PARSE_(member, kind)                                                          \
    if (!get_num(o, #member, &v) || !hs_field_from_##kind(v, &r->member))                   \
        return HS_ERR_INVALID;
    SWEEP_RESULT_FIGURES(SWEEP_PARSE_)
#undef SWEEP_PARSE_
    return pred_costs_from_json(o, &r->costs);
}

hs_status_t sweep_point_load(const char *dir, uint64_t key, sweep_result_t *res)
{
    char path[4096], keybuf[32], *text = NULL;
    const cJSON *k;
    cJSON *root = NULL;
    sweep_result_t r;
    hs_status_t st = HS_ERR_INVALID;

    sweep_point_path(dir, key, path, sizeof(path));
    if (access(path, F_OK) != 0)
        return HS_ERR_IO;
    if (hs_read_file(path, &text, NULL) != HS_OK)
        return HS_ERR_INVALID;
    snprintf(keybuf, sizeof(keybuf), "%016" PRIx64, key);
    root = cJSON_Parse(text);
    k = cJSON_GetObjectItemCaseSensitive(root, "key");
    memset(&r, 0, sizeof(r));
    if (!cJSON_IsString(k) || strcmp(k->valuestring, keybuf) != 0 ||
        result_parse(cJSON_GetObjectItemCaseSensitive(root, "result"), &r) != HS_OK) {
        hs_log_warn("%s: damaged or not this point's result; it will be recomputed", path);
        goto out;
    }
    *res = r;
    st = HS_OK;
out:
    cJSON_Delete(root);
    free(text);
    return st;
}
