/* cap_proto.h - the control protocol of --server / --connect on the wire: what each message
 * holds, how it is packed, and the parsers that bound every field a peer sends before any of
 * it is used. Pure functions over byte buffers (no sockets, no device), so that they can be
 * fuzzed (tests/fuzz/fuzz_cap_proto.c) and tested without a network.
 *
 * Every message is a run of big-endian uint64_t words, except the token:
 *   hello   client -> server  magic, version, max_msg, hint, flags, token[CAP_TOKEN_MAX]
 *   reply   server -> client  magic, version, status, flags
 *   info    both ways         qpn[2], psn[2], gid (16 bytes), lid, addr, rkey
 *   command client -> server  PINGPONG path size count | END more 0 0
 *   ack     server -> client  1
 * A parser names the offending field and its value in err and returns CAP_PARSE_BAD (or
 * CAP_PARSE_TOKEN / CAP_PARSE_VERSION, which the server answers with a refusal reply); what
 * it accepts is within the bounds below, so 2 * max_msg, max_msg + size and addr + max_msg
 * cannot wrap.
 */
#ifndef HS_CAP_PROTO_H
#define HS_CAP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define CAP_PROTO_MAGIC 0x6873636170320000ULL    /* "hscap2\0\0" */
#define CAP_PROTO_MAGIC_V1 0x6873636170310000ULL /* the unauthenticated protocol before it */
#define CAP_PROTO_VERSION 2u
#define CAP_PROTO_MAX_MSG ((uint64_t)1 << 30)     /* 1 GiB, as capture bench and validate */
#define CAP_PROTO_MAX_HINT ((uint64_t)1 << 40)    /* a larger hint means the same: all LL */
#define CAP_PROTO_MAX_COUNT ((uint64_t)200000000) /* --iters + --warmup at their limits */
#define CAP_PROTO_NPATHS 2u

/* The shared token: CAP_TOKEN_MIN..CAP_TOKEN_MAX printable ASCII characters (0x21..0x7e),
 * sent NUL-padded to CAP_TOKEN_MAX bytes and compared in constant time. It authenticates a
 * server that listens on the network: shorter ones are refused as guessable. */
#define CAP_TOKEN_MIN 16
#define CAP_TOKEN_MAX 64
#define CAP_TOKEN_GEN_CHARS 32 /* a generated token: 128 random bits in hex */

#define CAP_HELLO_HEAD 16 /* magic and version: checked as soon as they arrive */
#define CAP_HELLO_TOKEN_OFF (5 * 8) /* the token follows the five words */
#define CAP_HELLO_LEN (CAP_HELLO_TOKEN_OFF + CAP_TOKEN_MAX)
#define CAP_REPLY_LEN (4 * 8)
#define CAP_INFO_LEN (9 * 8)
#define CAP_CMD_LEN (4 * 8)
#define CAP_ACK_LEN 8
#define CAP_ERR_LEN 200

#define CAP_FLAG_CPU_VISIBLE 1u /* the sender's buffers are host memory */

typedef enum {
    CAP_PARSE_OK = 0,
    CAP_PARSE_MORE = 1,    /* hello only: nothing wrong so far, more bytes needed */
    CAP_PARSE_BAD = 2,     /* a field out of bounds, bad magic: err says which */
    CAP_PARSE_TOKEN = 3,   /* hello: the token does not match */
    CAP_PARSE_VERSION = 4, /* hello: another protocol version */
} cap_parse_t;

/* What the server answers a hello with. */
typedef enum {
    CAP_REPLY_OK = 0,
    CAP_REPLY_TOKEN = 1,   /* wrong token */
    CAP_REPLY_VERSION = 2, /* the server speaks another version (in the reply's version) */
    CAP_REPLY_FIELD = 3,   /* a field of the hello is out of bounds (the server logs which) */
} cap_reply_status_t;

