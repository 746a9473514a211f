/* transformer_block: torchao's "transformer_block" model
 * (torchao/testing/model_architectures.py, TransformerBlock) on input
 * X[M, S, K] — batch M, sequence S = 16, hidden K, 8 heads of D = K/8;
 * the shape is written MxKxN and N is unused:
 *   h1 = RMSNorm(X) * n1
 *   q, k, v = h1.Wq, h1.Wk, h1.Wv       (torch's fused K->3K qkv weight,
 *                                         split in three so attention reads
 *                                         each projection in place)
 *   o  = attention(q, k, v)              (non-causal, 8 heads)
 *   r1 = X + o.Wo
 *   h2 = RMSNorm(r1) * n2
 *   Y  = r1 + GELU(h2.W1).W2             (K->4K->K, GELU the erf form:
 *                                         torch's nn.GELU())
 * Weights are held [K_in, K_out] (the GEMM's B). The linear outputs
 * [M*S, K] are exactly [M, S, 8, D] attention inputs (MB_PARAM_BSHD), so
 * the graph has no permute copies. Every linear layer is quantized as the
 * recipe says (recipe.c); q, k and v read the same h1 and share one
 * dynamic quantization of it.
 *
 * The reference is the block in double with no quantization. The S rows of
 * a batch depend on that batch only, so it computes whole batches, lazily,
 * and keeps the last few; ref_sample puts verify's samples in 4 batches so
 * the check costs 4 batches however large M is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_ops.h"

#define SEQ 16  /* torchao's fixed sequence length */
#define HEADS 8 /* torchao's num_heads */
#define SLOTS 4 /* batches the reference keeps; ref_sample draws from 4 */

enum { TM, TK };
enum {
  ROLE_X,
  ROLE_N1,
  ROLE_WQ,
  ROLE_WK,
  ROLE_WV,
  ROLE_WO,
  ROLE_N2,
  ROLE_W1,
  ROLE_W2,
  ROLE_Y,
  NUM_ROLES
};

/* Operand shapes: ndim 3 is [M, S, K]; ndim 1 is [K] (a norm weight);
 * ndim 2 is [rows K, cols K] (a weight, fan-in rows K). */
static const struct {
  uint32_t ndim;
  int64_t rows, cols;
} k_shape[NUM_ROLES] = {
    [ROLE_X] = {3, 0, 0},  [ROLE_N1] = {1, 0, 0}, [ROLE_WQ] = {2, 1, 1},
    [ROLE_WK] = {2, 1, 1}, [ROLE_WV] = {2, 1, 1}, [ROLE_WO] = {2, 1, 1},
    [ROLE_N2] = {1, 0, 0}, [ROLE_W1] = {2, 1, 4}, [ROLE_W2] = {2, 4, 1},
    [ROLE_Y] = {3, 0, 0},
};

static void tb_operand(const mb_op_params_t *p, uint32_t role,
                       mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  const int64_t k = p->shape[TK];
  *dtype = p->dtype;
  *ndim = k_shape[role].ndim;
  switch (*ndim) {
    case 3:
      shape[0] = p->shape[TM], shape[1] = SEQ, shape[2] = k;
      return;
    case 1:
      shape[0] = k;
      return;
    default:
      shape[0] = k_shape[role].rows * k, shape[1] = k_shape[role].cols * k;
  }
}

/* ---- the graph -------------------------------------------------------- */

/* rmsnorm over the K columns of the M*S rows of x into a new buffer. */
static uint32_t norm_step(mb__graph_t *g, const mb_op_params_t *p,
                          const char *label, const char *out_name, uint32_t x,
                          uint32_t w) {
  const int64_t t = p->shape[TM] * SEQ, k = p->shape[TK];
  mb_op_params_t np = MB_OP_PARAMS_INIT;
  np.ndim = 2, np.shape[0] = t, np.shape[1] = k;
  np.dtype = p->dtype;
  np.eps = p->eps;
  np.flags = p->flags & MB_PARAM_NO_WEIGHT;
  const uint32_t args[3] = {x, w, mb__graph_buf(g, out_name, p->dtype, t, k)};
  mb__graph_step(g, label, MB_PHASE_FORWARD, &mb__op_rmsnorm, &np, args);
  return args[2];
}

/* The recipe's linear layer `name` x[M*S, kin] . w[kin, kout] into a new
 * buffer; io carries the shared activation quantization in and out. */
