/* test_plot_fixture.c - see test_plot_fixture.h. */
#include "tests/test_plot_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double fake_cost_us(uint64_t size_bytes, int ll)
{
    return ll ? 1.0 + (double)size_bytes / 1000.0 : 3.0 + (double)size_bytes / 4000.0;
}

static hs_status_t fake_replay(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                               uint64_t hint_bytes, pred_raw_t *raw)
{
    uint8_t prev = 0;

    (void)p;
    (void)o;
    for (size_t i = 0; i < tr->n; i++) {
        int ll = hint_bytes > 0 && tr->recs[i].size_bytes <= hint_bytes;
        raw->lat_us[i] = (float)(fake_cost_us(tr->recs[i].size_bytes, ll) *
                                 (1.0 + 0.01 * (double)(i % 10)));
        raw->path[i] = ll ? TRACE_F_PATH_LL : TRACE_F_PATH_BW;
        raw->switches += i > 0 && raw->path[i] != prev;
        prev = raw->path[i];
    }
    raw->t_first_post_us = 0;
    raw->t_last_done_us = tr->n ? (double)tr->recs[tr->n - 1].t_post_ns / 1000.0 + 10 : 0;
    return HS_OK;
}

const pred_engine_ops_t fixture_engine_ops = {.name = "model", .replay = fake_replay};

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

/* A tiny summariser for the fixture (the real one is pred_summarize, in model/). */
static void summarise(const trace_t *tr, uint64_t hint, pred_result_t *r)
{
    float *s = malloc(tr->n * sizeof(*s));
    uint8_t *path = malloc(tr->n);
    pred_raw_t raw = {.lat_us = calloc(tr->n, sizeof(float)), .path = path};
    double sum = 0, bytes = 0;
    size_t nll = 0;

    fake_replay(tr, NULL, NULL, hint, &raw);
    memcpy(s, raw.lat_us, tr->n * sizeof(*s));
    qsort(s, tr->n, sizeof(*s), cmp_float);
    for (size_t i = 0; i < tr->n; i++) {
        sum += s[i];
        bytes += (double)tr->recs[i].size_bytes;
        nll += path[i] == TRACE_F_PATH_LL;
    }
    memset(r, 0, sizeof(*r));
    r->hint_bytes = hint;
    r->count = tr->n;
    r->p50_us = s[tr->n / 2];
    r->p90_us = s[tr->n * 90 / 100];
    r->p99_us = s[tr->n * 99 / 100];
    r->p999_us = s[tr->n * 999 / 1000];
    r->max_us = s[tr->n - 1];
    r->mean_us = sum / (double)tr->n;
    r->throughput_gbps = bytes * 8 / (raw.t_last_done_us * 1e3);
    r->ll_fraction = (double)nll / (double)tr->n;
    r->switches = raw.switches;
    r->lat_us = raw.lat_us;
    free(s);
    free(path);
}

static void make_trace(trace_t *tr)
{
    uint64_t x = 12345;

    for (size_t i = 0; i < 2000; i++) {
        trace_rec_t r = {.t_post_ns = i * 20000, .t_done_ns = TRACE_TIME_UNKNOWN};
        unsigned u;
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        u = (unsigned)(x >> 33) % 100;
        r.size_bytes = u < 60 ? 8ULL << (u % 6) : u < 90 ? 2048ULL << (u % 4) : 1ULL << 20;
        trace_push(tr, &r);
    }
}

fixture_t *fixture_new(int with_meas)
{
    static const uint64_t hints[4] = {0, 4096, 16384, 65536};
    fixture_t *f = calloc(1, sizeof(*f));

    trace_new(&f->tr);
    make_trace(f->tr);
    snprintf(f->tr->hdr.workload, sizeof(f->tr->hdr.workload), "fixture");
    f->prof = calloc(1, sizeof(*f->prof));
    snprintf(f->prof->name, sizeof(f->prof->name), "test-profile");
    snprintf(f->prof->origin, sizeof(f->prof->origin), "builtin:test-profile");
    for (int i = 0; i < 4; i++) {
        summarise(f->tr, hints[i], &f->pred[i]);
        f->meas[i] = f->pred[i];
        f->meas[i].lat_us = NULL;
        f->meas[i].p50_us *= 1.1;
        f->meas[i].p99_us *= 1.1;
    }
    f->in = (plot_input_t){.command = with_meas ? "validate" : "recommend", .engine = "model",
                           .profile = f->prof, .profile_hash = 0x1234abcdULL, .trace = f->tr,
                           .trace_path = "it's/fixture.hst", .pred = f->pred, .npred = 4,
                           .meas = with_meas ? f->meas : NULL, .rec_idx = 2, .runner_idx = 1,
                           .objective = "p99", .why = "drain <cost> & queueing decide",
                           .cost_engine = &fixture_engine_ops};
    return f;
}

void fixture_free(fixture_t *f)
{
    if (!f)
        return;
    for (int i = 0; i < 4; i++)
        free(f->pred[i].lat_us);
    trace_free(f->tr);
    free(f->prof);
    free(f);
}
