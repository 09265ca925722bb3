/* hcap_config.c - see hcap_config.h. Runs inside the application: never exits, never
 * prints (the caller prints the one warning). */
#include "capture/preload/hcap_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"

static void env_str(const char *name, const char *def, char *buf, size_t len)
{
    const char *v = getenv(name);

    snprintf(buf, len, "%s", v && *v ? v : def);
}

static void warn_add(char *warn, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn_add(char *warn, size_t len, const char *fmt, ...)
{
    size_t used = strlen(warn);
    va_list ap;

    if (used + 2 >= len)
        return;
    if (used)
        snprintf(warn + used, len - used, "; ");
    used = strlen(warn);
    va_start(ap, fmt);
    vsnprintf(warn + used, len - used, fmt, ap);
    va_end(ap);
}

static uint64_t env_u64(const char *name, uint64_t def, int size, char *warn, size_t wlen)
{
    const char *v = getenv(name);
    uint64_t x;
    hs_status_t st;

    if (!v || !*v)
        return def;
    st = size ? hs_parse_size(v, &x) : hs_parse_u64(v, &x);
    if (st != HS_OK) {
        warn_add(warn, wlen, "ignoring %s='%s' (not a number)", name, v);
        return def;
    }
    return x;
}

/* HINTCAP_WRITER_CPU: a CPU number, or -1 (unset, or not one: warned). */
static int writer_cpu_of(char *warn, size_t wlen)
{
    const char *v = getenv("HINTCAP_WRITER_CPU");
    int cpu;

    if (!v || !*v)
        return -1;
    if ((cpu = hcap_cpu_parse(v)) < 0)
        warn_add(warn, wlen, "ignoring HINTCAP_WRITER_CPU='%s' (not a CPU number below %d)", v,
                 CPU_SETSIZE);
    return cpu;
}

static unsigned ring_order_of(uint64_t events)
{
    unsigned o = 4;

    while (o < 26 && ((uint64_t)1 << o) < events)
        o++;
    return o;
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int is_hint_key(const char *k)
{
    return strcmp(k, "RDMA_LOW_LATENCY_HINT") == 0 || strcmp(k, "low_latency_hint") == 0;
}

int hcap_config_parse_hint(const char *path, const char *text, hcap_hint_val_t *out,
                           char *err, size_t err_len)
{
    char line[512];
    const char *p = text;
    int lineno = 0;

    memset(out, 0, sizeof(*out));
    while (*p) {
        size_t n = strcspn(p, "\n");
        char *s, *eq;
        uint64_t v;

        lineno++;
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
        p += n + (p[n] == '\n');
        s = trim(line);
        if (!*s || *s == '#')
            continue;
        eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, err_len, "%s: line %d: expected KEY = VALUE", path, lineno);
            return -1;
        }
        *eq = '\0';
        if (!is_hint_key(trim(s)))
            continue;
        if (hs_parse_size(trim(eq + 1), &v) != HS_OK) {
            snprintf(err, err_len, "%s: line %d: RDMA_LOW_LATENCY_HINT: '%s' is not a size",
                     path, lineno, trim(eq + 1));
            out->invalid = 1;
            return -1;
        }
        out->set = 1;
        out->bytes = v;
    }
    return 0;
}

static void config_file_load(hcap_config_t *cfg, char *warn, size_t wlen)
{
    char buf[65536], err[512];
    FILE *fp = fopen(cfg->config_path, "r");
    size_t n;

    if (!fp) {
        /* A missing default file is normal; a named one that cannot be read is not. */
        if (getenv("HINTCAP_CONFIG") && *getenv("HINTCAP_CONFIG"))
            warn_add(warn, wlen, "cannot read hint config %s: %s", cfg->config_path,
                     strerror(errno));
        return;
    }
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    if (hcap_config_parse_hint(cfg->config_path, buf, &cfg->config, err, sizeof(err)) != 0)
        warn_add(warn, wlen, "%s", err);
}

static void hint_env_load(hcap_config_t *cfg, char *warn, size_t wlen)
{
    const char *v = getenv("RDMA_LOW_LATENCY_HINT");

    memset(&cfg->env, 0, sizeof(cfg->env));
    snprintf(cfg->env_text, sizeof(cfg->env_text), "%s", v ? v : "");
    if (!v || !*v)
        return;
    if (hs_parse_size(v, &cfg->env.bytes) == HS_OK) {
        cfg->env.set = 1;
        return;
    }
    cfg->env.invalid = 1;
    warn_add(warn, wlen, "RDMA_LOW_LATENCY_HINT='%s' is not a size, ignored", v);
}

