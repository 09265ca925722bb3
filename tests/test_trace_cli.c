/* test_trace_cli.c - `hintsim trace` end to end: every kind of damage gives exit 1 with
 * the block and byte offset, salvage recovers exactly the intact blocks, conversions
 * round-trip byte for byte, generator determinism, the shipped samples, usage errors,
 * missing files, and no partial output over an existing file. Expected offsets are
 * computed here from the layout in traces/FORMAT.md, not taken from the tool. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "tests/hs_test.h"
#include "traces/trace.h"
#include "traces/trace_convert.h"
#include "traces/trace_format.h"

#define NREC 20000                 /* 4 full blocks of 4096 and one of 3616 */
#define BLK_FULL (40 + 4096 * 32)  /* FORMAT.md: 32-byte header + payload + 8-byte tail */

static char g_dir[4096];
static uint8_t *g_orig;
static size_t g_len;

static const char *tmp(const char *name)
{
    static char buf[4][4352];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", g_dir, name);
    return buf[k];
}

static int run(char **out, const char *args)
{
    return hs_test_run(out, "%s %s", hs_test_bin(), args);
}

/* Run `hintsim ARGS`, ARGS from fmt: its exit status must be rc and its output hold needle. */
static void run_expect(int rc, const char *needle, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void run_expect(int rc, const char *needle, const char *fmt, ...)
{
    char args[8400], *out = NULL;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    assert_int_equal(run(&out, args), rc);
    if (!strstr(out, needle))
        fail_msg("hintsim %s: no '%s' in:\n%s", args, needle, out);
    free(out);
}

static void put(const char *name, const uint8_t *p, size_t len)
{
    FILE *fp = fopen(tmp(name), "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(p, 1, len, fp), len);
    fclose(fp);
}

static int setup(void **state)
{
    char *d = hs_test_tmpdir(), cmd[8400];
    (void)state;
    if (!d)
        return -1;
    snprintf(g_dir, sizeof(g_dir), "%s", d);
    free(d);
    snprintf(cmd, sizeof(cmd), "trace gen -w kv -n %d -s 3 -o %s/orig.hst", NREC, g_dir);
    if (run(NULL, cmd) != 0)
        return -1;
    return hs_read_file(tmp("orig.hst"), (char **)&g_orig, &g_len) == HS_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(g_orig);
    return hs_test_run(NULL, "rm -rf '%s'", g_dir) == 0 ? 0 : -1;
}

/* Byte offset of block k (FORMAT.md: blocks start after header + padded JSON). */
static size_t blk_off(int k)
{
    return 32 + ((trace_get_u32(g_orig + 12) + 7) & ~7u) + (size_t)k * BLK_FULL;
}

/* Run validate on a damaged copy; assert exit 1 and that stderr has every needle. */
static void expect_damage(const char *name, const char *n1, const char *n2)
{
    char args[8400], *out = NULL;
    snprintf(args, sizeof(args), "trace validate %s", tmp(name));
    assert_int_equal(run(&out, args), 1);
    if (!strstr(out, n1) || (n2 && !strstr(out, n2)))
        fail_msg("expected '%s' and '%s' in: %s", n1, n2 ? n2 : "", out);
    free(out);
}

static uint8_t *copy(void)
{
    uint8_t *p = malloc(g_len);
    assert_non_null(p);
    memcpy(p, g_orig, g_len);
    return p;
}

static void test_intact(void **state)
{
    (void)state;
    run_expect(0, "5 blocks, 20000 records", "trace validate %s", tmp("orig.hst"));
    assert_int_equal(g_len, blk_off(4) + 40 + 3616 * 32 + 64); /* + the 64-byte end block */
}

static void test_damage_kinds(void **state)
{
    uint8_t *d = copy();
    char n[160];
    (void)state;
    d[40] ^= 0x20; /* inside the JSON header */
    put("json.hst", d, g_len);
    expect_damage("json.hst", "JSON header at byte offset 32", "CRC");
    memcpy(d, g_orig, g_len);
    d[blk_off(2) + 32 + 5 * 32 + 17] ^= 0x01; /* a record of block 2 */
    put("rec.hst", d, g_len);
    snprintf(n, sizeof(n), "block 2 at byte offset %zu", blk_off(2));
    expect_damage("rec.hst", n, "payload CRC");
    memcpy(d, g_orig, g_len);
    d[blk_off(1) + 24] ^= 0x80; /* block 1's stored payload CRC */
    put("crc.hst", d, g_len);
    snprintf(n, sizeof(n), "block 1 at byte offset %zu", blk_off(1));
    expect_damage("crc.hst", n, "header CRC");
    put("trunc.hst", g_orig, blk_off(3) + 1000); /* cut mid-block 3 */
    snprintf(n, sizeof(n), "block 3 at byte offset %zu", blk_off(3));
    expect_damage("trunc.hst", n, "truncated mid-block: 1000 of");
    put("cut.hst", g_orig, blk_off(4)); /* cut exactly between blocks */
    expect_damage("cut.hst", "without an end block", NULL);
    memcpy(d, g_orig, g_len);
    d[1] = 'X';
    put("magic.hst", d, g_len);
    expect_damage("magic.hst", "magic at byte offset 0", NULL);
    free(d);
}

static void test_damage_crafted(void **state)
{
    uint8_t *d = copy();
    char n[160];
    (void)state;
    trace_put_u32(d + 8, 2); /* a future version, with a correct header CRC */
    trace_put_u32(d + 28, trace_crc32(0, d, 28));
    put("future.hst", d, g_len);
    expect_damage("future.hst", "format version 2 at byte offset 8", "reads version 1");
    memcpy(d, g_orig, g_len);
    trace_put_u32(d + 12, 0x7fffffff); /* absurd JSON length, CRC fixed */
    trace_put_u32(d + 28, trace_crc32(0, d, 28));
    put("jsonlen.hst", d, g_len);
    expect_damage("jsonlen.hst", "JSON header length 2147483647 at byte offset 12", NULL);
    memcpy(d, g_orig, g_len);
    trace_put_u32(d + blk_off(1) + 12, 0xffffffffu); /* absurd record count, CRC fixed */
    trace_put_u32(d + blk_off(1) + 28, trace_crc32(0, d + blk_off(1), 28));
    put("count.hst", d, g_len);
    snprintf(n, sizeof(n), "block 1 at byte offset %zu", blk_off(1));
    expect_damage("count.hst", n, "record count 4294967295 out of range");
    memcpy(d, g_orig, g_len);
    trace_put_u32(d + blk_off(2) + 8, 0x10000000); /* absurd length */
    trace_put_u32(d + blk_off(2) + 28, trace_crc32(0, d + blk_off(2), 28));
    put("len.hst", d, g_len);
    expect_damage("len.hst", "block length 268435456 does not match", NULL);
    memcpy(d, g_orig, g_len);
    trace_put_u64(d + blk_off(3) + 16, 9); /* sequence jump: a block missing */
    trace_put_u32(d + blk_off(3) + 28, trace_crc32(0, d + blk_off(3), 28));
    put("seq.hst", d, g_len);
    expect_damage("seq.hst", "sequence number 9, expected 3", NULL);
    free(d);
}

/* Records of blocks [k0, k1) of the original, from the loaded original. */
static void assert_salvaged(const char *name, const int *kept, int nkept, const char *needle)
{
    char args[8400], *out = NULL;
    trace_t *orig, *got;
    size_t at = 0;

    snprintf(args, sizeof(args), "trace salvage %s -o %s", tmp(name), tmp("salv.hst"));
    assert_int_equal(run(&out, args), 0);
    if (needle && !strstr(out, needle))
        fail_msg("expected '%s' in: %s", needle, out);
    free(out);
    snprintf(args, sizeof(args), "trace validate %s", tmp("salv.hst"));
    assert_int_equal(run(NULL, args), 0);
    assert_int_equal(trace_load(tmp("orig.hst"), &orig), HS_OK);
    assert_int_equal(trace_load(tmp("salv.hst"), &got), HS_OK);
    for (int i = 0; i < nkept; i++) {
        size_t first = (size_t)kept[i] * 4096, cnt = kept[i] == 4 ? 3616 : 4096;
        assert_true(at + cnt <= got->n);
        assert_memory_equal(got->recs + at, orig->recs + first, cnt * sizeof(trace_rec_t));
        at += cnt;
    }
    assert_int_equal(got->n, at); /* exactly the intact blocks, nothing else */
    trace_free(orig);
    trace_free(got);
}

static void test_salvage(void **state)
{
    uint8_t *d = copy();
    static const int all_but_2[] = {0, 1, 3, 4}, all_but_1_3[] = {0, 2, 4}, first3[] = {0, 1, 2};
    static const int all[] = {0, 1, 2, 3, 4};
    (void)state;
    assert_salvaged("rec.hst", all_but_2, 4, "kept 4 blocks (15904 records) of 5 blocks");
    assert_salvaged("trunc.hst", first3, 3, "end block missing");
    assert_salvaged("json.hst", all, 5, "header lost, provenance written as unknown");
    /* two damaged regions, one of them garbage inserted (shifts every later offset) */
    memcpy(d, g_orig, g_len);
    d[blk_off(1) + 100] ^= 0xff;
    d[blk_off(3) + 3] ^= 0xff; /* block 3's magic */
    put("two.hst", d, g_len);
    assert_salvaged("two.hst", all_but_1_3, 3, "2 damaged region(s)");
    {
        uint8_t *ins = malloc(g_len + 13);
        assert_non_null(ins);
        memcpy(ins, g_orig, blk_off(2));
        memset(ins + blk_off(2), 'H', 13);
        memcpy(ins + blk_off(2) + 13, g_orig + blk_off(2), g_len - blk_off(2));
        put("ins.hst", ins, g_len + 13);
        free(ins);
    }
    assert_salvaged("ins.hst", all, 5, "13 bytes skipped");
    /* one bit flipped in the version field (1 -> 3): the header CRC proves it damaged, so
     * it is damage, not a later format; every block is intact and kept */
    memcpy(d, g_orig, g_len);
    d[8] ^= 0x02;
    put("ver.hst", d, g_len);
    assert_salvaged("ver.hst", all, 5, "kept 5 blocks (20000 records) of 5 blocks");
    expect_damage("ver.hst", "header bytes 0..27 damaged", "not a later format");
    /* only block 2's tail magic damaged: its length and CRCs hold, its records are kept */
    memcpy(d, g_orig, g_len);
    d[blk_off(3) - 2] ^= 0x10;
    put("tailmagic.hst", d, g_len);
    expect_damage("tailmagic.hst", "block 2", "magic");
    assert_salvaged("tailmagic.hst", all, 5, "1 damaged region(s)");
    free(d);
}

static void test_salvage_refusals(void **state)
{
    char args[8400];
    (void)state;
    run_expect(1, "version 2", "trace salvage %s -o %s", tmp("future.hst"), tmp("s2.hst"));
    assert_int_equal(hs_write_file_atomic(tmp("noise.bin"), "nothing to see here, move along"),
                     HS_OK);
    snprintf(args, sizeof(args), "trace salvage %s -o %s", tmp("noise.bin"), tmp("s2.hst"));
    assert_int_equal(run(NULL, args), 1);
    assert_int_equal(access(tmp("s2.hst"), F_OK), -1);
}

/* g_orig with the JSON header json[0..n) instead of its own. */
static void put_with_json(const char *name, const char *json, size_t n)
{
    uint8_t fh[TRACE_FILE_HDR_BYTES];
    FILE *fp = fopen(tmp(name), "wb");

    assert_non_null(fp);
    trace_filehdr_encode((uint32_t)n, trace_crc32(0, json, n), fh);
    assert_int_equal(fwrite(fh, 1, sizeof(fh), fp), sizeof(fh));
    assert_int_equal(fwrite(json, 1, n, fp), n);
    for (size_t k = n; k % 8; k++)
        fputc(0, fp);
    assert_int_equal(fwrite(g_orig + blk_off(0), 1, g_len - blk_off(0), fp), g_len - blk_off(0));
    assert_int_equal(fclose(fp), 0);
}

/* A header that lacks keys: what it does not say is unknown, never the reading machine's
 * host or hintsim as producer. */
static void test_header_missing_keys(void **state)
{
    static const char *const jsons[] = {"{}", "{\"workload\":\"kv\"}"};
    char host[256] = "", *out = NULL;

    (void)state;
    assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
    for (size_t i = 0; i < 2; i++) {
        trace_t *tr = NULL;
        put_with_json("sparse.hst", jsons[i], strlen(jsons[i]));
        assert_int_equal(trace_load(tmp("sparse.hst"), &tr), HS_OK);
        assert_string_equal(tr->hdr.host, "unknown");
        assert_string_equal(tr->hdr.producer, "unknown");
        assert_string_equal(tr->hdr.clock_source, "unknown");
        trace_free(tr);
        assert_int_equal(hs_test_run(&out, "'%s' trace info '%s'", hs_test_bin(),
                                     tmp("sparse.hst")), 0);
        assert_non_null(strstr(out, "producer   unknown"));
        assert_non_null(strstr(out, "host       unknown"));
        if (strlen(host) > 3 && strcmp(host, "unknown") != 0)
            assert_null(strstr(out, host));
        free(out);
    }
}

/* trace info writes header strings for a terminal: an escape sequence in them is shown as
 * \xNN, never sent (it could retitle the window, move the cursor or hide lines). */
static void test_info_escapes(void **state)
{
    char *out = NULL;

    (void)state;
    assert_int_equal(hs_write_file_atomic(tmp("esc.csv"),
                     "# hintsim-trace v1 {\"host\":\"a\\u001b]0;pwned\\u0007b\","
                     "\"device\":\"d\\u009b2J\",\"extra\":{\"k\":\"\\u001b[31mred\"}}\n"
                     "t_post_ns,size_bytes\n1,8\n"), HS_OK);
    assert_int_equal(hs_test_run(&out, "'%s' trace info '%s'", hs_test_bin(), tmp("esc.csv")),
                     0);
    assert_null(strchr(out, 0x1b));
    assert_null(strchr(out, 0x07));
    assert_null(strstr(out, "\xc2\x9b"));
    assert_non_null(strstr(out, "host       a\\x1b]0;pwned\\x07b"));
    assert_non_null(strstr(out, "device d\\xc2\\x9b2J"));
    free(out);
}

/* A header near the 1 MiB limit whose extra spells numbers briefly (1e5): a parse and
 * print would spell them 100000 and take the header past the limit. Conversion and salvage
 * keep the extra as written and succeed. */
static void test_big_header(void **state)
{
    const char *head = "{\"format_version\":1,\"producer\":\"t\",\"producer_version\":\"1\","
                       "\"mode\":\"bench\",\"host\":\"h\",\"device\":\"\",\"firmware\":\"\","
                       "\"mem\":\"host\",\"clock_source\":\"CLOCK_MONOTONIC\","
                       "\"clock_unit\":\"ns\","
                       "\"hint_bytes\":0,\"hint_source\":\"none\",\"pid\":-1,\"rank\":-1,"
                       "\"dropped\":0,\"workload\":\"\",\"extra\":";
    size_t cap = TRACE_JSON_MAX_BYTES, n = 0;
    char *json = malloc(cap + 8), *extra;
    static const char *const outs[] = {"big_c.hst", "big_c.csv", "big_c.jsonl", "big_s.hst"};

    (void)state;
    assert_non_null(json);
    n = (size_t)snprintf(json, cap, "%s{\"v\":[1e5", head);
    extra = json + strlen(head);
    while (n + 4 + 3 <= cap) {
        memcpy(json + n, ",1e5", 4);
        n += 4;
    }
    memcpy(json + n, "]}}", 4);
    n += 3;
    assert_true(n <= TRACE_JSON_MAX_BYTES && n > TRACE_JSON_MAX_BYTES - 8);
    put_with_json("big.hst", json, n);
    run_expect(0, "20000 records", "trace validate %s", tmp("big.hst"));
    for (size_t i = 0; i < 4; i++) {
        trace_t *tr = NULL;
        if (i < 3)
            run_expect(0, "", "trace convert %s -o %s", tmp("big.hst"), tmp(outs[i]));
        else
            run_expect(0, "kept 5 blocks", "trace salvage %s -o %s", tmp("big.hst"),
                       tmp(outs[i]));
        assert_int_equal(trace_load(tmp(outs[i]), &tr), HS_OK);
        assert_int_equal(tr->n, NREC);
        json[n - 1] = '\0'; /* the extra object, as written */
        assert_non_null(tr->hdr.extra_json);
        assert_int_equal(strlen(tr->hdr.extra_json), strlen(extra));
        assert_string_equal(tr->hdr.extra_json, extra);
        json[n - 1] = '}';
        trace_free(tr);
    }
    run_expect(0, "20000 records", "trace convert %s -o %s", tmp("big_c.csv"), tmp("big_2.hst"));
    free(json);
}

/* "-" and pipes read like files (they were "bad magic at byte offset 0"); a FIFO that
 * nobody writes to is refused at once by every command that reads a trace (each used to
 * wait for a writer forever: timeout's 124 fails the test), and so is a device. */
static void test_pipes_and_fifos(void **state)
{
    char o[4200], fifo_dir[4200];
    static const char *const cmds[] = {"trace info", "trace validate", "trace convert",
                                       "trace salvage", "model", "recommend"};
    trace_t *a, *b;

    (void)state;
    snprintf(o, sizeof(o), "%s", tmp("orig.hst")); /* tmp()'s buffers are reused */
    run_expect(0, "records    20000", "trace info - < %s", o);
    run_expect(0, "5 blocks, 20000 records", "trace validate - < %s", o);
    assert_int_equal(hs_test_run(NULL, "cat '%s' | '%s' trace validate - | grep -q '5 blocks, "
                                 "20000 records'", o, hs_test_bin()), 0);
    assert_int_equal(hs_test_run(NULL, "cat '%s' | '%s' trace info /dev/stdin | grep -q "
                                 "'records    20000'", o, hs_test_bin()), 0);
    assert_int_equal(hs_test_run(NULL, "cat '%s' | '%s' trace convert - -o '%s'", o,
                                 hs_test_bin(), tmp("pipe.csv")), 0);
    assert_int_equal(hs_test_run(NULL, "cat '%s' | '%s' trace convert - -o '%s'",
                                 tmp("pipe.csv"), hs_test_bin(), tmp("pipe.hst")), 0);
    assert_int_equal(hs_test_run(NULL, "cat '%s' | '%s' trace salvage - -o '%s'", o,
                                 hs_test_bin(), tmp("pipe_s.hst")), 0);
    assert_int_equal(hs_test_run(NULL, "cat '%s' | '%s' model - --profile generic "
                                 "> /dev/null", o, hs_test_bin()), 0);
    assert_int_equal(trace_load(o, &a), HS_OK);
    assert_int_equal(trace_load(tmp("pipe.hst"), &b), HS_OK);
    assert_int_equal(b->n, a->n);
    assert_memory_equal(b->recs, a->recs, a->n * sizeof(*a->recs));
    trace_free(b);
    assert_int_equal(trace_load(tmp("pipe_s.hst"), &b), HS_OK);
    assert_int_equal(b->n, a->n);
    assert_memory_equal(b->recs, a->recs, a->n * sizeof(*a->recs));
    trace_free(b);
    trace_free(a);
    /* FIFOs without a writer, alone and in a directory that trace audit reads */
    snprintf(fifo_dir, sizeof(fifo_dir), "%s", tmp("fifos"));
    assert_int_equal(hs_test_run(NULL, "mkdir -p '%s' && mkfifo '%s/a.hst' '%s'", fifo_dir,
                                 fifo_dir, tmp("fifo")), 0);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        const char *extra = i == 2 || i == 3 ? "-o" : i >= 4 ? "--profile generic" : "";
        const char *where = i == 2 ? tmp("x.csv") : i == 3 ? tmp("x.hst") : "";
        char *out = NULL;
        int rc = hs_test_run(&out, "timeout 30 '%s' %s '%s' %s %s", hs_test_bin(), cmds[i],
                             tmp("fifo"), extra, where);
        if (rc != 1 || !strstr(out, "nothing to read"))
            fail_msg("%s on a FIFO without a writer: rc %d, %s", cmds[i], rc, out);
        free(out);
    }
    run_expect(1, "nothing to read", "trace audit %s", fifo_dir);
    /* an endless pipe that is not a trace is refused where it goes wrong, not copied whole
     * first (that never ended): salvage, which maps its input, is the exception */
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        static const char *const why[] = {"-:1: expected the column line",
                                          "unexpected data after the end block"};
        const char *extra = i == 2 ? "-o" : i >= 4 ? "--profile generic" : "";
        char feed[4300], *out = NULL;
        if (i == 3)
            continue;
        for (size_t f = 0; f < 2; f++) {
            if (f == 0)
                snprintf(feed, sizeof(feed), "yes 1,2");
            else
                snprintf(feed, sizeof(feed), "{ cat '%s'; yes; }", o);
            int rc = hs_test_run(&out, "%s | timeout 60 '%s' %s - %s %s 2>&1", feed,
                                 hs_test_bin(), cmds[i], extra, i == 2 ? tmp("y.csv") : "");
            if (rc != 1 || !strstr(out, why[f]))
                fail_msg("%s | %s -: rc %d, %s", feed, cmds[i], rc, out);
            free(out);
        }
    }
    run_expect(1, "not a regular file, a pipe or a FIFO", "trace info /dev/zero");
}

