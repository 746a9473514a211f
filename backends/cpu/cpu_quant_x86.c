/* CPU backend — AVX-512 element loops of quantization, chosen at plan time
 * (mb__cpu_qvec) when the CPU has AVX512F/BW/VL/DQ; the portable loops of
 * cpu_quant_rows.c remain the reference path and the fallback.
 *
 * They read bf16, f16 or f32 directly (no f32 staging buffer), and write
 * e4m3, e5m2 or i8 bytes, or i4 nibble pairs. Every step is the scalar
 * converter's, lane by lane: the quotient is the f32 division x / s (vdivps,
 * round-to-nearest-even as the scalar '/'), the fp8 encoding is
 * mb__cvt_f32_to_f8's integer rounding and magic-number subnormal addition, i8
 * rounds with vcvtps2dq under explicit RNE after clamping to [-128, 127] in f32
 * (clamping to integer bounds commutes with rounding), a NaN giving 0. The
 * absmax is the maximum of |x|'s bit patterns, which order as the values do,
 * NaN lanes zeroed unless kept (the MX rule); its passes, which read X from
 * memory with little to compute, prefetch it MB_CPU_PREFETCH_AHEAD bytes
 * ahead (cpu_simd.h). */
#include "cpu_quant.h"

#include "mb_cvt.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

#include "cpu_simd.h"
#include "cpu_simd_bf16.h"

#define MB_QV_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c")))

/* ---- loading 16 elements as f32 (exact widening) ------------------------- */

MB_QV_TARGET static inline __m512 ld_bf16(const void *x, size_t e,
                                          __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)x + e);
  return mb__cpu_bf16_widen16(h);
}

MB_QV_TARGET static inline __m512 ld_f16(const void *x, size_t e, __mmask16 m) {
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)x + e));
}

MB_QV_TARGET static inline __m512 ld_f32(const void *x, size_t e, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, (const float *)x + e);
}

/* ---- f32 -> code, 16 lanes (as 32-bit lanes holding the byte) ------------ */

/* mb__cvt_f32_to_f8, vectorised; the same constants, fewer operations:
 * the rebias is folded into the rounding constant (a pattern below the
 * smallest normal wraps, but takes the subnormal result), the odd bit is a
 * test-and-masked-add, the subnormal select a masked subtraction, NaN a
 * masked minimum, and the sign one ternary-logic OR. Checked against the
 * scalar converter for every f32 pattern when it was written. */
MB_QV_TARGET static inline __m512i f8_encode(__m512 v, unsigned man,
                                             uint32_t rebias,
                                             uint32_t min_normal, float magic,
                                             uint32_t max, uint32_t nan) {
  const unsigned shift = 23u - man;
  const __m512i u = _mm512_castps_si512(v);
  const __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
  const __mmask16 odd =
      _mm512_test_epi32_mask(a, _mm512_set1_epi32(1 << shift));
  __m512i r = _mm512_add_epi32(
      a, _mm512_set1_epi32((int)((1u << (shift - 1u)) - 1u - (rebias << 23))));
  r = _mm512_mask_add_epi32(r, odd, r, _mm512_set1_epi32(1));
  r = _mm512_srli_epi32(r, shift);
  const __m512 mg = _mm512_set1_ps(magic);
  const __mmask16 small =
      _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32((int)min_normal));
  r = _mm512_mask_sub_epi32(
      r, small, _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), mg)),
      _mm512_castps_si512(mg));
  const __mmask16 isnan =
      _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7F800000));
  r = _mm512_mask_min_epu32(_mm512_set1_epi32((int)nan), ~isnan, r,
                            _mm512_set1_epi32((int)max));
  /* r | (u >> 24 & 0x80) */
  return _mm512_ternarylogic_epi32(r, _mm512_srli_epi32(u, 24),
                                   _mm512_set1_epi32(0x80), 0xF8);
}

MB_QV_TARGET static inline __m512i enc_e4m3(__m512 v) {
  return f8_encode(v, 3u, 120u, 0x3C800000u, 0x1p14f, 0x7Eu, 0x7Fu);
}

