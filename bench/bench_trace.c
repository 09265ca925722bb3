/* bench_trace.c - .hst write and read throughput on a large trace (default 10 M records),
 * next to this machine's memcpy bandwidth measured in the same run.
 *
 *   bench_trace [RECORDS] [DIR]
 *
 * The file goes to DIR (default $TMPDIR, else /dev/shm when it exists, else /tmp) so that
 * with tmpfs the figures measure the format's CPU cost rather than the disk. Write time
 * includes the fsync and rename of trace_writer_close. Reads are streaming (constant memory):
 * once record by record (trace_reader_next) and once block by block (next_block). Goal
 * (issue 2): reading >= 30 M records/s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hs_host.h"
#include "common/hs_mem.h"
#include "common/hs_util.h"
#include "traces/trace.h"

typedef struct {
    double secs;
    uint64_t records, checksum;
} run_t;

static double memcpy_gbs(size_t bytes)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    double best = 0;

    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    for (int rep = 0; rep < 5; rep++) {
        uint64_t t0 = hs_now_ns();
        memcpy(b, a, bytes);
        double s = (double)(hs_now_ns() - t0) / 1e9;
        a[rep] = b[bytes - 1 - (size_t)rep]; /* keep the copies observable */
        if (s > 0 && bytes / s / 1e9 > best)
            best = (double)bytes / s / 1e9;
    }
    free(a);
    free(b);
    return best;
}

static int bench_write(const char *path, uint64_t n, run_t *out)
{
    trace_hdr_t h;
    trace_writer_t *w;
    trace_rec_t r = {.opcode = TRACE_OP_WRITE, .flags = TRACE_F_SIGNALED};
    uint64_t t0 = hs_now_ns();

    trace_hdr_init(&h);
    if (trace_writer_open(path, &h, &w) != HS_OK)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        r.t_post_ns = i * 100;
        r.t_done_ns = r.t_post_ns + 2500 + (i & 1023);
        r.size_bytes = 8ULL << (i & 15);
        r.qp = (uint32_t)(i & 3);
        if (trace_writer_append(w, &r) != HS_OK) {
            trace_writer_abort(w);
            return -1;
        }
    }
    if (trace_writer_close(w) != HS_OK)
        return -1;
    out->secs = (double)(hs_now_ns() - t0) / 1e9;
    out->records = n;
    return 0;
}

static int bench_read(const char *path, int by_block, run_t *out)
{
    trace_reader_t *r;
    trace_rec_t rec;
    const trace_rec_t *recs;
    size_t n;
    int eof = 0;
    uint64_t t0 = hs_now_ns(), sum = 0, count = 0;
    hs_status_t st;

    if (trace_reader_open(path, &r) != HS_OK)
        return -1;
    if (by_block) {
        while ((st = trace_reader_next_block(r, &recs, &n, &eof)) == HS_OK && !eof) {
            for (size_t i = 0; i < n; i++)
                sum += recs[i].size_bytes;
            count += n;
        }
    } else {
        while ((st = trace_reader_next(r, &rec, &eof)) == HS_OK && !eof) {
            sum += rec.size_bytes;
            count++;
        }
    }
    trace_reader_close(r);
    if (st != HS_OK)
        return -1;
    out->secs = (double)(hs_now_ns() - t0) / 1e9;
    out->records = count;
    out->checksum = sum;
    return 0;
}

/* trace_load of the whole file, then one pass over its records (what `hintsim model`
 * does before replaying). */
static int bench_load(const char *path, run_t *out)
{
    trace_t *tr = NULL;
    uint64_t t0 = hs_now_ns(), sum = 0;

    if (trace_load(path, &tr) != HS_OK)
        return -1;
    for (size_t i = 0; i < tr->n; i++)
        sum += tr->recs[i].size_bytes;
    out->secs = (double)(hs_now_ns() - t0) / 1e9;
    out->records = tr->n;
    out->checksum = sum;
    trace_free(tr);
    return 0;
}

/* Seconds to allocate bytes and write one byte per 4 KiB page of it (the first touch
 * that a freshly loaded trace or a replay's output array pays): the first of 3 in *first,
 * the best returned; huge: through hs_alloc_big, else malloc. */
static double touch_secs(size_t bytes, int huge, double *first)
{
    double best = 0;

    for (int rep = 0; rep < 3; rep++) {
        uint64_t t0 = hs_now_ns();
        volatile char *a = huge ? hs_alloc_big(bytes) : malloc(bytes);
        if (!a)
            return 0;
        for (size_t i = 0; i < bytes; i += 4096)
            a[i] = (char)i;
        double secs = (double)(hs_now_ns() - t0) / 1e9;
        free((void *)a);
        if (rep == 0)
            *first = secs;
        best = rep == 0 || secs < best ? secs : best;
    }
    return best;
}

static void row(const char *what, const run_t *r, double mc)
{
    double rps = (double)r->records / r->secs, gbs = rps * 32 / 1e9;
    printf("%-26s %10.3f s %12.1f M rec/s %8.2f GB/s %8.3f x memcpy\n", what, r->secs, rps / 1e6,
           gbs, gbs / mc);
}

static const char *pick_dir(const char *arg)
{
    const char *t = getenv("TMPDIR");
    if (arg)
        return arg;
    if (t && *t)
        return t;
    return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ULL;
    char path[4096];
    run_t w = {0}, rr = {0}, rb = {0}, rl = {0};
    double mc;
    int rc = 1;

    hs_host_print(stdout);
    snprintf(path, sizeof(path), "%s/bench_trace.%ld.hst", pick_dir(argc > 2 ? argv[2] : NULL),
             (long)getpid());
    mc = memcpy_gbs((size_t)n * 32 > (256u << 20) ? (256u << 20) : (size_t)n * 32 + 4096);
    printf("bench_trace: %llu records (%.1f MB of records) in %s\n", (unsigned long long)n,
           (double)n * 32 / 1e6, path);
    printf("memcpy bandwidth (same run, best of 5): %.2f GB/s\n", mc);
    if (bench_write(path, n, &w) || bench_read(path, 0, &rr) || bench_read(path, 1, &rb) ||
        bench_load(path, &rl) || rr.records != n || rb.records != n || rl.records != n ||
        rr.checksum != rb.checksum || rl.checksum != rb.checksum) {
        fprintf(stderr, "bench_trace: failed (see the error above)\n");
        goto out;
    }
    row("write (append, close)", &w, mc);
    row("read (next, per record)", &rr, mc);
    row("read (next_block)", &rb, mc);
    row("load (trace_load + 1 pass)", &rl, mc);
    double f_small, f_huge, t_small = touch_secs((size_t)n * 32, 0, &f_small);
    double t_huge = touch_secs((size_t)n * 32, 1, &f_huge);
    printf("first touch of %.1f MB, malloc: %.3f s (first of 3 %.3f); hs_alloc_big: %.3f s "
           "(first %.3f): %.1fx (huge pages where the kernel grants them: common/hs_mem.h)\n",
           (double)n * 32 / 1e6, t_small, f_small, t_huge, f_huge,
           t_huge > 0 ? t_small / t_huge : 0);
    printf("goal: read >= 30 M records/s: %s (per record %.1f, per block %.1f)\n",
           rr.records / rr.secs >= 30e6 ? "met" : "NOT met", rr.records / rr.secs / 1e6,
           rb.records / rb.secs / 1e6);
    rc = 0;
out:
    unlink(path);
    return rc;
}
