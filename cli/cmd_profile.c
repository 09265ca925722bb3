/* cmd_profile.c - `hintsim profile list|show`: the built-in profiles and every parameter
 * of one profile with its unit and source. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "model/profile/profile.h"

struct list_opts {
    int json;
};

static const hs_opt_t g_list_opts[] = {
    {"json", 0, HS_OPT_FLAG, offsetof(struct list_opts, json), NULL, NULL, "JSON output"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_list_spec = {
    "hintsim profile list [--json]", "list the built-in profiles with a one-line source each",
    g_list_opts, 0, 0, NULL};

static int profile_list(int argc, char **argv)
{
    struct list_opts o = {0};
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_list_spec, argc, argv, &o, &pos, &npos);

    if (rc >= 0) {
        hs_opt_free(&g_list_spec, &o, pos);
        return rc;
    }
    if (o.json) {
        cJSON *arr = cJSON_CreateArray();
        for (const char *const *n = profile_builtin_names(); arr && *n; n++) {
            cJSON *it = cJSON_CreateObject();
            cJSON_AddStringToObject(it, "name", *n);
            cJSON_AddStringToObject(it, "summary", profile_builtin_summary(*n));
            cJSON_AddItemToArray(arr, it);
        }
        char *text = cJSON_Print(arr);
        if (text)
            printf("%s\n", text);
        free(text);
        cJSON_Delete(arr);
    } else {
        for (const char *const *n = profile_builtin_names(); *n; n++)
            printf("%-10s %s\n", *n, profile_builtin_summary(*n));
    }
    hs_opt_free(&g_list_spec, &o, pos);
    return 0;
}

struct show_opts {
    int json;
    hs_strlist_t set;
};

static const hs_opt_t g_show_opts[] = {
    {"json", 0, HS_OPT_FLAG, offsetof(struct show_opts, json), NULL, NULL,
     "JSON output (the profile file format; `> f.json` gives a loadable profile)"},
    {"set", 0, HS_OPT_LIST, offsetof(struct show_opts, set), "KEY=VALUE", NULL,
     "override one parameter (repeatable)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_show_spec = {
    "hintsim profile show NAME|FILE [--json] [--set KEY=VALUE ...]",
    "every parameter of a profile, its unit and its source", g_show_opts, 1, 1,
    "NAME is a built-in (hintsim profile list) or a JSON file (format: model/MODEL.md)."};

static void print_profile(const profile_t *p)
{
    const prof_param_info_t *info = profile_params();

    printf("profile %s (%s), hash %016llx\n\n", p->name, p->origin,
           (unsigned long long)profile_hash(p));
    printf("%-26s %12s %-6s %s\n", "parameter", "value", "unit", "source");
    for (size_t i = 0; i < PROF_NPARAMS; i++)
        printf("%-26s %12g %-6s %s\n", info[i].key, profile_get(p, (prof_param_id_t)i),
               info[i].unit, profile_source(p, (prof_param_id_t)i));
    if (p->nfactors) {
        printf("\nsize factors (first row with size <= max_bytes applies):\n");
        for (size_t i = 0; i < p->nfactors; i++)
            printf("  factors.%zu  max_bytes %-20llu bw_factor %-8g lat_factor %g\n", i,
                   (unsigned long long)p->factors[i].max_bytes, p->factors[i].bw_factor,
                   p->factors[i].lat_factor);
    }
    if (p->notes && *p->notes)
        printf("\nnotes:\n%s\n", p->notes);
}

static int profile_show(int argc, char **argv)
{
    struct show_opts o = {0};
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_show_spec, argc, argv, &o, &pos, &npos);
    profile_t *p = NULL;

    if (rc >= 0) {
        hs_opt_free(&g_show_spec, &o, pos);
        return rc;
    }
    rc = cli_profile_open(pos[0], &o.set, &p);
    if (rc == 0 && o.json) {
        cJSON *j = profile_to_json(p);
        char *text = j ? cJSON_Print(j) : NULL;
        if (text)
            printf("%s\n", text);
        rc = text ? 0 : 1;
        free(text);
        cJSON_Delete(j);
    } else if (rc == 0) {
        print_profile(p);
    }
    profile_free(p);
    hs_opt_free(&g_show_spec, &o, pos);
    return rc;
}

static const hs_cli_cmd_t g_profile_cmds[] = {
    {"list", profile_list, "built-in profiles with a one-line source each"},
    {"show", profile_show, "every parameter of a profile, its unit and its source"},
    {NULL, NULL, NULL},
};

int cmd_profile(int argc, char **argv)
{
    return hs_cli_dispatch("hintsim profile", g_profile_cmds, argc, argv);
}
