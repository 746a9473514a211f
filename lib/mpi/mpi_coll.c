/* The data plane over MPI (mb_comm_ops_t.collective): each collective is
 * the one MPI call of its name on host buffers, under the watchdog's
 * bound. bf16 and f16 travel as 16-bit words and reduce through user ops
 * (MPI has no 16-bit floats): each pair of elements is widened to f32,
 * combined and rounded back to nearest-even, which is exact for the
 * benchmarks' inputs (small integers; docs/distributed.md). */
#include <limits.h>
#include <stdint.h>

#include "mpi/mpi_internal.h"

/* ---- 16-bit floats ------------------------------------------------------ */

static float sum_f(float a, float b) {
  return a + b;
}
static float prod_f(float a, float b) {
  return a * b;
}
static float min_f(float a, float b) {
  return b < a ? b : a;
}
static float max_f(float a, float b) {
  return b > a ? b : a;
}

/* inout[i] = red(in[i], inout[i]) in f32, through the library's own
 * conversions (mb_convert: round to nearest even), a chunk at a time. */
static void half_reduce(mb_dtype_t dt, float (*red)(float, float),
                        const void *in, void *inout, int len) {
  enum { CHUNK = 256 };
  float a[CHUNK], b[CHUNK];
  for (int at = 0; at < len; at += CHUNK) {
    const size_t n = (size_t)(len - at < CHUNK ? len - at : CHUNK);
    const uint16_t *x = (const uint16_t *)in + at;
    uint16_t *y = (uint16_t *)inout + at;
    mb_convert(a, MB_DTYPE_F32, x, dt, n, 0u);
    mb_convert(b, MB_DTYPE_F32, y, dt, n, 0u);
    for (size_t i = 0; i < n; i++) b[i] = red(a[i], b[i]);
    mb_convert(y, dt, b, MB_DTYPE_F32, n, 0u);
  }
}

