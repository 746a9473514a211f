/* CPU backend — the f32 steps between the matmuls of the bf16 attention
 * kernel (cpu_attention_onednn.c), one key block at a time: the online
 * softmax, which turns the block's scores into P's two bf16 terms, and the
 * accumulation of the partial outputs. Portable loops, and AVX-512 ones
 * where the CPU has it (bf16 rounded by VCVTNEPS2BF16 where it has
 * AVX512-BF16, the same answer); MB_CPU_NO_AVX512 set in the environment
 * keeps the portable ones, to test them on such a CPU. */
#include "cpu_attention_tile.h"
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"

#include <math.h>

enum { AQ = MB_ATT_AQ };

/* p = hi + lo, each bf16 (round to nearest even): p - hi is exact in f32. */
static inline void split2(float p, uint16_t *hi, uint16_t *lo) {
  const uint16_t h = mb__cvt_f32_to_bf16(p);
  *hi = h;
  *lo = mb__cvt_f32_to_bf16(p - mb__cvt_bf16_to_f32(h));
}

/* One block's online softmax for AQ rows: scores in t->s (unscaled), row r
 * sees keys [0, see[r]) of the block; writes P's two bf16 row sets (zero
 * past see[r]) and the rescale factors. The scale is applied to the max
 * alone in the first pass: it is positive and rounding is monotone, so
 * fl(scale max_j s_j) = max_j fl(scale s_j). */
MB_CPU_CLONES static void softmax_block(mb_att_tile_t *t, const int64_t *see,
                                        float *alpha) {
  const int64_t kt = t->kt;
  for (int r = 0; r < AQ; ++r) {
    const float *restrict s = t->s + r * kt;
    uint16_t *restrict hi = t->p + r * kt, *restrict lo = hi + AQ * kt;
    const int64_t n = see[r];
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; ++j) mx = mb__cpu_maxf(s[j], mx);
    mx = mb__cpu_maxf(mx * t->scale, t->m[r]);
    /* A row that has seen no key yet keeps m = -inf: exp(-inf - 0) = 0. */
    const float base = mx == -INFINITY ? 0.0f : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < kt; ++j) {
      const float e =
          mb__cpu_selectf(j < n, mb__cpu_expf(s[j] * t->scale - base), 0.0f);
      sum += e;
      split2(e, &hi[j], &lo[j]);
    }
    alpha[r] = mb__cpu_expf(t->m[r] - base);
    t->l[r] = t->l[r] * alpha[r] + sum;
    t->m[r] = mx;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "cpu_simd.h"
#include "cpu_simd_bf16.h"
#include "cpu_simd_exp.h"
#define MB_ATT_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define MB_ATT_AVX512BF16 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#define MB_ATT_SW(v) mb__cpu_bf16_sw16(v)
#define MB_ATT_HW(v) mb__cpu_bf16_hw16(v, 0xffff)

/* The lanes of keys [j, j + 16) below n. */
static inline __mmask16 visible(int64_t j, int64_t n) {
  return j < n ? (__mmask16)mb__cpu_mask16((size_t)(n - j)) : 0;
}

/* softmax_block on 16 lanes (kt is a multiple of 16): the same steps, the
 * row sum in 16 partial sums, exp's argument s scale - base by one FMA; the
 * keys a row does not see are skipped in the max and stored as zeros
 * without an exp (the masked end of a causal block). What is per row (the
 * new max, the rescale factor's exp, the running sum) is done for 16 rows
 * at a time between the passes: one row at a time it cost as much as 20
 * of the row's vectors (a stand-alone loop on this VM, 128 x 256 block:
 * 11.9 -> 8.8 ns a vector; 128 x 128: 14.2 -> 9.4). CVT rounds to bf16. */
