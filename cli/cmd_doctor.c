/* cmd_doctor.c - `hintsim doctor [--json]`: one page on what this machine has for hintsim.
 *
 * Each check says what was found (verbs devices and their limits, CUDA and GPUs, SimGrid,
 * gnuplot, qemu and busybox for the soft-RoCE VM, chromium for the report render test)
 * and, when something is missing, what it is needed for and the Debian package that brings
 * it. Nothing here changes the machine. Exit 0 whatever is missing (the page is the
 * answer); 2 on a usage error.
 */
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <simgrid/engine.h> /* base.h first: version.h needs SG_BEGIN_DECL */
#include <simgrid/version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/hs_util.h"
#include "plots/plot_gnuplot.h"

typedef struct {
    const char *name;    /* "gnuplot" */
    int ok;
    char detail[512];    /* what was found, or what is missing */
    const char *needed;  /* what hintsim needs it for */
    const char *package; /* Debian package(s) that bring it, "" if not a package */
} doc_check_t;

enum { DOC_MAX_CHECKS = 16 };

typedef struct {
    doc_check_t c[DOC_MAX_CHECKS];
    size_t n;
    cJSON *devices; /* verbs devices with limits */
    cJSON *gpus;
} doc_report_t;

static doc_check_t *doc_add(doc_report_t *r, const char *name, const char *needed,
                            const char *package)
{
    doc_check_t *c = &r->c[r->n < DOC_MAX_CHECKS - 1 ? r->n++ : r->n];

    memset(c, 0, sizeof(*c));
    c->name = name;
    c->needed = needed;
    c->package = package;
    return c;
}

static int on_path(const char *prog, char *buf, size_t len)
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

/* First line of `cmd`'s output that contains match ("" = the first line), stderr dropped
 * by the caller's command; buf is "" if there is none. */
static void output_line(const char *cmd, const char *match, char *buf, size_t len)
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

static void first_line(const char *cmd, char *buf, size_t len)
{
    output_line(cmd, "", buf, len);
}

static cJSON *verbs_device_json(struct ibv_device *dev, char *line, size_t len)
{
    struct ibv_context *ctx = ibv_open_device(dev);
    struct ibv_device_attr a;
    struct ibv_port_attr pa;
    cJSON *j = cJSON_CreateObject();

    cJSON_AddStringToObject(j, "name", ibv_get_device_name(dev));
    if (!ctx || ibv_query_device(ctx, &a) != 0) {
        snprintf(line, len, "%s (cannot open or query)", ibv_get_device_name(dev));
        cJSON_AddBoolToObject(j, "usable", 0);
        goto out;
    }
    cJSON_AddStringToObject(j, "firmware", a.fw_ver);
    cJSON_AddNumberToObject(j, "max_qp_wr", a.max_qp_wr);
    cJSON_AddNumberToObject(j, "max_sge", a.max_sge);
    cJSON_AddNumberToObject(j, "max_cqe", a.max_cqe);
    cJSON_AddNumberToObject(j, "max_qp", a.max_qp);
    cJSON_AddNumberToObject(j, "max_mr_size", (double)a.max_mr_size);
    cJSON_AddNumberToObject(j, "ports", a.phys_port_cnt);
    if (ibv_query_port(ctx, 1, &pa) == 0) {
        cJSON_AddStringToObject(j, "port1_state", ibv_port_state_str(pa.state));
        cJSON_AddNumberToObject(j, "port1_active_mtu", 128 << pa.active_mtu);
        cJSON_AddStringToObject(j, "port1_link_layer",
                                pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "IB");
    }
    snprintf(line, len, "%s fw %s: max_qp_wr %d, max_sge %d, max_cqe %d, port 1 %s",
             ibv_get_device_name(dev), a.fw_ver, a.max_qp_wr, a.max_sge, a.max_cqe,
             cJSON_GetStringValue(cJSON_GetObjectItem(j, "port1_state")) ?: "?");
    cJSON_AddBoolToObject(j, "usable", 1);
out:
    if (ctx)
        ibv_close_device(ctx);
    return j;
}

static void check_verbs(doc_report_t *r)
{
    doc_check_t *c = doc_add(r, "verbs devices", "capture, validate, calibrate",
                             "ibverbs-providers rdma-core (soft-RoCE: rdma_rxe module)");
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    char line[256];
    size_t off = 0;

    r->devices = cJSON_CreateArray();
    for (int i = 0; list && i < n; i++) {
        cJSON_AddItemToArray(r->devices, verbs_device_json(list[i], line, sizeof(line)));
        off += (size_t)snprintf(c->detail + off, off < sizeof(c->detail) ?
                                sizeof(c->detail) - off : 0, "%s%s", i ? "; " : "", line);
    }
    if (list)
        ibv_free_device_list(list);
    c->ok = n > 0;
    if (!c->ok)
        snprintf(c->detail, sizeof(c->detail), "none (no RDMA NIC, rdma_rxe not set up); "
                 "soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE, "
                 "or use the VM harness (tests/vm)");
    /* the user-space providers are there: installing them again is not the remedy (a
     * device is; the detail says how) */
    struct stat st;
    if (!c->ok && stat("/etc/libibverbs.d", &st) == 0)
        c->package = "";
}

