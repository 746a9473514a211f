/* CPU backend — what the element-wise family's portable kernels share:
 * f16 and fp8 <-> f32 conversions, an exp, and row loads/stores in f32.
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

#include "cpu_bf16.h"

static inline float mb__cpu_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint32_t mb__cpu_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* c (0 or 1) ? a : b with masks: both sides are computed and there is no
 * branch, so gcc vectorises the loops around it. (A ?: whose arm holds a
 * float operation is sunk into a branch, and gcc will not speculate float
 * operations back out of it while they may trap.) */
static inline uint32_t mb__cpu_select(uint32_t c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - c;
  return (a & m) | (b & ~m);
}

/* The same for floats: also keeps gcc from cloning the float arithmetic
 * that follows a ?: into both arms (then it could not if-convert them). */
static inline float mb__cpu_selectf(uint32_t c, float a, float b) {
  return mb__cpu_bits_f32(
      mb__cpu_select(c, mb__cpu_f32_bits(a), mb__cpu_f32_bits(b)));
}

/* max(a, b); b when either is NaN. A plain ?: between two values (no
 * arithmetic in its arms): gcc vectorises it as a max reduction, which it
 * does not recognise in the masked form. */
static inline float mb__cpu_maxf(float a, float b) {
  return a > b ? a : b;
}

/* Exact. Exponent and mantissa are moved into place and rebiased; infinity
 * and NaN get the all-ones exponent; a subnormal is built as 2^-14 (1 + m)
 * and 2^-14 subtracted, which is exact. */
static inline float mb__cpu_f16_to_f32(uint16_t h) {
  const uint32_t em = (uint32_t)(h & 0x7fffu) << 13;
  const uint32_t exp = em & 0x0f800000u;
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t normal = em + ((127u - 15u) << 23);
  const uint32_t special = normal + ((128u - 16u) << 23);
  const uint32_t sub =
      mb__cpu_f32_bits(mb__cpu_bits_f32(normal + (1u << 23)) - 0x1p-14f);
  const uint32_t u = mb__cpu_select(exp == 0x0f800000u, special,
                                    mb__cpu_select(exp == 0, sub, normal));
  return mb__cpu_bits_f32(u | sign);
}

/* Round to nearest even (F. Giesen's float_to_half_fast3_rtne, as selects).
 * Normal results: rebias, add 0xfff plus the lowest kept bit, truncate; a
 * carry bumps the exponent, up to infinity. Subnormal results: adding 0.5
 * lines the 10 mantissa bits up at the bottom and lets the FPU round. At or
 * above 2^16: infinity; NaN: the quiet NaN 0x7e00. The sign is kept. */
static inline uint16_t mb__cpu_f32_to_f16(float f) {
  const uint32_t bits = mb__cpu_f32_bits(f);
  const uint32_t sign = bits & 0x80000000u;
  const uint32_t u = bits ^ sign;
  const uint32_t big = mb__cpu_select(u > 0x7f800000u, 0x7e00u, 0x7c00u);
  const uint32_t sub =
      mb__cpu_f32_bits(mb__cpu_bits_f32(u) + 0.5f) - mb__cpu_f32_bits(0.5f);
  const uint32_t normal =
      (u + 0xc8000000u /* (15 - 127) << 23 */ + 0xfffu + ((u >> 13) & 1u)) >>
      13;
  const uint32_t h = mb__cpu_select(
      u >= (143u << 23), big, mb__cpu_select(u < (113u << 23), sub, normal));
  return (uint16_t)(h | (sign >> 16));
}

/* f8e5m2 is the upper byte of an f16. */
static inline float mb__cpu_e5m2_to_f32(uint8_t b) {
  return mb__cpu_f16_to_f32((uint16_t)((uint16_t)b << 8));
}

/* f8e4m3 (OCP e4m3fn): bias 7, no infinities, S.1111.111 is NaN. */
static inline float mb__cpu_e4m3_to_f32(uint8_t b) {
  const uint32_t em = (uint32_t)(b & 0x7fu) << 20;
  const uint32_t sign = (uint32_t)(b & 0x80u) << 24;
  const uint32_t normal = em + ((127u - 7u) << 23);
  const uint32_t sub =
      mb__cpu_f32_bits(mb__cpu_bits_f32(normal + (1u << 23)) - 0x1p-6f);
  const uint32_t u =
      mb__cpu_select((b & 0x7fu) == 0x7fu, 0x7fc00000u,
                     mb__cpu_select((b & 0x78u) == 0, sub, normal));
  return mb__cpu_bits_f32(u | sign);
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
  const uint32_t n = mb__cpu_f32_bits(kf) - mb__cpu_f32_bits(magic);
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
  const float y = p * mb__cpu_bits_f32((n1 + 127u) << 23) *
                  mb__cpu_bits_f32((n2 + 127u) << 23);
  return mb__cpu_selectf(x > 88.7228394f, INFINITY,
                         mb__cpu_selectf(x < -103.972084f, 0.0f, y));
}

/* Elements [off, off + n) of `src` (f32, bf16, f16, f8e4m3 or f8e5m2) into
 * dst as f32 (exact). */
static inline void mb__cpu_load_f32(float *restrict dst, const void *src,
                                    mb_dtype_t dtype, size_t off, size_t n) {
  if (dtype == MB_DTYPE_F8E4M3) {
    const uint8_t *s = (const uint8_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cpu_e4m3_to_f32(s[i]);
  } else if (dtype == MB_DTYPE_F8E5M2) {
    const uint8_t *s = (const uint8_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cpu_e5m2_to_f32(s[i]);
  } else if (dtype == MB_DTYPE_BF16) {
    const uint16_t *s = (const uint16_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cpu_bf16_to_f32(s[i]);
  } else if (dtype == MB_DTYPE_F16) {
    const uint16_t *s = (const uint16_t *)src + off;
    for (size_t i = 0; i < n; ++i) dst[i] = mb__cpu_f16_to_f32(s[i]);
  } else {
    memcpy(dst, (const float *)src + off, n * sizeof *dst);
  }
}

/* n f32 values, rounded once to nearest even, into elements [off, off + n)
 * of `dst`. */
static inline void mb__cpu_store_f32(void *dst, mb_dtype_t dtype, size_t off,
                                     const float *restrict src, size_t n) {
  if (dtype == MB_DTYPE_BF16) {
    uint16_t *d = (uint16_t *)dst + off;
    for (size_t i = 0; i < n; ++i) d[i] = mb__cpu_f32_to_bf16(src[i]);
  } else if (dtype == MB_DTYPE_F16) {
    uint16_t *d = (uint16_t *)dst + off;
    for (size_t i = 0; i < n; ++i) d[i] = mb__cpu_f32_to_f16(src[i]);
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
