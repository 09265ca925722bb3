/* test_cap_dial.c - the client's dial of the control connection (cap_conn_dial), on loopback
 * TCP with no device: a server whose host drops the connection requests (a listener whose
 * accept queue is full: Linux drops the next SYN, as a firewall would) is given up on at
 * --timeout, not after the kernel's SYN retries (about 127 s); nothing listening is reported
 * as refused within the timeout; a server that is there gives a blocking socket with
 * keepalive, as the rest of the control protocol expects. In network and mount namespaces
 * of its own (root; skipped without them), with the test's /etc/hosts and /etc/resolv.conf:
 * a name server that never answers is given up on at --timeout too, and of a name's two
 * addresses the first, which drops the connection requests, leaves the second time enough. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture/cap_conn.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"

#define NFILL 3
#define TWO_NAME "two-addresses.hintsim.test"     /* the test's /etc/hosts: two addresses */
#define SILENT_NAME "silent-resolver.hintsim.test" /* not there: asked of the name server */

/* A non-blocking connect to addr:port (IPv4, host order) in progress (or done): its fd. */
static int start_connect_to(uint32_t addr, uint16_t port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(addr)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        assert_int_equal(errno, EINPROGRESS);
    return fd;
}

static int start_connect(uint16_t port)
{
    return start_connect_to(INADDR_LOOPBACK, port);
}

/* A listener on addr:*port (IPv4, host order; port 0: an ephemeral one, put in *port) with
 * the given backlog. */
static int listener_at(uint32_t addr, int backlog, uint16_t *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(*port),
                             .sin_addr.s_addr = htonl(addr)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, backlog), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A listener on 127.0.0.1 (an ephemeral port, in *port) with the given backlog. */
static int listener(int backlog, uint16_t *port)
{
    *port = 0;
    return listener_at(INADDR_LOOPBACK, backlog, port);
}

/* The next connect to addr:port gets no answer within 0.3 s, or the test is skipped (a
 * kernel that takes connections beyond the accept queue). */
static void assert_syn_dropped_at_or_skip(uint32_t addr, uint16_t port)
{
    int fd = start_connect_to(addr, port);
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int rc = poll(&p, 1, 300);

    close(fd);
    if (rc != 0) {
        print_message("skipped: a connect to a full accept queue was answered (poll %d)\n", rc);
        skip();
    }
}

static void assert_syn_dropped_or_skip(uint16_t port)
{
    assert_syn_dropped_at_or_skip(INADDR_LOOPBACK, port);
}

static void test_dial_dropped_syn(void **state)
{
    (void)state;
    int fill[NFILL], lfd, fd = -1;
    hs_test_stderr_t cap;
    char want[96], *log;
    uint16_t port;
    hs_status_t st;
    uint64_t t0;
    double took_s;

    lfd = listener(0, &port); /* nobody accepts: the queue fills up */
    for (int i = 0; i < NFILL; i++)
        fill[i] = start_connect(port);
    usleep(100000);
    assert_syn_dropped_or_skip(port);
    hs_test_stderr_begin(&cap);
    t0 = hs_now_ns();
    st = cap_conn_dial("127.0.0.1", port, 1000000000ull, &fd); /* --timeout 1 */
    took_s = (double)(hs_now_ns() - t0) / 1e9;
    log = hs_test_stderr_end(&cap);
    print_message("dial to a port whose SYNs are dropped: status %d after %.2f s: %s", st,
                  took_s, log);
    assert_int_equal(st, HS_ERR_TIMEOUT);
    assert_int_equal(fd, -1);
    assert_true(took_s >= 0.9); /* it kept trying until the deadline */
    assert_true(took_s < 10.0); /* not the kernel's 127 s of SYN retries */
    snprintf(want, sizeof(want), "cannot reach 127.0.0.1:%u within 1.0 s (--timeout)", port);
    assert_non_null(strstr(log, want));
    assert_non_null(strstr(log, "no answer to the TCP connection request"));
    free(log);
    for (int i = 0; i < NFILL; i++)
        close(fill[i]);
    close(lfd);
}

