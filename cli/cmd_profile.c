/* cmd_profile.c - `hintsim profile`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_profile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'profile' is not implemented in this build yet\n");
    return 3;
}