/* One rule for an output's format (trace_fmt_pick), in every command with -o and --to:
 * --to, else the name's extension, and the two agree where both say one. */
#define NO TRACE_FMT_UNKNOWN
#define TR TRACE_OUT_TRACES
#define VW TRACE_OUT_VIEWERS
static void test_out_fmt_rule(void **state)
{
    static const struct {
        const char *to, *path;
        trace_out_set_t set;
        trace_fmt_t want; /* NO: refused */
    } c[] = {
        {NULL, "a.hst", TR, TRACE_FMT_HST},       {NULL, "d.x/a.csv", TR, TRACE_FMT_CSV},
        {NULL, "a.jsonl", TR, TRACE_FMT_JSONL},   {"hst", "a.hst", TR, TRACE_FMT_HST},
        {"csv", "-", TR, TRACE_FMT_CSV},          {"jsonl", "fifo", TR, TRACE_FMT_JSONL},
        {NULL, "-", TR, NO},                      {NULL, "a.txt", TR, NO},
        {"csv", "a.json", TR, NO},                {"csv", "a.json", VW, NO},
        {"jsonl", "a.csv", TR, NO},               {"hst", "a.pftrace", VW, NO},
        {"perfetto", "-", TR, NO},                {NULL, "a.pftrace", TR, NO},
        {"bogus", "-", VW, NO},                   {NULL, "a.csv/x", VW, NO},
        {NULL, "a.pftrace", VW, TRACE_FMT_PERFETTO},
        {NULL, "a.perfetto-trace", VW, TRACE_FMT_PERFETTO},
        {"chrome-json", "-", VW, TRACE_FMT_CHROME_JSON},
        {NULL, "a.json", VW, TRACE_FMT_CHROME_JSON},
    };
    char *out = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        trace_fmt_t fmt = TRACE_FMT_PERFTEST; /* untouched on a refusal */
        hs_status_t st = trace_fmt_pick(c[i].to, c[i].path, c[i].set, &fmt);
        if (st != (c[i].want == NO ? HS_ERR_USAGE : HS_OK) ||
            fmt != (c[i].want == NO ? TRACE_FMT_PERFTEST : c[i].want))
            fail_msg("--to %s -o %s: status %d, format %d", c[i].to ? c[i].to : "(none)",
                     c[i].path, st, fmt);
    }
    /* each command names the file and the format its name says */
    run_expect(2, "x.json says chrome-json", "trace convert %s -o %s --to csv",
               tmp("orig.hst"), tmp("x.json"));
    run_expect(2, "x.json says chrome-json", "trace gen -w kv -n 10 -o %s --to csv",
               tmp("x.json"));
    run_expect(2, "x.json says chrome-json",
               "capture bench --device nosuchdev --sizes 8 -o %s --to csv", tmp("x.json"));
    run_expect(2, "x.csv says csv", "capture bench --device nosuchdev --sizes 8 -o %s "
               "--to jsonl", tmp("x.csv"));
    run_expect(2, "standard output needs --to", "capture bench --device nosuchdev --sizes 8 "
               "-o -");
    /* -o - with --to passes the check: what stops it is the device */
    assert_int_equal(run(&out, "capture bench --device nosuchdev --sizes 8 -o - --to csv"), 3);
    assert_null(strstr(out, "--to"));
    free(out);
}
#undef NO
#undef TR
#undef VW

