/* test_cap_hostile.c - a capture server's wait for its client under hostile connections, on
 * loopback TCP with the real accept loop (cap_conn_accept_hello; no verbs device needed):
 * connect-then-close, a short hello, garbage, the old protocol, another version, a wrong or
 * empty token, max_msg huge, wrapping (2^63+1), zero and negative as unsigned, a hint and
 * flags out of bounds, and a connection that says nothing. Each must be refused as
 * cap_hostile.h expects and logged, and the server must then accept the good client that
 * comes last (and drop the silent one). A server that sees only strays times out, counting
 * them. After a wrong token the server checks no other for CAP_AUTH_DELAY_NS, so guesses
 * sent at once are answered a delay apart, and a hello with a bad head is never told whether
 * its token was right. And the CLI's own checks of --token / --bind (before any device is
 * opened): a token shorter than 16 characters is refused. The listening socket is
 * non-blocking: a connection another takes between the server's poll and its accept leaves
 * the server waiting, not blocked in accept past its timeout (accept is wrapped, -Wl,--wrap,
 * so that the other taker comes exactly then). One peer that floods the server with
 * connections evicts its own, never those of the client at another address. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture/cap_conn.h"
#include "common/hs_util.h"
#include "tests/cap_hostile.h"
#include "tests/hs_test.h"

#define TOKEN "hostile-test-token"

typedef struct {
    int lfd;
    uint16_t port;
    uint64_t timeout_ns;
    uint8_t token[CAP_TOKEN_MAX];
    int plain; /* cap_conn_accept, not cap_conn_accept_hello */
    pthread_t th;
    hs_status_t st;
    cap_accepted_t acc;
} srv_t;

static void *srv_main(void *arg)
{
    srv_t *s = arg;
    cap_accept_opts_t o = {.lfd = s->lfd, .port = s->port, .timeout_ns = s->timeout_ns,
                           .token = s->token, .cpu_visible = 1};

    if (s->plain)
        s->st = cap_conn_accept(s->lfd, s->port, s->timeout_ns, &s->acc.fd);
    else
        s->st = cap_conn_accept_hello(&o, &s->acc);
    return NULL;
}

/* accept as cap_conn.c calls it (this test is linked with -Wl,--wrap=accept). Armed, it
 * lets another taker come first: the real accept takes the connection that poll announced
 * and closes it, and then the caller's own accept runs on the emptied queue, as where
 * another process shares the listening socket or the connection was aborted meanwhile. */
int __real_accept(int fd, struct sockaddr *sa, socklen_t *sl);
int __wrap_accept(int fd, struct sockaddr *sa, socklen_t *sl);
static int taker_armed;

int __wrap_accept(int fd, struct sockaddr *sa, socklen_t *sl)
{
    if (__atomic_exchange_n(&taker_armed, 0, __ATOMIC_SEQ_CST)) {
        int taken = __real_accept(fd, NULL, NULL);
        if (taken >= 0)
            close(taken);
    }
    return __real_accept(fd, sa, sl);
}

/* A server on 127.0.0.1 (an ephemeral port) waiting up to timeout_s in a thread, for a
 * hello or (plain) for any connection. */
static void srv_start_as(srv_t *s, double timeout_s, int plain)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);

    memset(s, 0, sizeof(*s));
    s->plain = plain;
    assert_int_equal(cap_conn_listen("127.0.0.1", 0, 5000000000ull, &s->lfd), HS_OK);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&sa, &sl), 0);
    s->port = ntohs(sa.sin_port);
    s->timeout_ns = (uint64_t)(timeout_s * 1e9);
    assert_int_equal(cap_token_from_text(TOKEN, s->token, NULL, 0), 0);
    s->acc.fd = -1;
    assert_int_equal(pthread_create(&s->th, NULL, srv_main, s), 0);
}

static void srv_start(srv_t *s, double timeout_s)
{
    srv_start_as(s, timeout_s, 0);
}

