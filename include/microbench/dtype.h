/* libmicrobench — data types and bit-exact conversions.
 *
 * Float conversions round to nearest, ties to even. Without
 * MB_CONVERT_SATURATE an overflow becomes infinity (f16, bf16, f8e5m2) or
 * NaN (f8e4m3, which has no infinity, as in OCP "e4m3fn"); with it, finite
 * overflow and infinities clamp to the largest finite value of that sign
 * ("satfinite", as the CUDA fp8 intrinsics do). NaN stays NaN.
 * Integer targets (i8, i4, i32) always round to nearest even and saturate;
 * NaN becomes 0. i4 is packed two per byte, low nibble first.
 * e8m0 is the OCP MX v1.0 scale format (torch's float8_e8m0fnu): an 8-bit
 * biased exponent and nothing else, value 2^(bits - 127), 0xFF NaN, no
 * sign, no zero, no infinity. Converting to it takes |x| to the nearest
 * power of two in exponent-and-guard-bit terms as torch does (up when the
 * significand is 1.5 or more; zero and anything below 2^-127 give 2^-127),
 * and infinities and NaN give NaN (saturating: 2^127).
 * f4e2m1 is the OCP MX v1.0 FP4 element (torch's float4_e2m1fn, JAX's
 * float4_e2m1fn): 1 sign, 2 exponent bits (bias 1), 1 mantissa bit, values
 * +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}, packed two per byte low nibble first as
 * i4. It has no infinity and no NaN, so converting to it always saturates
 * (to +-6, infinities too, with or without MB_CONVERT_SATURATE) and a NaN
 * becomes 6 with the NaN's sign bit (the spec leaves NaN to the
 * implementation; saturating keeps the encoder one table row).
 *
 * Threading: all functions are pure and thread-safe. */
#ifndef MICROBENCH_DTYPE_H
#define MICROBENCH_DTYPE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(ENUM, name, bits, is_float) — the one table of data types. */
#define MB_DTYPE_MAP(X)     \
  X(F32, "f32", 32, 1)      \
  X(F16, "f16", 16, 1)      \
  X(BF16, "bf16", 16, 1)    \
  X(F8E4M3, "f8e4m3", 8, 1) \
  X(F8E5M2, "f8e5m2", 8, 1) \
  X(I8, "i8", 8, 0)         \
  X(I4, "i4", 4, 0)         \
  X(I32, "i32", 32, 0)      \
  X(E8M0, "e8m0", 8, 1)     \
  X(F4E2M1, "f4e2m1", 4, 1)

typedef enum mb_dtype {
  MB_DTYPE_NONE = 0, /* "unset": take the op's default */
#define MB__DTYPE_ENUM(e, name, bits, flt) MB_DTYPE_##e,
  MB_DTYPE_MAP(MB__DTYPE_ENUM)
#undef MB__DTYPE_ENUM
      MB_DTYPE_COUNT
} mb_dtype_t;

#define MB_CONVERT_SATURATE 1u

/* "bf16"; "none" for MB_DTYPE_NONE; "?" for an invalid value. Static. */
MB_API const char *mb_dtype_name(mb_dtype_t dtype);
/* Accepts our names and common aliases ("float32", "fp32", "bfloat16",
 * "torch.bfloat16", "float8_e4m3fn", "int8", ...). Unknown names give
 * MB_ERR_INVALID_ARG and an error message listing the valid names. */
MB_API mb_status_t mb_dtype_from_name(const char *name, mb_dtype_t *out);
/* Storage bits per element (4 for i4 and f4e2m1); 0 for NONE/invalid. */
MB_API unsigned mb_dtype_bits(mb_dtype_t dtype);
/* Bytes needed for `count` elements (4-bit types round up). */
MB_API size_t mb_dtype_bytes(mb_dtype_t dtype, size_t count);
MB_API int mb_dtype_is_float(mb_dtype_t dtype);
/* Unit roundoff u = 2^-p, p = significand bits including the hidden bit
 * (f32 2^-24, f16 2^-11, bf16 2^-8, f8e4m3 2^-4, f8e5m2 2^-3, f4e2m1
 * 2^-2): the largest
 * relative error of one round-to-nearest. 0 for integer types. */
MB_API double mb_dtype_unit_roundoff(mb_dtype_t dtype);
/* Largest finite value (f8e4m3 448, f8e5m2 57344, f4e2m1 6, i8 127,
 * i4 7). */
MB_API double mb_dtype_max(mb_dtype_t dtype);

/* Scalar conversions. */
MB_API uint16_t mb_f32_to_bf16(float x, unsigned flags);
MB_API float mb_bf16_to_f32(uint16_t bits);
MB_API uint16_t mb_f32_to_f16(float x, unsigned flags);
MB_API float mb_f16_to_f32(uint16_t bits);
MB_API uint8_t mb_f32_to_f8e4m3(float x, unsigned flags);
MB_API float mb_f8e4m3_to_f32(uint8_t bits);
MB_API uint8_t mb_f32_to_f8e5m2(float x, unsigned flags);
MB_API float mb_f8e5m2_to_f32(uint8_t bits);

/* Converts `count` elements. Any dtype to any dtype; float targets are
 * rounded once from the exact source value (no double rounding). For i4
 * and f4e2m1, element i lives in byte i/2, low nibble when i is even. dst and
 * src must not overlap. */
MB_API mb_status_t mb_convert(void *dst, mb_dtype_t dst_dtype, const void *src,
                              mb_dtype_t src_dtype, size_t count,
                              unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
