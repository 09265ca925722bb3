/* sim_platform.c - generate the SimGrid platform XML from the profile (see sim_platform.h). */
#include "sim/sim_platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sim_platform_sender_name(unsigned i, char *buf, size_t len)
{
    snprintf(buf, len, "sender%u", i);
}

static void write_xml(FILE *f, const sim_cfg_t *cfg, unsigned nflows)
{
    double bps = cfg->s_per_byte > 0 ? 1.0 / cfg->s_per_byte : 1e30;
    char name[32];
    unsigned i;

    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
               "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
               "  <zone id=\"hintsim\" routing=\"Full\">\n");
    fprintf(f, "    <host id=\"%s\" speed=\"1Gf\"/>\n", SIM_RECEIVER_HOST);
    fprintf(f, "    <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", SIM_PORT_LINK,
            bps);
    for (i = 0; i < nflows; i++) {
        sim_platform_sender_name(i, name, sizeof(name));
        fprintf(f, "    <host id=\"%s\" speed=\"1Gf\"/>\n", name);
        fprintf(f, "    <link id=\"up%u\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", i,
                bps, cfg->wire2_s);
    }
    for (i = 0; i < nflows; i++) { /* the DTD wants every route after hosts and links */
        sim_platform_sender_name(i, name, sizeof(name));
        fprintf(f, "    <route src=\"%s\" dst=\"%s\"><link_ctn id=\"up%u\"/>"
                   "<link_ctn id=\"%s\"/></route>\n", name, SIM_RECEIVER_HOST, i, SIM_PORT_LINK);
    }
    fprintf(f, "  </zone>\n</platform>\n");
}

hs_status_t sim_platform_write(const sim_cfg_t *cfg, unsigned nflows, char **path_out)
{
    const char *dir = getenv("TMPDIR");
    char *path = NULL;
    FILE *f = NULL;
    int fd;

    if (asprintf(&path, "%s/hintsim-platform-XXXXXX", dir && *dir ? dir : "/tmp") < 0)
        return HS_ERR_NOMEM;
    fd = mkstemp(path);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        hs_log_error("%s: cannot create the generated platform: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        free(path);
        return HS_ERR_IO;
    }
    write_xml(f, cfg, nflows);
    if (fclose(f) != 0) {
        hs_log_error("%s: cannot write the generated platform: %s", path, strerror(errno));
        unlink(path);
        free(path);
        return HS_ERR_IO;
    }
    *path_out = path;
    return HS_OK;
}
