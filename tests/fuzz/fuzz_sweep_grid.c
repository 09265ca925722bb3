/* fuzz_sweep_grid.c - libFuzzer target for sweep grid files (sweep/GRID.md): arbitrary
 * bytes as a grid (through a scratch file: the loader resolves trace paths beside it),
 * and a grid it accepts expanded into its points. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hs_status.h"
#include "sweep/sweep_grid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_dir[256], g_grid[300];

static void dir_remove(void)
{
    char path[320];

    snprintf(path, sizeof(path), "%s/t.hst", g_dir);
    unlink(path);
    unlink(g_grid);
    rmdir(g_dir);
}

/* A scratch folder with a trace file t.hst the grid may name (its content is not read),
 * removed at exit. */
static void dir_init(void)
{
    char path[320];
    FILE *fp;

    if (g_dir[0])
        return;
    snprintf(g_dir, sizeof(g_dir), "%s/hs-fuzz-grid-%ld",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
    (void)mkdir(g_dir, 0700);
    snprintf(path, sizeof(path), "%s/t.hst", g_dir);
    if ((fp = fopen(path, "wb")))
        fclose(fp);
    snprintf(g_grid, sizeof(g_grid), "%s/grid.json", g_dir);
    atexit(dir_remove);
    hs_log_set_quiet(1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sweep_grid_t *g = NULL;
    sweep_plan_t *plan = NULL;
    FILE *fp;

    dir_init();
    if (size > 65536 || !(fp = fopen(g_grid, "wb")))
        return 0;
    if (fwrite(data, 1, size, fp) != size) {
        fclose(fp);
        return 0;
    }
    fclose(fp);
    if (sweep_grid_load(g_grid, NULL, &g) == HS_OK) {
        if (sweep_plan_build(g, &plan) == HS_OK)
            sweep_plan_free(plan);
        sweep_grid_free(g);
    }
    return 0;
}