static uint32_t linear_step(mb__graph_t *g, const mb_op_params_t *p,
                            mb__linear_io_t *io, const char *name,
                            const char *out_name, uint32_t x, uint32_t w,
                            int64_t kin, int64_t kout) {
  io->name = name;
  io->x = x, io->w = w;
  io->m = p->shape[TM] * SEQ, io->k = kin, io->n = kout;
  io->y = mb__graph_buf(g, out_name, p->dtype, io->m, kout);
  mb__graph_linear(g, p, io);
  return io->y;
}

/* z = x + y over [M*S, K]. */
static void residual_step(mb__graph_t *g, const mb_op_params_t *p,
                          const char *label, uint32_t x, uint32_t y,
                          uint32_t z) {
  mb_op_params_t ap = MB_OP_PARAMS_INIT;
  ap.ndim = 2, ap.shape[0] = p->shape[TM] * SEQ, ap.shape[1] = p->shape[TK];
  ap.dtype = p->dtype;
  const uint32_t args[3] = {x, y, z};
  mb__graph_step(g, label, MB_PHASE_FORWARD, &mb__op_add, &ap, args);
}

static uint32_t attention_step(mb__graph_t *g, const mb_op_params_t *p,
                               uint32_t q, uint32_t k, uint32_t v) {
  mb_op_params_t ap = MB_OP_PARAMS_INIT;
  ap.ndim = 5;
  ap.shape[0] = p->shape[TM], ap.shape[1] = HEADS;
  ap.shape[2] = SEQ, ap.shape[3] = SEQ, ap.shape[4] = p->shape[TK] / HEADS;
  ap.dtype = p->dtype;
  ap.flags |= MB_PARAM_BSHD; /* the [M*S, K] projections viewed as heads */
  const uint32_t args[4] = {
      q, k, v,
      mb__graph_buf(g, "o", p->dtype, p->shape[TM] * SEQ, p->shape[TK])};
  mb__graph_step(g, "attention", MB_PHASE_FORWARD, &mb__op_attention, &ap,
                 args);
  return args[3];
}

static uint32_t gelu_step(mb__graph_t *g, const mb_op_params_t *p, uint32_t x) {
  mb_op_params_t ap = MB_OP_PARAMS_INIT;
  ap.ndim = 2, ap.shape[0] = p->shape[TM] * SEQ;
  ap.shape[1] = 4 * p->shape[TK];
  ap.dtype = p->dtype;
  ap.activation = MB_ACT_GELU_ERF; /* torch's nn.GELU() */
  const uint32_t args[2] = {
      x, mb__graph_buf(g, "gelu out", p->dtype, ap.shape[0], ap.shape[1])};
  mb__graph_step(g, "gelu", MB_PHASE_FORWARD, &mb__op_activation, &ap, args);
  return args[1];
}

static void tb_compose(const mb_op_params_t *p, mb__graph_t *g) {
  const int64_t k = p->shape[TK];
  mb__graph_init(g, &mb__op_transformer_block, p);
  uint32_t h1 = norm_step(g, p, "norm1", "h1", ROLE_X, ROLE_N1);
  /* One io for q, k and v: the first quantizes h1 (dynamic recipes), the
   * other two reuse its xq/xs. */
  mb__linear_io_t io = {.xq = 0, .xs = 0};
  uint32_t q = linear_step(g, p, &io, "q", "q", h1, ROLE_WQ, k, k);
  uint32_t kb = linear_step(g, p, &io, "k", "k", h1, ROLE_WK, k, k);
  uint32_t v = linear_step(g, p, &io, "v", "v", h1, ROLE_WV, k, k);
  uint32_t o = attention_step(g, p, q, kb, v);
  io = (mb__linear_io_t){.xq = 0, .xs = 0};
  uint32_t pr = linear_step(g, p, &io, "proj", "proj out", o, ROLE_WO, k, k);
  uint32_t r1 = mb__graph_buf(g, "r1", p->dtype, p->shape[TM] * SEQ, k);
  residual_step(g, p, "residual1", ROLE_X, pr, r1);
  uint32_t h2 = norm_step(g, p, "norm2", "h2", r1, ROLE_N2);
  io = (mb__linear_io_t){.xq = 0, .xs = 0};
  uint32_t f1 = linear_step(g, p, &io, "fc1", "fc1 out", h2, ROLE_W1, k, 4 * k);
  uint32_t f = gelu_step(g, p, f1);
  io = (mb__linear_io_t){.xq = 0, .xs = 0};
  uint32_t f2 = linear_step(g, p, &io, "fc2", "fc2 out", f, ROLE_W2, 4 * k, k);
  residual_step(g, p, "residual2", r1, f2, ROLE_Y);
}

