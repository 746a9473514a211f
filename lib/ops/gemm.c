/* gemm and the scaled-GEMM family:
 *   D[M,N] = alpha * sum_k (A[m,k] sa(m,k)) (B[k,n] sb(k,n)) + beta * D
 * row-major; sa, sb: one f32 scale per block of A (bm x bk) and B (bk x bn)
 * (tensor, row/col, 1x128 / 128x128 blocks, groups along K; see op.h).
 * Inputs are A, B, scale_a, scale_b (a 1x1 tensor holding 1 when a side is
 * not scaled); output D. With MB_PARAM_QUANTIZE_INPUTS, A and B are high
 * precision and are quantized to dtype_q inside the op (dynamic absmax with
 * the given scaling): gemm_fp8_rowwise; MB_PARAM_STATIC makes every scale
 * params.scale instead, so no absmax pass is timed (the JAX suite's
 * *_static_scaling GEMMs). Unscaled float gemms take
 * MB_PARAM_TRANS_A (A stored K x M) and MB_PARAM_TRANS_B (B stored N x K):
 * the product is the same, only the operands' storage differs; unscaled
 * f4e2m1 takes MB_PARAM_TRANS_B (B packed along K).
 * params.dtype_scale e8m0 stores the scale grids as e8m0 bytes and makes
 * quantize-inputs compute them by the OCP MX rule: with 1x32 / 32x1 blocks
 * that is MXFP8 (gemm_mxfp8_b32) with fp8 elements, MXFP4 with f4e2m1
 * (packed two per byte, 0.5 byte each in the byte model). f8e4m3 grids
 * are NVFP4's block scales: f4e2m1 on both sides, the static scale the
 * per-tensor scale S of both, each element decoding as e2m1 x fl32(s_b S)
 * (4 more bytes for S in the byte model).
 * FLOP = 2MNK (the quantization's work is not counted, see docs/ops.md);
 * bytes = |A| + |B| + scales (4 bytes each, 1 in e8m0) + |D| (+ |D| when
 * beta != 0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_internal.h"
#include "ops/gemm_internal.h"
#include "rng.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const mb_dtype_t k_float[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
static const mb_dtype_t k_fp8[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2};
static const mb_dtype_t k_fp4[] = {MB_DTYPE_F4E2M1};
static const mb_dtype_t k_inputs[] = {
    MB_DTYPE_F32,    MB_DTYPE_BF16, MB_DTYPE_F16,   MB_DTYPE_F8E4M3,
    MB_DTYPE_F8E5M2, MB_DTYPE_I8,   MB_DTYPE_F4E2M1};
static const mb_dtype_t k_int_out[] = {MB_DTYPE_I32, MB_DTYPE_BF16,
                                       MB_DTYPE_F32};
static const mb_dtype_t k_quant_to[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2,
                                        MB_DTYPE_I8, MB_DTYPE_F4E2M1};

static int in_list(mb_dtype_t d, const mb_dtype_t *l, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (l[i] == d) return 1;
  return 0;
}

/* NVFP4: f8e4m3 block scales, the static scale the per-tensor one. */
static int nvfp4(const mb_op_params_t *p) {
  return p->dtype_scale == MB_DTYPE_F8E4M3;
}

static int is_quantized(mb_dtype_t d) {
  return in_list(d, k_fp8, COUNT(k_fp8)) || d == MB_DTYPE_I8 ||
         d == MB_DTYPE_I4 || d == MB_DTYPE_F4E2M1;
}

static mb_status_t check_scaling(mb_op_params_t *p) {
  const int64_t m = p->shape[GM], k = p->shape[GK], n = p->shape[GN];
  mb_status_t st =
      mb__scaling_resolve("gemm", "A (scale_a)", &p->scale_a, m, k, 0);
  if (st == MB_OK)
    st = mb__scaling_resolve("gemm", "B (scale_b)", &p->scale_b, k, n, 1);
  if (st != MB_OK) return st;
  /* A scale that varies along K multiplies inside the sum: both sides must
   * cut K the same way (or one side not vary along K at all). */
  int64_t ka = p->scale_a.block[1], kb = p->scale_b.block[0];
  if (p->scale_a.mode != MB_SCALE_NONE && p->scale_b.mode != MB_SCALE_NONE &&
      ka != k && kb != k && ka % kb && kb % ka)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: scale_a blocks K by %lld and scale_b by %lld; one "
                    "must divide the other",
                    (long long)ka, (long long)kb);
  return MB_OK;
}