MB_QV_TARGET static inline __m512i enc_e5m2(__m512 v) {
  return f8_encode(v, 2u, 112u, 0x38800000u, 0x1p7f, 0x7Bu, 0x7Eu);
}

/* mb__cvt_f32_to_int(v, -128, 127): NaN -> 0, else clamp, then RNE. The
 * clamps take v second, so a NaN passes both (MAXPS and MINPS return the
 * second operand when either is NaN) and converts to the integer
 * indefinite 0x80000000, whose low byte (vpmovdb keeps it) and low nibble
 * are the 0 NaN gives: no compare and mask a vector. */
MB_QV_TARGET static inline __m512i clamp_rne(__m512 v, float lo, float hi) {
  const __m512 c =
      _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), v));
  return _mm512_cvt_roundps_epi32(
      c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

MB_QV_TARGET static inline __m512i enc_i8(__m512 v) {
  return clamp_rne(v, -128.0f, 127.0f);
}

/* mb__cvt_f32_to_i4: as enc_i8, clamped to [-8, 7]; the code in the low
 * nibble of each lane (the bits above it are the sign's: nib_pairs keeps
 * only the nibble). */
MB_QV_TARGET static inline __m512i enc_i4(__m512 v) {
  return clamp_rne(v, -8.0f, 7.0f);
}

/* ---- the loops ----------------------------------------------------------- */

/* 32 codes (two vectors of them, as 32-bit lanes) as bytes. */
MB_QV_TARGET static inline __m256i bytes32(__m512i a, __m512i b) {
  return _mm256_set_m128i(_mm512_cvtepi32_epi8(b), _mm512_cvtepi32_epi8(a));
}

/* 64 codes (four vectors) as one line's bytes. */
MB_QV_TARGET static inline __m512i bytes64(__m512i a, __m512i b, __m512i c,
                                           __m512i d) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(bytes32(a, b)),
                            bytes32(c, d), 1);
}

/* Codes as bytes (b: 2k codes, each in its byte's low nibble) into k
 * bytes, each pair's first in the low nibble: a pair as a 16-bit word is
 * c0 | c1 << 8; shifted down 4, c1's nibble lies at bits 4-7, where one
 * ternary-logic select (0x000F ? word : shifted) keeps c0's nibble beside
 * it, and the narrowing keeps the low byte. For 64 codes from bytes64,
 * and for 32 from two vectors, this replaced a mask, an OR, a shift and a
 * narrowing from 64-bit lanes each 16 codes (one thread in L1, 8192 bf16
 * to i4 on Zen 4: row 0.127 -> 0.108 ns an element, group-128 0.138 ->
 * 0.109). */
MB_QV_TARGET static inline __m512i nib_pairs(__m512i b) {
  return _mm512_ternarylogic_epi32(_mm512_set1_epi16(0x000F), b,
                                   _mm512_srli_epi16(b, 4), 0xCA);
}
MB_QV_TARGET static inline __m256i nib64(__m512i a, __m512i b, __m512i c,
                                         __m512i d) {
  return _mm512_cvtepi16_epi8(nib_pairs(bytes64(a, b, c, d)));
}
MB_QV_TARGET static inline __m128i nib32(__m512i a, __m512i b) {
  return _mm256_cvtepi16_epi8(
      _mm512_castsi512_si256(nib_pairs(_mm512_castsi256_si512(bytes32(a, b)))));
}

/* A line of codes to o: streamed (non-temporal, o 64-byte aligned) when nt,
 * which skips reading each line of Q for ownership before writing it. */
MB_QV_TARGET static inline void put64(uint8_t *o, __m512i v, int nt) {
  if (nt)
    _mm512_stream_si512((__m512i *)o, v);
  else
    _mm512_storeu_si512(o, v);
}

/* Whether a piece of Q at o is streamed: the caller asks (nt) and the
 * piece starts on a line; any other piece keeps plain stores. */
