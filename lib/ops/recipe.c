/* Quantization recipes (torchao's names), model types and modes, and the
 * one place a recipe becomes primitive steps: a linear layer's forward and
 * backward graph (graph.h). OPS.md, "Quantization recipes":
 *
 *   recipe          activations (A)       weights (B = W[K,N])  kernel
 *   baseline        hp                    hp                    hp GEMM
 *   int8wo          hp                    i8 per channel        dequant + GEMM
 *   int8dq          i8 per row, dynamic   i8 per channel        i8 GEMM
 *   int4wo-g        hp                    i4 groups of g on K   i4 GEMM
 *   float8wo        hp                    e4m3 per channel      dequant + GEMM
 *   float8dq-tensor e4m3 per tensor       e4m3 per tensor       fp8 GEMM
 *   float8dq-row    e4m3 per row          e4m3 per channel      fp8 GEMM
 *   float8-block    e4m3 1x128            e4m3 128x128          fp8 GEMM
 *
 * "Per channel" is one scale per output column n of W (COL); a group of g
 * runs along K (a g x 1 block of W). Weights are quantized once in a setup
 * step (untimed) for inference; training re-quantizes them inside the step
 * since master weights change every iteration. */
#include <stdio.h>
#include <string.h>

#include "graph.h"

typedef struct recipe_row {
  const char *name, *summary;
  mb_dtype_t wq;        /* weights' dtype; NONE: high precision */
  mb_scaling_t w_scale; /* on W as the GEMM's B operand */
  mb_dtype_t aq;        /* activations' dtype; NONE: weight-only */
  mb_scaling_t a_scale; /* on X as the GEMM's A operand */
  int dequant;          /* weights dequantized to hp before an hp GEMM */
  double min_sqnr_db;   /* see mb_recipe_min_sqnr_db */
} recipe_row_t;

#define NONE_S       \
  {                  \
    MB_SCALE_NONE, { \
      0, 0           \
    }                \
  }
#define TENSOR_S       \
  {                    \
    MB_SCALE_TENSOR, { \
      0, 0             \
    }                  \
  }
#define ROW_S       \
  {                 \
    MB_SCALE_ROW, { \
      0, 0          \
    }               \
  }
#define COL_S       \
  {                 \
    MB_SCALE_COL, { \
      0, 0          \
    }               \
  }
#define GROUP_S(g)    \
  {                   \
    MB_SCALE_GROUP, { \
      0, g            \
    }                 \
  }
#define BLOCK_S(r, c) \
  {                   \
    MB_SCALE_BLOCK, { \
      r, c            \
    }                 \
  }

/* The SQNR floors are well below what each format reaches on normal data
 * (bf16 output ~50 dB, i8 per channel ~40 dB, e4m3 ~30 dB per quantized
 * operand, i4 groups ~19 dB) and far above a broken kernel (a lost scale
 * or transpose lands near 0 dB): docs/ops.md, "Models". */
static const recipe_row_t k_recipes[MB_RECIPE_COUNT] = {
    [MB_RECIPE_BASELINE] = {"baseline",
                            "high precision: hp GEMM, f32 accumulate",
                            MB_DTYPE_NONE, NONE_S, MB_DTYPE_NONE, NONE_S, 0,
                            35.0},
    [MB_RECIPE_INT8WO] = {"int8wo",
                          "i8 per-channel weights, dequantized + hp GEMM",
                          MB_DTYPE_I8, COL_S, MB_DTYPE_NONE, NONE_S, 1, 30.0},
    [MB_RECIPE_INT8DQ] = {"int8dq",
                          "i8 per-row dynamic activations x i8 per-channel "
                          "weights, i32 accumulate",
                          MB_DTYPE_I8, COL_S, MB_DTYPE_I8, ROW_S, 0, 30.0},
    [MB_RECIPE_INT4WO_32] = {"int4wo-32",
                             "i4 weights in groups of 32 along K, hp GEMM",
                             MB_DTYPE_I4, GROUP_S(32), MB_DTYPE_NONE, NONE_S, 0,
                             12.0},
    [MB_RECIPE_INT4WO_64] = {"int4wo-64",
                             "i4 weights in groups of 64 along K, hp GEMM",
                             MB_DTYPE_I4, GROUP_S(64), MB_DTYPE_NONE, NONE_S, 0,
                             12.0},
    [MB_RECIPE_INT4WO_128] = {"int4wo-128",
                              "i4 weights in groups of 128 along K, hp GEMM",
                              MB_DTYPE_I4, GROUP_S(128), MB_DTYPE_NONE, NONE_S,
                              0, 12.0},
    [MB_RECIPE_INT4WO_256] = {"int4wo-256",
                              "i4 weights in groups of 256 along K, hp GEMM",
                              MB_DTYPE_I4, GROUP_S(256), MB_DTYPE_NONE, NONE_S,
                              0, 12.0},
    [MB_RECIPE_FLOAT8WO] = {"float8wo",
                            "f8e4m3 per-channel weights, dequantized + hp "
                            "GEMM",
                            MB_DTYPE_F8E4M3, COL_S, MB_DTYPE_NONE, NONE_S, 1,
                            20.0},
    [MB_RECIPE_FLOAT8DQ_TENSOR] = {"float8dq-tensor",
                                   "f8e4m3 dynamic per-tensor activations x "
                                   "per-tensor weights",
                                   MB_DTYPE_F8E4M3, TENSOR_S, MB_DTYPE_F8E4M3,
                                   TENSOR_S, 0, 20.0},
    [MB_RECIPE_FLOAT8DQ_ROW] = {"float8dq-row",
                                "f8e4m3 dynamic per-row activations x "
                                "per-channel weights",
                                MB_DTYPE_F8E4M3, COL_S, MB_DTYPE_F8E4M3, ROW_S,
                                0, 20.0},
    [MB_RECIPE_FLOAT8_BLOCK] = {"float8-block",
                                "f8e4m3 1x128 activation blocks x 128x128 "
                                "weight blocks",
                                MB_DTYPE_F8E4M3, BLOCK_S(128, 128),
                                MB_DTYPE_F8E4M3, BLOCK_S(1, 128), 0, 20.0},
};

