/* cmd_recommend.c - `hintsim recommend`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_recommend(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'recommend' is not implemented in this build yet\n");
    return 3;
}
