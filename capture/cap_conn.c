/* cap_conn.c - TCP rendezvous, loopback pairing and the ping-pong protocol (cap_conn.h). */
#include "capture/cap_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "capture/cap_proto.h"
#include "common/hs_util.h"

#define CAP_INITIAL_RECVS 128
#define CAP_PROBE_NS 3000000000ULL /* a dead peer fails a write after ~0.5 s (retry_cnt 7) */

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

/* One message of len bytes each way (cap_proto.h packs and parses them). */
static hs_status_t send_msg(int fd, const uint8_t *buf, size_t len, uint64_t timeout_ns)
{
    return xfer(fd, (void *)buf, len, 1, timeout_ns, NULL);
}

static hs_status_t recv_msg(int fd, uint8_t *buf, size_t len, uint64_t timeout_ns)
{
    return xfer(fd, buf, len, 0, timeout_ns, NULL);
}

/* What a parser made of a message from the peer: HS_OK, or the refusal logged. */
static hs_status_t parsed(cap_parse_t r, const char *err)
{
    if (r == CAP_PARSE_OK)
        return HS_OK;
    hs_log_error("the peer sent a message out of bounds, %s", err);
    return HS_ERR_CHECK;
}

static void info_to_wire(const cap_ep_info_t *in, cap_wire_info_t *w)
{
    memset(w, 0, sizeof(*w));
    for (int i = 0; i < CAP_NPATHS; i++) {
        w->qpn[i] = in->qpn[i];
        w->psn[i] = in->psn[i];
    }
    memcpy(w->gid, in->gid, 16);
    w->lid = in->lid;
    w->addr = in->addr;
    w->rkey = in->rkey;
}

static void info_from_wire(const cap_wire_info_t *w, cap_ep_info_t *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < CAP_NPATHS; i++) {
        out->qpn[i] = w->qpn[i];
        out->psn[i] = w->psn[i];
    }
    memcpy(out->gid, w->gid, 16);
    out->lid = w->lid;
    out->addr = w->addr;
    out->rkey = w->rkey;
}

/* The address of sa as text ("" if it cannot be had). */
static void sockaddr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    const void *a = NULL;

    buf[0] = '\0';
    if (ss->ss_family == AF_INET)
        a = &((const struct sockaddr_in *)ss)->sin_addr;
    else if (ss->ss_family == AF_INET6)
        a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    if (!a || !inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
        buf[0] = '\0';
}

/* The address of the TCP peer on fd, as text ("" if it cannot be had). */
static void peer_address(int fd, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);

    buf[0] = '\0';
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
        sockaddr_text(&ss, buf, len);
}

/* ---- the name lookup within the deadline ----------------------------------------------
 * getaddrinfo has no timeout of its own: a resolver that does not answer holds it for the
 * resolver's timeouts and retries (resolv.conf: 5 s x 2 attempts per server and address
 * family by default, up to 30 s x 5), whatever --timeout says. So the lookup runs in a thread
 * of its own, and the caller (the client's dial, the server's --bind) waits for it until the
 * deadline. A lookup that is still going
 * then cannot be stopped (neither can glibc's getaddrinfo_a: gai_cancel refuses a request in
 * progress); it is abandoned: the thread frees the request and the result when it ends. */

/* What to look up: the option that names it (in errors), the name, the port, getaddrinfo's
 * flags, and the status of a name the resolver does not know. */
typedef struct {
    const char *what;
    const char *host;
    uint16_t port;
    int flags;
    hs_status_t unknown;
} lookup_req_t;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t done_cv; /* on CLOCK_MONOTONIC, as hs_now_ns */
    int done;               /* the thread has stored rc and res */
    int abandoned;          /* the dialler gave up: the thread frees everything */
    int rc;
    struct addrinfo *res;
    int flags;
    char svc[16];
    char host[];
} lookup_t;

static void lookup_free(lookup_t *l)
{
    pthread_cond_destroy(&l->done_cv);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

static void *lookup_main(void *arg)
{
    lookup_t *l = arg;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = l->flags}, *res = NULL;
    int rc = getaddrinfo(l->host, l->svc, &hints, &res), abandoned;

    pthread_mutex_lock(&l->lock);
    l->rc = rc;
    l->res = res;
    l->done = 1;
    abandoned = l->abandoned;
    pthread_cond_signal(&l->done_cv);
    pthread_mutex_unlock(&l->lock); /* l is the dialler's from here unless it gave up */
    if (abandoned) {
        if (rc == 0)
            freeaddrinfo(res);
        lookup_free(l);
    }
    return NULL;
}

/* A lookup of q with its lock and condition variable ready, or NULL (no memory). */
static lookup_t *lookup_new(const lookup_req_t *q)
{
    size_t hlen = strlen(q->host) + 1;
    lookup_t *l = calloc(1, sizeof(*l) + hlen);
    pthread_condattr_t ca;

    if (!l)
        return NULL;
    memcpy(l->host, q->host, hlen);
    snprintf(l->svc, sizeof(l->svc), "%u", q->port);
    l->flags = q->flags;
    if (pthread_condattr_init(&ca) != 0)
        goto free_lookup;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&l->done_cv, &ca) != 0)
        goto destroy_attr;
    if (pthread_mutex_init(&l->lock, NULL) != 0)
        goto destroy_cond;
    pthread_condattr_destroy(&ca);
    return l;

destroy_cond:
    pthread_cond_destroy(&l->done_cv);
destroy_attr:
    pthread_condattr_destroy(&ca);
free_lookup:
    free(l);
    return NULL;
}

