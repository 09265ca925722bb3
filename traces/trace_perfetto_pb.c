/* trace_perfetto_pb.c - protobuf wire format, the writing half (trace_perfetto_pb.h). */
#include "traces/trace_perfetto_pb.h"

#include <stdlib.h>
#include <string.h>

enum { PB_VARINT = 0, PB_LEN = 2 };

void pb_reset(pb_buf_t *p)
{
    p->n = 0;
}

void pb_free(pb_buf_t *p)
{
    free(p->b);
    *p = (pb_buf_t){0};
}

static int pb_room(pb_buf_t *p, size_t more)
{
    size_t cap;
    uint8_t *nb;

    if (p->oom)
        return 0;
    if (p->n + more <= p->cap)
        return 1;
    cap = p->cap ? p->cap : 256;
    while (cap < p->n + more)
        cap *= 2;
    if ((nb = realloc(p->b, cap)) == NULL) {
        p->oom = 1;
        return 0;
    }
    p->b = nb;
    p->cap = cap;
    return 1;
}

static void pb_varint(pb_buf_t *p, uint64_t v)
{
    if (!pb_room(p, 10))
        return;
    while (v >= 0x80) {
        p->b[p->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p->b[p->n++] = (uint8_t)v;
}

static void pb_key(pb_buf_t *p, uint32_t field, unsigned wire)
{
    pb_varint(p, ((uint64_t)field << 3) | wire);
}

void pb_uint(pb_buf_t *p, uint32_t field, uint64_t v)
{
    pb_key(p, field, PB_VARINT);
    pb_varint(p, v);
}

void pb_int(pb_buf_t *p, uint32_t field, int64_t v)
{
    pb_uint(p, field, (uint64_t)v); /* int64: two's complement, ten bytes when negative */
}

void pb_bytes(pb_buf_t *p, uint32_t field, const void *data, size_t len)
{
    pb_len_prefix(p, field, len);
    if (len && pb_room(p, len)) {
        memcpy(p->b + p->n, data, len);
        p->n += len;
    }
}

void pb_len_prefix(pb_buf_t *p, uint32_t field, size_t len)
{
    pb_key(p, field, PB_LEN);
    pb_varint(p, len);
}

void pb_str(pb_buf_t *p, uint32_t field, const char *s)
{
    pb_bytes(p, field, s, strlen(s));
}

void pb_msg(pb_buf_t *p, uint32_t field, const pb_buf_t *m)
{
    if (m->oom)
        p->oom = 1;
    pb_bytes(p, field, m->b, m->n);
}
