/* cmd_model.c - `hintsim model`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_model(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'model' is not implemented in this build yet\n");
    return 3;
}
