/* test_sweep_fake.c - see test_sweep_fake.h. */
#include "tests/test_sweep_fake.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hs_util.h"

static hs_status_t fake_check(void *ctx, const sweep_grid_t *g)
{
    (void)ctx;
    (void)g;
    return HS_OK;
}

static hs_status_t fake_profile_hash(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                                     uint64_t *out)
{
    const char *sets[64];
    size_t n = sweep_point_sets(g, pt, sets, 64);
    uint64_t h = hs_hash64(g->profiles[pt->profile], strlen(g->profiles[pt->profile]),
                           HS_FNV_SEED);

    (void)ctx;
    for (size_t i = 0; i < n && i < 64; i++)
        h = hs_hash64(sets[i], strlen(sets[i]) + 1, h);
    *out = h;
    return HS_OK;
}

double test_sweep_fake_value(const sweep_grid_t *g, const sweep_point_t *pt)
{
    const sweep_hint_t *h = &g->hints[pt->hint];
    double v = 10.0 * (double)pt->profile + (double)(g->traces[pt->trace].size_bytes % 97);

    for (size_t a = 0; a < g->naxes; a++)
        v += (double)(a + 1) * strtod(sweep_axis_value(&g->axes[a], pt->ax[a]), NULL);
    /* a U-shaped cost in the hint: the best fixed hint is 4096 */
    if (!h->is_auto)
        v += ((double)h->bytes - 4096.0) * ((double)h->bytes - 4096.0) / 1e6;
    return v / 3.0;
}

static hs_status_t fake_eval(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                             sweep_result_t *out)
{
    test_sweep_fake_t *f = ctx;
    const sweep_hint_t *h = &g->hints[pt->hint];

    if (f->delay_us)
        usleep(f->delay_us);
    if (pt->index == f->fail_index)
        return HS_ERR_INVALID;
    f->evals++;
    memset(out, 0, sizeof(*out));
    out->hint_bytes = h->is_auto ? 4096 : h->bytes;
    out->value = pt->index + 1 == f->nan_index1 ? NAN : test_sweep_fake_value(g, pt);
    out->p50_us = out->value / 2;
    out->p99_us = out->value;
    out->mean_us = out->value * 0.6;
    out->throughput_gbps = 100.0 / (1.0 + out->value);
    out->ll_fraction = 0.5;
    out->switches = pt->index;
    return HS_OK;
}

const sweep_eval_ops_t test_sweep_fake_ops = {
    "fake", fake_check, fake_profile_hash, fake_eval, NULL, "fake-1",
};

int test_sweep_write(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    if (!fp)
        return -1;
    fputs(text, fp);
    return fclose(fp) == 0 ? 0 : -1;
}
