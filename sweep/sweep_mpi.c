/* sweep_mpi.c - the MPI engine's collectives (see sweep_mpi.h). Compiled with
 * HS_SWEEP_HAVE_MPI when CMake found MPI; otherwise the stubs below say what is missing. */
#include "sweep/sweep_mpi.h"

#ifdef HS_SWEEP_HAVE_MPI
#include <mpi.h>

int sweep_mpi_available(void)
{
    return 1;
}

hs_status_t sweep_mpi_init(int *rank, int *nranks)
{
    int inited = 0;

    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        hs_log_error("sweep --mpi: MPI_Init failed (run under mpirun)");
        return HS_ERR_ENV;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    return HS_OK;
}

hs_status_t sweep_mpi_barrier(void)
{
    return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? HS_OK : HS_ERR_ENV;
}

hs_status_t sweep_mpi_combine(hs_status_t mine, size_t computed, hs_status_t *all,
                              size_t *computed_all)
{
    int st_in = (int)mine, st_out = 0;
    unsigned long long c_in = computed, c_out = 0;

    if (MPI_Allreduce(&st_in, &st_out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&c_in, &c_out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
        return HS_ERR_ENV;
    *all = (hs_status_t)st_out;
    *computed_all = (size_t)c_out;
    return HS_OK;
}

void sweep_mpi_finalize(void)
{
    int inited = 0, finalized = 0;

    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
        MPI_Finalize();
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

void sweep_mpi_finalize(void)
{
}

#endif