/* l's thread, detached: it ends on its own, however long the lookup takes. 0 or an errno. */
static int lookup_start(lookup_t *l)
{
    pthread_attr_t attr;
    pthread_t th;
    int rc = pthread_attr_init(&attr);

    if (rc != 0)
        return rc;
    rc = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (rc == 0)
        rc = pthread_create(&th, &attr, lookup_main, l);
    pthread_attr_destroy(&attr);
    return rc;
}

/* Wait for l's thread until deadline: 1 when its result is in, else 0 (l abandoned: the
 * thread frees it). */
static int lookup_wait(lookup_t *l, uint64_t deadline)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ull),
                          .tv_nsec = (long)(deadline % 1000000000ull)};
    int done;

    pthread_mutex_lock(&l->lock);
    while (!l->done && pthread_cond_timedwait(&l->done_cv, &l->lock, &ts) != ETIMEDOUT)
        ;
    done = l->done;
    l->abandoned = !done;
    pthread_mutex_unlock(&l->lock);
    return done;
}

/* q's addresses by deadline (CLOCK_MONOTONIC), or q->unknown (the name is not known) or
 * HS_ERR_TIMEOUT (no answer in time), logged. The caller frees *res_out. */
static hs_status_t resolve_by(const lookup_req_t *q, uint64_t deadline, uint64_t timeout_ns,
                              struct addrinfo **res_out)
{
    lookup_t *l = lookup_new(q);
    int rc;

    if (!l) {
        hs_log_error("%s %s: out of memory", q->what, q->host);
        return HS_ERR_NOMEM;
    }
    rc = lookup_start(l);
    if (rc != 0) {
        hs_log_error("%s %s: cannot start the name lookup: %s", q->what, q->host, strerror(rc));
        lookup_free(l);
        return HS_ERR_ENV;
    }
    if (!lookup_wait(l, deadline)) {
        hs_log_error("%s %s: the name lookup did not finish within %.1f s (--timeout): "
                     "no answer from the resolver (resolv.conf's name servers)", q->what,
                     q->host, (double)timeout_ns / 1e9);
        return HS_ERR_TIMEOUT;
    }
    rc = l->rc;
    *res_out = l->res;
    lookup_free(l);
    if (rc != 0) {
        hs_log_error("%s %s: %s", q->what, q->host, gai_strerror(rc));
        return q->unknown;
    }
    return HS_OK;
}

/* ---- sockets --------------------------------------------------------------------------- */

/* A socket listening on ai, or -errno. Non-blocking: poll saying a connection waits does
 * not mean accept finds one (another process on the socket, or the kernel, may have taken
 * it since), and a blocking accept would then wait past every deadline. */
static int listen_one(const struct addrinfo *ai)
{
    int one = 1, err;
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK, ai->ai_protocol);

    if (fd < 0)
        return -errno;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 8) == 0)
        return fd;
    err = errno;
    close(fd);
    return -err;
}

hs_status_t cap_conn_listen(const char *addr, uint16_t port, uint64_t timeout_ns, int *fd_out)
{
    const lookup_req_t q = {"--bind", addr, port, AI_PASSIVE | AI_NUMERICSERV, HS_ERR_INVALID};
    struct addrinfo *res = NULL;
    int fd = -EADDRNOTAVAIL;
    hs_status_t st = resolve_by(&q, hs_now_ns() + timeout_ns, timeout_ns, &res);

    if (st != HS_OK)
        return st;
    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        fd = listen_one(ai);
    freeaddrinfo(res);
    if (fd < 0) {
        hs_log_error("cannot listen on TCP port %u of %s: %s", port, addr, strerror(-fd));
        return HS_ERR_CHECK;
    }
    *fd_out = fd;
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

/* A connection from the (non-blocking) listening socket lfd: its fd, blocking as the rest of
 * this file's sockets are (accept does not pass O_NONBLOCK on), -EAGAIN when there is none to
 * take (taken by another, or aborted before it was accepted), else -errno. */
static int accept_one(int lfd, struct sockaddr_storage *ss, socklen_t *sl)
{
    int fd = accept(lfd, (struct sockaddr *)ss, sl);

    if (fd >= 0)
        return fd;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED || errno == EINTR)
        return -EAGAIN;
    return -errno;
}

hs_status_t cap_conn_accept(int lfd, uint16_t port, uint64_t timeout_ns, int *fd_out)
{
    uint64_t deadline = hs_now_ns() + timeout_ns;
    int fd = -EAGAIN;
    hs_status_t st;

    while (fd == -EAGAIN) {
        if (wait_fd(lfd, POLLIN, deadline) != 0) {
            hs_log_error("no client connected to TCP port %u within %.1f s", port,
                         (double)timeout_ns / 1e9);
            return HS_ERR_TIMEOUT;
        }
        fd = accept_one(lfd, NULL, NULL);
    }
    if (fd < 0) {
        hs_log_error("accept on TCP port %u: %s", port, strerror(-fd));
        return HS_ERR_CHECK;
    }
    if ((st = cap_conn_keepalive(fd, timeout_ns)) != HS_OK) {
        close(fd);
        return st;
    }
    *fd_out = fd;
    return HS_OK;
}

/* ---- the server's wait for its client --------------------------------------------------
 * Every connection that arrives is held (CAP_PENDING_MAX at once) until its hello is complete
 * or wrong, so that a stray one (a port scan, a wrong token, garbage, a peer that connects and
 * closes or says nothing) is refused and logged while the server goes on waiting for its
 * client, and none of them holds up the others. One address holds half the table at most,
 * and a full table gives up the oldest connection of the address that holds the most, so a
 * peer that opens many connections evicts its own, not the client's. After a wrong token no
 * token is checked for CAP_AUTH_DELAY_NS: complete hellos wait (unread further, not expired)
 * until then, so that guessing the token takes a second a guess however many connections a
 * peer opens. */

