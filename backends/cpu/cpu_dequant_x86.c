/* CPU backend — AVX-512 loops of dequantization, chosen at plan time
 * (mb__cpu_dqvec) when the CPU has AVX512F/BW/VL/DQ; the portable loads,
 * scaling and stores of cpu_quant_rows.c remain the reference path and the
 * fallback.
 *
 * One pass from the quantized bytes to the output: decode 16 elements to
 * f32 exactly, multiply by the scale (vmulps, the f32 product of the
 * semantics), round to the output dtype — the portable path does the same
 * three steps through an f32 buffer, one loop each. Each decoder is the
 * scalar converter of mb_cvt.h lane by lane, NaN patterns included:
 *  - e4m3: a normal value's bits slide into place and are rebiased with one
 *    add, a subnormal is its significand times 2^-9, 0x7F is the quiet NaN;
 *  - e5m2: the upper byte of an f16 (vcvtph2ps), whose NaNs are made the
 *    scalar converter's 0x7FC00000 (the instruction keeps the payload);
 *  - i8: a sign-extending widening;
 *  - i4 and e2m1: each nibble indexes a 16-entry table (vpermps).
 * Stores: bf16 rounds to nearest-even with an integer add
 * (cpu_simd_bf16.h), f16 is vcvtps2ph under RNE with NaN made 0x7E00 as
 * the scalar store.
 *
 * With one scale and a 16-bit output, an output depends on its code alone:
 * the loop computes every code's output once (mb_cpu_dqtab_t, 256 byte
 * codes or 16 nibbles, by the same decode, product and rounding) and then
 * looks outputs up, 32 a step (vpermt2w / vpermw), reading the codes
 * MB_CPU_PREFETCH_AHEAD bytes ahead once a line (cpu_simd.h). Bit for bit
 * what the computed loop gives; 8192^2 to bf16 on the Xeon VM, mbench
 * interleaved: e4m3 with row scales 2.1x, i8 1.6x, i4 with group-128
 * scales 2.5x faster (docs/results/cpu.md). */
#include "cpu_quant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "cpu_simd.h"

#include "cpu_simd_bf16.h"
#include "mb_cvt.h"

#define MB_DQ_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c")))

/* ---- decoders: 16 bytes (as 32-bit lanes) -> f32 ------------------------- */

MB_DQ_TARGET static inline __m512 dec_e4m3(__m512i b) {
  const __m512i mag = _mm512_and_si512(b, _mm512_set1_epi32(0x7F));
  const __m512i sign =
      _mm512_slli_epi32(_mm512_and_si512(b, _mm512_set1_epi32(0x80)), 24);
  __m512i r = _mm512_add_epi32(_mm512_slli_epi32(mag, 20),
                               _mm512_set1_epi32(120 << 23));
  const __m512 sub =
      _mm512_mul_ps(_mm512_cvtepi32_ps(mag), _mm512_set1_ps(0x1p-9f));
  r = _mm512_mask_mov_epi32(r,
                            _mm512_cmplt_epu32_mask(mag, _mm512_set1_epi32(8)),
                            _mm512_castps_si512(sub));
  r = _mm512_mask_mov_epi32(
      r, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7F)),
      _mm512_set1_epi32(0x7FC00000));
  return _mm512_castsi512_ps(_mm512_or_si512(r, sign));
}

MB_DQ_TARGET static inline __m512 dec_e5m2(__m512i b) {
  const __m512 f =
      _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_slli_epi32(b, 8)));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(
      _mm512_and_si512(b, _mm512_set1_epi32(0x7F)), _mm512_set1_epi32(0x7C));
  const __m512i sign =
      _mm512_slli_epi32(_mm512_and_si512(b, _mm512_set1_epi32(0x80)), 24);
  return _mm512_mask_mov_ps(f, nan,
                            _mm512_castsi512_ps(_mm512_or_si512(
                                sign, _mm512_set1_epi32(0x7FC00000))));
}

MB_DQ_TARGET static inline __m512 dec_i8(__m512i b) {
  /* b holds zero-extended bytes: shift the sign into place and back */
  return _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(b, 24), 24));
}

/* The value of each nibble 0..15 (mb__cvt_i4_at, mb__cvt_e2m1_to_f32). */
static const float k_i4[16] = {0,  1,  2,  3,  4,  5,  6,  7,
                               -8, -7, -6, -5, -4, -3, -2, -1};
