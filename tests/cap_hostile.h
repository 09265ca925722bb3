/* cap_hostile.h - hostile clients of a capture --server's control port: each case dials
 * HOST:PORT, sends what a stray or an attacker would (no hello at all, part of one, garbage,
 * the old protocol, a wrong token, sizes that are huge, wrapping, zero or negative as
 * unsigned) and reads what the server does. A server passes a case when it refuses it as
 * the case expects: the refusal reply it names, or the connection closed without a reply.
 * Used by test_cap_hostile (a server in the same process, no device) and by the cap_hostile
 * tool in the soft-RoCE VM (the real `hintsim capture bench --server`).
 */
#ifndef HS_CAP_HOSTILE_H
#define HS_CAP_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

#define HOSTILE_CLOSED (-1) /* expected: the server closes without a reply */

typedef struct {
    const char *name;
    int expect;          /* a cap_reply_status_t, or HOSTILE_CLOSED */
    const char *logged;  /* what the server's warning must say about it */
} hostile_case_t;

extern const hostile_case_t hostile_cases[];
extern const size_t hostile_ncases;

/* Run case c against host:port (numeric address) with the server's token; 0 when the server
 * answered as expected, else -1 with why in err. timeout_ms bounds each read. */
int hostile_run(const hostile_case_t *c, const char *host, uint16_t port, const char *token,
                int timeout_ms, char *err, size_t errlen);
/* A good client's hello (max_msg bytes) with token: 0 when the server accepted it; the
 * connection stays open in *fd_out (the caller closes it). */
int hostile_good_hello(const char *host, uint16_t port, const char *token, uint64_t max_msg,
                       int timeout_ms, int *fd_out, char *err, size_t errlen);
/* A connection that sends nothing and stays open: its fd, or -1. */
int hostile_silent(const char *host, uint16_t port);

#endif
