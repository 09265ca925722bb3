/* sweep_mpi.c - the MPI engine's collectives (see sweep_mpi.h). Compiled with
 * HS_SWEEP_HAVE_MPI when CMake found MPI; otherwise the stubs below say what is missing. */
#include "sweep/sweep_mpi.h"

#ifdef HS_SWEEP_HAVE_MPI
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libsimgrid exports MPI_Init, MPI_Comm_rank, ... too (SimGrid's SMPI) and hintsim links
 * SimGrid, so a plain call could bind to SimGrid's copy and abort. The functions are taken
 * from Open MPI's library itself; only its data symbols (MPI_COMM_WORLD, MPI_INT, ...,
 * which SimGrid does not define) bind by name. */
typedef struct {
    int (*init)(int *, char ***);
    int (*initialized)(int *);
    int (*finalized)(int *);
    int (*finalize)(void);
    int (*comm_rank)(MPI_Comm, int *);
    int (*comm_size)(MPI_Comm, int *);
    int (*barrier)(MPI_Comm);
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*win_allocate)(MPI_Aint, int, MPI_Info, MPI_Comm, void *, MPI_Win *);
    int (*win_lock_all)(int, MPI_Win);
    int (*win_unlock_all)(MPI_Win);
    int (*win_flush)(int, MPI_Win);
    int (*win_free)(MPI_Win *);
    int (*fetch_and_op)(const void *, void *, MPI_Datatype, int, MPI_Aint, MPI_Op, MPI_Win);
} sweep_mpi_fns_t;

/* dl_iterate_phdr callback: the path of the loaded libmpi.so.* (the one this process runs
 * with, which may not be the build machine's path). */
static int find_libmpi(struct dl_phdr_info *info, size_t size, void *data)
{
    const char *base = strrchr(info->dlpi_name, '/');

    (void)size;
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, "libmpi.so", 9) != 0)
        return 0;
    snprintf(data, 4096, "%s", info->dlpi_name);
    return 1;
}

static int mpi_fns_load(sweep_mpi_fns_t *f)
{
    char path[4096] = "";
    void *h = NULL;

    if (dl_iterate_phdr(find_libmpi, path) == 1)
        h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        h = dlopen(HS_SWEEP_MPI_LIB, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        hs_log_error("sweep --mpi: cannot open %s: %s (apt-get install libopenmpi-dev)",
                     HS_SWEEP_MPI_LIB, dlerror());
        return -1;
    }
    *(void **)&f->init = dlsym(h, "MPI_Init");
    *(void **)&f->initialized = dlsym(h, "MPI_Initialized");
    *(void **)&f->finalized = dlsym(h, "MPI_Finalized");
    *(void **)&f->finalize = dlsym(h, "MPI_Finalize");
    *(void **)&f->comm_rank = dlsym(h, "MPI_Comm_rank");
    *(void **)&f->comm_size = dlsym(h, "MPI_Comm_size");
    *(void **)&f->barrier = dlsym(h, "MPI_Barrier");
    *(void **)&f->allreduce = dlsym(h, "MPI_Allreduce");
    *(void **)&f->win_allocate = dlsym(h, "MPI_Win_allocate");
    *(void **)&f->win_lock_all = dlsym(h, "MPI_Win_lock_all");
    *(void **)&f->win_unlock_all = dlsym(h, "MPI_Win_unlock_all");
    *(void **)&f->win_flush = dlsym(h, "MPI_Win_flush");
    *(void **)&f->win_free = dlsym(h, "MPI_Win_free");
    *(void **)&f->fetch_and_op = dlsym(h, "MPI_Fetch_and_op");
    if (!f->init || !f->initialized || !f->finalized || !f->finalize || !f->comm_rank ||
        !f->comm_size || !f->barrier || !f->allreduce || !f->win_allocate ||
        !f->win_lock_all || !f->win_unlock_all || !f->win_flush || !f->win_free ||
        !f->fetch_and_op) {
        hs_log_error("sweep --mpi: %s lacks an MPI function", HS_SWEEP_MPI_LIB);
        return -1;
    }
    return 0;
}

/* The resolved functions; loaded once, on first use (one process, one MPI library). */
static const sweep_mpi_fns_t *mpi_fns(void)
{
    static sweep_mpi_fns_t fns;
    static int state; /* 0 not tried, 1 ok, -1 failed */

    if (state == 0)
        state = mpi_fns_load(&fns) == 0 ? 1 : -1;
    return state == 1 ? &fns : NULL;
}

int sweep_mpi_available(void)
{
    return 1;
}

hs_status_t sweep_mpi_init(int *rank, int *nranks)
{
    const sweep_mpi_fns_t *f = mpi_fns();
    int inited = 0;

    if (!f)
        return HS_ERR_ENV;
    f->initialized(&inited);
    if (!inited && f->init(NULL, NULL) != MPI_SUCCESS) {
        hs_log_error("sweep --mpi: MPI_Init failed (run under mpirun)");
        return HS_ERR_ENV;
    }
    f->comm_rank(MPI_COMM_WORLD, rank);
    f->comm_size(MPI_COMM_WORLD, nranks);
    return HS_OK;
}

