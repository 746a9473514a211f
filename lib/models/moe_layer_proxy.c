/* moe_layer_proxy: the JAX accelerator-microbenchmarks suite's
 * "transformer_layer_moe" (src/accelerator_microbenchmarks/benchmarks/
 * components.py, upstream 6a306a8, TransformerLayerMoE.full_layer_fwd), a
 * proxy of a DeepSeek-like MoE layer: dense matmuls stand in for attention
 * and the experts; there is no router, no softmax, no expert choice. On
 * X[B, S, D] (upstream: B = 1, S = mslen, D = model_dim):
 *   xn   = standardize(X)           (jax.nn.standardize: mean 0, variance 1
 *                                    over D, eps 1e-5, no affine part)
 *   qkv  = xn . w_attn              (D -> 3D)
 *   x1   = X + qkv . b_attn         (3D -> D, "a dummy attention")
 *   Y    = x1 + (x1 . w_ffn) . b_ffn (D -> 2D -> D, the "experts")
 * b_attn and b_ffn are matrices (upstream's names), not biases. Weights are
 * held [K_in, K_out] (the GEMM's B). The op takes no quantization recipe:
 * the suite runs the layer in `dtype`, and every linear layer is the
 * baseline one (layer_graph.c).
 *
 * The reference is the layer in double with no intermediate rounding. A
 * row of Y depends on the same row of X only, so it computes whole rows,
 * lazily, and keeps the last few; ref_sample puts verify's samples in 4
 * rows so the check costs 4 rows however large B*S is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_ops.h"

#define SLOTS 4 /* rows the reference keeps; ref_sample draws from 4 */

enum { DB, DS, DD };
enum {
  ROLE_X,
  ROLE_W_ATTN,
  ROLE_B_ATTN,
  ROLE_W_FFN,
  ROLE_B_FFN,
  ROLE_Y,
  NUM_ROLES
};

/* Operand shapes: ndim 3 is [B, S, D]; ndim 2 is [rows D, cols D]. */
static const struct {
  uint32_t ndim;
  int64_t rows, cols;
} k_shape[NUM_ROLES] = {
    [ROLE_X] = {3, 0, 0},      [ROLE_W_ATTN] = {2, 1, 3},
    [ROLE_B_ATTN] = {2, 3, 1}, [ROLE_W_FFN] = {2, 1, 2},
    [ROLE_B_FFN] = {2, 2, 1},  [ROLE_Y] = {3, 0, 0},
};

static void moe_operand(const mb_op_params_t *p, uint32_t role,
                        mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  const int64_t d = p->shape[DD];
  *dtype = p->dtype;
  *ndim = k_shape[role].ndim;
  if (*ndim == 3) {
    shape[0] = p->shape[DB], shape[1] = p->shape[DS], shape[2] = d;
    return;
  }
  shape[0] = k_shape[role].rows * d, shape[1] = k_shape[role].cols * d;
}

/* ---- the graph -------------------------------------------------------- */

static int64_t rows(const mb_op_params_t *p) {
  return p->shape[DB] * p->shape[DS];
}

/* standardize(X) into a new buffer: our layernorm without its affine part
 * (MB_PARAM_NO_WEIGHT). Its W and Bias operands stay (fixed arity) and are
 * never read: one small unwritten buffer stands for both. */
static uint32_t standardize_step(mb__graph_t *g, const mb_op_params_t *p) {
  const int64_t t = rows(p), d = p->shape[DD];
  mb_op_params_t np = MB_OP_PARAMS_INIT;
  np.ndim = 2, np.shape[0] = t, np.shape[1] = d;
  np.dtype = p->dtype;
  np.eps = p->eps;
  np.flags = MB_PARAM_NO_WEIGHT;
  const uint32_t unread =
      mb__graph_buf(g, "no affine (unread)", p->dtype, 1, d);
  const uint32_t args[4] = {ROLE_X, unread, unread,
                            mb__graph_buf(g, "xn", p->dtype, t, d)};
  mb__graph_step(g, "standardize", MB_PHASE_FORWARD, &mb__op_layernorm, &np,
                 args);
  return args[3];
}