static void test_convert_roundtrip(void **state)
{
    char args[8400];
    (void)state;
    snprintf(args, sizeof(args), "trace convert %s -o %s", tmp("orig.hst"), tmp("o.csv"));
    assert_int_equal(run(NULL, args), 0);
    snprintf(args, sizeof(args), "trace convert %s -o %s", tmp("o.csv"), tmp("o.jsonl"));
    assert_int_equal(run(NULL, args), 0);
    snprintf(args, sizeof(args), "trace convert %s -o %s", tmp("o.jsonl"), tmp("back.hst"));
    assert_int_equal(run(NULL, args), 0);
    assert_int_equal(hs_test_run(NULL, "cmp %s %s", tmp("orig.hst"), tmp("back.hst")), 0);
    snprintf(args, sizeof(args), "trace convert %s -o %s",
             hs_test_src("traces/samples/perftest/ib_write_lat_U.txt"), tmp("pt.hst"));
    assert_int_equal(run(NULL, args), 0);
    snprintf(args, sizeof(args), "trace validate %s", tmp("pt.hst"));
    assert_int_equal(run(NULL, args), 0);
}

static void test_text_errors_name_line(void **state)
{
    (void)state;
    assert_int_equal(hs_write_file_atomic(tmp("bad.csv"), "t_post_ns,size_bytes\n1,2\n3,big\n"),
                     HS_OK);
    run_expect(1, "bad.csv:3: column 'size_bytes'", "trace info %s", tmp("bad.csv"));
    assert_int_equal(hs_write_file_atomic(tmp("bad.txt"), "#, usec\n1, 3.2\n2, 4.1\n"), HS_OK);
    run_expect(1, "bad.txt:1: the samples", "trace convert %s -o %s", tmp("bad.txt"), tmp("bad.hst"));
    assert_int_equal(hs_write_file_atomic(tmp("bad.jsonl"), "{\"t_post_ns\":1,\"size_bytes\":-2}\n"),
                     HS_OK);
    run_expect(1, "bad.jsonl:1: key 'size_bytes'", "trace validate %s", tmp("bad.jsonl"));
}

