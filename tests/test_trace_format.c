/* test_trace_format.c - the trace library in-process: CRC-32, writer/reader round trips
 * (streaming and bulk, every header field), text formats preserving every field, the
 * perftest import, the generator (determinism, what each workload promises), stats, and
 * salvage of damaged files (duplicates, order, records known lost, provenance). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_mem.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"
#include "traces/trace.h"
#include "traces/trace_check.h"
#include "traces/trace_convert.h"
#include "traces/trace_format.h"
#include "traces/trace_gen.h"
#include "traces/trace_stats.h"

static char g_dir[4096];

static const char *tmp(const char *name)
{
    static char buf[4][4200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", g_dir, name);
    return buf[k];
}

static int setup(void **state)
{
    char *d = hs_test_tmpdir();
    (void)state;
    if (!d)
        return -1;
    snprintf(g_dir, sizeof(g_dir), "%s", d);
    free(d);
    hs_log_set_quiet(1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return hs_test_run(NULL, "rm -rf '%s'", g_dir) == 0 ? 0 : -1;
}

/* A trace whose records exercise every field: unknown completions, values above 2^53,
 * every opcode including one the text formats must keep as a number. */
static trace_t *make_trace(size_t n)
{
    trace_t *tr;
    uint64_t x = 12345;

    assert_int_equal(trace_new(&tr), HS_OK);
    snprintf(tr->hdr.producer, sizeof(tr->hdr.producer), "unit \"test\"");
    snprintf(tr->hdr.device, sizeof(tr->hdr.device), "mlx5_0");
    snprintf(tr->hdr.firmware, sizeof(tr->hdr.firmware), "28.39.1002");
    snprintf(tr->hdr.workload, sizeof(tr->hdr.workload), "unit");
    tr->hdr.mode = TRACE_MODE_PRELOAD;
    tr->hdr.mem = TRACE_MEM_CUDA;
    tr->hdr.hint_bytes = 16384;
    tr->hdr.hint_source = TRACE_HINT_ENV;
    tr->hdr.pid = 4242;
    tr->hdr.rank = 3;
    tr->hdr.dropped = 7;
    tr->hdr.extra_json = strdup("{\"k\":[1,2,3],\"s\":\"v\"}");
    for (size_t i = 0; i < n; i++) {
        trace_rec_t r;
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        r.t_post_ns = i * 1000 + (x >> 60);
        r.t_done_ns = (i % 5 == 0) ? TRACE_TIME_UNKNOWN : r.t_post_ns + 100 + (x >> 50);
        r.size_bytes = (i % 97 == 3) ? (1ULL << 60) + i : (x >> 40);
        r.qp = (uint32_t)(i % 3);
        r.opcode = (uint8_t)(i % 6 == 5 ? 9 : i % 6);
        r.status = (uint8_t)(i % 11 == 0 ? 12 : 0);
        r.flags = (uint16_t)(x >> 48) & 0x00ff & ~TRACE_F_PATH_BW;
        if (i == 1)
            r.t_post_ns = (1ULL << 62) + 1, r.t_done_ns = (1ULL << 62) + 5;
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

static void assert_same_hdr(const trace_hdr_t *a, const trace_hdr_t *b)
{
    assert_string_equal(a->producer, b->producer);
    assert_string_equal(a->producer_version, b->producer_version);
    assert_int_equal(a->mode, b->mode);
    assert_string_equal(a->host, b->host);
    assert_string_equal(a->device, b->device);
    assert_string_equal(a->firmware, b->firmware);
    assert_int_equal(a->mem, b->mem);
    assert_string_equal(a->clock_source, b->clock_source);
    assert_int_equal(a->hint_bytes, b->hint_bytes);
    assert_int_equal(a->hint_source, b->hint_source);
    assert_int_equal(a->pid, b->pid);
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->dropped, b->dropped);
    assert_string_equal(a->workload, b->workload);
    assert_string_equal(a->extra_json ? a->extra_json : "", b->extra_json ? b->extra_json : "");
}

static void assert_same_trace(const trace_t *a, const trace_t *b)
{
    assert_same_hdr(&a->hdr, &b->hdr);
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->recs[i].t_post_ns, b->recs[i].t_post_ns);
        assert_int_equal(a->recs[i].t_done_ns, b->recs[i].t_done_ns);
        assert_int_equal(a->recs[i].size_bytes, b->recs[i].size_bytes);
        assert_int_equal(a->recs[i].qp, b->recs[i].qp);
        assert_int_equal(a->recs[i].opcode, b->recs[i].opcode);
        assert_int_equal(a->recs[i].status, b->recs[i].status);
        assert_int_equal(a->recs[i].flags, b->recs[i].flags);
    }
}

static void test_crc32(void **state)
{
    const char *s = "123456789";
    uint8_t big[1000];
    (void)state;
    assert_int_equal(trace_crc32(0, s, 9), 0xCBF43926u); /* the standard check value */
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7 + 3);
    /* chaining in odd pieces equals one pass (exercises the 8-byte and tail loops) */
    assert_int_equal(trace_crc32(trace_crc32(trace_crc32(0, big, 3), big + 3, 500), big + 503, 497),
                     trace_crc32(0, big, sizeof(big)));
}

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = ~0u;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return ~c;
}

static void test_crc32_paths(void **state)
{
    uint8_t buf[1200];
    uint64_t x = 1;
    (void)state;
    for (size_t i = 0; i < sizeof(buf); i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        buf[i] = (uint8_t)(x >> 56);
    }
    /* the PCLMUL path (long buffers, when the CPU has it) and the tables agree with a
     * bitwise reference at every length and misalignment */
    for (size_t len = 0; len <= 1100; len += (len < 300 ? 1 : 37))
        for (size_t off = 0; off < 4; off++) {
            uint32_t want = crc_bitwise(buf + off, len);
            assert_int_equal(trace_crc32(0, buf + off, len), want);
            assert_int_equal(trace_crc32_tables(0, buf + off, len), want);
        }
}

static void write_with_blocks(const char *path, const trace_t *tr, uint32_t blk, uint64_t dropped)
{
    trace_writer_t *w;
    assert_int_equal(trace_writer_open(path, &tr->hdr, &w), HS_OK);
    assert_int_equal(trace_writer_set_block_records(w, blk), HS_OK);
    for (size_t i = 0; i < tr->n; i++)
        assert_int_equal(trace_writer_append(w, &tr->recs[i]), HS_OK);
    if (tr->n)
        assert_int_equal(trace_writer_set_block_records(w, 5), HS_ERR_INVALID);
    trace_writer_set_dropped(w, dropped);
    assert_int_equal(trace_writer_close(w), HS_OK);
}

