/* torchao's sparsity as host steps of a linear layer's graph (graph.h):
 * W[K,N] (hp) pruned once, untimed, by the core's own pattern (ops/
 * sparse.c) — compressed for the sparse GEMMs (values and 2-bit indices,
 * or kept 64x64 blocks and their indices), or kept dense with zeros for a
 * quantized recipe's dense GEMM. No device library prunes (torchao prunes
 * on the host too), and one copy of the pattern serves the steps, the
 * layer's reference and the tests. The note gives the pruning's weight
 * error ||W - W'|| / ||W||. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_internal.h"
#include "models/model_ops.h"
#include "ops/eltwise.h"
#include "ops/sparse.h"

/* The three steps; which output the sparse GEMM reads is its operand
 * 1 + role (values, then metadata or block indices). */
typedef enum step_kind { DENSE_24, COMPRESS_24, COMPRESS_BLOCK } step_kind_t;

static const char *const k_dims[] = {"K", "N"};
static const char *const k_dense_ops[] = {"W", "W_pruned"};
static const char *const k_c24_ops[] = {"W", "values", "meta"};
static const char *const k_cbs_ops[] = {"W", "blocks", "block_idx"};

static mb__sparsity_t pattern(step_kind_t s) {
  return s == COMPRESS_BLOCK ? MB__SPARSE_BLOCK : MB__SPARSE_24;
}

static mb_status_t resolve(step_kind_t s, const mb_op_t *op,
                           mb_op_params_t *p) {
  if (p->dtype_out == MB_DTYPE_NONE) p->dtype_out = p->dtype;
  mb_status_t st = mb__check_dtype(op, "dtype", p->dtype, mb__elt_float,
                                   MB__ELT_COUNT(mb__elt_float));
  return st == MB_OK ? mb__sparse_check_shape(op->name, pattern(s), p->shape[0],
                                              p->shape[1])
                     : st;
}

static void operand(step_kind_t s, const mb_op_params_t *p, uint32_t role,
                    mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  if (role == 0 || s == DENSE_24) {
    *dtype = p->dtype;
    *ndim = 2;
    shape[0] = p->shape[0];
    shape[1] = p->shape[1];
    return;
  }
  /* The sparse GEMM's B operands of an M = 1 problem. */
  mb_op_params_t q = *p;
  q.ndim = 3;
  q.shape[0] = 1;
  q.shape[1] = p->shape[0];
  q.shape[2] = p->shape[1];
  const mb_op_t *g =
      s == COMPRESS_24 ? &mb__op_gemm_sparse24 : &mb__op_gemm_block_sparse;
  g->operand(&q, role, dtype, ndim, shape);
}

/* Untimed: the runner never counts it. */
static double zero(const mb_op_params_t *p) {
  (void)p;
  return 0.0;
}

#define STEP_OP(var, pre, kind, nm, sum, outs, names)                      \
  static mb_status_t pre##_resolve(mb_op_params_t *p);                     \
  static void pre##_operand(const mb_op_params_t *p, uint32_t role,        \
                            mb_dtype_t *dtype, uint32_t *ndim,             \
                            int64_t *shape) {                              \
    operand(kind, p, role, dtype, ndim, shape);                            \
  }                                                                        \
  static const mb_op_t var = {.name = nm,                                  \
                              .summary = sum,                              \
                              .shape_syntax = "KxN",                       \
                              .dim_names = k_dims,                         \
                              .rank = 2,                                   \
                              .num_inputs = 1,                             \
                              .num_outputs = outs,                         \
                              .operand_names = names,                      \
                              .dtypes = mb__elt_float,                     \
                              .num_dtypes = MB__ELT_COUNT(mb__elt_float),  \
                              .resolve = pre##_resolve,                    \
                              .operand = pre##_operand,                    \
                              .flop = zero,                                \
                              .bytes = zero,                               \
                              .reads_output = mb__elt_never_reads_output}; \
  static mb_status_t pre##_resolve(mb_op_params_t *p) {                    \
    return resolve(kind, &var, p);                                         \
  }

STEP_OP(k_dense24, dense24, DENSE_24, "prune_2to4",
        "2:4-pruned W, dense (host, setup)", 1, k_dense_ops)
