/* cli.c - subcommand dispatch and option-parsing glue shared by the cmd_* files. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void group_help(const char *prefix, const hs_cli_cmd_t *cmds, FILE *fp)
{
    fprintf(fp, "usage: %s COMMAND [ARGS...]\n\ncommands:\n", prefix);
    for (const hs_cli_cmd_t *c = cmds; c->name; c++)
        fprintf(fp, "  %-12s %s\n", c->name, c->summary);
    fprintf(fp, "\nRun '%s COMMAND --help' for a command's options.\n", prefix);
}

int hs_cli_dispatch(const char *prefix, const hs_cli_cmd_t *cmds, int argc, char **argv)
{
    if (argc < 2) {
        group_help(prefix, cmds, stderr);
        return 2;
    }
    if (strcmp(argv[1], "help") == 0 && argc > 2 && argc < 8) {
        /* "help CMD [SUB]" is "CMD [SUB] --help" */
        char *sub[8] = {argv[0]};
        for (int i = 2; i < argc; i++)
            sub[i - 1] = argv[i];
        sub[argc - 1] = "--help";
        return hs_cli_dispatch(prefix, cmds, argc, sub);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        group_help(prefix, cmds, stdout);
        return 0;
    }
    for (const hs_cli_cmd_t *c = cmds; c->name; c++)
        if (strcmp(c->name, argv[1]) == 0)
            return c->fn(argc - 1, argv + 1);
    fprintf(stderr, "hintsim: '%s' is not a command of '%s'\n", argv[1], prefix);
    group_help(prefix, cmds, stderr);
    return 2;
}

/* -p was --port in validate, calibrate and capture bench; it is --profile in every command
 * now and the port is -P. "-p 18515" (digits, no such file) in a command that has a --port
 * is the old use: say so (exit 2) rather than look for a profile named 18515. */
static int old_port_letter(const hs_cmd_spec_t *spec, int argc, char **argv)
{
    int has_port = 0;

    for (const hs_opt_t *o = spec->opts; o && o->name; o++)
        has_port |= strcmp(o->name, "port") == 0;
    for (int i = 1; has_port && i + 1 < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v = argv[i + 1];
        if (strcmp(argv[i], "-p") != 0 || v[0] == '\0' || strspn(v, "0123456789") != strlen(v) ||
            access(v, F_OK) == 0)
            continue;
        fprintf(stderr, "hintsim: -p %s: -p is --profile (in every command); the TCP port is "
                "-P N or --port N\nusage: %s\n", v, spec->usage);
        return 1;
    }
    return 0;
}

int hs_cli_parse(const hs_cmd_spec_t *spec, int argc, char **argv, void *dst, char ***pos,
                 int *npos)
{
    int rc;

    *pos = NULL;
    if (old_port_letter(spec, argc, argv))
        return 2;
    rc = hs_opt_parse(spec, argc, argv, dst, pos, npos);

    if (rc == 0)
        return -1;
    /* --help or a usage error: the command returns at once, so nothing parsed is kept */
    hs_opt_free(spec, dst, *pos);
    *pos = NULL;
    if (rc == 1)
        return 0;
    return hs_status_exit_code((hs_status_t)rc);
}
