/* Exact element conversions shared by every backend's kernels: f32 to and
 * from bf16, f16, f8e4m3, f8e5m2, f4e2m1, i8 and i4. Host C (the CPU backend)
 * and device code (backends/gpu/, compiled by nvcc or hipcc) include this one
 * file, so every backend rounds the same way.
 *
 * Each one matches lib/dtype.c (mb_convert, mb_f32_to_f8e4m3, ...) bit for
 * bit; tests/test_cpu_quant.c checks them over a large sample of f32
 * patterns that includes every rounding boundary. The library's converter
 * works in double with branches, one call per buffer; these are selects on
 * integer bit patterns, inlined, so gcc vectorises whole rows of them and a
 * GPU thread runs them without divergence.
 *
 * Rounding is to nearest, ties to even. Quantized targets saturate (the
 * quantize semantics: MB_CONVERT_SATURATE, infinities too) and NaN stays
 * NaN, or becomes 0 for integers. f16 and bf16 overflow to infinity
 * (mb_convert's default, as a GEMM output would).
 *
 * Subnormal targets are rounded with the "magic number" addition: adding
 * 2^(q+23) to |x| < 2^(emin) leaves a float whose ulp is the target's
 * quantum 2^q, so the FPU's round-to-nearest-even does the rounding and the
 * low bits of the sum are the target's significand (2^emin itself rounds up
 * into the smallest normal, as it should). That assumes the default rounding
 * mode and no flush-to-zero of f32 subnormals (never build the GPU kernels
 * with --use_fast_math / -ffast-math).
 *
 * Those selects are the _sw functions. Device code converts f16, bf16 and
 * fp8 with the architecture's instructions instead where it has them (the
 * _hw and _f16t functions; the MB_CVT_HW_* table says where), and the
 * names without a suffix, which the kernels call, pick one or the other.
 * The instructions round the same way; they differ on a NaN, which they
 * make the positive canonical NaN, so each wrapper ORs the input's sign
 * back in (mb__cvt_nan_sign). Results are then bit-identical but for a
 * NaN's payload (a NaN stays a NaN, with its sign): tests/cvt/ checks that
 * over every f16, bf16 and fp8 pattern and every f32 rounding boundary. */
#ifndef MB_BACKENDS_COMMON_MB_CVT_H
#define MB_BACKENDS_COMMON_MB_CVT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Host and device (nvcc, hipcc) alike. */
#if defined(__CUDACC__) || defined(__HIPCC__)
#define MB_CVT_FN static inline __host__ __device__
#else
#define MB_CVT_FN static inline
#endif

MB_CVT_FN uint32_t mb__cvt_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

MB_CVT_FN float mb__cvt_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* c ? a : b as masks. With a ternary gcc sinks a float operation feeding
 * one side into a branch, and then will not vectorise the loop (it may not
 * speculate an operation that could raise a floating-point flag). */
MB_CVT_FN uint32_t mb__cvt_sel(int c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - (uint32_t)(c != 0);
  return (a & m) | (b & ~m);
}

/* ---- which conversions this compilation does in hardware -------------------
 * 1 where the device code being compiled has the instruction; 0 in host
 * code (nvcc's and hipcc's host pass included), in the emulated GPU and on
 * older targets, which keep the selects.
 *   CUDA: f16 on every target (cvt.rn.f16.f32, cvt.f32.f16); f32 -> bf16
 *   from sm_80 (cvt.rn.bf16.f32); fp8 from sm_89 (cvt.rn.satfinite.e4m3x2 /
 *   e5m2x2.f32 and cvt.rn.f16x2.e4m3x2; e5m2 -> f32 is the f16 one).
 *   HIP: f16 only (v_cvt_f16_f32 rounds to nearest even, v_cvt_f32_f16).
 *   bf16 stays in software: gfx90a has no bf16 convert. So does fp8:
 *   gfx94x's fp8 instructions are the FNUZ formats (bias 8 and 16, one NaN
 *   0x80, no negative zero), not the OCP e4m3/e5m2 that ours are. */
