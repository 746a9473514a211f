/* The predecessor tools' names, as (op, preset) pairs: the one place an
 * alias is defined. A preset only fills what the caller left unset, so
 * `--op gemm_fp8_rowwise --dtype f32` still means what it says. */
#include <string.h>

#include "ops/alias.h"

static void set_dtype(mb_dtype_t *field, mb_dtype_t value) {
  if (*field == MB_DTYPE_NONE) *field = value;
}
static void set_scaling(mb_scaling_t *s, mb_scale_mode_t mode, int64_t r,
                        int64_t c) {
  if (s->mode == MB_SCALE_NONE) *s = (mb_scaling_t){mode, {r, c}};
}

static void fp8_out_bf16(mb_op_params_t *p) {
  set_dtype(&p->dtype, MB_DTYPE_F8E4M3);
  set_dtype(&p->dtype_out, MB_DTYPE_BF16);
}
static void gemm_simple(mb_op_params_t *p) {
  fp8_out_bf16(p);
}
static void gemm_fp8(mb_op_params_t *p) {
  fp8_out_bf16(p);
  set_scaling(&p->scale_a, MB_SCALE_ROW, 0, 0);
  set_scaling(&p->scale_b, MB_SCALE_COL, 0, 0);
}
static void gemm_accum(mb_op_params_t *p) {
  set_dtype(&p->dtype, MB_DTYPE_F8E4M3);
  set_dtype(&p->dtype_out, MB_DTYPE_F32);
  set_scaling(&p->scale_a, MB_SCALE_ROW, 0, 0);
  set_scaling(&p->scale_b, MB_SCALE_COL, 0, 0);
  if (p->beta == 0) p->beta = 1.0;
}
static void gemm_fp8_rowwise(mb_op_params_t *p) {
  set_dtype(&p->dtype, MB_DTYPE_BF16);
  set_dtype(&p->dtype_out, MB_DTYPE_BF16);
  set_dtype(&p->dtype_q, MB_DTYPE_F8E4M3);
  p->flags |= MB_PARAM_QUANTIZE_INPUTS;
  set_scaling(&p->scale_a, MB_SCALE_ROW, 0, 0);
  set_scaling(&p->scale_b, MB_SCALE_COL, 0, 0);
}
/* The JAX suite's gemm_fp8_rowwise_w_dequantize: the fp8 product
 * accumulated to f32 unscaled, then acc * (sa * sb) cast to bf16. */
static void gemm_fp8_rowwise_w_dequantize(mb_op_params_t *p) {
  gemm_fp8_rowwise(p);
  p->flags |= MB_PARAM_EXPLICIT_DEQUANT;
}
/* The JAX suite's static GEMMs quantize with calibration "fixed, -224,
 * 224": every scale is 224 / 448 (e4m3's largest finite), given rather
 * than computed, so the timed work has no absmax pass. */
static void static_half(mb_op_params_t *p) {
  p->flags |= MB_PARAM_STATIC;
  if (p->scale == 0) p->scale = 224.0 / 448.0;
}
static void gemm_fp8_rowwise_static(mb_op_params_t *p) {
  static_half(p);
  gemm_fp8_rowwise(p);
}
/* As gemm_fp8_b128's blocks (A 1x128 along K, B 128x128), quantized
 * inside the op from bf16 like gemm_fp8_rowwise. */
static void gemm_fp8_b128_static(mb_op_params_t *p) {
  static_half(p);
  set_scaling(&p->scale_a, MB_SCALE_BLOCK, 1, 128);
  set_scaling(&p->scale_b, MB_SCALE_BLOCK, 128, 128);
  gemm_fp8_rowwise(p);
}
/* MXFP8 (OCP MX v1.0): e4m3 elements, one e8m0 power-of-two scale per 32
 * along K (A 1x32, B 32x1), quantized inside the op from bf16 as
 * gemm_fp8_rowwise is; the static form's 0.5 is a power of two, so e8m0
 * holds it (224 / 448, the suite's calibration, as for the fp8 GEMMs). */
