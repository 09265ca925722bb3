/* trace_perfetto_pb.h - the few protobuf wire-format writes the Perfetto export needs
 * (varint, length-delimited and fixed64 fields), into a growable buffer. A nested message
 * is built in its own buffer and then appended as a length-delimited field. */
#ifndef HS_TRACE_PERFETTO_PB_H
#define HS_TRACE_PERFETTO_PB_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *b;
    size_t n, cap;
    int oom; /* an allocation failed: the buffer's content is incomplete */
} pb_buf_t;

void pb_reset(pb_buf_t *p);
void pb_free(pb_buf_t *p);
/* field as a varint (wire type 0): uint64, int64 (two's complement), bool, enum. */
void pb_uint(pb_buf_t *p, uint32_t field, uint64_t v);
void pb_int(pb_buf_t *p, uint32_t field, int64_t v);
/* field as length-delimited bytes (wire type 2): a string, or a nested message. */
void pb_bytes(pb_buf_t *p, uint32_t field, const void *data, size_t len);
/* Only the key and length of a length-delimited field, for len bytes written elsewhere. */
void pb_len_prefix(pb_buf_t *p, uint32_t field, size_t len);
void pb_str(pb_buf_t *p, uint32_t field, const char *s);
void pb_msg(pb_buf_t *p, uint32_t field, const pb_buf_t *m);

#endif