#define CAP_PENDING_MAX 8

typedef struct {
    int fd;
    uint64_t t0_ns;
    size_t got;
    uint8_t buf[CAP_HELLO_LEN];
    char addr[64];
} pending_t;

typedef struct {
    const cap_accept_opts_t *o;
    pending_t p[CAP_PENDING_MAX];
    int n;
    unsigned refused;
    uint64_t auth_after_ns;      /* no token is checked before (a wrong one came lately) */
    int done;                    /* the wait is over: the rest are closed */
    char last[CAP_ERR_LEN + 80]; /* the last refusal, for the timeout's message */
} acceptor_t;

/* Close fd after reading what it has sent (a close with unread bytes would reset the
 * connection, and the peer could lose the refusal before reading it). */
static void drain_close(int fd)
{
    uint8_t junk[512];

    for (int i = 0; i < 8 && recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0; i++)
        ;
    shutdown(fd, SHUT_WR);
    close(fd);
}

/* Refuse connection i: log why, answer with status (when it is a reply's), close it. */
static void pending_refuse(acceptor_t *a, int i, int status, const char *why)
{
    pending_t *p = &a->p[i];

    if (status >= 0) { /* best effort: the peer may be gone, and a refusal must not block */
        uint8_t r[CAP_REPLY_LEN];
        cap_reply_pack(&(cap_reply_t){CAP_PROTO_VERSION, (cap_reply_status_t)status, 0}, r);
        (void)send(p->fd, r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    hs_log_warn("refused a connection from %s: %s%s", p->addr[0] ? p->addr : "?", why,
                a->done ? "" : "; still waiting for the client");
    a->refused++;
    snprintf(a->last, sizeof(a->last), "from %s: %s", p->addr[0] ? p->addr : "?", why);
    drain_close(p->fd);
    a->p[i] = a->p[--a->n]; /* the caller walks the table downwards */
}

/* 2 x max_msg is what the server registers: no more than half this machine's memory. */
static int fits_memory(uint64_t max_msg)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && psz > 0 ? (double)pages * (double)psz : 0;

    return phys <= 0 || 2.0 * (double)max_msg <= phys / 2;
}

/* What a hello refused after its first len bytes were parsed is answered with: a wrong
 * token or version is said; so is a field out of bounds, to a peer whose token was checked
 * (a complete hello with a good head) and right; garbage gets nothing (-1). The token of a
 * hello with a bad head is never compared: that would answer a guess without the delay
 * after a wrong token. */
static int refusal_status(cap_parse_t r, const uint8_t *buf, size_t len, const uint8_t *token)
{
    cap_hello_t unused;

    if (r == CAP_PARSE_TOKEN)
        return CAP_REPLY_TOKEN;
    if (r == CAP_PARSE_VERSION)
        return CAP_REPLY_VERSION;
    if (len == CAP_HELLO_LEN &&
        cap_hello_parse(buf, CAP_HELLO_HEAD, token, &unused, NULL, 0) == CAP_PARSE_MORE &&
        cap_token_equal(buf + CAP_HELLO_TOKEN_OFF, token))
        return CAP_REPLY_FIELD;
    return -1;
}

/* p's hello has come whole: it is read no further, only judged. */
static int pending_complete(const pending_t *p)
{
    return p->got == CAP_HELLO_LEN;
}

/* Connection i's hello is complete and waits for the delay after a wrong token. */
static int pending_held(const acceptor_t *a, int i, uint64_t now)
{
    return pending_complete(&a->p[i]) && now < a->auth_after_ns;
}

/* Judge the bytes of connection i so far: 1 = its hello is accepted (in *h), 0 = wait for
 * more (or for the delay after a wrong token: only the head is judged meanwhile), -1 =
 * refused (removed from the table). */
static int pending_judge(acceptor_t *a, int i, cap_hello_t *h)
{
    pending_t *p = &a->p[i];
    char err[CAP_ERR_LEN], why[CAP_ERR_LEN + 64];
    size_t len = pending_held(a, i, hs_now_ns()) ? CAP_HELLO_LEN - 1 : p->got;
    cap_parse_t r = cap_hello_parse(p->buf, len, a->o->token, h, err, sizeof(err));

    if (r == CAP_PARSE_MORE)
        return 0;
    if (r == CAP_PARSE_TOKEN)
        a->auth_after_ns = hs_now_ns() + CAP_AUTH_DELAY_NS;
    if (r == CAP_PARSE_OK && !fits_memory(h->max_msg)) {
        snprintf(why, sizeof(why), "hello: max_msg %llu needs 2 x max_msg of registered "
                 "buffers, more than half this machine's memory",
                 (unsigned long long)h->max_msg);
        pending_refuse(a, i, CAP_REPLY_FIELD, why);
        return -1;
    }
    if (r == CAP_PARSE_OK)
        return 1;
    pending_refuse(a, i, refusal_status(r, p->buf, len, a->o->token), err);
    return -1;
}

/* Read what connection i has sent: as pending_judge, and -1 when it closed or failed. */
static int pending_read(acceptor_t *a, int i, cap_hello_t *h)
{
    pending_t *p = &a->p[i];
    ssize_t n = recv(p->fd, p->buf + p->got, sizeof(p->buf) - p->got, MSG_DONTWAIT);
    char why[96];

    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n <= 0) {
        snprintf(why, sizeof(why), "it %s after %zu of the hello's %d bytes",
                 n == 0 ? "closed the connection" : strerror(errno), p->got, CAP_HELLO_LEN);
        pending_refuse(a, i, -1, why);
        return -1;
    }
    p->got += (size_t)n;
    return pending_judge(a, i, h);
}