/* Run args; assert the exit code and, when needle is given, that the output has it. */
static void expect_run(int rc, const char *needle, const char *args)
{
    char *out = NULL;
    int got = run(&out, args);
    if (got != rc || (needle && !strstr(out, needle)))
        fail_msg("%s: exit %d (expected %d), expected '%s' in: %s", args, got, rc,
                 needle ? needle : "", out);
    free(out);
}

/* trace validate on tmp(name): exit rc, output with needle. */
static void validate_says(const char *name, int rc, const char *needle)
{
    char args[8400];
    snprintf(args, sizeof(args), "trace validate %s", tmp(name));
    expect_run(rc, needle, args);
}

/* The perftest sample with line lineno replaced by text, written as name. */
static void put_perftest_with(const char *name, int lineno, const char *text)
{
    char *src = NULL, *p;
    FILE *fp = fopen(tmp(name), "wb");
    assert_non_null(fp);
    assert_int_equal(hs_read_file(hs_test_src("traces/samples/perftest/ib_write_lat_U.txt"),
                                  &src, NULL), HS_OK);
    p = src;
    for (int n = 1; *p; n++) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (n == lineno)
            fputs(text, fp);
        else
            assert_int_equal(fwrite(p, 1, len, fp), len);
        fputc('\n', fp);
        p += len + (nl != NULL);
    }
    assert_int_equal(fclose(fp), 0);
    free(src);
}

/* A malformed sample anywhere in perftest -U output is refused naming its line (it was
 * dropped silently, or reported at the next line as an index gap). */
static void test_perftest_bad_sample(void **state)
{
    (void)state;
    put_perftest_with("pt_ok.txt", 71, "49, 12.836");
    validate_says("pt_ok.txt", 0, "ok: 98 records");
    put_perftest_with("pt71.txt", 71, "49, abc"); /* the last sample of a group */
    validate_says("pt71.txt", 1, "pt71.txt:71: latency 'abc' is not a number");
    put_perftest_with("pt30.txt", 30, "8, abc");
    validate_says("pt30.txt", 1, "pt30.txt:30: latency 'abc' is not a number");
    put_perftest_with("pt30j.txt", 30, "8, 12.5 junk");
    validate_says("pt30j.txt", 1, "pt30j.txt:30: latency '12.5 junk' is not a number");
    put_perftest_with("pt122.txt", 122, "49, 2x"); /* the last sample of the file */
    validate_says("pt122.txt", 1, "pt122.txt:122: latency '2x'");
    put_perftest_with("pt71t.txt", 71, "abc"); /* not even shaped like a sample */
    validate_says("pt71t.txt", 1, "pt71t.txt:71: expected a sample");
}

/* The summary line's size and iteration count are whole numbers >= 0: " -2" was read as
 * 18446744073709551614 (sscanf %lu), a negative count was accepted. */
