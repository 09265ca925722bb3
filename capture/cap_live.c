/* cap_live.c - shared setup of the live commands (see cap_live.h). */
#include "capture/cap_live.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

hs_status_t cap_live_open(const cap_live_opts_t *o, cap_live_t *out)
{
    hs_status_t st;

    memset(out, 0, sizeof(*out));
    out->listen_fd = -1;
    if (o->server && o->connect) {
        hs_log_error("--server and --connect exclude each other");
        return HS_ERR_USAGE;
    }
    if (o->port == 0 || o->port > 65535) {
        hs_log_error("--port %llu: must be 1..65535", (unsigned long long)o->port);
        return HS_ERR_USAGE;
    }
    if (!(o->timeout_s > 0 && o->timeout_s <= 3600)) {
        hs_log_error("--timeout %g: must be in (0, 3600] seconds", o->timeout_s);
        return HS_ERR_USAGE;
    }
    if (o->gid_index > 255) {
        hs_log_error("--gid-index %llu: must be 0..255", (unsigned long long)o->gid_index);
        return HS_ERR_USAGE;
    }
    out->role = o->server ? CAP_ROLE_SERVER : o->connect ? CAP_ROLE_CLIENT : CAP_ROLE_LOOP;
    st = cap_mem_find(o->mem, &out->mem);
    if (st != HS_OK)
        return st;
    st = profile_load(o->profile ? o->profile : "generic", &out->prof);
    for (size_t i = 0; st == HS_OK && o->sets && i < o->sets->n; i++)
        st = profile_set(out->prof, o->sets->v[i]);
    if (st == HS_OK)
        st = cap_dev_open(o->device, (int)o->gid_index, &out->dev);
    /* listening is said once there is a device to serve with (it was said, then exit 3) */
    if (st == HS_OK && out->role == CAP_ROLE_SERVER) {
        st = cap_conn_listen((uint16_t)o->port, &out->listen_fd);
        if (st == HS_OK)
            hs_log_info("listening on TCP port %llu", (unsigned long long)o->port);
    }
    if (st != HS_OK)
        cap_live_close(out);
    return st;
}

void cap_live_close(cap_live_t *l)
{
    if (l->listen_fd >= 0)
        close(l->listen_fd);
    l->listen_fd = -1;
    cap_dev_close(l->dev);
    l->dev = NULL;
    if (l->prof)
        profile_free(l->prof);
    l->prof = NULL;
}

hs_status_t cap_live_connect(const cap_live_opts_t *o, cap_live_t *l, uint64_t max_msg,
                             uint64_t hint_bytes, cap_conn_t **out)
{
    cap_conn_opts_t co = {.role = l->role, .host = o->connect, .port = (uint16_t)o->port,
                          .timeout_ns = (uint64_t)(o->timeout_s * 1e9), .max_msg = max_msg,
                          .hint_bytes = hint_bytes, .listen_fd = l->listen_fd};
    hs_status_t st = cap_conn_open(&co, l->dev, l->mem, l->prof, out);

    if (st == HS_OK && (*out)->role != CAP_ROLE_LOOP) {
        l->has_peer = 1;
        snprintf(l->peer_addr, sizeof(l->peer_addr), "%s", (*out)->peer_addr);
        memcpy(l->peer_gid, (*out)->peer_gid, sizeof(l->peer_gid));
    }
    return st;
}

const char *cap_role_name(cap_role_t r)
{
    return r == CAP_ROLE_SERVER ? "server" : r == CAP_ROLE_CLIENT ? "client" : "loopback";
}

static const char *moderation_str(const cap_path_cfg_t *cfg, char *buf, size_t len)
{
    if (cfg->moderation_hw)
        snprintf(buf, len, "ibv_modify_cq (count %u, period %g us)", cfg->coal_count,
                 cfg->coal_period_us);
    else if (cfg->coal_count > 1 || cfg->coal_period_us > 0)
        snprintf(buf, len, "emulated: one signalled WR every %u (device has no CQ moderation)",
                 cfg->signal_every);
    else
        snprintf(buf, len, "off");
    return buf;
}

