/* sweep_mpi.h - the MPI engine's few collective calls (Open MPI from Debian's
 * libopenmpi-dev). Built only when CMake finds MPI; otherwise every call returns
 * HS_ERR_UNSUPPORTED and sweep_mpi_available() is 0.
 */
#ifndef HS_SWEEP_MPI_H
#define HS_SWEEP_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"

/* 1 when this build links MPI. */
int sweep_mpi_available(void);
/* MPI_Init (once per process) and this process's rank and the number of ranks. */
hs_status_t sweep_mpi_init(int *rank, int *nranks);
/* Wait for every rank. */
hs_status_t sweep_mpi_barrier(void);
/* Combine every rank's status (any failure wins) and sum computed counts; every rank
 * gets the combined values. */
hs_status_t sweep_mpi_combine(hs_status_t mine, size_t computed, hs_status_t *all,
                              size_t *computed_all);
/* A work counter on rank 0 that every rank increments atomically (MPI one-sided
 * MPI_Fetch_and_op): ranks take points one at a time, so one slow point does not leave
 * the other ranks idle at the end. create and free are collective. */
typedef struct sweep_mpi_counter sweep_mpi_counter_t;
hs_status_t sweep_mpi_counter_create(sweep_mpi_counter_t **out);
/* The next value: 0, 1, 2, ... across all ranks together. */
hs_status_t sweep_mpi_counter_next(sweep_mpi_counter_t *c, uint64_t *out);
void sweep_mpi_counter_free(sweep_mpi_counter_t *c);
/* MPI_Finalize if sweep_mpi_init ran. */
void sweep_mpi_finalize(void);

#endif
