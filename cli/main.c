/* main.c - `hintsim SUBCOMMAND ...`: a thin dispatcher over the cmd_* entry points. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("hintsim %s\n", HINTSIM_VERSION);
    return 0;
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
    if (argc >= 2 && strcmp(argv[1], "--version") == 0)
        return cmd_version(argc, argv);
    return hs_cli_dispatch("hintsim", g_commands, argc, argv);
}
