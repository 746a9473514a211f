/* linear and linear_training: torchao's "linear" model, one Linear K->N
 * without bias on input X[M,K], under a recipe. W is held [K,N] (the GEMM's
 * B; torch's [N,K] weight transposed once at load).
 *   linear:          Y = X . W
 *   linear_training: forward Y = X . W, then with dY[M,N] the backward
 *                    dX = dY . W^T and dW = X^T . dY.
 * The graph (recipe.c) quantizes as the recipe says; the reference is the
 * same layer in double with no quantization (the accuracy baseline). */
#include <math.h>
#include <stdlib.h>

#include "models/model_ops.h"
#include "ops/recipe.h"

enum { LM, LK, LN };
enum { ROLE_X, ROLE_W, ROLE_Y };          /* linear */
enum { T_X, T_W, T_DY, T_Y, T_DX, T_DW }; /* training */

static void rows_cols(const mb_op_params_t *p, char a, char b, int64_t *sh) {
  const char dims[] = "MKN";
  for (int d = 0; d < 3; d++) {
    if (dims[d] == a) sh[0] = p->shape[d];
    if (dims[d] == b) sh[1] = p->shape[d];
  }
}

/* Operand shapes by role, as dimension-letter pairs. */
static const char *const k_linear_dims[] = {"MK", "KN", "MN"};
static const char *const k_train_dims[] = {"MK", "KN", "MN", "MN", "MK", "KN"};

static void linear_operand(const mb_op_params_t *p, uint32_t role,
                           mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  *dtype = p->dtype;
  *ndim = 2;
  rows_cols(p, k_linear_dims[role][0], k_linear_dims[role][1], shape);
}

static void train_operand(const mb_op_params_t *p, uint32_t role,
                          mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  *dtype = p->dtype;
  *ndim = 2;
  rows_cols(p, k_train_dims[role][0], k_train_dims[role][1], shape);
}

static mb__linear_io_t layer(const mb_op_params_t *p, int training) {
  return (mb__linear_io_t){.name = "",
                           .x = training ? T_X : ROLE_X,
                           .w = training ? T_W : ROLE_W,
                           .y = training ? T_Y : ROLE_Y,
                           .m = p->shape[LM],
                           .k = p->shape[LK],
                           .n = p->shape[LN],
                           .training = training};
}

static void linear_compose(const mb_op_params_t *p, mb__graph_t *g) {
  mb__graph_init(g, &mb__op_linear, p);
  mb__linear_io_t io = layer(p, 0);
  mb__graph_linear(g, p, &io);
}

static void train_compose(const mb_op_params_t *p, mb__graph_t *g) {
  mb__graph_init(g, &mb__op_linear_training, p);
  mb__linear_io_t io = layer(p, 1);
  mb__graph_linear(g, p, &io);
  mb__graph_linear_backward(g, p, &io, T_DY, T_DX, T_DW);
}

static mb_status_t linear_resolve(mb_op_params_t *p) {
  return mb__model_resolve(&mb__op_linear, p, 0);
}
static mb_status_t train_resolve(mb_op_params_t *p) {
  return mb__model_resolve(&mb__op_linear_training, p, 1);
}
static double linear_flop(const mb_op_params_t *p) {
  return mb__model_flop(&mb__op_linear, p);
}
static double train_flop(const mb_op_params_t *p) {
  return mb__model_flop(&mb__op_linear_training, p);
}
static double linear_bytes(const mb_op_params_t *p) {
  return mb__model_bytes(&mb__op_linear, p);
}
static double train_bytes(const mb_op_params_t *p) {
  return mb__model_bytes(&mb__op_linear_training, p);
}

static int never_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

static void linear_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  if (role == ROLE_W) mb__model_fill_weight(p->shape[LK], f);
}

static void train_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  if (role == T_W) mb__model_fill_weight(p->shape[LK], f);
}

/* ---- reference: the layer in double ---------------------------------------
 * Every output element is one dot product of contiguous f32 rows:
 *   Y[i,j]  = X[i,:]  . W^T[j,:]
 *   dX[i,k] = dY[i,:] . W[k,:]
 *   dW[k,j] = X^T[k,:] . dY^T[j,:] */
typedef struct linear_ref {
  int64_t m, k, n;
  float *x, *wt, *dy, *w, *xt, *dyt;
} linear_ref_t;

static void linear_ref_release(void *state) {
  linear_ref_t *r = state;
  if (!r) return;
  free(r->x);
  free(r->wt);
  free(r->dy);
  free(r->w);
  free(r->xt);
  free(r->dyt);
  free(r);
}

/* W^T of the pruned weights, W[K,N] pruned as the recipe's setup step
 * prunes it (ops/sparse.c): a sparse recipe is checked against the dense
 * product of the pruned weights, what the sparse GEMM must compute. */
static float *pruned_t(const void *w, mb_dtype_t dt, int64_t k, int64_t n,
                       mb__sparsity_t s) {
  float *f = mb__model_load(w, dt, (size_t)(k * n)), *t = NULL;
  if (f && mb__sparse_prune(f, k, n, s) == MB_OK)
    t = mb__model_load_t(f, MB_DTYPE_F32, k, n);
  free(f);
  return t;
}

