/* The quantization semantics every op and kernel shares. The operations are
 * spelled out in f32 (absmax, the scale as absmax / qmax, the division x / s)
 * so an exact reference exists: round-to-nearest-even with saturation of the
 * f32 quotient. With e8m0 scales (params.dtype_scale) the scale is the OCP
 * MX power of two instead (mb__mx_scale); the rest is the same. */
#include <math.h>

#include "dtype_internal.h"
#include "ops/op_internal.h"

float mb__quant_scale(float absmax, mb_dtype_t qdtype) {
  /* An all-zero (or non-finite) block would give 0 or NaN: 1 keeps q = 0
   * and the dequantized values exact. */
  if (!(absmax > 0) || !isfinite(absmax)) return 1.0f;
  return absmax / (float)mb_dtype_max(qdtype);
}

int mb__mx_emax(mb_dtype_t qdtype) {
  /* emax_elem: the exponent of the element format's largest normal
   * (e4m3 448 = 1.75 2^8, e5m2 57344 = 1.75 2^15, e2m1 6 = 1.5 2^2); 0 for
   * a format that has no MX scaling here. */
  static const struct {
    mb_dtype_t dt;
    int emax;
  } k_emax[] = {
      {MB_DTYPE_F8E4M3, 8}, {MB_DTYPE_F8E5M2, 15}, {MB_DTYPE_F4E2M1, 2}};
  for (size_t i = 0; i < sizeof k_emax / sizeof k_emax[0]; ++i)
    if (k_emax[i].dt == qdtype) return k_emax[i].emax;
  return 0;
}

/* OCP MX v1.0, section 6.3: X = 2^(floor(log2(amax)) - emax_elem), in
 * e8m0's range [2^-127, 2^127]. Written with frexp, apart from the kernels'
 * bit-field form (mb_cvt.h's mb__cvt_mx_scale_e8m0), so the two check each
 * other. floor(log2(a)) is exact: frexp gives a = f 2^e with f in [0.5, 1),
 * so floor(log2(a)) = e - 1 (f32 subnormals included). An all-zero block
 * gets the smallest scale, 2^-127 (q = 0 either way, and never NaN); a
 * block holding NaN or infinity gets NaN, as no power of two scales it. */
float mb__mx_scale(float absmax, mb_dtype_t qdtype) {
  if (isnan(absmax) || isinf(absmax)) return NAN;
  int e = -127 - 1;
  if (absmax > 0) frexpf(absmax, &e);
  int x = e - 1 - mb__mx_emax(qdtype);
  x = x < -127 ? -127 : x > 127 ? 127 : x;
  return ldexpf(1.0f, x);
}

mb_status_t mb__check_scale_dtype(const char *op, mb_op_params_t *p,
                                  mb_dtype_t qdtype, int scaled) {
  if (p->dtype_scale == MB_DTYPE_F32) p->dtype_scale = MB_DTYPE_NONE;
  if (p->dtype_scale == MB_DTYPE_NONE) return MB_OK;
  if (p->dtype_scale == MB_DTYPE_F8E4M3) return mb__check_nvfp4(op, p, qdtype);
  if (p->dtype_scale != MB_DTYPE_E8M0)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: scale dtype \"%s\" is not supported; valid: f32 (the "
                    "default), e8m0 (MX power-of-two scales), f8e4m3 (NVFP4)",
                    op, mb_dtype_name(p->dtype_scale));
  if (!mb__mx_emax(qdtype))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: e8m0 scales go with f8e4m3, f8e5m2 (MXFP8) or "
                    "f4e2m1 (MXFP4) elements, not %s",
                    op, mb_dtype_name(qdtype));
  if (!scaled)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: e8m0 scales need a scaling on every quantized side "
                    "(MXFP8: block:1x32 for A, block:32x1 for B)",
                    op);
  /* A static scale is stored in every block: it must be an e8m0 value. */
  int e;
  if ((p->flags & MB_PARAM_STATIC) &&
      (frexp(p->scale, &e) != 0.5 || e - 1 < -127 || e - 1 > 127))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: with e8m0 scales the static scale must be a power of "
                    "two in [2^-127, 2^127] (got %g)",
                    op, p->scale);
  return MB_OK;
}

/* The block's absmax in f32. fmaxf drops NaN, which the f32 rule wants (a
 * NaN element does not poison the block's scale); the MX rule keeps it, so
 * the block's scale says NaN. */
static float block_amax(const float *x, int64_t cols, int64_t r0, int64_t r1,
                        int64_t c0, int64_t c1, int keep_nan) {
  float amax = 0.0f;
  for (int64_t i = r0; i < r1; i++)
    for (int64_t j = c0; j < c1; j++) {
      const float a = fabsf(x[i * cols + j]);
      amax = keep_nan && isnan(a) ? a : fmaxf(amax, a);
      if (keep_nan && isnan(amax)) return amax;
    }
  return amax;
}

void mb__quantize_ref(const float *x, int64_t rows, int64_t cols,
                      const mb_scaling_t *s, mb_dtype_t qdtype,
                      double static_scale, void *q, float *grid) {
  mb__quantize_ref_sd(x, rows, cols, s, qdtype, MB_DTYPE_NONE, static_scale, q,
                      grid);
}

void mb__quantize_ref_sd(const float *x, int64_t rows, int64_t cols,
                         const mb_scaling_t *s, mb_dtype_t qdtype,
                         mb_dtype_t sdtype, double static_scale, void *q,
                         float *grid) {
  const int mx = sdtype == MB_DTYPE_E8M0;
  int64_t gr, gc;
  mb__scaling_grid(s, rows, cols, &gr, &gc);
  const int64_t br = rows / gr, bc = cols / gc;
  for (int64_t bi = 0; bi < gr; bi++)
    for (int64_t bj = 0; bj < gc; bj++) {
      float scale = (float)static_scale;
      if (!(static_scale > 0)) {
        const float amax = block_amax(x, cols, bi * br, (bi + 1) * br, bj * bc,
                                      (bj + 1) * bc, mx);
        scale = mx ? mb__mx_scale(amax, qdtype) : mb__quant_scale(amax, qdtype);
      }
      grid[bi * gc + bj] = scale;
      /* With a power-of-two scale the f32 quotient is exact but where it
       * falls below f32's normals, and there it is far below half of the
       * fp8 and fp4 formats' smallest subnormal: the same q as the exact
       * quotient. */
      for (int64_t i = bi * br; i < (bi + 1) * br; i++)
        for (int64_t j = bj * bc; j < (bj + 1) * bc; j++)
          mb__store(q, qdtype, (size_t)(i * cols + j),
                    (double)(x[i * cols + j] / scale), MB_CONVERT_SATURATE);
    }
}