/* The layout flags exist for a training backward pass (dX = dY.W^T,
 * dW = X^T.dY) in high precision; scaled and quantized operands have
 * layouts of their own (scale grids, TN copies), so they are refused
 * rather than half-supported. */
static mb_status_t check_trans(const mb_op_params_t *p) {
  static const struct {
    uint32_t flag;
    const char *name;
  } k_trans[] = {{MB_PARAM_TRANS_A, "trans_a"}, {MB_PARAM_TRANS_B, "trans_b"}};
  const int qi = (p->flags & MB_PARAM_QUANTIZE_INPUTS) != 0;
  const int scaled =
      p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE;
  const int plain = in_list(p->dtype, k_float, COUNT(k_float)) &&
                    p->dtype_b == p->dtype && !scaled && !qi;
  /* Unscaled FP4 also takes B stored N x K, packed along K (the JAX
   * suite's gemm_generalized with transpose_b): the layout FP4 tensor
   * cores read. */
  const int fp4_nk = p->dtype == MB_DTYPE_F4E2M1 &&
                     p->dtype_b == MB_DTYPE_F4E2M1 && !scaled && !qi;
  for (size_t i = 0; i < COUNT(k_trans); i++)
    if ((p->flags & k_trans[i].flag) &&
        !(plain || (fp4_nk && k_trans[i].flag == MB_PARAM_TRANS_B)))
      return mb__fail(MB_ERR_INVALID_ARG,
                      "gemm: %s applies to unscaled float gemms only (f32, "
                      "bf16 or f16 A and B of one dtype, no scales, no "
                      "quantize-inputs; trans_b also to unscaled f4e2m1); "
                      "got %s x %s%s%s",
                      k_trans[i].name, mb_dtype_name(p->dtype),
                      mb_dtype_name(p->dtype_b), scaled ? " with scales" : "",
                      qi ? " with quantize-inputs" : "");
  return MB_OK;
}

static mb_status_t resolve_float(mb_op_params_t *p) {
  if (p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: %s inputs take no scales (scale_a/scale_b: none); "
                    "scales go with fp8, i8 and i4 operands",
                    mb_dtype_name(p->dtype));
  return mb__check_dtype(&mb__op_gemm, "dtype_b", p->dtype_b, &p->dtype, 1);
}

/* fp8 A takes either fp8 B; fp4 A takes fp4 B (no mixed fp8 x fp4). */
static mb_status_t resolve_fp8(mb_op_params_t *p) {
  if (p->dtype_out == p->dtype) p->dtype_out = MB_DTYPE_BF16;
  const int fp4 = p->dtype == MB_DTYPE_F4E2M1;
  return mb__check_dtype(&mb__op_gemm, "dtype_b", p->dtype_b,
                         fp4 ? k_fp4 : k_fp8,
                         fp4 ? COUNT(k_fp4) : COUNT(k_fp8));
}

static mb_status_t resolve_int8(mb_op_params_t *p) {
  if (p->dtype_out == p->dtype) p->dtype_out = MB_DTYPE_I32;
  p->dtype_acc = MB_DTYPE_I32;
  mb_status_t st =
      mb__check_dtype(&mb__op_gemm, "dtype_b", p->dtype_b, &p->dtype, 1);
  if (st == MB_OK)
    st = mb__check_dtype(&mb__op_gemm, "dtype_out", p->dtype_out, k_int_out,
                         COUNT(k_int_out));
  if (st == MB_OK && p->dtype_out == MB_DTYPE_I32 &&
      (p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: i8 x i8 -> i32 is exact and takes no scales; "
                    "give an output dtype of bf16 or f32 (--out-dtype, "
                    "out_dtype=) to rescale");
  if (st == MB_OK && (p->alpha != 1 || p->beta != 0) &&
      p->dtype_out == MB_DTYPE_I32)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: i8 -> i32 takes alpha = 1, beta = 0");
  return st;
}

/* A in bf16/f32, B in i4 with group scales along K: weight-only int4. */
static mb_status_t resolve_int4_weights(mb_op_params_t *p) {
  if (p->scale_b.mode == MB_SCALE_NONE)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: i4 weights need scales (scale_b group:G, e.g. "
                    "group:128)");
  if (p->scale_a.mode != MB_SCALE_NONE)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: with i4 weights, A (%s) takes no scales",
                    mb_dtype_name(p->dtype));
  return MB_OK;
}

