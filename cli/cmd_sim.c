/* cmd_sim.c - `hintsim sim`: the predict command (cli_predict.c) with the SimGrid engine
 * (sim/), which also runs several flows into one receiver (--flows N). */
#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "sim/sim.h"

int cmd_sim(int argc, char **argv)
{
    return cli_predict_main(&sim_engine_ops, argc, argv);
}
