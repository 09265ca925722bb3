/* cmd_sweep.c - `hintsim sweep`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_sweep(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'sweep' is not implemented in this build yet\n");
    return 3;
}
