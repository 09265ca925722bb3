/* cli_live.c - see cli_live.h. */
#include "cli/cli_live.h"

cap_live_opts_t cli_live_opts(const cli_live_args_t *a)
{
    return (cap_live_opts_t){.device = a->device,
                             .gid_index = a->gid_index,
                             .server = a->server,
                             .connect = a->connect,
                             .port = a->port,
                             .timeout_s = a->timeout_s,
                             .mem = a->mem ? a->mem : "host",
                             .profile = a->profile,
                             .sets = &a->set,
                             .bind = a->bind,
                             .token = a->token};
}