/* How many of the table's connections come from addr. */
static int pending_from(const acceptor_t *a, const char *addr)
{
    int n = 0;

    for (int i = 0; i < a->n; i++)
        n += strcmp(a->p[i].addr, addr) == 0;
    return n;
}

/* The oldest connection from addr in the table (-1: none). */
static int pending_oldest_from(const acceptor_t *a, const char *addr)
{
    int oldest = -1;

    for (int i = 0; i < a->n; i++)
        if (strcmp(a->p[i].addr, addr) == 0 &&
            (oldest < 0 || a->p[i].t0_ns < a->p[oldest].t0_ns))
            oldest = i;
    return oldest;
}

/* Which connection a full table gives up: the oldest of the address that holds the most
 * (of those that hold as many, the one whose oldest is oldest), so that a peer that opens
 * many connections evicts its own, not the client's. With one connection an address, that
 * is the oldest, as it always was. */
static int pending_victim(const acceptor_t *a)
{
    int victim = -1, most = 0;

    for (int i = 0; i < a->n; i++) {
        int held = pending_from(a, a->p[i].addr);
        int oldest = pending_oldest_from(a, a->p[i].addr);
        if (held > most || (held == most && a->p[oldest].t0_ns < a->p[victim].t0_ns)) {
            most = held;
            victim = oldest;
        }
    }
    return victim;
}

/* Why connection i is given up for a newer one (its address's, where it has several). */
static const char *eviction_why(const acceptor_t *a, int i)
{
    int own = pending_from(a, a->p[i].addr) > 1;

    if (pending_complete(&a->p[i]))
        return own ? "its hello waited for the delay after a wrong token, and newer "
                     "connections from its address are waiting"
                   : "its hello waited for the delay after a wrong token, and newer "
                     "connections are waiting";
    return own ? "no hello yet, and newer connections from its address are waiting"
               : "no hello yet, and newer connections are waiting";
}

/* Make room for a connection from addr: an address holds half the table at most (its oldest
 * goes), and a full table gives up pending_victim. */
static void pending_make_room(acceptor_t *a, const char *addr)
{
    int i = -1;

    if (pending_from(a, addr) >= CAP_PENDING_MAX / 2)
        i = pending_oldest_from(a, addr);
    else if (a->n == CAP_PENDING_MAX)
        i = pending_victim(a);
    if (i >= 0)
        pending_refuse(a, i, -1, eviction_why(a, i));
}

/* Take one connection from the listening socket into the table, making room for it
 * (pending_make_room). */
static void pending_add(acceptor_t *a)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int fd = accept_one(a->o->lfd, &ss, &sl);
    char addr[sizeof(a->p[0].addr)];
    pending_t *p;

    if (fd < 0) /* none to take after all, or the peer went before accept: nothing to refuse */
        return;
    sockaddr_text(&ss, addr, sizeof(addr));
    pending_make_room(a, addr);
    p = &a->p[a->n++];
    memset(p, 0, sizeof(*p));
    p->fd = fd;
    p->t0_ns = hs_now_ns();
    memcpy(p->addr, addr, sizeof(p->addr));
}

/* Connection i has been accepted: answer it, drop the others, hand it out. */
static hs_status_t pending_take(acceptor_t *a, int i, const cap_hello_t *h,
                                cap_accepted_t *out)
{
    uint8_t r[CAP_REPLY_LEN];
    pending_t p = a->p[i];
    hs_status_t st;

    a->p[i] = a->p[--a->n];
    a->done = 1;
    while (a->n > 0)
        pending_refuse(a, a->n - 1, -1, "another client was accepted first");
    cap_reply_pack(&(cap_reply_t){CAP_PROTO_VERSION, CAP_REPLY_OK, a->o->cpu_visible}, r);
    st = cap_conn_keepalive(p.fd, a->o->timeout_ns);
    if (st != HS_OK)
        goto close_fd;
    st = send_msg(p.fd, r, sizeof(r), a->o->timeout_ns);
    if (st != HS_OK)
        goto close_fd;
    out->fd = p.fd;
    out->hello = *h;
    snprintf(out->peer_addr, sizeof(out->peer_addr), "%s", p.addr);
    return HS_OK;

close_fd:
    close(p.fd);
    return st;
}

/* When connection i needs the acceptor next: the end of its time to send its hello, or,
 * complete, the end of the delay after a wrong token. */
static uint64_t pending_due(const acceptor_t *a, int i)
{
    return pending_complete(&a->p[i]) ? a->auth_after_ns : a->p[i].t0_ns + a->o->timeout_ns;
}

/* One round: wait for activity until the deadline or the first connection's due time, then
 * read and judge (a complete hello is not read further: it is judged once due). 1 = *taken
 * accepted. */
