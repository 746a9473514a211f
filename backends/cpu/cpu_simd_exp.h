/* CPU backend — exp on 16 f32 lanes (AVX-512F), the one vector exp of the
 * AVX-512 kernels: softmax (cpu_simd_norm.c), the activations
 * (cpu_simd_elt.c) and attention's online softmax (cpu_attention_loops.c).
 *
 * The scalar mb__cpu_expf (cpu_eltwise_math.h) is written for gcc's
 * vectoriser: no FMA intrinsics (whatever the compiler contracts), 2^n built
 * from bits in two halves and the edges as selects, ~38 operations per vector.
 * Here the same Cephes reduction runs on FMAs with a degree-6 polynomial
 * (below), and VSCALEFPS applies 2^n with one rounding (gradual underflow,
 * overflow to inf), ~13 operations: at most 1.03 ulp from exp over 2.7
 * million points of the normal range (Cephes' degree 7: 0.89), held to
 * 2 ulp over every binade by tests/test_cpu_simd_norm.c; the op's budget
 * for exp is 4. The FMA the lower degree saves was 7-10 % of softmax and
 * gelu_tanh on bf16 (one thread, in L1, Zen 4).
 *
 * The argument is clamped to [-110, 89] first: below -110 the result
 * rounds to 0 (exp(-104) is under half the least subnormal, and the clamp
 * keeps -inf from turning the reduction into inf - inf), above 89 it
 * overflows to inf. NaN passes the clamps (MAXPS/MINPS return the second
 * operand when either is NaN) and the arithmetic: NaN out.
 *
 * Only for x86-64 builds; callers select it at run time with
 * __builtin_cpu_supports("avx512f"). */
#ifndef MB_CPU_SIMD_EXP_H
#define MB_CPU_SIMD_EXP_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx512f"), always_inline)) static inline __m512
mb__cpu_simd_expf(__m512 x) {
  const __m512 xc = _mm512_min_ps(_mm512_set1_ps(89.0f),
                                  _mm512_max_ps(_mm512_set1_ps(-110.0f), x));
  /* n = round(x / ln2) in [-159, 128] (adding 1.5 2^23 rounds to an
   * integer); r = x - n ln2, ln2 split in two so that n ln2's high part is
   * exact (Cephes), |r| <= ln2 / 2. */
  const __m512 magic = _mm512_set1_ps(0x1.8p23f);
  const __m512 nf = _mm512_sub_ps(
      _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), magic), magic);
  __m512 r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(-2.12194440e-4f), r);
  /* e^r by a degree-6 polynomial (relative error 1.9e-9 on |r| <= ln2/2,
   * a near-minimax fit; Cephes' degree 7 is 4e-11, far under the f32
   * rounding either way), in Horner form: one FMA a step. */
  __m512 p = _mm512_set1_ps(1.3830105308e-3f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3747757599e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1668344289e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666421294e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.9999991059e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, nf);
}
#endif

#endif
