/* quantize: Q = RNE_sat(fl32(X / s)), one f32 scale s per block of X (or of
 * X^T with MB_PARAM_TRANSPOSE: the JAX suite's transpose_quantization);
 * dynamic s = fl32(absmax / qmax) with an all-zero block giving s = 1, or a
 * static s. Outputs Q and the scale grid S.
 * dequantize: X = round(fl32(Q s)).
 * With params.dtype_scale e8m0 the scales are the OCP MX powers of two
 * (quant.c's mb__mx_scale), stored one byte each (MXFP8 with 1x32 blocks
 * and fp8 elements, MXFP4 with f4e2m1 elements, packed two per byte).
 * FLOP: quantize ~3 per element (|x|, max, divide-and-round), dequantize 1;
 * bytes count each tensor once: |X| + |Q| + |S| (the absmax pass re-reads X
 * from cache in a good kernel; a scale is 4 bytes, 1 in e8m0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_internal.h"
#include "ops/op_internal.h"
#include "rng.h"

static const mb_dtype_t k_hp[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
static const mb_dtype_t k_q[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2, MB_DTYPE_I8,
                                 MB_DTYPE_I4, MB_DTYPE_F4E2M1};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int transposed(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_TRANSPOSE) != 0;
}

/* Rows x cols of the tensor that is quantized (X, or X^T). */
static void q_dims(const mb_op_params_t *p, int64_t *rows, int64_t *cols) {
  *rows = transposed(p) ? p->shape[1] : p->shape[0];
  *cols = transposed(p) ? p->shape[0] : p->shape[1];
}

/* The dtype the scale grid S is stored in: f32, e8m0 (MX) or f8e4m3
 * (NVFP4's block scales). */
static mb_dtype_t grid_dtype(const mb_op_params_t *p) {
  return p->dtype_scale == MB_DTYPE_NONE ? MB_DTYPE_F32 : p->dtype_scale;
}

static int nvfp4(const mb_op_params_t *p) {
  return p->dtype_scale == MB_DTYPE_F8E4M3;
}