/* ---- hooks ------------------------------------------------------------ */

static mb_status_t tb_resolve(mb_op_params_t *p) {
  const int64_t m = p->shape[TM], k = p->shape[TK];
  if (k % HEADS)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "transformer_block: K = %lld is not a multiple of the %d "
                    "attention heads (head dim D = K/%d)",
                    (long long)k, HEADS, HEADS);
  /* The largest intermediate, the MLP's [M*S, 4K], bounds every size the
   * graph computes in int64 and size_t. */
  const double hidden = (double)m * SEQ * 4.0 * (double)k;
  if (hidden > 0x1p48)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "transformer_block: M = %lld, K = %lld gives an MLP "
                    "activation [M*16, 4K] of %.3g elements; at most 2^48",
                    (long long)m, (long long)k, hidden);
  if (!(p->eps > 0 && isfinite(p->eps)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "transformer_block: eps must be positive and finite (got "
                    "%g)",
                    p->eps);
  return mb__model_resolve(&mb__op_transformer_block, p, 0);
}

static double tb_flop(const mb_op_params_t *p) {
  return mb__model_flop(&mb__op_transformer_block, p);
}
static double tb_bytes(const mb_op_params_t *p) {
  return mb__model_bytes(&mb__op_transformer_block, p);
}
static int never_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

/* X normal(0, 1); weights by their fan-in; norm weights near 1. */
static void tb_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  if (role == ROLE_N1 || role == ROLE_N2)
    mb__model_fill_norm(0, f);
  else if (k_shape[role].ndim == 2)
    mb__model_fill_weight(k_shape[role].rows * p->shape[TK], f);
}

/* ---- reference: whole batches in double, a few kept -------------------- */

/* One batch's output and the scale of each element, [S, K]. */
typedef struct tb_slot {
  int64_t batch; /* -1: empty */
  double *y, *scale;
} tb_slot_t;

/* What computing a batch writes: the kept batches and the scratch. */
typedef struct tb_cache {
  tb_slot_t slot[SLOTS];
  unsigned next; /* the slot the next miss replaces (round robin) */
  float *in;     /* the batch's X, or one weight row, as f32 (exact) */
  double *x, *h, *q, *k, *v, *o, *acc, *mag; /* [S, K] */
  double *f;                                 /* [S, 4K] */
} tb_cache_t;

/* ref_element receives the state const: a reference is a pure function of
 * the inputs. The batches are computed on first use and kept, which is a
 * memo, not a change of any result, so it lives behind `cache` (verify
 * calls ref_element from one thread; the state is not shared). */
typedef struct tb_ref {
  const void *in[ROLE_Y]; /* the host inputs, read in place */
  mb_dtype_t dt;
  int64_t k;
  double eps;
  float *n1, *n2; /* NULL: no affine weight (MB_PARAM_NO_WEIGHT) */
  tb_cache_t *cache;
} tb_ref_t;

static void tb_ref_release(void *state) {
  tb_ref_t *r = state;
  if (!r) return;
  tb_cache_t *c = r->cache;
  if (c) {
    for (int i = 0; i < SLOTS; i++) {
      free(c->slot[i].y);
      free(c->slot[i].scale);
    }
    double *bufs[] = {c->x, c->h, c->q, c->k, c->v, c->o, c->acc, c->mag, c->f};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    free(c->in);
    free(c);
  }
  free(r->n1);
  free(r->n2);
  free(r);
}

static int cache_alloc(tb_cache_t *c, int64_t k) {
  const size_t sk = (size_t)(SEQ * k);
  int ok = (c->in = malloc(sk * sizeof *c->in)) != NULL;
  for (int i = 0; i < SLOTS && ok; i++) {
    c->slot[i].batch = -1;
    ok = (c->slot[i].y = malloc(sk * sizeof(double))) &&
         (c->slot[i].scale = malloc(sk * sizeof(double)));
  }
  double **bufs[] = {&c->x, &c->h, &c->q,   &c->k,
                     &c->v, &c->o, &c->acc, &c->mag};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs && ok; i++)
    ok = (*bufs[i] = malloc(sk * sizeof(double))) != NULL;
  return ok && (c->f = malloc(4 * sk * sizeof *c->f));
}