/* Linear layer `name` x[T, kin] . w[kin, kout] into a new buffer. */
static uint32_t linear_step(mb__graph_t *g, const mb_op_params_t *p,
                            const char *name, const char *out_name, uint32_t x,
                            uint32_t w, int64_t kin, int64_t kout) {
  mb__linear_io_t io = {.name = name, .x = x, .w = w, .xq = 0, .xs = 0};
  io.m = rows(p), io.k = kin, io.n = kout;
  io.y = mb__graph_buf(g, out_name, p->dtype, io.m, kout);
  mb__graph_linear(g, p, &io);
  return io.y;
}

/* z = x + y over [T, D]. */
static void residual_step(mb__graph_t *g, const mb_op_params_t *p,
                          const char *label, uint32_t x, uint32_t y,
                          uint32_t z) {
  mb_op_params_t ap = MB_OP_PARAMS_INIT;
  ap.ndim = 2, ap.shape[0] = rows(p), ap.shape[1] = p->shape[DD];
  ap.dtype = p->dtype;
  const uint32_t args[3] = {x, y, z};
  mb__graph_step(g, label, MB_PHASE_FORWARD, &mb__op_add, &ap, args);
}

static void moe_compose(const mb_op_params_t *p, mb__graph_t *g) {
  const int64_t d = p->shape[DD];
  mb__graph_init(g, &mb__op_moe_layer_proxy, p);
  uint32_t xn = standardize_step(g, p);
  uint32_t qkv = linear_step(g, p, "qkv", "qkv", xn, ROLE_W_ATTN, d, 3 * d);
  uint32_t at =
      linear_step(g, p, "attn", "attn_out", qkv, ROLE_B_ATTN, 3 * d, d);
  uint32_t x1 = mb__graph_buf(g, "x1", p->dtype, rows(p), d);
  residual_step(g, p, "residual1", ROLE_X, at, x1);
  uint32_t f = linear_step(g, p, "fc1", "ffn hidden", x1, ROLE_W_FFN, d, 2 * d);
  uint32_t ffn = linear_step(g, p, "fc2", "ffn out", f, ROLE_B_FFN, 2 * d, d);
  residual_step(g, p, "residual2", x1, ffn, ROLE_Y);
}

/* ---- hooks ------------------------------------------------------------ */

static mb_status_t moe_resolve(mb_op_params_t *p) {
  const int64_t d = p->shape[DD];
  /* Recipes are torchao's; the JAX suite runs the layer as it is. Asked
   * here too, not only by mb_op_resolve's parameter check, because the
   * catalogue composes every recipe through this hook. */
  if (p->recipe != MB_RECIPE_BASELINE)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "moe_layer_proxy: takes no quantization recipe (got "
                    "\"%s\"); the JAX suite runs it in its dtype",
                    mb_recipe_name((mb_recipe_t)p->recipe));
  /* The largest tensors, [B*S, 3D] and the D x 3D weights, bound every
   * size the graph computes in int64 and size_t. */
  const double big = 3.0 * (double)d * fmax((double)rows(p), (double)d);
  if (big > 0x1p48)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "moe_layer_proxy: B*S = %lld, D = %lld gives a tensor of "
                    "%.3g elements; at most 2^48",
                    (long long)rows(p), (long long)d, big);
  if (!(p->eps > 0 && isfinite(p->eps)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "moe_layer_proxy: eps must be positive and finite (got "
                    "%g)",
                    p->eps);
  return mb__model_resolve(&mb__op_moe_layer_proxy, p, 0);
}

static double moe_flop(const mb_op_params_t *p) {
  return mb__model_flop(&mb__op_moe_layer_proxy, p);
}
static double moe_bytes(const mb_op_params_t *p) {
  return mb__model_bytes(&mb__op_moe_layer_proxy, p);
}
static int never_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

/* X normal(0, 1); weights by their fan-in (upstream draws them normal(0,
 * 1), which grows the activations by sqrt(fan-in) at every matmul). */
static void moe_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  if (k_shape[role].ndim == 2)
    mb__model_fill_weight(k_shape[role].rows * p->shape[DD], f);
}