static void test_perftest_summary(void **state)
{
    static const char *const tail = "          10.96          48.38        12.01    \t       "
                                    "12.72       \t1.20   \t\t48.38   \t\t48.38  ";
    char line[300];

    (void)state;
    snprintf(line, sizeof(line), " -2       50%s", tail);
    put_perftest_with("pt_neg.txt", 72, line);
    validate_says("pt_neg.txt", 1, "pt_neg.txt:72: size '-2' in the summary line is not a "
                  "whole number >= 0");
    snprintf(line, sizeof(line), " 2       -50%s", tail);
    put_perftest_with("pt_negi.txt", 72, line);
    validate_says("pt_negi.txt", 1, "pt_negi.txt:72: iteration count '-50' in the summary");
    snprintf(line, sizeof(line), " 2       99999999999999999999%s", tail);
    put_perftest_with("pt_big.txt", 72, line);
    validate_says("pt_big.txt", 1, "pt_big.txt:72: iteration count '99999999999999999999'");
    snprintf(line, sizeof(line), " 2       50%s", tail);
    put_perftest_with("pt_same.txt", 72, line);
    validate_says("pt_same.txt", 0, "ok: 98 records");
}

/* perftest -a prints one group per size: every group's provenance is kept in the header
 * (past about 60 groups a fixed buffer cut the JSON and the whole of it was dropped). */
static void test_perftest_many_groups(void **state)
{
    FILE *fp = fopen(tmp("pt_many.txt"), "wb");
    trace_t *tr = NULL;
    cJSON *extra, *groups;
    const int ngroups = 120; /* about 6 KB of provenance */

    (void)state;
    assert_non_null(fp);
    fputs("                    RDMA_Write Latency Test\n", fp);
    for (int g = 0; g < ngroups; g++)
        fprintf(fp, "#, usec\n1, 10.5\n2, 11.25\n %d       1000          10.5   11.25\n",
                1000000 + g);
    assert_int_equal(fclose(fp), 0);
    run_expect(0, "240 records", "trace convert %s -o %s", tmp("pt_many.txt"),
               tmp("pt_many.hst"));
    assert_int_equal(trace_load(tmp("pt_many.hst"), &tr), HS_OK);
    assert_non_null(tr->hdr.extra_json);
    extra = cJSON_Parse(tr->hdr.extra_json);
    assert_non_null(extra);
    groups = cJSON_GetObjectItemCaseSensitive(extra, "groups");
    assert_int_equal(cJSON_GetArraySize(groups), ngroups);
    for (int g = 0; g < ngroups; g++) {
        const cJSON *e = cJSON_GetArrayItem(groups, g);
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(e, "size_bytes")->valuedouble,
                         1000000 + g);
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(e, "iterations")->valuedouble, 1000);
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(e, "samples")->valuedouble, 2);
        assert_int_equal(tr->recs[2 * g].size_bytes, (uint64_t)1000000 + g);
    }
    cJSON_Delete(extra);
    trace_free(tr);
}

/* A .hst may carry records no replay can take (completion before post, both path bits):
 * convert refuses them, naming the first, instead of writing a CSV it then refuses to
 * read; model and recommend warn about them. */
static void test_insane_records(void **state)
{
    static const struct {
        uint64_t post, done;
        uint16_t flags;
        const char *why;
    } bad[] = {
        {5000, 4000, TRACE_F_SIGNALED, "completion time 4000 ns is before the post time 5000"},
        {5000, 6000, TRACE_F_SIGNALED | TRACE_F_PATH_MASK,
         "flags 0x000b mark both the LL and the BW path"},
    };
    char needle[200];

    (void)state;
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        trace_t *tr = NULL;
        assert_int_equal(trace_new(&tr), HS_OK);
        for (int i = 0; i < 10; i++) {
            trace_rec_t r = {.t_post_ns = 1000u * (uint64_t)i,
                             .t_done_ns = 1000u * (uint64_t)i + 500, .size_bytes = 64,
                             .opcode = TRACE_OP_WRITE, .flags = TRACE_F_SIGNALED};
            if (i == 7) {
                r.t_post_ns = bad[k].post;
                r.t_done_ns = bad[k].done;
                r.flags = bad[k].flags;
            }
            assert_int_equal(trace_push(tr, &r), HS_OK);
        }
        assert_int_equal(trace_save(tmp("insane.hst"), tr), HS_OK);
        trace_free(tr);
        unlink(tmp("insane.csv"));
        snprintf(needle, sizeof(needle), "record 7 (and 0 more): %s", bad[k].why);
        run_expect(1, needle, "trace convert %s -o %s", tmp("insane.hst"), tmp("insane.csv"));
        assert_int_equal(access(tmp("insane.csv"), F_OK), -1);
        run_expect(0, "1 record that no replay can take as recorded (first: record 7",
                   "model %s --profile generic", tmp("insane.hst"));
        run_expect(0, "1 record that no replay can take as recorded (first: record 7",
                   "recommend %s --profile generic", tmp("insane.hst"));
    }
}

/* JSON Lines: a number from 2^53 on is refused (2^53 + 1 was read as 2^53); as a string it
 * is exact, and that is how the writer puts it. */
static void test_jsonl_big_integers(void **state)
{
    trace_t *tr = NULL;

    (void)state;
    assert_int_equal(hs_write_file_atomic(tmp("big1.jsonl"), "{\"hintsim_trace\":1,\"header\":{}}\n"
                     "{\"t_post_ns\":9007199254740993,\"size_bytes\":8}\n"), HS_OK);
    validate_says("big1.jsonl", 1, "big1.jsonl:2: key 't_post_ns' must be an integer");
    assert_int_equal(hs_write_file_atomic(tmp("big2.jsonl"), "{\"hintsim_trace\":1,\"header\":{}}\n"
                     "{\"t_post_ns\":1,\"size_bytes\":9007199254740992}\n"), HS_OK);
    validate_says("big2.jsonl", 1, "big2.jsonl:2: key 'size_bytes' must be an integer");
    assert_int_equal(hs_write_file_atomic(tmp("big3.jsonl"), "{\"hintsim_trace\":1,\"header\":{}}\n"
                     "{\"t_post_ns\":\"9007199254740993\",\"size_bytes\":9007199254740991}\n"),
                     HS_OK);
    validate_says("big3.jsonl", 0, "ok: 1 records");
    assert_int_equal(trace_load(tmp("big3.jsonl"), &tr), HS_OK);
    assert_int_equal(tr->recs[0].t_post_ns, UINT64_C(9007199254740993));
    tr->recs[0].size_bytes = UINT64_C(9007199254740992);
    assert_int_equal(trace_save(tmp("big4.jsonl"), tr), HS_OK);
    trace_free(tr);
    assert_int_equal(trace_load(tmp("big4.jsonl"), &tr), HS_OK);
    assert_int_equal(tr->recs[0].t_post_ns, UINT64_C(9007199254740993));
    assert_int_equal(tr->recs[0].size_bytes, UINT64_C(9007199254740992));
    trace_free(tr);
}

/* A writer killed before it finished leaves "<out>.tmp.<pid>": the next writer of <out>
 * removes it when that pid is gone and the file has been idle for a minute, and leaves a
 * live writer's, a fresh one's and another output's alone. */
