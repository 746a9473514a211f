/* Internal to libmicrobench_mpi: the communicator's state, shared by the
 * control calls (mpi_comm.c) and the data plane (mpi_coll.c). */
#ifndef MB_LIB_MPI_INTERNAL_H
#define MB_LIB_MPI_INTERNAL_H

#include "microbench/mpi.h"
#include "mpi/watchdog.h"

/* The reductions MPI lacks: bf16 and f16 (MPI has no 16-bit floats), one
 * user op per dtype and reduction. */
enum { MB__MPI_HALF_BF16, MB__MPI_HALF_F16, MB__MPI_HALVES };

typedef struct mpi_comm {
  MPI_Comm comm, local;
  mb_comm_info_t info;
  int finalize; /* this library initialized MPI (mb_mpi_world) */
  mb__watchdog_t dog;
  MPI_Op half_ops[MB__MPI_HALVES][MB_REDUCE_COUNT];
} mpi_comm_t;

/* An MPI error code as a status with MPI's own message. */
mb_status_t mb__mpi_fail(int rc, const char *call);

/* Every call: armed, made, disarmed, its error a status. */
#define GUARDED(c, name, timeout, expr)                     \
  do {                                                      \
    mb__watchdog_arm(&(c)->dog, name, timeout);             \
    int rc_ = (expr);                                       \
    mb__watchdog_disarm(&(c)->dog);                         \
    if (rc_ != MPI_SUCCESS) return mb__mpi_fail(rc_, name); \
  } while (0)

/* mpi_coll.c: the user ops made and freed with the communicator (an MPI
 * error code), and the table's `collective` call. */
int mb__mpi_coll_init(mpi_comm_t *c);
void mb__mpi_coll_fini(mpi_comm_t *c);
mb_status_t mb__mpi_collective(void *self, const mb_coll_t *coll,
                               double timeout_s);

#endif
