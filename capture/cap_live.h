/* cap_live.h - what every live command (capture bench, validate, calibrate) sets up first:
 * the memory kind, the profile with its --set overrides, the device, which end this process
 * is, and for --server / --connect the session's token and the address the server listens
 * on; and the effective configuration as JSON, for the output and the trace header.
 *
 * The token: --token, else the environment's HINTSIM_TOKEN; a server given neither makes a
 * random one (once per process, so that a server answering several sessions keeps it) and
 * prints it on stderr. The server's address: --bind, else the IP address behind the device's
 * GID (cap_live_dev_address).
 */
#ifndef HS_CAP_LIVE_H
#define HS_CAP_LIVE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "capture/cap_conn.h"
#include "common/hs_opt.h"
#include "model/profile/profile.h"

typedef struct {
    const char *device;
    uint64_t gid_index;
    int server;              /* --server */
    const char *connect;     /* --connect HOST, or NULL */
    uint64_t port;
    double timeout_s;        /* bound of every wait */
    const char *mem;         /* "host" | "cuda" */
    const char *profile;     /* name or file; NULL = "generic" */
    const hs_strlist_t *sets; /* --set KEY=VALUE overrides (may be NULL) */
    const char *bind;        /* server: --bind ADDR, or NULL: the device's address */
    const char *token;       /* --token, or NULL: HINTSIM_TOKEN, else (server) a random one */
} cap_live_opts_t;

typedef struct {
    cap_dev_t *dev;
    const cap_mem_ops_t *mem;
    profile_t *prof;
    cap_role_t role;
    int listen_fd;           /* server: the listening socket; -1 otherwise */
    int has_peer;            /* a connection to a peer was made (cap_live_connect) */
    char peer_addr[64];      /* its IP address, and the GID its QPs use */
    uint8_t peer_gid[16];
    uint8_t token[CAP_TOKEN_MAX]; /* server/client: the session's token */
    char listen_addr[64];    /* server: the address it listens on */
} cap_live_t;

/* Check the options (HS_ERR_USAGE: --server with --connect, bad port/timeout/token, a
 * client without a token), find the memory kind, load the profile, open the device and, for
 * a server, listen. Release with cap_live_close. */
hs_status_t cap_live_open(const cap_live_opts_t *o, cap_live_t *out);
void cap_live_close(cap_live_t *l);
/* Open a connection for one run of max_msg bytes at most under hint (listening, dialling or
 * loopback, as o says), on l's device, memory and profile; l keeps who the peer is (the
 * configuration names it). The caller owns *out (cap_conn_close). */
hs_status_t cap_live_connect(const cap_live_opts_t *o, cap_live_t *l, uint64_t max_msg,
                             uint64_t hint_bytes, cap_conn_t **out);
/* Server: accept clients one after another (a sweep reconnects per hint) and answer
 * their ping-pong commands until one says it is the last. */
hs_status_t cap_live_serve(const cap_live_opts_t *o, cap_live_t *l);
/* The IP address behind dev's GID, as text in buf: the IPv4 address of a RoCE v2 IPv4 GID
 * (::ffff:a.b.c.d); for another GID (the IPv6 link-local one at index 0) the first IPv4
 * address of the network device the GID belongs to, else the GID itself (with the device's
 * scope when link-local). HS_ERR_ENV (logged, saying to give --bind) when none can be had. */
hs_status_t cap_live_dev_address(const cap_dev_t *dev, char *buf, size_t len);
/* "loopback" / "server" / "client". */
const char *cap_role_name(cap_role_t r);
/* {"device": {...limits, gid}, "mem", "role", "peer": {address, gid} (once one was noted),
 * "profile": {name, hash}, "paths": {LL, BW}}: the effective configuration of connection c
 * (NULL before one exists: no "paths"). Caller owns the result. */
cJSON *cap_live_config_json(const cap_live_t *l, const cap_conn_t *c);
/* One line per path saying how completions are coalesced (for the human output). */
void cap_live_print_paths(const cap_conn_t *c, FILE *fp);

#endif
