/* cap_hostile.c - hostile clients of the capture control port (cap_hostile.h). */
#include "tests/cap_hostile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture/cap_proto.h"

#define WRAP ((uint64_t)1 << 63 | 1) /* 2 * max_msg wraps to 2 */

const hostile_case_t hostile_cases[] = {
    {"close", HOSTILE_CLOSED, "closed the connection after 0 of"},
    {"short", HOSTILE_CLOSED, "closed the connection after 10 of"},
    {"garbage", HOSTILE_CLOSED, "magic 0x4141414141414141 is not hintsim's"},
    {"v1", CAP_REPLY_VERSION, "speaks control protocol 1"},
    {"version", CAP_REPLY_VERSION, "protocol version 3, this end speaks 2"},
    {"token", CAP_REPLY_TOKEN, "wrong token"},
    {"notoken", CAP_REPLY_TOKEN, "wrong token"},
    {"wrap", CAP_REPLY_FIELD, "max_msg 9223372036854775809 is outside 1..1073741824"},
    {"huge", CAP_REPLY_FIELD, "max_msg 17179869184 is outside 1..1073741824"},
    {"zero", CAP_REPLY_FIELD, "max_msg 0 is outside 1..1073741824"},
    {"negative", CAP_REPLY_FIELD, "max_msg 18446744073709551615 is outside 1..1073741824"},
    {"hint", CAP_REPLY_FIELD, "hint 18446744073709551615 is outside 0..1099511627776"},
    {"flags", CAP_REPLY_FIELD, "flags 0xfffffffffffffffe has bits"},
};
const size_t hostile_ncases = sizeof(hostile_cases) / sizeof(hostile_cases[0]);

static int say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int dial(const char *host, uint16_t port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    int v6 = inet_pton(AF_INET, host, &sa.sin_addr) != 1;
    int fd;

    if (v6 && inet_pton(AF_INET6, host, &sa6.sin6_addr) != 1)
        return -1;
    fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, v6 ? (struct sockaddr *)&sa6 : (struct sockaddr *)&sa,
                v6 ? sizeof(sa6) : sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The bytes case name sends; their count. */
static size_t hostile_bytes(const char *name, const char *token, uint8_t *b, size_t cap)
{
    cap_hello_t h = {.max_msg = 4096, .hint = 0, .cpu_visible = 1};

    memset(b, 0, cap);
    if (cap_token_from_text(token, h.token, NULL, 0) != 0)
        memset(h.token, 0, sizeof(h.token));
    if (strcmp(name, "close") == 0)
        return 0;
    if (strcmp(name, "garbage") == 0) {
        memset(b, 'A', CAP_HELLO_LEN);
        return CAP_HELLO_LEN;
    }
    if (strcmp(name, "v1") == 0) { /* the old hello: magic, max_msg, hint, cpu_visible */
        put64(b, CAP_PROTO_MAGIC_V1);
        put64(b + 8, WRAP);
        put64(b + 24, 1);
        return 32;
    }
    if (strcmp(name, "token") == 0)
        memcpy(h.token, "not-the-token", 14);
    if (strcmp(name, "notoken") == 0)
        memset(h.token, 0, sizeof(h.token));
    h.max_msg = strcmp(name, "wrap") == 0 || strcmp(name, "token") == 0 ? WRAP
                : strcmp(name, "huge") == 0 ? (uint64_t)1 << 34
                : strcmp(name, "zero") == 0 ? 0
                : strcmp(name, "negative") == 0 ? UINT64_MAX : h.max_msg;
    h.hint = strcmp(name, "hint") == 0 ? UINT64_MAX : 0;
    cap_hello_pack(&h, b);
    if (strcmp(name, "version") == 0)
        put64(b + 8, 3);
    if (strcmp(name, "flags") == 0)
        put64(b + 32, ~(uint64_t)1);
    return strcmp(name, "short") == 0 ? 10 : CAP_HELLO_LEN;
}

/* Read up to len bytes within timeout_ms: the count (0 = closed or reset), -2 on timeout. */
static ssize_t read_answer(int fd, uint8_t *buf, size_t len, int timeout_ms)
{
    size_t got = 0;

    while (got < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;
        if (poll(&p, 1, timeout_ms) <= 0)
            return -2;
        n = recv(fd, buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) /* closed, or reset (unread bytes of ours at its close) */
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static int judge_answer(const hostile_case_t *c, const uint8_t *r, ssize_t n, char *err,
                        size_t errlen)
{
    cap_reply_t rep;
    char perr[CAP_ERR_LEN];

    if (n == -2)
        return say(err, errlen, "%s: no answer and no close within the bound", c->name);
    if (c->expect == HOSTILE_CLOSED)
        return n == 0 ? 0 : say(err, errlen, "%s: got %zd bytes, expected a close", c->name, n);
    if (n != CAP_REPLY_LEN)
        return say(err, errlen, "%s: got %zd bytes, expected a %d-byte refusal", c->name, n,
                   CAP_REPLY_LEN);
    if (cap_reply_parse(r, &rep, perr, sizeof(perr)) != CAP_PARSE_OK)
        return say(err, errlen, "%s: the reply does not parse: %s", c->name, perr);
    if ((int)rep.status != c->expect)
        return say(err, errlen, "%s: reply status %d, expected %d", c->name, (int)rep.status,
                   c->expect);
    return 0;
}

int hostile_run(const hostile_case_t *c, const char *host, uint16_t port, const char *token,
                int timeout_ms, char *err, size_t errlen)
{
    uint8_t b[CAP_HELLO_LEN], r[CAP_REPLY_LEN];
    size_t n = hostile_bytes(c->name, token, b, sizeof(b));
    int fd = dial(host, port), rc;

    if (fd < 0)
        return say(err, errlen, "%s: cannot connect to %s:%u: %s", c->name, host, port,
                   strerror(errno));
    if (n > 0 && send(fd, b, n, MSG_NOSIGNAL) != (ssize_t)n) {
        close(fd);
        return say(err, errlen, "%s: send: %s", c->name, strerror(errno));
    }
    if (n == 0 || strcmp(c->name, "short") == 0) { /* no more from this end */
        close(fd);
        return 0;
    }
    rc = judge_answer(c, r, read_answer(fd, r, sizeof(r), timeout_ms), err, errlen);
    close(fd);
    return rc;
}

int hostile_good_hello(const char *host, uint16_t port, const char *token, uint64_t max_msg,
                       int timeout_ms, int *fd_out, char *err, size_t errlen)
{
    cap_hello_t h = {.max_msg = max_msg, .hint = 0, .cpu_visible = 1};
    hostile_case_t ok = {"good", CAP_REPLY_OK, ""};
    uint8_t b[CAP_HELLO_LEN], r[CAP_REPLY_LEN];
    int fd;

    if (cap_token_from_text(token, h.token, err, errlen) != 0)
        return -1;
    cap_hello_pack(&h, b);
    fd = dial(host, port);
    if (fd < 0)
        return say(err, errlen, "good: cannot connect: %s", strerror(errno));
    if (send(fd, b, sizeof(b), MSG_NOSIGNAL) != (ssize_t)sizeof(b) ||
        judge_answer(&ok, r, read_answer(fd, r, sizeof(r), timeout_ms), err, errlen) != 0) {
        close(fd);
        return -1;
    }
    *fd_out = fd;
    return 0;
}

int hostile_silent(const char *host, uint16_t port)
{
    return dial(host, port);
}