/* Nothing listens on the port: refused, said so, within the timeout. */
static void test_dial_refused(void **state)
{
    (void)state;
    hs_test_stderr_t cap;
    char want[96], *log;
    int lfd, fd = -1;
    uint16_t port;
    uint64_t t0;
    double took_s;

    lfd = listener(1, &port);
    close(lfd); /* the port is free again: connects to it are refused */
    hs_test_stderr_begin(&cap);
    t0 = hs_now_ns();
    assert_int_equal(cap_conn_dial("127.0.0.1", port, 500000000ull, &fd), HS_ERR_TIMEOUT);
    took_s = (double)(hs_now_ns() - t0) / 1e9;
    log = hs_test_stderr_end(&cap);
    assert_int_equal(fd, -1);
    assert_true(took_s < 5.0);
    snprintf(want, sizeof(want), "cannot reach 127.0.0.1:%u within 0.5 s (--timeout): %s",
             port, strerror(ECONNREFUSED));
    assert_non_null(strstr(log, want));
    free(log);
}

/* A server that is there: a connected socket, blocking, with keepalive. */
static void test_dial_ok(void **state)
{
    (void)state;
    int lfd, sfd, fd = -1, ka = 0;
    socklen_t sl = sizeof(ka);
    uint16_t port;
    char b = 'x';

    lfd = listener(1, &port);
    assert_int_equal(cap_conn_dial("127.0.0.1", port, 2000000000ull, &fd), HS_OK);
    assert_true(fd >= 0);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &ka, &sl), 0);
    assert_int_equal(ka, 1);
    sfd = accept(lfd, NULL, NULL);
    assert_true(sfd >= 0);
    assert_int_equal(send(fd, &b, 1, 0), 1);
    b = 0;
    assert_int_equal(recv(sfd, &b, 1, 0), 1);
    assert_int_equal(b, 'x');
    close(sfd);
    close(fd);
    close(lfd);
}

/* ---- name lookups, in namespaces of this process's own ------------------------------- */

/* Bind-mount a file holding text over path (in this process's own mount namespace). */
static int mount_text(const char *path, const char *text)
{
    char tmp[] = "/tmp/hs-dial-XXXXXX";
    int fd = mkstemp(tmp), rc = -1;

    if (fd < 0)
        return -1;
    if (write(fd, text, strlen(text)) == (ssize_t)strlen(text))
        rc = mount(tmp, path, NULL, MS_BIND, NULL);
    close(fd);
    unlink(tmp); /* the mount keeps the file */
    return rc;
}

/* Once per process: network and mount namespaces of its own (root; else skip) with loopback
 * up, an /etc/hosts that gives TWO_NAME two loopback addresses, and an /etc/resolv.conf whose
 * only name server is 127.0.0.1, where a UDP socket that is never read stands in for a name
 * server that is down: each query waits the resolver's 30 s, twice. */
static void private_names_or_skip(void)
{
    static int ready, dns_fd = -1;
    struct sockaddr_in dns = {.sin_family = AF_INET, .sin_port = htons(53),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

    if (ready)
        return;
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) {
        print_message("skipped: no namespaces of our own (%s; needs root)\n", strerror(errno));
        skip();
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        system("ip link set lo up") != 0 ||
        mount_text("/etc/hosts", "127.0.0.1 localhost\n127.0.0.1 " TWO_NAME "\n"
                   "127.0.0.2 " TWO_NAME "\n") != 0 ||
        mount_text("/etc/resolv.conf", "nameserver 127.0.0.1\noptions timeout:30 "
                   "attempts:2\n") != 0) {
        print_message("skipped: the namespace's loopback, hosts or resolv.conf (%s)\n",
                      strerror(errno));
        skip();
    }
    dns_fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(dns_fd >= 0);
    assert_int_equal(bind(dns_fd, (struct sockaddr *)&dns, sizeof(dns)), 0);
    ready = 1;
}

typedef struct {
    const char *host;
    uint16_t port;
    uint64_t timeout_ns;
    int listen; /* cap_conn_listen (the server's --bind), not cap_conn_dial */
    int fd;
    hs_status_t st;
    double took_s;
} dial_t;

static void *dial_main(void *arg)
{
    dial_t *d = arg;
    uint64_t t0 = hs_now_ns();

    d->st = d->listen ? cap_conn_listen(d->host, d->port, d->timeout_ns, &d->fd)
                      : cap_conn_dial(d->host, d->port, d->timeout_ns, &d->fd);
    d->took_s = (double)(hs_now_ns() - t0) / 1e9;
    return NULL;
}

/* cap_conn_dial in a thread given limit_s to end: 1 when it did, else 0 (the thread left
 * behind: a dial that is not bounded). */
static int dial_within(dial_t *d, int limit_s)
{
    struct timespec end;
    pthread_t th;

    d->fd = -1;
    assert_int_equal(pthread_create(&th, NULL, dial_main, d), 0);
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += limit_s;
    return pthread_timedjoin_np(th, NULL, &end) == 0;
}