#if defined(__CUDA_ARCH__)
#define MB_CVT_HW_F16 1
#define MB_CVT_HW_BF16 (__CUDA_ARCH__ >= 800)
#define MB_CVT_HW_FP8 (__CUDA_ARCH__ >= 890)
#elif defined(__HIP_DEVICE_COMPILE__)
#define MB_CVT_HW_F16 1
#define MB_CVT_HW_BF16 0
#define MB_CVT_HW_FP8 0
#else
#define MB_CVT_HW_F16 0
#define MB_CVT_HW_BF16 0
#define MB_CVT_HW_FP8 0
#endif

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

/* NVIDIA's conversion instructions return the positive canonical NaN for
 * a NaN (cuda_fp16.hpp: "discard sign of a NaN"); ours keep the sign. ORing
 * the input's sign bit, moved to the result's (`shift` to the right, or
 * left when negative), restores it, as it would were the sign kept, and
 * changes nothing else: every other result already carries the input's
 * sign, zeros and underflows included. */
MB_CVT_FN uint32_t mb__cvt_nan_sign(uint32_t r, uint32_t in, uint32_t mask,
                                    int shift) {
  return r | ((shift >= 0 ? in >> shift : in << -shift) & mask);
}

/* ---- f32 -> fp8, saturating ------------------------------------------------
 * man: significand bits kept; rebias: 127 - the format's bias; min_normal:
 * the f32 pattern of the smallest normal; magic: 2^(quantum + 23) (see
 * above); max/nan: the largest finite and the NaN pattern. Normal values
 * keep `man` bits with RNE (a carry out bumps the exponent, and the compare
 * with max afterwards is the saturation: patterns grow with magnitude). */
MB_CVT_FN uint8_t mb__cvt_f32_to_f8(float x, unsigned man, uint32_t rebias,
                                    uint32_t min_normal, float magic,
                                    uint32_t max, uint32_t nan) {
  const uint32_t u = mb__cvt_bits(x), a = u & 0x7FFFFFFFu;
  const uint32_t sign = (u >> 24) & 0x80u, shift = 23u - man;
  const uint32_t normal =
      ((a + ((1u << (shift - 1u)) - 1u) + ((a >> shift) & 1u)) >> shift) -
      (rebias << man);
  const uint32_t sub =
      mb__cvt_bits(mb__cvt_float(a) + magic) - mb__cvt_bits(magic);
  uint32_t r = mb__cvt_sel(a < min_normal, sub, normal);
  r = r > max ? max : r;
  r = mb__cvt_sel(a > 0x7F800000u, nan, r);
  return (uint8_t)(sign | r);
}

/* e4m3 ("fn": no infinity): bias 7, 3 bits, max 448 = 0x7E, NaN 0x7F,
 * smallest normal 2^-6, quantum 2^-9. */
MB_CVT_FN uint8_t mb__cvt_f32_to_e4m3_sw(float x) {
  return mb__cvt_f32_to_f8(x, 3u, 120u, 0x3C800000u, 0x1p14f, 0x7Eu, 0x7Fu);
}

/* e5m2: bias 15, 2 bits, max 57344 = 0x7B, NaN 0x7E, smallest normal
 * 2^-14, quantum 2^-16. */
MB_CVT_FN uint8_t mb__cvt_f32_to_e5m2_sw(float x) {
  return mb__cvt_f32_to_f8(x, 2u, 112u, 0x38800000u, 0x1p7f, 0x7Bu, 0x7Eu);
}

/* e2m1 (OCP FP4, no infinity, no NaN): bias 1, 1 bit, max 6 = 0x7,
 * smallest normal 2^0, quantum 2^-1; computed as an 8-bit pattern by the
 * fp8 rounder with NaN mapped to max (so a NaN saturates, as lib/dtype.c
 * does), then the sign moved from bit 7 to bit 3. The nibble. */
