/* The quantization semantics every op and kernel shares. The operations are
 * spelled out in f32 (absmax, the scale as absmax / qmax, the division x / s)
 * so an exact reference exists: round-to-nearest-even with saturation of the
 * f32 quotient. */
#include <math.h>

#include "dtype_internal.h"
#include "ops/op_internal.h"

float mb__quant_scale(float absmax, mb_dtype_t qdtype) {
  /* An all-zero (or non-finite) block would give 0 or NaN: 1 keeps q = 0
   * and the dequantized values exact. */
  if (!(absmax > 0) || !isfinite(absmax)) return 1.0f;
  return absmax / (float)mb_dtype_max(qdtype);
}

void mb__quantize_ref(const float *x, int64_t rows, int64_t cols,
                      const mb_scaling_t *s, mb_dtype_t qdtype,
                      double static_scale, void *q, float *grid) {
  int64_t gr, gc;
  mb__scaling_grid(s, rows, cols, &gr, &gc);
  const int64_t br = rows / gr, bc = cols / gc;
  for (int64_t bi = 0; bi < gr; bi++)
    for (int64_t bj = 0; bj < gc; bj++) {
      float scale = (float)static_scale;
      if (!(static_scale > 0)) {
        float amax = 0.0f;
        for (int64_t i = bi * br; i < (bi + 1) * br; i++)
          for (int64_t j = bj * bc; j < (bj + 1) * bc; j++)
            amax = fmaxf(amax, fabsf(x[i * cols + j]));
        scale = mb__quant_scale(amax, qdtype);
      }
      grid[bi * gc + bj] = scale;
      for (int64_t i = bi * br; i < (bi + 1) * br; i++)
        for (int64_t j = bj * bc; j < (bj + 1) * bc; j++)
          mb__store(q, qdtype, (size_t)(i * cols + j),
                    (double)(x[i * cols + j] / scale), MB_CONVERT_SATURATE);
    }
}
