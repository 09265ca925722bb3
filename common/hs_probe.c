/* hs_probe.c - checks of the machine: programs on $PATH, /dev/kvm (see hs_probe.h). */
#include "common/hs_probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hs_probe_init(hs_probe_t *c, const char *name, const char *needed, const char *package)
{
    memset(c, 0, sizeof(*c));
    c->name = name;
    c->needed = needed;
    c->package = package;
}

int hs_probe_on_path(const char *prog, char *buf, size_t len)
{
    const char *path = getenv("PATH");

    while (path && *path) {
        const char *colon = strchr(path, ':');
        int n = colon ? (int)(colon - path) : (int)strlen(path);
        snprintf(buf, len, "%.*s/%s", n, path, prog);
        if (n > 0 && access(buf, X_OK) == 0)
            return 1;
        path = colon ? colon + 1 : NULL;
    }
    return 0;
}

void hs_probe_output_line(const char *cmd, const char *match, char *buf, size_t len)
{
    FILE *fp = popen(cmd, "r");
    char line[512];

    buf[0] = '\0';
    if (!fp)
        return;
    while (fgets(line, sizeof(line), fp)) {
        if (!buf[0] && strstr(line, match)) {
            line[strcspn(line, "\r\n")] = '\0';
            snprintf(buf, len, "%s", line);
        }
    }
    pclose(fp);
}

void hs_probe_tool(hs_probe_t *c, const char *name, const char *prog, const char *vercmd,
                   const char *needed, const char *package)
{
    char path[1024], cmd[1200];

    hs_probe_init(c, name, needed, package);
    c->ok = hs_probe_on_path(prog, path, sizeof(path));
    if (!c->ok) {
        snprintf(c->detail, sizeof(c->detail), "%s not found", prog);
        return;
    }
    snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", path, vercmd);
    hs_probe_output_line(cmd, "", c->detail, sizeof(c->detail));
    if (!c->detail[0])
        snprintf(c->detail, sizeof(c->detail), "%.500s", path);
}

void hs_probe_kvm(hs_probe_t *c)
{
    hs_probe_init(c, "KVM", "a faster VM (plain emulation works, ~20 s boot)", "");
    c->ok = access("/dev/kvm", R_OK | W_OK) == 0;
    snprintf(c->detail, sizeof(c->detail), "%s", c->ok ? "/dev/kvm usable"
                                                        : "no /dev/kvm: the VM runs emulated");
}