static mb_status_t tb_ref_prepare(const mb_op_params_t *p,
                                  const void *const *host, void **state) {
  const int64_t k = p->shape[TK];
  const int affine = !(p->flags & MB_PARAM_NO_WEIGHT);
  tb_ref_t *r = calloc(1, sizeof *r);
  int ok =
      r && (r->cache = calloc(1, sizeof *r->cache)) && cache_alloc(r->cache, k);
  if (ok && affine)
    ok = (r->n1 = mb__model_load(host[ROLE_N1], p->dtype, (size_t)k)) &&
         (r->n2 = mb__model_load(host[ROLE_N2], p->dtype, (size_t)k));
  if (!ok) {
    tb_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY,
                    "transformer_block reference: out of memory for K = %lld",
                    (long long)k);
  }
  for (int i = 0; i < ROLE_Y; i++) r->in[i] = host[i];
  r->dt = p->dtype;
  r->k = k;
  r->eps = p->eps;
  *state = r;
  return MB_OK;
}

/* h = x / sqrt(mean(x^2) + eps) * w per row of [S, K]; w NULL: 1. */
static void batch_rmsnorm(const double *x, int64_t k, const float *w,
                          double eps, double *h) {
  for (int64_t s = 0; s < SEQ; s++) {
    double ss = 0;
    for (int64_t j = 0; j < k; j++) ss += x[s * k + j] * x[s * k + j];
    const double inv = 1.0 / sqrt(ss / (double)k + eps);
    for (int64_t j = 0; j < k; j++)
      h[s * k + j] = x[s * k + j] * inv * (w ? (double)w[j] : 1.0);
  }
}

/* o = softmax(q k^T / sqrt(D)) v per head, no mask. Head h of position s
 * is columns h D .. h D + D - 1 of row s: the BSHD view of [S, K]. */
static void batch_attention(const double *q, const double *kk, const double *v,
                            int64_t k, double *o) {
  const int64_t d = k / HEADS;
  const double scale = 1.0 / sqrt((double)d);
  for (int64_t h = 0; h < HEADS; h++)
    for (int64_t i = 0; i < SEQ; i++) {
      double w[SEQ], mx = -INFINITY, z = 0;
      for (int64_t j = 0; j < SEQ; j++) {
        double s = 0;
        for (int64_t c = 0; c < d; c++)
          s += q[i * k + h * d + c] * kk[j * k + h * d + c];
        w[j] = s * scale;
        mx = fmax(mx, w[j]);
      }
      for (int64_t j = 0; j < SEQ; j++) z += (w[j] = exp(w[j] - mx));
      for (int64_t e = 0; e < d; e++) {
        double acc = 0;
        for (int64_t j = 0; j < SEQ; j++) acc += w[j] * v[j * k + h * d + e];
        o[i * k + h * d + e] = acc / z;
      }
    }
}

/* Batch b into slot s: the block, step by step, on the batch's S rows.
 * scale = |x| + sum |o Wo| + sum |f W2|: the magnitude of the three terms
 * summed into Y (it bounds |Y|). */
static void compute_batch(const tb_ref_t *r, int64_t b, tb_slot_t *s) {
  tb_cache_t *c = r->cache;
  const int64_t k = r->k, sk = SEQ * k;
  mb__model_load_at(c->in, r->in[ROLE_X], r->dt, (size_t)(b * sk), (size_t)sk);
  for (int64_t i = 0; i < sk; i++) c->x[i] = c->in[i];
  batch_rmsnorm(c->x, k, r->n1, r->eps, c->h);
  mb__model_matmul_rows(c->h, SEQ, k, r->in[ROLE_WQ], r->dt, k, c->in, c->q,
                        NULL);
  mb__model_matmul_rows(c->h, SEQ, k, r->in[ROLE_WK], r->dt, k, c->in, c->k,
                        NULL);
  mb__model_matmul_rows(c->h, SEQ, k, r->in[ROLE_WV], r->dt, k, c->in, c->v,
                        NULL);
  batch_attention(c->q, c->k, c->v, k, c->o);
  mb__model_matmul_rows(c->o, SEQ, k, r->in[ROLE_WO], r->dt, k, c->in, c->acc,
                        c->mag);
  for (int64_t i = 0; i < sk; i++) {
    s->scale[i] = fabs(c->x[i]) + c->mag[i];
    c->x[i] += c->acc[i]; /* x is r1 from here */
  }
  batch_rmsnorm(c->x, k, r->n2, r->eps, c->h);
  mb__model_matmul_rows(c->h, SEQ, k, r->in[ROLE_W1], r->dt, 4 * k, c->in, c->f,
                        NULL);
  for (int64_t i = 0; i < 4 * sk; i++)
    c->f[i] = mb__act_eval(MB_ACT_GELU_ERF, c->f[i], 0.0);
  mb__model_matmul_rows(c->f, SEQ, 4 * k, r->in[ROLE_W2], r->dt, k, c->in,
                        c->acc, c->mag);
  for (int64_t i = 0; i < sk; i++) {
    s->y[i] = c->x[i] + c->acc[i];
    s->scale[i] += c->mag[i];
  }
  s->batch = b;
}

