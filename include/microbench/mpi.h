/* libmicrobench_mpi — a communicator (microbench/comm.h) over MPI, in a
 * library of its own so that the core and everything that does not run
 * under MPI never needs MPI. Link it (and MPI) only where you use it:
 * -lmicrobench_mpi -lmicrobench with mpicc (in this build tree, the
 * targets microbench_mpi and MPI::MPI_C). docs/distributed.md. */
#ifndef MICROBENCH_MPI_H
#define MICROBENCH_MPI_H

#include <mpi.h>

#include "comm.h"

/* libmicrobench_mpi's own exports (libmicrobench's are MB_API). */
#if defined(MB_BUILDING_MPI_LIBRARY)
#define MB_MPI_API __attribute__((visibility("default")))
#else
#define MB_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A communicator over the ranks of `comm` (duplicated: the library's
 * messages never mix with the caller's). MPI must be initialized, and
 * stays the caller's to finalize; destroy the communicator first. */
MB_MPI_API mb_status_t mb_mpi_comm_create(MPI_Comm comm, mb_comm_t **out);

/* For programs that leave MPI to the library (mbench loads this at run
 * time when a launcher started it; the signature has no MPI type):
 * initializes MPI if it is not yet (with argc/argv, which may be NULL),
 * and gives a communicator over MPI_COMM_WORLD whose destruction
 * finalizes MPI if this call initialized it. */
MB_MPI_API mb_status_t mb_mpi_world(int *argc, char ***argv, mb_comm_t **out);

#ifdef __cplusplus
}
#endif
#endif
