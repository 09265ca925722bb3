/* cap_dev.h - open a verbs device by name and learn what it allows.
 *
 * The limits that the path engine needs are queried, never assumed: max_qp_wr from
 * ibv_query_device, the real inline limit by creating probe QPs, CQ moderation support
 * from ibv_query_device_ex. The port's GID at the chosen index identifies this end.
 */
#ifndef HS_CAP_DEV_H
#define HS_CAP_DEV_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "capture/cap_policy.h"
#include "common/hs_status.h"

typedef struct {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    char name[64];
    char fw_ver[64];
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    uint16_t lid;
    enum ibv_mtu active_mtu;
    cap_limits_t lim;
} cap_dev_t;

/* Open device name (port 1, GID index gid_index), allocate a PD and query the limits.
 * Unknown name: HS_ERR_ENV, logged listing the devices present; no device at all:
 * HS_ERR_ENV saying so and how to get one (soft-RoCE). Caller frees with cap_dev_close. */
hs_status_t cap_dev_open(const char *name, int gid_index, cap_dev_t **out);
void cap_dev_close(cap_dev_t *d);
/* The port's active MTU in bytes (IBV_MTU_256..IBV_MTU_4096 -> 256..4096; 0 if unknown). */
uint32_t cap_dev_mtu_bytes(const cap_dev_t *d);
/* A GID as IPv6 text in buf ("::ffff:10.0.0.1" for a RoCE v2 IPv4 one, "?" if it cannot be
 * written); returns buf, of CAP_GID_TEXT bytes at least (INET6_ADDRSTRLEN). */
#define CAP_GID_TEXT 46
const char *cap_gid_text(const uint8_t raw[16], char *buf, size_t len);

#endif