/* A static scale replaces the absmax of in-op quantization; a GEMM whose
 * operands arrive quantized has its scales as inputs already, but for
 * NVFP4's per-tensor scale, which no grid holds. */
static mb_status_t check_static(const mb_op_params_t *p) {
  if (!(p->flags & MB_PARAM_STATIC)) return MB_OK;
  if (!(p->flags & MB_PARAM_QUANTIZE_INPUTS) && !nvfp4(p))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: a static scale goes with quantize-inputs (it "
                    "replaces the absmax of the in-op quantization)");
  if (!(p->scale > 0 && isfinite(p->scale)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: the static scale must be finite and > 0, got %g",
                    p->scale);
  return MB_OK;
}

static mb_status_t resolve_quantize_inputs(mb_op_params_t *p) {
  if (p->dtype_q == MB_DTYPE_NONE) p->dtype_q = MB_DTYPE_F8E4M3;
  if (p->scale_a.mode == MB_SCALE_NONE) p->scale_a.mode = MB_SCALE_ROW;
  if (p->scale_b.mode == MB_SCALE_NONE) p->scale_b.mode = MB_SCALE_COL;
  if (p->dtype_out == p->dtype && p->dtype == MB_DTYPE_F32)
    p->dtype_out = MB_DTYPE_F32;
  mb_status_t st = mb__check_dtype(&mb__op_gemm, "dtype_q", p->dtype_q,
                                   k_quant_to, COUNT(k_quant_to));
  if (st == MB_OK)
    st = mb__check_dtype(&mb__op_gemm, "dtype_b", p->dtype_b, &p->dtype, 1);
  if (st == MB_OK && p->dtype != MB_DTYPE_BF16 && p->dtype != MB_DTYPE_F32)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: quantize-inputs takes bf16 or f32 A and B, not %s",
                    mb_dtype_name(p->dtype));
  if (st == MB_OK && p->dtype_q == MB_DTYPE_I8) p->dtype_acc = MB_DTYPE_I32;
  return st;
}

/* Fast accumulation is a mode of fp8 tensor-core GEMMs (cuBLASLt's
 * CUBLASLT_MATMUL_DESC_FAST_ACCUM): the fp8 products' partial sums are not
 * promoted to f32. Other inputs have no such mode, so asking for it is an
 * input error rather than a flag silently ignored. */
static int fp8_product(const mb_op_params_t *p) {
  return in_list(qa_dtype(p), k_fp8, COUNT(k_fp8)) &&
         in_list(qb_dtype(p), k_fp8, COUNT(k_fp8));
}

/* MX scaling (e8m0) goes with fp8 x fp8 (MXFP8) or fp4 x fp4 (MXFP4). */
static int mx_product(const mb_op_params_t *p) {
  return fp8_product(p) ||
         (qa_dtype(p) == MB_DTYPE_F4E2M1 && qb_dtype(p) == MB_DTYPE_F4E2M1);
}

static mb_status_t check_fast_accum(const mb_op_params_t *p) {
  if (!(p->flags & MB_PARAM_FAST_ACCUM) || fp8_product(p)) return MB_OK;
  if (p->flags & MB_PARAM_QUANTIZE_INPUTS)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: fast_accum applies to fp8 GEMMs only: "
                    "quantize-inputs takes it with dtype_q f8e4m3 or f8e5m2, "
                    "not %s",
                    mb_dtype_name(p->dtype_q));
  return mb__fail(MB_ERR_INVALID_ARG,
                  "gemm: fast_accum applies to fp8 GEMMs only: A and B "
                  "f8e4m3 or f8e5m2, or quantize-inputs to fp8 (got %s x %s)",
                  mb_dtype_name(p->dtype), mb_dtype_name(p->dtype_b));
}