static inline int stream_at(const void *o, int nt) {
  return nt && (uintptr_t)o % 64 == 0;
}

/* The scale of elements j..j+15 under lane mask m, for loops over one scale
 * (S1: vs, set up once) or one per element (SV: s[j..], masked-off lanes 1,
 * which divide 0 by 1: no flag, nothing stored); S1_(j) and SV_(j) element
 * j's, as a float. */
#define MB__QV_S1(j, m) vs
#define MB__QV_SV(j, m) _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, s + (j))
#define MB__QV_S1_(j) s
#define MB__QV_SV_(j) s[j]
#define MB__QV_SETUP1 const __m512 vs = _mm512_set1_ps(s)

/* q[qe..qe+n) = enc(ld(x, xe..) / S), a line of codes a step. */
#define MB__QV_QUANT(name, STYPE, SETUP, S, LD, ENC)                          \
  MB_QV_TARGET static void name(void *q, size_t qe, const void *x, size_t xe, \
                                STYPE s, size_t n, int nt) {                  \
    SETUP;                                                                    \
    uint8_t *o = (uint8_t *)q + qe;                                           \
    const int st = stream_at(o, nt);                                          \
    size_t j = 0;                                                             \
    for (; j + 64 <= n; j += 64) {                                            \
      __m512i c[4];                                                           \
      for (size_t k = 0; k < 4; ++k)                                          \
        c[k] = ENC(_mm512_div_ps(LD(x, xe + j + 16 * k, 0xFFFF),              \
                                 S(j + 16 * k, 0xFFFF)));                     \
      put64(o + j, bytes64(c[0], c[1], c[2], c[3]), st);                      \
    }                                                                         \
    for (; j < n; j += 16) {                                                  \
      const __mmask16 m = mb__cpu_mask16(n - j);                              \
      const __m512 a = _mm512_div_ps(LD(x, xe + j, m), S(j, m));              \
      _mm_mask_storeu_epi8(o + j, m, _mm512_cvtepi32_epi8(ENC(a)));           \
    }                                                                         \
  }