MB_CVT_FN uint8_t mb__cvt_f32_to_e2m1(float x) {
  const uint32_t r =
      mb__cvt_f32_to_f8(x, 1u, 126u, 0x3F800000u, 0x1p22f, 0x7u, 0x7u);
  return (uint8_t)(((r >> 4) & 0x8u) | (r & 0x7u));
}

/* Two values as one byte, lo in the low nibble (element 2i, 2i+1). */
MB_CVT_FN uint8_t mb__cvt_f32x2_to_e2m1x2(float lo, float hi) {
  return (uint8_t)(mb__cvt_f32_to_e2m1(lo) | (mb__cvt_f32_to_e2m1(hi) << 4));
}

/* A nibble's value, exact: a normal value's exponent and significand
 * rebias with one add (126 << 22: bias 127 - 1), a subnormal (0, 0.5) is
 * its significand times the quantum. */
MB_CVT_FN float mb__cvt_e2m1_to_f32(uint8_t nib) {
  const uint32_t sign = (uint32_t)(nib & 0x8u) << 28, mag = nib & 0x7u;
  const uint32_t normal = (mag << 22) + (126u << 23);
  const uint32_t sub = mb__cvt_bits((float)mag * 0.5f); /* mag < 2 */
  return mb__cvt_float(sign | mb__cvt_sel(mag < 2u, sub, normal));
}

/* Element i of a packed e2m1 buffer (low nibble first). */
MB_CVT_FN float mb__cvt_e2m1_at(const uint8_t *p, size_t i) {
  return mb__cvt_e2m1_to_f32((uint8_t)((p[i / 2] >> (4u * (i & 1u))) & 0xFu));
}

/* ---- f32 -> integer, saturating --------------------------------------------
 * Rounded by adding 1.5 * 2^23, whose ulp is 1, so the sum's low bits are
 * the integer (for |v| < 2^22); then clamped as integers. Larger |v| (and
 * infinities) saturate by sign, NaN becomes 0. Integer selects only, after
 * the one float addition, so the loop vectorises (see mb__cvt_sel). */
MB_CVT_FN int32_t mb__cvt_f32_to_int(float v, int32_t lo, int32_t hi) {
  const uint32_t u = mb__cvt_bits(v), a = u & 0x7FFFFFFFu;
  int32_t r = (int32_t)(mb__cvt_bits(v + 0x1.8p23f) - 0x4B400000u);
  r = r < lo ? lo : r;
  r = r > hi ? hi : r;
  const uint32_t big = (u >> 31) ? (uint32_t)lo : (uint32_t)hi;
  uint32_t q = mb__cvt_sel(a >= 0x4A800000u, big, (uint32_t)r); /* 2^22 */
  q = mb__cvt_sel(a > 0x7F800000u, 0u, q);
  return (int32_t)q;
}

MB_CVT_FN int8_t mb__cvt_f32_to_i8(float v) {
  return (int8_t)mb__cvt_f32_to_int(v, -128, 127);
}

/* The nibble (two's complement in the low 4 bits). */
MB_CVT_FN uint8_t mb__cvt_f32_to_i4(float v) {
  return (uint8_t)((uint32_t)mb__cvt_f32_to_int(v, -8, 7) & 0xFu);
}

/* Sign-extends the nibble at element index i (low nibble first). */
MB_CVT_FN int32_t mb__cvt_i4_at(const uint8_t *p, size_t i) {
  return (int32_t)(((uint32_t)(p[i / 2] >> (4u * (i & 1u))) & 0xFu) ^ 8u) - 8;
}

/* ---- f16 <-> f32 --------------------------------------------------------- */

MB_CVT_FN float mb__cvt_f16_to_f32_sw(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  const uint32_t normal = ((e + 112u) << 23) | (m << 13);
  const uint32_t sub = mb__cvt_bits((float)m * 0x1p-24f); /* exact */
  const uint32_t special = m ? 0x7FC00000u : 0x7F800000u;
  uint32_t r = mb__cvt_sel(e == 0u, sub, normal);
  r = mb__cvt_sel(e == 0x1Fu, special, r);
  return mb__cvt_float(sign | r);
}