/* Explicit dequantization (gemm_fp8_rowwise_w_dequantize): the unscaled
 * product is written in f32 and a pass of its own multiplies row i by A's
 * scale and column j by B's, so each scale must hold along all of K, and
 * be an f32 one (e8m0 grids are MX's blocks of 32 along K). */
static mb_status_t check_explicit_dequant(const mb_op_params_t *p) {
  if (!(p->flags & MB_PARAM_EXPLICIT_DEQUANT)) return MB_OK;
  if (!(p->flags & MB_PARAM_QUANTIZE_INPUTS))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: explicit_dequant goes with quantize-inputs (it "
                    "applies the scales the op computes)");
  const int64_t k = p->shape[GK];
  if (p->scale_a.block[1] != k || p->scale_b.block[0] != k)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: explicit_dequant scales rows of the product by A's "
                    "scales and columns by B's, so they must not change "
                    "along K: A tensor or row, B tensor or col (got %s, %s)",
                    mb_scale_mode_name(p->scale_a.mode),
                    mb_scale_mode_name(p->scale_b.mode));
  if (p->dtype_scale == MB_DTYPE_E8M0 || nvfp4(p))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: explicit_dequant takes f32 scales, not %s",
                    mb_dtype_name(p->dtype_scale));
  return MB_OK;
}

static mb_status_t gemm_resolve(mb_op_params_t *p) {
  mb__default_dtypes(p, MB_DTYPE_F32);
  if (!isfinite(p->alpha) || !isfinite(p->beta))
    return mb__fail(MB_ERR_INVALID_ARG, "gemm: alpha and beta must be finite");
  mb_status_t st;
  if ((st = mb__check_dtype(&mb__op_gemm, "dtype", p->dtype, k_inputs,
                            COUNT(k_inputs))) != MB_OK)
    return st;
  if (p->dtype_q != MB_DTYPE_NONE && !(p->flags & MB_PARAM_QUANTIZE_INPUTS))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: dtype_q (%s) only goes with quantize-inputs",
                    mb_dtype_name(p->dtype_q));
  if ((st = check_trans(p)) != MB_OK || (st = check_static(p)) != MB_OK)
    return st;
  if (p->flags & MB_PARAM_QUANTIZE_INPUTS)
    st = resolve_quantize_inputs(p);
  else if (in_list(p->dtype, k_fp8, COUNT(k_fp8)) ||
           p->dtype == MB_DTYPE_F4E2M1)
    st = resolve_fp8(p);
  else if (p->dtype == MB_DTYPE_I8)
    st = resolve_int8(p);
  else if (p->dtype_b == MB_DTYPE_I4)
    st = resolve_int4_weights(p);
  else
    st = resolve_float(p);
  if (st != MB_OK) return st;
  /* Only i8 x i8 without scales has an exact integer result. */
  int exact_int =
      p->dtype == MB_DTYPE_I8 && !(p->flags & MB_PARAM_QUANTIZE_INPUTS);
  if (!in_list(p->dtype_out, k_float, COUNT(k_float)) &&
      !(exact_int && p->dtype_out == MB_DTYPE_I32))
    return mb__check_dtype(&mb__op_gemm, "dtype_out", p->dtype_out, k_float,
                           COUNT(k_float));
  if (p->dtype_acc != MB_DTYPE_F32 && p->dtype_acc != MB_DTYPE_I32)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: dtype_acc \"%s\" is not supported; valid: f32 (i32 "
                    "for i8 inputs)",
                    mb_dtype_name(p->dtype_acc));
  if ((p->flags & MB_PARAM_TF32) &&
      (p->dtype != MB_DTYPE_F32 || p->dtype_b != MB_DTYPE_F32 ||
       (p->flags & MB_PARAM_QUANTIZE_INPUTS)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: tf32 applies to f32 x f32 only (got %s x %s)",
                    mb_dtype_name(p->dtype), mb_dtype_name(p->dtype_b));
  if ((st = check_fast_accum(p)) != MB_OK) return st;
  if ((st = check_scaling(p)) != MB_OK ||
      (st = check_explicit_dequant(p)) != MB_OK)
    return st;
  /* e8m0 scales are MX's: fp8 or fp4 elements on both sides, both sides
   * scaled. quantize-inputs defaulted its scalings above; the element
   * dtype A stands for B's too (mx_product checks both). */
  const int both = p->scale_a.mode != MB_SCALE_NONE &&
                   p->scale_b.mode != MB_SCALE_NONE && mx_product(p);
  /* NVFP4 (f8e4m3 block scales) is fp4 x fp4 with both sides scaled by
   * blocks of their own and the one per-tensor scale S for both: each
   * element decodes as e2m1 x fl32(s_b S), as dequantize's. */
  if (nvfp4(p) && !both)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "gemm: NVFP4 (f8e4m3 block scales) scales both f4e2m1 "
                    "sides (e.g. scale_a block:1x16, scale_b block:16x1)");
  return mb__check_scale_dtype("gemm", p, qa_dtype(p), both);
}

