/* cap_conn.c - TCP rendezvous, loopback pairing and the ping-pong protocol (cap_conn.h). */
#include "capture/cap_conn.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "common/hs_util.h"

#define CAP_MAGIC 0x6873636170310000ULL /* "hscap1" */
#define CAP_INITIAL_RECVS 128
#define CAP_PROBE_NS 3000000000ULL /* a dead peer fails a write after ~0.5 s (retry_cnt 7) */

enum { CMD_PINGPONG = 1, CMD_END = 2 };

/* ---- bounded socket I/O ------------------------------------------------------------ */

static int wait_fd(int fd, short ev, uint64_t deadline)
{
    for (;;) {
        uint64_t now = hs_now_ns();
        struct pollfd p = {.fd = fd, .events = ev};
        int ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000 + 1);
        int rc = poll(&p, 1, ms);
        if (rc > 0)
            return 0;
        if (rc == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
}

/* Move len bytes over fd within timeout_ns. gone (may be NULL): where the peer closes or
 * resets the connection before a byte has moved, set *gone and return HS_ERR_CHECK without
 * a message (the caller decides: a server that was ending its previous session). */
static hs_status_t xfer(int fd, void *buf, size_t len, int sending, uint64_t timeout_ns,
                             int *gone)
{
    uint64_t deadline = hs_now_ns() + timeout_ns;
    size_t done = 0;

    while (done < len) {
        int rc = wait_fd(fd, sending ? POLLOUT : POLLIN, deadline);
        ssize_t n;
        if (rc != 0) {
            hs_log_error("peer did not %s within %.1f s: %s", sending ? "accept data" : "answer",
                         (double)timeout_ns / 1e9, strerror(-rc));
            return HS_ERR_TIMEOUT;
        }
        n = sending ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                    : recv(fd, (char *)buf + done, len - done, 0);
        if (gone && done == 0 &&
            (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE)))) {
            *gone = 1;
            return HS_ERR_CHECK;
        }
        if (n == 0) {
            hs_log_error("peer closed the connection");
            return HS_ERR_CHECK;
        }
        if (n < 0 && errno != EINTR && errno != EAGAIN) {
            hs_log_error("connection to peer failed: %s", strerror(errno));
            return HS_ERR_CHECK;
        }
        if (n > 0)
            done += (size_t)n;
    }
    return HS_OK;
}

/* Messages are arrays of uint64_t, big-endian on the wire. gone: as xfer's. */
static hs_status_t send_u64s_gone(int fd, const uint64_t *v, size_t n, uint64_t timeout_ns,
                                  int *gone)
{
    uint64_t w[16];

    for (size_t i = 0; i < n; i++)
        w[i] = htobe64(v[i]);
    return xfer(fd, w, n * sizeof(uint64_t), 1, timeout_ns, gone);
}

static hs_status_t recv_u64s_gone(int fd, uint64_t *v, size_t n, uint64_t timeout_ns, int *gone)
{
    hs_status_t st = xfer(fd, v, n * sizeof(uint64_t), 0, timeout_ns, gone);

    for (size_t i = 0; st == HS_OK && i < n; i++)
        v[i] = be64toh(v[i]);
    return st;
}

static hs_status_t send_u64s(int fd, const uint64_t *v, size_t n, uint64_t timeout_ns)
{
    return send_u64s_gone(fd, v, n, timeout_ns, NULL);
}

static hs_status_t recv_u64s(int fd, uint64_t *v, size_t n, uint64_t timeout_ns)
{
    return recv_u64s_gone(fd, v, n, timeout_ns, NULL);
}

static void info_pack(const cap_ep_info_t *in, uint64_t v[9])
{
    v[0] = in->qpn[0];
    v[1] = in->qpn[1];
    v[2] = in->psn[0];
    v[3] = in->psn[1];
    memcpy(&v[4], in->gid, 16);
    v[6] = in->lid;
    v[7] = in->addr;
    v[8] = in->rkey;
}

static void info_unpack(const uint64_t v[9], cap_ep_info_t *out)
{
    memset(out, 0, sizeof(*out));
    out->qpn[0] = (uint32_t)v[0];
    out->qpn[1] = (uint32_t)v[1];
    out->psn[0] = (uint32_t)v[2];
    out->psn[1] = (uint32_t)v[3];
    memcpy(out->gid, &v[4], 16);
    out->lid = (uint16_t)v[6];
    out->addr = v[7];
    out->rkey = (uint32_t)v[8];
}