static void check_rxe_module(doc_report_t *r)
{
    doc_check_t *c = doc_add(r, "rdma_rxe module", "soft-RoCE on this kernel",
                             "linux-image-amd64 (the VM harness fetches its own)");
    struct utsname u;
    char path[512];
    struct stat st;

    uname(&u);
    snprintf(path, sizeof(path), "/lib/modules/%s", u.release);
    if (stat(path, &st) != 0) { /* a container, or a kernel booted without its modules */
        snprintf(c->detail, sizeof(c->detail), "no modules at all for kernel %.64s (no "
                 "/lib/modules/%.64s: a container, or a kernel without its modules); use the "
                 "VM harness (tests/vm), which fetches its own", u.release, u.release);
        c->package = "";
        return;
    }
    snprintf(path, sizeof(path), "/lib/modules/%s/kernel/drivers/infiniband/sw/rxe", u.release);
    c->ok = stat(path, &st) == 0;
    snprintf(c->detail, sizeof(c->detail), "%s for kernel %s", c->ok ? "present" : "absent",
             u.release);
}

typedef int (*cu_fn_int_t)(int *);
typedef int (*cu_init_t)(unsigned);
typedef int (*cu_dev_get_t)(int *, int);
typedef int (*cu_dev_name_t)(char *, int, int);
typedef int (*cu_dev_attr_t)(int *, int, int);
typedef int (*cu_dev_mem_t)(size_t *, int);

static void cuda_list_gpus(void *lib, doc_report_t *r, doc_check_t *c, int count)
{
    cu_dev_get_t get = (cu_dev_get_t)dlsym(lib, "cuDeviceGet");
    cu_dev_name_t name = (cu_dev_name_t)dlsym(lib, "cuDeviceGetName");
    cu_dev_attr_t attr = (cu_dev_attr_t)dlsym(lib, "cuDeviceGetAttribute");
    cu_dev_mem_t mem = (cu_dev_mem_t)dlsym(lib, "cuDeviceTotalMem_v2");
    size_t off = strlen(c->detail);

    for (int i = 0; get && name && attr && mem && i < count; i++) {
        int dev = 0, dmabuf = 0;
        char nm[128] = "?";
        size_t bytes = 0;
        cJSON *g = cJSON_CreateObject();
        get(&dev, i);
        name(nm, sizeof(nm), dev);
        mem(&bytes, dev);
        attr(&dmabuf, 124 /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */, dev);
        cJSON_AddStringToObject(g, "name", nm);
        cJSON_AddNumberToObject(g, "memory_bytes", (double)bytes);
        cJSON_AddBoolToObject(g, "dmabuf", dmabuf);
        cJSON_AddItemToArray(r->gpus, g);
        if (off < sizeof(c->detail))
            off += (size_t)snprintf(c->detail + off, sizeof(c->detail) - off,
                                    "; GPU %d %s, %.0f GiB, dmabuf %s", i, nm,
                                    (double)bytes / (1 << 30), dmabuf ? "yes" : "no");
    }
}

static void check_cuda(doc_report_t *r)
{
    doc_check_t *c = doc_add(r, "CUDA driver/GPUs", "--mem cuda (GPU buffers)",
                             "nvidia-driver libcuda1 (non-free)");
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cu_init_t init;
    cu_fn_int_t version, count;
    int ver = 0, n = 0;

    r->gpus = cJSON_CreateArray();
    if (!lib) {
        snprintf(c->detail, sizeof(c->detail), "libcuda.so.1 not found (no NVIDIA driver)");
        return;
    }
    init = (cu_init_t)dlsym(lib, "cuInit");
    version = (cu_fn_int_t)dlsym(lib, "cuDriverGetVersion");
    count = (cu_fn_int_t)dlsym(lib, "cuDeviceGetCount");
    if (!init || !version || !count || init(0) != 0 || count(&n) != 0) {
        snprintf(c->detail, sizeof(c->detail), "driver present, cuInit failed (no usable GPU)");
        goto out;
    }
    version(&ver);
    snprintf(c->detail, sizeof(c->detail), "driver API %d.%d, %d GPU(s)", ver / 1000,
             ver % 1000 / 10, n);
    cuda_list_gpus(lib, r, c, n);
    c->ok = n > 0;
out:
    dlclose(lib);
}

