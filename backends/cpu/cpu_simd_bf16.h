/* CPU backend — f32 to bf16 on 16 AVX-512 lanes, mb__cvt_f32_to_bf16_sw
 * lane by lane (round to nearest even by adding 0x7fff plus the kept lsb
 * and truncating; a NaN truncated and made quiet, its sign kept): the one
 * copy the element-wise kernels (cpu_simd_elt.c) and the dequantize loops
 * (cpu_dequant_x86.c) share. vcvtneps2bf16 rounds the same way but
 * flushes f32 subnormals to zero. x86-64 builds only. */
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
#endif

#endif