/* One user op per (format, reduction): MPI passes no context to it. */
#define HALF_OP(fmt, DT, red)                              \
  static void fmt##_##red(void *in, void *inout, int *len, \
                          MPI_Datatype *type) {            \
    (void)type;                                            \
    half_reduce(MB_DTYPE_##DT, red##_f, in, inout, *len);  \
  }
#define HALF_OPS(fmt, DT) \
  HALF_OP(fmt, DT, sum)   \
  HALF_OP(fmt, DT, prod) HALF_OP(fmt, DT, min) HALF_OP(fmt, DT, max)
HALF_OPS(bf16, BF16)
HALF_OPS(f16, F16)

int mb__mpi_coll_init(mpi_comm_t *c) {
  static MPI_User_function *const k_fns[MB__MPI_HALVES][MB_REDUCE_COUNT] = {
      [MB__MPI_HALF_BF16] = {[MB_REDUCE_SUM] = bf16_sum,
                             [MB_REDUCE_PROD] = bf16_prod,
                             [MB_REDUCE_MIN] = bf16_min,
                             [MB_REDUCE_MAX] = bf16_max},
      [MB__MPI_HALF_F16] = {[MB_REDUCE_SUM] = f16_sum,
                            [MB_REDUCE_PROD] = f16_prod,
                            [MB_REDUCE_MIN] = f16_min,
                            [MB_REDUCE_MAX] = f16_max},
  };
  for (int h = 0; h < MB__MPI_HALVES; h++)
    for (int r = 0; r < MB_REDUCE_COUNT; r++) c->half_ops[h][r] = MPI_OP_NULL;
  for (int h = 0; h < MB__MPI_HALVES; h++)
    for (int r = 0; r < MB_REDUCE_COUNT; r++) {
      int rc =
          MPI_Op_create(k_fns[h][r], 1 /* commutative */, &c->half_ops[h][r]);
      if (rc != MPI_SUCCESS) return rc;
    }
  return MPI_SUCCESS;
}

void mb__mpi_coll_fini(mpi_comm_t *c) {
  for (int h = 0; h < MB__MPI_HALVES; h++)
    for (int r = 0; r < MB_REDUCE_COUNT; r++)
      if (c->half_ops[h][r] != MPI_OP_NULL) MPI_Op_free(&c->half_ops[h][r]);
}

/* ---- the calls -------------------------------------------------------- */

static MPI_Datatype mpi_type(mb_dtype_t dt) {
  return dt == MB_DTYPE_F32   ? MPI_FLOAT
         : dt == MB_DTYPE_I32 ? MPI_INT32_T
                              : MPI_UINT16_T;
}

static MPI_Op mpi_reduction(const mpi_comm_t *c, mb_dtype_t dt,
                            mb_reduce_op_t op) {
  static const MPI_Op k_builtin[MB_REDUCE_COUNT] = {
      [MB_REDUCE_SUM] = MPI_SUM,
      [MB_REDUCE_PROD] = MPI_PROD,
      [MB_REDUCE_MIN] = MPI_MIN,
      [MB_REDUCE_MAX] = MPI_MAX,
  };
  return dt == MB_DTYPE_BF16  ? c->half_ops[MB__MPI_HALF_BF16][op]
         : dt == MB_DTYPE_F16 ? c->half_ops[MB__MPI_HALF_F16][op]
                              : k_builtin[op];
}

/* What MPI cannot express as the op defines it: said, not approximated. */
static mb_status_t declined(const mb_coll_t *k, int size) {
  if (k->kind == MB_COLL_REDUCE_SCATTER && !k->send)
    return mb_comm_fail(
        MB_ERR_UNSUPPORTED,
        "reduce_scatter in place: MPI_IN_PLACE leaves the result at the "
        "start of the buffer, the op defines it at the rank's block (as "
        "NCCL does); out of place is the same call");
  if (k->kind == MB_COLL_BROADCAST && k->send)
    return mb_comm_fail(MB_ERR_UNSUPPORTED,
                        "broadcast out of place: MPI_Bcast works in one "
                        "buffer (a copy on the root would be timed with it); "
                        "run broadcast in place");
  if (k->count > INT_MAX)
    return mb_comm_fail(MB_ERR_UNSUPPORTED,
                        "%s of %zu elements: MPI counts are int (at most %d)",
                        mb_coll_kind_name(k->kind), k->count, INT_MAX);
  (void)size;
  return MB_OK;
}

mb_status_t mb__mpi_collective(void *self, const mb_coll_t *k,
                               double timeout_s) {
  mpi_comm_t *c = self;
  const int size = c->info.size, me = c->info.rank;
  mb_status_t st = declined(k, size);
  if (st != MB_OK) return st;
  const MPI_Datatype t = mpi_type(k->dtype);
  const MPI_Op op = mpi_reduction(c, k->dtype, k->op);
  const int n = (int)k->count, block = (int)(k->count / (size_t)size);
  const void *in = k->send ? k->send : MPI_IN_PLACE;
  switch (k->kind) {
    case MB_COLL_ALL_REDUCE:
      GUARDED(c, "MPI_Allreduce", timeout_s,
              MPI_Allreduce(in, k->recv, n, t, op, c->comm));
      break;
    case MB_COLL_ALL_GATHER:
      GUARDED(c, "MPI_Allgather", timeout_s,
              MPI_Allgather(in, block, t, k->recv, block, t, c->comm));
      break;
    case MB_COLL_REDUCE_SCATTER:
      GUARDED(c, "MPI_Reduce_scatter_block", timeout_s,
              MPI_Reduce_scatter_block(in, k->recv, block, t, op, c->comm));
      break;
    case MB_COLL_ALL_TO_ALL:
      GUARDED(c, "MPI_Alltoall", timeout_s,
              MPI_Alltoall(in, block, t, k->recv, block, t, c->comm));
      break;
    case MB_COLL_BROADCAST:
      GUARDED(c, "MPI_Bcast", timeout_s,
              MPI_Bcast(k->recv, n, t, k->root, c->comm));
      break;
    case MB_COLL_REDUCE: {
      /* In place, only the root's input is MPI_IN_PLACE; the others send
       * their buffer and receive nothing. */
      const void *send = k->send         ? k->send
                         : me == k->root ? MPI_IN_PLACE
                                         : k->recv;
      GUARDED(c, "MPI_Reduce", timeout_s,
              MPI_Reduce(send, me == k->root || k->send ? k->recv : NULL, n, t,
                         op, k->root, c->comm));
      break;
    }
    case MB_COLL_SENDRECV:
      GUARDED(c, "MPI_Sendrecv", timeout_s,
              MPI_Sendrecv(k->send, n, t, k->peer_send, 0, k->recv, n, t,
                           k->peer_recv, 0, c->comm, MPI_STATUS_IGNORE));
      break;
    default:
      return mb_comm_fail(MB_ERR_INVALID_ARG, "collective kind %d",
                          (int)k->kind);
  }
  return MB_OK;
}