/* ---- sockets --------------------------------------------------------------------------- */

hs_status_t cap_conn_listen(uint16_t port, int *fd_out)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_ANY)};
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);

    if (lfd < 0) {
        hs_log_error("socket: %s", strerror(errno));
        return HS_ERR_ENV;
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4) != 0) {
        hs_log_error("cannot listen on TCP port %u: %s", port, strerror(errno));
        close(lfd);
        return HS_ERR_CHECK;
    }
    *fd_out = lfd;
    return HS_OK;
}

hs_status_t cap_conn_keepalive(int fd, uint64_t timeout_ns)
{
    int one = 1, cnt = 3;
    int idle = (int)((timeout_ns + 999999999ull) / 1000000000ull);
    int intvl = (idle + 2) / 3;

    idle = idle > 0 ? idle : 1;
    intvl = intvl > 0 ? intvl : 1;
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) != 0) {
        hs_log_error("TCP keepalive on the control connection: %s", strerror(errno));
        return HS_ERR_ENV;
    }
    return HS_OK;
}

hs_status_t cap_conn_accept(int lfd, uint16_t port, uint64_t timeout_ns, int *fd_out)
{
    int fd, rc = wait_fd(lfd, POLLIN, hs_now_ns() + timeout_ns);
    hs_status_t st;

    if (rc != 0) {
        hs_log_error("no client connected to TCP port %u within %.1f s", port,
                     (double)timeout_ns / 1e9);
        return HS_ERR_TIMEOUT;
    }
    fd = accept(lfd, NULL, NULL);
    if (fd < 0) {
        hs_log_error("accept on TCP port %u: %s", port, strerror(errno));
        return HS_ERR_CHECK;
    }
    if ((st = cap_conn_keepalive(fd, timeout_ns)) != HS_OK) {
        close(fd);
        return st;
    }
    *fd_out = fd;
    return HS_OK;
}

static int try_connect(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);

    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    close(fd);
    return -1;
}

/* Dial host:port, retrying until the timeout (the server may start a moment later). */
static hs_status_t tcp_connect(const char *host, uint16_t port, uint64_t timeout_ns, int *fd_out)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    uint64_t deadline = hs_now_ns() + timeout_ns;
    char svc[16];
    int rc, fd = -1, err = 0;

    snprintf(svc, sizeof(svc), "%u", port);
    rc = getaddrinfo(host, svc, &hints, &res);
    if (rc != 0) {
        hs_log_error("--connect %s: %s", host, gai_strerror(rc));
        return HS_ERR_CHECK;
    }
    while (fd < 0 && hs_now_ns() < deadline) {
        fd = try_connect(res);
        if (fd < 0) {
            err = errno;
            usleep(100000);
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        hs_log_error("cannot reach %s:%u within %.1f s: %s (is the server running?)", host,
                     port, (double)timeout_ns / 1e9, strerror(err));
        return HS_ERR_TIMEOUT;
    }
    hs_status_t st = cap_conn_keepalive(fd, timeout_ns);
    if (st != HS_OK) {
        close(fd);
        return st;
    }
    *fd_out = fd;
    return HS_OK;
}

/* ---- setup ---------------------------------------------------------------------------- */

hs_status_t cap_conn_make_cfg(const profile_t *p, uint64_t hint_bytes, const cap_dev_t *dev,
                              cap_path_cfg_t cfg[CAP_NPATHS])
{
    hs_status_t st;

    cap_path_cfg_from_profile(p, hint_bytes, cfg);
    for (int i = 0; i < CAP_NPATHS; i++) {
        st = cap_path_cfg_apply_limits((cap_path_id_t)i, &cfg[i], &dev->lim);
        if (st != HS_OK)
            return st;
    }
    return HS_OK;
}

static hs_status_t ep_ready(cap_ep_t *ep, const cap_ep_info_t *peer)
{
    hs_status_t st = cap_ep_connect(ep, peer);

    for (int i = 0; st == HS_OK && i < CAP_NPATHS; i++)
        st = cap_qp_post_recvs(&ep->qp[i], CAP_INITIAL_RECVS);
    return st;
}

