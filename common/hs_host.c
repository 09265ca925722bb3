/* hs_host.c - see hs_host.h. */
#include "common/hs_host.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define HS_CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"

int hs_tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;

    if (__get_cpuid_max(0x80000000u, NULL) < 0x80000007u)
        return 0;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1u;
#else
    return 0;
#endif
}

/* Copy s without surrounding blanks, double quotes replaced (the line quotes the model). */
static void copy_trimmed(char *dst, size_t cap, const char *s)
{
    size_t n, i;

    while (*s == ' ' || *s == '\t')
        s++;
    n = strcspn(s, "\r\n");
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n >= cap)
        n = cap - 1;
    for (i = 0; i < n; i++)
        dst[i] = s[i] == '"' ? '\'' : s[i];
    dst[n] = '\0';
}

/* The value of /proc/cpuinfo line `line` when its key is key (followed by blanks and a
 * colon), else NULL. */
static const char *cpuinfo_value(const char *line, const char *key)
{
    size_t n = strlen(key);

    if (strncmp(line, key, n) != 0 || !strchr(" \t:", line[n]))
        return NULL;
    line += n + strspn(line + n, " \t");
    return *line == ':' ? line + 1 : NULL;
}

/* The first CPU's model name and, where /proc/cpuinfo gives them (x86), its family, model
 * and stepping: a name such as "Intel(R) Xeon(R) Processor" is shared by generations whose
 * figures differ. */
static void probe_cpu_model(hs_host_t *h)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], name[96] = "unknown", family[16] = "", model[16] = "", stepping[16] = "";
    const char *v;

    snprintf(h->cpu, sizeof(h->cpu), "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f) && line[0] != '\n') { /* the first CPU's block */
        if ((v = cpuinfo_value(line, "model name")))
            copy_trimmed(name, sizeof(name), v);
        else if ((v = cpuinfo_value(line, "cpu family")))
            copy_trimmed(family, sizeof(family), v);
        else if ((v = cpuinfo_value(line, "model")))
            copy_trimmed(model, sizeof(model), v);
        else if ((v = cpuinfo_value(line, "stepping")))
            copy_trimmed(stepping, sizeof(stepping), v);
    }
    fclose(f);
    if (family[0] && model[0])
        snprintf(h->cpu, sizeof(h->cpu), "%s, family %s model %s stepping %s", name, family,
                 model, stepping[0] ? stepping : "?");
    else
        snprintf(h->cpu, sizeof(h->cpu), "%s", name);
}

static void probe_clocksource(hs_host_t *h)
{
    FILE *f = fopen(HS_CLOCKSOURCE_PATH, "r");
    char line[64];

    snprintf(h->clocksource, sizeof(h->clocksource), "unknown");
    if (f && fgets(line, sizeof(line), f) && line[0] != '\n')
        copy_trimmed(h->clocksource, sizeof(h->clocksource), line);
    if (f)
        fclose(f);
}

void hs_host_probe(hs_host_t *h)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    memset(h, 0, sizeof(*h));
    probe_cpu_model(h);
    probe_clocksource(h);
    h->cores_online = online > 0 ? (int)online : 0;
    CPU_ZERO(&set);
    h->cores_allowed = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
    h->tsc_invariant = hs_tsc_invariant();
}

void hs_host_print(FILE *out)
{
    hs_host_t h;

    hs_host_probe(&h);
    fprintf(out, "host: cpu=\"%s\" cores_online=%d cores_allowed=%d clocksource=%s "
                 "tsc_invariant=%s\n",
            h.cpu, h.cores_online, h.cores_allowed, h.clocksource,
            h.tsc_invariant ? "yes" : "no");
    fflush(out);
}
