/* cli.h - the hintsim command line: one entry point per subcommand.
 *
 * Each cmd_*.c file implements one subcommand (or a group such as `trace`) on top of the
 * library and returns the process exit code (CLI.md: 0 ok, 1 bad input/failed check,
 * 2 usage, 3 environment). main.c only dispatches. Groups use hs_cli_dispatch.
 */
#ifndef HS_CLI_H
#define HS_CLI_H

#include "common/hs_opt.h"
#include "common/hs_status.h"

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv); /* argv[0] is the subcommand name */
    const char *summary;
} hs_cli_cmd_t;

/* Dispatch argv[1] among cmds (NULL-name terminated); prints the group's help for
 * "--help", no argument (exit 2) or an unknown name (exit 2). prefix is e.g. "hintsim trace". */
int hs_cli_dispatch(const char *prefix, const hs_cli_cmd_t *cmds, int argc, char **argv);

/* Run hs_opt_parse and turn its result into an exit code: returns -1 to continue,
 * otherwise the code to exit with (0 after --help, 2 on usage error), having released
 * what was parsed (*pos is then NULL). */
int hs_cli_parse(const hs_cmd_spec_t *spec, int argc, char **argv, void *dst, char ***pos,
                 int *npos);

int cmd_trace(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
/* `capture run` (LD_PRELOAD interposer) and `trace audit`, registered by their groups. */
int cmd_capture_run(int argc, char **argv);
int cmd_trace_audit(int argc, char **argv);

#endif
