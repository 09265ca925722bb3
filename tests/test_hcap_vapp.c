/* test_hcap_vapp.c - a verbs program that reaches libibverbs the way NCCL's verbs wrapper does,
 * for libhintcap's tests in the soft-RoCE VM (tests/vm/preload-dlopen.sh).
 *
 * It resolves a table of verbs functions (as NCCL's ncclIbvSymbols) and then calls only the
 * table and the context's ops: posts go through qp->context->ops.post_send and polling
 * through cq->context->ops.poll_cq, as NCCL's wrap_ibv_post_send / wrap_ibv_poll_cq do.
 * How the table is filled is the MODE:
 *   nccl     dlopen("libibverbs.so") or else "libibverbs.so.1", RTLD_NOW; dlvsym(handle,
 *            name, "IBVERBS_1.1") (ibv_reg_dmabuf_mr at "IBVERBS_1.12", optional)
 *   so1      dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL); dlsym(handle, name)
 *   default  dlopen(..., RTLD_GLOBAL); dlsym(RTLD_DEFAULT, name)
 *   next     dlopen(..., RTLD_GLOBAL); dlsym(RTLD_NEXT, name) from this shared library
 *   linked   the addresses of the linked functions (NCCL's NCCL_BUILD_RDMA_CORE mode)
 * The resolution code lives in a shared library (libhcap_vapp_dl.so, as in libnccl.so) that
 * does not link libibverbs; hcap_vapp_linked is the same source linked normally.
 *
 * Work: two RC QPs on one device connected to each other (loopback). QP A posts --writes N
 * RDMA WRITEs of --size S bytes in chains of --signal K (the last of each chain signalled,
 * one chain in flight); QP B posts --sends M signalled 64-byte SENDs into receives posted
 * on A. --post 0 creates everything and posts nothing. --outside N: QP B also posts N
 * signalled WRITEs through the provider's own post_send taken from a second copy of
 * libibverbs (dlmopen, a namespace of its own: no libhintcap there), never through
 * ops.post_send of its context - what mlx5 direct verbs / DevX posting looks like to the
 * interposer; the completions are still polled through the context's ops. Prints which
 * object each wrapped function was resolved from, and exits 0 only when every signalled WR
 * completed with success.
 *
 * `hcap_vapp deepbind PLUGIN [N]` (hcap_vapp only) instead loads PLUGIN (libhcap_deep.so,
 * tests/test_hcap_deep.c: a transport linking libibverbs) with dlopen(RTLD_DEEPBIND), as
 * some communication libraries load theirs, and has it post N WRITEs (default 100).
 */
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VAPP_EXPORT __attribute__((visibility("default")))

int vapp_run(int argc, char **argv);

#ifndef VAPP_MAIN_ONLY

/* The functions NCCL resolves (the subset this program needs). */
typedef struct {
    struct ibv_device **(*get_device_list)(int *);
    void (*free_device_list)(struct ibv_device **);
    const char *(*get_device_name)(struct ibv_device *);
    struct ibv_context *(*open_device)(struct ibv_device *);
    int (*close_device)(struct ibv_context *);
    int (*query_port)(struct ibv_context *, uint8_t, struct ibv_port_attr *);
    int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *);
    int (*dealloc_pd)(struct ibv_pd *);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);
    int (*dereg_mr)(struct ibv_mr *);
    struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *,
                                int);
    int (*destroy_cq)(struct ibv_cq *);
    struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
    int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
    int (*destroy_qp)(struct ibv_qp *);
} vsyms_t;

typedef struct {
    const char *mode;
    const char *device;
    long writes, size, sends, signal, post, outside;
} vopts_t;

typedef struct {
    vsyms_t s;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_mr *mr;
    struct ibv_cq *cq[2];
    struct ibv_qp *qp[2];
    char *buf;
    size_t buf_len;
    union ibv_gid gid;
    uint8_t port;
} vapp_t;

#ifdef VAPP_LINKED
/* ibv_query_port and ibv_reg_mr are macros in <infiniband/verbs.h>: pass through. */
static int linked_query_port(struct ibv_context *c, uint8_t p, struct ibv_port_attr *a)
{
    return ibv_query_port(c, p, a);
}

static struct ibv_mr *linked_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    return ibv_reg_mr(pd, addr, len, access);
}