static const float k_e2m1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,
                                 4.0f,  6.0f,  -0.0f, -0.5f, -1.0f, -1.5f,
                                 -2.0f, -3.0f, -4.0f, -6.0f};

/* ---- stores ---------------------------------------------------------------
 * st_*: 16 lanes under a mask; st2_*: 32 whole lanes, one 64-byte store
 * (a masked down-converting store, vpmovdw to memory, measured the slowest
 * instruction of the loop), non-temporal where asked and that store's
 * address is 64-byte aligned (a span that starts off a line streams
 * nothing). */

MB_DQ_TARGET static inline void st_f32(void *y, size_t e, __m512 v,
                                       __mmask16 m) {
  _mm512_mask_storeu_ps((float *)y + e, m, v);
}

MB_DQ_TARGET static inline void st64(void *p, __m512i v, int nt) {
  if (nt && !((uintptr_t)p & 63))
    _mm512_stream_si512(p, v);
  else
    _mm512_storeu_si512(p, v);
}

MB_DQ_TARGET static inline void st2_f32(void *y, size_t e, __m512 a, __m512 b,
                                        int nt) {
  st64((float *)y + e, _mm512_castps_si512(a), nt);
  st64((float *)y + e + 16, _mm512_castps_si512(b), nt);
}

/* mb__cvt_f32_to_bf16_sw in each 32-bit lane (the result in its low half). */
MB_DQ_TARGET static inline __m512i bf16_lanes(__m512 v) {
  return mb__cpu_bf16_lanes(v);
}

/* mb__cvt_f32_to_f16_sw in each 32-bit lane: vcvtps2ph under RNE, a NaN
 * made 0x7E00 with its sign (the instruction keeps payload bits). */
MB_DQ_TARGET static inline __m512i f16_lanes(__m512 v) {
  const __m512i h = _mm512_cvtepu16_epi32(
      _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  const __m512i qnan = _mm512_or_si512(
      _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(v), 16),
                       _mm512_set1_epi32(0x8000)),
      _mm512_set1_epi32(0x7E00));
  return _mm512_mask_mov_epi32(h, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), qnan);
}

/* The low halves of a's and then b's 32-bit lanes, as 32 halves. */
MB_DQ_TARGET static inline __m512i pack_halves(__m512i a, __m512i b) {
  const __m512i even = _mm512_set_epi16(
      62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28,
      26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  return _mm512_permutex2var_epi16(a, even, b);
}

#define MB__DQ_ST_HALF(out)                                                   \
  MB_DQ_TARGET static inline void st_##out(void *y, size_t e, __m512 v,       \
                                           __mmask16 m) {                     \
    _mm256_mask_storeu_epi16((uint16_t *)y + e, m,                            \
                             _mm512_cvtepi32_epi16(out##_lanes(v)));          \
  }                                                                           \
  MB_DQ_TARGET static inline void st2_##out(void *y, size_t e, __m512 a,      \
                                            __m512 b, int nt) {               \
    st64((uint16_t *)y + e, pack_halves(out##_lanes(a), out##_lanes(b)), nt); \
  }
MB__DQ_ST_HALF(bf16)
MB__DQ_ST_HALF(f16)

/* ---- byte formats: y[ye..ye+n) = st(dec(q[qe..qe+n)) * s) ---------------- */

/* S(j, m): the scale vector of elements j..j+15 under mask m. */
#define MB__DQ_S1(j, m) vs
#define MB__DQ_SV(j, m) _mm512_maskz_loadu_ps(m, s + (j))
#define MB__DQ_BYTES(name, STYPE, SETUP, S, DEC, OUT)                          \
  MB_DQ_TARGET static void name(void *y, size_t ye, const void *q, size_t qe,  \
                                STYPE s, size_t n, int nt) {                   \
    SETUP;                                                                     \
    const uint8_t *p = (const uint8_t *)q + qe;                                \
    size_t j = 0;                                                              \
    for (; j + 32 <= n; j += 32) {                                             \
      const __m256i b = _mm256_loadu_si256((const __m256i *)(p + j));          \
      const __m512 a0 = _mm512_mul_ps(                                         \
          DEC(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(b))), S(j, 0xFFFF)); \
      const __m512 a1 = _mm512_mul_ps(                                         \
          DEC(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(b, 1))),           \
          S(j + 16, 0xFFFF));                                                  \
      st2_##OUT(y, ye + j, a0, a1, nt);                                        \
    }                                                                          \
    for (; j < n; j += 16) {                                                   \
      const __mmask16 m = mb__cpu_mask16(n - j);                               \
      const __m512i b = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p + j));  \
      st_##OUT(y, ye + j, _mm512_mul_ps(DEC(b), S(j, m)), m);                  \
    }                                                                          \
  }