static int count(const char *text, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* the server closed fd within 5 s */
static int closed_by_peer(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b;

    return poll(&p, 1, 5000) == 1 && recv(fd, &b, 1, 0) <= 0;
}

static void test_hostile_then_good(void **state)
{
    (void)state;
    hs_test_stderr_t cap;
    char err[256], *log;
    int silent, good = -1;
    srv_t s;

    hs_test_stderr_begin(&cap);
    srv_start(&s, 30);
    silent = hostile_silent("127.0.0.1", s.port); /* held open all along: must not block */
    assert_true(silent >= 0);
    for (size_t i = 0; i < hostile_ncases; i++)
        if (hostile_run(&hostile_cases[i], "127.0.0.1", s.port, TOKEN, 10000, err,
                        sizeof(err)) != 0)
            fail_msg("%s", err);
    usleep(200000); /* the server reads the cases that expect no answer (close, short) */
    if (hostile_good_hello("127.0.0.1", s.port, TOKEN, 4096, 10000, &good, err,
                           sizeof(err)) != 0)
        fail_msg("the good client after the hostile ones: %s", err);
    pthread_join(s.th, NULL);
    log = hs_test_stderr_end(&cap);
    assert_int_equal(s.st, HS_OK);
    assert_int_equal(s.acc.hello.max_msg, 4096);
    assert_string_equal(s.acc.peer_addr, "127.0.0.1");
    assert_true(closed_by_peer(silent)); /* dropped once the client was accepted */
    for (size_t i = 0; i < hostile_ncases; i++)
        if (!strstr(log, hostile_cases[i].logged))
            fail_msg("case %s: the server's log lacks '%s'", hostile_cases[i].name,
                     hostile_cases[i].logged);
    assert_int_equal(count(log, "refused a connection from 127.0.0.1"), (int)hostile_ncases + 1);
    assert_non_null(strstr(log, "another client was accepted first"));
    free(log);
    close(silent);
    close(good);
    close(s.acc.fd);
    close(s.lfd);
}

/* Only strays: the server's wait ends at its timeout, saying how many it refused. */
static void test_strays_only(void **state)
{
    (void)state;
    hs_test_stderr_t cap;
    char err[256], *log;
    srv_t s;

    hs_test_stderr_begin(&cap);
    srv_start(&s, 1.5);
    for (size_t i = 0; i < hostile_ncases; i++)
        if (strcmp(hostile_cases[i].name, "wrap") == 0 ||
            strcmp(hostile_cases[i].name, "token") == 0)
            assert_int_equal(hostile_run(&hostile_cases[i], "127.0.0.1", s.port, TOKEN, 5000,
                                         err, sizeof(err)), 0);
    pthread_join(s.th, NULL);
    log = hs_test_stderr_end(&cap);
    assert_int_equal(s.st, HS_ERR_TIMEOUT);
    assert_non_null(strstr(log, "no client connected to TCP port"));
    assert_non_null(strstr(log, "(2 connections refused, the last from 127.0.0.1: hello: "));
    free(log);
    close(s.lfd);
}

/* A silent connection is dropped after the timeout, and a client after it is still served. */
static void test_silent_expires(void **state)
{
    (void)state;
    hs_test_stderr_t cap;
    char *log;
    srv_t s;
    int silent;

    hs_test_stderr_begin(&cap);
    srv_start(&s, 1.0);
    silent = hostile_silent("127.0.0.1", s.port);
    assert_true(silent >= 0);
    assert_true(closed_by_peer(silent));
    pthread_join(s.th, NULL);
    log = hs_test_stderr_end(&cap);
    assert_int_equal(s.st, HS_ERR_TIMEOUT);
    assert_non_null(strstr(log, "no complete hello within the timeout"));
    free(log);
    close(silent);
    close(s.lfd);
}

/* A connection to 127.0.0.1:port that has sent hello (CAP_HELLO_LEN bytes): its fd. */
static int send_hello(uint16_t port, const uint8_t *hello)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(send(fd, hello, CAP_HELLO_LEN, MSG_NOSIGNAL), CAP_HELLO_LEN);
    return fd;
}

/* A hello of max_msg 4096 with token text (any length: it goes on the wire as it is). */
static void hello_with(const char *token, uint8_t hello[CAP_HELLO_LEN])
{
    cap_hello_t h = {.max_msg = 4096, .hint = 0, .cpu_visible = 1};

    memcpy(h.token, token, strlen(token));
    cap_hello_pack(&h, hello);
}

/* Wait up to 15 s for each of fd[0..n) to bring a whole reply: when it came (ns, in at[i]),
 * and its status. */
