/* objective.c - the objectives' table turned into lookups; see objective.h. */
#include "model/predict/objective.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    size_t off;       /* of the figure in pred_result_t */
    const char *unit;
    int higher_better;
    int figure;       /* one figure of one result (OBJ_FIGURES) */
    double quantile;  /* of the latencies the figure is; 0: none */
} obj_row_t;

#define OBJ_FIGURE_ROW_(id, name, field, unit, higher, q) \
    {name, offsetof(pred_result_t, field), unit, higher, 1, q},
#define OBJ_RULE_ROW_(id, name, field, unit, higher, q) \
    {name, offsetof(pred_result_t, field), unit, higher, 0, q},
static const obj_row_t g_obj[OBJ_COUNT] = {OBJ_FIGURES(OBJ_FIGURE_ROW_, OBJ_FIGURE_ROW_) OBJ_RULES(OBJ_RULE_ROW_)};

static const obj_row_t *row(obj_t obj)
{
    return (unsigned)obj < OBJ_COUNT ? &g_obj[obj] : NULL;
}

const char *obj_name(obj_t obj)
{
    return row(obj) ? row(obj)->name : "unknown";
}

hs_status_t obj_parse(const char *text, obj_t *out)
{
    for (unsigned i = 0; text && i < OBJ_COUNT; i++)
        if (strcmp(text, g_obj[i].name) == 0) {
            *out = (obj_t)i;
            return HS_OK;
        }
    return HS_ERR_INVALID;
}

int obj_is_figure(obj_t obj)
{
    return row(obj) ? row(obj)->figure : 0;
}

int obj_higher_better(obj_t obj)
{
    return row(obj) ? row(obj)->higher_better : 0;
}

double obj_quantile(obj_t obj)
{
    return row(obj) ? row(obj)->quantile : 0;
}

double obj_value(obj_t obj, const pred_result_t *r)
{
    const obj_row_t *o = row(obj) ? row(obj) : &g_obj[OBJ_P99];

    return *(const double *)((const char *)r + o->off);
}

double obj_cost(obj_t obj, const pred_result_t *r)
{
    return obj_higher_better(obj) ? -obj_value(obj, r) : obj_value(obj, r);
}

const char *obj_unit(obj_t obj)
{
    return row(obj) ? row(obj)->unit : "";
}

const char *obj_list(char *buf, size_t len, int figures_only)
{
    size_t n = 0, used = 0;

    for (unsigned i = 0; i < OBJ_COUNT; i++)
        n += !figures_only || g_obj[i].figure;
    if (len)
        buf[0] = '\0';
    for (unsigned i = 0, k = 0; i < OBJ_COUNT && used < len; i++) {
        if (figures_only && !g_obj[i].figure)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", k == 0 ? "" : k + 1 == n ? " or " : ", ",
                         g_obj[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
        k++;
    }
    return buf;
}
