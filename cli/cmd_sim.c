/* cmd_sim.c - `hintsim sim`: the predict command with the SimGrid engine (sim/). */
#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "sim/sim.h"

int cmd_sim(int argc, char **argv)
{
    return cli_predict_main(&sim_engine_ops, 1, argc, argv);
}
