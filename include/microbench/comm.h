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
#include "dtype.h"

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
/* By name; an unknown one is MB_ERR_INVALID_ARG listing the valid. */
MB_API mb_status_t mb_reduce_op_from_name(const char *name,
                                          mb_reduce_op_t *out);

/* X(ENUM, name) — the collectives of the data plane, one table (the ops
 * of the same names, docs/distributed.md). */
#define MB_COLL_MAP(X)                \
  X(ALL_REDUCE, "all_reduce")         \
  X(ALL_GATHER, "all_gather")         \
  X(REDUCE_SCATTER, "reduce_scatter") \
  X(ALL_TO_ALL, "all_to_all")         \
  X(BROADCAST, "broadcast")           \
  X(REDUCE, "reduce")                 \
  X(SENDRECV, "sendrecv")

typedef enum mb_coll_kind {
#define MB__COLL_ENUM(e, name) MB_COLL_##e,
  MB_COLL_MAP(MB__COLL_ENUM)
#undef MB__COLL_ENUM
      MB_COLL_COUNT
} mb_coll_kind_t;

/* "all_reduce"; "?" for an invalid value. Static. */
MB_API const char *mb_coll_kind_name(mb_coll_kind_t kind);

/* One collective on host buffers. `count` is the size of the whole
 * exchange in elements, as nccl-tests counts it, the same on every rank:
 *   all_reduce, broadcast, reduce, sendrecv: send and recv hold count;
 *   all_gather: send holds count / size (this rank's block), recv count;
 *   reduce_scatter: send holds count, recv count / size (block `rank`);
 *   all_to_all: send and recv hold count, block j of send goes to rank j
 *     and block i of recv came from rank i (blocks of count / size);
 * count must then be a multiple of the number of ranks. sendrecv sends
 * to rank `peer_send` and receives from `peer_recv` at once.
 * In place (send NULL): recv holds the input too, laid out as NCCL does:
 * all_reduce, broadcast, reduce: the whole of recv; all_gather: this
 * rank's block of recv; reduce_scatter: recv holds count and the result
 * is block `rank` of it. all_to_all and sendrecv have no in-place form. */
typedef struct mb_coll {
  uint32_t struct_size;
  mb_coll_kind_t kind;
  mb_dtype_t dtype; /* f32, bf16, f16, i32 */
  mb_reduce_op_t op;
  const void *send; /* NULL: in place */
  void *recv;
  size_t count;
  int root;                 /* broadcast, reduce */
  int peer_send, peer_recv; /* sendrecv */
} mb_coll_t;

#define MB_COLL_INIT                                                          \
  {                                                                           \
    sizeof(mb_coll_t), MB_COLL_ALL_REDUCE, MB_DTYPE_F32, MB_REDUCE_SUM, NULL, \
        NULL, 0, 0, 0, 0                                                      \
  }

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

  /* ---- appended: absent in an older caller's table ---------------------- */
  /* Optional, the data plane: one collective on host memory (mb_coll_t),
   * what the CPU backend's collective kernels measure. NULL: the transport
   * carries control only (the GPU backends bring their own data plane,
   * NCCL or RCCL, and need only bcast to set it up). MB_ERR_UNSUPPORTED
   * for a case it does not do, with the reason. */
  mb_status_t (*collective)(void *self, const mb_coll_t *c, double timeout_s);
  /* Optional: the ranks that give the same color >= 0 as a communicator
   * of their own, ordered by key (*out NULL for a color < 0): collective
   * over this one. How a collective runs over fewer ranks than the job
   * has. */
  mb_status_t (*split)(void *self, int color, int key, mb_comm_t **out,
                       double timeout_s);
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

/* The collective through the table's data plane (MB_ERR_UNSUPPORTED,
 * saying so, when it has none); arguments checked first: a kind, dtype or
 * reduction out of range, a count that is not a multiple of the ranks
 * where blocks need one, a root or peer that is not a rank, NULL buffers
 * or an in-place form that does not exist are MB_ERR_INVALID_ARG. */
MB_API mb_status_t mb_comm_collective(mb_comm_t *comm, const mb_coll_t *c,
                                      double timeout_s);
/* As mb_comm_ops_t.split: collective over comm; *out NULL for a rank
 * whose color is < 0, and MB_ERR_UNSUPPORTED, saying so, for a table
 * without it. */
MB_API mb_status_t mb_comm_split(mb_comm_t *comm, int color, int key,
                                 mb_comm_t **out, double timeout_s);

/* Whether the communicator has a data plane (mb_comm_collective). */
MB_API int mb_comm_has_collective(const mb_comm_t *comm);

/* How long distributed work through this communicator waits for its
 * partners (a collective benchmark's steps: every rank's set-up, each
 * sample): seconds > 0; 3600 until set. The calls above take their own. */
MB_API void mb_comm_set_wait(mb_comm_t *comm, double seconds);
MB_API double mb_comm_wait(const mb_comm_t *comm);

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
