/* The communicator (microbench/comm.h): an implementation's table behind
 * checked calls. The checks are the ones every rank can make alone (a
 * root in range, a table that has the call), so a bad argument is an
 * error on the rank that made it rather than a mismatched collective. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct mb_comm {
  mb_comm_ops_t ops;
  void *self;
  int size; /* from info() at creation: roots are checked against it */
  int rank;
  double wait_s; /* mb_comm_set_wait */
};

static const char *const k_reduce_names[] = {
#define MB__REDUCE_NAME(e, name) name,
    MB_REDUCE_MAP(MB__REDUCE_NAME)
#undef MB__REDUCE_NAME
};

const char *mb_reduce_op_name(mb_reduce_op_t op) {
  return (unsigned)op < MB_REDUCE_COUNT ? k_reduce_names[op] : "?";
}

mb_status_t mb_reduce_op_from_name(const char *name, mb_reduce_op_t *out) {
  for (int r = 0; name && r < MB_REDUCE_COUNT; r++)
    if (!strcmp(name, k_reduce_names[r])) {
      if (out) *out = (mb_reduce_op_t)r;
      return MB_OK;
    }
  return mb__fail(MB_ERR_INVALID_ARG,
                  "unknown reduction \"%s\"; valid: sum, prod, min, max",
                  name ? name : "(null)");
}

static const char *const k_coll_names[] = {
#define MB__COLL_NAME(e, name) name,
    MB_COLL_MAP(MB__COLL_NAME)
#undef MB__COLL_NAME
};

const char *mb_coll_kind_name(mb_coll_kind_t kind) {
  return (unsigned)kind < MB_COLL_COUNT ? k_coll_names[kind] : "?";
}

mb_status_t mb_comm_fail(mb_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mb__error_setv(fmt, ap);
  va_end(ap);
  return status;
}

/* The calls every communicator must have, by their place in the table. */
#define HAS(ops, field)                                                        \
  ((ops)->struct_size >=                                                       \
       offsetof(mb_comm_ops_t, field) + sizeof(((mb_comm_ops_t *)0)->field) && \
   (ops)->field)

mb_status_t mb_comm_create(const mb_comm_ops_t *ops, void *self,
                           mb_comm_t **out) {
  mb_status_t st = MB_OK;
  if (out) *out = NULL;
  if (!ops || !out)
    st = mb__fail(MB_ERR_INVALID_ARG, "mb_comm_create: NULL %s",
                  ops ? "out" : "ops");
  else if (ops->struct_size > sizeof *ops)
    st = mb__fail(MB_ERR_ABI,
                  "mb_comm_create: the table is %u bytes, this library "
                  "knows %zu (a newer header than the library)",
                  ops->struct_size, sizeof *ops);
  else if (!HAS(ops, info) || !HAS(ops, barrier) || !HAS(ops, bcast) ||
           !HAS(ops, allreduce_f64) || !HAS(ops, gather))
    st = mb__fail(MB_ERR_INVALID_ARG,
                  "mb_comm_create: info, barrier, bcast, allreduce_f64 and "
                  "gather are required");
  mb_comm_t *c = st == MB_OK ? calloc(1, sizeof *c) : NULL;
  if (st == MB_OK && !c)
    st = mb__fail(MB_ERR_NO_MEMORY, "mb_comm_create: out of memory");
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  if (st == MB_OK && (st = ops->info(self, &info)) == MB_OK &&
      (info.size < 1 || info.rank < 0 || info.rank >= info.size))
    st = mb__fail(MB_ERR_INVALID_ARG,
                  "mb_comm_create: rank %d of %d is not a rank", info.rank,
                  info.size);
  if (st != MB_OK) {
    free(c);
    if (ops && HAS(ops, destroy)) ops->destroy(self);
    return st;
  }
  memcpy(&c->ops, ops, ops->struct_size);
  c->self = self;
  c->size = info.size;
  c->rank = info.rank;
  c->wait_s = 3600.0;
  *out = c;
  return MB_OK;
}

