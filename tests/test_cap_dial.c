/* test_cap_dial.c - the client's dial of the control connection (cap_conn_dial), on loopback
 * TCP with no device: a server whose host drops the connection requests (a listener whose
 * accept queue is full: Linux drops the next SYN, as a firewall would) is given up on at
 * --timeout, not after the kernel's SYN retries (about 127 s); nothing listening is reported
 * as refused within the timeout; a server that is there gives a blocking socket with
 * keepalive, as the rest of the control protocol expects. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture/cap_conn.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"

#define NFILL 3

/* A non-blocking connect to 127.0.0.1:port in progress (or done): its fd. */
static int start_connect(uint16_t port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        assert_int_equal(errno, EINPROGRESS);
    return fd;
}

/* A listener on 127.0.0.1 (an ephemeral port, in *port) with the given backlog. */
static int listener(int backlog, uint16_t *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, backlog), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* The next connect to port gets no answer within 0.3 s, or the test is skipped (a kernel
 * that takes connections beyond the accept queue). */
static void assert_syn_dropped_or_skip(uint16_t port)
{
    int fd = start_connect(port);
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int rc = poll(&p, 1, 300);

    close(fd);
    if (rc != 0) {
        print_message("skipped: a connect to a full accept queue was answered (poll %d)\n", rc);
        skip();
    }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dial_dropped_syn),
        cmocka_unit_test(test_dial_refused),
        cmocka_unit_test(test_dial_ok),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
