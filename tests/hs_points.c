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

size_t hs_points_samples(void (*fn)(const char *path, const char *profile, pred_mode_t mode))
{
    const char *const *names = profile_builtin_names();
    char dir[4096], path[4400];
    struct dirent *de;
    size_t ntraces = 0;
    DIR *d;

    snprintf(dir, sizeof(dir), "%s", hs_test_src("traces/samples"));
    assert_non_null(d = opendir(dir));
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".hst") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        for (size_t k = 0; names[k]; k++) {
            fn(path, names[k], PRED_OPEN);
            fn(path, names[k], PRED_CLOSED);
        }
        ntraces++;
    }
    closedir(d);
    return ntraces;
}