void mb_comm_destroy(mb_comm_t *comm) {
  if (!comm) return;
  if (HAS(&comm->ops, destroy)) comm->ops.destroy(comm->self);
  free(comm);
}

/* A wait's limit must be a positive number of seconds: a call has no
 * "forever" (comm.h). */
static mb_status_t check_wait(const mb_comm_t *comm, const char *call, int root,
                              double timeout_s) {
  if (!comm) return mb__fail(MB_ERR_INVALID_ARG, "%s: NULL communicator", call);
  if (!(timeout_s > 0))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: timeout %g s (a wait needs a limit > 0)", call,
                    timeout_s);
  if (root < 0 || root >= comm->size)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: root %d is not a rank (0..%d)",
                    call, root, comm->size - 1);
  return MB_OK;
}

static mb_status_t check(const mb_comm_t *comm, const char *call, int root) {
  if (!comm) return mb__fail(MB_ERR_INVALID_ARG, "%s: NULL communicator", call);
  if (root < 0 || root >= comm->size)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: root %d is not a rank (0..%d)",
                    call, root, comm->size - 1);
  return MB_OK;
}

mb_status_t mb_comm_info(const mb_comm_t *comm, mb_comm_info_t *out) {
  mb_status_t st = check(comm, "mb_comm_info", 0);
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  if (st == MB_OK) st = comm->ops.info(comm->self, &info);
  return st == MB_OK
             ? mb__struct_out(MB__STRUCT_COMM_INFO, "mb_comm_info", &info, out)
             : st;
}

mb_status_t mb_comm_barrier(mb_comm_t *comm, double timeout_s) {
  mb_status_t st = check_wait(comm, "mb_comm_barrier", 0, timeout_s);
  return st == MB_OK ? comm->ops.barrier(comm->self, timeout_s) : st;
}

mb_status_t mb_comm_bcast(mb_comm_t *comm, void *buf, size_t bytes, int root,
                          double timeout_s) {
  mb_status_t st = check_wait(comm, "mb_comm_bcast", root, timeout_s);
  if (st == MB_OK && bytes && !buf)
    st = mb__fail(MB_ERR_INVALID_ARG, "mb_comm_bcast: NULL buffer");
  return st == MB_OK ? comm->ops.bcast(comm->self, buf, bytes, root, timeout_s)
                     : st;
}

mb_status_t mb_comm_allreduce_f64(mb_comm_t *comm, double *values, size_t n,
                                  mb_reduce_op_t op, double timeout_s) {
  mb_status_t st = check_wait(comm, "mb_comm_allreduce_f64", 0, timeout_s);
  if (st == MB_OK && (unsigned)op >= MB_REDUCE_COUNT)
    st = mb__fail(MB_ERR_INVALID_ARG, "mb_comm_allreduce_f64: reduction %d",
                  (int)op);
  if (st == MB_OK && n && !values)
    st = mb__fail(MB_ERR_INVALID_ARG, "mb_comm_allreduce_f64: NULL values");
  return st == MB_OK
             ? comm->ops.allreduce_f64(comm->self, values, n, op, timeout_s)
             : st;
}

mb_status_t mb_comm_gather(mb_comm_t *comm, const void *buf, size_t bytes,
                           int root, void **out, size_t *sizes,
                           double timeout_s) {
  mb_status_t st = check_wait(comm, "mb_comm_gather", root, timeout_s);
  if (st == MB_OK && (!out || (bytes && !buf)))
    st = mb__fail(MB_ERR_INVALID_ARG, "mb_comm_gather: NULL %s",
                  out ? "buffer" : "out");
  if (out) *out = NULL;
  return st == MB_OK ? comm->ops.gather(comm->self, buf, bytes, root, out,
                                        sizes, timeout_s)
                     : st;
}

void mb_context_set_comm(mb_context_t *ctx, mb_comm_t *comm) {
  if (ctx) ctx->comm = comm;
}

mb_comm_t *mb_context_comm(const mb_context_t *ctx) {
  return ctx ? ctx->comm : NULL;
}

