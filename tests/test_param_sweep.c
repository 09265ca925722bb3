/* test_param_sweep.c - every profile parameter at its edges, through model, sim and sweep.
 *
 * For each parameter of the profile's table (and a size factor's bw_factor and lat_factor)
 * and each value 0, -1, its range's bounds (prules_param_bounds) and +-1e308, `hintsim
 * model` (open and closed loop), `hintsim sim` and `hintsim sweep` run on a small trace that
 * takes both paths, segments and switches. Each must exit 0 with every figure finite, or
 * exit 1 naming the parameter; never a signal, a hang (each run is killed after HANG_S
 * seconds) or a non-finite figure (issue 23, items 3-5).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "model/path_rules.h"
#include "model/profile/profile.h"
#include "tests/hs_test.h"

#define HANG_S 60
#define MAX_VALUES 10

typedef struct {
    char dir[512];   /* the test's temporary directory */
    char trace[600]; /* the small trace */
    int runs, refused;
} sweep_ctx_t;

/* Whether a JSON tree's numbers are all finite and no figure is null (cJSON prints a
 * non-finite number as null). */
static int json_finite(const cJSON *j, const char *where, char *bad, size_t badlen)
{
    const cJSON *c;

    if (cJSON_IsNumber(j) && !isfinite(j->valuedouble)) {
        snprintf(bad, badlen, "%s = %g", where, j->valuedouble);
        return 0;
    }
    if (cJSON_IsNull(j) && strstr(where, "results")) {
        snprintf(bad, badlen, "%s is null", where);
        return 0;
    }
    cJSON_ArrayForEach(c, j)
    {
        char sub[256];
        snprintf(sub, sizeof(sub), "%s.%s", where, c->string ? c->string : "[]");
        if (!json_finite(c, sub, bad, badlen))
            return 0;
    }
    return 1;
}

/* The words a parameter's error names: the key, or for a factor its field. */
static const char *named(const char *key)
{
    const char *dot = strrchr(key, '.');
    return strncmp(key, "factors.", 8) == 0 && dot ? dot + 1 : key;
}

/* rc and output of one run: exit 0 or 1, never a signal or a hang; 1 names the key. */
static void check_rc(const char *what, const char *key, double v, int rc, const char *out)
{
    if (rc == 124 || rc == 137)
        fail_msg("%s %s=%g: still running after %d s (a hang)", what, key, v, HANG_S);
    if (rc != 0 && rc != 1)
        fail_msg("%s %s=%g: exit %d (128 + signal?): %s", what, key, v, rc, out ? out : "");
    if (rc == 1 && (!out || !strstr(out, named(key))))
        fail_msg("%s %s=%g: exit 1 without naming the parameter: %s", what, key, v,
                 out ? out : "");
}

/* The JSON a run wrote to path: every figure finite. */
static void check_json(const char *what, const char *key, double v, const char *path)
{
    char *text = NULL, bad[512] = "";
    cJSON *j;

    assert_int_equal(hs_read_file(path, &text, NULL), HS_OK);
    j = cJSON_Parse(text);
    if (!j)
        fail_msg("%s %s=%g: exit 0 but no JSON: %s", what, key, v, text);
    if (!json_finite(j, "", bad, sizeof(bad)))
        fail_msg("%s %s=%g: exit 0 with a non-finite figure: %s", what, key, v, bad);
    cJSON_Delete(j);
    free(text);
}

static void run_engine(sweep_ctx_t *c, const char *cmd, const char *extra, const char *key,
                       double v)
{
    char *out = NULL, json[700];
    int rc;

    snprintf(json, sizeof(json), "%s/out.json", c->dir);
    /* { }: stdout to the file, stderr (hs_test_run's 2>&1) to out */
    rc = hs_test_run(&out, "{ timeout -s KILL %d %s %s %s --profile generic --set %s=%.17g "
                     "%s --json > %s; }", HANG_S, hs_test_bin(), cmd, c->trace, key, v, extra,
                     json);
    check_rc(cmd, key, v, rc, out);
    if (rc == 0)
        check_json(cmd, key, v, json);
    c->runs++;
    c->refused += rc == 1;
    free(out);
}

