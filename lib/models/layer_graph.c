/* The one place a recipe becomes primitive steps: a linear layer's forward
 * and backward graph under a quantization recipe (ops/recipe.c's rows). */
#include <stdio.h>
#include <string.h>

#include "models/graph.h"
#include "ops/recipe.h"

/* The scaling of a B-side weight as quantize sees it: quantize's group runs
 * along columns, a weight's group along K (rows), so say the block. */
static mb_scaling_t as_quantize_scaling(mb_scaling_t s) {
  if (s.mode == MB_SCALE_GROUP)
    return (mb_scaling_t){MB_SCALE_BLOCK, {s.block[1], 1}};
  return s;
}

/* A step quantizing src (rows x cols, hp; transposed first when
 * `transpose`) to dtype with scaling s; its Q and scale buffers in q, sc. */
static void quantize_step(mb__graph_t *g, const char *label, mb_phase_t phase,
                          uint32_t src, int64_t rows, int64_t cols,
                          int transpose, mb_dtype_t hp, mb_dtype_t dtype,
                          mb_scaling_t s, uint32_t *q, uint32_t *sc) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = rows;
  p.shape[1] = cols;
  p.dtype = hp;
  p.dtype_out = dtype;
  p.scale_a = as_quantize_scaling(s);
  if (transpose) p.flags |= MB_PARAM_TRANSPOSE;
  const uint32_t args[3] = {src, MB__NEW, MB__NEW};
  uint32_t st = mb__graph_step(g, label, phase, &mb__op_quantize, &p, args);
  *q = mb__graph_arg(g, st, 1);
  *sc = mb__graph_arg(g, st, 2);
}

/* D[m,n] = A[m,k] . B[k,n] (+ scales) into buffer d (MB__NEW: a new one);
 * the step. */
static uint32_t gemm_step(mb__graph_t *g, const char *label, mb_phase_t phase,
                          const mb_op_params_t *gp, uint32_t a, uint32_t b,
                          uint32_t sa, uint32_t sb, uint32_t d) {
  const uint32_t args[5] = {a, b, sa, sb, d};
  return mb__graph_step(g, label, phase, &mb__op_gemm, gp, args);
}

static mb_op_params_t gemm_params(int64_t m, int64_t k, int64_t n, mb_dtype_t a,
                                  mb_dtype_t b, mb_dtype_t out) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = m;
  p.shape[1] = k;
  p.shape[2] = n;
  p.dtype = a;
  p.dtype_b = b;
  p.dtype_out = out;
  return p;
}

/* Step labels are static strings: one row per layer name a composite
 * uses ("" for a lone layer). */
typedef struct layer_labels {
  const char *name;
  const char *qa, *qw, *dq, *gemm, *hqq, *gsum, *zgemm, *zadd, *prune;
} layer_labels_t;

#define LABELS(key, prefix)                                               \
  {                                                                       \
    key, prefix "quantize activations", prefix "quantize weights",        \
        prefix "dequantize weights", prefix "gemm", prefix "HQQ weights", \
        prefix "group sums of X", prefix "zero points: gemm",             \
        prefix "zero points: add", prefix "prune weights"                 \
  }

/* qkv, attn: moe_layer_proxy's (the JAX suite's w_attn and b_attn). */
static const layer_labels_t k_labels[] = {
    LABELS("", ""),         LABELS("q", "q: "),       LABELS("k", "k: "),
    LABELS("v", "v: "),     LABELS("proj", "proj: "), LABELS("fc1", "fc1: "),
    LABELS("fc2", "fc2: "), LABELS("qkv", "qkv: "),   LABELS("attn", "attn: "),
};

static const layer_labels_t *labels(const char *name) {
  for (size_t i = 0; i < sizeof k_labels / sizeof *k_labels; i++)
    if (!strcmp(k_labels[i].name, name)) return &k_labels[i];
  return &k_labels[0];
}

/* A layer whose weights carry zero points (HQQ, hqq_step.c): weights
 * w = Q s + zao prepared on the host, then
 *   Y = X . (Q s) + (X . G) . Zao
 * the i4 GEMM int4wo-{g} runs, and the zero points' GEMM of inner size
 * K/g on X's group sums. Inference only (weight-only recipes do not
 * train). */