static int acceptor_round(acceptor_t *a, uint64_t deadline, cap_hello_t *h, int *taken)
{
    struct pollfd pf[1 + CAP_PENDING_MAX];
    uint64_t now = hs_now_ns(), until = deadline;
    int rc, np = a->n;

    pf[0] = (struct pollfd){.fd = a->o->lfd, .events = POLLIN};
    for (int i = 0; i < np; i++) {
        int fd = pending_complete(&a->p[i]) ? -1 : a->p[i].fd; /* -1: poll skips it */
        pf[1 + i] = (struct pollfd){.fd = fd, .events = POLLIN};
        until = pending_due(a, i) < until ? pending_due(a, i) : until;
    }
    rc = poll(pf, (nfds_t)(1 + np), now >= until ? 0 : (int)((until - now) / 1000000 + 1));
    if (rc < 0)
        return errno == EINTR ? 0 : -errno;
    now = hs_now_ns();
    for (int i = np - 1; i >= 0; i--) { /* refusals move the last entry down: go downwards */
        int v = 0;
        if (pending_complete(&a->p[i]))
            v = pending_judge(a, i, h);
        else if (pf[1 + i].revents)
            v = pending_read(a, i, h);
        else if (now >= a->p[i].t0_ns + a->o->timeout_ns)
            pending_refuse(a, i, -1, "no complete hello within the timeout");
        if (v == 1) {
            *taken = i;
            return 1;
        }
    }
    if (pf[0].revents & POLLIN)
        pending_add(a);
    return 0;
}

hs_status_t cap_conn_accept_hello(const cap_accept_opts_t *o, cap_accepted_t *out)
{
    acceptor_t a;
    uint64_t deadline = hs_now_ns() + o->timeout_ns;
    cap_hello_t h;
    char why[sizeof(a.last) + 64] = "";
    int rc = 0, taken = -1;

    memset(&a, 0, sizeof(a));
    a.o = o;
    while (rc == 0 && hs_now_ns() < deadline)
        rc = acceptor_round(&a, deadline, &h, &taken);
    if (rc == 1)
        return pending_take(&a, taken, &h, out);
    a.done = 1;
    while (a.n > 0)
        pending_refuse(&a, a.n - 1, -1, "no complete hello within the timeout");
    if (rc < 0) {
        hs_log_error("waiting for a client on TCP port %u: %s", o->port, strerror(-rc));
        return HS_ERR_ENV;
    }
    if (a.refused)
        snprintf(why, sizeof(why), " (%u connection%s refused, the last %s)", a.refused,
                 a.refused == 1 ? "" : "s", a.last);
    hs_log_error("no client connected to TCP port %u within %.1f s%s", o->port,
                 (double)o->timeout_ns / 1e9, why);
    return HS_ERR_TIMEOUT;
}

/* Nanoseconds from now to deadline (CLOCK_MONOTONIC, hs_now_ns), 0 once it has passed. */
static uint64_t ns_left(uint64_t deadline)
{
    uint64_t now = hs_now_ns();

    return deadline > now ? deadline - now : 0;
}

/* 0.1 s between two dials, or less where the deadline comes first. */
static void nap(uint64_t deadline)
{
    uint64_t ns = ns_left(deadline) < 100000000 ? ns_left(deadline) : 100000000;

    usleep((useconds_t)(ns / 1000));
}

/* Back to blocking mode, as the rest of this file's sockets are: 0, or -errno. */
static int set_blocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return -errno;
    return 0;
}

/* The outcome of fd's connect in progress by deadline: 0 connected, -ETIMEDOUT when the
 * peer did not answer (its SYNs dropped), else -errno of the failure. */
static int connect_wait(int fd, uint64_t deadline)
{
    int soerr = 0, rc = wait_fd(fd, POLLOUT, deadline);
    socklen_t sl = sizeof(soerr);

    if (rc != 0)
        return rc;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
        return -errno;
    return -soerr;
}

/* A blocking socket connected to ai by deadline, or -errno (-ETIMEDOUT: no answer). The
 * connect itself is non-blocking: a blocking one waits out the kernel's SYN retries (about
 * 127 s with tcp_syn_retries 6), whatever --timeout says. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline)
{
    int rc, fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK, ai->ai_protocol);

    if (fd < 0)
        return -errno;
    rc = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : -errno;
    if (rc == -EINPROGRESS)
        rc = connect_wait(fd, deadline);
    if (rc == 0)
        rc = set_blocking(fd);
    if (rc != 0)
        goto close_fd;
    return fd;

close_fd:
    close(fd);
    return rc;
}

/* The shortest connect to one address while others are left: Happy Eyeballs' connection
 * attempt delay (RFC 8305), time enough for a SYN and its answer across a WAN. */
#define CAP_DIAL_TRY_MIN_NS 250000000ull

/* When the connect to ai gives up: an equal share of what is left of deadline among ai and
 * the addresses after it, CAP_DIAL_TRY_MIN_NS at least, deadline at most. An address that
 * drops the connection requests (a firewall, a host gone) would otherwise use the whole
 * deadline, and the addresses after it would never be tried; the last one gets all that is
 * left, so a name of one address waits as long as before. */
static uint64_t try_deadline(const struct addrinfo *ai, uint64_t deadline)
{
    uint64_t left = ns_left(deadline), n = 0, share;

    for (; ai; ai = ai->ai_next)
        n++;
    share = left / (n ? n : 1);
    share = share > CAP_DIAL_TRY_MIN_NS ? share : CAP_DIAL_TRY_MIN_NS;
    return share < left ? hs_now_ns() + share : deadline;
}

/* A socket connected to one of res's addresses (a name may have IPv4 and IPv6 ones) by
 * deadline, each tried within its share of it (try_deadline), or -errno of the last attempt. */
static int try_connect(const struct addrinfo *res, uint64_t deadline)
{
    int fd = -ETIMEDOUT;

    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        if (ns_left(deadline) > 0)
            fd = connect_one(ai, try_deadline(ai, deadline));
    return fd;
}

