/* cmd_trace.c - `hintsim trace`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_trace(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'trace' is not implemented in this build yet\n");
    return 3;
}