static int resolve(const char *mode, vsyms_t *s)
{
    if (strcmp(mode, "linked") != 0) {
        fprintf(stderr, "vapp: this build only does 'linked'\n");
        return -1;
    }
    s->get_device_list = ibv_get_device_list;
    s->free_device_list = ibv_free_device_list;
    s->get_device_name = ibv_get_device_name;
    s->open_device = ibv_open_device;
    s->close_device = ibv_close_device;
    s->query_port = linked_query_port;
    s->query_gid = ibv_query_gid;
    s->alloc_pd = ibv_alloc_pd;
    s->dealloc_pd = ibv_dealloc_pd;
    s->reg_mr = linked_reg_mr;
    s->reg_dmabuf_mr = ibv_reg_dmabuf_mr;
    s->dereg_mr = ibv_dereg_mr;
    s->create_cq = ibv_create_cq;
    s->destroy_cq = ibv_destroy_cq;
    s->create_qp = ibv_create_qp;
    s->modify_qp = ibv_modify_qp;
    s->destroy_qp = ibv_destroy_qp;
    return 0;
}
#else
static const struct {
    const char *name;
    size_t off;
    const char *version; /* NCCL's: IBVERBS_1.1 unless given */
    int optional;
} g_slots[] = {
#define S(n, f) {n, offsetof(vsyms_t, f), NULL, 0}
    S("ibv_get_device_list", get_device_list), S("ibv_free_device_list", free_device_list),
    S("ibv_get_device_name", get_device_name), S("ibv_open_device", open_device),
    S("ibv_close_device", close_device), S("ibv_query_port", query_port),
    S("ibv_query_gid", query_gid), S("ibv_alloc_pd", alloc_pd), S("ibv_dealloc_pd", dealloc_pd),
    S("ibv_reg_mr", reg_mr), S("ibv_dereg_mr", dereg_mr), S("ibv_create_cq", create_cq),
    S("ibv_destroy_cq", destroy_cq), S("ibv_create_qp", create_qp), S("ibv_modify_qp", modify_qp),
    S("ibv_destroy_qp", destroy_qp),
#undef S
    {"ibv_reg_dmabuf_mr", offsetof(vsyms_t, reg_dmabuf_mr), "IBVERBS_1.12", 1},
};

static void *open_verbs(const char *mode)
{
    void *h = NULL;

    if (strcmp(mode, "nccl") == 0) {
        h = dlopen("libibverbs.so", RTLD_NOW);
        if (!h)
            h = dlopen("libibverbs.so.1", RTLD_NOW);
    } else {
        h = dlopen("libibverbs.so.1", RTLD_NOW | (strcmp(mode, "so1") == 0 ? RTLD_LOCAL
                                                                            : RTLD_GLOBAL));
    }
    if (!h)
        fprintf(stderr, "vapp: dlopen libibverbs: %s\n", dlerror());
    return h;
}

static void *lookup(const char *mode, void *h, const char *name, const char *version)
{
    if (strcmp(mode, "nccl") == 0)
        return dlvsym(h, name, version ? version : "IBVERBS_1.1");
    if (strcmp(mode, "so1") == 0)
        return dlsym(h, name);
    if (strcmp(mode, "default") == 0)
        return dlsym(RTLD_DEFAULT, name);
    return dlsym(RTLD_NEXT, name);
}

static int resolve(const char *mode, vsyms_t *s)
{
    void *h;
    size_t i;

    if (strcmp(mode, "nccl") && strcmp(mode, "so1") && strcmp(mode, "default") &&
        strcmp(mode, "next")) {
        fprintf(stderr, "vapp: mode '%s': one of nccl, so1, default, next\n", mode);
        return -1;
    }
    if (!(h = open_verbs(mode)))
        return -1;
    for (i = 0; i < sizeof(g_slots) / sizeof(g_slots[0]); i++) {
        void *p = lookup(mode, h, g_slots[i].name, g_slots[i].version);

        if (!p && !g_slots[i].optional) {
            fprintf(stderr, "vapp: %s: %s not found: %s\n", mode, g_slots[i].name, dlerror());
            return -1;
        }
        memcpy((char *)s + g_slots[i].off, &p, sizeof(p));
    }
    /* An old IBVERBS_1.0 compat entry is not what libhintcap wraps: it must stay libibverbs'. */
    if (strcmp(mode, "nccl") == 0) {
        void *compat = dlvsym(h, "ibv_open_device", "IBVERBS_1.0");
        Dl_info info;

        printf("vapp: ibv_open_device@IBVERBS_1.0 from %s\n",
               compat && dladdr(compat, &info) && info.dli_fname ? info.dli_fname : "nowhere");
    }
    return 0; /* the handle stays open, as NCCL's */
}
#endif