static const recipe_row_t *row(mb_recipe_t r) {
  return (unsigned)r < MB_RECIPE_COUNT ? &k_recipes[r] : NULL;
}

const char *mb_recipe_name(mb_recipe_t r) {
  return row(r) ? row(r)->name : "?";
}

const char *mb_recipe_summary(mb_recipe_t r) {
  return row(r) ? row(r)->summary : "?";
}

double mb_recipe_min_sqnr_db(mb_recipe_t r) {
  return row(r) ? row(r)->min_sqnr_db : 0.0;
}

int mb_recipe_trains(mb_recipe_t r) {
  /* Weight-only recipes freeze their weights: no training step. */
  return row(r) && (r == MB_RECIPE_BASELINE || row(r)->aq != MB_DTYPE_NONE);
}

mb_status_t mb_recipe_from_name(const char *name, mb_recipe_t *out) {
  char valid[256] = "";
  size_t len = 0;
  for (int r = 0; r < MB_RECIPE_COUNT; r++) {
    if (name && !strcmp(name, k_recipes[r].name)) {
      if (out) *out = (mb_recipe_t)r;
      return MB_OK;
    }
    len += (size_t)snprintf(valid + len, sizeof valid - len, "%s%s",
                            r ? ", " : "", k_recipes[r].name);
  }
  return mb__fail(MB_ERR_NOT_FOUND, "unknown recipe \"%s\"; valid: %s",
                  name ? name : "(null)", valid);
}

/* ---- models and modes ------------------------------------------------------
 */

typedef struct model_row {
  const char *name, *summary;
  const mb_op_t *op, *training; /* training: NULL when not built */
  mb_activation_t act;          /* ln_linear_<act> */
} model_row_t;

#define LN_LINEAR(act_name, act)                                      \
  {                                                                   \
    "ln_linear_" act_name,                                            \
        "LayerNorm(K) -> Linear K->N -> " act_name " (input [M, K])", \
        &mb__op_ln_linear, NULL, act                                  \
  }

static const model_row_t k_models[] = {
    {"linear", "one Linear K->N, no bias (input [M, K])", &mb__op_linear,
     &mb__op_linear_training, MB_ACT_RELU},
    LN_LINEAR("sigmoid", MB_ACT_SIGMOID),
    LN_LINEAR("relu", MB_ACT_RELU),
    LN_LINEAR("leakyrelu", MB_ACT_LEAKYRELU),
    LN_LINEAR("relu6", MB_ACT_RELU6),
    /* torch's nn.GELU() is the erf form. */
    LN_LINEAR("gelu", MB_ACT_GELU_ERF),
    LN_LINEAR("silu", MB_ACT_SILU),
    LN_LINEAR("hardswish", MB_ACT_HARDSWISH),
    {"transformer_block",
     "RMSNorm -> QKV -> 8-head attention -> proj -> +x -> RMSNorm -> MLP "
     "K->4K->K (GELU) -> +; input [M, 16, K], N unused",
     &mb__op_transformer_block, NULL, MB_ACT_RELU},
};
#define NUM_MODELS (sizeof k_models / sizeof k_models[0])

static const char *const k_modes[] = {"inference", "training"};

size_t mb_model_count(void) {
  return NUM_MODELS;
}

const char *mb_model_name(size_t i, const char **summary) {
  if (i >= NUM_MODELS) return NULL;
  if (summary) *summary = k_models[i].summary;
  return k_models[i].name;
}

size_t mb_mode_count(void) {
  return 2;
}

const char *mb_mode_name(size_t i) {
  return i < 2 ? k_modes[i] : NULL;
}