static mb_status_t check_static(const mb_op_params_t *p, const char *op) {
  if ((p->flags & MB_PARAM_STATIC) && !(p->scale > 0 && isfinite(p->scale)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: a static scale must be positive and finite (got %g)",
                    op, p->scale);
  return MB_OK;
}

static mb_status_t quantize_resolve(mb_op_params_t *p) {
  if (p->dtype_out == MB_DTYPE_NONE) p->dtype_out = MB_DTYPE_F8E4M3;
  if (p->dtype == MB_DTYPE_NONE) p->dtype = MB_DTYPE_BF16;
  mb__default_dtypes(p, MB_DTYPE_BF16);
  if (p->scale_a.mode == MB_SCALE_NONE) p->scale_a.mode = MB_SCALE_ROW;
  mb_status_t st;
  if ((st = mb__check_dtype(&mb__op_quantize, "dtype", p->dtype, k_hp,
                            COUNT(k_hp))) != MB_OK ||
      (st = mb__check_dtype(&mb__op_quantize, "dtype_out", p->dtype_out, k_q,
                            COUNT(k_q))) != MB_OK ||
      (st = check_static(p, "quantize")) != MB_OK ||
      (st = mb__check_scale_dtype("quantize", p, p->dtype_out, 1)) != MB_OK)
    return st;
  int64_t rows, cols;
  q_dims(p, &rows, &cols);
  return mb__scaling_resolve("quantize", transposed(p) ? "X^T" : "X",
                             &p->scale_a, rows, cols, 0);
}

static void quantize_operand(const mb_op_params_t *p, uint32_t role,
                             mb_dtype_t *dtype, uint32_t *ndim,
                             int64_t *shape) {
  int64_t rows, cols;
  q_dims(p, &rows, &cols);
  *ndim = 2;
  if (role == 0) { /* X */
    *dtype = p->dtype, shape[0] = p->shape[0], shape[1] = p->shape[1];
  } else if (role == 1) { /* Q */
    *dtype = p->dtype_out, shape[0] = rows, shape[1] = cols;
  } else { /* S */
    *dtype = grid_dtype(p);
    mb__scaling_grid(&p->scale_a, rows, cols, &shape[0], &shape[1]);
  }
}

static double numel(const mb_op_params_t *p) {
  return (double)p->shape[0] * (double)p->shape[1];
}

static double grid_bytes(const mb_op_params_t *p) {
  int64_t rows, cols, gr, gc;
  q_dims(p, &rows, &cols);
  mb__scaling_grid(&p->scale_a, rows, cols, &gr, &gc);
  return mb__bytes(grid_dtype(p), (double)gr * (double)gc);
}

static double quantize_flop(const mb_op_params_t *p) {
  return 3.0 * numel(p);
}

static double quantize_bytes(const mb_op_params_t *p) {
  return mb__bytes(p->dtype, numel(p)) + mb__bytes(p->dtype_out, numel(p)) +
         grid_bytes(p);
}

static int never_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

static double ref_cost_one(const mb_op_params_t *p) {
  (void)p;
  return 1.0;
}

/* Q and its scale grid, computed exactly as the semantics say
 * (mb__quantize_ref): Q's reference is the RNE-saturated value itself, not
 * the unrounded quotient, so a tie rounded the wrong way (half away from
 * zero) is an error a bound around the quotient could not see. */
typedef struct quant_ref {
  void *q; /* rows x cols of dtype_out (already transposed) */
  float *grid;
  mb_dtype_t qdt;
} quant_ref_t;

static void quant_ref_release(void *state) {
  quant_ref_t *r = state;
  if (!r) return;
  free(r->q);
  free(r->grid);
  free(r);
}

static mb_status_t quantize_ref_prepare(const mb_op_params_t *p,
                                        const void *const *host, void **state) {
  quant_ref_t *r = calloc(1, sizeof *r);
  if (!r)
    return mb__fail(MB_ERR_NO_MEMORY, "quantize reference: out of memory");
  int64_t rows, cols, gr, gc;
  q_dims(p, &rows, &cols);
  mb__scaling_grid(&p->scale_a, rows, cols, &gr, &gc);
  size_t n = (size_t)(rows * cols);
  float *x = malloc(n * sizeof *x), *xt = malloc(n * sizeof *xt);
  r->qdt = p->dtype_out;
  r->grid = malloc((size_t)(gr * gc) * sizeof *r->grid);
  r->q = malloc(mb_dtype_bytes(p->dtype_out, n));
  if (!x || !xt || !r->grid || !r->q) {
    free(x);
    free(xt);
    quant_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY, "quantize reference: out of memory");
  }
  mb_convert(x, MB_DTYPE_F32, host[0], p->dtype, n, 0);
  if (transposed(p))
    for (int64_t i = 0; i < p->shape[0]; i++)
      for (int64_t j = 0; j < p->shape[1]; j++)
        xt[j * p->shape[0] + i] = x[i * p->shape[1] + j];
  else
    memcpy(xt, x, n * sizeof *x);
  free(x);
  uint8_t *g = nvfp4(p) ? malloc((size_t)(gr * gc)) : NULL;
  if (g) { /* NVFP4: the static scale is the per-tensor S */
    mb__nvfp4_quantize_ref(xt, rows, cols, &p->scale_a, (float)p->scale, r->q,
                           g);
    mb_convert(r->grid, MB_DTYPE_F32, g, MB_DTYPE_F8E4M3, (size_t)(gr * gc), 0);
    free(g);
  } else {
    mb__quantize_ref_sd(
        xt, rows, cols, &p->scale_a, p->dtype_out, p->dtype_scale,
        (p->flags & MB_PARAM_STATIC) ? p->scale : 0.0, r->q, r->grid);
  }
  free(xt);
  *state = r;
  return MB_OK;
}

static void quantize_ref_element(const void *state, uint32_t out, size_t idx,
                                 double *value, double *scale) {
  const quant_ref_t *r = state;
  *value = out == 1 ? (double)r->grid[idx] : mb__load(r->q, r->qdt, idx);
  *scale = fabs(*value);
}

/* Byte-exact, both outputs: the semantics fix every operation (the f32
 * absmax, the f32 division absmax / qmax, the f32 division x / s, RNE with
 * saturation), so one right answer exists and every backend's kernels
 * reproduce it bit for bit. Any allowance would pass a wrong kernel: half an
 * ulp of Q passes rounding ties half away from zero, and the hair more that
 * once excused a multiplication by 1/s passes whatever that changes. */
static mb__tolerance_t quantize_tolerance(const mb_op_params_t *p,
                                          uint32_t out) {
  (void)p;
  (void)out;
  return (mb__tolerance_t){0.0, 0.0};
}