static const tb_slot_t *batch(const tb_ref_t *r, int64_t b) {
  tb_cache_t *c = r->cache;
  for (int i = 0; i < SLOTS; i++)
    if (c->slot[i].batch == b) return &c->slot[i];
  tb_slot_t *s = &c->slot[c->next];
  c->next = (c->next + 1) % SLOTS;
  compute_batch(r, b, s);
  return s;
}

static void tb_ref_element(const void *state, uint32_t out, size_t idx,
                           double *value, double *scale) {
  const tb_ref_t *r = state;
  const size_t per = (size_t)(SEQ * r->k);
  const tb_slot_t *s = batch(r, (int64_t)(idx / per));
  (void)out;
  *value = s->y[idx % per];
  *scale = s->scale[idx % per];
}

/* Random r -> an element of one of SLOTS batches: the first, the last and
 * two evenly between (verify's corner checks, elements 0 and M*S*K - 1,
 * fall in the first and last), any element within the batch. */
static size_t tb_ref_sample(const mb_op_params_t *p, uint32_t out, uint64_t r) {
  const int64_t m = p->shape[TM];
  const uint64_t per = (uint64_t)(SEQ * p->shape[TK]);
  const int64_t b = (int64_t)(r % SLOTS) * (m - 1) / (SLOTS - 1);
  (void)out;
  return (size_t)((uint64_t)b * per + (r / SLOTS) % per);
}

/* Per element, a batch costs S rows x 12 K^2 multiply-adds over S K
 * elements (attention's S^2 D per head is small beside it). */
static double tb_ref_cost(const mb_op_params_t *p) {
  return 12.0 * (double)p->shape[TK];
}

static const char *const k_dims[] = {"M", "K", "N"};
static const char *const k_operands[NUM_ROLES] = {"X",  "n1", "Wq", "Wk", "Wv",
                                                  "Wo", "n2", "W1", "W2", "Y"};
static const mb_dtype_t k_hp[] = {MB_DTYPE_BF16, MB_DTYPE_F32, MB_DTYPE_F16};

const mb_op_t mb__op_transformer_block = {
    .name = "transformer_block",
    .summary =
        "model: RMSNorm -> q,k,v -> 8-head attention -> proj -> +X -> "
        "RMSNorm -> K->4K GELU ->K -> + under a recipe (X: Mx16xK)",
    .shape_syntax = "MxKxN",
    .dim_names = k_dims,
    .param_mask = MB__P_RECIPE | MB__P_EPS,
    .params_doc =
        "recipe (mbench list recipes); eps (1e-5); no_affine: no "
        "norm weights",
    .rank = 3,
    .num_inputs = ROLE_Y,
    .num_outputs = 1,
    .operand_names = k_operands,
    .dtypes = k_hp,
    .num_dtypes = 3,
    .resolve = tb_resolve,
    .operand = tb_operand,
    .flop = tb_flop,
    .bytes = tb_bytes,
    .reads_output = never_reads_output,
    .fill = tb_fill,
    .ref_cost = tb_ref_cost,
    .ref_prepare = tb_ref_prepare,
    .ref_element = tb_ref_element,
    .ref_release = tb_ref_release,
    .tolerance = mb__model_tolerance,
    .compose = tb_compose,
    .ref_sample = tb_ref_sample,
    .shape_note = "N is unused: the input is [M, 16, K]",
};
