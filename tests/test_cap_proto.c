/* test_cap_proto.c - the control protocol's parsers (capture/cap_proto.h): every field a peer
 * sends is refused out of its bounds, naming the field and the value; what is accepted keeps
 * 2 * max_msg, max_msg + size and addr + max_msg from wrapping; the token is checked before
 * any field; partial hellos wait for more unless their head is already wrong. */
#include <string.h>

#include "capture/cap_proto.h"
#include "tests/hs_test.h"

#define TOKEN "s3cret-token-0123"
#define WRAP ((uint64_t)1 << 63 | 1)

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void tok(uint8_t t[CAP_TOKEN_MAX])
{
    assert_int_equal(cap_token_from_text(TOKEN, t, NULL, 0), 0);
}

static void hello_bytes(uint64_t max_msg, uint64_t hint, uint8_t b[CAP_HELLO_LEN])
{
    cap_hello_t h = {.max_msg = max_msg, .hint = hint, .cpu_visible = 1};

    tok(h.token);
    cap_hello_pack(&h, b);
}

/* parse b (len bytes) against TOKEN: the result, err checked to contain needle */
static cap_parse_t parse(const uint8_t *b, size_t len, cap_hello_t *h, const char *needle)
{
    uint8_t t[CAP_TOKEN_MAX];
    char err[CAP_ERR_LEN] = "";
    cap_parse_t r;

    tok(t);
    r = cap_hello_parse(b, len, t, h, err, sizeof(err));
    if (needle && !strstr(err, needle))
        fail_msg("error '%s' lacks '%s'", err, needle);
    return r;
}

static void test_hello_roundtrip(void **state)
{
    (void)state;
    uint8_t b[CAP_HELLO_LEN];
    cap_hello_t h;

    hello_bytes(CAP_PROTO_MAX_MSG, 4096, b);
    assert_int_equal(parse(b, sizeof(b), &h, NULL), CAP_PARSE_OK);
    assert_int_equal(h.max_msg, CAP_PROTO_MAX_MSG);
    assert_int_equal(h.hint, 4096);
    assert_int_equal(h.cpu_visible, 1);
    hello_bytes(1, 0, b);
    assert_int_equal(parse(b, sizeof(b), &h, NULL), CAP_PARSE_OK);
    assert_int_equal(h.max_msg, 1);
}

/* sizes a hostile client sends: huge, wrapping 2 * max_msg, zero, negative as unsigned */
static void test_hello_sizes(void **state)
{
    (void)state;
    static const struct {
        uint64_t max_msg, hint;
        const char *needle;
    } bad[] = {
        {WRAP, 0, "max_msg 9223372036854775809 is outside 1..1073741824"},
        {(uint64_t)1 << 34, 0, "max_msg 17179869184 is outside"},
        {CAP_PROTO_MAX_MSG + 1, 0, "max_msg 1073741825 is outside"},
        {0, 0, "max_msg 0 is outside"},
        {UINT64_MAX, 0, "max_msg 18446744073709551615 is outside"},
        {(uint64_t)-4096, 0, "max_msg 18446744073709547520 is outside"},
        {64, UINT64_MAX, "hint 18446744073709551615 is outside 0..1099511627776"},
        {64, CAP_PROTO_MAX_HINT + 1, "hint 1099511627777 is outside"},
    };
    uint8_t b[CAP_HELLO_LEN];
    cap_hello_t h = {.max_msg = 77};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hello_bytes(bad[i].max_msg, bad[i].hint, b);
        assert_int_equal(parse(b, sizeof(b), &h, bad[i].needle), CAP_PARSE_BAD);
        assert_int_equal(h.max_msg, 77); /* *out untouched */
    }
    hello_bytes(64, 0, b);
    put64(b + 32, 6); /* an unknown flag bit */
    assert_int_equal(parse(b, sizeof(b), &h, "flags 0x6 has bits"), CAP_PARSE_BAD);
}

static void test_hello_head_token(void **state)
{
    (void)state;
    uint8_t b[CAP_HELLO_LEN];
    cap_hello_t h;

    hello_bytes(64, 0, b);
    for (size_t n = 0; n < CAP_HELLO_LEN; n++) /* a good prefix waits for the rest */
        assert_int_equal(parse(b, n, &h, NULL), CAP_PARSE_MORE);
    assert_int_equal(parse(b, CAP_HELLO_LEN + 1, &h, "bytes, a hello has"), CAP_PARSE_BAD);
    memset(b, 'A', 16); /* garbage: refused once the head is there, not after 104 bytes */
    assert_int_equal(parse(b, 15, &h, NULL), CAP_PARSE_MORE);
    assert_int_equal(parse(b, 16, &h, "magic 0x4141414141414141"), CAP_PARSE_BAD);
    hello_bytes(64, 0, b);
    put64(b, CAP_PROTO_MAGIC_V1);
    assert_int_equal(parse(b, 16, &h, "control protocol 1"), CAP_PARSE_VERSION);
    hello_bytes(64, 0, b);
    put64(b + 8, 3);
    assert_int_equal(parse(b, 16, &h, "protocol version 3"), CAP_PARSE_VERSION);
    /* a wrong token is refused before the fields are looked at (nothing about the bounds
     * reaches a peer without the token) */
    hello_bytes(WRAP, 0, b);
    b[CAP_HELLO_TOKEN_OFF] ^= 1;
    assert_int_equal(parse(b, sizeof(b), &h, "wrong token"), CAP_PARSE_TOKEN);
    hello_bytes(64, 0, b);
    b[CAP_HELLO_TOKEN_OFF + strlen(TOKEN)] = 'x'; /* the token and more: another token */
    assert_int_equal(parse(b, sizeof(b), &h, "wrong token"), CAP_PARSE_TOKEN);
    hello_bytes(64, 0, b);
    memset(b + CAP_HELLO_TOKEN_OFF, 0, CAP_TOKEN_MAX);
    assert_int_equal(parse(b, sizeof(b), &h, "wrong token"), CAP_PARSE_TOKEN);
}