/* Each body (BYTES, NIB) for one input: one scale and one per element
 * (d1_, dv_), to each output. */
#define MB__DQ_PAIR(BODY, in, ARG, out)                                        \
  BODY(c1_##in##_##out, float, const __m512 vs = _mm512_set1_ps(s), MB__DQ_S1, \
       ARG, out)                                                               \
  BODY(dv_##in##_##out, const float *, (void)0, MB__DQ_SV, ARG, out)
#define MB__DQ_ALL(BODY, in, ARG)  \
  MB__DQ_PAIR(BODY, in, ARG, f32)  \
  MB__DQ_PAIR(BODY, in, ARG, bf16) \
  MB__DQ_PAIR(BODY, in, ARG, f16)
MB__DQ_ALL(MB__DQ_BYTES, e4m3, dec_e4m3)
MB__DQ_ALL(MB__DQ_BYTES, e5m2, dec_e5m2)
MB__DQ_ALL(MB__DQ_BYTES, i8, dec_i8)

/* ---- nibble formats -------------------------------------------------------
 * A leading odd element is the high nibble of its byte; then 32 elements
 * (16 bytes) at a time: low nibbles are the even elements, high the odd,
 * interleaved by one two-source permute each half; a trailing odd count
 * reads the low nibble of its last byte. */
MB_DQ_TARGET static inline void nib32(const uint8_t *p, size_t bytes, __m512 t,
                                      __m512 *lo, __m512 *hi) {
  const __m512i b =
      _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mb__cpu_mask16(bytes), p));
  const __m512 l =
      _mm512_permutexvar_ps(_mm512_and_si512(b, _mm512_set1_epi32(0xF)), t);
  const __m512 h = _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), t);
  *lo = _mm512_permutex2var_ps(
      l,
      _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
      h);
  *hi =
      _mm512_permutex2var_ps(l,
                             _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12,
                                               28, 13, 29, 14, 30, 15, 31),
                             h);
}

#define MB__DQ_NIB(name, STYPE, SETUP, S, TABLE, OUT)                         \
  MB_DQ_TARGET static void name(void *y, size_t ye, const void *q, size_t qe, \
                                STYPE s, size_t n, int nt) {                  \
    SETUP;                                                                    \
    const __m512 t = _mm512_loadu_ps(TABLE);                                  \
    const uint8_t *p = q;                                                     \
    size_t j = 0;                                                             \
    if ((qe & 1u) && n) {                                                     \
      const __m512 v = _mm512_set1_ps(TABLE[p[qe / 2] >> 4]);                 \
      st_##OUT(y, ye, _mm512_mul_ps(v, S(0, 1)), 1);                          \
      j = 1;                                                                  \
    }                                                                         \
    for (; j < n; j += 32) {                                                  \
      const size_t r = n - j < 32 ? n - j : 32;                               \
      __m512 lo, hi;                                                          \
      nib32(p + (qe + j) / 2, (r + 1) / 2, t, &lo, &hi);                      \
      if (r == 32) {                                                          \
        st2_##OUT(y, ye + j, _mm512_mul_ps(lo, S(j, 0xFFFF)),                 \
                  _mm512_mul_ps(hi, S(j + 16, 0xFFFF)), nt);                  \
        continue;                                                             \
      }                                                                       \
      const __mmask16 m0 = mb__cpu_mask16(r),                                 \
                      m1 = mb__cpu_mask16(r > 16 ? r - 16 : 0);               \
      st_##OUT(y, ye + j, _mm512_mul_ps(lo, S(j, m0)), m0);                   \
      if (m1) st_##OUT(y, ye + j + 16, _mm512_mul_ps(hi, S(j + 16, m1)), m1); \
    }                                                                         \
  }
MB__DQ_ALL(MB__DQ_NIB, i4, k_i4)
MB__DQ_ALL(MB__DQ_NIB, e2m1, k_e2m1)

/* ---- one scale: computed (f32), or looked up (bf16, f16) ----------------- */