/* ---- the data plane ------------------------------------------------------ */

/* What a collective's arguments must satisfy on every rank alike. */
static mb_status_t check_coll(const mb_comm_t *comm, const mb_coll_t *c) {
  static const mb_dtype_t k_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16,
                                        MB_DTYPE_F16, MB_DTYPE_I32};
  const char *fn = "mb_comm_collective";
  if (!c || c->struct_size < sizeof *c)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: %s", fn,
                    c ? "a mb_coll_t from another header" : "NULL collective");
  if ((unsigned)c->kind >= MB_COLL_COUNT)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: kind %d", fn, (int)c->kind);
  const char *name = mb_coll_kind_name(c->kind);
  size_t d = 0;
  while (d < 4 && k_dtypes[d] != c->dtype) d++;
  if (d == 4)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: dtype %s (valid: f32, bf16, f16, i32)", name,
                    mb_dtype_name(c->dtype));
  if ((unsigned)c->op >= MB_REDUCE_COUNT)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: reduction %d", name, (int)c->op);
  const int blocks = c->kind == MB_COLL_ALL_GATHER ||
                     c->kind == MB_COLL_REDUCE_SCATTER ||
                     c->kind == MB_COLL_ALL_TO_ALL;
  if (blocks && c->count % (size_t)comm->size)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: count %zu is not a multiple of the %d ranks", name,
                    c->count, comm->size);
  if (!c->send &&
      (c->kind == MB_COLL_ALL_TO_ALL || c->kind == MB_COLL_SENDRECV))
    return mb__fail(MB_ERR_INVALID_ARG, "%s has no in-place form", name);
  if (c->count && !c->recv)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: NULL recv", name);
  const int peers[3] = {c->root, c->peer_send, c->peer_recv};
  for (int i = 0; i < 3; i++)
    if (peers[i] < 0 || peers[i] >= comm->size)
      return mb__fail(MB_ERR_INVALID_ARG, "%s: %s %d is not a rank (0..%d)",
                      name,
                      i == 0   ? "root"
                      : i == 1 ? "peer_send"
                               : "peer_recv",
                      peers[i], comm->size - 1);
  return MB_OK;
}

int mb_comm_has_collective(const mb_comm_t *comm) {
  return comm && HAS(&comm->ops, collective);
}

mb_status_t mb_comm_collective(mb_comm_t *comm, const mb_coll_t *c,
                               double timeout_s) {
  mb_status_t st = check_wait(comm, "mb_comm_collective", 0, timeout_s);
  if (st == MB_OK) st = check_coll(comm, c);
  if (st == MB_OK && !mb_comm_has_collective(comm))
    st = mb__fail(MB_ERR_UNSUPPORTED,
                  "%s: this communicator carries no data (its transport has "
                  "no collectives)",
                  mb_coll_kind_name(c->kind));
  return st == MB_OK ? comm->ops.collective(comm->self, c, timeout_s) : st;
}

mb_status_t mb_comm_split(mb_comm_t *comm, int color, int key, mb_comm_t **out,
                          double timeout_s) {
  mb_status_t st = check_wait(comm, "mb_comm_split", 0, timeout_s);
  if (out) *out = NULL;
  if (st == MB_OK && !out)
    st = mb__fail(MB_ERR_INVALID_ARG, "mb_comm_split: NULL out");
  if (st == MB_OK && !HAS(&comm->ops, split))
    st = mb__fail(MB_ERR_UNSUPPORTED,
                  "this communicator cannot be split (its transport has no "
                  "split): a collective runs over all its ranks");
  if (st != MB_OK) return st;
  st = comm->ops.split(comm->self, color, key, out, timeout_s);
  if (st == MB_OK && *out) (*out)->wait_s = comm->wait_s;
  return st;
}

void mb_comm_set_wait(mb_comm_t *comm, double seconds) {
  if (comm && seconds > 0) comm->wait_s = seconds;
}

double mb_comm_wait(const mb_comm_t *comm) {
  return comm ? comm->wait_s : 3600.0;
}