typedef struct {
    uint64_t max_msg;  /* largest message of the run, 1..CAP_PROTO_MAX_MSG */
    uint64_t hint;     /* 0..CAP_PROTO_MAX_HINT (the server uses only whether it is 0) */
    int cpu_visible;
    uint8_t token[CAP_TOKEN_MAX];
} cap_hello_t;

typedef struct {
    uint32_t version;
    cap_reply_status_t status;
    int cpu_visible;
} cap_reply_t;

typedef struct {
    uint32_t qpn[CAP_PROTO_NPATHS]; /* 24 bits */
    uint32_t psn[CAP_PROTO_NPATHS]; /* 24 bits */
    uint8_t gid[16];
    uint16_t lid;
    uint64_t addr; /* the landing half: addr + max_msg does not wrap */
    uint32_t rkey;
} cap_wire_info_t;

enum { CAP_CMD_PINGPONG = 1, CAP_CMD_END = 2 };

typedef struct {
    int cmd;         /* CAP_CMD_PINGPONG or CAP_CMD_END */
    uint32_t path;   /* PINGPONG: < CAP_PROTO_NPATHS */
    uint64_t size;   /* PINGPONG: 1..max_msg */
    uint64_t count;  /* PINGPONG: 0..CAP_PROTO_MAX_COUNT */
    int more;        /* END: the client connects again */
} cap_cmd_t;

/* Token text -> wire field. HS-style: 0 ok, -1 when text is shorter than CAP_TOKEN_MIN,
 * longer than CAP_TOKEN_MAX or has a character outside 0x21..0x7e (err says which). */
int cap_token_from_text(const char *text, uint8_t out[CAP_TOKEN_MAX], char *err, size_t errlen);
/* A random token of CAP_TOKEN_GEN_CHARS hex characters from getrandom(); 0 ok, -1 if the
 * kernel gave no randomness. buf has CAP_TOKEN_GEN_CHARS + 1 bytes at least. */
int cap_token_generate(char *buf, size_t len);
/* 1 when a and b are equal, in time that does not depend on where they differ. */
int cap_token_equal(const uint8_t a[CAP_TOKEN_MAX], const uint8_t b[CAP_TOKEN_MAX]);

void cap_hello_pack(const cap_hello_t *h, uint8_t out[CAP_HELLO_LEN]);
/* buf[0..len), len <= CAP_HELLO_LEN: the bytes of a hello received so far. Checks the magic
 * and version once CAP_HELLO_HEAD bytes are there (so a stray or an old peer is refused
 * without waiting for the rest), then, complete, the token (against token), then the fields.
 * *out is set only on CAP_PARSE_OK. */
cap_parse_t cap_hello_parse(const uint8_t *buf, size_t len, const uint8_t token[CAP_TOKEN_MAX],
                            cap_hello_t *out, char *err, size_t errlen);

void cap_reply_pack(const cap_reply_t *r, uint8_t out[CAP_REPLY_LEN]);
cap_parse_t cap_reply_parse(const uint8_t buf[CAP_REPLY_LEN], cap_reply_t *out, char *err,
                            size_t errlen);

void cap_info_pack(const cap_wire_info_t *in, uint8_t out[CAP_INFO_LEN]);
/* max_msg: the session's (the peer's landing half must hold it). */
cap_parse_t cap_info_parse(const uint8_t buf[CAP_INFO_LEN], uint64_t max_msg,
                           cap_wire_info_t *out, char *err, size_t errlen);

void cap_cmd_pack(const cap_cmd_t *c, uint8_t out[CAP_CMD_LEN]);
/* max_msg: the session's; a ping-pong size must fit the landing half. */
cap_parse_t cap_cmd_parse(const uint8_t buf[CAP_CMD_LEN], uint64_t max_msg, cap_cmd_t *out,
                          char *err, size_t errlen);

void cap_ack_pack(uint8_t out[CAP_ACK_LEN]);
cap_parse_t cap_ack_parse(const uint8_t buf[CAP_ACK_LEN], char *err, size_t errlen);

#endif
