/* test_cap_keepalive.c - the control connection's TCP keepalive (cap_conn_keepalive,
 * cap_conn_accept): the probe timing a timeout gives, and, in a network namespace of its own
 * (root; skipped without one), a client whose address vanishes (no FIN, no reset: a host
 * gone) is noticed by the server's socket within about twice the timeout, while a socket
 * without keepalive on the same wire notices nothing. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture/cap_conn.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"

#define PORT 18515

static int sockopt(int fd, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof(v);

    assert_int_equal(getsockopt(fd, level, name, &v, &len), 0);
    return v;
}

/* idle = the timeout rounded up to seconds, probes a third of it apart, three of them */
static void test_probe_timing(void **state)
{
    (void)state;
    static const struct {
        uint64_t timeout_ns;
        int idle, intvl;
    } cases[] = {{10000000000ull, 10, 4}, {1000000000ull, 1, 1}, {1500000000ull, 2, 1},
                 {300000000ull, 1, 1}, {60000000000ull, 60, 20}};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        assert_int_equal(cap_conn_keepalive(fd, cases[i].timeout_ns), HS_OK);
        assert_int_equal(sockopt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
        assert_int_equal(sockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE), cases[i].idle);
        assert_int_equal(sockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL), cases[i].intvl);
        assert_int_equal(sockopt(fd, IPPROTO_TCP, TCP_KEEPCNT), 3);
        close(fd);
    }
    /* not a socket: a clear error, not a crash */
    assert_int_equal(cap_conn_keepalive(-1, 1000000000ull), HS_ERR_ENV);
}

/* A private network namespace whose loopback also answers 10.77.0.1, or skip. */
static void private_net_or_skip(void)
{
    if (unshare(CLONE_NEWNET) != 0) {
        print_message("skipped: no network namespace of our own (%s; needs root)\n",
                      strerror(errno));
        skip();
    }
    if (system("ip link set lo up && ip addr add 10.77.0.1/32 dev lo") != 0) {
        print_message("skipped: 'ip' could not set up the namespace's loopback\n");
        skip();
    }
}

static void test_vanished_client(void **state)
{
    (void)state;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(PORT),
                             .sin_addr.s_addr = htonl(0x0a4d0001)}; /* 10.77.0.1 */
    int lfd = -1, sfd = -1, cfd;

    private_net_or_skip();
    assert_int_equal(cap_conn_listen("0.0.0.0", PORT, 5000000000ull, &lfd), HS_OK);
    cfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(cfd >= 0);
    assert_int_equal(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(cap_conn_accept(lfd, PORT, 1000000000ull, &sfd), HS_OK); /* 1 s */
    assert_int_equal(sockopt(sfd, SOL_SOCKET, SO_KEEPALIVE), 1);
    /* the client's host goes away: its address is gone, nothing more reaches either end */
    assert_int_equal(system("ip addr del 10.77.0.1/32 dev lo"), 0);
    uint64_t t0 = hs_now_ns();
    struct pollfd p = {.fd = sfd, .events = POLLIN};
    int rc = poll(&p, 1, 20000);
    double waited_s = (double)(hs_now_ns() - t0) * 1e-9;
    char b;
    print_message("server socket: poll %d after %.1f s\n", rc, waited_s);
    assert_int_equal(rc, 1);
    assert_true(waited_s < 6); /* 1 s idle + 3 probes 1 s apart, with slack */
    assert_int_equal(recv(sfd, &b, 1, 0), -1);
    assert_int_equal(errno, ETIMEDOUT);
    /* the client's socket, without keepalive, has noticed nothing */
    p = (struct pollfd){.fd = cfd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 0), 0);
    close(cfd);
    close(sfd);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_timing),
        cmocka_unit_test(test_vanished_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
