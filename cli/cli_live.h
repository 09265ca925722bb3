/* cli_live.h - the options of a live verbs connection, shared by the commands that open one
 * (`capture bench`, `validate`, `calibrate`): the struct each command's options embed as
 * .live, the entries of its option table, and the library's cap_live_opts_t made from it.
 */
#ifndef HS_CLI_LIVE_H
#define HS_CLI_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_live.h"
#include "common/hs_opt.h"

typedef struct {
    const char *device;
    uint64_t gid_index;
    int server;
    const char *connect;
    uint64_t port;
    const char *bind;
    const char *token;
    double timeout_s;
    const char *mem;      /* NULL: "host" (calibrate has no --mem) */
    const char *profile;
    hs_strlist_t set;
} cli_live_args_t;

/* The connection's entries of option table T (a struct with a cli_live_args_t live):
 * --device, --gid-index, --server, --connect, --port, --bind, --token, in that order (each
 * command's --help lists them first); server_help and connect_help say what each end does.
 * The command's table names --timeout (CLI_LIVE_TIMEOUT_OPT), --profile, --set and --mem
 * itself, where its help wants them (offsetof(T, live.profile) and so on). */
#define CLI_LIVE_CONN_OPTS(T, server_help, connect_help)                                    \
    {"device", 'd', HS_OPT_STR, offsetof(T, live.device), "DEV", NULL,                       \
     "verbs device (ibv_devices lists them)"},                                               \
        {"gid-index", 'x', HS_OPT_U64, offsetof(T, live.gid_index), "N", "0",                \
         "GID index of port 1 (RoCE)"},                                                      \
        {"server", 0, HS_OPT_FLAG, offsetof(T, live.server), NULL, NULL, server_help},       \
        {"connect", 0, HS_OPT_STR, offsetof(T, live.connect), "HOST", NULL, connect_help},   \
        {"port", 'P', HS_OPT_U64, offsetof(T, live.port), "N", "18515",                      \
         "TCP port of the QP exchange"},                                                     \
        {"bind", 0, HS_OPT_STR, offsetof(T, live.bind), "ADDR", NULL,                        \
         "--server: address to listen on (default: the device's; 0.0.0.0: all)"},           \
        {"token", 0, HS_OPT_STR, offsetof(T, live.token), "TOKEN", NULL,                     \
         "--server/--connect: shared token (default: HINTSIM_TOKEN; a server makes one)"}

#define CLI_LIVE_TIMEOUT_OPT(T)                                                              \
    {"timeout", 0, HS_OPT_DOUBLE, offsetof(T, live.timeout_s), "SEC", "10",                  \
     "bound of every wait"}

/* The library's options of a (its pointers into a: a outlives them). */
cap_live_opts_t cli_live_opts(const cli_live_args_t *a);

#endif
