/* NVFP4: e2m1 elements, one e4m3 scale per block (16 along K), and one f32
 * scale per tensor, so a value decodes as e2m1 x e4m3 x f32. The
 * per-tensor scale maps the tensor's absmax onto the largest product of
 * the two formats' maxima, 6 x 448 = 2688, which leaves each block's e4m3
 * scale its whole range: S = amax / 2688, s_b = e4m3(amax_b / 6 / S). Every
 * operation is written in f32 with one rounding each, so the reference is
 * exact and a kernel can match it bit for bit. */
#include <math.h>

#include "dtype_internal.h"
#include "ops/op_internal.h"

float mb__nvfp4_tensor_scale(float amax) {
  /* An all-zero (or non-finite) tensor: 1, as the f32 rule, so the block
   * scales stay finite. */
  if (!(amax > 0) || !isfinite(amax)) return 1.0f;
  return amax / (6.0f * 448.0f); /* 2688 is exact in f32 */
}

uint8_t mb__nvfp4_block_scale(float amax_block, float tensor_scale) {
  const float v = (amax_block / 6.0f) / tensor_scale;
  uint8_t b = 0;
  /* RNE, saturating to 448; a NaN block keeps NaN (0x7F): no scale
   * decodes it. */
  mb__store(&b, MB_DTYPE_F8E4M3, 0, (double)v, MB_CONVERT_SATURATE);
  return b;
}

mb_status_t mb__check_nvfp4(const char *op, const mb_op_params_t *p,
                            mb_dtype_t qdtype) {
  if (qdtype != MB_DTYPE_F4E2M1)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: f8e4m3 scales (NVFP4) go with f4e2m1 elements, not %s",
                    op, mb_dtype_name(qdtype));
  if (!(p->flags & MB_PARAM_STATIC) || !(p->scale > 0) || !isfinite(p->scale))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: NVFP4 needs its per-tensor f32 scale as the static "
                    "scale (--static-scale S, S = amax(X) / 2688); the block "
                    "scales are computed",
                    op);
  return MB_OK;
}

void mb__nvfp4_quantize_ref(const float *x, int64_t rows, int64_t cols,
                            const mb_scaling_t *s, float tensor_scale, void *q,
                            uint8_t *grid) {
  int64_t gr, gc;
  mb__scaling_grid(s, rows, cols, &gr, &gc);
  const int64_t br = rows / gr, bc = cols / gc;
  for (int64_t bi = 0; bi < gr; bi++)
    for (int64_t bj = 0; bj < gc; bj++) {
      float amax = 0.0f;
      for (int64_t i = bi * br; i < (bi + 1) * br; i++)
        for (int64_t j = bj * bc; j < (bj + 1) * bc; j++) {
          const float a = fabsf(x[i * cols + j]);
          amax = isnan(a) || isnan(amax) ? NAN : fmaxf(amax, a);
        }
      const uint8_t sb = mb__nvfp4_block_scale(amax, tensor_scale);
      grid[bi * gc + bj] = sb;
      const float eff = (float)mb__load(&sb, MB_DTYPE_F8E4M3, 0) * tensor_scale;
      /* A block whose scale is 0 (all zero, or too small for e4m3's
       * subnormals) holds zeros with x's sign, never x / 0: the division
       * is by infinity instead. */
      const float div = eff == 0.0f ? INFINITY : eff;
      for (int64_t i = bi * br; i < (bi + 1) * br; i++)
        for (int64_t j = bj * bc; j < (bj + 1) * bc; j++)
          mb__store(q, MB_DTYPE_F4E2M1, (size_t)(i * cols + j),
                    (double)(x[i * cols + j] / div), MB_CONVERT_SATURATE);
    }
}