/* ---- reference: whole rows in double, a few kept ----------------------- */

/* One row of Y and the scale of each element, [D]. */
typedef struct moe_slot {
  int64_t row; /* -1: empty */
  double *y, *scale;
} moe_slot_t;

/* What computing a row writes: the kept rows and the scratch. */
typedef struct moe_cache {
  moe_slot_t slot[SLOTS];
  unsigned next; /* the slot the next miss replaces (round robin) */
  float *in;     /* the row of X, or one weight row, as f32 (exact) */
  double *x, *xn, *acc, *mag; /* [D] */
  double *qkv;                /* [3D]; its first 2D hold the FFN hidden */
} moe_cache_t;

/* ref_element receives the state const: a reference is a pure function of
 * the inputs. The rows are computed on first use and kept, which is a
 * memo, not a change of any result, so it lives behind `cache` (verify
 * calls ref_element from one thread; the state is not shared). */
typedef struct moe_ref {
  const void *in[ROLE_Y]; /* the host inputs, read in place */
  mb_dtype_t dt;
  int64_t d;
  double eps;
  moe_cache_t *cache;
} moe_ref_t;

static void moe_ref_release(void *state) {
  moe_ref_t *r = state;
  if (!r) return;
  moe_cache_t *c = r->cache;
  if (c) {
    for (int i = 0; i < SLOTS; i++) {
      free(c->slot[i].y);
      free(c->slot[i].scale);
    }
    double *bufs[] = {c->x, c->xn, c->acc, c->mag, c->qkv};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    free(c->in);
    free(c);
  }
  free(r);
}

static int cache_alloc(moe_cache_t *c, int64_t d) {
  const size_t n = (size_t)d;
  int ok = (c->in = malloc(3 * n * sizeof *c->in)) != NULL;
  for (int i = 0; i < SLOTS && ok; i++) {
    c->slot[i].row = -1;
    ok = (c->slot[i].y = malloc(n * sizeof(double))) &&
         (c->slot[i].scale = malloc(n * sizeof(double)));
  }
  double **bufs[] = {&c->x, &c->xn, &c->acc, &c->mag};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs && ok; i++)
    ok = (*bufs[i] = malloc(n * sizeof(double))) != NULL;
  return ok && (c->qkv = malloc(3 * n * sizeof *c->qkv));
}

static mb_status_t moe_ref_prepare(const mb_op_params_t *p,
                                   const void *const *host, void **state) {
  const int64_t d = p->shape[DD];
  moe_ref_t *r = calloc(1, sizeof *r);
  if (!r || !(r->cache = calloc(1, sizeof *r->cache)) ||
      !cache_alloc(r->cache, d)) {
    moe_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY,
                    "moe_layer_proxy reference: out of memory for D = %lld",
                    (long long)d);
  }
  for (int i = 0; i < ROLE_Y; i++) r->in[i] = host[i];
  r->dt = p->dtype;
  r->d = d;
  r->eps = p->eps;
  *state = r;
  return MB_OK;
}

/* Row t into slot s: the layer, step by step, on one row.
 * scale = |x| + sum |qkv b_attn| + sum |f b_ffn|: the magnitude of the
 * three terms summed into Y (it bounds |Y|). */
