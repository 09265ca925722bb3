/* sim_platform.h - the SimGrid platform a replay runs on.
 *
 * Generated from the profile: hosts "sender0".."sender<N-1>" and "receiver"; each sender has
 * its own link "up<i>" (link.gbps, latency 2 x link.base_lat_ns: data out and ack back, as
 * MODEL.md) into one shared switch egress
 * port "port" (link.gbps, latency 0) in front of the receiver. A user's platform file
 * (--platform) must declare hosts with those names and routes between them; the route's
 * latency and bandwidth then replace the profile's link.* values.
 */
#ifndef HS_SIM_PLATFORM_H
#define HS_SIM_PLATFORM_H

#include <stddef.h>

#include "common/hs_status.h"
#include "sim/sim_policy.h"

/* Name of sender i ("sender<i>") into buf. */
void sim_platform_sender_name(unsigned i, char *buf, size_t len);
#define SIM_RECEIVER_HOST "receiver"
#define SIM_PORT_LINK "port"

/* Write the generated platform XML for nflows senders to a new temporary file; *path_out
 * is malloc'ed (caller unlinks and frees). Logs on error. */
hs_status_t sim_platform_write(const sim_cfg_t *cfg, unsigned nflows, char **path_out);

#endif
