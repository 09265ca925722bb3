/* cap_conn.h - the two ends of a live run and how they meet.
 *
 * --server listens on a TCP port of one address, --connect HOST dials it; the client's hello
 * carries the session's shared token, then the ends exchange QP numbers, PSNs, GIDs, buffer
 * addresses and rkeys over that socket, as perftest does, and the client drives the run: it
 * sends the server one command per ping-pong phase and the server answers each ping with a
 * pong (cap_conn_serve). With neither, both ends live in this process over the device
 * (loopback) and the client plays both parts. The messages and their bounds: cap_proto.h.
 *
 * A connection whose hello is not a hintsim client's with the token (garbage, a wrong token,
 * one that closes or says nothing) is refused and logged, and the server goes on waiting
 * for its client within the timeout (cap_conn_accept_hello). Every socket operation and
 * every wait is bounded by the timeout; a peer that vanishes ends the run with exit 1
 * (HS_ERR_TIMEOUT, or HS_ERR_CHECK naming the completion status).
 */
#ifndef HS_CAP_CONN_H
#define HS_CAP_CONN_H

#include <stdint.h>

#include "capture/cap_path.h"
#include "capture/cap_proto.h"
#include "model/profile/profile.h"

typedef enum { CAP_ROLE_LOOP = 0, CAP_ROLE_SERVER = 1, CAP_ROLE_CLIENT = 2 } cap_role_t;

typedef struct {
    cap_role_t role;
    const char *host;       /* client: where the server runs */
    uint16_t port;
    uint64_t timeout_ns;    /* bound of every wait */
    uint64_t max_msg;       /* client/loop: largest message; the server learns it */
    uint64_t hint_bytes;    /* client/loop: hint of the run (sets bw.depth_hinted) */
    int listen_fd;          /* server: from cap_conn_listen, kept across connections */
    const uint8_t *token;   /* server/client: CAP_TOKEN_MAX bytes (cap_token_from_text) */
} cap_conn_opts_t;

typedef struct {
    cap_role_t role;
    int fd;             /* TCP socket to the peer; -1 in loopback */
    cap_ep_t *ep;       /* this end (the client's in loopback) */
    cap_ep_t *peer;     /* loopback only: the other end, in this process */
    int use_imm;        /* ping-pong through write-with-immediate (GPU memory on an end) */
    cap_path_cfg_t cfg[CAP_NPATHS]; /* effective path configuration */
    char peer_addr[64]; /* server/client: the peer's IP address as the TCP socket has it */
    uint8_t peer_gid[16]; /* server/client: the GID the peer's QPs use */
} cap_conn_t;

/* Server: listen on TCP port of addr (a numeric IPv4 or IPv6 address or a name; "0.0.0.0"
 * or "::" for every address). The socket is non-blocking (the accepts below wait with poll,
 * and a connection poll announced may be gone when accept comes). HS_ERR_CHECK when the
 * port is in use or addr is not this host's, HS_ERR_INVALID when addr cannot be resolved,
 * HS_ERR_TIMEOUT when the name lookup did not end within timeout_ns (a resolver that does
 * not answer). */
hs_status_t cap_conn_listen(const char *addr, uint16_t port, uint64_t timeout_ns, int *fd_out);

/* Server: accept one client on lfd (cap_conn_listen's; port only names it in errors) within
 * timeout_ns; the connection gets TCP keepalive (cap_conn_keepalive). */
hs_status_t cap_conn_accept(int lfd, uint16_t port, uint64_t timeout_ns, int *fd_out);
/* After a wrong token the server checks no other for this long: the hellos that come
 * meanwhile wait, so a peer guesses one token a second at most, however many connections it
 * opens. */
#define CAP_AUTH_DELAY_NS 1000000000ull

/* Server: wait within timeout_ns for a client whose hello carries token and bounded fields
 * (cap_hello_parse), refusing every other connection with a warning that names its address
 * and what was wrong (a wrong token or version is answered with a refusal reply; garbage, a
 * close or silence only closed); after a wrong token, the next token is checked
 * CAP_AUTH_DELAY_NS later. Of the connections awaiting their hello one address holds half
 * at most, and a full table evicts from the address holding the most, so a peer that floods
 * the port evicts its own connections, not the client's. The accepted one is answered, gets
 * keepalive, and is handed out with its hello. HS_ERR_TIMEOUT (the refusals counted in the
 * message) when none came. */
typedef struct {
    int lfd;
    uint16_t port;          /* names it in messages */
    uint64_t timeout_ns;
    const uint8_t *token;   /* CAP_TOKEN_MAX bytes */
    int cpu_visible;        /* this end's memory, said in the reply */
} cap_accept_opts_t;
typedef struct {
    int fd;
    cap_hello_t hello;
    char peer_addr[64];
} cap_accepted_t;
hs_status_t cap_conn_accept_hello(const cap_accept_opts_t *o, cap_accepted_t *out);
/* Client: a TCP connection to host:port (a name may give several addresses, tried in turn)
 * within timeout_ns in all, the name lookup included, dialling again while the server is not
 * there yet (the server may start a moment later); blocking, with keepalive. Each connect is
 * bounded by its share of what is left of timeout_ns (CLOCK_MONOTONIC; the addresses left
 * share it equally, 0.25 s at least), also where the peer's host drops the connection
 * requests. HS_ERR_TIMEOUT naming host:port and the timeout (and why the last
 * attempt failed), or naming host when the resolver did not answer in time; HS_ERR_CHECK when
 * host cannot be resolved. The caller closes *fd_out. */
hs_status_t cap_conn_dial(const char *host, uint16_t port, uint64_t timeout_ns, int *fd_out);
/* TCP keepalive on fd: a peer whose host vanished (no FIN, no reset) is noticed within about
 * twice timeout_ns (probes after timeout_ns of silence, three more a third of it apart), and
 * the next read or write on fd fails. Both ends' control connections have it. */
hs_status_t cap_conn_keepalive(int fd, uint64_t timeout_ns);

/* The path configuration a run uses: profile p, hint, checked against dev's limits
 * (HS_ERR_INVALID naming the limit). */
hs_status_t cap_conn_make_cfg(const profile_t *p, uint64_t hint_bytes, const cap_dev_t *dev,
                              cap_path_cfg_t cfg[CAP_NPATHS]);

/* Set up both ends per o (listening, dialling or loopback), with buffers from mem and the
 * path configuration from p. The caller owns *out (cap_conn_close). */
hs_status_t cap_conn_open(const cap_conn_opts_t *o, cap_dev_t *dev, const cap_mem_ops_t *mem,
                          const profile_t *p, cap_conn_t **out);
/* Client/loop: run count ping-pongs of size bytes on path; half_rtt_ns[i] = half the time
 * from post i to post i+1, as ib_write_lat reports it. In loopback one thread plays both
 * ends in turn. */
hs_status_t cap_conn_pingpong(cap_conn_t *c, cap_path_id_t path, uint64_t size_bytes,
                              uint64_t count, uint64_t *half_rtt_ns);
/* Server: answer the client's commands until it says it is done; *more = the client will
 * connect again (another hint of a sweep). */
hs_status_t cap_conn_serve(cap_conn_t *c, int *more);
/* Client: tell the server this connection is over (more: another one follows). Then free
 * everything (any role). */
void cap_conn_close(cap_conn_t *c, int more);

#endif
