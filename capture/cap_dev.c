/* cap_dev.c - device lookup, PD, and the queried limits (see cap_dev.h). */
#include "capture/cap_dev.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void list_devices(struct ibv_device **list, int n, char *buf, size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (int i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                ibv_get_device_name(list[i]));
}

static hs_status_t find_device(const char *name, struct ibv_context **ctx)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    hs_status_t st = HS_ERR_ENV;
    char names[512];

    if (!list || n == 0) {
        hs_log_error("no verbs device on this machine (%s); load a driver or create a "
                     "soft-RoCE device: modprobe rdma_rxe && rdma link add rxe0 type rxe "
                     "netdev IFACE (tests/vm/ boots a VM that has one)",
                     list ? "the device list is empty" : strerror(errno));
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(ibv_get_device_name(list[i]), name) != 0)
            continue;
        *ctx = ibv_open_device(list[i]);
        if (!*ctx) {
            hs_log_error("cannot open verbs device %s: %s", name, strerror(errno));
            goto out;
        }
        st = HS_OK;
        goto out;
    }
    list_devices(list, n, names, sizeof(names));
    hs_log_error("no verbs device named '%s'; devices present: %s", name, names);
out:
    if (list)
        ibv_free_device_list(list);
    return st;
}

/* The largest max_inline_data a QP on this device accepts, by trying probe QPs. */
static uint32_t probe_inline(cap_dev_t *d)
{
    static const uint32_t tries[] = {1024, 512, 256, 128, 64, 32, 0};
    struct ibv_cq *cq = ibv_create_cq(d->ctx, 4, NULL, NULL, 0);
    uint32_t best = 0;

    if (!cq)
        return 0;
    for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        struct ibv_qp_init_attr a = {
            .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
            .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
                    .max_recv_sge = 1, .max_inline_data = tries[i]},
        };
        struct ibv_qp *qp = ibv_create_qp(d->pd, &a);
        if (!qp)
            continue;
        best = a.cap.max_inline_data; /* the provider reports what it granted */
        ibv_destroy_qp(qp);
        break;
    }
    ibv_destroy_cq(cq);
    return best;
}

static int gid_is_zero(const union ibv_gid *g)
{
    for (size_t i = 0; i < sizeof(g->raw); i++)
        if (g->raw[i])
            return 0;
    return 1;
}

/* The indices of the port's non-empty GIDs, "0, 1" (at most a few). */
static void gid_list(const cap_dev_t *d, int tbl_len, char *buf, size_t len)
{
    size_t off = 0;
    int n = 0;

    buf[0] = '\0';
    for (int i = 0; i < tbl_len && n < 16 && off < len; i++) {
        union ibv_gid g;
        if (ibv_query_gid(d->ctx, d->port, i, &g) != 0 || gid_is_zero(&g))
            continue;
        int k = snprintf(buf + off, len - off, "%s%d", n++ ? ", " : "", i);
        off += k > 0 ? (size_t)k : 0;
    }
}

uint32_t cap_dev_mtu_bytes(const cap_dev_t *d)
{
    int m = (int)d->active_mtu;

    return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

static hs_status_t query_limits(cap_dev_t *d)
{
    struct ibv_device_attr_ex ax;
    struct ibv_port_attr pa;

    memset(&ax, 0, sizeof(ax));
    if (ibv_query_device_ex(d->ctx, NULL, &ax) != 0) {
        hs_log_error("ibv_query_device_ex on %s failed: %s", d->name, strerror(errno));
        return HS_ERR_ENV;
    }
    snprintf(d->fw_ver, sizeof(d->fw_ver), "%s", ax.orig_attr.fw_ver);
    d->lim.max_qp_wr = (uint32_t)ax.orig_attr.max_qp_wr;
    d->lim.max_cq_count = ax.cq_mod_caps.max_cq_count;
    d->lim.max_cq_period_us = ax.cq_mod_caps.max_cq_period;
    d->lim.cq_mod_supported = ax.cq_mod_caps.max_cq_count > 0;
    d->lim.max_inline = probe_inline(d);
    if (ibv_query_port(d->ctx, d->port, &pa) != 0) {
        hs_log_error("ibv_query_port %s port %u failed: %s", d->name, d->port, strerror(errno));
        return HS_ERR_ENV;
    }
    d->lid = pa.lid;
    d->active_mtu = pa.active_mtu;
    if (d->gid_index < 0 || d->gid_index >= pa.gid_tbl_len ||
        ibv_query_gid(d->ctx, d->port, d->gid_index, &d->gid) != 0 || gid_is_zero(&d->gid)) {
        /* an empty slot of the table reads as all zeros: the QP would not connect (it
         * failed at RTR with "No data available", exit 3) */
        char ok[256];
        gid_list(d, pa.gid_tbl_len, ok, sizeof(ok));
        hs_log_error("--gid-index %d: %s port %u has no GID there (GIDs at index %s)",
                     d->gid_index, d->name, d->port, ok[0] ? ok : "none");
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

hs_status_t cap_dev_open(const char *name, int gid_index, cap_dev_t **out)
{
    cap_dev_t *d = calloc(1, sizeof(*d));
    hs_status_t st;

    if (!d)
        return HS_ERR_NOMEM;
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->port = 1;
    d->gid_index = gid_index;
    st = find_device(name, &d->ctx);
    if (st != HS_OK)
        goto err_free;
    d->pd = ibv_alloc_pd(d->ctx);
    if (!d->pd) {
        hs_log_error("ibv_alloc_pd on %s failed: %s", name, strerror(errno));
        st = HS_ERR_ENV;
        goto err_close;
    }
    st = query_limits(d);
    if (st != HS_OK)
        goto err_close;
    *out = d;
    return HS_OK;
err_close:
    cap_dev_close(d);
    return st;
err_free:
    free(d);
    return st;
}

void cap_dev_close(cap_dev_t *d)
{
    if (!d)
        return;
    if (d->pd)
        ibv_dealloc_pd(d->pd);
    if (d->ctx)
        ibv_close_device(d->ctx);
    free(d);
}

_Static_assert(CAP_GID_TEXT >= INET6_ADDRSTRLEN, "CAP_GID_TEXT holds an IPv6 address");

const char *cap_gid_text(const uint8_t raw[16], char *buf, size_t len)
{
    if (!inet_ntop(AF_INET6, raw, buf, (socklen_t)len))
        snprintf(buf, len, "?");
    return buf;
}