/* Where a resolved function lives: libhintcap.so for the wrapped ones under capture. */
static void say_origin(const char *name, void *fn)
{
    Dl_info info;

    if (fn && dladdr(fn, &info) && info.dli_fname)
        printf("vapp: %s from %s\n", name, info.dli_fname);
    else
        printf("vapp: %s unresolved\n", name);
}

static int vapp_open(vapp_t *a, const vopts_t *o)
{
    struct ibv_device **list;
    int n, i;

    list = a->s.get_device_list(&n);
    if (!list || n == 0) {
        fprintf(stderr, "vapp: no verbs device\n");
        return -1;
    }
    for (i = 0; i < n && !a->ctx; i++)
        if (!o->device || strcmp(a->s.get_device_name(list[i]), o->device) == 0)
            a->ctx = a->s.open_device(list[i]);
    a->s.free_device_list(list);
    if (!a->ctx) {
        fprintf(stderr, "vapp: cannot open %s\n", o->device ? o->device : "a device");
        return -1;
    }
    a->port = 1;
    if (a->s.query_gid(a->ctx, a->port, 0, &a->gid) != 0) {
        fprintf(stderr, "vapp: ibv_query_gid failed\n");
        return -1;
    }
    return 0;
}

static int vapp_objects(vapp_t *a, const vopts_t *o)
{
    struct ibv_qp_init_attr init;
    int i;

    a->buf_len = (size_t)o->size * 2 + 4096;
    a->buf = calloc(1, a->buf_len);
    a->pd = a->s.alloc_pd(a->ctx);
    if (!a->buf || !a->pd)
        return -1;
    a->mr = a->s.reg_mr(a->pd, a->buf, a->buf_len,
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!a->mr)
        return -1;
    for (i = 0; i < 2; i++) {
        a->cq[i] = a->s.create_cq(a->ctx, 1024, NULL, NULL, 0);
        if (!a->cq[i])
            return -1;
        memset(&init, 0, sizeof(init));
        init.send_cq = init.recv_cq = a->cq[i];
        init.qp_type = IBV_QPT_RC;
        init.cap.max_send_wr = 2 * (uint32_t)o->signal + 8;
        init.cap.max_recv_wr = (uint32_t)o->sends + 8;
        init.cap.max_send_sge = init.cap.max_recv_sge = 1;
        a->qp[i] = a->s.create_qp(a->pd, &init);
        if (!a->qp[i])
            return -1;
    }
    return 0;
}