static void compute_row(const moe_ref_t *r, int64_t t, moe_slot_t *s) {
  moe_cache_t *c = r->cache;
  const int64_t d = r->d;
  mb__model_load_at(c->in, r->in[ROLE_X], r->dt, (size_t)(t * d), (size_t)d);
  double mean = 0, var = 0;
  for (int64_t j = 0; j < d; j++) mean += (c->x[j] = c->in[j]);
  mean /= (double)d;
  for (int64_t j = 0; j < d; j++) var += (c->x[j] - mean) * (c->x[j] - mean);
  const double inv = 1.0 / sqrt(var / (double)d + r->eps);
  for (int64_t j = 0; j < d; j++) c->xn[j] = (c->x[j] - mean) * inv;
  mb__model_matmul_rows(c->xn, 1, d, r->in[ROLE_W_ATTN], r->dt, 3 * d, c->in,
                        c->qkv, NULL);
  mb__model_matmul_rows(c->qkv, 1, 3 * d, r->in[ROLE_B_ATTN], r->dt, d, c->in,
                        c->acc, c->mag);
  for (int64_t j = 0; j < d; j++) {
    s->scale[j] = fabs(c->x[j]) + c->mag[j];
    c->x[j] += c->acc[j]; /* x is x1 from here */
  }
  mb__model_matmul_rows(c->x, 1, d, r->in[ROLE_W_FFN], r->dt, 2 * d, c->in,
                        c->qkv, NULL);
  mb__model_matmul_rows(c->qkv, 1, 2 * d, r->in[ROLE_B_FFN], r->dt, d, c->in,
                        c->acc, c->mag);
  for (int64_t j = 0; j < d; j++) {
    s->y[j] = c->x[j] + c->acc[j];
    s->scale[j] += c->mag[j];
  }
  s->row = t;
}

static const moe_slot_t *row(const moe_ref_t *r, int64_t t) {
  moe_cache_t *c = r->cache;
  for (int i = 0; i < SLOTS; i++)
    if (c->slot[i].row == t) return &c->slot[i];
  moe_slot_t *s = &c->slot[c->next];
  c->next = (c->next + 1) % SLOTS;
  compute_row(r, t, s);
  return s;
}

static void moe_ref_element(const void *state, uint32_t out, size_t idx,
                            double *value, double *scale) {
  const moe_ref_t *r = state;
  const moe_slot_t *s = row(r, (int64_t)(idx / (size_t)r->d));
  (void)out;
  *value = s->y[idx % (size_t)r->d];
  *scale = s->scale[idx % (size_t)r->d];
}

/* Random r -> an element of one of SLOTS rows: the first, the last and two
 * evenly between (verify's corner checks, elements 0 and B*S*D - 1, fall in
 * the first and last), any column within the row. */
static size_t moe_ref_sample(const mb_op_params_t *p, uint32_t out,
                             uint64_t r) {
  const int64_t t = (int64_t)(r % SLOTS) * (rows(p) - 1) / (SLOTS - 1);
  const uint64_t d = (uint64_t)p->shape[DD];
  (void)out;
  return (size_t)((uint64_t)t * d + (r / SLOTS) % d);
}

/* Per element, a row costs 10 D^2 multiply-adds (3 + 3 + 2 + 2 D^2) over
 * its D elements. */
static double moe_ref_cost(const mb_op_params_t *p) {
  return 10.0 * (double)p->shape[DD];
}

static const char *const k_dims[] = {"B", "S", "D"};
static const char *const k_operands[NUM_ROLES] = {"X",     "w_attn", "b_attn",
                                                  "w_ffn", "b_ffn",  "Y"};
static const mb_dtype_t k_hp[] = {MB_DTYPE_BF16, MB_DTYPE_F32, MB_DTYPE_F16};

const mb_op_t mb__op_moe_layer_proxy = {
    .name = "moe_layer_proxy",
    .summary =
        "model: the JAX suite's MoE layer proxy: X + standardize(X).Wa.Ba "
        "-> + ((.)Wf).Bf, dense D->3D->D, D->2D->D (X: BxSxD)",
    .shape_syntax = "BxSxD",
    .dim_names = k_dims,
    .param_mask = MB__P_EPS,
    .params_doc = "eps (1e-5, jax.nn.standardize's)",
    .rank = 3,
    .num_inputs = ROLE_Y,
    .num_outputs = 1,
    .operand_names = k_operands,
    .dtypes = k_hp,
    .num_dtypes = 3,
    .resolve = moe_resolve,
    .operand = moe_operand,
    .flop = moe_flop,
    .bytes = moe_bytes,
    .reads_output = never_reads_output,
    .fill = moe_fill,
    .ref_cost = moe_ref_cost,
    .ref_prepare = moe_ref_prepare,
    .ref_element = moe_ref_element,
    .ref_release = moe_ref_release,
    .tolerance = mb__model_tolerance,
    .compose = moe_compose,
    .ref_sample = moe_ref_sample,
};
