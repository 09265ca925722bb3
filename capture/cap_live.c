/* cap_live.c - shared setup of the live commands (see cap_live.h). */
#include "capture/cap_live.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- the session's token -------------------------------------------------------------- */

/* A server given no token makes one, once per process: calibrate --server opens a listening
 * socket per benchmark, and each must take the token its client was given. */
static char g_made_token[CAP_TOKEN_GEN_CHARS + 1];

static hs_status_t token_made(const char **text)
{
    if (!g_made_token[0]) {
        if (cap_token_generate(g_made_token, sizeof(g_made_token)) != 0) {
            hs_log_error("no randomness for a token (getrandom); give one with --token or "
                         "HINTSIM_TOKEN");
            g_made_token[0] = '\0';
            return HS_ERR_ENV;
        }
        /* not hs_log_info: a quiet server must still say it */
        fprintf(stderr, "hintsim: this server's token: %s (its clients need it: --token %s, or "
                "HINTSIM_TOKEN=%s in their environment)\n", g_made_token, g_made_token,
                g_made_token);
    }
    *text = g_made_token;
    return HS_OK;
}

/* l->token from --token or HINTSIM_TOKEN; with neither, a server's is made (make = 1: now;
 * 0: left for a later call, once the server listens, *later set). */
static hs_status_t token_resolve(const cap_live_opts_t *o, cap_live_t *l, int make, int *later)
{
    const char *env = getenv("HINTSIM_TOKEN"), *text = o->token, *from = "--token";
    char err[CAP_ERR_LEN];
    hs_status_t st;

    if (!text && env && env[0]) {
        text = env;
        from = "HINTSIM_TOKEN";
    }
    if (!text && l->role == CAP_ROLE_CLIENT) {
        hs_log_error("--connect needs the server's token: --token TOKEN or HINTSIM_TOKEN in the "
                     "environment (a server given none prints the one it made)");
        return HS_ERR_USAGE;
    }
    if (!text && !make) {
        *later = 1;
        return HS_OK;
    }
    if (!text && (st = token_made(&text)) != HS_OK)
        return st;
    if (cap_token_from_text(text, l->token, err, sizeof(err)) != 0) {
        hs_log_error("%s: %s", from, err);
        return HS_ERR_USAGE;
    }
    return HS_OK;
}

/* ---- the server's address ------------------------------------------------------------- */

/* The network device of dev's GID (sysfs gid_attrs), into buf; 0 when found. */
static int gid_netdev(const cap_dev_t *dev, char *buf, size_t len)
{
    char path[256];
    FILE *f;
    int ok;

    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/gid_attrs/ndevs/%d",
             dev->name, dev->port, dev->gid_index);
    f = fopen(path, "r");
    if (!f)
        return -1;
    ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[ok ? strcspn(buf, "\n") : 0] = '\0';
    return buf[0] ? 0 : -1;
}

/* The first IPv4 address of network device ndev, into buf; 0 when found. */
static int netdev_ipv4(const char *ndev, char *buf, size_t len)
{
    struct ifaddrs *ifs = NULL;
    int rc = -1;

    if (getifaddrs(&ifs) != 0)
        return -1;
    for (struct ifaddrs *i = ifs; i && rc != 0; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, ndev) == 0 &&
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf,
                      (socklen_t)len))
            rc = 0;
    freeifaddrs(ifs);
    return rc;
}