/* Why host:port could not be reached within timeout_ns (err: the last attempt's errno). */
static void log_unreachable(const char *host, uint16_t port, uint64_t timeout_ns, int err)
{
    if (err == ETIMEDOUT)
        hs_log_error("cannot reach %s:%u within %.1f s (--timeout): no answer to the TCP "
                     "connection request (dropped by a firewall, a wrong address, or a server "
                     "whose queue is full)", host, port, (double)timeout_ns / 1e9);
    else
        hs_log_error("cannot reach %s:%u within %.1f s (--timeout): %s (is the server "
                     "running?)", host, port, (double)timeout_ns / 1e9, strerror(err));
}

hs_status_t cap_conn_dial(const char *host, uint16_t port, uint64_t timeout_ns, int *fd_out)
{
    struct addrinfo *res = NULL;
    uint64_t deadline = hs_now_ns() + timeout_ns;
    int fd = -ETIMEDOUT;
    const lookup_req_t q = {"--connect", host, port, 0, HS_ERR_CHECK};
    hs_status_t st = resolve_by(&q, deadline, timeout_ns, &res);

    if (st != HS_OK)
        return st;
    for (;;) { /* the server may start a moment later: dial again until the deadline */
        fd = try_connect(res, deadline);
        if (fd >= 0 || ns_left(deadline) == 0)
            break;
        nap(deadline);
        if (ns_left(deadline) == 0)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        log_unreachable(host, port, timeout_ns, -fd);
        return HS_ERR_TIMEOUT;
    }
    st = cap_conn_keepalive(fd, timeout_ns);
    if (st != HS_OK)
        goto close_fd;
    *fd_out = fd;
    return HS_OK;

close_fd:
    close(fd);
    return st;
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
        cfg[i].mtu_bytes = cap_dev_mtu_bytes(dev);
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
    if (st != HS_OK)
        return st;
    st = cap_ep_create(dev, mem, c->cfg, o->max_msg, o->timeout_ns, &c->peer);
    if (st != HS_OK)
        return st;
    cap_ep_info(c->ep, &a);
    cap_ep_info(c->peer, &b);
    st = ep_ready(c->ep, &b);
    if (st != HS_OK)
        return st;
    return ep_ready(c->peer, &a);
}

/* Client: what the server's reply says, as a status (logged unless OK). */
static hs_status_t client_reply(const cap_conn_opts_t *o, const uint8_t buf[CAP_REPLY_LEN],
                                cap_reply_t *r)
{
    char err[CAP_ERR_LEN];
    cap_parse_t p = cap_reply_parse(buf, r, err, sizeof(err));

    if (p != CAP_PARSE_OK) {
        hs_log_error("%s:%u: %s", o->host, o->port, err);
        return HS_ERR_CHECK;
    }
    if (r->status == CAP_REPLY_TOKEN)
        hs_log_error("the server at %s:%u refused this client's token: give the one the server "
                     "printed or was given (--token, or the environment's HINTSIM_TOKEN)",
                     o->host, o->port);
    else if (r->status == CAP_REPLY_VERSION)
        hs_log_error("the server at %s:%u speaks control protocol %u, this end %u: run the "
                     "same hintsim on both ends", o->host, o->port, r->version,
                     CAP_PROTO_VERSION);
    else if (r->status == CAP_REPLY_FIELD)
        hs_log_error("the server at %s:%u refused this client's hello (max_msg %llu): its log "
                     "names the field", o->host, o->port, (unsigned long long)o->max_msg);
    return r->status == CAP_REPLY_OK ? HS_OK : HS_ERR_CHECK;
}

/* Client: dial the server, send the hello and read the reply, dialling again while the
 * server closes or resets the connection before it answers: a server ending its previous
 * session can still take a connection into its listening socket's queue and then close it
 * (vm_cross_host saw calibrate's client dial the bench server that had just finished, get
 * "Connection reset by peer", and the calibrate server then wait for a client in vain).
 * Within o->timeout_ns in all; c->fd is the connection that answered. */
static hs_status_t client_hello(cap_conn_t *c, const cap_conn_opts_t *o,
                                const uint8_t mine[CAP_HELLO_LEN], cap_reply_t *r)
{
    uint64_t deadline = hs_now_ns() + o->timeout_ns;
    uint8_t theirs[CAP_REPLY_LEN];
    hs_status_t st;

    for (int attempt = 0;; attempt++) {
        uint64_t left = ns_left(deadline);
        int gone = 0, fd = -1;
        if (attempt > 0 && left < 100000000) { /* each dial gets 0.1 s at least */
            hs_log_error("%s:%u closed every connection before answering for %.1f s (a server "
                         "still ending its previous session, or not a hintsim server)", o->host,
                         o->port, (double)o->timeout_ns / 1e9);
            return HS_ERR_CHECK;
        }
        st = cap_conn_dial(o->host, o->port, left, &fd);
        if (st != HS_OK)
            return st;
        st = xfer(fd, (void *)mine, CAP_HELLO_LEN, 1, ns_left(deadline), &gone);
        if (st != HS_OK)
            goto close_fd;
        st = xfer(fd, theirs, sizeof(theirs), 0, ns_left(deadline), &gone);
        if (st != HS_OK)
            goto close_fd;
        c->fd = fd;
        return client_reply(o, theirs, r);
close_fd: /* and dial again when the server closed it before answering */
        close(fd);
        if (!gone)
            return st;
        usleep(100000);
    }
}

/* Both ends: meet the peer and learn the run's max_msg and hint (the client's), and whether
 * either end's memory is not CPU-visible (then ping-pongs use write-with-immediate). */