/* q_X_Q: one scale; qv_X_Q: one per element (a column scale). */
#define MB__QV_BYTES(xt, qt, LD, ENC)                                   \
  MB__QV_QUANT(q_##xt##_##qt, float, MB__QV_SETUP1, MB__QV_S1, LD, ENC) \
  MB__QV_QUANT(qv_##xt##_##qt, const float *, (void)0, MB__QV_SV, LD, ENC)
MB__QV_BYTES(bf16, e4m3, ld_bf16, enc_e4m3)
MB__QV_BYTES(bf16, e5m2, ld_bf16, enc_e5m2)
MB__QV_BYTES(bf16, i8, ld_bf16, enc_i8)
MB__QV_BYTES(f16, e4m3, ld_f16, enc_e4m3)
MB__QV_BYTES(f16, e5m2, ld_f16, enc_e5m2)
MB__QV_BYTES(f16, i8, ld_f16, enc_i8)
MB__QV_BYTES(f32, e4m3, ld_f32, enc_e4m3)
MB__QV_BYTES(f32, e5m2, ld_f32, enc_e5m2)
MB__QV_BYTES(f32, i8, ld_f32, enc_i8)

/* i4: q[qe..qe+n) = cvt(x / S), two codes a byte. A leading odd element
 * and a trailing even one share their byte with a neighbour and are set
 * alone (mb__cpu_set_nibble); 64 elements (32 bytes) and then 32 at a time
 * between, or 128 (a line) while streaming; S and S_ as above. */
#define MB__QV_I4V(LD, S, j) \
  enc_i4(_mm512_div_ps(LD(x, xe + (j), 0xFFFF), S((j), 0xFFFF)))
#define MB__QV_NIB16(LD, S, j) \
  nib32(MB__QV_I4V(LD, S, j), MB__QV_I4V(LD, S, (j) + 16))
#define MB__QV_NIB32(LD, S, j)                             \
  nib64(MB__QV_I4V(LD, S, j), MB__QV_I4V(LD, S, (j) + 16), \
        MB__QV_I4V(LD, S, (j) + 32), MB__QV_I4V(LD, S, (j) + 48))
#define MB__QV_QUANT_I4(name, STYPE, SETUP, S, S_, LD)                         \
  MB_QV_TARGET static void name(void *q, size_t qe, const void *x, size_t xe,  \
                                STYPE s, size_t n, int nt) {                   \
    SETUP;                                                                     \
    uint8_t *p = q;                                                            \
    size_t j = 0;                                                              \
    if ((qe & 1u) && n) {                                                      \
      const float v = _mm512_cvtss_f32(LD(x, xe, 1));                          \
      mb__cpu_set_nibble(p, qe, mb__cvt_f32_to_i4(v / S_(0)));                 \
      j = 1;                                                                   \
    }                                                                          \
    if (stream_at(p + (qe + j) / 2, nt))                                       \
      for (; j + 128 <= n; j += 128) {                                         \
        const __m256i lo = MB__QV_NIB32(LD, S, j);                             \
        const __m256i hi = MB__QV_NIB32(LD, S, j + 64);                        \
        put64(p + (qe + j) / 2,                                                \
              _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), 1);       \
      }                                                                        \
    for (; j + 64 <= n; j += 64)                                               \
      _mm256_storeu_si256((__m256i *)(p + (qe + j) / 2),                       \
                          MB__QV_NIB32(LD, S, j));                             \
    for (; j + 32 <= n; j += 32)                                               \
      _mm_storeu_si128((__m128i *)(p + (qe + j) / 2), MB__QV_NIB16(LD, S, j)); \
    if (n - j >= 2) { /* whole bytes of the tail */                            \
      const size_t r = (n - j) & ~(size_t)1;                                   \
      const __mmask16 m0 = mb__cpu_mask16(r);                                  \
      const __mmask16 m1 = mb__cpu_mask16(r > 16 ? r - 16 : 0);                \
      const __m512 a = _mm512_div_ps(LD(x, xe + j, m0), S(j, m0));             \
      const __m512 b = _mm512_div_ps(LD(x, xe + j + 16, m1), S(j + 16, m1));   \
      _mm_mask_storeu_epi8(p + (qe + j) / 2, mb__cpu_mask16(r / 2),            \
                           nib32(enc_i4(a), enc_i4(b)));                       \
      j += r;                                                                  \
    }                                                                          \
    if (j < n) {                                                               \
      const float v = _mm512_cvtss_f32(LD(x, xe + j, 1));                      \
      mb__cpu_set_nibble(p, qe + j, mb__cvt_f32_to_i4(v / S_(j)));             \
    }                                                                          \
  }
#define MB__QV_I4(xt, LD)                                                      \
  MB__QV_QUANT_I4(q_##xt##_i4, float, MB__QV_SETUP1, MB__QV_S1, MB__QV_S1_,    \
                  LD)                                                          \
  MB__QV_QUANT_I4(qv_##xt##_i4, const float *, (void)0, MB__QV_SV, MB__QV_SV_, \
                  LD)
MB__QV_I4(bf16, ld_bf16)
MB__QV_I4(f16, ld_f16)
MB__QV_I4(f32, ld_f32)

/* max |x| pattern; 16-bit formats compare their own patterns (bf16's are
 * f32's upper halves; f16's order as the values do too), then widen.
 * NaN patterns lie above infinity's, so a maximum of plain |x| patterns
 * that is no NaN saw none: it is the answer unless it is a NaN and NaN
 * is to be skipped, when the span is read again with NaN lanes zeroed
 * (rare: a tensor with a NaN): an AND and a maximum a vector instead of
 * a compare and a masked move besides. */
MB_QV_TARGET static inline __m512i abs16(const void *x, size_t e, __mmask32 m,
                                         uint16_t inf, int keep_nan) {
  const __m512i v =
      _mm512_and_si512(_mm512_maskz_loadu_epi16(m, (const uint16_t *)x + e),
                       _mm512_set1_epi16(0x7FFF));
  if (keep_nan) return v;
  const __mmask32 nan =
      _mm512_cmpgt_epu16_mask(v, _mm512_set1_epi16((short)inf));
  return _mm512_mask_mov_epi16(v, nan, _mm512_setzero_si512());
}

MB_QV_TARGET static inline uint16_t amax16_pass(const void *x, size_t e0,
                                                size_t n, uint16_t inf,
                                                int keep_nan) {
  __m512i m0 = _mm512_setzero_si512(), m1 = m0;
  size_t j = 0;
  for (; j + 64 <= n; j += 64) {
    mb__cpu_prefetch_ahead(x, (e0 + j) * 2);
    mb__cpu_prefetch_ahead(x, (e0 + j) * 2 + 64);
    m0 = _mm512_max_epu16(m0, abs16(x, e0 + j, ~0u, inf, keep_nan));
    m1 = _mm512_max_epu16(m1, abs16(x, e0 + j + 32, ~0u, inf, keep_nan));
  }
  for (; j < n; j += 32) {
    const __mmask32 m = mb__cpu_mask32(n - j);
    m0 = _mm512_max_epu16(m0, abs16(x, e0 + j, m, inf, keep_nan));
  }
  m0 = _mm512_max_epu16(m0, m1);
  /* Fold 32 halves: as 32-bit lanes, the larger half of each; then max. */
  const __m512i lo = _mm512_and_si512(m0, _mm512_set1_epi32(0xFFFF));
  const __m512i hi = _mm512_srli_epi32(m0, 16);
  return (uint16_t)_mm512_reduce_max_epu32(_mm512_max_epu32(lo, hi));
}

MB_QV_TARGET static uint16_t amax16(const void *x, size_t e0, size_t n,
                                    uint16_t inf, int keep_nan) {
  const uint16_t m = amax16_pass(x, e0, n, inf, 1);
  return m > inf && !keep_nan ? amax16_pass(x, e0, n, inf, 0) : m;
}

MB_QV_TARGET static uint32_t amax_bf16(const void *x, size_t e0, size_t n,
                                       int keep_nan) {
  return (uint32_t)amax16(x, e0, n, 0x7F80u, keep_nan) << 16;
}

/* The f16 pattern widened as the portable load widens it (NaN payloads
 * included), so the kept-NaN maximum is its pattern too. */
MB_QV_TARGET static uint32_t amax_f16(const void *x, size_t e0, size_t n,
                                      int keep_nan) {
  return mb__cvt_bits(mb__cvt_f16_to_f32(amax16(x, e0, n, 0x7C00u, keep_nan)));
}

MB_QV_TARGET static uint32_t amax_f32(const void *x, size_t e0, size_t n,
                                      int keep_nan) {
  const float *p = (const float *)x + e0;
  const __m512i ab = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i inf = _mm512_set1_epi32(0x7F800000);
  __m512i m0 = _mm512_setzero_si512();
  for (size_t j = 0; j < n; j += 16) {
    const __mmask16 m = mb__cpu_mask16(n - j);
    mb__cpu_prefetch_step16(p, j * 4, 4);
    __m512i v = _mm512_and_si512(_mm512_maskz_loadu_epi32(m, p + j), ab);
    if (!keep_nan)
      v = _mm512_mask_mov_epi32(v, _mm512_cmpgt_epu32_mask(v, inf),
                                _mm512_setzero_si512());
    m0 = _mm512_max_epu32(m0, v);
  }
  return (uint32_t)_mm512_reduce_max_epu32(m0);
}

/* Rows taken together by the per-column absmax: their maxima stay in a
 * register across the group, and m is read and written once a group. */
enum { AMAXV_ROWS = 8 };

/* m[j] = max(m[j], |x[e0 + r * ld + j]|) over r < rows, as patterns, NaN
 * lanes zeroed unless kept; LD widens exactly (the pattern shifted, NaN
 * payloads kept, as the portable load keeps them). f32: a row at a time. */
MB_QV_TARGET static void amaxv_f32(uint32_t *m, const void *x, size_t e0,
                                   size_t ld, size_t rows, size_t n,
                                   int keep_nan) {
  const __m512i ab = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i inf = _mm512_set1_epi32(0x7F800000);
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < n; j += 16) {
      const size_t e = e0 + r * ld + j;
      mb__cpu_prefetch_step16(x, e * 4, 4);
      const __mmask16 k = mb__cpu_mask16(n - j);
      __m512i v = _mm512_and_si512(_mm512_castps_si512(ld_f32(x, e, k)), ab);
      if (!keep_nan)
        v = _mm512_mask_mov_epi32(v, _mm512_cmpgt_epu32_mask(v, inf),
                                  _mm512_setzero_si512());
      _mm512_mask_storeu_epi32(
          m + j, k, _mm512_max_epu32(v, _mm512_maskz_loadu_epi32(k, m + j)));
    }
}