static void test_stale_tmp_removed(void **state)
{
    char *pid_text = NULL, dead[64], self[64], cmd[8400], name[128];
    static const char *const outs[] = {"st.hst", "st.csv"};

    (void)state;
    assert_int_equal(hs_test_run(&pid_text, "sh -c 'echo $$'"), 0); /* a pid now gone */
    snprintf(dead, sizeof(dead), "%ld", strtol(pid_text, NULL, 10));
    free(pid_text);
    snprintf(self, sizeof(self), "%ld", (long)getpid());
    for (size_t i = 0; i < 2; i++) {
        const char *o = outs[i];
        snprintf(cmd, sizeof(cmd), "cd '%s' && for f in %s.tmp.%s other.hst.tmp.%s; do "
                 "echo x > $f; touch -d '2 hours ago' $f; done && echo x > %s.tmp.%s && "
                 "touch -d '2 hours ago' %s.tmp.%s && echo x > fresh.%s && mv fresh.%s "
                 "%s.tmp.99999999", g_dir, o, dead, dead, o, self, o, self, o, o, o);
        assert_int_equal(hs_test_run(NULL, "%s", cmd), 0);
        run_expect(0, "removed: the temporary of a writer that is gone", "trace convert %s -o %s",
                   tmp("orig.hst"), tmp(o));
        snprintf(name, sizeof(name), "%s.tmp.%s", o, dead);
        assert_int_equal(access(tmp(name), F_OK), -1);
        snprintf(name, sizeof(name), "%s.tmp.%s", o, self);
        assert_int_equal(access(tmp(name), F_OK), 0);
        snprintf(name, sizeof(name), "%s.tmp.99999999", o);
        assert_int_equal(access(tmp(name), F_OK), 0);
        snprintf(name, sizeof(name), "other.hst.tmp.%s", dead);
        assert_int_equal(access(tmp(name), F_OK), 0);
    }
    assert_int_equal(hs_test_run(NULL, "rm -f '%s'/*.tmp.*", g_dir), 0);
}

/* CSV and JSON Lines check the version of their first line as .hst checks its own. */
static void test_text_version(void **state)
{
    (void)state;
    assert_int_equal(hs_write_file_atomic(tmp("v1.csv"), "# hintsim-trace v1 {}\n"
                                          "t_post_ns,size_bytes\n1,2\n"), HS_OK);
    validate_says("v1.csv", 0, "ok: 1 records");
    assert_int_equal(hs_write_file_atomic(tmp("v2.csv"), "# hintsim-trace v2 {}\n"
                                          "t_post_ns,size_bytes\n1,2\n"), HS_OK);
    validate_says("v2.csv", 1, "v2.csv:1: format version 2; this build reads version 1");
    assert_int_equal(hs_write_file_atomic(tmp("v99.csv"), "# hintsim-trace v99 {}\n"
                                          "t_post_ns,size_bytes\n1,2\n"), HS_OK);
    validate_says("v99.csv", 1, "v99.csv:1: format version 99; this build reads version 1");
    assert_int_equal(hs_write_file_atomic(tmp("v2.jsonl"), "{\"hintsim_trace\":2,\"header\":{}}\n"
                                          "{\"t_post_ns\":1,\"size_bytes\":2}\n"), HS_OK);
    validate_says("v2.jsonl", 1, "v2.jsonl:1: format version 2; this build reads version 1");
    assert_int_equal(hs_write_file_atomic(tmp("v1.jsonl"), "{\"hintsim_trace\":1,\"header\":{}}\n"
                                          "{\"t_post_ns\":1,\"size_bytes\":2}\n"), HS_OK);
    validate_says("v1.jsonl", 0, "ok: 1 records");
}

/* The first n lines of text as name, the last one without its newline and drop bytes. */
static void put_cut(const char *name, const char *text, int n, size_t drop)
{
    const char *p = text;
    for (int i = 0; i < n; i++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    assert_true((size_t)(p - text) > drop + 1);
    put(name, (const uint8_t *)text, (size_t)(p - text) - 1 - drop);
}

/* A last line without a newline is a file cut short, even when what is left still parses
 * (flags "0x0008" cut to "0"); files the writers produce always end with one. */
static void test_text_truncated(void **state)
{
    char args[8400], *csv = NULL, *jsonl = NULL;
    size_t clen, jlen;
    (void)state;
    snprintf(args, sizeof(args), "trace gen -w kv -n 50 -s 1 -o %s", tmp("small.hst"));
    expect_run(0, NULL, args);
    snprintf(args, sizeof(args), "trace convert %s -o %s", tmp("small.hst"), tmp("small.csv"));
    expect_run(0, NULL, args);
    snprintf(args, sizeof(args), "trace convert %s -o %s", tmp("small.csv"), tmp("small.jsonl"));
    expect_run(0, NULL, args);
    validate_says("small.csv", 0, "ok: 50 records");
    validate_says("small.jsonl", 0, "ok: 50 records");
    assert_int_equal(hs_read_file(tmp("small.csv"), &csv, &clen), HS_OK);
    assert_int_equal(hs_read_file(tmp("small.jsonl"), &jsonl, &jlen), HS_OK);
    assert_true(clen > 0 && csv[clen - 1] == '\n');
    assert_true(jlen > 0 && jsonl[jlen - 1] == '\n');
    put_cut("cut.csv", csv, 10, 5); /* line 10 ends ",0" instead of ",0x00NN" */
    validate_says("cut.csv", 1, "cut.csv:10: truncated: no newline at the end of the file");
    put_cut("cut.jsonl", jsonl, 5, 0); /* a whole object, but no newline */
    validate_says("cut.jsonl", 1, "cut.jsonl:5: truncated: no newline at the end of the file");
    free(csv);
    free(jsonl);
}

/* Record-level errors of text forms name the line (blank and comment lines counted), and a
 * JSON syntax error its column. */
static void test_text_record_lines(void **state)
{
    (void)state;
    assert_int_equal(hs_write_file_atomic(tmp("late.csv"), "t_post_ns,t_done_ns,size_bytes\n"
                                          "1,2,3\n\n# note\n5,3,3\n"), HS_OK);
    validate_says("late.csv", 1, "late.csv:5: completion time 3 ns is before the post time 5 ns");
    assert_int_equal(hs_write_file_atomic(tmp("late.jsonl"), "{\"t_post_ns\":1,\"size_bytes\":2}\n"
                                          "{\"t_post_ns\":5,\"t_done_ns\":3,\"size_bytes\":2}\n"),
                     HS_OK);
    validate_says("late.jsonl", 1, "late.jsonl:2: completion time 3 ns is before");
    assert_int_equal(hs_write_file_atomic(tmp("syn.jsonl"), "{\"t_post_ns\":1,\"size_bytes\":2}\n\n"
                                          "{\"t_post_ns\":1,\"size_bytes\":2,}\n"), HS_OK);
    validate_says("syn.jsonl", 1, "syn.jsonl:3: JSON syntax error at column 32");
}

/* What is wrong with a file that is no trace at all is named: empty, a directory, CSV
 * records without the column line (which line was expected). */
static void test_not_a_trace(void **state)
{
    (void)state;
    put("empty.csv", (const uint8_t *)"", 0);
    validate_says("empty.csv", 1, "empty.csv: empty file");
    assert_int_equal(mkdir(tmp("dir.hst"), 0755), 0);
    validate_says("dir.hst", 1, "dir.hst: is a directory");
    assert_int_equal(hs_write_file_atomic(tmp("rows.csv"), "0,1,2\n5,6,7\n"), HS_OK);
    validate_says("rows.csv", 1, "rows.csv:1: expected the column line \"t_post_ns,");
    assert_int_equal(hs_write_file_atomic(tmp("rows.txt"), "0,1,2\n5,6,7\n"), HS_OK);
    validate_says("rows.txt", 1, "rows.txt:1: expected the column line");
    assert_int_equal(hs_write_file_atomic(tmp("hdronly.csv"), "# hintsim-trace v1 {}\n"), HS_OK);
    validate_says("hdronly.csv", 1, "hdronly.csv:2: expected the column line");
}

/* Records without a header line have unknown provenance, not this machine's. */
static void test_headerless_provenance(void **state)
{
    static const char *const names[] = {"nohdr.csv", "nohdr.jsonl"};
    char args[8400], *out = NULL;
    (void)state;
    assert_int_equal(hs_write_file_atomic(tmp("nohdr.csv"), "t_post_ns,size_bytes\n1,2\n"), HS_OK);
    assert_int_equal(hs_write_file_atomic(tmp("nohdr.jsonl"), "{\"t_post_ns\":1,\"size_bytes\":2}\n"),
                     HS_OK);
    for (size_t i = 0; i < 2; i++) {
        cJSON *o, *h;
        snprintf(args, sizeof(args), "trace info --json %s", tmp(names[i]));
        assert_int_equal(run(&out, args), 0);
        o = cJSON_Parse(out);
        assert_non_null(o);
        h = cJSON_GetObjectItem(o, "header");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(h, "host")), "unknown");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(h, "producer")), "unknown");
        cJSON_Delete(o);
        free(out);
    }
}