static mb_status_t ref_prepare(const mb_op_params_t *p, const void *const *host,
                               int training, void **state) {
  const mb__sparsity_t sparse =
      mb__recipe_row((mb_recipe_t)p->recipe)->sparsity;
  linear_ref_t *r = calloc(1, sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "linear reference: out of memory");
  r->m = p->shape[LM], r->k = p->shape[LK], r->n = p->shape[LN];
  const mb_dtype_t dt = p->dtype;
  int ok = (r->x = mb__model_load(host[0], dt, (size_t)(r->m * r->k))) &&
           (r->wt = sparse ? pruned_t(host[1], dt, r->k, r->n, sparse)
                           : mb__model_load_t(host[1], dt, r->k, r->n));
  if (ok && training)
    ok = (r->dy = mb__model_load(host[T_DY], dt, (size_t)(r->m * r->n))) &&
         (r->w = mb__model_load(host[T_W], dt, (size_t)(r->k * r->n))) &&
         (r->xt = mb__model_load_t(host[T_X], dt, r->m, r->k)) &&
         (r->dyt = mb__model_load_t(host[T_DY], dt, r->m, r->n));
  if (!ok) {
    linear_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY,
                    "linear reference: out of memory for %lldx%lldx%lld",
                    (long long)p->shape[LM], (long long)p->shape[LK],
                    (long long)p->shape[LN]);
  }
  *state = r;
  return MB_OK;
}

static mb_status_t linear_ref_prepare(const mb_op_params_t *p,
                                      const void *const *host, void **state) {
  return ref_prepare(p, host, 0, state);
}
static mb_status_t train_ref_prepare(const mb_op_params_t *p,
                                     const void *const *host, void **state) {
  return ref_prepare(p, host, 1, state);
}

static void linear_ref_element(const void *state, uint32_t out, size_t idx,
                               double *value, double *scale) {
  const linear_ref_t *r = state;
  const int64_t i = (int64_t)idx;
  switch (out) {
    case 0: /* Y */
      *value = mb__model_dot(r->x + i / r->n * r->k, r->wt + i % r->n * r->k,
                             r->k, scale);
      return;
    case 1: /* dX */
      *value = mb__model_dot(r->dy + i / r->k * r->n, r->w + i % r->k * r->n,
                             r->n, scale);
      return;
    default: /* dW */
      *value = mb__model_dot(r->xt + i / r->n * r->m, r->dyt + i % r->n * r->m,
                             r->m, scale);
  }
}

static double linear_ref_cost(const mb_op_params_t *p) {
  return (double)p->shape[LK];
}
static double train_ref_cost(const mb_op_params_t *p) {
  double c = (double)p->shape[LK];
  if ((double)p->shape[LN] > c) c = (double)p->shape[LN];
  if ((double)p->shape[LM] > c) c = (double)p->shape[LM];
  return c;
}

static const char *const k_dims[] = {"M", "K", "N"};
static const char *const k_linear_operands[] = {"X", "W", "Y"};
static const char *const k_train_operands[] = {"X", "W", "dY", "Y", "dX", "dW"};
static const mb_dtype_t k_hp[] = {MB_DTYPE_BF16, MB_DTYPE_F32, MB_DTYPE_F16};

const mb_op_t mb__op_linear = {
    .name = "linear",
    .summary = "model: Y = X.W, one Linear K->N under a recipe (X: MxK)",
    .shape_syntax = "MxKxN",
    .dim_names = k_dims,
    .param_mask = MB__P_RECIPE,
    .params_doc = "recipe (mbench list recipes)",
    .rank = 3,
    .num_inputs = 2,
    .num_outputs = 1,
    .operand_names = k_linear_operands,
    .dtypes = k_hp,
    .num_dtypes = 3,
    .resolve = linear_resolve,
    .operand = linear_operand,
    .flop = linear_flop,
    .bytes = linear_bytes,
    .reads_output = never_reads_output,
    .fill = linear_fill,
    .ref_cost = linear_ref_cost,
    .ref_prepare = linear_ref_prepare,
    .ref_element = linear_ref_element,
    .ref_release = linear_ref_release,
    .tolerance = mb__model_tolerance,
    .compose = linear_compose,
};

const mb_op_t mb__op_linear_training = {
    .name = "linear_training",
    .summary =
        "model: linear forward + backward (dX = dY.W^T, dW = X^T.dY) "
        "under a recipe",
    .shape_syntax = "MxKxN",
    .dim_names = k_dims,
    .param_mask = MB__P_RECIPE,
    .params_doc =
        "recipe: baseline, int8dq, float8dq-tensor, float8dq-row, "
        "float8-block",
    .rank = 3,
    .num_inputs = 3,
    .num_outputs = 3,
    .operand_names = k_train_operands,
    .dtypes = k_hp,
    .num_dtypes = 3,
    .resolve = train_resolve,
    .operand = train_operand,
    .flop = train_flop,
    .bytes = train_bytes,
    .reads_output = never_reads_output,
    .fill = train_fill,
    .ref_cost = train_ref_cost,
    .ref_prepare = train_ref_prepare,
    .ref_element = linear_ref_element,
    .ref_release = linear_ref_release,
    .tolerance = mb__model_tolerance,
    .compose = train_compose,
};