hs_status_t sweep_mpi_barrier(void)
{
    const sweep_mpi_fns_t *f = mpi_fns();

    return f && f->barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? HS_OK : HS_ERR_ENV;
}

hs_status_t sweep_mpi_combine(hs_status_t mine, size_t computed, hs_status_t *all,
                              size_t *computed_all)
{
    const sweep_mpi_fns_t *f = mpi_fns();
    int st_in = (int)mine, st_out = 0;
    unsigned long long c_in = computed, c_out = 0;

    if (!f ||
        f->allreduce(&st_in, &st_out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        f->allreduce(&c_in, &c_out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
        return HS_ERR_ENV;
    *all = (hs_status_t)st_out;
    *computed_all = (size_t)c_out;
    return HS_OK;
}

struct sweep_mpi_counter {
    MPI_Win win;
};

hs_status_t sweep_mpi_counter_create(sweep_mpi_counter_t **out)
{
    const sweep_mpi_fns_t *f = mpi_fns();
    sweep_mpi_counter_t *c;
    uint64_t *base = NULL;
    int rank = 0;

    if (!f || !(c = calloc(1, sizeof(*c))))
        return HS_ERR_ENV;
    f->comm_rank(MPI_COMM_WORLD, &rank);
    if (f->win_allocate(rank == 0 ? (MPI_Aint)sizeof(uint64_t) : 0, (int)sizeof(uint64_t),
                        MPI_INFO_NULL, MPI_COMM_WORLD, &base, &c->win) != MPI_SUCCESS) {
        hs_log_error("sweep --mpi: MPI_Win_allocate failed");
        free(c);
        return HS_ERR_ENV;
    }
    if (rank == 0)
        *base = 0;
    /* the counter is zero before any rank may fetch it */
    if (f->barrier(MPI_COMM_WORLD) != MPI_SUCCESS ||
        f->win_lock_all(0, c->win) != MPI_SUCCESS) {
        f->win_free(&c->win);
        free(c);
        return HS_ERR_ENV;
    }
    *out = c;
    return HS_OK;
}

hs_status_t sweep_mpi_counter_next(sweep_mpi_counter_t *c, uint64_t *out)
{
    const sweep_mpi_fns_t *f = mpi_fns();
    uint64_t one = 1, got = 0;

    if (f->fetch_and_op(&one, &got, MPI_UINT64_T, 0, 0, MPI_SUM, c->win) != MPI_SUCCESS ||
        f->win_flush(0, c->win) != MPI_SUCCESS)
        return HS_ERR_ENV;
    *out = got;
    return HS_OK;
}

void sweep_mpi_counter_free(sweep_mpi_counter_t *c)
{
    const sweep_mpi_fns_t *f = mpi_fns();

    if (!c)
        return;
    f->win_unlock_all(c->win);
    f->win_free(&c->win);
    free(c);
}

void sweep_mpi_finalize(void)
{
    const sweep_mpi_fns_t *f;
    int inited = 0, finalized = 0;

    if (!(f = mpi_fns()))
        return;
    f->initialized(&inited);
    f->finalized(&finalized);
    if (inited && !finalized)
        f->finalize();
}

#else /* !HS_SWEEP_HAVE_MPI */

static hs_status_t no_mpi(void)
{
    hs_log_error("sweep --mpi: this hintsim was built without MPI; install Open MPI "
                 "(apt-get install libopenmpi-dev openmpi-bin) and rebuild");
    return HS_ERR_UNSUPPORTED;
}

int sweep_mpi_available(void)
{
    return 0;
}

hs_status_t sweep_mpi_init(int *rank, int *nranks)
{
    (void)rank;
    (void)nranks;
    return no_mpi();
}

hs_status_t sweep_mpi_barrier(void)
{
    return HS_ERR_UNSUPPORTED;
}

hs_status_t sweep_mpi_combine(hs_status_t mine, size_t computed, hs_status_t *all,
                              size_t *computed_all)
{
    (void)mine;
    (void)computed;
    (void)all;
    (void)computed_all;
    return HS_ERR_UNSUPPORTED;
}

hs_status_t sweep_mpi_counter_create(sweep_mpi_counter_t **out)
{
    (void)out;
    return HS_ERR_UNSUPPORTED;
}

hs_status_t sweep_mpi_counter_next(sweep_mpi_counter_t *c, uint64_t *out)
{
    (void)c;
    (void)out;
    return HS_ERR_UNSUPPORTED;
}

void sweep_mpi_counter_free(sweep_mpi_counter_t *c)
{
    (void)c;
}

void sweep_mpi_finalize(void)
{
}

#endif
