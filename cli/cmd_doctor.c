/* cmd_doctor.c - `hintsim doctor`: placeholder until its module lands (exits 3, says so). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_doctor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hintsim: 'doctor' is not implemented in this build yet\n");
    return 3;
}
