/* main.c - `hintsim SUBCOMMAND ...`: a thin dispatcher over the cmd_* entry points. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/hs_opt.h"
#include "sweep/sweep_eval_model.h"

struct version_opts {
    int json;
};

static const hs_opt_t g_version_opts[] = {
    {"json", 0, HS_OPT_FLAG, offsetof(struct version_opts, json), NULL, NULL,
     "as JSON: {\"version\": \"X.Y.Z\", \"evaluator_source\": \"<16 hex digits>\"}"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_version_spec = {"hintsim version [--json]", "print the version",
                                             g_version_opts, 0, 0, NULL};

static int cmd_version(int argc, char **argv)
{
    struct version_opts o = {0};
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_version_spec, argc, argv, &o, &pos, &npos);

    if (rc < 0) {
        if (o.json)
            printf("{\"version\": \"%s\", \"evaluator_source\": \"%s\"}\n", HINTSIM_VERSION,
                   sweep_eval_source());
        else
            printf("hintsim %s (evaluators' source %s)\n", HINTSIM_VERSION, sweep_eval_source());
        rc = 0;
    }
    hs_opt_free(&g_version_spec, &o, pos);
    return rc;
}

static const hs_cli_cmd_t g_commands[] = {
    {"trace", cmd_trace, "inspect, validate, salvage, convert and generate traces"},
    {"profile", cmd_profile, "list and show model profiles"},
    {"model", cmd_model, "predict latency/throughput per hint with the analytical model"},
    {"sim", cmd_sim, "predict per hint with the SimGrid discrete-event simulator"},
    {"recommend", cmd_recommend, "recommend a hint for a trace, with every alternative's cost"},
    {"capture", cmd_capture, "record traces on a live verbs device (bench, or any app via LD_PRELOAD)"},
    {"validate", cmd_validate, "replay a trace on a live device per hint; predicted vs measured"},
    {"calibrate", cmd_calibrate, "fit a profile from measurements on a live device"},
    {"sweep", cmd_sweep, "what-if grid over traces, profiles and parameters"},
    {"doctor", cmd_doctor, "what this machine has: devices, CUDA, SimGrid, gnuplot, qemu"},
    {"version", cmd_version, "print the version"},
    {NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("hintsim %s\n", HINTSIM_VERSION);
        return 0;
    }
    return hs_cli_dispatch("hintsim", g_commands, argc, argv);
}
