/* cmd_capture.c - `hintsim capture`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_capture(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'capture' is not implemented in this build yet\n");
    return 3;
}
