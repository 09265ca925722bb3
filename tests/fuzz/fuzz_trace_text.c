/* fuzz_trace_text.c - libFuzzer target for the text imports: CSV, JSON Lines and perftest
 * -U output (the first byte picks one), and for what convert does with what they read:
 * unless trace_count_insane refuses it, the trace written as CSV and as JSON Lines must
 * read back with the same records (a converter must not write what it cannot read). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_status.h"
#include "traces/trace.h"
#include "traces/trace_convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef hs_status_t (*text_read_t)(FILE *, const char *, trace_t **);
typedef hs_status_t (*text_write_t)(FILE *, const trace_t *);

/* tr written by wr and read back by rd: the same records, or abort. */
static void round_trip(const trace_t *tr, text_write_t wr, text_read_t rd)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    trace_t *back = NULL;

    if (!fp)
        return;
    if (wr(fp, tr) != HS_OK) {
        fclose(fp);
        free(buf);
        return;
    }
    fclose(fp);
    fp = fmemopen(buf, len, "rb");
    if (fp && rd(fp, "fuzz-back", &back) != HS_OK)
        abort();
    if (fp && (back->n != tr->n ||
               (tr->n && memcmp(back->recs, tr->recs, tr->n * sizeof(*tr->recs)) != 0)))
        abort();
    trace_free(back);
    if (fp)
        fclose(fp);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const text_read_t readers[] = {trace_csv_read, trace_jsonl_read,
                                          trace_perftest_read};
    trace_t *tr = NULL;
    size_t first = 0;
    char why[200];
    FILE *fp;

    hs_log_set_quiet(1);
    if (size < 1 || size > 65536)
        return 0;
    if (!(fp = fmemopen((void *)(data + 1), size - 1 ? size - 1 : 1, "rb")))
        return 0;
    if (size > 1 && readers[data[0] % 3](fp, "fuzz", &tr) == HS_OK) {
        if (trace_count_insane(tr, &first, why, sizeof(why)) == 0) {
            round_trip(tr, trace_csv_write, trace_csv_read);
            round_trip(tr, trace_jsonl_write, trace_jsonl_read);
        }
        trace_free(tr);
    }
    fclose(fp);
    return 0;
}