static hs_status_t hello(cap_conn_t *c, const cap_conn_opts_t *o, const cap_mem_ops_t *mem,
                         uint64_t *max_msg, uint64_t *hint)
{
    cap_hello_t h = {.max_msg = o->max_msg, .hint = o->hint_bytes,
                     .cpu_visible = mem->cpu_visible};
    uint8_t buf[CAP_HELLO_LEN];
    hs_status_t st;

    if (c->role == CAP_ROLE_SERVER) {
        cap_accept_opts_t a = {.lfd = o->listen_fd, .port = o->port, .timeout_ns = o->timeout_ns,
                               .token = o->token, .cpu_visible = mem->cpu_visible};
        cap_accepted_t acc;
        st = cap_conn_accept_hello(&a, &acc);
        if (st != HS_OK)
            return st;
        c->fd = acc.fd;
        snprintf(c->peer_addr, sizeof(c->peer_addr), "%s", acc.peer_addr);
        c->use_imm = !mem->cpu_visible || !acc.hello.cpu_visible;
        *max_msg = acc.hello.max_msg;
        *hint = acc.hello.hint;
        return HS_OK;
    }
    cap_reply_t r;
    if (h.hint > CAP_PROTO_MAX_HINT) /* the server only asks whether there is one */
        h.hint = CAP_PROTO_MAX_HINT;
    memcpy(h.token, o->token, CAP_TOKEN_MAX);
    cap_hello_pack(&h, buf);
    st = client_hello(c, o, buf, &r);
    if (st != HS_OK)
        return st;
    peer_address(c->fd, c->peer_addr, sizeof(c->peer_addr));
    c->use_imm = !mem->cpu_visible || !r.cpu_visible;
    *max_msg = o->max_msg;
    *hint = o->hint_bytes;
    return HS_OK;
}

/* Trade endpoint infos; the peer's is bounded (cap_info_parse) before use. */
static hs_status_t trade_info(cap_conn_t *c, uint64_t timeout_ns, cap_ep_info_t *peer)
{
    uint8_t buf[CAP_INFO_LEN];
    char err[CAP_ERR_LEN];
    cap_wire_info_t w;
    cap_ep_info_t mine;
    hs_status_t st;

    cap_ep_info(c->ep, &mine);
    info_to_wire(&mine, &w);
    cap_info_pack(&w, buf);
    st = send_msg(c->fd, buf, sizeof(buf), timeout_ns);
    if (st != HS_OK)
        return st;
    st = recv_msg(c->fd, buf, sizeof(buf), timeout_ns);
    if (st != HS_OK)
        return st;
    st = parsed(cap_info_parse(buf, c->ep->max_msg, &w, err, sizeof(err)), err);
    if (st != HS_OK)
        return st;
    info_from_wire(&w, peer);
    return HS_OK;
}

static hs_status_t open_remote(cap_conn_t *c, const cap_conn_opts_t *o, cap_dev_t *dev,
                               const cap_mem_ops_t *mem, const profile_t *p)
{
    uint64_t max_msg = 0, hint = 0;
    cap_ep_info_t peer;
    hs_status_t st;

    if (!o->token) {
        hs_log_error("a %s needs the session's token", c->role == CAP_ROLE_SERVER ?
                     "--server" : "--connect");
        return HS_ERR_USAGE;
    }
    if (c->role == CAP_ROLE_CLIENT && (o->max_msg < 1 || o->max_msg > CAP_PROTO_MAX_MSG)) {
        hs_log_error("largest message %llu is outside 1..%llu", (unsigned long long)o->max_msg,
                     (unsigned long long)CAP_PROTO_MAX_MSG);
        return HS_ERR_INVALID;
    }
    st = hello(c, o, mem, &max_msg, &hint);
    if (st != HS_OK)
        return st;
    st = cap_conn_make_cfg(p, hint, dev, c->cfg);
    if (st != HS_OK)
        return st;
    st = cap_ep_create(dev, mem, c->cfg, max_msg, o->timeout_ns, &c->ep);
    if (st != HS_OK)
        return st;
    st = trade_info(c, o->timeout_ns, &peer);
    if (st != HS_OK)
        return st;
    memcpy(c->peer_gid, peer.gid, sizeof(c->peer_gid));
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
        if (st != HS_OK)
            goto close_conn;
        st = open_loop(c, o, dev, mem);
    } else {
        st = open_remote(c, o, dev, mem, p);
    }
    if (st != HS_OK)
        goto close_conn;
    *out = c;
    return HS_OK;

close_conn:
    cap_conn_close(c, 0);
    return st;
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

    if (st != HS_OK)
        return st;
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

/* One loopback round: the ping from qa lands at qb, qb's echo lands back at qa. */
static hs_status_t loop_round(cap_conn_t *c, cap_qp_t *qa, cap_qp_t *qb, uint64_t i,
                              uint64_t size)
{
    hs_status_t st = send_ping(c->ep, qa, i, size, c->use_imm);

    if (st != HS_OK)
        return st;
    st = wait_arrival(c->peer, qb, size, pp_value(i), c->use_imm);
    if (st != HS_OK)
        return st;
    st = send_ping(c->peer, qb, i, size, c->use_imm);
    if (st != HS_OK)
        return st;
    return wait_arrival(c->ep, qa, size, pp_value(i), c->use_imm);
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
        st = loop_round(c, qa, qb, i, size);
        t = pp_ticks();
        half_rtt_ns[i] = t - t_prev;
        t_prev = t;
    }
    pp_clock_finish(&clk, half_rtt_ns, count);
    if (st != HS_OK)
        return st;
    st = cap_qp_drain(c->peer, qb, NULL);
    if (st != HS_OK)
        return st;
    return cap_qp_drain(c->ep, qa, NULL);
}