/* The scales of a side that the kernel reads: none when absent or computed
 * inside the op. */
static int has_scale_input(const mb_op_params_t *p, const mb_scaling_t *s) {
  return s->mode != MB_SCALE_NONE && !(p->flags & MB_PARAM_QUANTIZE_INPUTS);
}

static void gemm_operand(const mb_op_params_t *p, uint32_t role,
                         mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  const int64_t m = p->shape[GM], k = p->shape[GK], n = p->shape[GN];
  *ndim = 2;
  switch (role) {
    case ROLE_A: /* as stored: K x M with trans_a */
      *dtype = p->dtype;
      shape[0] = trans_a(p) ? k : m, shape[1] = trans_a(p) ? m : k;
      return;
    case ROLE_B: /* as stored: N x K with trans_b */
      *dtype = p->dtype_b;
      shape[0] = trans_b(p) ? n : k, shape[1] = trans_b(p) ? k : n;
      return;
    case ROLE_SA:
    case ROLE_SB: {
      const mb_scaling_t *s = role == ROLE_SA ? &p->scale_a : &p->scale_b;
      /* e8m0 (MX) or e4m3 (NVFP4) bytes, else f32 */
      *dtype = p->dtype_scale == MB_DTYPE_E8M0 || nvfp4(p) ? p->dtype_scale
                                                           : MB_DTYPE_F32;
      shape[0] = shape[1] = 1;
      if (has_scale_input(p, s))
        mb__scaling_grid(s, role == ROLE_SA ? m : k, role == ROLE_SA ? k : n,
                         &shape[0], &shape[1]);
      return;
    }
    default:
      *dtype = p->dtype_out, shape[0] = m, shape[1] = n;
  }
}

static double gemm_flop(const mb_op_params_t *p) {
  return 2.0 * (double)p->shape[GM] * (double)p->shape[GN] *
         (double)p->shape[GK];
}

static int gemm_reads_output(const mb_op_params_t *p) {
  return p->beta != 0;
}

static double scale_bytes(const mb_op_params_t *p, uint32_t role) {
  if (!has_scale_input(p, role == ROLE_SA ? &p->scale_a : &p->scale_b))
    return 0;
  mb_dtype_t dt;
  uint32_t nd;
  int64_t sh[MB_MAX_DIMS];
  gemm_operand(p, role, &dt, &nd, sh);
  return mb__bytes(dt, (double)sh[0] * (double)sh[1]);
}

static double gemm_bytes(const mb_op_params_t *p) {
  double m = (double)p->shape[GM], k = (double)p->shape[GK],
         n = (double)p->shape[GN];
  double d = mb__bytes(p->dtype_out, m * n);
  /* Explicit dequantization writes the f32 product and reads it back. */
  const double product =
      (p->flags & MB_PARAM_EXPLICIT_DEQUANT) ? 2.0 * 4.0 * m * n : 0.0;
  /* NVFP4's per-tensor scale: one f32 read besides the block grids. */
  const double tensor_scale = nvfp4(p) ? 4.0 : 0.0;
  return mb__bytes(p->dtype, m * k) + mb__bytes(p->dtype_b, k * n) +
         scale_bytes(p, ROLE_SA) + scale_bytes(p, ROLE_SB) + tensor_scale + d +
         (gemm_reads_output(p) ? d : 0.0) + product;
}

static void gemm_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  if (role == ROLE_SA || role == ROLE_SB) {
    f->kind = MB_FILL_CONSTANT; /* real scales come from post_fill */
    f->a = 1.0;
  }
  (void)p;
}

