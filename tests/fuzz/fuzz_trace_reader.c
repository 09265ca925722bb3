/* fuzz_trace_reader.c - libFuzzer target for everything that parses untrusted trace
 * bytes: the .hst reader (file header, JSON header, blocks, end block), the block
 * checks used by salvage, format sniffing, and the CSV, JSON Lines and perftest parsers.
 * Built with clang -fsanitize=fuzzer,address,undefined (tests/trace.cmake); a short run
 * over the seed corpus in tests/fuzz/corpus is part of the test suite (label fuzz). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/hs_status.h"
#include "traces/trace.h"
#include "traces/trace_convert.h"
#include "traces/trace_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_reader(const uint8_t *data, size_t size)
{
    FILE *fp = fmemopen((void *)data, size, "rb");
    trace_reader_t *r;
    const trace_rec_t *recs;
    size_t n;
    int eof = 0;
    uint64_t sum = 0;

    if (!fp || trace_reader_open_stream(fp, "fuzz", &r) != HS_OK)
        return;
    while (trace_reader_next_block(r, &recs, &n, &eof) == HS_OK && !eof)
        for (size_t i = 0; i < n; i++)
            sum += recs[i].size_bytes;
    (void)sum;
    trace_reader_close(r);
}

static void fuzz_blocks(const uint8_t *data, size_t size)
{
    char why[512];
    trace_blk_t h;

    for (size_t off = 0; off + TRACE_BLK_HDR_BYTES <= size; off += 8) {
        if (trace_blk_check_head(data + off, &h, why, sizeof(why)) != 0)
            continue;
        if (h.total_len <= size - off)
            (void)trace_blk_check_body(&h, data + off + TRACE_BLK_HDR_BYTES, why, sizeof(why));
    }
}

static void fuzz_text(const uint8_t *data, size_t size)
{
    hs_status_t (*parsers[])(FILE *, const char *, trace_t **) = {
        trace_csv_read, trace_jsonl_read, trace_perftest_read};
    trace_t *tr;

    (void)trace_fmt_sniff((const char *)data, size);
    for (size_t i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++) {
        FILE *fp = fmemopen((void *)data, size, "rb");
        if (!fp)
            return;
        if (parsers[i](fp, "fuzz", &tr) == HS_OK)
            trace_free(tr);
        fclose(fp);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    fuzz_reader(data, size);
    fuzz_blocks(data, size);
    if (size < 65536)
        fuzz_text(data, size);
    return 0;
}