/* INIT -> RTR -> RTS, connected to the other QP of this process. */
static int vapp_connect(vapp_t *a, int i)
{
    struct ibv_qp_attr at;

    memset(&at, 0, sizeof(at));
    at.qp_state = IBV_QPS_INIT;
    at.port_num = a->port;
    at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    if (a->s.modify_qp(a->qp[i], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                          IBV_QP_ACCESS_FLAGS))
        return -1;
    memset(&at, 0, sizeof(at));
    at.qp_state = IBV_QPS_RTR;
    at.path_mtu = IBV_MTU_1024;
    at.dest_qp_num = a->qp[1 - i]->qp_num;
    at.max_dest_rd_atomic = 1;
    at.min_rnr_timer = 12;
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = a->gid;
    at.ah_attr.grh.hop_limit = 1;
    at.ah_attr.port_num = a->port;
    if (a->s.modify_qp(a->qp[i], &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                          IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        return -1;
    memset(&at, 0, sizeof(at));
    at.qp_state = IBV_QPS_RTS;
    at.timeout = 14;
    at.retry_cnt = 7;
    at.rnr_retry = 7;
    at.max_rd_atomic = 1;
    return a->s.modify_qp(a->qp[i], &at, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                             IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                             IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Poll cq through its context's ops until want send completions arrived (10 s bound). */
static int wait_sends(vapp_t *a, struct ibv_cq *cq, long want)
{
    struct timespec t0, t;
    struct ibv_wc wc[16];
    long got = 0;
    int n, i;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (got < want) {
        n = cq->context->ops.poll_cq(cq, 16, wc);
        if (n < 0)
            return -1;
        for (i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                fprintf(stderr, "vapp: completion status %d\n", (int)wc[i].status);
                return -1;
            }
            got += !(wc[i].opcode & IBV_WC_RECV);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) {
            fprintf(stderr, "vapp: %ld of %ld completions after 10 s\n", got, want);
            return -1;
        }
    }
    (void)a;
    return 0;
}

/* N WRITEs from QP A in chains of K, the last of each signalled; one chain in flight. */
static int post_writes(vapp_t *a, const vopts_t *o)
{
    struct ibv_send_wr wr[256], *bad;
    struct ibv_sge sge[256];
    long done = 0;

    while (done < o->writes) {
        long k = o->writes - done < o->signal ? o->writes - done : o->signal, j;

        for (j = 0; j < k; j++) {
            sge[j] = (struct ibv_sge){(uintptr_t)a->buf, (uint32_t)o->size, a->mr->lkey};
            memset(&wr[j], 0, sizeof(wr[j]));
            wr[j].wr_id = (uint64_t)(done + j);
            wr[j].sg_list = &sge[j];
            wr[j].num_sge = 1;
            wr[j].opcode = IBV_WR_RDMA_WRITE;
            wr[j].send_flags = j == k - 1 ? IBV_SEND_SIGNALED : 0;
            wr[j].wr.rdma.remote_addr = (uintptr_t)a->buf + (uint64_t)o->size;
            wr[j].wr.rdma.rkey = a->mr->rkey;
            wr[j].next = j + 1 < k ? &wr[j + 1] : NULL;
        }
        if (a->qp[0]->context->ops.post_send(a->qp[0], wr, &bad) != 0)
            return -1;
        if (wait_sends(a, a->cq[0], 1) != 0)
            return -1;
        done += k;
    }
    return 0;
}

/* M signalled SENDs from QP B into receives posted on A. */
static int post_sends(vapp_t *a, const vopts_t *o)
{
    struct ibv_recv_wr rwr, *rbad;
    struct ibv_send_wr wr, *bad;
    struct ibv_sge sge = {(uintptr_t)a->buf, 64, a->mr->lkey};
    long i;

    for (i = 0; i < o->sends; i++) {
        memset(&rwr, 0, sizeof(rwr));
        rwr.wr_id = (uint64_t)i;
        rwr.sg_list = &sge;
        rwr.num_sge = 1;
        if (a->qp[0]->context->ops.post_recv(a->qp[0], &rwr, &rbad) != 0)
            return -1;
    }
    for (i = 0; i < o->sends; i++) {
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = 1000000 + (uint64_t)i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        if (a->qp[1]->context->ops.post_send(a->qp[1], &wr, &bad) != 0 ||
            wait_sends(a, a->cq[1], 1) != 0)
            return -1;
    }
    return 0;
}

/* N signalled WRITEs on QP B through the post_send of a context opened by a second copy of
 * libibverbs (and so of the provider): the same provider code, not reached through B's
 * context ops. The other copy stays loaded (its context open) until the process ends. */
static int post_outside(vapp_t *a, const vopts_t *o)
{
    struct ibv_device **(*get_list)(int *);
    const char *(*get_name)(struct ibv_device *);
    struct ibv_context *(*open_dev)(struct ibv_device *), *ctx2 = NULL;
    struct ibv_device **list;
    struct ibv_send_wr wr, *bad;
    struct ibv_sge sge = {(uintptr_t)a->buf, 64, a->mr->lkey};
    const char *want = a->s.get_device_name(a->ctx->device);
    void *h = dlmopen(LM_ID_NEWLM, "libibverbs.so.1", RTLD_NOW);
    int n = 0, i;
    long k;

    if (!h) {
        fprintf(stderr, "vapp: dlmopen libibverbs: %s\n", dlerror());
        return -1;
    }
    get_list = (struct ibv_device * *(*)(int *))dlsym(h, "ibv_get_device_list");
    get_name = (const char *(*)(struct ibv_device *))dlsym(h, "ibv_get_device_name");
    open_dev = (struct ibv_context * (*)(struct ibv_device *))dlsym(h, "ibv_open_device");
    list = get_list && get_name && open_dev ? get_list(&n) : NULL;
    for (i = 0; i < n && !ctx2; i++)
        if (strcmp(get_name(list[i]), want) == 0)
            ctx2 = open_dev(list[i]);
    if (!ctx2) {
        fprintf(stderr, "vapp: the second libibverbs cannot open %s\n", want);
        return -1;
    }
    for (k = 0; k < o->outside; k++) {
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = 2000000 + (uint64_t)k;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = (uintptr_t)a->buf + 2048;
        wr.wr.rdma.rkey = a->mr->rkey;
        if (ctx2->ops.post_send(a->qp[1], &wr, &bad) != 0 || wait_sends(a, a->cq[1], 1) != 0)
            return -1;
    }
    return 0;
}

static void vapp_close(vapp_t *a)
{
    int i;

    for (i = 0; i < 2; i++) {
        if (a->qp[i])
            a->s.destroy_qp(a->qp[i]);
        if (a->cq[i])
            a->s.destroy_cq(a->cq[i]);
    }
    if (a->mr)
        a->s.dereg_mr(a->mr);
    if (a->pd)
        a->s.dealloc_pd(a->pd);
    if (a->ctx)
        a->s.close_device(a->ctx);
    free(a->buf);
}

static int parse(int argc, char **argv, vopts_t *o)
{
    int i;

    *o = (vopts_t){.writes = 600, .size = 1024, .sends = 100, .signal = 20, .post = 1};
    if (argc < 2)
        return -1;
    o->mode = argv[1];
    for (i = 2; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);

        if (strcmp(argv[i], "--device") == 0)
            o->device = argv[i + 1];
        else if (strcmp(argv[i], "--writes") == 0)
            o->writes = v;
        else if (strcmp(argv[i], "--size") == 0)
            o->size = v;
        else if (strcmp(argv[i], "--sends") == 0)
            o->sends = v;
        else if (strcmp(argv[i], "--signal") == 0)
            o->signal = v;
        else if (strcmp(argv[i], "--post") == 0)
            o->post = v;
        else if (strcmp(argv[i], "--outside") == 0)
            o->outside = v;
        else
            return -1;
    }
    return i == argc && o->signal >= 1 && o->signal <= 256 && o->size >= 64 ? 0 : -1;
}

VAPP_EXPORT int vapp_run(int argc, char **argv)
{
    vapp_t a;
    vopts_t o;
    int rc = 1;

    memset(&a, 0, sizeof(a));
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: %s nccl|so1|default|next|linked [--device D] [--writes N] "
                        "[--size S] [--signal K] [--sends M] [--post 0|1] [--outside N]\n",
                argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (resolve(o.mode, &a.s) != 0)
        return 1;
    say_origin("ibv_open_device", (void *)a.s.open_device);
    say_origin("ibv_create_qp", (void *)a.s.create_qp);
    say_origin("ibv_get_device_list", (void *)a.s.get_device_list);
    if (vapp_open(&a, &o) != 0 || vapp_objects(&a, &o) != 0 || vapp_connect(&a, 0) != 0 ||
        vapp_connect(&a, 1) != 0) {
        fprintf(stderr, "vapp: set-up failed\n");
        goto out;
    }
    if (o.post && (post_writes(&a, &o) != 0 || post_sends(&a, &o) != 0)) {
        fprintf(stderr, "vapp: posting failed\n");
        goto out;
    }
    if (o.outside > 0 && post_outside(&a, &o) != 0) {
        fprintf(stderr, "vapp: posting outside the context's ops failed\n");
        goto out;
    }
    printf("vapp: %s: qp %u posted %ld writes of %ld B (chains of %ld), qp %u %ld sends, "
           "%ld writes outside\n", o.mode, a.qp[0]->qp_num, o.post ? o.writes : 0, o.size,
           o.signal, a.qp[1]->qp_num, o.post ? o.sends : 0, o.outside);
    rc = 0;
out:
    vapp_close(&a);
    return rc;
}
#endif /* !VAPP_MAIN_ONLY */

#ifdef VAPP_MAIN_ONLY
/* Load a verbs plugin with RTLD_DEEPBIND and run its deep_run(writes). */
static int vapp_deepbind(const char *plugin, long writes)
{
    int (*run)(long);
    void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);

    if (!h) {
        fprintf(stderr, "vapp: dlopen %s: %s\n", plugin, dlerror());
        return 1;
    }
    run = (int (*)(long))dlsym(h, "deep_run");
    if (!run) {
        fprintf(stderr, "vapp: %s: no deep_run\n", plugin);
        return 1;
    }
    return run(writes) == 0 ? 0 : 1; /* the plugin stays loaded, as a transport does */
}
#endif

#if defined(VAPP_MAIN_ONLY) || defined(VAPP_LINKED)
int main(int argc, char **argv)
{
#ifdef VAPP_MAIN_ONLY
    if (argc >= 3 && strcmp(argv[1], "deepbind") == 0)
        return vapp_deepbind(argv[2], argc > 3 ? strtol(argv[3], NULL, 10) : 100);
#endif
    return vapp_run(argc, argv);
}
#endif