/* The deq1 of an f32 output: computed. */
#define MB__DQ_D1_F32(in)                                                      \
  MB_DQ_TARGET static void d1_##in##_f32(void *y, size_t ye, const void *q,    \
                                         size_t qe, float s, size_t n, int nt, \
                                         mb_cpu_dqtab_t *tab) {                \
    (void)tab;                                                                 \
    c1_##in##_f32(y, ye, q, qe, s, n, nt);                                     \
  }

/* Whether to look n outputs up in tab for (key, s): it holds them already
 * (the same scale bits, so a NaN scale matches itself and -0 is not 0), or
 * n >= min makes building them worth it (*build: they are to be built). */
static inline int use_tab(const mb_cpu_dqtab_t *tab, uint32_t key, float s,
                          size_t n, size_t min, int *build) {
  const int have = tab && tab->key == key && tab->s_bits == mb__cvt_bits(s);
  *build = !have;
  return have || (tab && n >= min);
}
#define MB__DQ_KEY(IN, OUT) ((uint32_t)MB_DTYPE_##IN << 16 | MB_DTYPE_##OUT)

/* A table is built for a span of at least this many elements, or used
 * when it is already there: 256 byte codes' outputs pay for themselves
 * over ~500 elements, 16 nibbles' (one vector) over a step of 32; below,
 * the blocks of 16 of NVFP4 would rebuild it every call. */
enum { TAB_MIN = 512, NIB_TAB_MIN = 32 };

/* 32 codes (16-bit lanes, 0..255) looked up in the 256 outputs t[8]: the
 * two-source permute takes an index's low 6 bits (64 entries, a pair of
 * registers), its bits 6 and 7 pick the pair. */
MB_DQ_TARGET static inline __m512i look256(const __m512i t[8], __m512i w) {
  const __m512i r0 = _mm512_permutex2var_epi16(t[0], w, t[1]);
  const __m512i r1 = _mm512_permutex2var_epi16(t[2], w, t[3]);
  const __m512i r2 = _mm512_permutex2var_epi16(t[4], w, t[5]);
  const __m512i r3 = _mm512_permutex2var_epi16(t[6], w, t[7]);
  const __mmask32 b6 = _mm512_test_epi16_mask(w, _mm512_set1_epi16(0x40));
  const __mmask32 b7 = _mm512_test_epi16_mask(w, _mm512_set1_epi16(0x80));
  return _mm512_mask_mov_epi16(_mm512_mask_mov_epi16(r0, b6, r1), b7,
                               _mm512_mask_mov_epi16(r2, b6, r3));
}

#define MB__DQ_BYTES_TAB(in, IN, DEC, out, OUT)                                \
  MB_DQ_TARGET static void d1_##in##_##out(void *y, size_t ye, const void *q,  \
                                           size_t qe, float s, size_t n,       \
                                           int nt, mb_cpu_dqtab_t *tab) {      \
    const uint32_t key = MB__DQ_KEY(IN, OUT);                                  \
    int build;                                                                 \
    if (!use_tab(tab, key, s, n, TAB_MIN, &build)) {                           \
      c1_##in##_##out(y, ye, q, qe, s, n, nt);                                 \
      return;                                                                  \
    }                                                                          \
    if (build) { /* every code, 32 a step, as c1 computes them */              \
      const __m512 vs = _mm512_set1_ps(s);                                     \
      for (int c = 0; c < 256; c += 32) {                                      \
        const __m512i i0 =                                                     \
            _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,   \
                                               10, 11, 12, 13, 14, 15),        \
                             _mm512_set1_epi32(c));                            \
        const __m512i i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(16));        \
        _mm512_storeu_si512(                                                   \
            tab->v + c, pack_halves(out##_lanes(_mm512_mul_ps(DEC(i0), vs)),   \
                                    out##_lanes(_mm512_mul_ps(DEC(i1), vs)))); \
      }                                                                        \
      tab->key = key, tab->s_bits = mb__cvt_bits(s);                           \
    }                                                                          \
    __m512i t[8];                                                              \
    for (int k = 0; k < 8; ++k) t[k] = _mm512_loadu_si512(tab->v + 32 * k);    \
    const uint8_t *p = (const uint8_t *)q + qe;                                \
    uint16_t *o = (uint16_t *)y + ye;                                          \
    size_t j = 0;                                                              \
    for (; j + 32 <= n; j += 32) {                                             \
      if (!((uintptr_t)(p + j) & 32)) mb__cpu_prefetch_ahead(p, j);            \
      st64(o + j,                                                              \
           look256(t, _mm512_cvtepu8_epi16(                                    \
                          _mm256_loadu_si256((const __m256i *)(p + j)))),      \
           nt);                                                                \
    }                                                                          \
    if (j < n) {                                                               \
      const __mmask32 m = mb__cpu_mask32(n - j);                               \
      _mm512_mask_storeu_epi16(                                                \
          o + j, m,                                                            \
          look256(t,                                                           \
                  _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m, p + j))));   \
    }                                                                          \
  }

