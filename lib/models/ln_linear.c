/* ln_linear: torchao's "ln_linear_<act>" models, LayerNorm(K) -> Linear
 * K->N (no bias) -> activation, on input X[M,K]:
 *   H = LayerNorm(X) * gamma + beta;  Y = act(H . W)
 * torchao's model has no affine part (elementwise_affine=False):
 * mb_model_resolve sets MB_PARAM_NO_WEIGHT and gamma/beta stay unread.
 * The graph: layernorm, the recipe's linear layer (recipe.c), activation;
 * the reference is the same chain in double with no quantization. The
 * activation is params.activation (mb_model_resolve sets it from the
 * model's name). */
#include <math.h>
#include <stdlib.h>

#include "models/model_ops.h"

enum { LM, LK, LN };
enum { ROLE_X, ROLE_GAMMA, ROLE_BETA, ROLE_W, ROLE_Y };

static void ln_operand(const mb_op_params_t *p, uint32_t role,
                       mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  *dtype = p->dtype;
  *ndim = 2;
  switch (role) {
    case ROLE_X:
      shape[0] = p->shape[LM], shape[1] = p->shape[LK];
      return;
    case ROLE_GAMMA:
    case ROLE_BETA:
      *ndim = 1, shape[0] = p->shape[LK];
      return;
    case ROLE_W:
      shape[0] = p->shape[LK], shape[1] = p->shape[LN];
      return;
    default:
      shape[0] = p->shape[LM], shape[1] = p->shape[LN];
  }
}

static void ln_compose(const mb_op_params_t *p, mb__graph_t *g) {
  const int64_t m = p->shape[LM], k = p->shape[LK], n = p->shape[LN];
  mb__graph_init(g, &mb__op_ln_linear, p);
  mb_op_params_t np = MB_OP_PARAMS_INIT;
  np.ndim = 2, np.shape[0] = m, np.shape[1] = k;
  np.dtype = p->dtype;
  np.eps = p->eps;
  np.flags = p->flags & MB_PARAM_NO_WEIGHT;
  const uint32_t nargs[4] = {ROLE_X, ROLE_GAMMA, ROLE_BETA, MB__NEW};
  uint32_t ln = mb__graph_step(g, "layernorm", MB_PHASE_FORWARD,
                               &mb__op_layernorm, &np, nargs);
  uint32_t z = mb__graph_buf(g, "linear out", p->dtype, m, n);
  mb__linear_io_t io = {.name = "",
                        .x = mb__graph_arg(g, ln, 3),
                        .w = ROLE_W,
                        .y = z,
                        .m = m,
                        .k = k,
                        .n = n};
  mb__graph_linear(g, p, &io);
  mb_op_params_t ap = MB_OP_PARAMS_INIT;
  ap.ndim = 2, ap.shape[0] = m, ap.shape[1] = n;
  ap.dtype = p->dtype;
  ap.activation = p->activation;
  ap.act_alpha = p->act_alpha;
  const uint32_t aargs[2] = {z, ROLE_Y};
  mb__graph_step(g, mb_activation_name(p->activation), MB_PHASE_FORWARD,
                 &mb__op_activation, &ap, aargs);
}

static mb_status_t ln_resolve(mb_op_params_t *p) {
  if ((unsigned)p->activation >= MB_ACT_COUNT)
    return mb__fail(MB_ERR_INVALID_ARG, "ln_linear: activation %d unknown",
                    (int)p->activation);
  if (!(p->eps > 0 && isfinite(p->eps)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "ln_linear: eps must be positive and finite (got %g)",
                    p->eps);
  return mb__model_resolve(&mb__op_ln_linear, p, 0);
}
static double ln_flop(const mb_op_params_t *p) {
  return mb__model_flop(&mb__op_ln_linear, p);
}
static double ln_bytes(const mb_op_params_t *p) {
  return mb__model_bytes(&mb__op_ln_linear, p);
}
static int never_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

static void ln_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  if (role == ROLE_W) mb__model_fill_weight(p->shape[LK], f);
  if (role == ROLE_GAMMA || role == ROLE_BETA)
    mb__model_fill_norm(role == ROLE_BETA, f);
}

