/* fuzz_cap_proto.c - libFuzzer target for the capture control protocol's parsers
 * (capture/cap_proto.h): arbitrary bytes play a client talking to a --server, as the server
 * reads them: a hello fed in pieces of fuzzer-chosen sizes (as recv hands them over), then
 * an endpoint info and a run of commands; and the client's side (reply, ack) on the same
 * bytes. Whatever a parser accepts is checked against what the server then does with it:
 * the buffer of 2 x max_msg must not wrap, a ping-pong's landing byte (max_msg + size - 1)
 * must lie inside it, the peer's addr + max_msg must not wrap; a violation aborts.
 *
 * Input: byte 0 is the mode (bit 0: write the right token into the hello, so the fuzzer
 * reaches the fields behind it; bits 1-7: the piece size of the hello's delivery), then the
 * hello's bytes, the info and the commands. Built by tests/capture.cmake with clang
 * -fsanitize=fuzzer,address,undefined; a bounded run over tests/fuzz/corpus_cap_proto is a
 * test (label fuzz). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TOKEN "fuzz-token-0123456"

static void check(int ok)
{
    if (!ok)
        abort();
}

/* The hello arriving in pieces of `piece` bytes, as the server's acceptor judges it. */
static cap_parse_t hello_in_pieces(const uint8_t *buf, size_t len, size_t piece,
                                   const uint8_t token[CAP_TOKEN_MAX], cap_hello_t *h)
{
    char err[CAP_ERR_LEN];
    cap_parse_t r = CAP_PARSE_MORE;

    for (size_t got = 0; r == CAP_PARSE_MORE && got < len;) {
        got += piece < len - got ? piece : len - got;
        r = cap_hello_parse(buf, got, token, h, err, sizeof(err));
        check(r == CAP_PARSE_MORE || r == CAP_PARSE_OK || err[0] != '\0');
    }
    return r;
}

/* What the server does with the commands: bound-check every landing write. */
static void serve_commands(const uint8_t *p, size_t n, uint64_t max_msg)
{
    uint64_t buf_len;
    char err[CAP_ERR_LEN];
    cap_cmd_t c;

    check(!__builtin_mul_overflow(max_msg, (uint64_t)2, &buf_len));
    for (; n >= CAP_CMD_LEN; p += CAP_CMD_LEN, n -= CAP_CMD_LEN) {
        if (cap_cmd_parse(p, max_msg, &c, err, sizeof(err)) != CAP_PARSE_OK)
            return; /* the server ends the session */
        if (c.cmd == CAP_CMD_END)
            return;
        check(c.path < CAP_PROTO_NPATHS && c.count <= CAP_PROTO_MAX_COUNT);
        check(c.size >= 1 && max_msg + c.size - 1 < buf_len); /* landing_clear's byte */
    }
}

static void fuzz_server(const uint8_t *data, size_t size)
{
    uint8_t token[CAP_TOKEN_MAX], hello[CAP_HELLO_LEN];
    size_t piece = (size_t)(data[0] >> 1) + 1, n = size - 1;
    const uint8_t *p = data + 1;
    char err[CAP_ERR_LEN];
    cap_wire_info_t info;
    cap_hello_t h;

    check(cap_token_from_text(FUZZ_TOKEN, token, NULL, 0) == 0);
    memset(hello, 0, sizeof(hello));
    memcpy(hello, p, n < CAP_HELLO_LEN ? n : CAP_HELLO_LEN);
    if (data[0] & 1)
        memcpy(hello + CAP_HELLO_TOKEN_OFF, token, CAP_TOKEN_MAX);
    if (hello_in_pieces(hello, n < CAP_HELLO_LEN ? n : CAP_HELLO_LEN, piece, token, &h) !=
        CAP_PARSE_OK)
        return;
    check(h.max_msg >= 1 && h.max_msg <= CAP_PROTO_MAX_MSG && h.hint <= CAP_PROTO_MAX_HINT);
    check(cap_token_equal(h.token, token));
    p += CAP_HELLO_LEN;
    n -= CAP_HELLO_LEN;
    if (n < CAP_INFO_LEN || cap_info_parse(p, h.max_msg, &info, err, sizeof(err)) != CAP_PARSE_OK)
        return;
    check(info.addr <= UINT64_MAX - h.max_msg && info.qpn[0] <= 0xffffff &&
          info.qpn[1] <= 0xffffff && info.psn[0] <= 0xffffff && info.psn[1] <= 0xffffff);
    serve_commands(p + CAP_INFO_LEN, n - CAP_INFO_LEN, h.max_msg);
}

/* The client's side: the server's reply and acks. */
static void fuzz_client(const uint8_t *data, size_t size)
{
    char err[CAP_ERR_LEN];
    cap_reply_t r;

    if (size >= CAP_REPLY_LEN && cap_reply_parse(data, &r, err, sizeof(err)) == CAP_PARSE_OK)
        check(r.status <= CAP_REPLY_FIELD &&
              (r.status != CAP_REPLY_OK || r.version == CAP_PROTO_VERSION));
    for (size_t off = 0; off + CAP_ACK_LEN <= size; off += CAP_ACK_LEN)
        (void)cap_ack_parse(data + off, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fuzz_client(data + 1, size - 1);
    fuzz_server(data, size);
    return 0;
}