/* bf16: 32 columns' maxima as bf16 patterns over a group of rows (their
 * order is f32's), then widened into m. A group's maximum above infinity's
 * pattern saw a NaN: unless NaN is kept, those 32 columns are read again
 * with NaN lanes zeroed (abs16). */
MB_QV_TARGET static void amaxv_bf16(uint32_t *m, const void *x, size_t e0,
                                    size_t ld, size_t rows, size_t n,
                                    int keep_nan) {
  for (size_t r0 = 0; r0 < rows; r0 += AMAXV_ROWS) {
    const size_t rb = rows - r0 < AMAXV_ROWS ? rows - r0 : AMAXV_ROWS;
    for (size_t j = 0; j < n; j += 32) {
      const __mmask32 k = mb__cpu_mask32(n - j);
      const size_t e = e0 + r0 * ld + j;
      __m512i a = _mm512_setzero_si512();
      for (size_t r = 0; r < rb; ++r)
        a = _mm512_max_epu16(a, abs16(x, e + r * ld, k, 0x7F80u, 1));
      if (!keep_nan && _mm512_cmpgt_epu16_mask(a, _mm512_set1_epi16(0x7F80))) {
        a = _mm512_setzero_si512();
        for (size_t r = 0; r < rb; ++r)
          a = _mm512_max_epu16(a, abs16(x, e + r * ld, k, 0x7F80u, 0));
      }
      const __m512i lo =
          _mm512_castps_si512(mb__cpu_bf16_widen16(_mm512_castsi512_si256(a)));
      const __m512i hi = _mm512_castps_si512(
          mb__cpu_bf16_widen16(_mm512_extracti64x4_epi64(a, 1)));
      const __mmask16 k0 = (__mmask16)k, k1 = (__mmask16)(k >> 16);
      _mm512_mask_storeu_epi32(
          m + j, k0, _mm512_max_epu32(lo, _mm512_maskz_loadu_epi32(k0, m + j)));
      _mm512_mask_storeu_epi32(
          m + j + 16, k1,
          _mm512_max_epu32(hi, _mm512_maskz_loadu_epi32(k1, m + j + 16)));
    }
  }
}