static void replies_timed(const int *fd, int n, uint64_t *at, cap_reply_t *rep)
{
    uint8_t buf[8][CAP_REPLY_LEN];
    size_t got[8] = {0};
    uint64_t end = hs_now_ns() + 15000000000ull;
    int left = n;

    assert_true(n <= 8);
    while (left > 0 && hs_now_ns() < end) {
        struct pollfd p[8];
        for (int i = 0; i < n; i++)
            p[i] = (struct pollfd){.fd = got[i] < CAP_REPLY_LEN ? fd[i] : -1, .events = POLLIN};
        assert_true(poll(p, (nfds_t)n, 1000) >= 0);
        for (int i = 0; i < n; i++) {
            if (!p[i].revents)
                continue;
            ssize_t r = recv(fd[i], buf[i] + got[i], CAP_REPLY_LEN - got[i], 0);
            assert_true(r > 0); /* a reply, not a close */
            got[i] += (size_t)r;
            if (got[i] == CAP_REPLY_LEN) {
                at[i] = hs_now_ns();
                assert_int_equal(cap_reply_parse(buf[i], &rep[i], NULL, 0), CAP_PARSE_OK);
                left--;
            }
        }
    }
    assert_int_equal(left, 0);
}

/* Wrong tokens sent at once are checked one CAP_AUTH_DELAY_NS apart, not all at once; the
 * right one after them is still served. */
static void test_wrong_token_delay(void **state)
{
    (void)state;
    enum { NGUESS = 3 };
    uint8_t hello[CAP_HELLO_LEN];
    int fd[NGUESS], good = -1;
    uint64_t at[NGUESS], first = UINT64_MAX, last = 0;
    cap_reply_t rep[NGUESS];
    hs_test_stderr_t cap;
    char err[256], *log;
    double spread_s;
    srv_t s;

    hs_test_stderr_begin(&cap);
    srv_start(&s, 20);
    hello_with("guess-guess-guess-0", hello);
    for (int i = 0; i < NGUESS; i++)
        fd[i] = send_hello(s.port, hello);
    replies_timed(fd, NGUESS, at, rep);
    for (int i = 0; i < NGUESS; i++) {
        assert_int_equal(rep[i].status, CAP_REPLY_TOKEN);
        first = at[i] < first ? at[i] : first;
        last = at[i] > last ? at[i] : last;
        close(fd[i]);
    }
    spread_s = (double)(last - first) / 1e9;
    print_message("%d wrong tokens sent at once: answered over %.2f s\n", NGUESS, spread_s);
    if (hostile_good_hello("127.0.0.1", s.port, TOKEN, 4096, 10000, &good, err,
                           sizeof(err)) != 0)
        fail_msg("the good client after the wrong tokens: %s", err);
    pthread_join(s.th, NULL);
    log = hs_test_stderr_end(&cap);
    assert_int_equal(s.st, HS_OK);
    /* the 2nd and the 3rd each waited the delay after the one before (no upper bound) */
    assert_true(spread_s >= (NGUESS - 1) * 0.9 * (double)CAP_AUTH_DELAY_NS / 1e9);
    assert_int_equal(count(log, "hello: wrong token"), NGUESS);
    free(log);
    close(good);
    close(s.acc.fd);
    close(s.lfd);
}

/* A hello with a bad head is refused without a word, whatever its token: answering "a field
 * is wrong" to the right token would tell a guess right without the delay. */
static void test_bad_head_no_oracle(void **state)
{
    (void)state;
    uint8_t hello[CAP_HELLO_LEN], b[CAP_REPLY_LEN];
    struct pollfd p;
    hs_test_stderr_t cap;
    char *log;
    ssize_t n;
    srv_t s;
    int fd, rc;

    hs_test_stderr_begin(&cap);
    srv_start(&s, 1.0);
    hello_with(TOKEN, hello);
    memset(hello, 'A', 8); /* the magic: not hintsim's */
    fd = send_hello(s.port, hello);
    p = (struct pollfd){.fd = fd, .events = POLLIN};
    rc = poll(&p, 1, 5000);
    n = rc == 1 ? recv(fd, b, sizeof(b), 0) : -2;
    pthread_join(s.th, NULL);
    log = hs_test_stderr_end(&cap);
    print_message("a bad head with the right token: poll %d, recv %zd\n", rc, n);
    assert_int_equal(rc, 1);
    assert_true(n <= 0); /* closed (or reset), no reply */
    assert_int_equal(s.st, HS_ERR_TIMEOUT);
    assert_non_null(strstr(log, "is not hintsim's"));
    free(log);
    close(fd);
    close(s.lfd);
}

/* A connection from src to 127.0.0.1:port (IPv4, host order; loopback takes any 127/8
 * source): its fd. */
static int connect_from(uint32_t src, uint16_t port)
{
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(src)};
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
    return fd;
}