/* Overflow: 65520 (max + half an ulp, where max is odd) and above go to
 * infinity; subnormals (quantum 2^-24) by the magic addition of 0.5. */
MB_CVT_FN uint16_t mb__cvt_f32_to_f16_sw(float x) {
  const uint32_t u = mb__cvt_bits(x), a = u & 0x7FFFFFFFu;
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t normal =
      (a + 0xFFFu + ((a >> 13) & 1u) - 0x38000000u) >> 13; /* rebias 127->15 */
  const uint32_t sub =
      mb__cvt_bits(mb__cvt_float(a) + 0.5f) - 0x3F000000u; /* bits of 0.5 */
  uint32_t r = mb__cvt_sel(a < 0x38800000u, sub, normal);
  r = mb__cvt_sel(a >= 0x477FF000u, 0x7C00u, r);
  r = mb__cvt_sel(a > 0x7F800000u, 0x7E00u, r);
  return (uint16_t)(sign | r);
}

/* ---- fp8 -> f32, exact ------------------------------------------------------
 * A normal value's exponent and significand slide into place and are
 * rebiased with one add; a subnormal is its significand times the quantum. */
MB_CVT_FN float mb__cvt_e4m3_to_f32_sw(uint8_t b) {
  const uint32_t sign = (uint32_t)(b & 0x80u) << 24, mag = b & 0x7Fu;
  const uint32_t normal = (mag << 20) + (120u << 23);
  const uint32_t sub = mb__cvt_bits((float)mag * 0x1p-9f); /* mag < 8 */
  uint32_t r = mb__cvt_sel(mag < 8u, sub, normal);
  r = mb__cvt_sel(mag == 0x7Fu, 0x7FC00000u, r);
  return mb__cvt_float(sign | r);
}

/* e5m2 is the upper byte of an f16. */
MB_CVT_FN float mb__cvt_e5m2_to_f32_sw(uint8_t b) {
  return mb__cvt_f16_to_f32_sw((uint16_t)(b << 8));
}

/* ---- bf16 <-> f32 -----------------------------------------------------------
 */