static cJSON *path_json(const cap_path_cfg_t *cfg)
{
    cJSON *j = cJSON_CreateObject();
    char buf[128];

    cJSON_AddNumberToObject(j, "depth", cfg->depth);
    cJSON_AddNumberToObject(j, "inline_bytes", cfg->inline_bytes);
    cJSON_AddNumberToObject(j, "signal_every", cfg->signal_every);
    cJSON_AddNumberToObject(j, "seg_bytes", (double)cfg->seg_bytes);
    cJSON_AddStringToObject(j, "moderation", cfg->moderation_hw ? "ibv_modify_cq" :
                            (cfg->coal_count > 1 || cfg->coal_period_us > 0) ? "emulated" : "off");
    cJSON_AddStringToObject(j, "moderation_detail", moderation_str(cfg, buf, sizeof(buf)));
    return j;
}

cJSON *cap_live_config_json(const cap_live_t *l, const cap_conn_t *c)
{
    cJSON *j = cJSON_CreateObject(), *d = cJSON_AddObjectToObject(j, "device");
    cJSON *pr, *paths;
    char hash[32], gid[CAP_GID_TEXT];

    cJSON_AddStringToObject(d, "name", l->dev->name);
    cJSON_AddStringToObject(d, "fw_ver", l->dev->fw_ver);
    cJSON_AddNumberToObject(d, "max_qp_wr", l->dev->lim.max_qp_wr);
    cJSON_AddNumberToObject(d, "max_inline_data", l->dev->lim.max_inline);
    cJSON_AddBoolToObject(d, "cq_moderation", l->dev->lim.cq_mod_supported);
    cJSON_AddNumberToObject(d, "gid_index", l->dev->gid_index);
    cJSON_AddStringToObject(d, "gid", cap_gid_text(l->dev->gid.raw, gid, sizeof(gid)));
    cJSON_AddStringToObject(j, "mem", l->mem->name);
    cJSON_AddStringToObject(j, "role", cap_role_name(l->role));
    if (l->has_peer) { /* who the figures were measured against */
        cJSON *pe = cJSON_AddObjectToObject(j, "peer");
        cJSON_AddStringToObject(pe, "address", l->peer_addr);
        cJSON_AddStringToObject(pe, "gid", cap_gid_text(l->peer_gid, gid, sizeof(gid)));
    }
    pr = cJSON_AddObjectToObject(j, "profile");
    cJSON_AddStringToObject(pr, "name", l->prof->name);
    snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)profile_hash(l->prof));
    cJSON_AddStringToObject(pr, "hash", hash);
    if (c) {
        paths = cJSON_AddObjectToObject(j, "paths");
        cJSON_AddItemToObject(paths, "LL", path_json(&c->cfg[CAP_PATH_LL]));
        cJSON_AddItemToObject(paths, "BW", path_json(&c->cfg[CAP_PATH_BW]));
    }
    return j;
}

void cap_live_print_paths(const cap_conn_t *c, FILE *fp)
{
    char buf[128];

    for (int i = 0; i < CAP_NPATHS; i++) {
        const cap_path_cfg_t *cfg = &c->cfg[i];
        fprintf(fp, "%s path: depth %u, inline <= %u B, signal every %u, segments %llu B, "
                "completion moderation %s\n", cap_path_name((cap_path_id_t)i), cfg->depth,
                cfg->inline_bytes, cfg->signal_every, (unsigned long long)cfg->seg_bytes,
                moderation_str(cfg, buf, sizeof(buf)));
    }
}

hs_status_t cap_live_serve(const cap_live_opts_t *o, cap_live_t *l)
{
    int more = 1;
    hs_status_t st = HS_OK;

    while (st == HS_OK && more) {
        cap_conn_t *c = NULL;
        st = cap_live_connect(o, l, 1, 0, &c);
        if (st != HS_OK)
            return st;
        st = cap_conn_serve(c, &more);
        cap_conn_close(c, 0);
    }
    return st;
}