static hs_status_t open_loop(cap_conn_t *c, const cap_conn_opts_t *o, cap_dev_t *dev,
                             const cap_mem_ops_t *mem)
{
    cap_ep_info_t a, b;
    hs_status_t st;

    st = cap_ep_create(dev, mem, c->cfg, o->max_msg, o->timeout_ns, &c->ep);
    if (st == HS_OK)
        st = cap_ep_create(dev, mem, c->cfg, o->max_msg, o->timeout_ns, &c->peer);
    if (st != HS_OK)
        return st;
    cap_ep_info(c->ep, &a);
    cap_ep_info(c->peer, &b);
    st = ep_ready(c->ep, &b);
    return st == HS_OK ? ep_ready(c->peer, &a) : st;
}

/* Client: dial the server and trade hellos (mine out, theirs in), dialling again while the
 * server closes or resets the connection before it answers: a server ending its previous
 * session can still take a connection into its listening socket's queue and then close it
 * (vm_cross_host saw calibrate's client dial the bench server that had just finished, get
 * "Connection reset by peer", and the calibrate server then wait for a client in vain).
 * Within o->timeout_ns in all; c->fd is the connection that answered. */
static hs_status_t client_hello(cap_conn_t *c, const cap_conn_opts_t *o, const uint64_t mine[4],
                                uint64_t theirs[4])
{
    uint64_t deadline = hs_now_ns() + o->timeout_ns;
    hs_status_t st;

    for (int attempt = 0;; attempt++) {
        uint64_t now = hs_now_ns(), left = deadline > now ? deadline - now : 0;
        int gone = 0, fd = -1;
        if (attempt > 0 && left < 100000000) { /* each dial gets 0.1 s at least */
            hs_log_error("%s:%u closed every connection before answering for %.1f s (a server "
                         "still ending its previous session, or not a hintsim server)", o->host,
                         o->port, (double)o->timeout_ns / 1e9);
            return HS_ERR_CHECK;
        }
        st = tcp_connect(o->host, o->port, left, &fd);
        if (st != HS_OK)
            return st;
        st = send_u64s_gone(fd, mine, 4, left, &gone);
        if (st == HS_OK)
            st = recv_u64s_gone(fd, theirs, 4, left, &gone);
        if (st == HS_OK) {
            c->fd = fd;
            return HS_OK;
        }
        close(fd);
        if (!gone)
            return st;
        usleep(100000);
    }
}

/* Hello: magic, max_msg, hint, cpu_visible of the sender's memory. */
static hs_status_t hello(cap_conn_t *c, const cap_conn_opts_t *o, const cap_mem_ops_t *mem,
                         uint64_t *max_msg, uint64_t *hint)
{
    uint64_t mine[4] = {CAP_MAGIC, o->max_msg, o->hint_bytes, (uint64_t)mem->cpu_visible};
    uint64_t theirs[4];
    hs_status_t st;

    if (c->role == CAP_ROLE_CLIENT) {
        st = client_hello(c, o, mine, theirs);
    } else {
        st = recv_u64s(c->fd, theirs, 4, o->timeout_ns);
        if (st == HS_OK)
            st = send_u64s(c->fd, mine, 4, o->timeout_ns);
    }
    if (st != HS_OK)
        return st;
    if (theirs[0] != CAP_MAGIC) {
        hs_log_error("the peer is not a hintsim capture end (bad hello)");
        return HS_ERR_CHECK;
    }
    c->use_imm = !mem->cpu_visible || !theirs[3];
    *max_msg = c->role == CAP_ROLE_SERVER ? theirs[1] : o->max_msg;
    *hint = c->role == CAP_ROLE_SERVER ? theirs[2] : o->hint_bytes;
    return HS_OK;
}

/* The address of the TCP peer on fd, as text ("" if it cannot be had). */
static void peer_address(int fd, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    const void *a = NULL;

    buf[0] = '\0';
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
        return;
    if (ss.ss_family == AF_INET)
        a = &((struct sockaddr_in *)&ss)->sin_addr;
    else if (ss.ss_family == AF_INET6)
        a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
    if (!a || !inet_ntop(ss.ss_family, a, buf, (socklen_t)len))
        buf[0] = '\0';
}