/* sweep: the value as the grid's "set", the model at two hints; sweep.csv all finite. */
static void run_sweep(sweep_ctx_t *c, const char *key, double v)
{
    char grid[700], dir[700], csv[800], set[160] = "", *out = NULL, *text = NULL;
    int factor = strncmp(key, "factors.", 8) == 0, rc;

    snprintf(grid, sizeof(grid), "%s/grid.json", c->dir);
    snprintf(dir, sizeof(dir), "%s/sweep", c->dir);
    snprintf(csv, sizeof(csv), "%s/sweep.csv", dir);
    FILE *f = fopen(grid, "w");
    assert_non_null(f);
    if (factor) { /* a grid's "set" takes parameters; a factor goes by --set */
        snprintf(set, sizeof(set), " --set %s=%.17g", key, v);
        fprintf(f, "{\"traces\": [\"%s\"], \"profiles\": [\"generic\"], "
                "\"hints\": [0, 4096]}", c->trace);
    } else {
        fprintf(f, "{\"traces\": [\"%s\"], \"profiles\": [\"generic\"], \"set\": "
                "{\"%s\": %.17g}, \"hints\": [0, 4096]}", c->trace, key, v);
    }
    fclose(f);
    rc = hs_test_run(&out, "rm -rf %s && { timeout -s KILL %d %s sweep --grid %s -o %s "
                     "--jobs 1%s > /dev/null; }", dir, HANG_S, hs_test_bin(), grid, dir, set);
    check_rc("sweep", key, v, rc, out);
    if (rc == 0) {
        assert_int_equal(hs_read_file(csv, &text, NULL), HS_OK);
        for (char *s = text; *s; s++)
            *s = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
        if (strstr(text, "nan") || strstr(text, "inf"))
            fail_msg("sweep %s=%g: sweep.csv holds a non-finite figure:\n%s", key, v, text);
        free(text);
    }
    c->runs++;
    c->refused += rc == 1;
    free(out);
}

/* 0, -1, lo, hi, +-1e308 (and lo / 2 where lo > 0), without repeats. */
static size_t edge_values(double lo, double hi, double *v)
{
    double cand[] = {0, -1, lo, hi, lo > 0 ? lo / 2 : -1, 1e308, -1e308};
    size_t n = 0;

    for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
        int seen = 0;
        for (size_t k = 0; k < n; k++)
            seen |= v[k] == cand[i];
        if (!seen && n < MAX_VALUES)
            v[n++] = cand[i];
    }
    return n;
}

static void sweep_key(sweep_ctx_t *c, const char *key, double lo, double hi)
{
    double v[MAX_VALUES];
    size_t n = edge_values(lo, hi, v);

    for (size_t i = 0; i < n; i++) {
        run_engine(c, "model", "--hint 0,4K,64K", key, v[i]);
        run_engine(c, "model", "--hint 0,4K,64K --mode closed", key, v[i]);
        run_engine(c, "sim", "--hint 0,64K", key, v[i]);
        run_sweep(c, key, v[i]);
    }
}

static void test_every_parameter(void **state)
{
    sweep_ctx_t *c = *state;
    const prof_param_info_t *params = profile_params();
    double bw_lo, bw_hi, lat_hi, lo, hi;

    for (size_t i = 0; i < PROF_NPARAMS; i++) {
        prules_param_bounds(&params[i], &lo, &hi);
        assert_true(isfinite(lo) && isfinite(hi) && lo <= hi);
        sweep_key(c, params[i].key, lo, hi);
    }
    prules_factor_bounds(&bw_lo, &bw_hi, &lat_hi);
    sweep_key(c, "factors.0.bw_factor", bw_lo, bw_hi);
    sweep_key(c, "factors.0.lat_factor", 0, lat_hi);
    printf("%d runs, %d refused with exit 1, the rest finite\n", c->runs, c->refused);
    /* both outcomes were seen: the edges inside run, those outside are refused */
    assert_true(c->refused > 0 && c->refused < c->runs);
}