static void test_gen_cli(void **state)
{
    char args[8400], *out = NULL;
    (void)state;
    snprintf(args, sizeof(args), "trace gen -w burst -n 5000 -s 9 --set burst_len=32 -o %s",
             tmp("b1.hst"));
    assert_int_equal(run(NULL, args), 0);
    snprintf(args, sizeof(args), "trace gen -w burst -n 5000 -s 9 --set burst_len=32 -o %s",
             tmp("b2.hst"));
    assert_int_equal(run(NULL, args), 0);
    snprintf(args, sizeof(args), "trace gen -w burst -n 5000 -s 10 --set burst_len=32 -o %s",
             tmp("b3.hst"));
    assert_int_equal(run(NULL, args), 0);
    assert_int_equal(hs_test_run(NULL, "cmp %s %s", tmp("b1.hst"), tmp("b2.hst")), 0);
    assert_int_equal(hs_test_run(NULL, "cmp -s %s %s", tmp("b1.hst"), tmp("b3.hst")), 1);
    run_expect(1, "'colour'", "trace gen -w burst --set colour=blue -o %s", tmp("b4.hst"));
    assert_int_equal(run(&out, "trace workloads"), 0);
    for (const char *w = "pingpong stream allreduce kv wide burst phased coldstart"; *w;) {
        char name[32];
        int len = (int)strcspn(w, " ");
        snprintf(name, sizeof(name), "%.*s ", len, w);
        assert_non_null(strstr(out, name));
        w += len + (w[len] == ' ');
    }
    free(out);
}

static void test_samples(void **state)
{
    const char *dir = hs_test_src("traces/samples");
    char path[8400], args[8600], *dirpath = strdup(dir);
    struct dirent *e;
    struct stat sb;
    int n = 0;
    DIR *dp = opendir(dirpath);
    (void)state;
    assert_non_null(dp);
    while ((e = readdir(dp)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".hst") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dirpath, e->d_name);
        assert_int_equal(stat(path, &sb), 0);
        assert_true(sb.st_size < 1024 * 1024);
        snprintf(args, sizeof(args), "trace validate %s", path);
        assert_int_equal(run(NULL, args), 0);
        n++;
    }
    closedir(dp);
    assert_true(n >= 8);
    snprintf(path, sizeof(path), "%s/allreduce.hst", dirpath);
    assert_int_equal(access(path, R_OK), 0);
    free(dirpath);
}

static void test_usage_and_missing(void **state)
{
    char args[8400], *out = NULL;
    cJSON *o;
    (void)state;
    assert_int_equal(run(NULL, "trace"), 2);
    assert_int_equal(run(NULL, "trace frob"), 2);
    assert_int_equal(run(NULL, "trace info"), 2);
    assert_int_equal(run(NULL, "trace info a b"), 2);
    assert_int_equal(run(NULL, "trace info --bogus x.hst"), 2);
    assert_int_equal(run(NULL, "trace gen -o x.hst"), 2);
    assert_int_equal(run(NULL, "trace gen -w kv"), 2);
    assert_int_equal(run(NULL, "trace gen -w kv -n abc -o x.hst"), 2);
    /* an unknown workload is a usage error like a bad --count (it exited 1) */
    assert_int_equal(run(NULL, "trace gen -w nope -n 10 -o x.hst"), 2);
    assert_int_equal(run(NULL, "trace convert a.hst"), 2);
    assert_int_equal(run(NULL, "trace salvage a.hst"), 2);
    assert_int_equal(run(NULL, "trace info --help"), 0);
    snprintf(args, sizeof(args), "trace convert %s -o %s", tmp("orig.hst"), tmp("o.txt"));
    assert_int_equal(run(NULL, args), 2);
    run_expect(1, "missing.hst", "trace info %s", tmp("missing.hst"));
    run_expect(1, "missing.hst", "trace validate %s", tmp("missing.hst"));
    snprintf(args, sizeof(args), "trace info --json %s", tmp("orig.hst"));
    assert_int_equal(run(&out, args), 0);
    o = cJSON_Parse(out);
    assert_non_null(o);
    assert_int_equal(cJSON_GetObjectItem(o, "records")->valuedouble, NREC);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(o, "size_histogram")));
    cJSON_Delete(o);
    free(out);
}

static void test_no_partial_output(void **state)
{
    char args[8400], *text = NULL;
    (void)state;
    assert_int_equal(hs_write_file_atomic(tmp("keep.hst"), "precious"), HS_OK);
    snprintf(args, sizeof(args), "trace convert %s -o %s", tmp("trunc.hst"), tmp("keep.hst"));
    assert_int_equal(run(NULL, args), 1);
    snprintf(args, sizeof(args), "trace gen -w kv --set value_bytes=x -o %s", tmp("keep.hst"));
    assert_int_equal(run(NULL, args), 1);
    assert_int_equal(hs_read_file(tmp("keep.hst"), &text, NULL), HS_OK);
    assert_string_equal(text, "precious");
    free(text);
    assert_int_equal(hs_test_run(NULL, "ls %s | grep -q '\\.tmp\\.'", g_dir), 1);
}

/* A CSV or JSON Lines file saved with a UTF-8 byte-order mark (spreadsheets do) loads as
 * the same file without it (its first column was "unknown", and a .jsonl read as CSV). */
static void test_text_bom(void **state)
{
    (void)state;
    char *out = NULL, cmd[3 * sizeof(g_dir)];
    const char *ext[] = {"csv", "jsonl"};

    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof(cmd), "trace gen -w kv -n 50 -s 3 -o %s/plain.%s", g_dir, ext[k]);
        assert_int_equal(run(NULL, cmd), 0);
        snprintf(cmd, sizeof(cmd), "sh -c \"printf '\\357\\273\\277' | cat - %s/plain.%s > "
                 "%s/bom.%s\"", g_dir, ext[k], g_dir, ext[k]);
        assert_int_equal(hs_test_run(NULL, "%s", cmd), 0);
        snprintf(cmd, sizeof(cmd), "trace convert %s/bom.%s -o %s/bom_%s.hst", g_dir, ext[k],
                 g_dir, ext[k]);
        assert_int_equal(run(&out, cmd), 0);
        free(out);
        trace_t *a, *b;
        snprintf(cmd, sizeof(cmd), "%s/plain.%s", g_dir, ext[k]);
        assert_int_equal(trace_load(cmd, &a), HS_OK);
        snprintf(cmd, sizeof(cmd), "%s/bom_%s.hst", g_dir, ext[k]);
        assert_int_equal(trace_load(cmd, &b), HS_OK);
        assert_int_equal(a->n, b->n);
        assert_memory_equal(a->recs, b->recs, a->n * sizeof(*a->recs));
        assert_string_equal(a->hdr.workload, b->hdr.workload);
        trace_free(a);
        trace_free(b);
    }
}

