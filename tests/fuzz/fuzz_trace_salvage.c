/* fuzz_trace_salvage.c - libFuzzer target for trace salvage: arbitrary bytes as the damaged
 * file (through a file in /dev/shm or $TMPDIR: salvage maps its input), salvaged into a
 * scratch output, which must then read back whole: salvage never writes what the reader
 * refuses. Built and run as tests/trace.cmake says (label fuzz). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hs_status.h"
#include "traces/trace.h"
#include "traces/trace_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_in[256], g_out[256];

static void paths_remove(void)
{
    unlink(g_in);
    unlink(g_out);
}

static void paths_init(void)
{
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

    if (g_in[0])
        return;
    snprintf(g_in, sizeof(g_in), "%s/hs-fuzz-salv-%ld.in", dir ? dir : "/tmp", (long)getpid());
    snprintf(g_out, sizeof(g_out), "%s/hs-fuzz-salv-%ld.hst", dir ? dir : "/tmp",
             (long)getpid());
    atexit(paths_remove);
    hs_log_set_quiet(1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trace_salvage_t res;
    trace_t *tr = NULL;
    FILE *fp;

    paths_init();
    if (!(fp = fopen(g_in, "wb")))
        return 0;
    if (fwrite(data, 1, size, fp) != size) {
        fclose(fp);
        return 0;
    }
    fclose(fp);
    if (trace_salvage(g_in, g_out, &res) == HS_OK) {
        if (trace_load(g_out, &tr) != HS_OK) /* what salvage writes must read back */
            abort();
        if (tr->n != res.kept_records)
            abort();
        trace_free(tr);
        unlink(g_out);
    }
    unlink(g_in);
    return 0;
}