/* The defects this guards against, by name (issues 23 and 25): each exits 1 naming its
 * parameter. ll.depth=1e8 without a hint once printed its error and then died of SIGFPE
 * (a path whose initialisation failed was replayed anyway). */
static void test_issue_repros(void **state)
{
    sweep_ctx_t *c = *state;
    static const char *const sets[] = {
        "ll.depth=100000000", "ll.depth=9007199254740992 --hint 4K", "conn.qps=1e9 --hint 4K",
        "bw.depth=1e15 --hint 0", "factors.0.lat_factor=1e308 --hint 4K",
        "link.gbps=1e-300 --hint 4K", "link.base_lat_ns=1e300 --hint 4K",
        "host.post_ns=1e300 --hint 4K", "link.pkt_ns=1e300 --hint 4K", NULL};

    for (size_t i = 0; sets[i]; i++) {
        char key[64], *out = NULL;
        snprintf(key, sizeof(key), "%.*s", (int)strcspn(sets[i], "="), sets[i]);
        int rc = hs_test_run(&out, "timeout -s KILL %d %s model %s --profile generic --set %s",
                             HANG_S, hs_test_bin(), c->trace, sets[i]);
        check_rc("model", key, 0, rc, out);
        assert_int_equal(rc, 1);
        free(out);
    }
}

/* A window no engine can replay is refused when the profile is loaded, whatever the hint:
 * a profile file whose bw.depth (used at hint 0 only) is 1e15 at hint 4K, and a sweep grid
 * whose vary axis holds such a depth, before any point runs (sweep/GRID.md). */
static void test_window_refused_at_load(void **state)
{
    sweep_ctx_t *c = *state;
    char *out = NULL, path[700];
    int rc;

    snprintf(path, sizeof(path), "%s/deep.json", c->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"name\": \"deep\", \"params\": {\"bw.depth\": 1e15}}");
    fclose(f);
    rc = hs_test_run(&out, "%s model %s --profile %s --hint 4K", hs_test_bin(), c->trace, path);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "bw.depth x conn.qps"));
    free(out);
    snprintf(path, sizeof(path), "%s/vary.json", c->dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"traces\": [\"%s\"], \"profiles\": [\"generic\"], \"vary\": "
            "{\"ll.depth\": [8, 9007199254740992]}, \"hints\": [0, 4096]}", c->trace);
    fclose(f);
    rc = hs_test_run(&out, "%s sweep --grid %s -o %s/vary --jobs 1 --json", hs_test_bin(), path,
                     c->dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "ll.depth x conn.qps"));
    free(out);
    /* nothing ran: the points of ll.depth = 8 come first and would have been written */
    rc = hs_test_run(&out, "ls %s/vary/points 2>/dev/null | wc -l", c->dir);
    assert_int_equal(rc, 0);
    assert_int_equal(atoi(out), 0);
    free(out);
}

static int setup(void **state)
{
    sweep_ctx_t *c = calloc(1, sizeof(*c));
    char *dir = hs_test_tmpdir(), *out = NULL;

    if (!c || !dir)
        return -1;
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    snprintf(c->trace, sizeof(c->trace), "%s/t.hst", dir);
    free(dir);
    /* 40 messages of 64 B, 16 KB and 1-2 MB: both paths at 64K, segments, switches */
    if (hs_test_run(&out, "%s trace gen -w phased -n 40 -o %s", hs_test_bin(), c->trace) != 0) {
        fprintf(stderr, "trace gen failed: %s\n", out ? out : "");
        free(out);
        return -1;
    }
    free(out);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    sweep_ctx_t *c = *state;
    char *out = NULL;

    hs_test_run(&out, "rm -rf %s", c->dir);
    free(out);
    free(c);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_repros),
        cmocka_unit_test(test_window_refused_at_load),
        cmocka_unit_test(test_every_parameter),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