static hs_status_t open_remote(cap_conn_t *c, const cap_conn_opts_t *o, cap_dev_t *dev,
                               const cap_mem_ops_t *mem, const profile_t *p)
{
    uint64_t max_msg = 0, hint = 0, v[9];
    cap_ep_info_t mine, peer;
    hs_status_t st;

    /* the client dials inside hello (client_hello) */
    st = c->role == CAP_ROLE_SERVER ? cap_conn_accept(o->listen_fd, o->port, o->timeout_ns, &c->fd)
                                    : HS_OK;
    if (st == HS_OK)
        st = hello(c, o, mem, &max_msg, &hint);
    if (st == HS_OK)
        st = cap_conn_make_cfg(p, hint, dev, c->cfg);
    if (st == HS_OK)
        st = cap_ep_create(dev, mem, c->cfg, max_msg, o->timeout_ns, &c->ep);
    if (st != HS_OK)
        return st;
    cap_ep_info(c->ep, &mine);
    info_pack(&mine, v);
    st = send_u64s(c->fd, v, 9, o->timeout_ns);
    if (st == HS_OK)
        st = recv_u64s(c->fd, v, 9, o->timeout_ns);
    if (st != HS_OK)
        return st;
    info_unpack(v, &peer);
    memcpy(c->peer_gid, peer.gid, sizeof(c->peer_gid));
    peer_address(c->fd, c->peer_addr, sizeof(c->peer_addr));
    return ep_ready(c->ep, &peer);
}

hs_status_t cap_conn_open(const cap_conn_opts_t *o, cap_dev_t *dev, const cap_mem_ops_t *mem,
                          const profile_t *p, cap_conn_t **out)
{
    cap_conn_t *c = calloc(1, sizeof(*c));
    hs_status_t st;

    if (!c)
        return HS_ERR_NOMEM;
    c->role = o->role;
    c->fd = -1;
    if (o->role == CAP_ROLE_LOOP) {
        c->use_imm = !mem->cpu_visible;
        st = cap_conn_make_cfg(p, o->hint_bytes, dev, c->cfg);
        if (st == HS_OK)
            st = open_loop(c, o, dev, mem);
    } else {
        st = open_remote(c, o, dev, mem, p);
    }
    if (st != HS_OK) {
        cap_conn_close(c, 0);
        return st;
    }
    *out = c;
    return HS_OK;
}

/* ---- ping-pong ------------------------------------------------------------------------ */

static uint8_t pp_value(uint64_t i)
{
    return (uint8_t)(i % 255 + 1); /* never 0: a cleared landing byte never matches */
}

static void landing_clear(cap_ep_t *ep, uint64_t size_bytes)
{
    if (ep->mem->cpu_visible)
        *cap_ep_landing_last(ep, size_bytes) = 0;
}

/* The peer's write did not come: say why when the device can tell (a completion or the QP
 * in error; a probe write failing as it does when the peer's QP is gone). */
static hs_status_t arrival_timed_out(cap_ep_t *ep, cap_qp_t *q)
{
    uint64_t bound = ep->timeout_ns < CAP_PROBE_NS ? ep->timeout_ns : CAP_PROBE_NS;
    int alive = 0;
    hs_status_t st = cap_qp_check(ep, q);

    if (st == HS_OK)
        st = cap_qp_probe(ep, q, bound, &alive);
    if (st != HS_OK)
        return st;
    hs_log_error("%s path: the peer's write did not arrive within %.1f s (%s)",
                 cap_path_name(q->id), (double)ep->timeout_ns / 1e9,
                 alive ? "its QP still acknowledges writes: the peer process stalled"
                       : "a probe write got no completion either");
    return HS_ERR_TIMEOUT;
}

/* Spin on the last byte of the landing half, as ib_write_lat does: every 1024 spins the
 * send CQ is polled (a QP in error surfaces) and now and then the clock read (deadline). */
static hs_status_t wait_arrival(cap_ep_t *ep, cap_qp_t *q, uint64_t size_bytes, uint8_t v,
                                int imm)
{
    volatile uint8_t *last;
    cap_wait_t w = {0};
    unsigned spins = 0;
    hs_status_t st;

    if (imm)
        return cap_qp_wait_recv(ep, q);
    last = cap_ep_landing_last(ep, size_bytes);
    while (*last != v) {
        if ((++spins & 1023) != 0)
            continue;
        st = cap_qp_poll(ep, q);
        if (st == HS_OK && cap_wait_expired(ep, &w))
            return arrival_timed_out(ep, q);
        if (st != HS_OK)
            return st;
    }
    return HS_OK;
}