/* A quantized operand with scales is made the way real ones are: a normal
 * f32 matrix quantized with the operand's scaling. */
static mb_status_t quantize_operand(const mb_op_params_t *p, uint32_t role,
                                    void *q, void *scales, uint64_t seed) {
  const mb_scaling_t *s = role == ROLE_A ? &p->scale_a : &p->scale_b;
  const int64_t rows = role == ROLE_A ? p->shape[GM] : p->shape[GK];
  const int64_t cols = role == ROLE_A ? p->shape[GK] : p->shape[GN];
  int64_t gr, gc;
  mb__scaling_grid(s, rows, cols, &gr, &gc);
  float *x = malloc((size_t)(rows * cols) * sizeof *x);
  float *grid = malloc((size_t)(gr * gc) * sizeof *grid);
  if (!x || !grid) {
    free(x);
    free(grid);
    return mb__fail(MB_ERR_NO_MEMORY, "gemm: out of memory making inputs");
  }
  mb_fill_t f = MB_FILL_INIT;
  f.seed = mb__rng_u64(seed, role);
  mb_fill_host(x, MB_DTYPE_F32, (size_t)(rows * cols), &f);
  if (nvfp4(p)) /* the e4m3 block scales for the static S, as bytes */
    mb__nvfp4_quantize_ref(x, rows, cols, s, (float)p->scale, q, scales);
  else
    mb__quantize_ref_sd(x, rows, cols, s,
                        role == ROLE_A ? p->dtype : p->dtype_b, p->dtype_scale,
                        0.0, q, grid);
  /* e8m0 holds every MX scale exactly. */
  if (!nvfp4(p))
    mb_convert(scales,
               p->dtype_scale == MB_DTYPE_E8M0 ? MB_DTYPE_E8M0 : MB_DTYPE_F32,
               grid, MB_DTYPE_F32, (size_t)(gr * gc), 0);
  free(x);
  free(grid);
  return MB_OK;
}

static mb_status_t gemm_post_fill(const mb_op_params_t *p, void *const *host,
                                  uint64_t seed) {
  mb_status_t st = MB_OK;
  if (has_scale_input(p, &p->scale_a) && is_quantized(p->dtype))
    st = quantize_operand(p, ROLE_A, host[ROLE_A], host[ROLE_SA], seed);
  if (st == MB_OK && has_scale_input(p, &p->scale_b) &&
      is_quantized(p->dtype_b))
    st = quantize_operand(p, ROLE_B, host[ROLE_B], host[ROLE_SB], seed);
  return st;
}

/* Output: one rounding, 0.5 ulp (exact for i32). Accumulating K products in
 * f32 (blocked or pairwise) errs by about sqrt(K) u relative to sum |a b|;
 * applying scales and alpha/beta costs a few more roundings in f32. Integer
 * accumulation is exact; only its f32 rescale rounds. A dropped or wrong
 * term costs ~1/K of the scale, a missing scale or a transpose far more. */
/* Fast accumulation keeps the whole K-long sum in the fp8 tensor cores'
 * accumulator instead of promoting it to f32 registers every few MMAs. On
 * H100 that accumulator keeps 13 fraction bits and truncates (Khattak and
 * Mikaitis, "Accurate Models of NVIDIA Tensor Cores", 2025; DeepSeek-V3's
 * report: "around 14 bits"), so each of the K/32 MMA steps can lose 2^-13
 * of the running sum, which for the check's zero-mean inputs walks like
 * sqrt(k): summed, about sqrt(K) x 2^-18 of sum |a b| (a bit-level model
 * of that truncation gives this; DeepSeek-V3's ~2% relative error at K =
 * 4096 is sqrt(K) x 2^-17). We allow sqrt(K) x 2^-14, 8 to 16 times that,
 * since no GPU calibrated it here: 512 times the f32 term above, at K =
 * 4096 0.4% of sum |a b| or a fifth of a typical |D|. A missing scale, a
 * wrong sign or a transposed operand still fail; a single dropped term at
 * large K no longer does. */