hs_status_t cap_live_dev_address(const cap_dev_t *dev, char *buf, size_t len)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const uint8_t *g = dev->gid.raw;
    char ndev[IF_NAMESIZE + 1] = "", gid[CAP_GID_TEXT];
    int link_local = g[0] == 0xfe && (g[1] & 0xc0) == 0x80;

    if (memcmp(g, v4mapped, sizeof(v4mapped)) == 0 &&
        inet_ntop(AF_INET, g + 12, buf, (socklen_t)len))
        return HS_OK;
    if (gid_netdev(dev, ndev, sizeof(ndev)) == 0 && netdev_ipv4(ndev, buf, len) == 0)
        return HS_OK;
    if (!link_local && inet_ntop(AF_INET6, g, buf, (socklen_t)len))
        return HS_OK;
    if (link_local && ndev[0] && inet_ntop(AF_INET6, g, gid, sizeof(gid)) &&
        (size_t)snprintf(buf, len, "%s%%%s", gid, ndev) < len)
        return HS_OK;
    hs_log_error("%s: cannot tell the device's IP address (GID[%d] %s, network device %s): give "
                 "the address to listen on with --bind ADDR", dev->name, dev->gid_index,
                 cap_gid_text(g, gid, sizeof(gid)), ndev[0] ? ndev : "unknown");
    return HS_ERR_ENV;
}

/* ---- setup ---------------------------------------------------------------------------- */

static hs_status_t check_opts(const cap_live_opts_t *o)
{
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
    if (o->bind && !o->server) {
        hs_log_error("--bind is the --server's: the address it listens on");
        return HS_ERR_USAGE;
    }
    return HS_OK;
}

/* Listen on --bind, or on the device's own address. */
static hs_status_t live_listen(const cap_live_opts_t *o, cap_live_t *l)
{
    hs_status_t st = HS_OK;

    if (o->bind)
        snprintf(l->listen_addr, sizeof(l->listen_addr), "%s", o->bind);
    else
        st = cap_live_dev_address(l->dev, l->listen_addr, sizeof(l->listen_addr));
    if (st != HS_OK)
        return st;
    st = cap_conn_listen(l->listen_addr, (uint16_t)o->port, (uint64_t)(o->timeout_s * 1e9),
                         &l->listen_fd);
    if (st != HS_OK)
        return st;
    hs_log_info("listening on %s TCP port %llu (%s)", l->listen_addr,
                (unsigned long long)o->port, o->bind ? "--bind" :
                "the device's address; --bind ADDR for another, 0.0.0.0 for all");
    return HS_OK;
}

/* The profile the connections are made for: --profile (generic) with each --set. */
static hs_status_t live_profile(const cap_live_opts_t *o, cap_live_t *out)
{
    hs_status_t st = profile_load(o->profile ? o->profile : "generic", &out->prof);

    for (size_t i = 0; st == HS_OK && o->sets && i < o->sets->n; i++)
        st = profile_set(out->prof, o->sets->v[i]);
    return st;
}

hs_status_t cap_live_open(const cap_live_opts_t *o, cap_live_t *out)
{
    int make_token = 0;
    hs_status_t st;

    memset(out, 0, sizeof(*out));
    out->listen_fd = -1;
    st = check_opts(o);
    if (st != HS_OK)
        return st;
    out->role = o->server ? CAP_ROLE_SERVER : o->connect ? CAP_ROLE_CLIENT : CAP_ROLE_LOOP;
    if (out->role != CAP_ROLE_LOOP && (st = token_resolve(o, out, 0, &make_token)) != HS_OK)
        return st;
    st = cap_mem_find(o->mem, &out->mem);
    if (st != HS_OK)
        return st;
    st = live_profile(o, out);
    if (st != HS_OK)
        goto close_live;
    st = cap_dev_open(o->device, (int)o->gid_index, &out->dev);
    if (st != HS_OK)
        goto close_live;
    /* listening is said once there is a device to serve with (it was said, then exit 3) */
    if (out->role == CAP_ROLE_SERVER && (st = live_listen(o, out)) != HS_OK)
        goto close_live;
    /* the token is printed once it is listening */
    if (make_token && (st = token_resolve(o, out, 1, &make_token)) != HS_OK)
        goto close_live;
    return HS_OK;

close_live:
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
                          .hint_bytes = hint_bytes, .listen_fd = l->listen_fd,
                          .token = l->token};
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