static void zero_point_linear(mb__graph_t *g, const mb__recipe_row_t *r,
                              const layer_labels_t *l,
                              const mb__linear_io_t *io, mb_dtype_t hp) {
  const int64_t kg = io->k / r->w_scale.block[1];
  const uint32_t h = mb__graph_hqq_weights(g, l->hqq, io->w, io->k, io->n, hp,
                                           r->w_scale.block[1]);
  const uint32_t unit = mb__graph_unit(g);
  mb_op_params_t gp = gemm_params(io->m, io->k, io->n, hp, r->wq, hp);
  gp.scale_b = r->w_scale;
  const uint32_t qs =
      gemm_step(g, l->gemm, MB_PHASE_FORWARD, &gp, io->x,
                mb__graph_arg(g, h, 1), unit, mb__graph_arg(g, h, 2), MB__NEW);
  gp = gemm_params(io->m, io->k, kg, hp, hp, hp);
  const uint32_t sums = gemm_step(g, l->gsum, MB_PHASE_FORWARD, &gp, io->x,
                                  mb__graph_arg(g, h, 4), unit, unit, MB__NEW);
  gp = gemm_params(io->m, kg, io->n, hp, hp, hp);
  const uint32_t zp =
      gemm_step(g, l->zgemm, MB_PHASE_FORWARD, &gp, mb__graph_arg(g, sums, 4),
                mb__graph_arg(g, h, 3), unit, unit, MB__NEW);
  mb_op_params_t ap = MB_OP_PARAMS_INIT;
  ap.ndim = 2;
  ap.shape[0] = io->m;
  ap.shape[1] = io->n;
  ap.dtype = hp;
  const uint32_t args[3] = {mb__graph_arg(g, qs, 4), mb__graph_arg(g, zp, 4),
                            io->y};
  mb__graph_step(g, l->zadd, MB_PHASE_FORWARD, &mb__op_add, &ap, args);
}

/* hp weights under a sparsity recipe: W pruned and compressed on the host
 * (setup), then Y = X . W' on the sparse GEMM of the pattern. */
static void sparse_linear(mb__graph_t *g, const mb__recipe_row_t *r,
                          const layer_labels_t *l, const mb__linear_io_t *io,
                          mb_dtype_t hp) {
  const uint32_t h = mb__graph_sparse_weights(g, l->prune, io->w, io->k, io->n,
                                              hp, r->sparsity, 1);
  mb_op_params_t gp = gemm_params(io->m, io->k, io->n, hp, hp, hp);
  const uint32_t args[4] = {io->x, mb__graph_arg(g, h, 1),
                            mb__graph_arg(g, h, 2), io->y};
  mb__graph_step(g, l->gemm, MB_PHASE_FORWARD,
                 r->sparsity == MB__SPARSE_BLOCK ? &mb__op_gemm_block_sparse
                                                 : &mb__op_gemm_sparse24,
                 &gp, args);
}

void mb__graph_linear(mb__graph_t *g, const mb_op_params_t *p,
                      mb__linear_io_t *io) {
  const mb__recipe_row_t *r = mb__recipe_row((mb_recipe_t)p->recipe);
  const layer_labels_t *l = labels(io->name);
  const mb_dtype_t hp = p->dtype;
  const mb_phase_t wphase = io->training ? MB_PHASE_FORWARD : MB_PHASE_SETUP;
  if (!r) return;
  if (r->wq == MB_DTYPE_NONE && r->sparsity != MB__SPARSE_NONE) {
    sparse_linear(g, r, l, io, hp);
    return;
  }
  if (r->wq == MB_DTYPE_NONE) { /* baseline */
    mb_op_params_t gp = gemm_params(io->m, io->k, io->n, hp, hp, hp);
    uint32_t unit = mb__graph_unit(g);
    gemm_step(g, l->gemm, MB_PHASE_FORWARD, &gp, io->x, io->w, unit, unit,
              io->y);
    return;
  }
  if (r->prep == MB__WPREP_HQQ) {
    zero_point_linear(g, r, l, io, hp);
    return;
  }
  /* A quantized sparse recipe quantizes the pruned weights (inference
   * only: sparse recipes do not train). */
  const uint32_t w =
      r->sparsity == MB__SPARSE_NONE
          ? io->w
          : mb__graph_arg(g,
                          mb__graph_sparse_weights(g, l->prune, io->w, io->k,
                                                   io->n, hp, r->sparsity, 0),
                          1);
  uint32_t wq, ws;
  quantize_step(g, l->qw, wphase, w, io->k, io->n, 0, hp, r->wq, r->w_scale,
                &wq, &ws);
  if (r->dequant) { /* weight-only, dequantized then an hp GEMM */
    mb_op_params_t dp = MB_OP_PARAMS_INIT;
    dp.ndim = 2;
    dp.shape[0] = io->k;
    dp.shape[1] = io->n;
    dp.dtype = r->wq;
    dp.dtype_out = hp;
    dp.scale_a = as_quantize_scaling(r->w_scale);
    const uint32_t args[3] = {wq, ws, MB__NEW};
    uint32_t st = mb__graph_step(g, l->dq, MB_PHASE_FORWARD, &mb__op_dequantize,
                                 &dp, args);
    mb_op_params_t gp = gemm_params(io->m, io->k, io->n, hp, hp, hp);
    uint32_t unit = mb__graph_unit(g);
    gemm_step(g, l->gemm, MB_PHASE_FORWARD, &gp, io->x, mb__graph_arg(g, st, 2),
              unit, unit, io->y);
    return;
  }
  if (r->aq == MB_DTYPE_NONE) { /* int4 weight-only: the GEMM takes i4 */
    mb_op_params_t gp = gemm_params(io->m, io->k, io->n, hp, r->wq, hp);
    gp.scale_b = r->w_scale;
    gemm_step(g, l->gemm, MB_PHASE_FORWARD, &gp, io->x, wq, mb__graph_unit(g),
              ws, io->y);
    return;
  }
  /* Dynamic activations: quantized inside the timed step, once per input
   * even when several layers read it (q, k and v share one). */
  if (!io->xq)
    quantize_step(g, l->qa, MB_PHASE_FORWARD, io->x, io->m, io->k, 0, hp, r->aq,
                  r->a_scale, &io->xq, &io->xs);
  mb_op_params_t gp = gemm_params(io->m, io->k, io->n, r->aq, r->wq, hp);
  gp.scale_a = r->a_scale;
  gp.scale_b = r->w_scale;
  gemm_step(g, l->gemm, MB_PHASE_FORWARD, &gp, io->xq, wq, io->xs, ws, io->y);
}

