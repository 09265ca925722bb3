/* hs_opt.c - table-driven option parsing and help text (see hs_opt.h). */
#include "common/hs_opt.h"

#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"

static const hs_opt_t *find_long(const hs_opt_t *opts, const char *name, size_t len)
{
    for (const hs_opt_t *o = opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static const hs_opt_t *find_short(const hs_opt_t *opts, char c)
{
    for (const hs_opt_t *o = opts; o && o->name; o++)
        if (o->short_name && o->short_name == c)
            return o;
    return NULL;
}

static hs_status_t list_append(hs_strlist_t *l, const char *val)
{
    const char **nv = realloc(l->v, (l->n + 1) * sizeof(*nv));

    if (!nv)
        return HS_ERR_NOMEM;
    nv[l->n++] = val;
    l->v = nv;
    return HS_OK;
}

static hs_status_t set_value(const hs_opt_t *o, const char *val, void *dst)
{
    char *field = (char *)dst + o->offset;

    switch (o->type) {
    case HS_OPT_FLAG:
        *(int *)field = 1;
        return HS_OK;
    case HS_OPT_STR:
        *(const char **)field = val;
        return HS_OK;
    case HS_OPT_SIZE:
        return hs_parse_size(val, (uint64_t *)field);
    case HS_OPT_U64:
        return hs_parse_u64(val, (uint64_t *)field);
    case HS_OPT_DOUBLE:
        return hs_parse_double(val, (double *)field);
    case HS_OPT_LIST:
        return list_append((hs_strlist_t *)field, val);
    }
    return HS_ERR_INTERNAL;
}

static const char *type_expect(hs_opt_type_t t)
{
    switch (t) {
    case HS_OPT_SIZE: return "a size like 4096, 16K or 1M";
    case HS_OPT_U64: return "a non-negative integer";
    case HS_OPT_DOUBLE: return "a number";
    default: return "a value";
    }
}

/* Print "hintsim: <what> '<arg>'" and the usage line. */
static int usage_error(const hs_cmd_spec_t *spec, const char *what, const char *arg)
{
    fprintf(stderr, "hintsim: %s", what);
    if (arg)
        fprintf(stderr, " '%s'", arg);
    fprintf(stderr, "\nusage: %s\n(try --help)\n", spec->usage);
    return HS_ERR_USAGE;
}

static int apply_defaults(const hs_cmd_spec_t *spec, void *dst)
{
    for (const hs_opt_t *o = spec->opts; o && o->name; o++) {
        if (!o->def || o->type == HS_OPT_FLAG || o->type == HS_OPT_LIST)
            continue;
        if (set_value(o, o->def, dst) != HS_OK)
            return HS_ERR_INTERNAL;
    }
    return 0;
}

/* Parse one option at argv[*i]; advances *i past its value. */
static int parse_one(const hs_cmd_spec_t *spec, int argc, char **argv, int *i, void *dst)
{
    const char *a = argv[*i], *val = NULL;
    const hs_opt_t *o;

    if (a[1] == '-') {
        const char *eq = strchr(a + 2, '=');
        size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
        o = find_long(spec->opts, a + 2, len);
        if (eq)
            val = eq + 1;
    } else {
        o = a[2] == '\0' ? find_short(spec->opts, a[1]) : NULL;
    }
    if (!o)
        return usage_error(spec, "unknown option", a);
    if (o->help && o->help[0] == '\001')
        fprintf(stderr, "hintsim: warning: --%s is the old name of --%s; it still works\n",
                o->name, o->help + 1);
    if (o->type == HS_OPT_FLAG) {
        if (val)
            return usage_error(spec, "this option takes no value:", a);
        return set_value(o, NULL, dst) == HS_OK ? 0 : HS_ERR_INTERNAL;
    }
    if (!val) {
        if (*i + 1 >= argc)
            return usage_error(spec, "this option needs a value:", a);
        val = argv[++*i];
    }
    if (val[0] == '\0') /* no option means anything by an empty value ('-o ""' said
                          * "cannot create directory", exit 1) */
        return usage_error(spec, "this option needs a non-empty value:", a);
    if (set_value(o, val, dst) != HS_OK) {
        fprintf(stderr, "hintsim: option --%s: '%s' is not %s\n", o->name, val,
                type_expect(o->type));
        fprintf(stderr, "usage: %s\n", spec->usage);
        return HS_ERR_USAGE;
    }
    return 0;
}

int hs_opt_parse(const hs_cmd_spec_t *spec, int argc, char **argv, void *dst,
                 char ***pos, int *npos)
{
    char **p = calloc((size_t)argc + 1, sizeof(*p));
    int n = 0, rc = 0, only_pos = 0;

    if (!p)
        return HS_ERR_NOMEM;
    rc = apply_defaults(spec, dst);
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            p[n++] = argv[i];
        } else if (strcmp(a, "--") == 0) {
            only_pos = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            hs_opt_print_help(spec, stdout);
            rc = 1;
        } else {
            rc = parse_one(spec, argc, argv, &i, dst);
        }
    }
    if (rc == 0 && n < spec->min_pos)
        rc = usage_error(spec, "missing argument", NULL);
    else if (rc == 0 && spec->max_pos >= 0 && n > spec->max_pos)
        rc = usage_error(spec, "unexpected argument", p[spec->max_pos]);
    *pos = p;
    *npos = n;
    return rc;
}

void hs_opt_free(const hs_cmd_spec_t *spec, void *dst, char **pos)
{
    for (const hs_opt_t *o = spec->opts; dst && o && o->name; o++) {
        if (o->type == HS_OPT_LIST) {
            hs_strlist_t *l = (hs_strlist_t *)((char *)dst + o->offset);
            free(l->v);
            l->v = NULL;
            l->n = 0;
        }
    }
    free(pos);
}

void hs_opt_print_help(const hs_cmd_spec_t *spec, FILE *fp)
{
    fprintf(fp, "usage: %s\n\n%s\n", spec->usage, spec->summary);
    if (spec->opts && spec->opts->name)
        fputs("\noptions:\n", fp);
    for (const hs_opt_t *o = spec->opts; o && o->name; o++) {
        char left[64];
        int w;
        if (o->short_name)
            w = snprintf(left, sizeof(left), "-%c, --%s", o->short_name, o->name);
        else
            w = snprintf(left, sizeof(left), "    --%s", o->name);
        if (o->arg && w > 0 && (size_t)w < sizeof(left))
            snprintf(left + w, sizeof(left) - (size_t)w, " %s", o->arg);
        if (o->help[0] == '\001')
            fprintf(fp, "  %-28s old name of --%s (still accepted)", left, o->help + 1);
        else
            fprintf(fp, "  %-28s %s", left, o->help);
        if (o->def)
            fprintf(fp, " (default %s)", o->def);
        if (o->type == HS_OPT_LIST)
            fputs(" [repeatable]", fp);
        fputc('\n', fp);
    }
    fputs("  -h, --help                   show this help\n", fp);
    if (spec->details)
        fprintf(fp, "\n%s\n", spec->details);
}