/* ---- a row's blocks in one call ------------------------------------------
 * Blocks of g elements along a row (1 x G groups, a row of 128 x 128 tiles)
 * called one at a time through the table cost an indirect call each and
 * lose the loop around them to the call (a group of 128 bf16 is a handful
 * of vectors): here the block loop calls the loops above directly, and
 * flatten inlines them. */
#define MB__QV_FLAT MB_QV_TARGET __attribute__((flatten))

/* m[k] = max(m[k], AMAX of block k), the blocks of g from e0 over n. */
#define MB__QV_AMAXG(name, AMAX)                                      \
  MB__QV_FLAT static void name(uint32_t *m, const void *x, size_t e0, \
                               size_t n, size_t g, int keep_nan) {    \
    MB__CPU_PIECES(k, j, len, g, 0, n) {                              \
      const uint32_t a = AMAX(x, e0 + j, len, keep_nan);              \
      m[k] = a > m[k] ? a : m[k];                                     \
    }                                                                 \
  }
MB__QV_AMAXG(amaxg_bf16, amax_bf16)
MB__QV_AMAXG(amaxg_f16, amax_f16)
MB__QV_AMAXG(amaxg_f32, amax_f32)

/* Q1 block by block over n elements from qe / xe, which start `off` into
 * a block of g: the first piece is the rest of that block, and piece k is
 * divided by s[k]. */