void mb__graph_linear_backward(mb__graph_t *g, const mb_op_params_t *p,
                               const mb__linear_io_t *io, uint32_t dy,
                               uint32_t dx, uint32_t dw) {
  const mb__recipe_row_t *r = mb__recipe_row((mb_recipe_t)p->recipe);
  const mb_dtype_t hp = p->dtype;
  const mb_phase_t bw = MB_PHASE_BACKWARD;
  if (!r) return;
  if (r->wq == MB_DTYPE_NONE) {
    /* dX[M,K] = dY[M,N] . W^T: W[K,N] is B stored N_b x K_b. */
    mb_op_params_t gp = gemm_params(io->m, io->n, io->k, hp, hp, hp);
    gp.flags |= MB_PARAM_TRANS_B;
    uint32_t unit = mb__graph_unit(g);
    gemm_step(g, "dX = dY.W^T", bw, &gp, dy, io->w, unit, unit, dx);
    /* dW[K,N] = X^T . dY: X[M,K] is A stored K_b x M_b. */
    gp = gemm_params(io->k, io->m, io->n, hp, hp, hp);
    gp.flags |= MB_PARAM_TRANS_A;
    gemm_step(g, "dW = X^T.dY", bw, &gp, io->x, dy, unit, unit, dw);
    return;
  }
  /* Each GEMM's A is scaled as activations are (per row along its K,
   * tensorwise, or 1x128), its B as weights are (per column, tensorwise, or
   * 128x128), every operand quantized dynamically, transposes made by the
   * quantize step (torchao's float8 training does the same). */
  uint32_t dyq_a, dys_a, dyq_b, dys_b, wtq, wts, xtq, xts;
  quantize_step(g, "quantize dY (as A)", bw, dy, io->m, io->n, 0, hp, r->aq,
                r->a_scale, &dyq_a, &dys_a);
  quantize_step(g, "quantize W^T", bw, io->w, io->k, io->n, 1, hp, r->wq,
                r->w_scale, &wtq, &wts);
  mb_op_params_t gp = gemm_params(io->m, io->n, io->k, r->aq, r->wq, hp);
  gp.scale_a = r->a_scale;
  gp.scale_b = r->w_scale;
  gemm_step(g, "dX = dY.W^T", bw, &gp, dyq_a, wtq, dys_a, wts, dx);
  quantize_step(g, "quantize X^T", bw, io->x, io->m, io->k, 1, hp, r->aq,
                r->a_scale, &xtq, &xts);
  if (r->a_scale.mode == MB_SCALE_TENSOR && r->w_scale.mode == MB_SCALE_TENSOR)
    dyq_b = dyq_a, dys_b = dys_a; /* one tensorwise cast serves both */
  else
    quantize_step(g, "quantize dY (as B)", bw, dy, io->m, io->n, 0, hp, r->wq,
                  r->w_scale, &dyq_b, &dys_b);
  gp = gemm_params(io->k, io->m, io->n, r->aq, r->wq, hp);
  gp.scale_a = r->a_scale;
  gp.scale_b = r->w_scale;
  gemm_step(g, "dW = X^T.dY", bw, &gp, xtq, dyq_b, xts, dys_b, dw);
}
