/* cmd_doctor.c - `hintsim doctor [--json]`: one page on what this machine has for hintsim.
 *
 * The host first (common/hs_host.h: the line every benchmark names its figures' host with),
 * then each check says what was found (verbs devices and their limits, CUDA and GPUs, SimGrid,
 * gnuplot, qemu and busybox for the soft-RoCE VM, chromium for the report render test)
 * and, when something is missing, what it is needed for and the Debian package that brings
 * it. Nothing here changes the machine. Each probe lives beside the code it probes
 * (common/hs_probe.h); this file calls them in order and prints. Exit 0 whatever is
 * missing (the page is the answer); 2 on a usage error.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include "capture/cap_probe.h"
#include "cli/cli.h"
#include "common/hs_host.h"
#include "common/hs_probe.h"
#include "common/hs_util.h"
#include "plots/plot_gnuplot.h"
#include "sim/sim.h"
#include "sweep/sweep_probe.h"

enum { DOC_MAX_CHECKS = 16 };

typedef struct {
    hs_probe_t c[DOC_MAX_CHECKS];
    size_t n;
    cJSON *devices; /* verbs devices with limits */
    cJSON *gpus;
} doc_report_t;

static hs_probe_t *doc_next(doc_report_t *r)
{
    return &r->c[r->n < DOC_MAX_CHECKS - 1 ? r->n++ : r->n];
}

static void doc_collect(doc_report_t *r)
{
    r->devices = cJSON_CreateArray();
    r->gpus = cJSON_CreateArray();
    cap_probe_verbs(doc_next(r), r->devices);
    cap_probe_rxe_module(doc_next(r));
    cap_probe_cuda(doc_next(r), r->gpus);
    cap_probe_nvcc(doc_next(r));
    sweep_probe_cuda(doc_next(r));
    sim_probe_simgrid(doc_next(r));
    plot_gnuplot_probe(doc_next(r));
    hs_probe_tool(doc_next(r), "qemu", "qemu-system-x86_64", "--version",
                  "the soft-RoCE VM tests", "qemu-system-x86");
    hs_probe_tool(doc_next(r), "busybox", "busybox", "--help | head -1", "the VM's initramfs",
                  "busybox-static");
    hs_probe_tool(doc_next(r), "cpio", "cpio", "--version", "the VM's initramfs", "cpio");
    hs_probe_kvm(doc_next(r));
    hs_probe_tool(doc_next(r), "perftest", "ib_write_lat", "--version",
                  "comparing with perftest", "perftest");
    hs_probe_tool(doc_next(r), "chromium", "chromium", "--version", "the report render test",
                  "chromium");
}

static void doc_print_text(const doc_report_t *r)
{
    struct utsname u;

    uname(&u);
    printf("hintsim %s on %s (%s %s)\n", HINTSIM_VERSION, u.nodename, u.sysname, u.release);
    hs_host_print(stdout);
    printf("\n");
    for (size_t i = 0; i < r->n; i++) {
        const hs_probe_t *c = &r->c[i];
        printf("  %-7s %-17s %s\n", c->ok ? "ok" : "MISSING", c->name, c->detail);
        if (!c->ok)
            printf("  %-7s %-17s needed for %s%s%s\n", "", "", c->needed,
                   c->package[0] ? "; install: " : "", c->package);
    }
}

/* hs_host_probe's fields as root's "cpu" object */
static void doc_host_json(cJSON *root)
{
    cJSON *cpu = cJSON_AddObjectToObject(root, "cpu");
    hs_host_t h;

    hs_host_probe(&h);
    cJSON_AddStringToObject(cpu, "model", h.cpu);
    cJSON_AddNumberToObject(cpu, "cores_online", h.cores_online);
    cJSON_AddNumberToObject(cpu, "cores_allowed", h.cores_allowed);
    cJSON_AddStringToObject(cpu, "clocksource", h.clocksource);
    cJSON_AddBoolToObject(cpu, "tsc_invariant", h.tsc_invariant);
}

static void doc_print_json(doc_report_t *r)
{
    cJSON *root = cJSON_CreateObject(), *checks = cJSON_AddArrayToObject(root, "checks");
    struct utsname u;
    char *text;

    uname(&u);
    cJSON_AddStringToObject(root, "version", HINTSIM_VERSION);
    cJSON_AddStringToObject(root, "host", u.nodename);
    cJSON_AddStringToObject(root, "kernel", u.release);
    doc_host_json(root);
    for (size_t i = 0; i < r->n; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", r->c[i].name);
        cJSON_AddBoolToObject(c, "ok", r->c[i].ok);
        cJSON_AddStringToObject(c, "detail", r->c[i].detail);
        cJSON_AddStringToObject(c, "needed_for", r->c[i].needed);
        cJSON_AddStringToObject(c, "package", r->c[i].package);
        cJSON_AddItemToArray(checks, c);
    }
    cJSON_AddItemToObject(root, "verbs_devices", r->devices);
    cJSON_AddItemToObject(root, "gpus", r->gpus);
    r->devices = r->gpus = NULL;
    text = cJSON_Print(root);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(root);
}

struct doctor_opts {
    int json;
};

static const hs_opt_t g_doctor_opts[] = {
    {"json", 0, HS_OPT_FLAG, offsetof(struct doctor_opts, json), NULL, NULL,
     "print the checks as JSON"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_doctor_spec = {
    "hintsim doctor [--json]",
    "what this machine has for hintsim, what is missing and the package that brings it",
    g_doctor_opts, 0, 0,
    "Prints the host first (CPU model, cores, clock source, invariant TSC: the line every "
    "benchmark names its figures' host with), then checks verbs devices and their limits, "
    "CUDA and GPUs, SimGrid, gnuplot, qemu/busybox for the soft-RoCE VM, perftest and "
    "chromium. Exits 0 whatever is missing.",
};

int cmd_doctor(int argc, char **argv)
{
    struct doctor_opts o = {0};
    doc_report_t r = {0};
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_doctor_spec, argc, argv, &o, &pos, &npos);

    if (rc >= 0) {
        hs_opt_free(&g_doctor_spec, &o, pos);
        return rc;
    }
    doc_collect(&r);
    if (o.json)
        doc_print_json(&r);
    else
        doc_print_text(&r);
    cJSON_Delete(r.devices);
    cJSON_Delete(r.gpus);
    hs_opt_free(&g_doctor_spec, &o, pos);
    return 0;
}