static void gemm_mxfp8_b32(mb_op_params_t *p) {
  set_dtype(&p->dtype_scale, MB_DTYPE_E8M0);
  set_scaling(&p->scale_a, MB_SCALE_BLOCK, 1, 32);
  set_scaling(&p->scale_b, MB_SCALE_BLOCK, 32, 1);
  gemm_fp8_rowwise(p);
}
static void gemm_mxfp8_b32_static(mb_op_params_t *p) {
  static_half(p);
  gemm_mxfp8_b32(p);
}
static void gemm_multiple_run(mb_op_params_t *p) {
  set_dtype(&p->dtype, MB_DTYPE_BF16);
  set_dtype(&p->dtype_out, MB_DTYPE_BF16);
}
static void gemm_fp8_b128(mb_op_params_t *p) {
  fp8_out_bf16(p);
  set_scaling(&p->scale_a, MB_SCALE_BLOCK, 1, 128);
  set_scaling(&p->scale_b, MB_SCALE_BLOCK, 128, 128);
}
/* qb x qb for both; qb from scale_a's block if given (128, 256, 512). */
static void fp8_2d_block(mb_op_params_t *p) {
  fp8_out_bf16(p);
  int64_t qb = p->scale_a.mode == MB_SCALE_BLOCK ? p->scale_a.block[0] : 128;
  set_scaling(&p->scale_a, MB_SCALE_BLOCK, qb, qb);
  set_scaling(&p->scale_b, MB_SCALE_BLOCK, qb, qb);
}
static void gemm_int8(mb_op_params_t *p) {
  set_dtype(&p->dtype, MB_DTYPE_I8);
}
static void gemm_int4(mb_op_params_t *p) {
  set_dtype(&p->dtype, MB_DTYPE_BF16);
  set_dtype(&p->dtype_b, MB_DTYPE_I4);
  set_scaling(&p->scale_b, MB_SCALE_GROUP, 0, 128);
}
static void quantization(mb_op_params_t *p) {
  set_dtype(&p->dtype, MB_DTYPE_BF16);
  set_dtype(&p->dtype_out, MB_DTYPE_F8E4M3);
  set_scaling(&p->scale_a, MB_SCALE_ROW, 0, 0);
}
static void transpose_quantization(mb_op_params_t *p) {
  quantization(p);
  p->flags |= MB_PARAM_TRANSPOSE;
}

/* The activation field has no "unset" value (0 is relu), so these presets
 * set it outright: the alias's name is the activation asked for. */
#define ACT_PRESET(fn, act)           \
  static void fn(mb_op_params_t *p) { \
    p->activation = act;              \
  }
ACT_PRESET(act_relu, MB_ACT_RELU)
ACT_PRESET(act_gelu_tanh, MB_ACT_GELU_TANH)
ACT_PRESET(act_gelu_erf, MB_ACT_GELU_ERF)
ACT_PRESET(act_silu, MB_ACT_SILU)
ACT_PRESET(act_sigmoid, MB_ACT_SIGMOID)
ACT_PRESET(act_leakyrelu, MB_ACT_LEAKYRELU)
ACT_PRESET(act_relu6, MB_ACT_RELU6)
ACT_PRESET(act_hardswish, MB_ACT_HARDSWISH)
#undef ACT_PRESET

static void causal(mb_op_params_t *p) {
  p->flags |= MB_PARAM_CAUSAL;
}

