/* CPU backend — bf16 to f32 and f32 to bf16 on 16 AVX-512 lanes, the one
 * copy the element-wise kernels (cpu_simd_elt.c), the norms
 * (cpu_simd_norm.c), the quantize and dequantize loops (cpu_quant_x86.c,
 * cpu_dequant_x86.c) and attention's P (cpu_attention_loops.c) share.
 * Widening is exact; narrowing is mb__cvt_f32_to_bf16_sw lane by lane
 * (round to nearest even by adding 0x7fff plus the kept lsb and truncating;
 * a NaN truncated and made quiet, its sign kept), and the same answer from
 * vcvtneps2bf16 where the CPU has AVX512-BF16. x86-64 builds only. */
#ifndef MB_CPU_SIMD_BF16_H
#define MB_CPU_SIMD_BF16_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Each 32-bit lane's bf16 in its low half. */
static inline
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), always_inline))
    __m512i
    mb__cpu_bf16_lanes(__m512 v) {
  const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
  const __m512i bias = _mm512_add_epi32(
      _mm512_and_si512(hi, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7fff));
  const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
}

/* 16 bf16 as f32: the upper halves of the f32 patterns, exact (NaN
 * payloads kept). One VPERMW puts bf16 k into the upper half of 32-bit
 * lane k and zeroes the lower halves, where zero extension and a shift
 * took two operations (instruction tables give VPERMW one micro-op on Zen
 * 4 and Ice Lake onwards, two shuffle micro-ops on Skylake-X, where it may
 * cost more than the pair: measured only on Zen 4). On the Zen 4 VM, one
 * thread in L1, 8192 bf16: add 1.19-1.23x, relu 1.07-1.11x, silu and
 * quantize unchanged; 2 threads in L2, layernorm 1.09-1.14x, rmsnorm
 * 1.15-1.18x. */
static inline
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), always_inline))
    __m512
    mb__cpu_bf16_widen16(__m256i h) {
  const __m512i to_upper =
      _mm512_set_epi16(15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0, 8, 0, 7,
                       0, 6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1, 0, 0, 0);
  return _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(
      (__mmask32)0xAAAAAAAAu, to_upper, _mm512_castsi256_si512(h)));
}

/* The 16 bf16 in order. */
static inline
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), always_inline))
    __m256i
    mb__cpu_bf16_sw16(__m512 v) {
  return _mm512_cvtepi32_epi16(mb__cpu_bf16_lanes(v));
}

/* The same with VCVTNEPS2BF16 (AVX512-BF16): it rounds to nearest even and
 * quiets NaN as mb__cpu_bf16_lanes does (checked over every f32 pattern on
 * Sapphire Rapids) but reads subnormal inputs as zero, so a vector holding
 * one among the lanes of m (rare: a branch) takes the integer path. 3
 * operations instead of 7. */
static inline
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"),
                   always_inline)) __m256i
    mb__cpu_bf16_hw16(__m512 v, __mmask16 m) {
  if (__builtin_expect(_mm512_mask_fpclass_ps_mask(m, v, 0x20) != 0, 0))
    return mb__cpu_bf16_sw16(v);
  return (__m256i)_mm512_cvtneps_pbh(v);
}
#endif

#endif
