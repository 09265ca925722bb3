/* cmd_calibrate.c - `hintsim calibrate`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_calibrate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'calibrate' is not implemented in this build yet\n");
    return 3;
}