static void check_nvcc(doc_report_t *r)
{
    doc_check_t *c = doc_add(r, "nvcc", "building the CUDA memory backend",
                             "nvidia-cuda-toolkit (or /usr/local/cuda)");
    char path[1024], line[1100];

    c->ok = on_path("nvcc", path, sizeof(path)) ||
            access(strcpy(path, "/usr/local/cuda/bin/nvcc"), X_OK) == 0;
    if (!c->ok) {
        snprintf(c->detail, sizeof(c->detail), "not found");
        return;
    }
    snprintf(line, sizeof(line), "'%s' --version 2>/dev/null", path);
    output_line(line, "release", c->detail, sizeof(c->detail));
}

static void check_simgrid(doc_report_t *r)
{
    doc_check_t *c = doc_add(r, "SimGrid", "hintsim sim (discrete-event engine)",
                             "libsimgrid-dev");
    int ma = 0, mi = 0, pa = 0;

    sg_version_get(&ma, &mi, &pa);
    c->ok = ma > 0;
    snprintf(c->detail, sizeof(c->detail), "library %d.%d.%d (headers %s)", ma, mi, pa,
             SIMGRID_VERSION_STRING);
}

static void check_gnuplot(doc_report_t *r)
{
    doc_check_t *c = doc_add(r, "gnuplot", "report plots (PNG + SVG)", PLOT_GNUPLOT_PACKAGE);
    char path[1024], ver[128], cmd[1200], term[128];

    if (plot_gnuplot_find(path, sizeof(path)) != HS_OK) {
        snprintf(c->detail, sizeof(c->detail), "not found");
        return;
    }
    if (plot_gnuplot_version(ver, sizeof(ver)) != HS_OK) { /* there, but it does not run */
        snprintf(c->detail, sizeof(c->detail), "found at %.300s, but 'gnuplot --version' "
                 "failed there (check $HINTSIM_GNUPLOT)", path);
        return;
    }
    snprintf(cmd, sizeof(cmd), "'%s' -e 'set terminal pngcairo; set terminal svg; "
             "print \"terminals ok\"' 2>&1", path);
    first_line(cmd, term, sizeof(term));
    c->ok = strcmp(term, "terminals ok") == 0;
    snprintf(c->detail, sizeof(c->detail), "%s at %.300s, pngcairo+svg %s", ver, path,
             c->ok ? "ok" : "MISSING");
}

static void check_tool(doc_report_t *r, const char *name, const char *prog,
                       const char *vercmd, const char *needed, const char *package)
{
    doc_check_t *c = doc_add(r, name, needed, package);
    char path[1024], cmd[1200];

    c->ok = on_path(prog, path, sizeof(path));
    if (!c->ok) {
        snprintf(c->detail, sizeof(c->detail), "%s not found", prog);
        return;
    }
    snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", path, vercmd);
    first_line(cmd, c->detail, sizeof(c->detail));
    if (!c->detail[0])
        snprintf(c->detail, sizeof(c->detail), "%.500s", path);
}

static void check_kvm(doc_report_t *r)
{
    doc_check_t *c = doc_add(r, "KVM", "a faster VM (plain emulation works, ~20 s boot)", "");

    c->ok = access("/dev/kvm", R_OK | W_OK) == 0;
    snprintf(c->detail, sizeof(c->detail), "%s", c->ok ? "/dev/kvm usable"
                                                        : "no /dev/kvm: the VM runs emulated");
}

static void doc_collect(doc_report_t *r)
{
    check_verbs(r);
    check_rxe_module(r);
    check_cuda(r);
    check_nvcc(r);
    check_simgrid(r);
    check_gnuplot(r);
    check_tool(r, "qemu", "qemu-system-x86_64", "--version", "the soft-RoCE VM tests",
               "qemu-system-x86");
    check_tool(r, "busybox", "busybox", "--help | head -1", "the VM's initramfs",
               "busybox-static");
    check_tool(r, "cpio", "cpio", "--version", "the VM's initramfs", "cpio");
    check_kvm(r);
    check_tool(r, "perftest", "ib_write_lat", "--version", "comparing with perftest",
               "perftest");
    check_tool(r, "chromium", "chromium", "--version", "the report render test",
               "chromium");
}

static void doc_print_text(const doc_report_t *r)
{
    struct utsname u;

    uname(&u);
    printf("hintsim %s on %s (%s %s)\n\n", HINTSIM_VERSION, u.nodename, u.sysname, u.release);
    for (size_t i = 0; i < r->n; i++) {
        const doc_check_t *c = &r->c[i];
        printf("  %-7s %-17s %s\n", c->ok ? "ok" : "MISSING", c->name, c->detail);
        if (!c->ok)
            printf("  %-7s %-17s needed for %s%s%s\n", "", "", c->needed,
                   c->package[0] ? "; install: " : "", c->package);
    }
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
    "Checks verbs devices and their limits, CUDA and GPUs, SimGrid, gnuplot, qemu/busybox "
    "for the soft-RoCE VM, perftest and chromium. Exits 0 whatever is missing.",
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
