/* CPU backend — what the element-wise family's portable kernels share:
 * float selects, an exp, and row loads/stores in f32 (the conversions
 * themselves are backends/common/mb_cvt.h's).
 *
 * All of it is branch-free arithmetic on bit patterns (selects, no calls),
 * so gcc vectorises whole rows of it inside the kernels' MB_CPU_CLONES
 * functions, where it is inlined and compiled for each target. The
 * library's mb_convert() gives the same results but is a call per buffer. */
#ifndef MB_CPU_ELTWISE_MATH_H
#define MB_CPU_ELTWISE_MATH_H

#include <microbench/dtype.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mb_cvt.h"
/* The f16/fp8 <-> f32 conversions and bit helpers (one copy for the
 * whole backend, exact against lib/dtype.c). */

/* The same for floats: also keeps gcc from cloning the float arithmetic
 * that follows a ?: into both arms (then it could not if-convert them). */
static inline float mb__cpu_selectf(uint32_t c, float a, float b) {
  return mb__cvt_float(mb__cvt_sel(c, mb__cvt_bits(a), mb__cvt_bits(b)));
}

/* max(a, b); b when either is NaN. A plain ?: between two values (no
 * arithmetic in its arms): gcc vectorises it as a max reduction, which it
 * does not recognise in the masked form. */
static inline float mb__cpu_maxf(float a, float b) {
  return a > b ? a : b;
}

/* exp(x) in f32 to 1 ulp (Cephes expf; measured < 0.99 ulp): x = n ln2 + r, |r|
 * <= ln2/2, with ln2 split so n ln2 is exact; a degree-7 polynomial for e^r;
 * 2^n applied as two exact powers so that subnormal results underflow
 * gradually. NaN propagates, exp(-inf) = 0, exp(+inf) = inf. */
static inline float mb__cpu_expf(float x) {
  const float magic = 0x1.8p23f; /* adding it rounds to an integer */
  float xc = mb__cpu_selectf(x < -104.0f, -104.0f, x);
  xc = mb__cpu_selectf(xc > 89.0f, 89.0f, xc);
  const float kf = xc * 1.44269504088896341f + magic;
  const uint32_t n = mb__cvt_bits(kf) - mb__cvt_bits(magic);
  const float nf = kf - magic;
  const float r = (xc - nf * 0.693359375f) - nf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  /* n in [-150, 128] as a two's-complement uint32; halves in [-75, 64]. */
  const uint32_t n1 = (uint32_t)((int32_t)n / 2), n2 = n - n1;
  const float y =
      p * mb__cvt_float((n1 + 127u) << 23) * mb__cvt_float((n2 + 127u) << 23);
  return mb__cpu_selectf(x > 88.7228394f, INFINITY,
                         mb__cpu_selectf(x < -103.972084f, 0.0f, y));
}

/* Elements [off, off + n) of `src` (f32, bf16, f16, f8e4m3 or f8e5m2) into
 * dst as f32 (exact). */
static inline void mb__cpu_load_f32(float *restrict dst, const void *src,
                                    mb_dtype_t dtype, size_t off, size_t n) {
  if (dtype == MB_DTYPE_F8E4M3) {
    const uint8_t *s = (const uint8_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cvt_e4m3_to_f32(s[i]);
  } else if (dtype == MB_DTYPE_F8E5M2) {
    const uint8_t *s = (const uint8_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cvt_e5m2_to_f32(s[i]);
  } else if (dtype == MB_DTYPE_BF16) {
    const uint16_t *s = (const uint16_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cvt_bf16_to_f32(s[i]);
  } else if (dtype == MB_DTYPE_F16) {
    const uint16_t *s = (const uint16_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cvt_f16_to_f32(s[i]);
  } else {
    memcpy(dst, (const float *)src + off, n * sizeof *dst);
  }
}

/* n f32 values, rounded once to nearest even, into elements [off, off + n)
 * of `dst` (f32, bf16, f16, or fp8 saturated to its finite range). */
static inline void mb__cpu_store_f32(void *dst, mb_dtype_t dtype, size_t off,
                                     const float *restrict src, size_t n) {
  if (dtype == MB_DTYPE_F8E4M3) {
    uint8_t *d = (uint8_t *)dst + off;
    for (size_t i = 0; i < n; ++i) d[i] = mb__cvt_f32_to_e4m3(src[i]);
  } else if (dtype == MB_DTYPE_F8E5M2) {
    uint8_t *d = (uint8_t *)dst + off;
    for (size_t i = 0; i < n; ++i) d[i] = mb__cvt_f32_to_e5m2(src[i]);
  } else if (dtype == MB_DTYPE_BF16) {
    uint16_t *d = (uint16_t *)dst + off;
    for (size_t i = 0; i < n; ++i) d[i] = mb__cvt_f32_to_bf16(src[i]);
  } else if (dtype == MB_DTYPE_F16) {
    uint16_t *d = (uint16_t *)dst + off;
    for (size_t i = 0; i < n; ++i) d[i] = mb__cvt_f32_to_f16(src[i]);
  } else {
    memcpy((float *)dst + off, src, n * sizeof *src);
  }
}

/* Sum of n floats in 16 independent lanes: vectorisable without
 * reassociation flags, and a blocked sum's error (~sqrt(n) u typical). */
static inline float mb__cpu_sum_f32(const float *restrict x, size_t n) {
  float lane[16] = {0};
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; ++l) lane[l] += x[i + (size_t)l];
  for (; i < n; ++i) lane[i % 16] += x[i];
  float s = 0;
  for (int l = 0; l < 16; ++l) s += lane[l];
  return s;
}

#endif