#define MB__QV_QUANTG(name, Q1)                                                \
  MB__QV_FLAT static void name(void *q, size_t qe, const void *x, size_t xe,   \
                               const float *s, size_t g, size_t off, size_t n, \
                               int nt) {                                       \
    MB__CPU_PIECES(k, j, len, g, off, n) {                                     \
      Q1(q, qe + j, x, xe + j, s[k], len, nt);                                 \
    }                                                                          \
  }
#define MB__QV_QUANTG_ALL(qt)             \
  MB__QV_QUANTG(g_bf16_##qt, q_bf16_##qt) \
  MB__QV_QUANTG(g_f16_##qt, q_f16_##qt)   \
  MB__QV_QUANTG(g_f32_##qt, q_f32_##qt)
MB__QV_QUANTG_ALL(e4m3)
MB__QV_QUANTG_ALL(e5m2)
MB__QV_QUANTG_ALL(i8)
MB__QV_QUANTG_ALL(i4)

/* 16 x 16 f32 in registers: r[i][j] -> r[j][i] (unpack pairs, then
 * 64-bit pairs, then 128-bit lanes twice). */
MB_QV_TARGET static inline void tr16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int k = 0; k < 2; ++k) {
      const __m512d a = _mm512_castps_pd(t[i + k]),
                    b = _mm512_castps_pd(t[i + k + 2]);
      u[i + 2 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      u[i + 2 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
  for (int i = 0; i < 16; i += 8)
    for (int k = 0; k < 4; ++k) {
      t[i + k] = _mm512_shuffle_f32x4(u[i + k], u[i + k + 4], 0x88);
      t[i + k + 4] = _mm512_shuffle_f32x4(u[i + k], u[i + k + 4], 0xDD);
    }
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0x88);
    r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0xDD);
  }
}

/* t[i * ld + j] = x[xe + j * xld + i], i, j < 16, widened exactly. */
#define MB__QV_TILE(name, LD)                                                  \
  MB_QV_TARGET static void name(float *t, size_t ld, const void *x, size_t xe, \
                                size_t xld) {                                  \
    __m512 r[16];                                                              \
    for (int j = 0; j < 16; ++j) r[j] = LD(x, xe + (size_t)j * xld, 0xFFFF);   \
    tr16(r);                                                                   \
    for (int i = 0; i < 16; ++i) _mm512_storeu_ps(t + (size_t)i * ld, r[i]);   \
  }
MB__QV_TILE(tile_bf16, ld_bf16)
MB__QV_TILE(tile_f16, ld_f16)
MB__QV_TILE(tile_f32, ld_f32)

/* The same 16 x 16 turned and quantized in registers: each of the 16
 * vectors is a row of Q, divided by its scale and encoded, 16 codes
 * stored. */
#define MB__QV_TILEQ(name, LD, ENC)                                          \
  MB_QV_TARGET static void name(uint8_t *c, size_t ld, const void *x,        \
                                size_t xe, size_t xld, const float *s) {     \
    __m512 r[16];                                                            \
    for (int j = 0; j < 16; ++j) r[j] = LD(x, xe + (size_t)j * xld, 0xFFFF); \
    tr16(r);                                                                 \
    for (int i = 0; i < 16; ++i)                                             \
      _mm_storeu_si128((__m128i *)(c + (size_t)i * ld),                      \
                       _mm512_cvtepi32_epi8(                                 \
                           ENC(_mm512_div_ps(r[i], _mm512_set1_ps(s[i]))))); \
  }
#define MB__QV_TILEQ_ALL(qt)                    \
  MB__QV_TILEQ(tq_bf16_##qt, ld_bf16, enc_##qt) \
  MB__QV_TILEQ(tq_f16_##qt, ld_f16, enc_##qt)   \
  MB__QV_TILEQ(tq_f32_##qt, ld_f32, enc_##qt)
MB__QV_TILEQ_ALL(e4m3)
MB__QV_TILEQ_ALL(e5m2)
MB__QV_TILEQ_ALL(i8)

MB_QV_TARGET static void put_rows(void *q, size_t qe, size_t qld,
                                  const uint8_t *c, size_t ld, size_t rows,
                                  size_t w, int nt) {
  for (size_t i = 0; i < rows; ++i) {
    uint8_t *o = (uint8_t *)q + qe + i * qld;
    const uint8_t *src = c + i * ld;
    const int st = stream_at(o, nt);
    size_t j = 0;
    for (; j + 64 <= w; j += 64) put64(o + j, _mm512_loadu_si512(src + j), st);
    if (j < w) {
      const __mmask64 m = (1ull << (w - j)) - 1u; /* w - j < 64 */
      _mm512_mask_storeu_epi8(o + j, m, _mm512_maskz_loadu_epi8(m, src + j));
    }
  }
}

/* X's dtype, Q's, and the loops: by X's dtype (amax, amaxv, amaxg, tile)
 * and by both (quant1, quantv, quantg, tileq: none for i4). */
#define MB__QV_ENTRY(XD, QD, xt, qt, AMAXV, TILEQ)                      \
  {                                                                     \
    XD, QD, amax_##xt, AMAXV, q_##xt##_##qt, qv_##xt##_##qt, tile_##xt, \
        amaxg_##xt, g_##xt##_##qt, TILEQ, put_rows                      \
  }
/* The four Q dtypes of one X dtype. */
#define MB__QV_ENTRIES(XD, xt, AMAXV)                                     \
  MB__QV_ENTRY(XD, MB_DTYPE_F8E4M3, xt, e4m3, AMAXV, tq_##xt##_e4m3),     \
      MB__QV_ENTRY(XD, MB_DTYPE_F8E5M2, xt, e5m2, AMAXV, tq_##xt##_e5m2), \
      MB__QV_ENTRY(XD, MB_DTYPE_I8, xt, i8, AMAXV, tq_##xt##_i8),         \
      MB__QV_ENTRY(XD, MB_DTYPE_I4, xt, i4, AMAXV, NULL)
static const mb_cpu_qvec_t k_vec[] = {
    MB__QV_ENTRIES(MB_DTYPE_BF16, bf16, amaxv_bf16),
    MB__QV_ENTRIES(MB_DTYPE_F16, f16, NULL),
    MB__QV_ENTRIES(MB_DTYPE_F32, f32, amaxv_f32),
};

/* F16C, CPUID leaf 1 ECX bit 29: clang's __builtin_cpu_supports does not
 * take "f16c" (an error, not a warning, in clang 14). */
static int has_f16c(void) {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}

int mb__cpu_quant_vec_cpu(void) {
  return mb__cpu_has_avx512() && has_f16c();
}

const mb_cpu_qvec_t *mb__cpu_qvec(mb_dtype_t xdt, mb_dtype_t qdt) {
  if (!mb__cpu_quant_vec_cpu()) return NULL;
  for (size_t i = 0; i < sizeof k_vec / sizeof k_vec[0]; ++i)
    if (k_vec[i].xdt == xdt && k_vec[i].qdt == qdt) return &k_vec[i];
  return NULL;
}

#else

int mb__cpu_quant_vec_cpu(void) {
  return 0;
}

const mb_cpu_qvec_t *mb__cpu_qvec(mb_dtype_t xdt, mb_dtype_t qdt) {
  (void)xdt, (void)qdt;
  return NULL;
}

#endif