static const char *const k_q_operands[] = {"X", "Q", "scales"};

const mb_op_t mb__op_quantize = {
    .name = "quantize",
    .summary =
        "Q = round_sat(X / s), s = absmax/qmax per block (or static); "
        "outputs Q and the scales",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .param_mask = MB__P_SCALE_A | MB__P_TRANSPOSE | MB__P_STATIC,
    .params_doc =
        "out: f8e4m3|f8e5m2|i8|i4|f4e2m1; granularity (scale_a): "
        "tensor|row|col|block:BMxBN|group:G (row); transpose; "
        "static scale; scale_dtype f32|e8m0 (MX: fp8 or fp4 out, e.g. "
        "block:1x32)|f8e4m3 (NVFP4: f4e2m1 out, e.g. block:1x16, the static "
        "scale is the per-tensor scale)",
    .rank = 2,
    .num_inputs = 1,
    .num_outputs = 2,
    .operand_names = k_q_operands,
    .dtypes = k_hp,
    .num_dtypes = COUNT(k_hp),
    .resolve = quantize_resolve,
    .operand = quantize_operand,
    .flop = quantize_flop,
    .bytes = quantize_bytes,
    .reads_output = never_reads_output,
    .ref_cost = ref_cost_one,
    .ref_prepare = quantize_ref_prepare,
    .ref_element = quantize_ref_element,
    .ref_release = quant_ref_release,
    .tolerance = quantize_tolerance,
};

/* ---- dequantize ------------------------------------------------------------
 */