#define MB_ATT_SOFTMAX(name, TARGET, CVT)                                    \
  TARGET static void name(mb_att_tile_t *t, const int64_t *see,              \
                          float *alpha) {                                    \
    const int64_t kt = t->kt;                                                \
    const __m512 scale = _mm512_set1_ps(t->scale);                           \
    const __m512 ninf = _mm512_set1_ps(-INFINITY);                           \
    float mx[AQ], base[AQ], sum[AQ];                                         \
    for (int r = 0; r < AQ; ++r) {                                           \
      const float *s = t->s + r * kt;                                        \
      __m512 vmx = ninf;                                                     \
      for (int64_t j = 0; j < see[r]; j += 16)                               \
        vmx = _mm512_mask_max_ps(vmx, visible(j, see[r]), vmx,               \
                                 _mm512_loadu_ps(s + j));                    \
      mx[r] = _mm512_reduce_max_ps(vmx);                                     \
    }                                                                        \
    /* A row that has seen no key yet keeps m = -inf: exp(-inf - 0) = 0. */  \
    for (int r = 0; r < AQ; r += 16) {                                       \
      const __m512 old = _mm512_loadu_ps(t->m + r);                          \
      const __m512 m =                                                       \
          _mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(mx + r), scale), old); \
      const __m512 b = _mm512_mask_blend_ps(                                 \
          _mm512_cmp_ps_mask(m, ninf, _CMP_EQ_OQ), m, _mm512_setzero_ps());  \
      _mm512_storeu_ps(base + r, b);                                         \
      _mm512_storeu_ps(alpha + r, mb__cpu_simd_expf(_mm512_sub_ps(old, b))); \
      _mm512_storeu_ps(t->m + r, m);                                         \
    }                                                                        \
    for (int r = 0; r < AQ; ++r) {                                           \
      const float *s = t->s + r * kt;                                        \
      uint16_t *hi = t->p + r * kt, *lo = hi + AQ * kt;                      \
      const int64_t n = see[r];                                              \
      const __m512 vb = _mm512_set1_ps(base[r]);                             \
      __m512 vsum = _mm512_setzero_ps();                                     \
      int64_t j = 0;                                                         \
      for (; j < n; j += 16) {                                               \
        const __m512 e = _mm512_maskz_mov_ps(                                \
            visible(j, n), mb__cpu_simd_expf(_mm512_fmsub_ps(                \
                               _mm512_loadu_ps(s + j), scale, vb)));         \
        vsum = _mm512_add_ps(vsum, e);                                       \
        const __m256i h = CVT(e);                                            \
        _mm256_storeu_si256((__m256i *)(hi + j), h);                         \
        _mm256_storeu_si256((__m256i *)(lo + j),                             \
                            CVT(_mm512_sub_ps(e, mb__cpu_bf16_widen16(h)))); \
      }                                                                      \
      for (; j < kt; j += 16) {                                              \
        _mm256_storeu_si256((__m256i *)(hi + j), _mm256_setzero_si256());    \
        _mm256_storeu_si256((__m256i *)(lo + j), _mm256_setzero_si256());    \
      }                                                                      \
      sum[r] = _mm512_reduce_add_ps(vsum);                                   \
    }                                                                        \
    for (int r = 0; r < AQ; r += 16)                                         \
      _mm512_storeu_ps(t->l + r, _mm512_fmadd_ps(_mm512_loadu_ps(t->l + r),  \
                                                 _mm512_loadu_ps(alpha + r), \
                                                 _mm512_loadu_ps(sum + r))); \
  }
MB_ATT_SOFTMAX(softmax_block_avx512, MB_ATT_AVX512, MB_ATT_SW)
MB_ATT_SOFTMAX(softmax_block_avx512bf16, MB_ATT_AVX512BF16, MB_ATT_HW)

MB_ATT_AVX512 static void accumulate_avx512(mb_att_tile_t *t,
                                            const float *alpha) {
  const int64_t d = t->d, d16 = d / 16 * 16;
  for (int r = 0; r < AQ; ++r) {
    float *o = t->o + r * d;
    const float *c0 = t->c + r * d, *c1 = c0 + AQ * d;
    const __m512 a = _mm512_set1_ps(alpha[r]);
    int64_t e = 0;
    for (; e < d16; e += 16) {
      const __m512 c =
          _mm512_add_ps(_mm512_loadu_ps(c0 + e), _mm512_loadu_ps(c1 + e));
      _mm512_storeu_ps(o + e, _mm512_fmadd_ps(_mm512_loadu_ps(o + e), a, c));
    }
    for (; e < d; ++e) o[e] = o[e] * alpha[r] + (c0[e] + c1[e]);
  }
}
#endif

/* o = alpha o + (c_hi + c_lo), row by row. */
MB_CPU_CLONES static void accumulate(mb_att_tile_t *t, const float *alpha) {
  const int64_t d = t->d;
  for (int r = 0; r < AQ; ++r) {
    float *restrict o = t->o + r * d;
    const float *restrict c0 = t->c + r * d, *restrict c1 = c0 + AQ * d;
    const float a = alpha[r];
    for (int64_t e = 0; e < d; ++e) o[e] = o[e] * a + (c0[e] + c1[e]);
  }
}

void mb__cpu_att_loops(int64_t kt, mb_att_softmax_fn *softmax,
                       mb_att_accumulate_fn *acc) {
  *softmax = softmax_block;
  *acc = accumulate;
#if defined(__x86_64__) && defined(__GNUC__)
  if (mb__cpu_has_avx512() && kt % 16 == 0) {
    *softmax = __builtin_cpu_supports("avx512bf16") ? softmax_block_avx512bf16
                                                    : softmax_block_avx512;
    *acc = accumulate_avx512;
  }
#else
  (void)kt;
#endif
}
