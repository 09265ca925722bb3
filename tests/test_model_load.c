/* test_model_load.c - the open-loop overload check (model_offered_load): hand-computed
 * figures, and the warning in `model`, `sim`, `recommend` text/JSON and report files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/recommend/recommend.h"
#include "tests/hs_test.h"

#define OVERLOAD_TEXT "exceeds the modelled link"

static trace_t *mk(size_t n, uint64_t gap_ns, uint64_t size)
{
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < n; i++) {
        trace_rec_t r = {.t_post_ns = 5000 + i * gap_ns, .t_done_ns = 5000 + i * gap_ns + 1,
                         .size_bytes = size};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

/* generic: 100 Gb/s, 20 ns per packet, MTU 4096. 1000 B = 80 ns + 20 ns = 100 ns of link. */
static void test_load_closed_form(void **state)
{
    (void)state;
    profile_t *p = NULL;
    model_load_t l;
    char buf[400];

    assert_int_equal(profile_load("generic", &p), HS_OK);
    trace_t *busy = mk(11, 50, 1000); /* span 500 ns, link 1100 ns */
    model_offered_load(busy, p, &l);
    assert_true(fabs(l.span_us - 0.5) < 1e-9);
    assert_true(fabs(l.link_busy_us - 1.1) < 1e-9);
    assert_true(fabs(l.offered_gbps - 11 * 8000 / 500.0) < 1e-9);
    assert_true(fabs(l.capacity_gbps - 80.0) < 1e-9);
    assert_int_equal(l.overloaded, 1);
    assert_int_equal(model_load_warning(&l, buf, sizeof(buf)), 1);
    assert_non_null(strstr(buf, "offered load 176.00 Gb/s exceeds the modelled link 80.00 Gb/s"));

    trace_t *idle = mk(11, 200, 1000); /* span 2000 ns, link 1100 ns */
    model_offered_load(idle, p, &l);
    assert_int_equal(l.overloaded, 0);
    assert_int_equal(model_load_warning(&l, buf, sizeof(buf)), 0);

    trace_t *burst = mk(3, 0, 1000); /* all at once: overloaded by construction */
    model_offered_load(burst, p, &l);
    assert_int_equal(l.overloaded, 1);
    assert_int_equal(model_load_warning(&l, buf, sizeof(buf)), 1);
    assert_non_null(strstr(buf, "same time"));
    trace_free(busy);
    trace_free(idle);
    trace_free(burst);
    profile_free(p);
}

static void test_recommend_warns_first(void **state)
{
    (void)state;
    profile_t *p = NULL;
    rec_opts_t o = {.objective = OBJ_P99, .threads = 2, .pred = {.flows = 1}};
    rec_report_t r;

    assert_int_equal(profile_load("generic", &p), HS_OK);
    trace_t *busy = mk(2000, 50, 1000);
    assert_int_equal(rec_run(&model_engine_ops, busy, p, &o, &r), HS_OK);
    assert_int_equal(r.overloaded, 1);
    assert_true(r.nwarnings >= 1);
    assert_non_null(strstr(r.warnings[0], OVERLOAD_TEXT));
    rec_report_release(&r);
    o.pred.mode = PRED_CLOSED; /* closed loop paces itself: no overload */
    assert_int_equal(rec_run(&model_engine_ops, busy, p, &o, &r), HS_OK);
    assert_int_equal(r.overloaded, 0);
    for (size_t i = 0; i < r.nwarnings; i++)
        assert_null(strstr(r.warnings[i], OVERLOAD_TEXT));
    rec_report_release(&r);
    trace_free(busy);
    profile_free(p);
}

/* The case: allreduce.hst on seed000 offers ~89 Gb/s to a ~15 Gb/s link. */
static void test_cli_overload(void **state)
{
    (void)state;
    char tr[4096], *out = NULL, *dir = hs_test_tmpdir(), path[4096];

    snprintf(tr, sizeof(tr), "%s", hs_test_src("traces/samples/allreduce.hst"));

    assert_int_equal(hs_test_run(&out, "%s model %s --profile seed000 --hint 0 2>/dev/null",
                                 hs_test_bin(), tr), 0);
    assert_non_null(strstr(out, "warning: offered load"));
    assert_non_null(strstr(out, "use --mode closed"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s model %s --profile seed000 --json 2>/dev/null",
                                 hs_test_bin(), tr), 0);
    assert_non_null(strstr(out, "\"warnings\""));
    assert_non_null(strstr(out, OVERLOAD_TEXT));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s model %s --profile seed000 --mode closed 2>/dev/null",
                                 hs_test_bin(), tr), 0);
    assert_null(strstr(out, OVERLOAD_TEXT));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s model %s --profile generic 2>/dev/null",
                                 hs_test_bin(), hs_test_src("traces/samples/kv.hst")), 0);
    assert_null(strstr(out, OVERLOAD_TEXT));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s recommend %s --profile seed000 --candidates 0,4K "
                                 "-o %s/rep 2>/dev/null", hs_test_bin(), tr, dir), 0);
    assert_non_null(strstr(out, "warning: offered load"));
    free(out);
    snprintf(path, sizeof(path), "cat %s/rep/report.json", dir);
    assert_int_equal(hs_test_run(&out, "%s", path), 0);
    assert_non_null(strstr(out, "\"overloaded\":\ttrue"));
    assert_non_null(strstr(out, OVERLOAD_TEXT));
    free(out);
    snprintf(path, sizeof(path), "cat %s/rep/report.md", dir);
    assert_int_equal(hs_test_run(&out, "%s", path), 0);
    assert_non_null(strstr(out, "**Overload:** offered load"));
    assert_non_null(strstr(out, "Set `RDMA_LOW_LATENCY_HINT=0` (bytes)."));
    free(out);
    hs_test_run(NULL, "rm -rf %s", dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_closed_form),
        cmocka_unit_test(test_recommend_warns_first),
        cmocka_unit_test(test_cli_overload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
