/* cmd_sim.c - `hintsim sim`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_sim(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'sim' is not implemented in this build yet\n");
    return 3;
}