static void test_hst_roundtrip_streaming(void **state)
{
    trace_t *tr = make_trace(1000), *back;
    trace_reader_t *r;
    trace_rec_t rec;
    int eof = 0;
    size_t i = 0;
    (void)state;
    write_with_blocks(tmp("a.hst"), tr, 7, 99);
    tr->hdr.dropped = 99; /* the end block's count wins */
    assert_int_equal(trace_reader_open(tmp("a.hst"), &r), HS_OK);
    assert_int_equal(trace_reader_header(r)->dropped, 99); /* known at open (tail peek) */
    while (trace_reader_next(r, &rec, &eof) == HS_OK && !eof) {
        assert_memory_equal(&rec, &tr->recs[i], sizeof(rec));
        i++;
    }
    assert_true(eof);
    assert_int_equal(i, 1000);
    assert_int_equal(trace_reader_blocks(r), (1000 + 6) / 7);
    trace_reader_close(r);
    assert_int_equal(trace_load(tmp("a.hst"), &back), HS_OK);
    assert_same_trace(tr, back);
    trace_free(back);
    trace_free(tr);
}

/* The header's u64 fields near and from 2^53 on (a dropped count is whatever the end block
 * said) survive every form exactly: digits below 2^53, decimal strings from it on
 * (test_trace_json checks what the header parser refuses). */
static void test_header_u64_past_2p53(void **state)
{
    static const uint64_t vals[] = {TRACE_JSON_EXACT - 1, TRACE_JSON_EXACT, TRACE_JSON_EXACT + 1,
                                    UINT64_MAX};
    static const char *const names[] = {"u.hst", "u.csv", "u.jsonl"};
    static const char *const digits[] = {"9007199254740991", "9007199254740992",
                                         "9007199254740993", "18446744073709551615"};
    trace_t *tr = make_trace(10), *back;
    char text[24];
    (void)state;
    for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++) {
        /* the one rule's spelling: the digits, quoted from 2^53 on */
        assert_int_equal(trace_json_u64_text(vals[v], text), v > 0);
        assert_string_equal(text, digits[v]);
        tr->hdr.dropped = vals[v];
        tr->hdr.hint_bytes = vals[v] - 7;
        for (size_t f = 0; f < 3; f++) {
            assert_int_equal(trace_save(tmp(names[f]), tr), HS_OK);
            assert_int_equal(trace_load(tmp(names[f]), &back), HS_OK);
            assert_true(back->hdr.dropped == vals[v]);
            assert_true(back->hdr.hint_bytes == vals[v] - 7);
            trace_free(back);
        }
    }
    trace_free(tr);
}

/* A pipe read as a stream (trace_input_fopen): within its first 64 KiB it reads again
 * after a rewind, byte for byte; once read past them, a rewind is refused rather than
 * reading on from the window's end as if the bytes past it had not been read. */