void hcap_config_load(hcap_config_t *cfg, char *warn, size_t warn_len)
{
    memset(cfg, 0, sizeof(*cfg));
    warn[0] = '\0';
    env_str("HINTCAP_DIR", HCAP_DEFAULT_DIR, cfg->dir, sizeof(cfg->dir));
    env_str("HINTCAP_CONFIG", HCAP_DEFAULT_CONFIG, cfg->config_path, sizeof(cfg->config_path));
    cfg->cold_n = env_u64("HINTCAP_COLD", HCAP_DEFAULT_COLD, 0, warn, warn_len);
    cfg->ring_order = ring_order_of(
        env_u64("HINTCAP_RING_EVENTS", HCAP_DEFAULT_RING_EVENTS, 1, warn, warn_len));
    cfg->blocking = env_u64("HINTCAP_BLOCK", 0, 0, warn, warn_len) != 0;
    cfg->flush_us = env_u64("HINTCAP_FLUSH_US", HCAP_DEFAULT_FLUSH_US, 0, warn, warn_len);
    if (cfg->flush_us == 0)
        cfg->flush_us = 1;
    if (cfg->flush_us > HCAP_MAX_FLUSH_US) {
        warn_add(warn, warn_len, "HINTCAP_FLUSH_US=%llu is above %u (1 s): using %u",
                 (unsigned long long)cfg->flush_us, HCAP_MAX_FLUSH_US, HCAP_MAX_FLUSH_US);
        cfg->flush_us = HCAP_MAX_FLUSH_US;
    }
    cfg->writer_cpu = writer_cpu_of(warn, warn_len);
    hint_env_load(cfg, warn, warn_len);
    config_file_load(cfg, warn, warn_len);
}

struct timespec hcap_config_flush_ts(const hcap_config_t *cfg)
{
    return (struct timespec){(time_t)(cfg->flush_us / 1000000),
                             (long)(cfg->flush_us % 1000000) * 1000};
}

void hcap_config_note_code(hcap_config_t *cfg)
{
    const char *v = getenv("RDMA_LOW_LATENCY_HINT");
    uint64_t x;

    if (!v)
        v = "";
    if (strcmp(v, cfg->env_text) == 0)
        return;
    memset(&cfg->code, 0, sizeof(cfg->code));
    if (!*v) {
        cfg->code.set = 1; /* the application removed the hint: none */
        cfg->code.bytes = 0;
    } else if (hs_parse_size(v, &x) == HS_OK) {
        cfg->code.set = 1;
        cfg->code.bytes = x;
    } else {
        cfg->code.invalid = 1;
    }
}

void hcap_config_effective(const hcap_config_t *cfg, uint64_t *bytes, trace_hint_src_t *src)
{
    if (cfg->code.set) {
        *bytes = cfg->code.bytes;
        *src = TRACE_HINT_CODE;
    } else if (cfg->config.set) {
        *bytes = cfg->config.bytes;
        *src = TRACE_HINT_CONFIG;
    } else if (cfg->env.set) {
        *bytes = cfg->env.bytes;
        *src = TRACE_HINT_ENV;
    } else {
        *bytes = 0;
        *src = TRACE_HINT_NONE;
    }
}

int hcap_rank_from_env(void)
{
    /* Open MPI, MPICH/Intel MPI (PMI), PMIx, Slurm, then torchrun's RANK (last: the most
     * generic name, which other programs may set too). */
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                        "SLURM_PROCID", "RANK"};
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *v = getenv(names[i]);
        uint64_t x;

        if (v && hs_parse_u64(v, &x) == HS_OK && x <= INT32_MAX)
            return (int)x;
    }
    return -1;
}

int hcap_trace_path(char *buf, size_t len, const char *dir, const char *host, long pid,
                    int rank)
{
    char safe[64];
    size_t i;
    int n;

    /* A host name is not always file-name friendly ("(none)" in a bare VM). */
    snprintf(safe, sizeof(safe), "%s", *host ? host : "unknown");
    for (i = 0; safe[i]; i++)
        if (!isalnum((unsigned char)safe[i]) && !strchr("._-", safe[i]))
            safe[i] = '_';
    if (rank >= 0)
        n = snprintf(buf, len, "%s/%s-%ld-r%d.hst", dir, safe, pid, rank);
    else
        n = snprintf(buf, len, "%s/%s-%ld.hst", dir, safe, pid);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