static mb_status_t dequantize_resolve(mb_op_params_t *p) {
  if (p->dtype == MB_DTYPE_NONE) p->dtype = MB_DTYPE_F8E4M3;
  if (p->dtype_out == MB_DTYPE_NONE) p->dtype_out = MB_DTYPE_BF16;
  mb__default_dtypes(p, MB_DTYPE_F8E4M3);
  if (p->scale_a.mode == MB_SCALE_NONE) p->scale_a.mode = MB_SCALE_ROW;
  mb_status_t st;
  /* NVFP4's per-tensor scale is the one static scale dequantize reads. */
  if (transposed(p) || ((p->flags & MB_PARAM_STATIC) && !nvfp4(p)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "dequantize: transpose and static scales belong to "
                    "quantize (but NVFP4's per-tensor scale)");
  if ((st = mb__check_dtype(&mb__op_dequantize, "dtype", p->dtype, k_q,
                            COUNT(k_q))) != MB_OK ||
      (st = mb__check_dtype(&mb__op_dequantize, "dtype_out", p->dtype_out, k_hp,
                            COUNT(k_hp))) != MB_OK ||
      (st = mb__check_scale_dtype("dequantize", p, p->dtype, 1)) != MB_OK)
    return st;
  return mb__scaling_resolve("dequantize", "Q", &p->scale_a, p->shape[0],
                             p->shape[1], 0);
}

static void dequantize_operand(const mb_op_params_t *p, uint32_t role,
                               mb_dtype_t *dtype, uint32_t *ndim,
                               int64_t *shape) {
  *ndim = 2;
  if (role == 1) {
    *dtype = grid_dtype(p);
    mb__scaling_grid(&p->scale_a, p->shape[0], p->shape[1], &shape[0],
                     &shape[1]);
    return;
  }
  *dtype = role == 0 ? p->dtype : p->dtype_out;
  shape[0] = p->shape[0];
  shape[1] = p->shape[1];
}

static double dequantize_flop(const mb_op_params_t *p) {
  return numel(p);
}

static double dequantize_bytes(const mb_op_params_t *p) {
  return mb__bytes(p->dtype, numel(p)) + mb__bytes(p->dtype_out, numel(p)) +
         grid_bytes(p);
}

/* Q and its scales are what quantize makes of a normal matrix. */
static mb_status_t dequantize_post_fill(const mb_op_params_t *p,
                                        void *const *host, uint64_t seed) {
  size_t n = (size_t)numel(p);
  int64_t gr, gc;
  mb__scaling_grid(&p->scale_a, p->shape[0], p->shape[1], &gr, &gc);
  float *x = malloc(n * sizeof *x);
  float *grid = malloc((size_t)(gr * gc) * sizeof *grid);
  if (!x || !grid) {
    free(x);
    free(grid);
    return mb__fail(MB_ERR_NO_MEMORY, "dequantize: out of memory");
  }
  mb_fill_t f = MB_FILL_INIT;
  f.seed = seed;
  mb_fill_host(x, MB_DTYPE_F32, n, &f);
  if (nvfp4(p)) {
    mb__nvfp4_quantize_ref(x, p->shape[0], p->shape[1], &p->scale_a,
                           (float)p->scale, host[0], host[1]);
  } else {
    mb__quantize_ref_sd(x, p->shape[0], p->shape[1], &p->scale_a, p->dtype,
                        p->dtype_scale, 0.0, host[0], grid);
    /* e8m0 holds every MX scale exactly. */
    mb_convert(host[1], grid_dtype(p), grid, MB_DTYPE_F32, (size_t)(gr * gc),
               0);
  }
  free(x);
  free(grid);
  return MB_OK;
}

typedef struct dequant_ref {
  const void *q;
  float *grid; /* the scales as f32 (e8m0 decoded exactly) */
  mb_dtype_t dt;
  mb_scaling_t s;
  int64_t cols, grid_cols;
} dequant_ref_t;

static mb_status_t dequantize_ref_prepare(const mb_op_params_t *p,
                                          const void *const *host,
                                          void **state) {
  dequant_ref_t *r = malloc(sizeof *r);
  int64_t gr, gc;
  mb__scaling_grid(&p->scale_a, p->shape[0], p->shape[1], &gr, &gc);
  float *grid = malloc((size_t)(gr * gc) * sizeof *grid);
  if (!r || !grid) {
    free(r);
    free(grid);
    return mb__fail(MB_ERR_NO_MEMORY, "dequantize reference: out of memory");
  }
  mb_convert(grid, MB_DTYPE_F32, host[1], grid_dtype(p), (size_t)(gr * gc), 0);
  /* NVFP4: a block's scale is fl32(s_b S), one f32 rounding. */
  for (int64_t i = 0; nvfp4(p) && i < gr * gc; i++) grid[i] *= (float)p->scale;
  r->q = host[0];
  r->grid = grid;
  r->dt = p->dtype;
  r->s = p->scale_a;
  r->cols = p->shape[1];
  r->grid_cols = gc;
  *state = r;
  return MB_OK;
}

static void dequantize_ref_element(const void *state, uint32_t out, size_t idx,
                                   double *value, double *scale) {
  const dequant_ref_t *r = state;
  int64_t i = (int64_t)idx / r->cols, j = (int64_t)idx % r->cols;
  (void)out;
  *value = mb__load(r->q, r->dt, idx) *
           (double)mb__scale_at(r->grid, &r->s, r->grid_cols, i, j);
  *scale = fabs(*value);
}

static void dequant_ref_release(void *state) {
  dequant_ref_t *r = state;
  if (r) free(r->grid);
  free(r);
}

/* fl32(q s) rounds once in f32, then once to the output. */
static mb__tolerance_t dequantize_tolerance(const mb_op_params_t *p,
                                            uint32_t out) {
  (void)p;
  (void)out;
  return (mb__tolerance_t){0.5, mb_dtype_unit_roundoff(MB_DTYPE_F32)};
}

static const char *const k_dq_operands[] = {"Q", "scales", "X"};

const mb_op_t mb__op_dequantize = {
    .name = "dequantize",
    .summary = "X = Q s, one scale per block (the inverse of quantize)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .param_mask = MB__P_SCALE_A | MB__P_STATIC,
    .params_doc =
        "dtype (Q): f8e4m3|f8e5m2|i8|i4|f4e2m1; out: f32|bf16|f16; "
        "granularity (scale_a) and scale_dtype as quantize; static scale: "
        "NVFP4's per-tensor scale only",
    .rank = 2,
    .num_inputs = 2,
    .num_outputs = 1,
    .operand_names = k_dq_operands,
    .dtypes = k_q,
    .num_dtypes = COUNT(k_q),
    .resolve = dequantize_resolve,
    .operand = dequantize_operand,
    .flop = dequantize_flop,
    .bytes = dequantize_bytes,
    .reads_output = never_reads_output,
    .post_fill = dequantize_post_fill,
    .ref_cost = ref_cost_one,
    .ref_prepare = dequantize_ref_prepare,
    .ref_element = dequantize_ref_element,
    .ref_release = dequant_ref_release,
    .tolerance = dequantize_tolerance,
};