/* Exact: bf16 is the upper half of an f32. */
MB_CVT_FN float mb__cvt_bf16_to_f32(uint16_t b) {
  const uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Round to nearest, ties to even (IEEE 754 / OCP): add 0x7fff plus the lowest
 * bit that is kept, then truncate. A carry out of the mantissa correctly bumps
 * the exponent, and the largest finite values round to infinity on overflow.
 * NaN must not go through that addition (a small payload would carry into an
 * infinity, a large one into the sign), so it is truncated and made quiet:
 * NaN stays NaN with its sign. */
MB_CVT_FN uint16_t mb__cvt_f32_to_bf16_sw(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  const int is_nan = (u & 0x7fffffffu) > 0x7f800000u;
  return (uint16_t)(is_nan ? quiet_nan : rounded);
}

/* Pairs: `lo` into the low half (byte), as a store of two packs them. */
MB_CVT_FN uint32_t mb__cvt_f32x2_to_f16x2_sw(float lo, float hi) {
  const uint32_t a = mb__cvt_f32_to_f16_sw(lo), b = mb__cvt_f32_to_f16_sw(hi);
  return a | b << 16;
}

MB_CVT_FN uint32_t mb__cvt_f32x2_to_bf16x2_sw(float lo, float hi) {
  const uint32_t a = mb__cvt_f32_to_bf16_sw(lo), b = mb__cvt_f32_to_bf16_sw(hi);
  return a | b << 16;
}

MB_CVT_FN uint16_t mb__cvt_f32x2_to_e4m3x2_sw(float lo, float hi) {
  const uint32_t a = mb__cvt_f32_to_e4m3_sw(lo), b = mb__cvt_f32_to_e4m3_sw(hi);
  return (uint16_t)(a | b << 8);
}

MB_CVT_FN uint16_t mb__cvt_f32x2_to_e5m2x2_sw(float lo, float hi) {
  const uint32_t a = mb__cvt_f32_to_e5m2_sw(lo), b = mb__cvt_f32_to_e5m2_sw(hi);
  return (uint16_t)(a | b << 8);
}

/* ---- the same conversions with NVIDIA's instructions ------------------------
 * One instruction each (two for e4m3 -> f32, through f16, which holds every
 * e4m3 value; one for a pair) and the sign fix. cuda_fp16.h, cuda_bf16.h
 * and cuda_fp8.h emit the instructions in device code and model them bit
 * for bit in host code, which is how tests/cvt/test_cvt_cuda runs these
 * very bodies on the CPU. The dispatchers at the end pick them. */
#if defined(__CUDACC__)

MB_CVT_FN uint16_t mb__cvt_f32_to_f16_hw(float x) {
  const __half_raw h = __float2half_rn(x);
  return (uint16_t)mb__cvt_nan_sign(h.x, mb__cvt_bits(x), 0x8000u, 16);
}

MB_CVT_FN float mb__cvt_f16_to_f32_hw(uint16_t h) {
  __half_raw r;
  r.x = h;
  const float f = __half2float(__half(r));
  return mb__cvt_float(mb__cvt_nan_sign(mb__cvt_bits(f), h, 0x80000000u, -16));
}

MB_CVT_FN uint16_t mb__cvt_f32_to_bf16_hw(float x) {
  const __nv_bfloat16_raw b = __float2bfloat16_rn(x);
  return (uint16_t)mb__cvt_nan_sign(b.x, mb__cvt_bits(x), 0x8000u, 16);
}

/* __NV_SATFINITE: |x| > max, infinities included, gives max. */
MB_CVT_FN uint8_t mb__cvt_f32_to_e4m3_hw(float x) {
  return (uint8_t)mb__cvt_nan_sign(
      __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3), mb__cvt_bits(x),
      0x80u, 24);
}

MB_CVT_FN uint8_t mb__cvt_f32_to_e5m2_hw(float x) {
  return (uint8_t)mb__cvt_nan_sign(
      __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2), mb__cvt_bits(x),
      0x80u, 24);
}

MB_CVT_FN float mb__cvt_e4m3_to_f32_hw(uint8_t b) {
  const float f = __half2float(__half(__nv_cvt_fp8_to_halfraw(b, __NV_E4M3)));
  return mb__cvt_float(mb__cvt_nan_sign(mb__cvt_bits(f), b, 0x80000000u, -24));
}

/* Pairs. Scalar conversions with the sign fix each cost a conversion, the
 * fix and the packing per element (ptxas only fuses two bare ones into
 * one cvt.rn.f16x2.f32); a pair is one conversion and one fix for both. */
MB_CVT_FN uint32_t mb__cvt_f32x2_to_f16x2_hw(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  uint32_t r;
  memcpy(&r, &h, sizeof r);
  return mb__cvt_nan_sign(mb__cvt_nan_sign(r, mb__cvt_bits(lo), 0x8000u, 16),
                          mb__cvt_bits(hi), 0x80000000u, 0);
}

MB_CVT_FN uint32_t mb__cvt_f32x2_to_bf16x2_hw(float lo, float hi) {
  const __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
  uint32_t r;
  memcpy(&r, &b, sizeof r);
  return mb__cvt_nan_sign(mb__cvt_nan_sign(r, mb__cvt_bits(lo), 0x8000u, 16),
                          mb__cvt_bits(hi), 0x80000000u, 0);
}

MB_CVT_FN uint16_t mb__cvt_f32x2_to_e4m3x2_hw(float lo, float hi) {
  const uint32_t r =
      __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, __NV_E4M3);
  return (uint16_t)mb__cvt_nan_sign(
      mb__cvt_nan_sign(r, mb__cvt_bits(lo), 0x80u, 24), mb__cvt_bits(hi),
      0x8000u, 16);
}