static void test_pipe_stream_rewind(void **state)
{
    enum { N = 200 << 10 };
    unsigned char *want = malloc(N), *got = malloc(N);
    char path[64];
    int fd[2], ws;
    pid_t pid;
    FILE *fp;
    (void)state;
    for (size_t i = 0; i < N; i++)
        want[i] = (unsigned char)(i * 7 + i / 251);
    assert_int_equal(pipe(fd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* blocks until read: a pipe holds 64 KiB */
        close(fd[0]); /* a reader gone fails the write (EPIPE), never hangs it */
        int rc = write(fd[1], want, N) == N ? 0 : 1;
        free(want); /* nothing left for valgrind to call lost in this child */
        free(got);
        _exit(rc);
    }
    close(fd[1]);
    snprintf(path, sizeof(path), "/dev/fd/%d", fd[0]);
    fp = trace_input_fopen(path);
    close(fd[0]);
    assert_non_null(fp);
    assert_int_equal(fread(got, 1, 1000, fp), 1000);
    assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
    assert_int_equal(fread(got, 1, 100 << 10, fp), 100 << 10);
    assert_memory_equal(got, want, 100 << 10);
    assert_int_not_equal(fseek(fp, 0, SEEK_SET), 0); /* past the window: no way back */
    assert_int_equal(fread(got, 1, N - (100 << 10), fp), N - (100 << 10));
    assert_memory_equal(got, want + (100 << 10), N - (100 << 10));
    fclose(fp);
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    free(want);
    free(got);
}

/* A trace grown past HS_MEM_BIG_BYTES by trace_push, and one loaded from a file, live in
 * one large array (2 MiB aligned: hs_alloc_big; plain malloc would give a page-aligned
 * mapping plus its header) holding every record; the loaded one sized from the file (at
 * most size / 32 records: one allocation) and exactly the records written. */
static void test_big_traces_on_huge_pages(void **state)
{
    size_t n = HS_MEM_BIG_BYTES / sizeof(trace_rec_t) * 3 / 2;
    trace_t *tr = make_trace(n), *back;
    (void)state;
    assert_true(tr->cap * sizeof(trace_rec_t) >= HS_MEM_BIG_BYTES);
    assert_int_equal((uintptr_t)tr->recs % (2u << 20), 0);
    assert_int_equal(trace_save(tmp("big.hst"), tr), HS_OK);
    assert_int_equal(trace_load(tmp("big.hst"), &back), HS_OK);
    assert_same_trace(tr, back);
    assert_int_equal((uintptr_t)back->recs % (2u << 20), 0);
    FILE *f = fopen(tmp("big.hst"), "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long bytes = ftell(f);
    fclose(f);
    assert_true(back->cap >= n && back->cap == (size_t)bytes / TRACE_REC_BYTES);
    /* reserving more keeps the records; less changes nothing */
    trace_rec_t *before = back->recs;
    assert_int_equal(trace_reserve(back, 10), HS_OK);
    assert_ptr_equal(back->recs, before);
    assert_int_equal(trace_reserve(back, back->cap + 1), HS_OK);
    assert_same_trace(tr, back);
    trace_free(back);
    trace_free(tr);
    /* small arrays take malloc and still work */
    char *p = hs_alloc_big(100);
    assert_non_null(p);
    memset(p, 1, 100);
    free(p);
}

static void test_hst_empty_and_abort(void **state)
{
    trace_t *tr = make_trace(0), *back;
    trace_writer_t *w;
    char *text = NULL;
    (void)state;
    assert_int_equal(trace_save(tmp("e.hst"), tr), HS_OK);
    assert_int_equal(trace_load(tmp("e.hst"), &back), HS_OK);
    assert_int_equal(back->n, 0);
    assert_same_hdr(&tr->hdr, &back->hdr);
    trace_free(back);
    /* an aborted writer leaves an existing file untouched and no temporary behind */
    assert_int_equal(hs_write_file_atomic(tmp("keep.hst"), "precious"), HS_OK);
    assert_int_equal(trace_writer_open(tmp("keep.hst"), &tr->hdr, &w), HS_OK);
    trace_writer_abort(w);
    assert_int_equal(hs_read_file(tmp("keep.hst"), &text, NULL), HS_OK);
    assert_string_equal(text, "precious");
    free(text);
    assert_int_equal(hs_test_run(NULL, "ls '%s' | grep -q tmp", g_dir), 1);
    trace_free(tr);
}

static void test_text_roundtrips(void **state)
{
    trace_t *tr = make_trace(500), *a, *b, *c;
    (void)state;
    assert_int_equal(trace_save(tmp("t.hst"), tr), HS_OK);
    assert_int_equal(trace_save(tmp("t.csv"), tr), HS_OK);
    assert_int_equal(trace_save(tmp("t.jsonl"), tr), HS_OK);
    assert_int_equal(trace_load(tmp("t.csv"), &a), HS_OK);
    assert_int_equal(trace_load(tmp("t.jsonl"), &b), HS_OK);
    assert_int_equal(trace_load(tmp("t.hst"), &c), HS_OK);
    assert_same_trace(tr, a);
    assert_same_trace(tr, b);
    assert_same_trace(tr, c);
    trace_free(a);
    trace_free(b);
    trace_free(c);
    assert_int_equal(trace_save(tmp("t.txt"), tr), HS_ERR_USAGE);
    trace_free(tr);
}

static void test_text_minimal_and_errors(void **state)
{
    trace_t *tr;
    (void)state;
    /* a CSV from another tool: columns in any order, only the required ones */
    assert_int_equal(hs_write_file_atomic(tmp("m.csv"), "size_bytes,t_post_ns\n8,100\n 4096 , 250\n"),
                     HS_OK);
    assert_int_equal(trace_load(tmp("m.csv"), &tr), HS_OK);
    assert_int_equal(tr->n, 2);
    assert_int_equal(tr->recs[1].size_bytes, 4096);
    assert_int_equal(tr->recs[1].t_post_ns, 250);
    assert_int_equal(tr->recs[1].t_done_ns, TRACE_TIME_UNKNOWN);
    assert_int_equal(tr->hdr.mode, TRACE_MODE_CONVERTED);
    trace_free(tr);
    assert_int_equal(hs_write_file_atomic(tmp("b1.csv"), "t_post_ns,size_bytes,colour\n1,2,3\n"), HS_OK);
    assert_int_equal(trace_load(tmp("b1.csv"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("b2.csv"), "t_post_ns,size_bytes\n1,x\n"), HS_OK);
    assert_int_equal(trace_load(tmp("b2.csv"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("b3.csv"), "t_post_ns,size_bytes,qp\n1,2,4294967296\n"), HS_OK);
    assert_int_equal(trace_load(tmp("b3.csv"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("b.jsonl"), "{\"t_post_ns\":1}\n"), HS_OK);
    assert_int_equal(trace_load(tmp("b.jsonl"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("b2.jsonl"), "{\"t_post_ns\":1.5,\"size_bytes\":2}\n"), HS_OK);
    assert_int_equal(trace_load(tmp("b2.jsonl"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("junk.bin"), "hello world\n"), HS_OK);
    assert_int_equal(trace_load(tmp("junk.bin"), &tr), HS_ERR_INVALID);
}

static void test_header_json_errors(void **state)
{
    trace_hdr_t h;
    char why[256];
    (void)state;
    trace_hdr_init(&h);
    assert_int_equal(trace_hdr_from_json("{\"rank\":\"x\"}", 12, &h, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "'rank'"));
    assert_int_equal(trace_hdr_from_json("{\"mode\":\"dream\"}", 16, &h, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "'mode'"));
    assert_int_equal(trace_hdr_from_json("{\"mode\":", 8, &h, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "syntax"));
    assert_int_equal(trace_hdr_from_json("{\"clock_unit\":\"us\"}", 19, &h, why, sizeof(why)), -1);
    assert_int_equal(trace_hdr_from_json("{\"future_key\":1,\"rank\":5}", 25, &h, why, sizeof(why)), 0);
    assert_int_equal(h.rank, 5); /* unknown keys are ignored (minor additions) */
    trace_hdr_release(&h);
}

static void test_rec_check(void **state)
{
    trace_rec_t r = {.t_post_ns = 10, .t_done_ns = 20, .size_bytes = 8};
    char why[256];
    (void)state;
    assert_int_equal(trace_rec_check(&r, why, sizeof(why)), 0);
    r.t_done_ns = 5;
    assert_int_equal(trace_rec_check(&r, why, sizeof(why)), -1);
    r.t_done_ns = TRACE_TIME_UNKNOWN;
    assert_int_equal(trace_rec_check(&r, why, sizeof(why)), 0);
    r.flags = TRACE_F_PATH_MASK;
    assert_int_equal(trace_rec_check(&r, why, sizeof(why)), -1);
    r.flags = 0;
    r.opcode = 9;
    assert_int_equal(trace_rec_check(&r, why, sizeof(why)), -1);
}

static void test_perftest_import(void **state)
{
    trace_t *tr;
    (void)state;
    assert_int_equal(trace_load(hs_test_src("traces/samples/perftest/ib_write_lat_U.txt"), &tr), HS_OK);
    assert_int_equal(tr->n, 98); /* two sizes, 50 iterations each, 49 deltas each */
    assert_int_equal(tr->recs[0].size_bytes, 2);
    assert_int_equal(tr->recs[48].size_bytes, 2);
    assert_int_equal(tr->recs[49].size_bytes, 4096);
    assert_int_equal(tr->recs[0].t_post_ns, 0);
    assert_int_equal(tr->recs[0].t_done_ns, 11735); /* "1, 11.735" usec */
    assert_int_equal(tr->recs[1].t_post_ns, tr->recs[0].t_done_ns); /* back to back */
    assert_int_equal(tr->recs[1].t_done_ns - tr->recs[1].t_post_ns, 11265);
    assert_true(tr->recs[0].flags & TRACE_F_INLINE);       /* 2 B <= 220 B inline */
    assert_false(tr->recs[49].flags & TRACE_F_INLINE);
    assert_int_equal(tr->recs[0].opcode, TRACE_OP_WRITE);
    assert_string_equal(tr->hdr.device, "rxe0");
    assert_int_equal(tr->hdr.mode, TRACE_MODE_CONVERTED);
    assert_non_null(strstr(tr->hdr.extra_json, "\"iterations\":50"));
    trace_free(tr);
    /* -U with -H: the sorted copy of the list is skipped, the time order kept */
    assert_int_equal(hs_write_file_atomic(tmp("uh.txt"), " #bytes #iterations\n#, usec\n1, 3.5\n"
                                          "2, 3.1\n#, usec\n1, 3.1\n2, 3.5\n 8  3  3.1  3.5\n"), HS_OK);
    assert_int_equal(trace_load(tmp("uh.txt"), &tr), HS_OK);
    assert_int_equal(tr->n, 2);
    assert_int_equal(tr->recs[0].t_done_ns, 3500);
    assert_int_equal(tr->recs[1].size_bytes, 8);
    trace_free(tr);
    assert_int_equal(hs_write_file_atomic(tmp("cyc.txt"), " #bytes #iterations\n#, cycles\n1, 30000\n"),
                     HS_OK);
    assert_int_equal(trace_load(tmp("cyc.txt"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("cut.txt"), " #bytes #iterations\n#, usec\n1, 3.5\n2, 3.1\n"),
                     HS_OK);
    assert_int_equal(trace_load(tmp("cut.txt"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("gap.txt"), "#, usec\n1, 3.5\n3, 3.1\n 8 3\n"), HS_OK);
    assert_int_equal(trace_load(tmp("gap.txt"), &tr), HS_ERR_INVALID);
    assert_int_equal(hs_write_file_atomic(tmp("nou.txt"), " #bytes #iterations  t_min\n 8 1000 1.0\n"),
                     HS_OK);
    assert_int_equal(trace_load(tmp("nou.txt"), &tr), HS_ERR_INVALID);
    /* a CSV whose comments name a perftest report is still a CSV: its column line decides */
    assert_int_equal(hs_write_file_atomic(tmp("lt.csv"), "# Latency Test, ib_write_lat -U, #bytes "
                                          "8\n\n#, usec\nsize_bytes,t_post_ns\n64,10\n8,20\n"),
                     HS_OK);
    assert_int_equal(trace_load(tmp("lt.csv"), &tr), HS_OK);
    assert_int_equal(tr->n, 2);
    assert_int_equal(tr->recs[0].size_bytes, 64);
    assert_int_equal(tr->recs[1].t_post_ns, 20);
    trace_free(tr);
}

static int same_file(const char *a, const char *b)
{
    return hs_test_run(NULL, "cmp -s '%s' '%s'", a, b) == 0;
}

static void test_gen_determinism(void **state)
{
    size_t n;
    const trace_gen_workload_t *w = trace_gen_workloads(&n);
    (void)state;
    assert_true(n >= 8);
    for (size_t i = 0; i < n; i++) {
        trace_t *tr;
        assert_int_equal(trace_gen_run(w[i].name, 3000, 1, NULL, 0, tmp("g1.hst")), HS_OK);
        assert_int_equal(trace_gen_run(w[i].name, 3000, 1, NULL, 0, tmp("g2.hst")), HS_OK);
        assert_int_equal(trace_gen_run(w[i].name, 3000, 2, NULL, 0, tmp("g3.hst")), HS_OK);
        assert_true(same_file(tmp("g1.hst"), tmp("g2.hst")));
        assert_false(same_file(tmp("g1.hst"), tmp("g3.hst")));
        assert_int_equal(trace_load(tmp("g1.hst"), &tr), HS_OK);
        assert_int_equal(tr->n, 3000);
        assert_string_equal(tr->hdr.workload, w[i].name);
        for (size_t k = 1; k < tr->n; k++) /* one poster: post times never go back */
            assert_true(tr->recs[k].t_post_ns >= tr->recs[k - 1].t_post_ns);
        trace_free(tr);
    }
}

static trace_t *gen(const char *name, const char *set1, const char *set2)
{
    const char *sets[2] = {set1, set2};
    trace_t *tr;
    assert_int_equal(trace_gen_run(name, 5000, 7, sets, set2 ? 2 : (set1 ? 1 : 0), tmp("w.hst")),
                     HS_OK);
    assert_int_equal(trace_load(tmp("w.hst"), &tr), HS_OK);
    return tr;
}

static void test_gen_workloads(void **state)
{
    trace_t *tr;
    size_t small = 0, cold = 0, unknown = 0;
    (void)state;
    tr = gen("allreduce", "grad_bytes=8M", "ranks=4");
    for (size_t i = 0; i < tr->n; i++) /* chunks = 8M / 4 ranks, control 64 B */
        assert_true(tr->recs[i].size_bytes == 2097152 || tr->recs[i].size_bytes == 64);
    assert_non_null(strstr(tr->hdr.extra_json, "\"ranks\":4"));
    trace_free(tr);
    tr = gen("burst", NULL, NULL);
    for (size_t i = 0; i < tr->n; i++) {
        uint64_t s = tr->recs[i].size_bytes;
        assert_true(s == 8 || (s >= 256 && s <= 4096));
        small += s == 8;
    }
    assert_true(small > 0 && small < tr->n);
    trace_free(tr);
    tr = gen("coldstart", "cold_count=10", NULL);
    for (size_t i = 0; i < tr->n; i++)
        cold += !!(tr->recs[i].flags & TRACE_F_COLD);
    assert_int_equal(cold, 10);
    assert_true(tr->recs[0].t_done_ns - tr->recs[0].t_post_ns >
                10 * (tr->recs[100].t_done_ns - tr->recs[100].t_post_ns));
    trace_free(tr);
    tr = gen("stream", "signal_every=4", NULL);
    for (size_t i = 0; i < tr->n; i++)
        unknown += tr->recs[i].t_done_ns == TRACE_TIME_UNKNOWN;
    assert_int_equal(unknown, tr->n - tr->n / 4);
    trace_free(tr);
    tr = gen("wide", NULL, NULL);
    for (size_t i = 0; i < tr->n; i++)
        assert_true(tr->recs[i].size_bytes == 16 || tr->recs[i].size_bytes == 64u << 20);
    trace_free(tr);
    assert_int_equal(trace_gen_run("kv", 10, 0, (const char *[]){"nope=1"}, 1, tmp("x.hst")),
                     HS_ERR_INVALID);
    assert_int_equal(trace_gen_run("kv", 10, 0, (const char *[]){"value_fraction=2"}, 1,
                                   tmp("x.hst")), HS_ERR_INVALID);
    assert_int_equal(trace_gen_run("nope", 10, 0, NULL, 0, tmp("x.hst")), HS_ERR_INVALID);
    assert_int_equal(access(tmp("x.hst"), F_OK), -1);
}

/* The offered load of tr: bits posted over the time from the first post to the last. */
static double offered_gbps(const trace_t *tr)
{
    double bits = 0;
    for (size_t i = 0; i + 1 < tr->n; i++) /* each message against the gap after it */
        bits += (double)tr->recs[i].size_bytes * 8.0;
    return bits / (double)(tr->recs[tr->n - 1].t_post_ns - tr->recs[0].t_post_ns);
}

/* phased and wide keep to max_load of the common bw_gbps by default (they offered 15-21x
 * the link before it); max_load=0 gives the unpaced records, posts gap_ns apart. */
static void test_gen_max_load(void **state)
{
    static const char *const names[] = {"phased", "wide"};
    (void)state;
    for (size_t w = 0; w < 2; w++) {
        trace_t *tr = gen(names[w], NULL, NULL);
        double g = offered_gbps(tr);
        for (size_t i = 0; i + 1 < tr->n; i++) { /* every message, not only on average */
            double wire = (double)tr->recs[i].size_bytes * 8.0 / 100.0;
            assert_true((double)(tr->recs[i + 1].t_post_ns - tr->recs[i].t_post_ns) >= wire / 0.5);
        }
        assert_true(g <= 50.0 && g > 10.0);
        trace_free(tr);
        tr = gen(names[w], "max_load=0.25", "bw_gbps=400");
        assert_true(offered_gbps(tr) <= 100.0 && offered_gbps(tr) > g);
        trace_free(tr);
        tr = gen(names[w], "max_load=0", NULL);
        assert_true(offered_gbps(tr) > 1000.0);
        trace_free(tr);
    }
    trace_t *tr = gen("phased", "max_load=0", "jitter=0");
    for (size_t i = 0; i + 1 < tr->n; i++)
        assert_int_equal(tr->recs[i + 1].t_post_ns - tr->recs[i].t_post_ns, 2000);
    trace_free(tr);
    assert_int_equal(trace_gen_run("phased", 10, 0, (const char *[]){"max_load=1.5"}, 1,
                                   tmp("x.hst")), HS_ERR_INVALID);
}

static void test_stats(void **state)
{
    trace_t *tr;
    trace_stats_t s;
    static const uint64_t sizes[] = {0, 1, 8, 15, 16, 4096, 4096};
    char *json;
    cJSON *o;
    (void)state;
    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < 7; i++) {
        trace_rec_t r = {.t_post_ns = 1000 * i, .size_bytes = sizes[i],
                         .t_done_ns = i < 3 ? TRACE_TIME_UNKNOWN : 1000 * i + 500,
                         .flags = (uint16_t)(i == 0 ? TRACE_F_COLD : TRACE_F_PATH_LL)};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    assert_int_equal(trace_stats_compute(tr, &s), HS_OK);
    /* the classes of model's results (hs_size_class): a size <= a power-of-two hint is
     * in a class at or below the hint's (4096 was counted in [4096, 8192)) */
    assert_int_equal(s.hist[0], 2); /* 0..1 */
    assert_int_equal(s.hist[3], 1); /* 5..8 */
    assert_int_equal(s.hist[4], 2); /* 9..16 */
    assert_int_equal(s.hist[12], 2); /* 2049..4096 */
    assert_int_equal(s.size_p50, 15);
    assert_int_equal(s.done_known, 4);
    assert_int_equal(s.cold, 1);
    assert_int_equal(s.path_ll, 6);
    json = trace_stats_json("x", tr, &s);
    o = cJSON_Parse(json);
    assert_non_null(o);
    assert_true(cJSON_GetObjectItem(o, "time_span_us")->valuedouble == 6.5);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "size_histogram")), 4);
    cJSON *last = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "size_histogram"), 3);
    assert_true(cJSON_GetObjectItem(last, "min_bytes")->valuedouble == 2049);
    assert_true(cJSON_GetObjectItem(last, "max_bytes")->valuedouble == 4096);
    cJSON_Delete(o);
    free(json);
    trace_free(tr);
}

/* ---- salvage: damaged files built from a written trace, trace_salvage called directly ---- */

#define SALV_RECS 20000 /* 5 blocks of 4096 records, the last one 3616 */

typedef struct {
    trace_t *tr;           /* what was written */
    uint8_t *d;            /* the file's bytes */
    size_t len;
    size_t blk[8];         /* byte offset of each block, the end block last */
    size_t nblk;
} salv_src_t;

static void put_bytes(const char *path, const uint8_t *d, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* A trace whose header differs from every default (host, clock, workload, extra), written
 * in 4096-record blocks with 7 dropped, and its block offsets found by walking it. */
static void salv_src(salv_src_t *src)
{
    size_t off;

    src->tr = make_trace(SALV_RECS);
    snprintf(src->tr->hdr.host, sizeof(src->tr->hdr.host), "node17");
    snprintf(src->tr->hdr.clock_source, sizeof(src->tr->hdr.clock_source), "perftest cycles");
    write_with_blocks(tmp("src.hst"), src->tr, 4096, 7);
    assert_int_equal(hs_read_file(tmp("src.hst"), (char **)&src->d, &src->len), HS_OK);
    src->nblk = 0;
    for (off = TRACE_FILE_HDR_BYTES + trace_json_padded(trace_get_u32(src->d + 12));
         off < src->len; off += trace_get_u32(src->d + off + 8)) {
        assert_true(src->nblk < 8);
        src->blk[src->nblk++] = off;
    }
    assert_int_equal(src->nblk, 6);
    assert_int_equal(src->blk[5] + 64, src->len);
}

static void salv_src_free(salv_src_t *src)
{
    trace_free(src->tr);
    free(src->d);
}

/* Bytes [a, b) of the source, for splicing damaged files. */
typedef struct {
    size_t a, b;
} span_t;

static void salv_splice(const salv_src_t *src, const char *name, const span_t *sp, size_t n)
{
    size_t len = 0;
    uint8_t *d;

    for (size_t i = 0; i < n; i++)
        len += sp[i].b - sp[i].a;
    d = malloc(len ? len : 1);
    assert_non_null(d);
    len = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(d + len, src->d + sp[i].a, sp[i].b - sp[i].a);
        len += sp[i].b - sp[i].a;
    }
    put_bytes(tmp(name), d, len);
    free(d);
}

/* The salvaged output holds exactly the records of these source blocks, in this order, and
 * the dropped count given; returns it loaded (caller frees). */
static trace_t *assert_salvaged_blocks(const salv_src_t *src, const int *blocks, size_t n,
                                       uint64_t dropped)
{
    trace_t *got;
    size_t at = 0;

    assert_int_equal(trace_load(tmp("s.hst"), &got), HS_OK); /* a valid file (structure) */
    for (size_t i = 0; i < n; i++) {
        size_t first = (size_t)blocks[i] * 4096, cnt = blocks[i] == 4 ? 3616 : 4096;
        assert_true(at + cnt <= got->n);
        assert_memory_equal(got->recs + at, src->tr->recs + first, cnt * sizeof(trace_rec_t));
        at += cnt;
    }
    assert_int_equal(got->n, at);
    assert_int_equal(got->hdr.dropped, dropped);
    return got;
}

static void salvage(const char *name, trace_salvage_t *res)
{
    assert_int_equal(trace_salvage(tmp(name), tmp("s.hst"), res), HS_OK);
}

/* A block present twice is kept once (its seq was kept already), and the end block's
 * totals then match: no count wraps. */
static void test_salvage_duplicate_block(void **state)
{
    static const int all[] = {0, 1, 2, 3, 4};
    salv_src_t src;
    trace_salvage_t res;
    (void)state;
    salv_src(&src);
    span_t dup[] = {{0, src.blk[3]}, {src.blk[2], src.len}}; /* block 2 twice */
    salv_splice(&src, "dup.hst", dup, 2);
    salvage("dup.hst", &res);
    assert_int_equal(res.kept_blocks, 5);
    assert_int_equal(res.kept_records, SALV_RECS);
    assert_true(res.end_ok);
    assert_int_equal(res.total_blocks, 5);
    assert_int_equal(res.total_records, SALV_RECS);
    assert_int_equal(res.lost_blocks, 0);
    assert_int_equal(res.lost_records, 0);
    assert_int_equal(res.dup_blocks, 1);
    assert_int_equal(res.dup_records, 4096);
    assert_int_equal(res.damaged_regions, 1);
    assert_int_equal(res.first_bad_offset, src.blk[3]);
    assert_non_null(strstr(res.first_bad_why, "duplicate"));
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    /* the same block three times, the copies apart */
    span_t dup3[] = {{0, src.blk[3]}, {src.blk[2], src.blk[4]}, {src.blk[2], src.len}};
    salv_splice(&src, "dup3.hst", dup3, 3);
    salvage("dup3.hst", &res);
    assert_int_equal(res.kept_blocks, 5);
    assert_int_equal(res.dup_blocks, 3); /* 2 twice, 3 once */
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    salv_src_free(&src);
}

/* Blocks out of sequence order are put back in order (and reported as damage); an end
 * block that claims fewer blocks than were kept is not believed, and nothing wraps. */
static void test_salvage_out_of_order(void **state)
{
    static const int all[] = {0, 1, 2, 3, 4};
    salv_src_t src;
    trace_salvage_t res;
    (void)state;
    salv_src(&src);
    span_t swap[] = {{0, src.blk[1]}, {src.blk[2], src.blk[3]}, {src.blk[1], src.blk[2]},
                     {src.blk[3], src.len}}; /* blocks 1 and 2 swapped */
    salv_splice(&src, "swap.hst", swap, 4);
    salvage("swap.hst", &res);
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    assert_int_equal(res.kept_blocks, 5);
    assert_int_equal(res.reordered_blocks, 1);
    assert_int_equal(res.unordered_blocks, 0);
    assert_int_equal(res.damaged_regions, 1); /* not "no damage found" */
    assert_int_equal(res.first_bad_offset, src.blk[1] + (src.blk[3] - src.blk[2]));
    assert_non_null(strstr(res.first_bad_why, "out of sequence order"));
    assert_true(res.end_ok);
    assert_int_equal(res.lost_blocks, 0);
    span_t last[] = {{0, src.blk[1]}, {src.blk[2], src.blk[5]}, {src.blk[1], src.blk[2]},
                     {src.blk[5], src.len}}; /* block 1 after block 4 */
    salv_splice(&src, "late.hst", last, 4);
    salvage("late.hst", &res);
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    assert_int_equal(res.reordered_blocks, 1);
    /* the end block says 2 blocks (8192 records), CRCs fixed: 5 were kept */
    uint8_t *d = malloc(src.len);
    assert_non_null(d);
    memcpy(d, src.d, src.len);
    uint8_t *e = d + src.blk[5];
    trace_put_u64(e + 32 + 8, 8192);
    trace_put_u64(e + 32 + 16, 2);
    trace_put_u32(e + 24, trace_crc32(0, e + 32, 24));
    trace_put_u32(e + 28, trace_crc32(0, e, 28));
    put_bytes(tmp("liar.hst"), d, src.len);
    free(d);
    salvage("liar.hst", &res);
    assert_int_equal(res.kept_blocks, 5);
    assert_false(res.end_ok); /* so total - kept is never taken */
    assert_true(res.totals_inconsistent);
    assert_int_equal(res.total_blocks, TRACE_UNKNOWN_COUNT);
    assert_int_equal(res.lost_blocks, 0);
    assert_int_equal(res.lost_records, 0);
    assert_int_equal(res.lost_blocks_min, 0);
    assert_true(res.damaged_regions >= 1);
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    salv_src_free(&src);
}

/* A block more than the window (1024 blocks) out of place is kept where it is, reported
 * as damage; nothing is duplicated or lost. */
static void test_salvage_far_out_of_order(void **state)
{
    trace_t *tr = make_trace(3000), *got;
    uint8_t *d, *out;
    size_t len, start, off, k = 0, blen = TRACE_BLK_OVERHEAD + TRACE_REC_BYTES;
    trace_salvage_t res;
    (void)state;
    write_with_blocks(tmp("one.hst"), tr, 1, 0); /* 3000 blocks of one record */
    assert_int_equal(hs_read_file(tmp("one.hst"), (char **)&d, &len), HS_OK);
    start = TRACE_FILE_HDR_BYTES + trace_json_padded(trace_get_u32(d + 12));
    out = malloc(len);
    assert_non_null(out);
    memcpy(out, d, start + blen); /* header, block 0, blocks 2.., block 1, end block */
    off = start + blen;
    memcpy(out + off, d + start + 2 * blen, 2998 * blen);
    off += 2998 * blen;
    memcpy(out + off, d + start + blen, blen);
    off += blen;
    memcpy(out + off, d + start + 3000 * blen, len - (start + 3000 * blen));
    put_bytes(tmp("far.hst"), out, len);
    salvage("far.hst", &res);
    assert_int_equal(res.kept_blocks, 3000);
    assert_int_equal(res.unordered_blocks, 1);
    assert_int_equal(res.dup_blocks, 0);
    assert_true(res.damaged_regions >= 1);
    assert_true(res.end_ok);
    assert_int_equal(res.lost_records, 0);
    assert_int_equal(trace_load(tmp("s.hst"), &got), HS_OK);
    assert_int_equal(got->n, 3000);
    assert_memory_equal(&got->recs[0], &tr->recs[0], sizeof(trace_rec_t));
    for (size_t i = 1; i < 2999; i++, k++) /* 2, 3, ... in order, then 1 */
        assert_memory_equal(&got->recs[i], &tr->recs[i + 1], sizeof(trace_rec_t));
    assert_memory_equal(&got->recs[2999], &tr->recs[1], sizeof(trace_rec_t));
    assert_int_equal(k, 2998);
    trace_free(got);
    free(out);
    free(d);
    trace_free(tr);
}

/* A block whose header holds but whose payload is cut or damaged: its record count is
 * known lost, in the report and in the output's dropped. A cut end block loses no record. */
static void test_salvage_known_lost(void **state)
{
    static const int first2[] = {0, 1}, all_but_2[] = {0, 1, 3, 4}, all[] = {0, 1, 2, 3, 4};
    salv_src_t src;
    trace_salvage_t res;
    (void)state;
    salv_src(&src);
    span_t cut[] = {{0, src.blk[2] + 37056}}; /* mid-block 2, its header intact */
    salv_splice(&src, "cut.hst", cut, 1);
    salvage("cut.hst", &res);
    assert_int_equal(res.lost_records, 4096);
    trace_free(assert_salvaged_blocks(&src, first2, 2, 7 + 4096));
    assert_int_equal(res.kept_blocks, 2);
    assert_false(res.end_ok);
    assert_int_equal(res.lost_blocks, 1);
    assert_int_equal(res.lost_blocks_min, 1);
    assert_int_equal(res.first_bad_offset, src.blk[2]);
    assert_non_null(strstr(res.first_bad_why, "4096 records"));
    /* only the end block cut: no record block lost */
    span_t endcut[] = {{0, src.len - 1}};
    salv_splice(&src, "endcut.hst", endcut, 1);
    salvage("endcut.hst", &res);
    assert_int_equal(res.lost_blocks_min, 0);
    assert_int_equal(res.lost_records, 0);
    assert_false(res.end_ok);
    assert_true(res.end_damaged);
    assert_int_equal(res.kept_blocks, 5);
    assert_non_null(strstr(res.first_bad_why, "end block"));
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    /* a record of block 2 damaged, the end block intact: the exact count */
    uint8_t *d = malloc(src.len);
    assert_non_null(d);
    memcpy(d, src.d, src.len);
    d[src.blk[2] + 32 + 5 * 32 + 17] ^= 0x01;
    put_bytes(tmp("rec.hst"), d, src.len);
    free(d);
    salvage("rec.hst", &res);
    assert_true(res.end_ok);
    assert_int_equal(res.lost_blocks, 1);
    assert_int_equal(res.lost_records, 4096);
    trace_free(assert_salvaged_blocks(&src, all_but_2, 4, 7 + 4096));
    /* a damaged copy of block 2 and an intact one: nothing lost, no duplicate kept */
    span_t both[] = {{0, src.blk[3]}, {src.blk[2], src.blk[2] + 1000}, {src.blk[3], src.len}};
    salv_splice(&src, "both.hst", both, 3);
    salvage("both.hst", &res);
    assert_int_equal(res.lost_records, 0);
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    salv_src_free(&src);
}

/* The JSON header is kept whenever its own CRC holds (a damaged file-header CRC does not
 * cost the provenance); a header really lost says "unknown", never this machine's name. */
static void test_salvage_provenance(void **state)
{
    static const int all[] = {0, 1, 2, 3, 4};
    salv_src_t src;
    trace_salvage_t res;
    trace_t *got;
    char me[64] = "";
    uint8_t *d;
    (void)state;
    salv_src(&src);
    d = malloc(src.len);
    assert_non_null(d);
    memcpy(d, src.d, src.len);
    d[28] ^= 0x01; /* the file header's CRC only */
    put_bytes(tmp("fh.hst"), d, src.len);
    salvage("fh.hst", &res);
    assert_true(res.header_ok);
    assert_false(res.file_header_ok);
    assert_int_equal(res.damaged_regions, 1);
    assert_int_equal(res.first_bad_offset, 0);
    assert_non_null(strstr(res.first_bad_why, "file header CRC at byte offset 28"));
    got = assert_salvaged_blocks(&src, all, 5, 7);
    src.tr->hdr.dropped = 7;
    assert_same_hdr(&src.tr->hdr, &got->hdr); /* host, clock, mode, workload, extra */
    trace_free(got);
    memcpy(d, src.d, src.len);
    d[40] ^= 0x20; /* inside the JSON: the header is lost */
    put_bytes(tmp("json.hst"), d, src.len);
    salvage("json.hst", &res);
    assert_false(res.header_ok);
    got = assert_salvaged_blocks(&src, all, 5, 7);
    assert_int_equal(gethostname(me, sizeof(me) - 1), 0);
    assert_string_equal(got->hdr.host, "unknown");
    assert_string_not_equal(got->hdr.host, me);
    assert_string_equal(got->hdr.producer, "unknown");
    assert_string_equal(got->hdr.clock_source, "unknown");
    assert_int_equal(got->hdr.mode, TRACE_MODE_CONVERTED);
    trace_free(got);
    free(d);
    salv_src_free(&src);
}

/* An end block duplicated, or with record blocks after it, is damage (validate rejects
 * both): the copy is dropped, the misplaced one noted; every record is kept. */
static void test_salvage_end_block_misplaced(void **state)
{
    static const int all[] = {0, 1, 2, 3, 4};
    salv_src_t src;
    trace_salvage_t res;
    (void)state;
    salv_src(&src);
    span_t dup[] = {{0, src.len}, {src.blk[5], src.len}};
    salv_splice(&src, "dupend.hst", dup, 2);
    salvage("dupend.hst", &res);
    assert_int_equal(res.dup_end_blocks, 1);
    assert_false(res.end_misplaced);
    assert_int_equal(res.damaged_regions, 1);
    assert_int_equal(res.first_bad_offset, src.len);
    assert_non_null(strstr(res.first_bad_why, "duplicate end block"));
    assert_true(res.end_ok);
    assert_int_equal(res.lost_blocks, 0);
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    span_t first[] = {{0, src.blk[0]}, {src.blk[5], src.len}, {src.blk[0], src.blk[5]}};
    salv_splice(&src, "endfirst.hst", first, 3);
    salvage("endfirst.hst", &res);
    assert_true(res.end_misplaced);
    assert_int_equal(res.dup_end_blocks, 0);
    assert_int_equal(res.damaged_regions, 1);
    assert_int_equal(res.first_bad_offset, src.blk[0]);
    assert_non_null(strstr(res.first_bad_why, "end block"));
    assert_non_null(strstr(res.first_bad_why, "out of place"));
    assert_true(res.end_ok);
    assert_int_equal(res.lost_blocks, 0);
    assert_int_equal(res.reordered_blocks + res.unordered_blocks, 0);
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    span_t last[] = {{0, src.blk[4]}, {src.blk[5], src.len}, {src.blk[4], src.blk[5]}};
    salv_splice(&src, "endlast.hst", last, 3);
    salvage("endlast.hst", &res);
    assert_true(res.end_misplaced);
    assert_int_equal(res.damaged_regions, 1);
    assert_int_equal(res.first_bad_offset, src.blk[4]);
    assert_true(res.end_ok);
    trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    salv_src_free(&src);
}

/* A record block cut out of the file is a sequence gap: damage naming the missing seqs. */
static void test_salvage_missing_block(void **state)
{
    static const int no2[] = {0, 1, 3, 4}, no12[] = {0, 3, 4}, no4[] = {0, 1, 2, 3};
    salv_src_t src;
    trace_salvage_t res;
    (void)state;
    salv_src(&src);
    span_t gap[] = {{0, src.blk[2]}, {src.blk[3], src.len}};
    salv_splice(&src, "gap.hst", gap, 2);
    salvage("gap.hst", &res);
    assert_true(res.end_ok);
    assert_int_equal(res.lost_blocks, 1);
    assert_int_equal(res.lost_records, 4096);
    assert_int_equal(res.damaged_regions, 1); /* not "no damage found" */
    assert_int_equal(res.first_bad_offset, src.blk[2]);
    assert_non_null(strstr(res.first_bad_why, "block seq 2 missing"));
    trace_free(assert_salvaged_blocks(&src, no2, 4, 7 + 4096));
    span_t gap2[] = {{0, src.blk[1]}, {src.blk[3], src.len}};
    salv_splice(&src, "gap2.hst", gap2, 2);
    salvage("gap2.hst", &res);
    assert_int_equal(res.damaged_regions, 1);
    assert_non_null(strstr(res.first_bad_why, "seq 1 to 2 missing"));
    trace_free(assert_salvaged_blocks(&src, no12, 3, 7 + 8192));
    span_t tail[] = {{0, src.blk[4]}, {src.blk[5], src.len}}; /* the last one */
    salv_splice(&src, "gaptail.hst", tail, 2);
    salvage("gaptail.hst", &res);
    assert_int_equal(res.damaged_regions, 1);
    assert_int_equal(res.first_bad_offset, src.blk[4]);
    assert_non_null(strstr(res.first_bad_why, "block seq 4 missing"));
    trace_free(assert_salvaged_blocks(&src, no4, 4, 7 + 3616));
    salv_src_free(&src);
}

/* A damaged copy of a block before its intact copy: damage, but no order is broken. */
static void test_salvage_damaged_copy_first(void **state)
{
    static const int all[] = {0, 1, 2, 3, 4};
    salv_src_t src;
    trace_salvage_t res;
    uint8_t *d;
    (void)state;
    salv_src(&src);
    for (int k = 0; k < 3; k += 2) { /* block 0, then block 2 */
        size_t at = src.blk[k], blen = src.blk[k + 1] - at;
        d = malloc(src.len + blen);
        assert_non_null(d);
        memcpy(d, src.d, at);
        memcpy(d + at, src.d + at, blen);
        d[at + 100] ^= 0xff; /* payload: its header holds */
        memcpy(d + at + blen, src.d + at, src.len - at);
        put_bytes(tmp("dmgdup.hst"), d, src.len + blen);
        free(d);
        salvage("dmgdup.hst", &res);
        assert_int_equal(res.reordered_blocks, 0);
        assert_int_equal(res.unordered_blocks, 0);
        assert_int_equal(res.dup_blocks, 0);
        assert_int_equal(res.damaged_regions, 1);
        assert_int_equal(res.first_bad_offset, at);
        assert_true(res.end_ok);
        assert_int_equal(res.lost_records, 0);
        trace_free(assert_salvaged_blocks(&src, all, 5, 7));
    }
    salv_src_free(&src);
}

/* A file cut inside the JSON header says so (not "length out of range"). */
static void test_salvage_cut_json(void **state)
{
    salv_src_t src;
    trace_salvage_t res;
    (void)state;
    salv_src(&src);
    span_t cut[] = {{0, 300}};
    salv_splice(&src, "cutjson.hst", cut, 1);
    assert_int_equal(trace_salvage(tmp("cutjson.hst"), tmp("s.hst"), &res), HS_ERR_INVALID);
    assert_false(res.header_ok);
    assert_non_null(strstr(res.first_bad_why, "truncated"));
    assert_null(strstr(res.first_bad_why, "out of range"));
    salv_src_free(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_crc32_paths),
        cmocka_unit_test(test_hst_roundtrip_streaming),
        cmocka_unit_test(test_header_u64_past_2p53),
        cmocka_unit_test(test_pipe_stream_rewind),
        cmocka_unit_test(test_big_traces_on_huge_pages),
        cmocka_unit_test(test_hst_empty_and_abort),
        cmocka_unit_test(test_text_roundtrips),
        cmocka_unit_test(test_text_minimal_and_errors),
        cmocka_unit_test(test_header_json_errors),
        cmocka_unit_test(test_rec_check),
        cmocka_unit_test(test_perftest_import),
        cmocka_unit_test(test_gen_determinism),
        cmocka_unit_test(test_gen_workloads),
        cmocka_unit_test(test_gen_max_load),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_salvage_duplicate_block),
        cmocka_unit_test(test_salvage_out_of_order),
        cmocka_unit_test(test_salvage_far_out_of_order),
        cmocka_unit_test(test_salvage_known_lost),
        cmocka_unit_test(test_salvage_provenance),
        cmocka_unit_test(test_salvage_end_block_misplaced),
        cmocka_unit_test(test_salvage_missing_block),
        cmocka_unit_test(test_salvage_damaged_copy_first),
        cmocka_unit_test(test_salvage_cut_json),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