/* 32 elements of 4-bit codes from byte p (`bytes` of them read), each
 * byte's low nibble and then its high one, as 16-bit lanes: byte k in
 * 32-bit lane k; shifted up 12 its high nibble sits at bits 16-19, where
 * the byte itself has zeros, as the shifted copy has at bits 0-3; one
 * ternary-logic AND of their OR with 0x000F000F keeps the two nibbles. */
MB_DQ_TARGET static inline __m512i nib_idx(const uint8_t *p, size_t bytes) {
  const __m512i d =
      _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mb__cpu_mask16(bytes), p));
  return _mm512_ternarylogic_epi32(_mm512_set1_epi32(0x000F000F), d,
                                   _mm512_slli_epi32(d, 12), 0xE0);
}

/* o[0..n) = the outputs t (16 16-bit lanes) holds for the codes of
 * elements e.. of p: a leading odd element (the high nibble of its byte)
 * alone, then 32 a step by one permute, then a masked tail. */
MB_DQ_TARGET static inline void nib_look(uint16_t *o, const uint8_t *p,
                                         size_t e, size_t n, __m512i t,
                                         int nt) {
  size_t j = 0;
  if ((e & 1u) && n) {
    uint16_t v[32];
    _mm512_storeu_si512(v, t);
    o[0] = v[p[e / 2] >> 4];
    j = 1;
  }
  for (; j + 32 <= n; j += 32) {
    if (!((e + j) / 2 & 48)) mb__cpu_prefetch_ahead(p, (e + j) / 2);
    st64(o + j, _mm512_permutexvar_epi16(nib_idx(p + (e + j) / 2, 16), t), nt);
  }
  if (j < n)
    _mm512_mask_storeu_epi16(
        o + j, mb__cpu_mask32(n - j),
        _mm512_permutexvar_epi16(nib_idx(p + (e + j) / 2, (n - j + 1) / 2), t));
}

/* The 16 nibbles' outputs for scale s (codes: their values, TABLE), in
 * the low 16 16-bit lanes: the product and rounding c1 computes. */
#define MB__DQ_NIB_OUT(out)                                                 \
  MB_DQ_TARGET static inline __m512i nib_tab_##out(__m512 codes, float s) { \
    return _mm512_zextsi256_si512(_mm512_cvtepi32_epi16(                    \
        out##_lanes(_mm512_mul_ps(codes, _mm512_set1_ps(s)))));             \
  }
MB__DQ_NIB_OUT(bf16)
MB__DQ_NIB_OUT(f16)

/* 4-bit codes: 16 outputs, one vector to build. */
#define MB__DQ_NIB_TAB(in, IN, TABLE, out, OUT)                               \
  MB_DQ_TARGET static void d1_##in##_##out(void *y, size_t ye, const void *q, \
                                           size_t qe, float s, size_t n,      \
                                           int nt, mb_cpu_dqtab_t *tab) {     \
    const uint32_t key = MB__DQ_KEY(IN, OUT);                                 \
    int build;                                                                \
    if (!use_tab(tab, key, s, n, NIB_TAB_MIN, &build)) {                      \
      c1_##in##_##out(y, ye, q, qe, s, n, nt);                                \
      return;                                                                 \
    }                                                                         \
    if (build) {                                                              \
      _mm256_storeu_si256(                                                    \
          (__m256i *)tab->v,                                                  \
          _mm512_castsi512_si256(nib_tab_##out(_mm512_loadu_ps(TABLE), s)));  \
      tab->key = key, tab->s_bits = mb__cvt_bits(s);                          \
    }                                                                         \
    nib_look(                                                                 \
        (uint16_t *)y + ye, q, qe, n,                                         \
        _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)tab->v)),  \
        nt);                                                                  \
  }