static const mb__alias_t k_aliases[] = {
    {"matmul", "gemm", NULL, "gemm"},
    {"gemm_simple", "gemm", gemm_simple,
     "fp8 x fp8 -> bf16, f32 accumulate, no scales (JAX suite)"},
    {"gemm_fp8", "gemm", gemm_fp8,
     "fp8 with row scales of A and column scales of B -> bf16 (the JAX "
     "suite's `gemm`)"},
    {"gemm_accum", "gemm", gemm_accum,
     "gemm_fp8 accumulated into an f32 output, beta = 1 (JAX suite)"},
    {"gemm_fp8_rowwise", "gemm", gemm_fp8_rowwise,
     "bf16 A, B quantized to fp8 by rows/columns inside the op, scales "
     "applied (JAX suite)"},
    {"gemm_fp8_rowwise_w_dequantize", "gemm", gemm_fp8_rowwise_w_dequantize,
     "gemm_fp8_rowwise with the scales applied after the product, by a pass "
     "of their own over its f32 result (JAX suite)"},
    {"gemm_fp8_rowwise_static_scaling", "gemm", gemm_fp8_rowwise_static,
     "gemm_fp8_rowwise with every scale given (static, 0.5 = 224/448: no "
     "absmax pass; JAX suite)"},
    {"gemm_fp8_b128_fp32_static_scaling", "gemm", gemm_fp8_b128_static,
     "bf16 A, B quantized to fp8 inside the op in 1x128 / 128x128 blocks, "
     "every scale given (static, 0.5), scales applied (JAX suite)"},
    {"gemm_mxfp8_b32", "gemm", gemm_mxfp8_b32,
     "MXFP8: bf16 A, B quantized inside the op to f8e4m3 with one e8m0 "
     "scale per 32 along K (A 1x32, B 32x1), scales applied (JAX suite)"},
    {"gemm_mxfp8_b32_static_scaling", "gemm", gemm_mxfp8_b32_static,
     "gemm_mxfp8_b32 with every scale given (static, 0.5 = 2^-1: no absmax "
     "pass; JAX suite)"},
    {"gemm_multiple_run", "gemm", gemm_multiple_run,
     "bf16 (or --dtype f8e4m3) in, f32 accumulate, bf16 out (JAX suite)"},
    {"gemm_fp8_b128", "gemm", gemm_fp8_b128,
     "fp8, A scaled in 1x128 blocks, B in 128x128 (DeepSeek style)"},
    {"fp8_2d_block_matmul", "gemm", fp8_2d_block,
     "fp8, both operands in qb x qb blocks (qb = 128; --scale-a QBxQB)"},
    {"gemm_int8", "gemm", gemm_int8, "i8 x i8 -> i32 (exact)"},
    {"gemm_int4", "gemm", gemm_int4,
     "bf16 x i4 weights with group-128 scales along K -> bf16"},
    {"quantization", "quantize", quantization,
     "bf16 -> f8e4m3, dynamic, per row (JAX suite)"},
    {"transpose_quantization", "quantize", transpose_quantization,
     "quantization of X^T (JAX suite)"},
    {"elementwise_add", "add", NULL, "add"},
    {"relu", "activation", act_relu, "activation relu"},
    {"gelu", "activation", act_gelu_tanh,
     "activation gelu, tanh approximation (torchao's gelu)"},
    {"gelu_tanh", "activation", act_gelu_tanh, "activation gelu_tanh"},
    {"gelu_erf", "activation", act_gelu_erf, "activation gelu_erf"},
    {"silu", "activation", act_silu, "activation silu"},
    {"swish", "activation", act_silu, "activation silu"},
    {"sigmoid", "activation", act_sigmoid, "activation sigmoid"},
    {"leakyrelu", "activation", act_leakyrelu,
     "activation leakyrelu (slope --act-alpha, 0.01)"},
    {"relu6", "activation", act_relu6, "activation relu6"},
    {"hardswish", "activation", act_hardswish, "activation hardswish"},
    {"swiglu", "silu_mul", NULL, "silu_mul"},
    {"layer_norm", "layernorm", NULL, "layernorm"},
    {"rms_norm", "rmsnorm", NULL, "rmsnorm"},
    {"sdpa", "attention", NULL, "attention"},
    {"causal_attention", "attention", causal, "attention with the causal mask"},
    {"memcpy", "copy", NULL, "copy"},
};
#define NUM_ALIASES (sizeof k_aliases / sizeof k_aliases[0])

const mb__alias_t *mb__alias_find(const char *name) {
  for (size_t i = 0; name && i < NUM_ALIASES; i++)
    if (strcmp(k_aliases[i].name, name) == 0) return &k_aliases[i];
  return NULL;
}

size_t mb_op_alias_count(void) {
  return NUM_ALIASES;
}

const char *mb_op_alias_name(size_t index, const char **op,
                             const char **summary) {
  if (index >= NUM_ALIASES) return NULL;
  if (op) *op = k_aliases[index].op;
  if (summary) *summary = k_aliases[index].summary;
  return k_aliases[index].name;
}