static void list_models(char *buf, size_t cap) {
  size_t len = 0;
  for (size_t i = 0; i < NUM_MODELS && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
                            k_models[i].name);
}

mb_status_t mb_model_resolve(const char *model, const char *mode,
                             const char **op, mb_op_params_t *params) {
  const model_row_t *m = NULL;
  for (size_t i = 0; i < NUM_MODELS && !m; i++)
    if (model && !strcmp(model, k_models[i].name)) m = &k_models[i];
  if (!m) {
    char valid[512];
    list_models(valid, sizeof valid);
    return mb__fail(MB_ERR_NOT_FOUND, "unknown model \"%s\"; valid: %s",
                    model ? model : "(null)", valid);
  }
  int training = 0;
  if (mode && strcmp(mode, "inference")) {
    if (strcmp(mode, "training"))
      return mb__fail(MB_ERR_NOT_FOUND,
                      "unknown benchmark mode \"%s\"; valid: inference, "
                      "training",
                      mode);
    training = 1;
  }
  if (training && !m->training)
    return mb__fail(MB_ERR_UNSUPPORTED,
                    "model \"%s\" has no training graph in this version: its "
                    "backward needs layernorm/activation/attention backward "
                    "ops, which the catalogue does not have; training is "
                    "built for: linear",
                    model);
  if (op) *op = (training ? m->training : m->op)->name;
  if (params && m->op == &mb__op_ln_linear) {
    /* torchao's LNLinearActivationModel: LayerNorm(elementwise_affine=
     * False), no gamma or beta. */
    params->activation = m->act;
    params->flags |= MB_PARAM_NO_WEIGHT;
  }
  return MB_OK;
}

void mb__model_label(const mb_op_t *op, const mb_op_params_t *p, char *buf,
                     size_t cap) {
  for (size_t i = 0; i < NUM_MODELS; i++)
    if ((k_models[i].op == op || k_models[i].training == op) &&
        (op != &mb__op_ln_linear || k_models[i].act == p->activation)) {
      snprintf(buf, cap, "%s", k_models[i].name);
      return;
    }
  /* An activation torchao has no model for (gelu_tanh). */
  snprintf(buf, cap, "%s_%s", op->name, mb_activation_name(p->activation));
}

const char *mb_phase_name(mb_phase_t p) {
  static const char *const names[] = {"forward", "backward", "setup"};
  return (unsigned)p < 3 ? names[p] : "?";
}

/* ---- a linear layer under a recipe ---------------------------------------
 */

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

/* D[m,n] = A[m,k] . B[k,n] (+ scales) into buffer d. */
static void gemm_step(mb__graph_t *g, const char *label, mb_phase_t phase,
                      const mb_op_params_t *gp, uint32_t a, uint32_t b,
                      uint32_t sa, uint32_t sb, uint32_t d) {
  const uint32_t args[5] = {a, b, sa, sb, d};
  mb__graph_step(g, label, phase, &mb__op_gemm, gp, args);
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
  const char *qa, *qw, *dq, *gemm;
} layer_labels_t;

#define LABELS(key, prefix)                                        \
  {                                                                \
    key, prefix "quantize activations", prefix "quantize weights", \
        prefix "dequantize weights", prefix "gemm"                 \
  }

static const layer_labels_t k_labels[] = {
    LABELS("", ""),         LABELS("q", "q: "),       LABELS("k", "k: "),
    LABELS("v", "v: "),     LABELS("proj", "proj: "), LABELS("fc1", "fc1: "),
    LABELS("fc2", "fc2: "),
};

static const layer_labels_t *labels(const char *name) {
  for (size_t i = 0; i < sizeof k_labels / sizeof *k_labels; i++)
    if (!strcmp(k_labels[i].name, name)) return &k_labels[i];
  return &k_labels[0];
}

void mb__graph_linear(mb__graph_t *g, const mb_op_params_t *p,
                      mb__linear_io_t *io) {
  const recipe_row_t *r = row((mb_recipe_t)p->recipe);
  const layer_labels_t *l = labels(io->name);
  const mb_dtype_t hp = p->dtype;
  const mb_phase_t wphase = io->training ? MB_PHASE_FORWARD : MB_PHASE_SETUP;
  if (!r) return;
  if (r->wq == MB_DTYPE_NONE) { /* baseline */
    mb_op_params_t gp = gemm_params(io->m, io->k, io->n, hp, hp, hp);
    uint32_t unit = mb__graph_unit(g);
    gemm_step(g, l->gemm, MB_PHASE_FORWARD, &gp, io->x, io->w, unit, unit,
              io->y);
    return;
  }
  uint32_t wq, ws;
  quantize_step(g, l->qw, wphase, io->w, io->k, io->n, 0, hp, r->wq, r->w_scale,
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
  const recipe_row_t *r = row((mb_recipe_t)p->recipe);
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