STEP_OP(k_c24, c24, COMPRESS_24, "compress_2to4",
        "2:4 values and indices of W (host, setup)", 2, k_c24_ops)
STEP_OP(k_cbs, cbs, COMPRESS_BLOCK, "compress_block",
        "kept 64x64 blocks of W and their indices (host, setup)", 2, k_cbs_ops)

static const mb_op_t *const k_step_ops[] = {&k_dense24, &k_c24, &k_cbs};

/* ||W - W'|| / ||W||, W' the pruned copy of W. */
static double prune_error(const float *w, const float *pruned, size_t n) {
  double all = 0.0, lost = 0.0;
  for (size_t i = 0; i < n; i++) {
    all += (double)w[i] * w[i];
    lost += ((double)w[i] - pruned[i]) * ((double)w[i] - pruned[i]);
  }
  return all > 0.0 ? sqrt(lost / all) : 0.0;
}

static mb_status_t host(step_kind_t s, const mb_op_params_t *p,
                        const void *const *in, void *const *out, char *note,
                        size_t cap) {
  const int64_t k = p->shape[0], n = p->shape[1];
  const size_t numel = (size_t)(k * n);
  float *w = mb__model_load(in[0], p->dtype, numel);
  float *pruned = malloc(numel * sizeof *pruned);
  float *vals = malloc(numel / 2 * sizeof *vals);
  mb_status_t st = w && pruned && vals ? MB_OK : MB_ERR_NO_MEMORY;
  if (st == MB_OK) {
    memcpy(pruned, w, numel * sizeof *w);
    st = mb__sparse_prune(pruned, k, n, pattern(s));
  }
  if (st == MB_OK && s == DENSE_24) {
    for (size_t i = 0; i < numel; i++)
      mb__store(out[0], p->dtype, i, pruned[i], 0);
  } else if (st == MB_OK) {
    if (s == COMPRESS_24)
      mb__sparse24_compress(w, k, n, vals, out[1]);
    else
      mb__sparse_block_compress(w, k, n, vals, out[1]);
    for (size_t i = 0; i < numel / 2; i++)
      mb__store(out[0], p->dtype, i, vals[i], 0);
  }
  if (st == MB_OK)
    snprintf(note, cap, "%s, weight error ||W - W'|| / ||W|| %.4f",
             s == COMPRESS_BLOCK
                 ? "64x64 blocks, the half of each block row of largest L2 "
                   "norm kept"
                 : "2:4 along K, the 2 largest |w| of each 4 kept",
             prune_error(w, pruned, numel));
  free(w);
  free(pruned);
  free(vals);
  return st == MB_ERR_NO_MEMORY
             ? mb__fail(st, "sparsity: out of host memory pruning W")
             : st;
}

static mb_status_t host_dense24(const mb_op_params_t *p, const void *const *in,
                                void *const *out, char *note, size_t cap) {
  return host(DENSE_24, p, in, out, note, cap);
}
static mb_status_t host_c24(const mb_op_params_t *p, const void *const *in,
                            void *const *out, char *note, size_t cap) {
  return host(COMPRESS_24, p, in, out, note, cap);
}
static mb_status_t host_cbs(const mb_op_params_t *p, const void *const *in,
                            void *const *out, char *note, size_t cap) {
  return host(COMPRESS_BLOCK, p, in, out, note, cap);
}

static const mb__host_fn_t k_host_fns[] = {host_dense24, host_c24, host_cbs};

uint32_t mb__graph_sparse_weights(mb__graph_t *g, const char *label, uint32_t w,
                                  int64_t k, int64_t n, mb_dtype_t hp,
                                  mb__sparsity_t s, int compress) {
  const step_kind_t kind = !compress               ? DENSE_24
                           : s == MB__SPARSE_BLOCK ? COMPRESS_BLOCK
                                                   : COMPRESS_24;
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = k;
  p.shape[1] = n;
  p.dtype = hp;
  const uint32_t args[3] = {w, MB__NEW, MB__NEW};
  return mb__graph_host_step(g, label, k_step_ops[kind], &p, args,
                             k_host_fns[kind]);
}