/* Client: the server's ack of a command or of its end (bounded: it must be 1). */
static hs_status_t recv_ack(int fd, uint64_t timeout_ns)
{
    uint8_t buf[CAP_ACK_LEN];
    char err[CAP_ERR_LEN];
    hs_status_t st = recv_msg(fd, buf, sizeof(buf), timeout_ns);

    return st == HS_OK ? parsed(cap_ack_parse(buf, err, sizeof(err)), err) : st;
}

static hs_status_t send_ack(int fd, uint64_t timeout_ns)
{
    uint8_t buf[CAP_ACK_LEN];

    cap_ack_pack(buf);
    return send_msg(fd, buf, sizeof(buf), timeout_ns);
}

/* One client round: the ping out and the server's echo back. */
static hs_status_t client_round(cap_conn_t *c, cap_qp_t *q, uint64_t i, uint64_t size)
{
    hs_status_t st = send_ping(c->ep, q, i, size, c->use_imm);

    if (st != HS_OK)
        return st;
    return wait_arrival(c->ep, q, size, pp_value(i), c->use_imm);
}

static hs_status_t pingpong_client(cap_conn_t *c, cap_qp_t *q, uint64_t size, uint64_t count,
                                   uint64_t *half_rtt_ns)
{
    cap_cmd_t cmd = {.cmd = CAP_CMD_PINGPONG, .path = (uint32_t)q->id, .size = size,
                     .count = count};
    uint64_t tmo = c->ep->timeout_ns, t_prev;
    uint8_t buf[CAP_CMD_LEN];
    pp_clock_t clk;
    hs_status_t st;

    landing_clear(c->ep, size);
    cap_cmd_pack(&cmd, buf);
    st = send_msg(c->fd, buf, sizeof(buf), tmo);
    if (st != HS_OK)
        return st;
    st = recv_ack(c->fd, tmo);
    if (st != HS_OK)
        return st;
    pp_clock_start(&clk);
    t_prev = clk.tick0;
    for (uint64_t i = 0; st == HS_OK && i < count; i++) {
        uint64_t t;
        st = client_round(c, q, i, size);
        t = pp_ticks();
        half_rtt_ns[i] = t - t_prev;
        t_prev = t;
    }
    pp_clock_finish(&clk, half_rtt_ns, count);
    if (st != HS_OK)
        return st;
    st = cap_qp_drain(c->ep, q, NULL);
    if (st != HS_OK)
        return st;
    return recv_ack(c->fd, tmo);
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
    if (count > CAP_PROTO_MAX_COUNT) {
        hs_log_error("ping-pong count %llu is above %llu", (unsigned long long)count,
                     (unsigned long long)CAP_PROTO_MAX_COUNT);
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

/* cmd was bounded by cap_cmd_parse against this end's max_msg. */
static hs_status_t serve_pingpong(cap_conn_t *c, const cap_cmd_t *cmd)
{
    uint64_t tmo = c->ep->timeout_ns;
    cap_qp_t *q = &c->ep->qp[cmd->path];
    hs_status_t st;

    landing_clear(c->ep, cmd->size);
    st = send_ack(c->fd, tmo);
    if (st != HS_OK)
        return st;
    for (uint64_t i = 0; i < cmd->count; i++) {
        st = wait_arrival(c->ep, q, cmd->size, pp_value(i), c->use_imm);
        if (st != HS_OK)
            return st;
        st = send_ping(c->ep, q, i, cmd->size, c->use_imm);
        if (st != HS_OK)
            return st;
    }
    st = cap_qp_drain(c->ep, q, NULL);
    if (st != HS_OK)
        return st;
    return send_ack(c->fd, tmo);
}

hs_status_t cap_conn_serve(cap_conn_t *c, int *more)
{
    /* Between commands the client may run long one-sided phases: wait much longer than
     * one operation's timeout, but still bounded. A client that dies closes the socket; one
     * whose host vanishes is noticed by TCP keepalive in about twice the timeout
     * (cap_conn_keepalive). */
    uint64_t idle_ns = c->ep->timeout_ns * 60;
    uint8_t buf[CAP_CMD_LEN];
    char err[CAP_ERR_LEN];
    cap_cmd_t cmd;
    hs_status_t st;

    for (;;) {
        st = recv_msg(c->fd, buf, sizeof(buf), idle_ns);
        if (st != HS_OK)
            return st;
        st = parsed(cap_cmd_parse(buf, c->ep->max_msg, &cmd, err, sizeof(err)), err);
        if (st != HS_OK)
            return st;
        if (cmd.cmd == CAP_CMD_END) {
            *more = cmd.more;
            return HS_OK;
        }
        st = serve_pingpong(c, &cmd);
        if (st != HS_OK)
            return st;
    }
}

void cap_conn_close(cap_conn_t *c, int more)
{
    cap_cmd_t end = {.cmd = CAP_CMD_END, .more = more != 0};
    uint8_t buf[CAP_CMD_LEN];

    if (!c)
        return;
    cap_cmd_pack(&end, buf);
    if (c->role == CAP_ROLE_CLIENT && c->fd >= 0 && c->ep)
        send_msg(c->fd, buf, sizeof(buf), c->ep->timeout_ns);
    if (c->fd >= 0)
        close(c->fd);
    cap_ep_destroy(c->peer);
    cap_ep_destroy(c->ep);
    free(c);
}