/* Without the flag the accumulator is promoted to f32 every few MMAs, but
 * between promotions it keeps its 13 bits: a window of w MMAs errs by up
 * to w x 2^-13 of its sum |a b|. With w = 4 (128 products, DeepSeek-V3's
 * promotion interval) that is 2^-11 of a window's sum |a b|; the K/128
 * windows' errors add like a random walk, so of the whole sum |a b| it is
 * 2^-11 sqrt(128 / K) (2^-11 itself while K <= 128). Measured on an H200
 * (docs/results/h200-2026-11-25.md): e4m3 at K = 128 erred by 1.5e-4 of
 * sum |a b| (this allows 4.9e-4), at K = 4096 by about 1e-5 (this allows
 * 8.6e-5). A missing scale, a wrong sign or a transposed operand still
 * fail, and so does fast accumulation's error where no flag asked for it. */
static double fp8_window_rel(const mb_op_params_t *p) {
  if (!fp8_product(p)) return 0.0;
  const double k = (double)p->shape[GK];
  return k <= 128.0 ? 0x1p-11 : 0x1p-11 * sqrt(128.0 / k);
}

static double fp8_accum_rel(const mb_op_params_t *p) {
  const double fast = (p->flags & MB_PARAM_FAST_ACCUM)
                          ? sqrt((double)p->shape[GK]) * 0x1p-14
                          : 0.0;
  const double window = fp8_window_rel(p);
  return fast > window ? fast : window;
}

static mb__tolerance_t gemm_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)out;
  const double u32 = mb_dtype_unit_roundoff(MB_DTYPE_F32);
  if (p->dtype_out == MB_DTYPE_I32) return (mb__tolerance_t){0.0, 0.0};
  double k = (double)p->shape[GK];
  double acc = p->dtype_acc == MB_DTYPE_I32 ? 0.0 : 2.0 * sqrt(k) * u32;
  /* tf32 keeps 10 significand bits of each input; hardware may truncate
   * rather than round, so each product errs by up to 2 x 2^-10 of |a b|. */
  double tf32 = (p->flags & MB_PARAM_TF32) ? 2.0 * 0x1p-10 : 0.0;
  return (mb__tolerance_t){0.5, acc + 8.0 * u32 + tf32 + fp8_accum_rel(p)};
}

static const char *const k_dims[] = {"M", "K", "N"};
static const char *const k_operands[] = {"A", "B", "scale_a", "scale_b", "D"};

const mb_op_t mb__op_gemm = {
    .name = "gemm",
    .summary = "D = alpha * (A sa).(B sb) + beta * D (A: MxK, B: KxN)",
    .shape_syntax = "MxKxN",
    .dim_names = k_dims,
    .param_mask = MB__P_ALPHA_BETA | MB__P_SCALES | MB__P_QUANT | MB__P_TF32 |
                  MB__P_TRANS_AB | MB__P_FAST_ACCUM | MB__P_STATIC,
    .params_doc =
        "alpha, beta; scale_a/scale_b: none|tensor|row|col|block:BMxBN|"
        "group:G; quantize_inputs with dtype_q (fp8, i8, f4e2m1), static "
        "scale "
        "(quantize_inputs with a given scale, no absmax); out: "
        "f32|bf16|f16|i32; tf32 (f32 inputs); fast_accum (fp8 inputs or "
        "quantize_inputs to fp8); trans_a (A stored KxM), trans_b (B stored "
        "NxK): unscaled float inputs; scale_dtype f32|e8m0 (MX power-of-two "
        "scales, fp8 or f4e2m1 elements: gemm_mxfp8_b32, MXFP4)|f8e4m3 "
        "(NVFP4: f4e2m1, e.g. block:1x16 / 16x1, the static scale the "
        "per-tensor scale of A and B)",
    .rank = 3,
    .num_inputs = 4,
    .num_outputs = 1,
    .operand_names = k_operands,
    .dtypes = k_inputs,
    .num_dtypes = COUNT(k_inputs),
    .resolve = gemm_resolve,
    .operand = gemm_operand,
    .flop = gemm_flop,
    .bytes = gemm_bytes,
    .reads_output = gemm_reads_output,
    .fill = gemm_fill,
    .post_fill = gemm_post_fill,
    .ref_cost = mb__gemm_ref_cost,
    .ref_prepare = mb__gemm_ref_prepare,
    .ref_element = mb__gemm_ref_element,
    .ref_release = mb__gemm_ref_release,
    .tolerance = gemm_tolerance,
};