/* One ping as ib_write_lat sends it: mark the last byte, post (every WR signalled on LL,
 * inline when small), and when the WR is signalled wait for its completion before the
 * caller spins on the answer. */
static hs_status_t send_ping(cap_ep_t *ep, cap_qp_t *q, uint64_t i, uint64_t size_bytes,
                             int imm)
{
    int sig = 0;
    hs_status_t st;

    if (ep->mem->cpu_visible)
        cap_ep_mark_source(ep, size_bytes, pp_value(i));
    st = cap_qp_post_msg(ep, q, i, size_bytes, imm, &sig);
    if (st == HS_OK && sig)
        st = cap_qp_wait_msg(ep, q, q->track.next_seq - 1);
    return st;
}

/* Ping-pong timestamps. A CLOCK_MONOTONIC read costs ~2 us in an emulated guest (clocksource
 * HPET; measured in the soft-RoCE VM) against ~20 ns for the TSC, which ib_write_lat reads:
 * the loop reads the TSC where there is one, and the ticks are converted to ns with the
 * ratio measured against CLOCK_MONOTONIC over the whole loop, so no frequency is assumed
 * (perftest's own short calibration is what fails under emulation). */
typedef struct {
    uint64_t ns0, tick0;
} pp_clock_t;

static uint64_t pp_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return hs_now_ns();
#endif
}

static void pp_clock_start(pp_clock_t *c)
{
    c->ns0 = hs_now_ns();
    c->tick0 = pp_ticks();
}

/* v[0..n): tick intervals, halved, become ns. */
static void pp_clock_finish(const pp_clock_t *c, uint64_t *v, uint64_t n)
{
    uint64_t ticks = pp_ticks() - c->tick0, ns = hs_now_ns() - c->ns0;
    double scale = ticks ? (double)ns / (double)ticks : 1.0;

    for (uint64_t i = 0; i < n; i++)
        v[i] = (uint64_t)((double)v[i] * scale / 2.0 + 0.5);
}

/* Round trip / 2 as ib_write_lat computes it: half the time from one post to the next. */
static hs_status_t pingpong_loop(cap_conn_t *c, cap_qp_t *qa, cap_qp_t *qb, uint64_t size,
                                 uint64_t count, uint64_t *half_rtt_ns)
{
    pp_clock_t clk;
    uint64_t t_prev;
    hs_status_t st = HS_OK;

    landing_clear(c->ep, size);
    landing_clear(c->peer, size);
    pp_clock_start(&clk);
    t_prev = clk.tick0;
    for (uint64_t i = 0; st == HS_OK && i < count; i++) {
        uint64_t t;
        st = send_ping(c->ep, qa, i, size, c->use_imm);
        if (st == HS_OK)
            st = wait_arrival(c->peer, qb, size, pp_value(i), c->use_imm);
        if (st == HS_OK)
            st = send_ping(c->peer, qb, i, size, c->use_imm);
        if (st == HS_OK)
            st = wait_arrival(c->ep, qa, size, pp_value(i), c->use_imm);
        t = pp_ticks();
        half_rtt_ns[i] = t - t_prev;
        t_prev = t;
    }
    pp_clock_finish(&clk, half_rtt_ns, count);
    if (st == HS_OK)
        st = cap_qp_drain(c->peer, qb, NULL);
    return st == HS_OK ? cap_qp_drain(c->ep, qa, NULL) : st;
}

static hs_status_t pingpong_client(cap_conn_t *c, cap_qp_t *q, uint64_t size, uint64_t count,
                                   uint64_t *half_rtt_ns)
{
    uint64_t cmd[4] = {CMD_PINGPONG, (uint64_t)q->id, size, count}, ack = 0;
    uint64_t tmo = c->ep->timeout_ns, t_prev;
    pp_clock_t clk;
    hs_status_t st;

    landing_clear(c->ep, size);
    st = send_u64s(c->fd, cmd, 4, tmo);
    if (st == HS_OK)
        st = recv_u64s(c->fd, &ack, 1, tmo);
    pp_clock_start(&clk);
    t_prev = clk.tick0;
    for (uint64_t i = 0; st == HS_OK && i < count; i++) {
        uint64_t t;
        st = send_ping(c->ep, q, i, size, c->use_imm);
        if (st == HS_OK)
            st = wait_arrival(c->ep, q, size, pp_value(i), c->use_imm);
        t = pp_ticks();
        half_rtt_ns[i] = t - t_prev;
        t_prev = t;
    }
    pp_clock_finish(&clk, half_rtt_ns, count);
    if (st == HS_OK)
        st = cap_qp_drain(c->ep, q, NULL);
    return st == HS_OK ? recv_u64s(c->fd, &ack, 1, tmo) : st;
}