static void assert_dial_ended(const dial_t *d, int ended, int limit_s)
{
    if (!ended)
        fail_msg("%s(%s, --timeout %.1f) still running after %d s",
                 d->listen ? "cap_conn_listen" : "cap_conn_dial", d->host,
                 (double)d->timeout_ns / 1e9, limit_s);
}

/* d's lookup of SILENT_NAME, asked of a name server that never answers, with a 1 s timeout:
 * it ends at the timeout with HS_ERR_TIMEOUT, naming its option, the name and the timeout,
 * as the other dials that run out of time do. */
static void assert_silent_lookup_times_out(dial_t *d, const char *what)
{
    hs_test_stderr_t cap;
    char want[160], *log;
    int ended;

    private_names_or_skip();
    hs_test_stderr_begin(&cap);
    ended = dial_within(d, 10);
    log = hs_test_stderr_end(&cap);
    assert_dial_ended(d, ended, 10);
    print_message("%s of a name the resolver never answers: status %d after %.2f s: %s", what,
                  d->st, d->took_s, log);
    assert_int_equal(d->st, HS_ERR_TIMEOUT);
    assert_int_equal(d->fd, -1);
    assert_true(d->took_s >= 0.9);
    assert_true(d->took_s < 3.0);
    snprintf(want, sizeof(want), "%s " SILENT_NAME ": the name lookup did not finish within "
             "1.0 s (--timeout)", what);
    assert_non_null(strstr(log, want));
    free(log);
}

/* The client's --connect name. */
static void test_dial_silent_resolver(void **state)
{
    (void)state;
    dial_t d = {.host = SILENT_NAME, .port = 9, .timeout_ns = 1000000000ull};
    assert_silent_lookup_times_out(&d, "--connect");
}

/* The server's --bind name (cap_conn_listen). */
static void test_listen_silent_resolver(void **state)
{
    (void)state;
    dial_t d = {.host = SILENT_NAME, .port = 0, .timeout_ns = 1000000000ull, .listen = 1};
    assert_silent_lookup_times_out(&d, "--bind");
}

/* The addresses (IPv4, host order) getaddrinfo gives name, in its order: two. */
static void two_addresses(const char *name, uint32_t addr[2])
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int n = 0;

    assert_int_equal(getaddrinfo(name, NULL, &hints, &res), 0);
    for (const struct addrinfo *ai = res; ai && n < 2; ai = ai->ai_next)
        addr[n++] = ntohl(((const struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr);
    assert_true(n == 2 && !res->ai_next->ai_next);
    freeaddrinfo(res);
}

/* Of a name's two addresses the first drops the connection requests (a full accept queue)
 * and a server listens on the second: the dial reaches it well within --timeout, the first
 * having had its share of the deadline, half. */
static void test_dial_first_address_drops(void **state)
{
    (void)state;
    dial_t d = {.host = TWO_NAME, .timeout_ns = 4000000000ull}; /* --timeout 4 */
    int fill[NFILL], hole, live, sfd, ended;
    hs_test_stderr_t cap;
    uint32_t addr[2] = {0, 0};
    uint16_t port = 0;
    char *log;

    private_names_or_skip();
    two_addresses(TWO_NAME, addr); /* the order is getaddrinfo's (RFC 6724), not the file's */
    live = listener_at(addr[1], 8, &port);
    hole = listener_at(addr[0], 0, &port); /* the same port: nobody accepts */
    for (int i = 0; i < NFILL; i++)
        fill[i] = start_connect_to(addr[0], port);
    usleep(100000);
    assert_syn_dropped_at_or_skip(addr[0], port);
    d.port = port;
    hs_test_stderr_begin(&cap);
    ended = dial_within(&d, 10);
    log = hs_test_stderr_end(&cap);
    assert_dial_ended(&d, ended, 10);
    print_message("dial of %s (first address dropping SYNs): status %d after %.2f s %s\n",
                  TWO_NAME, d.st, d.took_s, log);
    assert_int_equal(d.st, HS_OK);
    assert_true(d.took_s < 3.0);
    sfd = accept(live, NULL, NULL); /* it is the live server's connection */
    assert_true(sfd >= 0);
    free(log);
    close(sfd);
    close(d.fd);
    for (int i = 0; i < NFILL; i++)
        close(fill[i]);
    close(hole);
    close(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dial_dropped_syn),
        cmocka_unit_test(test_dial_refused),
        cmocka_unit_test(test_dial_ok),
        cmocka_unit_test(test_dial_silent_resolver),
        cmocka_unit_test(test_listen_silent_resolver),
        cmocka_unit_test(test_dial_first_address_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
