/* bench_sweep.c - sweep throughput: points per second with 1 and 2 MPI ranks (goal: >= 1.8x
 * with 2), and with 1 and 2 local workers for comparison.
 *
 * usage: bench_sweep HINTSIM_BIN SOURCE_DIR [REPEATS]
 * Runs `hintsim sweep --json` on a fixed grid (4 sample traces x 6 x 4 x 2 parameter values,
 * hint "auto" = 192 points over the model, each a full recommendation: about 15 candidate
 * hints replayed) into a fresh directory each time, and reports the median of REPEATS
 * (default 5) for the evaluation phase (run_s: after MPI start-up and the barrier, until the
 * last rank is done) and for the whole command (wall, with mpirun).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_host.h"
#include "common/hs_util.h"

#define K_GRID \
    "{\"traces\": [\"%s/traces/samples/kv.hst\", \"%s/traces/samples/allreduce.hst\",\n" \
    "            \"%s/traces/samples/burst.hst\", \"%s/traces/samples/phased.hst\"],\n" \
    " \"profiles\": [\"generic\"],\n" \
    " \"vary\": {\"ll.depth\": [8, 16, 32, 64, 128, 256], \"bw.depth\": [64, 128, 256, 512],\n" \
    "          \"link.gbps\": [25, 100]},\n" \
    " \"hints\": [\"auto\"], \"objective\": \"p99\"}\n"

typedef struct {
    const char *name;
    const char *launcher; /* prefix before the binary, "" for none */
    const char *extra;    /* options after the grid */
} bench_cfg_t;

/* Run one sweep; fills run_s and wall_s. Returns 0 on success. */
static int run_once(const char *bin, const char *dir, const char *grid, const bench_cfg_t *c,
                    int rep, double *run_s, double *wall_s, size_t *points)
{
    char cmd[8192], buf[16384];
    const char *p;
    FILE *fp;
    size_t n;
    uint64_t t0 = hs_now_ns();

    snprintf(cmd, sizeof(cmd), "%s '%s' sweep --grid '%s' -o '%s/%s-%d' %s --json --no-plots "
             "--quiet 2>&1", c->launcher, bin, grid, dir, c->name, rep, c->extra);
    if (!(fp = popen(cmd, "r")))
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    buf[n] = '\0';
    if (pclose(fp) != 0 || !(p = strstr(buf, "\"run_s\": "))) {
        fprintf(stderr, "bench_sweep: '%s' failed:\n%s\n", cmd, buf);
        return -1;
    }
    *wall_s = (double)(hs_now_ns() - t0) / 1e9;
    *run_s = strtod(p + 9, NULL);
    p = strstr(buf, "\"computed\": ");
    *points = p ? strtoul(p + 12, NULL, 10) : 0;
    return 0;
}

int main(int argc, char **argv)
{
    static const bench_cfg_t cfgs[] = {
        {"mpi1", "ASAN_OPTIONS=detect_leaks=0 mpirun -n 1 --allow-run-as-root", "--mpi"},
        {"mpi2", "ASAN_OPTIONS=detect_leaks=0 mpirun -n 2 --oversubscribe --allow-run-as-root",
         "--mpi"},
        {"jobs1", "", "--jobs 1"},
        {"jobs2", "", "--jobs 2"},
    };
    char dir[] = "/tmp/hintsim-bench-sweep-XXXXXX", grid[256], text[4096], cmd[300];
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    double med_run[4], med_wall[4], runs[64], walls[64];
    size_t points = 0;

    hs_host_print(stdout);
    if (argc < 3 || reps < 1 || reps > 64 || !mkdtemp(dir)) {
        fprintf(stderr, "usage: bench_sweep HINTSIM_BIN SOURCE_DIR [REPEATS]\n");
        return 2;
    }
    snprintf(grid, sizeof(grid), "%s/grid.json", dir);
    snprintf(text, sizeof(text), K_GRID, argv[2], argv[2], argv[2], argv[2]);
    if (hs_write_file_atomic(grid, text) != HS_OK)
        return 1;
    for (int c = 0; c < 4; c++) {
        for (int r = 0; r < reps; r++)
            if (run_once(argv[1], dir, grid, &cfgs[c], r, &runs[r], &walls[r], &points) != 0)
                return 1;
        med_run[c] = hs_median_double(runs, (size_t)reps);
        med_wall[c] = hs_median_double(walls, (size_t)reps);
    }
    printf("sweep: %zu points (model, 4 sample traces, hint auto), median of %d\n", points, reps);
    printf("%-6s %10s %12s %10s %12s\n", "engine", "run_s", "points/s", "wall_s", "speedup");
    for (int c = 0; c < 4; c++)
        printf("%-6s %10.3f %12.1f %10.3f %11.2fx\n", cfgs[c].name, med_run[c],
               (double)points / med_run[c], med_wall[c],
               med_run[c & ~1] / med_run[c]);
    printf("goal: 2 ranks >= 1.8x 1 rank: %.2fx (%s)\n", med_run[0] / med_run[1],
           med_run[0] / med_run[1] >= 1.8 ? "met" : "NOT met");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
