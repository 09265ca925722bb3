/* cmd_validate.c - `hintsim validate`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_validate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'validate' is not implemented in this build yet\n");
    return 3;
}