static void test_token_text(void **state)
{
    (void)state;
    uint8_t t[CAP_TOKEN_MAX], u[CAP_TOKEN_MAX];
    char err[CAP_ERR_LEN], long_tok[CAP_TOKEN_MAX + 2], a[40], b[40];

    assert_int_equal(cap_token_from_text("", t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "0 characters, not 16..64"));
    /* a token shorter than CAP_TOKEN_MIN can be guessed: refused, saying so */
    assert_int_equal(cap_token_from_text("abc", t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "the token has 3 characters, not 16..64: a short one can be "
                                "guessed"));
    assert_int_equal(cap_token_from_text("0123456789abcde", t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "15 characters, not 16..64"));
    assert_int_equal(cap_token_from_text("0123456789abcdef", t, err, sizeof(err)), 0);
    memset(long_tok, 'x', sizeof(long_tok) - 1);
    long_tok[sizeof(long_tok) - 1] = '\0';
    assert_int_equal(cap_token_from_text(long_tok, t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "65 characters, not 16..64"));
    long_tok[CAP_TOKEN_MAX] = '\0';
    assert_int_equal(cap_token_from_text(long_tok, t, err, sizeof(err)), 0);
    assert_int_equal(cap_token_from_text("ab cdefghijklmnop", t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "character 3 (byte 0x20)"));
    assert_int_equal(cap_token_from_text("ab\x7f" "defghijklmnop", t, err, sizeof(err)), -1);
    assert_int_equal(cap_token_generate(a, sizeof(a)), 0);
    assert_int_equal(cap_token_generate(b, sizeof(b)), 0);
    assert_int_equal(strlen(a), CAP_TOKEN_GEN_CHARS);
    assert_int_equal(strspn(a, "0123456789abcdef"), CAP_TOKEN_GEN_CHARS);
    assert_string_not_equal(a, b);
    assert_int_equal(cap_token_generate(a, CAP_TOKEN_GEN_CHARS), -1); /* no room for it */
    assert_int_equal(cap_token_from_text(TOKEN, t, NULL, 0), 0);
    assert_int_equal(cap_token_from_text(TOKEN, u, NULL, 0), 0);
    assert_true(cap_token_equal(t, u));
    u[CAP_TOKEN_MAX - 1] = 1;
    assert_false(cap_token_equal(t, u));
}

static cap_parse_t cmd(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3, cap_cmd_t *c,
                       const char *needle)
{
    uint8_t b[CAP_CMD_LEN];
    char err[CAP_ERR_LEN] = "";
    cap_parse_t r;

    put64(b, w0);
    put64(b + 8, w1);
    put64(b + 16, w2);
    put64(b + 24, w3);
    r = cap_cmd_parse(b, 4096, c, err, sizeof(err));
    if (needle && !strstr(err, needle))
        fail_msg("error '%s' lacks '%s'", err, needle);
    return r;
}

