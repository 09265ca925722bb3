/* cap_probe.c - what capture needs of this machine, for `hintsim doctor` (cap_probe.h):
 * verbs devices and their limits, the soft-RoCE kernel module, the CUDA driver and its GPUs
 * (loaded with dlopen: a build without CUDA probes them too), nvcc. */
#include "capture/cap_probe.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

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
        goto close_ctx;
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
close_ctx:
    if (ctx)
        ibv_close_device(ctx);
    return j;
}

void cap_probe_verbs(hs_probe_t *c, cJSON *devices)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    char line[256];
    size_t off = 0;

    hs_probe_init(c, "verbs devices", "capture, validate, calibrate",
                  "ibverbs-providers rdma-core (soft-RoCE: rdma_rxe module)");
    for (int i = 0; list && i < n; i++) {
        cJSON_AddItemToArray(devices, verbs_device_json(list[i], line, sizeof(line)));
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

void cap_probe_rxe_module(hs_probe_t *c)
{
    struct utsname u;
    char path[512];
    struct stat st;

    hs_probe_init(c, "rdma_rxe module", "soft-RoCE on this kernel",
                  "linux-image-amd64 (the VM harness fetches its own)");

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

static void cuda_list_gpus(void *lib, cJSON *gpus, hs_probe_t *c, int count)
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
        cJSON_AddItemToArray(gpus, g);
        if (off < sizeof(c->detail))
            off += (size_t)snprintf(c->detail + off, sizeof(c->detail) - off,
                                    "; GPU %d %s, %.0f GiB, dmabuf %s", i, nm,
                                    (double)bytes / (1 << 30), dmabuf ? "yes" : "no");
    }
}

void cap_probe_cuda(hs_probe_t *c, cJSON *gpus)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cu_init_t init;
    cu_fn_int_t version, count;
    int ver = 0, n = 0;

    hs_probe_init(c, "CUDA driver/GPUs", "--mem cuda (GPU buffers)",
                  "nvidia-driver libcuda1 (non-free)");
    if (!lib) {
        snprintf(c->detail, sizeof(c->detail), "libcuda.so.1 not found (no NVIDIA driver)");
        return;
    }
    init = (cu_init_t)dlsym(lib, "cuInit");
    version = (cu_fn_int_t)dlsym(lib, "cuDriverGetVersion");
    count = (cu_fn_int_t)dlsym(lib, "cuDeviceGetCount");
    if (!init || !version || !count || init(0) != 0 || count(&n) != 0) {
        snprintf(c->detail, sizeof(c->detail), "driver present, cuInit failed (no usable GPU)");
        goto close_lib;
    }
    version(&ver);
    snprintf(c->detail, sizeof(c->detail), "driver API %d.%d, %d GPU(s)", ver / 1000,
             ver % 1000 / 10, n);
    cuda_list_gpus(lib, gpus, c, n);
    c->ok = n > 0;
close_lib:
    dlclose(lib);
}

void cap_probe_nvcc(hs_probe_t *c)
{
    char path[1024], line[1100];

    hs_probe_init(c, "nvcc", "building the CUDA memory backend",
                  "nvidia-cuda-toolkit (or /usr/local/cuda)");
    c->ok = hs_probe_on_path("nvcc", path, sizeof(path)) ||
            access(strcpy(path, "/usr/local/cuda/bin/nvcc"), X_OK) == 0;
    if (!c->ok) {
        snprintf(c->detail, sizeof(c->detail), "not found");
        return;
    }
    snprintf(line, sizeof(line), "'%s' --version 2>/dev/null", path);
    hs_probe_output_line(line, "release", c->detail, sizeof(c->detail));
}