hs_status_t cap_conn_pingpong(cap_conn_t *c, cap_path_id_t path, uint64_t size_bytes,
                              uint64_t count, uint64_t *half_rtt_ns)
{
    cap_qp_t *qa = &c->ep->qp[path];
    cap_done_fn saved = qa->on_done;
    hs_status_t st;

    if (size_bytes == 0 || size_bytes > c->ep->max_msg) {
        hs_log_error("ping-pong size %llu is outside 1..%zu", (unsigned long long)size_bytes,
                     c->ep->max_msg);
        return HS_ERR_INVALID;
    }
    qa->on_done = NULL; /* ping-pong messages are not the caller's trace records */
    if (c->role == CAP_ROLE_LOOP)
        st = pingpong_loop(c, qa, &c->peer->qp[path], size_bytes, count, half_rtt_ns);
    else
        st = pingpong_client(c, qa, size_bytes, count, half_rtt_ns);
    qa->on_done = saved;
    return st;
}

static hs_status_t serve_pingpong(cap_conn_t *c, const uint64_t cmd[4])
{
    uint64_t size = cmd[2], count = cmd[3], ack = 1;
    uint64_t tmo = c->ep->timeout_ns;
    cap_qp_t *q;
    hs_status_t st;

    if (cmd[1] >= CAP_NPATHS || size == 0 || size > c->ep->max_msg) {
        hs_log_error("bad ping-pong command from the client (path %llu, size %llu)",
                     (unsigned long long)cmd[1], (unsigned long long)size);
        return HS_ERR_CHECK;
    }
    q = &c->ep->qp[cmd[1]];
    landing_clear(c->ep, size);
    st = send_u64s(c->fd, &ack, 1, tmo);
    for (uint64_t i = 0; st == HS_OK && i < count; i++) {
        st = wait_arrival(c->ep, q, size, pp_value(i), c->use_imm);
        if (st == HS_OK)
            st = send_ping(c->ep, q, i, size, c->use_imm);
    }
    if (st == HS_OK)
        st = cap_qp_drain(c->ep, q, NULL);
    return st == HS_OK ? send_u64s(c->fd, &ack, 1, tmo) : st;
}

hs_status_t cap_conn_serve(cap_conn_t *c, int *more)
{
    /* Between commands the client may run long one-sided phases: wait much longer than
     * one operation's timeout, but still bounded. A client that dies closes the socket; one
     * whose host vanishes is noticed by TCP keepalive in about twice the timeout
     * (cap_conn_keepalive). */
    uint64_t idle_ns = c->ep->timeout_ns * 60;
    uint64_t cmd[4];
    hs_status_t st;

    for (;;) {
        st = recv_u64s(c->fd, cmd, 4, idle_ns);
        if (st != HS_OK)
            return st;
        if (cmd[0] == CMD_END) {
            *more = cmd[1] != 0;
            return HS_OK;
        }
        if (cmd[0] != CMD_PINGPONG) {
            hs_log_error("unknown command %llu from the client", (unsigned long long)cmd[0]);
            return HS_ERR_CHECK;
        }
        st = serve_pingpong(c, cmd);
        if (st != HS_OK)
            return st;
    }
}

void cap_conn_close(cap_conn_t *c, int more)
{
    uint64_t end[4] = {CMD_END, (uint64_t)(more != 0), 0, 0};

    if (!c)
        return;
    if (c->role == CAP_ROLE_CLIENT && c->fd >= 0 && c->ep)
        send_u64s(c->fd, end, 4, c->ep->timeout_ns);
    if (c->fd >= 0)
        close(c->fd);
    cap_ep_destroy(c->peer);
    cap_ep_destroy(c->ep);
    free(c);
}