/* Parameters print as a user types them: 16M, 1048576, never 1.67772e+07. */
static void test_workloads_values(void **state)
{
    (void)state;
    char *out = NULL;

    assert_int_equal(run(&out, "trace workloads --verbose"), 0);
    assert_non_null(strstr(out, "grad_bytes       16M "));
    assert_null(strstr(out, "e+0"));
    free(out);
    assert_int_equal(run(&out, "trace gen -w phased -n 10 --set cycles=99999999 -o /dev/null"), 1);
    assert_non_null(strstr(out, "in 1..1048576"));
    free(out);
    /* a _min above its _max is refused (it was accepted and generated anyway) */
    assert_int_equal(run(&out, "trace gen -w burst -n 10 --set burst_min=8192 -o /dev/null"), 1);
    assert_non_null(strstr(out, "burst_min 8192 is above burst_max 4096"));
    free(out);
}

/* validate names a text record with an unknown opcode number by its line (it named the
 * record's index), while loading it for other commands keeps it (round trips carry raw
 * values). */
static void test_validate_opcode_line(void **state)
{
    (void)state;
    static const char csv[] = "t_post_ns,size_bytes,opcode\n\n0,64,send\n# a comment\n"
                              "100,64,9\n";
    static const char jsonl[] = "{\"t_post_ns\":0,\"size_bytes\":64}\n\n"
                                "{\"t_post_ns\":100,\"size_bytes\":64,\"opcode\":9}\n";
    char *out = NULL, args[4400];

    put("op9.csv", (const uint8_t *)csv, sizeof(csv) - 1);
    put("op9.jsonl", (const uint8_t *)jsonl, sizeof(jsonl) - 1);
    run_expect(1, "op9.csv:5: unknown opcode 9", "trace validate %s", tmp("op9.csv"));
    run_expect(1, "op9.jsonl:3: unknown opcode 9", "trace validate %s", tmp("op9.jsonl"));
    snprintf(args, sizeof(args), "trace info %s", tmp("op9.csv"));
    assert_int_equal(run(&out, args), 0);
    free(out);
}

/* `trace info` counts the distinct QPs (it printed the highest index + 1: 8 for QPs 3 and
 * 7), and `hintsim help CMD [SUB]` prints that command's help, not the top-level usage. */
static void test_info_qps_and_help(void **state)
{
    (void)state;
    char *dir = hs_test_tmpdir(), path[512], *out = NULL;
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (int i = 0; i < 10; i++) {
        trace_rec_t r = {.t_post_ns = (uint64_t)i * 1000, .t_done_ns = TRACE_TIME_UNKNOWN,
                         .size_bytes = 64, .qp = i % 2 ? 7 : 3};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    snprintf(path, sizeof(path), "%s/q.hst", dir);
    assert_int_equal(trace_save(path, tr), HS_OK);
    trace_free(tr);
    assert_int_equal(hs_test_run(&out, "%s trace info %s", hs_test_bin(), path), 0);
    assert_non_null(strstr(out, "QPs 2"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s trace info %s --json", hs_test_bin(), path), 0);
    cJSON *j = cJSON_Parse(out);
    assert_int_equal((int)cJSON_GetObjectItem(j, "qps")->valuedouble, 2);
    cJSON_Delete(j);
    free(out);
    assert_int_equal(hs_test_run(&out, "%s help recommend", hs_test_bin()), 0);
    assert_non_null(strstr(out, "usage: hintsim recommend"));
    assert_null(strstr(out, "commands:"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s help trace gen", hs_test_bin()), 0);
    assert_non_null(strstr(out, "usage: hintsim trace gen"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s help nosuch", hs_test_bin()), 2);
    free(out);
    free(dir);
}

/* perftest-style size ranges in `trace gen` (-a: 2 B..8 MB doubling, as ib_write_bw -a;
 * -b/-e/-f as nccl-tests), the records split evenly, smallest first; a workload without a
 * size range refuses them (usage, exit 2); -q leaves gen and convert silent. */
static void test_gen_size_range(void **state)
{
    (void)state;
    char *dir = hs_test_tmpdir(), path[512], *out = NULL;
    trace_t *tr = NULL;

    snprintf(path, sizeof(path), "%s/a.hst", dir);
    assert_int_equal(hs_test_run(&out, "%s trace gen -w stream -a -n 2300 -q -o %s",
                                 hs_test_bin(), path), 0);
    assert_string_equal(out, ""); /* -q */
    free(out);
    assert_int_equal(trace_load(path, &tr), HS_OK);
    assert_int_equal(tr->n, 2300);
    for (size_t i = 0; i < tr->n; i++) /* 23 sizes, 100 records each, in order */
        assert_int_equal(tr->recs[i].size_bytes, 2ull << (i / 100));
    trace_free(tr);
    assert_int_equal(hs_test_run(&out, "%s trace gen -w pingpong -b 8 -e 128M -f 4 -n 130 -o %s "
                                 "--quiet", hs_test_bin(), path), 0);
    free(out);
    assert_int_equal(trace_load(path, &tr), HS_OK);
    uint64_t want = 8;
    for (size_t i = 0; i < tr->n; i++) { /* 8, 32, ... 128M: 13 sizes, 10 each */
        if (i && i % 10 == 0)
            want *= 4;
        assert_int_equal(tr->recs[i].size_bytes, want);
    }
    assert_int_equal(want, 128u << 20);
    trace_free(tr);
    assert_int_equal(hs_test_run(&out, "%s trace gen -w kv -a -o %s", hs_test_bin(), path), 2);
    assert_non_null(strstr(out, "size range"));
    free(out);
    snprintf(path, sizeof(path), "%s/a.csv", dir);
    assert_int_equal(hs_test_run(&out, "%s trace convert %s -o %s -q", hs_test_bin(),
                                 hs_test_src("traces/samples/kv.hst"), path), 0);
    assert_string_equal(out, "");
    free(out);
    assert_int_equal(hs_test_run(&out, "%s trace convert %s -o %s", hs_test_bin(),
                                 hs_test_src("traces/samples/kv.hst"), path), 0);
    assert_non_null(strstr(out, "records written"));
    free(out);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intact),
        cmocka_unit_test(test_info_qps_and_help),
        cmocka_unit_test(test_gen_size_range),
        cmocka_unit_test(test_validate_opcode_line),
        cmocka_unit_test(test_damage_kinds),
        cmocka_unit_test(test_damage_crafted),
        cmocka_unit_test(test_salvage),
        cmocka_unit_test(test_salvage_refusals),
        cmocka_unit_test(test_convert_roundtrip),
        cmocka_unit_test(test_big_header),
        cmocka_unit_test(test_header_missing_keys),
        cmocka_unit_test(test_info_escapes),
        cmocka_unit_test(test_pipes_and_fifos),
        cmocka_unit_test(test_text_errors_name_line),
        cmocka_unit_test(test_perftest_bad_sample),
        cmocka_unit_test(test_perftest_summary),
        cmocka_unit_test(test_perftest_many_groups),
        cmocka_unit_test(test_insane_records),
        cmocka_unit_test(test_jsonl_big_integers),
        cmocka_unit_test(test_stale_tmp_removed),
        cmocka_unit_test(test_text_version),
        cmocka_unit_test(test_text_truncated),
        cmocka_unit_test(test_text_record_lines),
        cmocka_unit_test(test_not_a_trace),
        cmocka_unit_test(test_headerless_provenance),
        cmocka_unit_test(test_gen_cli),
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_usage_and_missing),
        cmocka_unit_test(test_no_partial_output),
        cmocka_unit_test(test_workloads_values),
        cmocka_unit_test(test_text_bom),
        cmocka_unit_test(test_out_fmt_rule),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