static void test_commands(void **state)
{
    (void)state;
    cap_cmd_t c, in = {.cmd = CAP_CMD_PINGPONG, .path = 1, .size = 4096, .count = 1000};
    uint8_t b[CAP_CMD_LEN];

    cap_cmd_pack(&in, b);
    assert_int_equal(cap_cmd_parse(b, 4096, &c, NULL, 0), CAP_PARSE_OK);
    assert_int_equal(c.cmd, CAP_CMD_PINGPONG);
    assert_int_equal(c.path, 1);
    assert_int_equal(c.size, 4096);
    assert_int_equal(c.count, 1000);
    assert_int_equal(cmd(2, 1, 0, 0, &c, NULL), CAP_PARSE_OK);
    assert_int_equal(c.cmd, CAP_CMD_END);
    assert_int_equal(c.more, 1);
    /* the landing half holds max_msg: a larger size would write past it */
    assert_int_equal(cmd(1, 0, 4097, 1, &c, "size 4097 is outside 1..4096"), CAP_PARSE_BAD);
    assert_int_equal(cmd(1, 0, 0, 1, &c, "size 0 is outside"), CAP_PARSE_BAD);
    assert_int_equal(cmd(1, 0, UINT64_MAX, 1, &c, "size 18446744073709551615"), CAP_PARSE_BAD);
    assert_int_equal(cmd(1, 2, 64, 1, &c, "path 2 is outside 0..1"), CAP_PARSE_BAD);
    assert_int_equal(cmd(1, UINT64_MAX, 64, 1, &c, "path 18446744073709551615"), CAP_PARSE_BAD);
    assert_int_equal(cmd(1, 0, 64, UINT64_MAX, &c, "count 18446744073709551615 is outside"),
                     CAP_PARSE_BAD);
    assert_int_equal(cmd(1, 0, 64, CAP_PROTO_MAX_COUNT, &c, NULL), CAP_PARSE_OK);
    assert_int_equal(cmd(2, 2, 0, 0, &c, "more 2 is outside 0..1"), CAP_PARSE_BAD);
    assert_int_equal(cmd(2, 0, 5, 0, &c, "words 3 and 4 are 5 and 0"), CAP_PARSE_BAD);
    assert_int_equal(cmd(0, 0, 0, 0, &c, "command 0 is unknown"), CAP_PARSE_BAD);
    assert_int_equal(cmd(UINT64_MAX, 0, 0, 0, &c, "command 18446744073709551615"), CAP_PARSE_BAD);
}

static void test_info(void **state)
{
    (void)state;
    cap_wire_info_t in = {.qpn = {0x11, 0xffffff}, .psn = {0, 0xabcdef}, .lid = 0xffff,
                          .addr = UINT64_MAX - 4096, .rkey = 0xffffffffu}, out;
    uint8_t b[CAP_INFO_LEN], g[16];
    char err[CAP_ERR_LEN];

    for (int i = 0; i < 16; i++)
        in.gid[i] = g[i] = (uint8_t)(0xf0 + i);
    cap_info_pack(&in, b);
    assert_int_equal(cap_info_parse(b, 4096, &out, err, sizeof(err)), CAP_PARSE_OK);
    assert_memory_equal(&in, &out, sizeof(in));
    assert_memory_equal(out.gid, g, 16);
    /* the landing half would wrap the address space */
    assert_int_equal(cap_info_parse(b, 4097, &out, err, sizeof(err)), CAP_PARSE_BAD);
    assert_non_null(strstr(err, "addr 0xffffffffffffefff + max_msg 4097 wraps"));
    static const struct {
        size_t off;
        const char *needle;
    } bad[] = {{0, "qpn[0] 16777216"}, {8, "qpn[1]"}, {16, "psn[0]"}, {24, "psn[1]"},
               {48, "lid 16777216 is outside 0..65535"}, {64, "rkey 16777216"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cap_info_pack(&in, b);
        put64(b + bad[i].off, bad[i].off == 64 ? (uint64_t)1 << 32 : 0x1000000);
        assert_int_equal(cap_info_parse(b, 1, &out, err, sizeof(err)), CAP_PARSE_BAD);
        if (bad[i].off != 64)
            assert_non_null(strstr(err, bad[i].needle));
        else
            assert_non_null(strstr(err, "rkey 4294967296 is outside 0..4294967295"));
    }
}

static void test_reply_ack(void **state)
{
    (void)state;
    uint8_t b[CAP_REPLY_LEN], a[CAP_ACK_LEN];
    cap_reply_t r, in = {CAP_PROTO_VERSION, CAP_REPLY_TOKEN, 1};
    char err[CAP_ERR_LEN];

    cap_reply_pack(&in, b);
    assert_int_equal(cap_reply_parse(b, &r, err, sizeof(err)), CAP_PARSE_OK);
    assert_int_equal(r.status, CAP_REPLY_TOKEN);
    assert_int_equal(r.cpu_visible, 1);
    put64(b + 16, 99);
    assert_int_equal(cap_reply_parse(b, &r, err, sizeof(err)), CAP_PARSE_BAD);
    assert_non_null(strstr(err, "status 99 is outside 0..3"));
    cap_reply_pack(&(cap_reply_t){7, CAP_REPLY_OK, 0}, b);
    assert_int_equal(cap_reply_parse(b, &r, err, sizeof(err)), CAP_PARSE_VERSION);
    cap_reply_pack(&in, b);
    put64(b, 0);
    assert_int_equal(cap_reply_parse(b, &r, err, sizeof(err)), CAP_PARSE_BAD);
    cap_ack_pack(a);
    assert_int_equal(cap_ack_parse(a, err, sizeof(err)), CAP_PARSE_OK);
    put64(a, 2);
    assert_int_equal(cap_ack_parse(a, err, sizeof(err)), CAP_PARSE_BAD);
    assert_non_null(strstr(err, "value 2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello_roundtrip), cmocka_unit_test(test_hello_sizes),
        cmocka_unit_test(test_hello_head_token), cmocka_unit_test(test_token_text),
        cmocka_unit_test(test_commands),        cmocka_unit_test(test_info),
        cmocka_unit_test(test_reply_ack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