/* How many of fd[0..n) the server has closed, waiting up to 5 s for want of them. */
static int closed_within(const int *fd, int n, int want)
{
    uint64_t end = hs_now_ns() + 5000000000ull;
    int closed[64] = {0}, done = 0;
    char b;

    assert_true(n <= 64);
    while (done < want && hs_now_ns() < end) {
        struct pollfd p[64];
        for (int i = 0; i < n; i++)
            p[i] = (struct pollfd){.fd = closed[i] ? -1 : fd[i], .events = POLLIN};
        assert_true(poll(p, (nfds_t)n, 100) >= 0);
        for (int i = 0; i < n; i++)
            if (p[i].revents && recv(fd[i], &b, 1, MSG_DONTWAIT) <= 0) {
                closed[i] = 1;
                done++;
            }
    }
    return done;
}

/* The reply on fd within 5 s: its status, or -1 (the connection closed first). */
static int reply_status(int fd)
{
    uint8_t buf[CAP_REPLY_LEN];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    size_t got = 0;
    cap_reply_t r;

    while (got < sizeof(buf) && poll(&p, 1, 5000) == 1) {
        ssize_t n = recv(fd, buf + got, sizeof(buf) - got, 0);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    if (got < sizeof(buf) || cap_reply_parse(buf, &r, NULL, 0) != CAP_PARSE_OK)
        return -1;
    return (int)r.status;
}

/* The client (127.0.0.2) has sent half its hello when a peer at 127.0.0.1 opens 24 silent
 * connections, three times the table: the flooder's oldest go, the client's stays, and its
 * hello, finished, is accepted. The flooder never holds more than half the table (4). */
static void test_flood_from_one_address(void **state)
{
    (void)state;
    enum { NFLOOD = 24, HALF = 4 };
    uint8_t hello[CAP_HELLO_LEN];
    int flood[NFLOOD], client, closed, status;
    hs_test_stderr_t cap;
    char *log;
    srv_t s;

    hs_test_stderr_begin(&cap);
    srv_start(&s, 20);
    hello_with(TOKEN, hello);
    client = connect_from(0x7f000002, s.port);
    assert_int_equal(send(client, hello, CAP_HELLO_LEN / 2, MSG_NOSIGNAL), CAP_HELLO_LEN / 2);
    usleep(100000); /* the server has taken it into its table */
    for (int i = 0; i < NFLOOD; i++)
        flood[i] = connect_from(INADDR_LOOPBACK, s.port);
    closed = closed_within(flood, NFLOOD, NFLOOD - HALF);
    usleep(200000); /* time to evict more than it should */
    assert_int_equal(send(client, hello + CAP_HELLO_LEN / 2, CAP_HELLO_LEN - CAP_HELLO_LEN / 2,
                          MSG_NOSIGNAL), CAP_HELLO_LEN - CAP_HELLO_LEN / 2);
    status = reply_status(client);
    pthread_join(s.th, NULL);
    log = hs_test_stderr_end(&cap);
    print_message("a flood of %d connections from one address: %d closed before the "
                  "client's hello was finished, its reply %d\n", NFLOOD, closed, status);
    assert_int_equal(status, CAP_REPLY_OK);
    assert_int_equal(s.st, HS_OK);
    assert_string_equal(s.acc.peer_addr, "127.0.0.2");
    assert_int_equal(closed, NFLOOD - HALF);
    assert_non_null(strstr(log, "newer connections from its address are waiting"));
    free(log);
    for (int i = 0; i < NFLOOD; i++)
        close(flood[i]);
    close(client);
    close(s.acc.fd);
    close(s.lfd);
}

/* Wait up to 5 s for s's thread: 1 when it ended; else 0, after releasing it with one more
 * connection (a server blocked in accept). */
static int srv_join_within(srv_t *s)
{
    struct timespec end;
    int extra;

    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += 5;
    if (pthread_timedjoin_np(s->th, NULL, &end) == 0)
        return 1;
    extra = hostile_silent("127.0.0.1", s->port);
    pthread_join(s->th, NULL);
    close(extra);
    return 0;
}

/* The connection poll announced is taken by another before the server's accept: the server
 * waits on and ends at its timeout (1 s), both the wait for a hello and the plain accept. */
static void test_accept_taken_first(void **state)
{
    (void)state;
    hs_test_stderr_t cap;
    char *log;
    int fd[2], ended[2];
    hs_status_t st[2];
    srv_t s;

    hs_test_stderr_begin(&cap);
    for (int plain = 0; plain < 2; plain++) {
        __atomic_store_n(&taker_armed, 1, __ATOMIC_SEQ_CST);
        srv_start_as(&s, 1.0, plain);
        fd[plain] = hostile_silent("127.0.0.1", s.port);
        ended[plain] = srv_join_within(&s);
        st[plain] = s.st;
        if (s.st == HS_OK)
            close(s.acc.fd);
        close(s.lfd);
    }
    log = hs_test_stderr_end(&cap);
    print_message("a connection taken before the server's accept: %s", log);
    for (int plain = 0; plain < 2; plain++) {
        assert_true(fd[plain] >= 0);
        close(fd[plain]);
        if (!ended[plain])
            fail_msg("%s blocked in accept past its 1 s timeout", plain ? "cap_conn_accept"
                                                                         : "the hello wait");
        assert_int_equal(st[plain], HS_ERR_TIMEOUT);
    }
    assert_int_equal(__atomic_load_n(&taker_armed, __ATOMIC_SEQ_CST), 0); /* it took them */
    free(log);
}

/* The listening socket is on the address given, not on every one, and non-blocking. */
static void test_bind_address(void **state)
{
    (void)state;
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    hs_test_stderr_t cap;
    char *log;
    int lfd;

    assert_int_equal(cap_conn_listen("127.0.0.1", 0, 5000000000ull, &lfd), HS_OK);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
    assert_int_equal(ntohl(sa.sin_addr.s_addr), INADDR_LOOPBACK);
    assert_int_equal(fcntl(lfd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
    close(lfd);
    hs_test_stderr_begin(&cap);
    /* not ours */
    assert_int_equal(cap_conn_listen("192.0.2.1", 0, 5000000000ull, &lfd), HS_ERR_CHECK);
    assert_int_equal(cap_conn_listen("no-such-host.invalid", 0, 5000000000ull, &lfd),
                     HS_ERR_INVALID);
    log = hs_test_stderr_end(&cap);
    assert_non_null(strstr(log, "cannot listen on TCP port 0 of 192.0.2.1"));
    assert_non_null(strstr(log, "--bind no-such-host.invalid"));
    free(log);
}

/* The CLI's checks that need no device: a client without a token, a bad token, --bind on a
 * client (exit 2 naming the option). */
static void test_cli_checks(void **state)
{
    (void)state;
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"capture bench -d rxe0 --connect 127.0.0.1 --sizes 64", "needs the server's token"},
        {"validate $HINTSIM_SRC/traces/samples/kv.hst -d rxe0 --connect 127.0.0.1",
         "needs the server's token"},
        {"calibrate -d rxe0 --connect 127.0.0.1 -o p.json", "needs the server's token"},
        {"capture bench -d rxe0 --connect 127.0.0.1 --sizes 64 --token 'a bcdefghijklmnop'",
         "--token: the token's character 2 (byte 0x20)"},
        {"capture bench -d rxe0 --server --token $(printf %065d 0)",
         "--token: the token has 65 characters, not 16..64"},
        {"capture bench -d rxe0 --server --token right",
         "--token: the token has 5 characters, not 16..64: a short one can be guessed"},
        {"capture bench -d rxe0 --connect 127.0.0.1 --sizes 64 --token 0123456789abcde",
         "--token: the token has 15 characters, not 16..64"},
        {"capture bench -d rxe0 --sizes 64 --bind 127.0.0.1", "--bind is the --server's"},
    };
    const char *bin = hs_test_bin();
    char *out = NULL;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = hs_test_run(&out, "cd /tmp && env -u HINTSIM_TOKEN %s %s", bin, cases[i].args);
        if (rc != 2 || !strstr(out, cases[i].needle))
            fail_msg("hintsim %s: exit %d, output '%s' (expected 2, '%s')", cases[i].args, rc,
                     out, cases[i].needle);
        free(out);
    }
    /* HINTSIM_TOKEN is read, and checked like --token */
    int rc = hs_test_run(&out, "HINTSIM_TOKEN='x yzzzzzzzzzzzzzzz' %s capture bench -d rxe0 "
                         "--connect 127.0.0.1 --sizes 64", bin);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "HINTSIM_TOKEN: the token's character 2"));
    free(out);
    rc = hs_test_run(&out, "HINTSIM_TOKEN=short %s capture bench -d rxe0 --connect "
                     "127.0.0.1 --sizes 64", bin);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "HINTSIM_TOKEN: the token has 5 characters, not 16..64"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_then_good), cmocka_unit_test(test_strays_only),
        cmocka_unit_test(test_silent_expires),    cmocka_unit_test(test_wrong_token_delay),
        cmocka_unit_test(test_bad_head_no_oracle), cmocka_unit_test(test_bind_address),
        cmocka_unit_test(test_accept_taken_first), cmocka_unit_test(test_flood_from_one_address),
        cmocka_unit_test(test_cli_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
