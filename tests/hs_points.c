/* hs_points.c - what-if points at random (hs_points.h). */
#include "tests/hs_points.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/hs_status.h"
#include "common/hs_util.h"
#include "model/path_rules.h"
#include "tests/hs_test.h"

static double pick(const double *v, size_t n, uint64_t *rng)
{
    return v[hs_xorshift64(rng) % n];
}

/* One parameter moved: scaled, or for a zero one set to a small value, within its bounds. */
static double moved(const prof_param_info_t *info, double v, uint64_t *rng)
{
    static const double mult[] = {0.25, 0.5, 2, 4};
    static const double zero_real[] = {0, 0.5, 3, 40};
    static const double seg[] = {0, 4096, 65536, 3000};
    static const double mtu[] = {1500, 9000};
    double lo, hi, x;

    prules_param_bounds(info, &lo, &hi);
    if (strstr(info->key, "seg_bytes"))
        x = pick(seg, 4, rng);
    else if (strstr(info->key, "mtu_bytes") && hs_xorshift64(rng) % 2)
        x = pick(mtu, 2, rng);
    else if (strstr(info->key, ".irq"))
        x = (double)(hs_xorshift64(rng) & 1);
    else if (v == 0)
        x = info->kind == PROF_INT ? pick(seg, 2, rng) / 1024 : pick(zero_real, 4, rng);
    else
        x = v * pick(mult, 4, rng);
    if (info->kind == PROF_INT)
        x = floor(x);
    return x < lo ? lo : x > hi ? hi : x;
}

profile_t *hs_point_of(const profile_t *base, uint64_t *rng)
{
    const prof_param_info_t *info = profile_params();

    for (;;) {
        profile_t *p;
        if (profile_clone(base, &p) != HS_OK)
            return NULL;
        for (size_t k = 0; k < PROF_NPARAMS; k++) {
            if (hs_xorshift64(rng) % 3)
                continue;
            double *f = (double *)((char *)p + info[k].offset);
            *f = moved(&info[k], *f, rng);
        }
        for (size_t f = 0; f < p->nfactors; f++)
            p->factors[f].bw_factor *= 0.5 + (double)(hs_xorshift64(rng) % 4) * 0.5;
        int quiet = hs_log_is_quiet();
        hs_log_set_quiet(1);
        hs_status_t st = profile_validate(p);
        prules_t r;
        if (st == HS_OK)
            st = prules_init(p, 0, &r);
        if (st == HS_OK)
            st = prules_init(p, 1, &r);
        hs_log_set_quiet(quiet);
        if (st == HS_OK)
            return p;
        profile_free(p);
    }
}

uint64_t hs_point_hint(uint64_t *rng)
{
    static const double hints[] = {0, 64, 220, 512, 4096, 16384, 65536, 1048576, 1e12};

    return (uint64_t)pick(hints, sizeof(hints) / sizeof(hints[0]), rng);
}

profile_t *hs_point_draw(const hs_cell_t *c, uint64_t *rng, uint64_t *hint)
{
    profile_t *p;

    do {
        assert_non_null(p = hs_point_of(c->base, rng));
        *hint = hs_point_hint(rng);
    } while (pred_check_trace(c->tr, p, &c->o) != HS_OK && (profile_free(p), 1));
    return p;
}

/* fn on the cells of the trace at path: each built-in profile, open and closed loop. */
static void trace_cells(const char *path, void (*fn)(const hs_cell_t *c))
{
    const char *const *names = profile_builtin_names();
    trace_t *tr;

    assert_int_equal(trace_load_posts(path, 0, &tr), HS_OK);
    for (size_t k = 0; names[k]; k++) {
        for (int mode = PRED_OPEN; mode <= PRED_CLOSED; mode++) {
            hs_cell_t c = {tr, NULL, {.mode = (pred_mode_t)mode}, path, names[k]};
            profile_t *base;
            assert_int_equal(profile_load(names[k], &base), HS_OK);
            c.base = base;
            if (pred_check_trace(tr, base, &c.o) == HS_OK)
                fn(&c);
            profile_free(base);
        }
    }
    trace_free(tr);
}

size_t hs_points_samples(void (*fn)(const hs_cell_t *c))
{
    char dir[4096], path[4400];
    struct dirent *de;
    size_t ntraces = 0;
    int quiet = hs_log_is_quiet();
    DIR *d;

    hs_log_set_quiet(1);
    snprintf(dir, sizeof(dir), "%s", hs_test_src("traces/samples"));
    assert_non_null(d = opendir(dir));
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".hst") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        trace_cells(path, fn);
        ntraces++;
    }
    closedir(d);
    hs_log_set_quiet(quiet);
    return ntraces;
}
