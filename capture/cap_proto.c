/* cap_proto.c - the control protocol's messages on the wire (cap_proto.h): packing, and
 * parsers that refuse any field out of bounds, naming it and its value. */
#include "capture/cap_proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static cap_parse_t fail(cap_parse_t r, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static cap_parse_t fail(cap_parse_t r, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return r;
}

/* field NAME of MSG is v, outside lo..hi */
static cap_parse_t out_of_bounds(const char *msg, const char *name, uint64_t v, uint64_t lo,
                                 uint64_t hi, char *err, size_t errlen)
{
    return fail(CAP_PARSE_BAD, err, errlen, "%s: %s %llu is outside %llu..%llu", msg, name,
                (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
}

/* ---- the token ------------------------------------------------------------------------ */

int cap_token_from_text(const char *text, uint8_t out[CAP_TOKEN_MAX], char *err, size_t errlen)
{
    size_t n = text ? strlen(text) : 0;

    if (n < CAP_TOKEN_MIN) {
        fail(CAP_PARSE_BAD, err, errlen, "the token has %zu characters, not %d..%d: a short "
             "one can be guessed (a server given none makes a random one and prints it)", n,
             CAP_TOKEN_MIN, CAP_TOKEN_MAX);
        return -1;
    }
    if (n > CAP_TOKEN_MAX) {
        fail(CAP_PARSE_BAD, err, errlen, "the token has %zu characters, not %d..%d", n,
             CAP_TOKEN_MIN, CAP_TOKEN_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch < 0x21 || ch > 0x7e) {
            fail(CAP_PARSE_BAD, err, errlen, "the token's character %zu (byte 0x%02x) is not "
                 "printable ASCII without spaces", i + 1, ch);
            return -1;
        }
    }
    memset(out, 0, CAP_TOKEN_MAX);
    memcpy(out, text, n);
    return 0;
}

int cap_token_generate(char *buf, size_t len)
{
    uint8_t r[CAP_TOKEN_GEN_CHARS / 2];
    size_t got = 0;

    if (len < CAP_TOKEN_GEN_CHARS + 1)
        return -1;
    while (got < sizeof(r)) {
        ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(r); i++)
        snprintf(buf + 2 * i, 3, "%02x", r[i]);
    return 0;
}

int cap_token_equal(const uint8_t a[CAP_TOKEN_MAX], const uint8_t b[CAP_TOKEN_MAX])
{
    volatile uint8_t diff = 0;

    for (size_t i = 0; i < CAP_TOKEN_MAX; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

/* ---- hello and reply ------------------------------------------------------------------ */

void cap_hello_pack(const cap_hello_t *h, uint8_t out[CAP_HELLO_LEN])
{
    put64(out, CAP_PROTO_MAGIC);
    put64(out + 8, CAP_PROTO_VERSION);
    put64(out + 16, h->max_msg);
    put64(out + 24, h->hint);
    put64(out + 32, h->cpu_visible ? CAP_FLAG_CPU_VISIBLE : 0);
    memcpy(out + CAP_HELLO_TOKEN_OFF, h->token, CAP_TOKEN_MAX);
}

/* magic and version: whoever dialled is refused as soon as these are wrong */
static cap_parse_t head_parse(const uint8_t *buf, const char *msg, char *err, size_t errlen)
{
    uint64_t magic = get64(buf), version = get64(buf + 8);

    if (magic == CAP_PROTO_MAGIC_V1)
        return fail(CAP_PARSE_VERSION, err, errlen, "%s: the peer speaks control protocol 1 "
                    "(an older hintsim, without tokens): run the same hintsim on both ends",
                    msg);
    if (magic != CAP_PROTO_MAGIC)
        return fail(CAP_PARSE_BAD, err, errlen, "%s: magic 0x%016llx is not hintsim's "
                    "(0x%016llx): not a hintsim capture end", msg, (unsigned long long)magic,
                    (unsigned long long)CAP_PROTO_MAGIC);
    if (version != CAP_PROTO_VERSION)
        return fail(CAP_PARSE_VERSION, err, errlen, "%s: protocol version %llu, this end "
                    "speaks %u: run the same hintsim on both ends", msg,
                    (unsigned long long)version, CAP_PROTO_VERSION);
    return CAP_PARSE_OK;
}

static cap_parse_t flags_parse(uint64_t flags, const char *msg, int *cpu_visible, char *err,
                               size_t errlen)
{
    if (flags & ~(uint64_t)CAP_FLAG_CPU_VISIBLE)
        return fail(CAP_PARSE_BAD, err, errlen, "%s: flags 0x%llx has bits this end does not "
                    "know (only 0x%x)", msg, (unsigned long long)flags, CAP_FLAG_CPU_VISIBLE);
    *cpu_visible = (flags & CAP_FLAG_CPU_VISIBLE) != 0;
    return CAP_PARSE_OK;
}

cap_parse_t cap_hello_parse(const uint8_t *buf, size_t len, const uint8_t token[CAP_TOKEN_MAX],
                            cap_hello_t *out, char *err, size_t errlen)
{
    cap_hello_t h;
    cap_parse_t r;

    if (len > CAP_HELLO_LEN)
        return fail(CAP_PARSE_BAD, err, errlen, "hello: %zu bytes, a hello has %d", len,
                    CAP_HELLO_LEN);
    if (len < CAP_HELLO_HEAD)
        return CAP_PARSE_MORE;
    if ((r = head_parse(buf, "hello", err, errlen)) != CAP_PARSE_OK)
        return r;
    if (len < CAP_HELLO_LEN)
        return CAP_PARSE_MORE;
    /* the token before any field: an unauthenticated peer learns nothing of the bounds */
    if (!cap_token_equal(buf + CAP_HELLO_TOKEN_OFF, token))
        return fail(CAP_PARSE_TOKEN, err, errlen, "hello: wrong token");
    memset(&h, 0, sizeof(h));
    h.max_msg = get64(buf + 16);
    h.hint = get64(buf + 24);
    if (h.max_msg < 1 || h.max_msg > CAP_PROTO_MAX_MSG)
        return out_of_bounds("hello", "max_msg", h.max_msg, 1, CAP_PROTO_MAX_MSG, err, errlen);
    if (h.hint > CAP_PROTO_MAX_HINT)
        return out_of_bounds("hello", "hint", h.hint, 0, CAP_PROTO_MAX_HINT, err, errlen);
    if ((r = flags_parse(get64(buf + 32), "hello", &h.cpu_visible, err, errlen)) != CAP_PARSE_OK)
        return r;
    memcpy(h.token, buf + CAP_HELLO_TOKEN_OFF, CAP_TOKEN_MAX);
    *out = h;
    return CAP_PARSE_OK;
}

void cap_reply_pack(const cap_reply_t *r, uint8_t out[CAP_REPLY_LEN])
{
    put64(out, CAP_PROTO_MAGIC);
    put64(out + 8, r->version);
    put64(out + 16, (uint64_t)r->status);
    put64(out + 24, r->cpu_visible ? CAP_FLAG_CPU_VISIBLE : 0);
}

cap_parse_t cap_reply_parse(const uint8_t buf[CAP_REPLY_LEN], cap_reply_t *out, char *err,
                            size_t errlen)
{
    uint64_t magic = get64(buf), version = get64(buf + 8), status = get64(buf + 16);
    cap_reply_t r = {0};
    cap_parse_t p;

    if (magic != CAP_PROTO_MAGIC)
        return fail(CAP_PARSE_BAD, err, errlen, "reply: magic 0x%016llx is not hintsim's: "
                    "not a hintsim capture server", (unsigned long long)magic);
    if (version < 1 || version > 0xffff)
        return out_of_bounds("reply", "version", version, 1, 0xffff, err, errlen);
    if (status > CAP_REPLY_FIELD)
        return out_of_bounds("reply", "status", status, 0, CAP_REPLY_FIELD, err, errlen);
    if ((p = flags_parse(get64(buf + 24), "reply", &r.cpu_visible, err, errlen)) != CAP_PARSE_OK)
        return p;
    r.version = (uint32_t)version;
    r.status = (cap_reply_status_t)status;
    if (r.status == CAP_REPLY_OK && r.version != CAP_PROTO_VERSION)
        return fail(CAP_PARSE_VERSION, err, errlen, "reply: the server accepted with protocol "
                    "version %u, this end speaks %u", r.version, CAP_PROTO_VERSION);
    *out = r;
    return CAP_PARSE_OK;
}

/* ---- endpoint info -------------------------------------------------------------------- */

void cap_info_pack(const cap_wire_info_t *in, uint8_t out[CAP_INFO_LEN])
{
    put64(out, in->qpn[0]);
    put64(out + 8, in->qpn[1]);
    put64(out + 16, in->psn[0]);
    put64(out + 24, in->psn[1]);
    memcpy(out + 32, in->gid, 16);
    put64(out + 48, in->lid);
    put64(out + 56, in->addr);
    put64(out + 64, in->rkey);
}

cap_parse_t cap_info_parse(const uint8_t buf[CAP_INFO_LEN], uint64_t max_msg,
                           cap_wire_info_t *out, char *err, size_t errlen)
{
    static const char *const names[4] = {"qpn[0]", "qpn[1]", "psn[0]", "psn[1]"};
    cap_wire_info_t w;
    uint64_t v;

    memset(&w, 0, sizeof(w));
    for (int i = 0; i < 4; i++) {
        v = get64(buf + 8 * i);
        if (v > 0xffffff)
            return out_of_bounds("endpoint info", names[i], v, 0, 0xffffff, err, errlen);
        if (i < 2)
            w.qpn[i] = (uint32_t)v;
        else
            w.psn[i - 2] = (uint32_t)v;
    }
    memcpy(w.gid, buf + 32, 16);
    if ((v = get64(buf + 48)) > 0xffff)
        return out_of_bounds("endpoint info", "lid", v, 0, 0xffff, err, errlen);
    w.lid = (uint16_t)v;
    w.addr = get64(buf + 56);
    if (max_msg > UINT64_MAX - w.addr)
        return fail(CAP_PARSE_BAD, err, errlen, "endpoint info: addr 0x%llx + max_msg %llu "
                    "wraps", (unsigned long long)w.addr, (unsigned long long)max_msg);
    if ((v = get64(buf + 64)) > 0xffffffffu)
        return out_of_bounds("endpoint info", "rkey", v, 0, 0xffffffffu, err, errlen);
    w.rkey = (uint32_t)v;
    *out = w;
    return CAP_PARSE_OK;
}

/* ---- commands ------------------------------------------------------------------------- */

void cap_cmd_pack(const cap_cmd_t *c, uint8_t out[CAP_CMD_LEN])
{
    int pp = c->cmd == CAP_CMD_PINGPONG;

    put64(out, (uint64_t)c->cmd);
    put64(out + 8, pp ? c->path : (uint64_t)(c->more != 0));
    put64(out + 16, pp ? c->size : 0);
    put64(out + 24, pp ? c->count : 0);
}

cap_parse_t cap_cmd_parse(const uint8_t buf[CAP_CMD_LEN], uint64_t max_msg, cap_cmd_t *out,
                          char *err, size_t errlen)
{
    uint64_t w[4];
    cap_cmd_t c;

    for (int i = 0; i < 4; i++)
        w[i] = get64(buf + 8 * i);
    memset(&c, 0, sizeof(c));
    if (w[0] == CAP_CMD_END) {
        if (w[1] > 1)
            return out_of_bounds("END command", "more", w[1], 0, 1, err, errlen);
        if (w[2] != 0 || w[3] != 0)
            return fail(CAP_PARSE_BAD, err, errlen, "END command: words 3 and 4 are %llu and "
                        "%llu, not 0", (unsigned long long)w[2], (unsigned long long)w[3]);
        c.cmd = CAP_CMD_END;
        c.more = (int)w[1];
    } else if (w[0] == CAP_CMD_PINGPONG) {
        if (w[1] >= CAP_PROTO_NPATHS)
            return out_of_bounds("PINGPONG command", "path", w[1], 0, CAP_PROTO_NPATHS - 1,
                                 err, errlen);
        if (w[2] < 1 || w[2] > max_msg)
            return out_of_bounds("PINGPONG command", "size", w[2], 1, max_msg, err, errlen);
        if (w[3] > CAP_PROTO_MAX_COUNT)
            return out_of_bounds("PINGPONG command", "count", w[3], 0, CAP_PROTO_MAX_COUNT,
                                 err, errlen);
        c.cmd = CAP_CMD_PINGPONG;
        c.path = (uint32_t)w[1];
        c.size = w[2];
        c.count = w[3];
    } else {
        return fail(CAP_PARSE_BAD, err, errlen, "command %llu is unknown (1 PINGPONG, 2 END)",
                    (unsigned long long)w[0]);
    }
    *out = c;
    return CAP_PARSE_OK;
}

void cap_ack_pack(uint8_t out[CAP_ACK_LEN])
{
    put64(out, 1);
}

cap_parse_t cap_ack_parse(const uint8_t buf[CAP_ACK_LEN], char *err, size_t errlen)
{
    uint64_t v = get64(buf);

    return v == 1 ? CAP_PARSE_OK : out_of_bounds("ack", "value", v, 1, 1, err, errlen);
}
