/* libmicrobench — a communicator: the processes of one job that run a
 * plan, or one collective benchmark, together (the ranks of an MPI
 * communicator, or any transport an embedder supplies). The core never
 * calls MPI itself: the MPI library (libmicrobench_mpi, microbench/mpi.h)
 * fills the table below from an MPI_Comm, and everything distributed goes
 * through it. docs/distributed.md.
 *
 * Every call is collective over the communicator's ranks (each rank makes
 * the same calls in the same order) and every wait is bounded: a call its
 * partners do not join within `timeout_s` seconds ends the process with a
 * message naming the call, the rank and the wait, never a hang (a rank
 * that is missing or stuck cannot be waited out by the others; the
 * launcher then stops the job).
 *
 * Threading: a communicator is used by one thread at a time. */
#ifndef MICROBENCH_COMM_H
#define MICROBENCH_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mb_comm mb_comm_t;

/* X(ENUM, name) — the reductions, one table. */
#define MB_REDUCE_MAP(X) \
  X(SUM, "sum")          \
  X(PROD, "prod")        \
  X(MIN, "min")          \
  X(MAX, "max")

typedef enum mb_reduce_op {
#define MB__REDUCE_ENUM(e, name) MB_REDUCE_##e,
  MB_REDUCE_MAP(MB__REDUCE_ENUM)
#undef MB__REDUCE_ENUM
      MB_REDUCE_COUNT
} mb_reduce_op_t;

/* "sum"; "?" for an invalid value. Static. */
MB_API const char *mb_reduce_op_name(mb_reduce_op_t op);

/* Where a rank is. */
typedef struct mb_comm_info {
  uint32_t struct_size;
  int rank, size;             /* in the communicator */
  int local_rank, local_size; /* among the ranks sharing this host */
  char host[256];             /* this rank's host name */
  char impl[256]; /* the transport and its version ("Open MPI v4.1.4") */
} mb_comm_info_t;

#define MB_COMM_INFO_INIT \
  { sizeof(mb_comm_info_t), 0, 1, 0, 1, "", "" }

/* What an implementation provides: `self` is its own state, passed back
 * to each call. Statuses as everywhere (an error message through the
 * caller's mb_error_last(): implementations report with mb_comm_fail).
 * The table is append-only: struct_size says how much of it a caller
 * filled. */
typedef struct mb_comm_ops {
  uint32_t struct_size;
  mb_status_t (*info)(void *self, mb_comm_info_t *out);
  mb_status_t (*barrier)(void *self, double timeout_s);
  /* `bytes` bytes from `root` into every rank's buf. */
  mb_status_t (*bcast)(void *self, void *buf, size_t bytes, int root,
                       double timeout_s);
  /* n doubles reduced element-wise over the ranks, the result on every
   * rank (in place). */
  mb_status_t (*allreduce_f64)(void *self, double *values, size_t n,
                               mb_reduce_op_t op, double timeout_s);
  /* Each rank's `bytes` bytes to `root`, concatenated in rank order into
   * *out (malloc'd, the caller frees it; NULL on other ranks), each rank's
   * count in sizes[rank] (root only; `size` entries). */
  mb_status_t (*gather)(void *self, const void *buf, size_t bytes, int root,
                        void **out, size_t *sizes, double timeout_s);
  /* Frees self; NULL: nothing to free. */
  void (*destroy)(void *self);
} mb_comm_ops_t;

/* A communicator over `ops` (copied) and `self` (owned from here: freed
 * by ops->destroy with the communicator, also when this fails). */
MB_API mb_status_t mb_comm_create(const mb_comm_ops_t *ops, void *self,
                                  mb_comm_t **out);
/* NULL is a no-op. Not collective, but the transport's own teardown (MPI's
 * finalize) may be. */
MB_API void mb_comm_destroy(mb_comm_t *comm);

/* The calls, as described for mb_comm_ops_t; invalid arguments (a root
 * out of range, n too large) are MB_ERR_INVALID_ARG. */
MB_API mb_status_t mb_comm_info(const mb_comm_t *comm, mb_comm_info_t *out);
MB_API mb_status_t mb_comm_barrier(mb_comm_t *comm, double timeout_s);
MB_API mb_status_t mb_comm_bcast(mb_comm_t *comm, void *buf, size_t bytes,
                                 int root, double timeout_s);
MB_API mb_status_t mb_comm_allreduce_f64(mb_comm_t *comm, double *values,
                                         size_t n, mb_reduce_op_t op,
                                         double timeout_s);
MB_API mb_status_t mb_comm_gather(mb_comm_t *comm, const void *buf,
                                  size_t bytes, int root, void **out,
                                  size_t *sizes, double timeout_s);

/* For implementations: sets the calling thread's error message (as
 * mb_error_last() returns it) and returns `status`. */
MB_API mb_status_t mb_comm_fail(mb_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The communicator the context's distributed work uses (collective
 * benchmarks, sharded runs); borrowed: it must outlive its use by the
 * context. NULL detaches it (a single process: rank 0 of 1). */
MB_API void mb_context_set_comm(mb_context_t *ctx, mb_comm_t *comm);
MB_API mb_comm_t *mb_context_comm(const mb_context_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