/* ---- a scale per group of g: a row's groups in one call ------------------
 * The first group starts `off` elements into its block (s[0] its scale).
 * Nibbles to 16 bits build each group's 16 outputs in a register: a call
 * and a table in memory a group took half the time of i4 -> bf16 with
 * group-32 scales and a third with group-128 (one thread, in L1, Zen 4).
 * The others run deq1 a group. */
#define MB__DQ_GROUPS(name, BODY)                                             \
  MB_DQ_TARGET static void name(void *y, size_t ye, const void *q, size_t qe, \
                                const float *s, size_t g, size_t off,         \
                                size_t n, int nt, mb_cpu_dqtab_t *tab) {      \
    MB__CPU_PIECES(k, j, m, g, off, n) {                                      \
      BODY;                                                                   \
    }                                                                         \
  }
#define MB__DQ_G_D1(in, out)    \
  MB__DQ_GROUPS(g_##in##_##out, \
                d1_##in##_##out(y, ye + j, q, qe + j, s[k], m, nt, tab))
#define MB__DQ_G_NIB(in, TABLE, out)                           \
  MB__DQ_GROUPS(g_##in##_##out, (void)tab;                     \
                nib_look((uint16_t *)y + ye + j, q, qe + j, m, \
                         nib_tab_##out(_mm512_loadu_ps(TABLE), s[k]), nt))

#define MB__DQ_D1(BODY, in, IN, ARG) \
  MB__DQ_D1_F32(in)                  \
  BODY(in, IN, ARG, bf16, BF16)      \
  BODY(in, IN, ARG, f16, F16)
MB__DQ_D1(MB__DQ_BYTES_TAB, e4m3, F8E4M3, dec_e4m3)
MB__DQ_D1(MB__DQ_BYTES_TAB, e5m2, F8E5M2, dec_e5m2)
MB__DQ_D1(MB__DQ_BYTES_TAB, i8, I8, dec_i8)
MB__DQ_D1(MB__DQ_NIB_TAB, i4, I4, k_i4)
MB__DQ_D1(MB__DQ_NIB_TAB, e2m1, F4E2M1, k_e2m1)
#define MB__DQ_G_BYTES(in) \
  MB__DQ_G_D1(in, f32)     \
  MB__DQ_G_D1(in, bf16)    \
  MB__DQ_G_D1(in, f16)
MB__DQ_G_BYTES(e4m3)
MB__DQ_G_BYTES(e5m2)
MB__DQ_G_BYTES(i8)
#define MB__DQ_G_NIBS(in, TABLE) \
  MB__DQ_G_D1(in, f32)           \
  MB__DQ_G_NIB(in, TABLE, bf16)  \
  MB__DQ_G_NIB(in, TABLE, f16)
MB__DQ_G_NIBS(i4, k_i4)
MB__DQ_G_NIBS(e2m1, k_e2m1)

MB_DQ_TARGET static void fence(void) {
  _mm_sfence();
}

/* ---- the table ----------------------------------------------------------- */

#define MB__DQ_ROW(IN, in, OUT, out)                                 \
  {                                                                  \
    MB_DTYPE_##IN, MB_DTYPE_##OUT, d1_##in##_##out, dv_##in##_##out, \
        g_##in##_##out, fence                                        \
  }
#define MB__DQ_ROWS(IN, in)                                     \
  MB__DQ_ROW(IN, in, F32, f32), MB__DQ_ROW(IN, in, BF16, bf16), \
      MB__DQ_ROW(IN, in, F16, f16)
static const mb_cpu_dqvec_t k_dq[] = {
    MB__DQ_ROWS(F8E4M3, e4m3), MB__DQ_ROWS(F8E5M2, e5m2), MB__DQ_ROWS(I8, i8),
    MB__DQ_ROWS(I4, i4),       MB__DQ_ROWS(F4E2M1, e2m1),
};

const mb_cpu_dqvec_t *mb__cpu_dqvec(mb_dtype_t in, mb_dtype_t out) {
  if (!mb__cpu_quant_vec_cpu()) return NULL;
  for (size_t i = 0; i < sizeof k_dq / sizeof k_dq[0]; ++i)
    if (k_dq[i].in == in && k_dq[i].out == out) return &k_dq[i];
  return NULL;
}

#else

const mb_cpu_dqvec_t *mb__cpu_dqvec(mb_dtype_t in, mb_dtype_t out) {
  (void)in, (void)out;
  return NULL;
}

#endif