MB_CVT_FN uint16_t mb__cvt_f32x2_to_e5m2x2_hw(float lo, float hi) {
  const uint32_t r =
      __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, __NV_E5M2);
  return (uint16_t)mb__cvt_nan_sign(
      mb__cvt_nan_sign(r, mb__cvt_bits(lo), 0x80u, 24), mb__cvt_bits(hi),
      0x8000u, 16);
}

#endif /* __CUDACC__ */

/* ---- the same with _Float16 (HIP) ---------------------------------------
 * IEEE's conversions (round to nearest even, overflow to infinity), which
 * hipcc emits as v_cvt_f16_f32 / v_cvt_f32_f16. Host code gets them too
 * where MB_CVT_FLOAT16 is defined: the host's _Float16 conversion is the
 * same IEEE one, so tests/cvt/test_cvt_float16 checks these bodies on the
 * CPU (nvcc has no _Float16 in device code, hence not under nvcc). */
#if defined(__HIPCC__) || (defined(MB_CVT_FLOAT16) && !defined(__CUDACC__))

MB_CVT_FN uint16_t mb__cvt_f32_to_f16_f16t(float x) {
  const _Float16 h = (_Float16)x;
  uint16_t b;
  memcpy(&b, &h, sizeof b);
  return (uint16_t)mb__cvt_nan_sign(b, mb__cvt_bits(x), 0x8000u, 16);
}

MB_CVT_FN float mb__cvt_f16_to_f32_f16t(uint16_t h) {
  _Float16 v;
  memcpy(&v, &h, sizeof v);
  const float f = (float)v;
  return mb__cvt_float(mb__cvt_nan_sign(mb__cvt_bits(f), h, 0x80000000u, -16));
}

MB_CVT_FN uint32_t mb__cvt_f32x2_to_f16x2_f16t(float lo, float hi) {
  const uint32_t a = mb__cvt_f32_to_f16_f16t(lo),
                 b = mb__cvt_f32_to_f16_f16t(hi);
  return a | b << 16;
}

#endif

/* ---- the converters the kernels call ----------------------------------------
 * Each is its _hw (CUDA) or _f16t (HIP) version where MB_CVT_HW_* says the
 * code being compiled has the instruction, else its _sw one. */
#if MB_CVT_HW_F16 && defined(__CUDACC__)
#define MB__CVT_F16(name) name##_hw
#elif MB_CVT_HW_F16
#define MB__CVT_F16(name) name##_f16t
#else
#define MB__CVT_F16(name) name##_sw
#endif
#if MB_CVT_HW_BF16
#define MB__CVT_BF16(name) name##_hw
#else
#define MB__CVT_BF16(name) name##_sw
#endif
#if MB_CVT_HW_FP8
#define MB__CVT_FP8(name) name##_hw
#else
#define MB__CVT_FP8(name) name##_sw
#endif

MB_CVT_FN uint16_t mb__cvt_f32_to_f16(float x) {
  return MB__CVT_F16(mb__cvt_f32_to_f16)(x);
}

MB_CVT_FN float mb__cvt_f16_to_f32(uint16_t h) {
  return MB__CVT_F16(mb__cvt_f16_to_f32)(h);
}

MB_CVT_FN uint16_t mb__cvt_f32_to_bf16(float x) {
  return MB__CVT_BF16(mb__cvt_f32_to_bf16)(x);
}

MB_CVT_FN uint8_t mb__cvt_f32_to_e4m3(float x) {
  return MB__CVT_FP8(mb__cvt_f32_to_e4m3)(x);
}

MB_CVT_FN uint8_t mb__cvt_f32_to_e5m2(float x) {
  return MB__CVT_FP8(mb__cvt_f32_to_e5m2)(x);
}