/* ---- reference: H in double (kept as f32 rows), then act(H . W) ---------- */
typedef struct ln_ref {
  int64_t k, n;
  mb_activation_t act;
  double alpha;
  float *h, *wt;
} ln_ref_t;

static void ln_ref_release(void *state) {
  ln_ref_t *r = state;
  if (!r) return;
  free(r->h);
  free(r->wt);
  free(r);
}

static void layernorm_rows(const float *x, const float *gamma,
                           const float *beta, int64_t m, int64_t k, double eps,
                           float *h) {
  for (int64_t i = 0; i < m; i++) {
    const float *row = x + i * k;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < k; j++) mean += row[j];
    mean /= (double)k;
    for (int64_t j = 0; j < k; j++) var += (row[j] - mean) * (row[j] - mean);
    double inv = 1.0 / sqrt(var / (double)k + eps);
    for (int64_t j = 0; j < k; j++)
      h[i * k + j] = (float)((row[j] - mean) * inv * gamma[j] + beta[j]);
  }
}

static mb_status_t ln_ref_prepare(const mb_op_params_t *p,
                                  const void *const *host, void **state) {
  const int64_t m = p->shape[LM], k = p->shape[LK], n = p->shape[LN];
  ln_ref_t *r = calloc(1, sizeof *r);
  float *x = mb__model_load(host[ROLE_X], p->dtype, (size_t)(m * k));
  float *gamma = mb__model_load(host[ROLE_GAMMA], p->dtype, (size_t)k);
  float *beta = mb__model_load(host[ROLE_BETA], p->dtype, (size_t)k);
  int ok = r && x && gamma && beta &&
           (r->h = malloc((size_t)(m * k) * sizeof *r->h)) &&
           (r->wt = mb__model_load_t(host[ROLE_W], p->dtype, k, n));
  if (ok && (p->flags & MB_PARAM_NO_WEIGHT))
    for (int64_t j = 0; j < k; j++) gamma[j] = 1.0f, beta[j] = 0.0f;
  if (ok) {
    r->k = k, r->n = n, r->act = p->activation, r->alpha = p->act_alpha;
    layernorm_rows(x, gamma, beta, m, k, p->eps, r->h);
  }
  free(x);
  free(gamma);
  free(beta);
  if (!ok) {
    ln_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY, "ln_linear reference: out of memory");
  }
  *state = r;
  return MB_OK;
}

/* The scale passes through the activation: none of the seven has a slope
 * above 1.5 (hardswish at x = 3). */
static void ln_ref_element(const void *state, uint32_t out, size_t idx,
                           double *value, double *scale) {
  const ln_ref_t *r = state;
  const int64_t i = (int64_t)idx / r->n, j = (int64_t)idx % r->n;
  (void)out;
  double z = mb__model_dot(r->h + i * r->k, r->wt + j * r->k, r->k, scale);
  *value = mb__act_eval(r->act, z, r->alpha);
  *scale *= 1.5;
}

static double ln_ref_cost(const mb_op_params_t *p) {
  return (double)p->shape[LK];
}

static const char *const k_dims[] = {"M", "K", "N"};
static const char *const k_operands[] = {"X", "gamma", "beta", "W", "Y"};
static const mb_dtype_t k_hp[] = {MB_DTYPE_BF16, MB_DTYPE_F32, MB_DTYPE_F16};

const mb_op_t mb__op_ln_linear = {
    .name = "ln_linear",
    .summary = "model: Y = act(LayerNorm(X).W) under a recipe (X: MxK)",
    .shape_syntax = "MxKxN",
    .dim_names = k_dims,
    .param_mask = MB__P_RECIPE | MB__P_ACT | MB__P_EPS,
    .params_doc = "recipe (mbench list recipes); activation; eps",
    .rank = 3,
    .num_inputs = 4,
    .num_outputs = 1,
    .operand_names = k_operands,
    .dtypes = k_hp,
    .num_dtypes = 3,
    .resolve = ln_resolve,
    .operand = ln_operand,
    .flop = ln_flop,
    .bytes = ln_bytes,
    .reads_output = never_reads_output,
    .fill = ln_fill,
    .ref_cost = ln_ref_cost,
    .ref_prepare = ln_ref_prepare,
    .ref_element = ln_ref_element,
    .ref_release = ln_ref_release,
    .tolerance = mb__model_tolerance,
    .compose = ln_compose,
};