MB_CVT_FN float mb__cvt_e4m3_to_f32(uint8_t b) {
  return MB__CVT_FP8(mb__cvt_e4m3_to_f32)(b);
}

/* e5m2 is the upper byte of an f16: the f16 conversion, wherever it runs. */
MB_CVT_FN float mb__cvt_e5m2_to_f32(uint8_t b) {
  return mb__cvt_f16_to_f32((uint16_t)(b << 8));
}

/* Two elements at once, for the stores of packed vectors. */
MB_CVT_FN uint32_t mb__cvt_f32x2_to_f16x2(float lo, float hi) {
  return MB__CVT_F16(mb__cvt_f32x2_to_f16x2)(lo, hi);
}

MB_CVT_FN uint32_t mb__cvt_f32x2_to_bf16x2(float lo, float hi) {
  return MB__CVT_BF16(mb__cvt_f32x2_to_bf16x2)(lo, hi);
}

MB_CVT_FN uint16_t mb__cvt_f32x2_to_e4m3x2(float lo, float hi) {
  return MB__CVT_FP8(mb__cvt_f32x2_to_e4m3x2)(lo, hi);
}

MB_CVT_FN uint16_t mb__cvt_f32x2_to_e5m2x2(float lo, float hi) {
  return MB__CVT_FP8(mb__cvt_f32x2_to_e5m2x2)(lo, hi);
}

/* ---- e8m0: the OCP MX scale ------------------------------------------------
 * 2^(b - 127) as f32: b >= 1 is the exponent field itself, b = 0 the f32
 * subnormal 2^-127, 0xFF NaN. Exact (lib/dtype.c's decoder is the
 * reference). */
MB_CVT_FN float mb__cvt_e8m0_to_f32(uint8_t b) {
  const uint32_t u = b ? (uint32_t)b << 23 : 0x00400000u;
  return mb__cvt_float(mb__cvt_sel(b == 0xFFu, 0x7FC00000u, u));
}

/* The shared exponent of an MX block (OCP MX v1.0, section 6.3) as its e8m0
 * byte, from the block's absmax as an f32 pattern that keeps NaN (any
 * pattern above infinity's): X = floor(log2(amax)) - emax_elem (8 for e4m3,
 * 15 for e5m2), clamped to e8m0's [-127, 127]. floor(log2(amax)) + 127 is
 * amax's exponent field, so the byte is that field minus emax: an all-zero
 * block, and any amax below 2^(emax - 126), gets the smallest scale 2^-127
 * (byte 0; never NaN); a block holding a NaN or an infinity gets NaN
 * (0xFF), as no finite power of two scales it. lib/ops/quant.c's
 * mb__mx_scale is the reference. */
MB_CVT_FN uint8_t mb__cvt_mx_scale_e8m0(uint32_t amax_bits, int emax) {
  const int field = (int)(amax_bits >> 23) - emax;
  const uint32_t b = (uint32_t)(field > 0 ? field : 0);
  return (uint8_t)mb__cvt_sel(amax_bits >= 0x7F800000u, 0xFFu, b);
}

/* A power of two in e8m0's range (or NaN) as its byte: the f32 exponent
 * field, which is 0 for 2^-127 (the subnormal 0x00400000) and 0xFF for
 * NaN. What a kernel that computes MX scales in f32 stores. */
MB_CVT_FN uint8_t mb__cvt_pow2_to_e8m0(float s) {
  return (uint8_t)(mb__cvt_bits(s) >> 23);
}

/* emax_elem of an MX element format: its largest normal's exponent
 * (e4m3 448 = 1.75 2^8, e5m2 57344 = 1.75 2^15, e2m1 6 = 1.5 2^2). */
#define MB_CVT_MX_EMAX_E4M3 8
#define MB_CVT_MX_EMAX_E5M2 15
#define MB_CVT_MX_EMAX_E2M1 2

#undef MB__CVT_F16
#undef MB__CVT_BF16
#undef MB__CVT_FP8

#endif
