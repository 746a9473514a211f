/* CPU backend — AVX-512 rows of layernorm, rmsnorm and softmax (see
 * cpu_simd_norm.h for what they compute and why).
 *
 * Each row: a first pass reads it from memory, the later passes read it
 * again from L1/L2 (a row of 8192 bf16 is 16 KiB): X's row itself, bf16
 * widened again (a shift, exact), and softmax's output pass its exp
 * values, kept in the thread's buffer (f32). Re-reading the bf16 row
 * rather than staging it as an f32 copy twice its size ran 1.2x faster
 * at 8192^2 (1.4x in cache) for the norms, 1.46x (1.35x) for softmax.
 * The tail of a row that is not a multiple of 16 runs masked: its lanes
 * off the mask stay as they were, so every element lands in lane j % 64
 * as in the portable sums. While a row's last pass runs, the next row is
 * prefetched into L2. */
#include "cpu_simd_norm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <math.h>

#include "cpu_simd.h"
#include "cpu_simd_bf16.h"
#include "cpu_simd_exp.h"

#define MB_SIMD_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#define MB_SIMD_INLINE \
  MB_SIMD_TARGET static inline __attribute__((always_inline))

/* 16 elements from j (lanes off m read 0) as f32. */
MB_SIMD_INLINE __m512 load16(const void *row, int bf16, size_t j, __mmask16 m) {
  if (!bf16) return _mm512_maskz_loadu_ps(m, (const float *)row + j);
  const __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)row + j);
  return mb__cpu_bf16_widen16(h);
}

/* v into the 16 elements from j under m; non-temporal (nt) where all 16
 * are and the address is aligned (a row that starts off a 64-byte line,
 * 32 for bf16, is stored without streaming). bf16 by VCVTNEPS2BF16, the
 * answer mb__cvt_f32_to_bf16 gives (cpu_simd_bf16.h). */
MB_SIMD_INLINE void store16(void *row, int bf16, size_t j, __m512 v,
                            __mmask16 m, int nt) {
  if (!bf16) {
    float *d = (float *)row + j;
    if (nt && m == 0xffff && !((uintptr_t)d & 63))
      _mm512_stream_ps(d, v);
    else
      _mm512_mask_storeu_ps(d, m, v);
    return;
  }
  const __m256i h = mb__cpu_bf16_hw16(v, m);
  uint16_t *d = (uint16_t *)row + j;
  if (nt && m == 0xffff && !((uintptr_t)d & 31))
    _mm256_stream_si256((__m256i *)d, h);
  else
    _mm256_mask_storeu_epi16(d, m, h);
}

MB_SIMD_INLINE __mmask16 tail_mask(size_t left) {
  return (__mmask16)((1u << left) - 1u);
}

/* The pass over a row that reduces it, in 64 lanes (four vectors,
 * element j in lane j % 64: the portable kernel's order, cpu_norm_c.c;
 * four chains so that the adds' latency does not bound the loop). */
enum pass_kind {
  P_SUM, /* + x */
  P_SQ,  /* + x^2 */
  P_DEV, /* + (x - c)^2 */
  P_MAX, /* max(x, lane), as mb__cpu_maxf */
  P_EXP  /* + e, e = exp(x - c) stored to e[j] */
};

MB_SIMD_INLINE __m512 fold(enum pass_kind kind, __m512 acc, __m512 v, __m512 c,
                           float *e, size_t j, __mmask16 m) {
  __m512 t = v;
  if (kind == P_MAX) return _mm512_mask_max_ps(acc, m, v, acc);
  if (kind == P_SQ) t = _mm512_mul_ps(v, v);
  if (kind == P_DEV) {
    const __m512 d = _mm512_sub_ps(v, c);
    t = _mm512_mul_ps(d, d);
  }
  if (kind == P_EXP) {
    t = mb__cpu_simd_expf(_mm512_sub_ps(v, c));
    _mm512_mask_storeu_ps(e + j, m, t);
  }
  return _mm512_mask_add_ps(acc, m, acc, t);
}

/* Folds row src (bf16 or f32) into 64 lanes, from `init`. */
MB_SIMD_INLINE void reduce(enum pass_kind kind, const void *src, int bf16,
                           size_t n, __m512 c, float *e, float init,
                           float lane[64]) {
  __m512 a[4];
  for (int k = 0; k < 4; ++k) a[k] = _mm512_set1_ps(init);
  size_t j = 0;
  for (; j + 64 <= n; j += 64) {
#define MB_STEP(k)                                                   \
  do {                                                               \
    const __m512 v = load16(src, bf16, j + 16 * k, 0xffff);          \
    a[k] = fold(kind, a[k], v, c, e, j + 16 * k, (__mmask16)0xffff); \
  } while (0)
    MB_STEP(0);
    MB_STEP(1);
    MB_STEP(2);
    MB_STEP(3);
#undef MB_STEP
  }
  for (int k = 0; j < n; j += 16, ++k) {
    const __mmask16 m = n - j >= 16 ? (__mmask16)0xffff : tail_mask(n - j);
    const __m512 v = load16(src, bf16, j, m);
    /* k < 4; constant indices keep a[] in registers. */
    if (k == 0) a[0] = fold(kind, a[0], v, c, e, j, m);
    if (k == 1) a[1] = fold(kind, a[1], v, c, e, j, m);
    if (k == 2) a[2] = fold(kind, a[2], v, c, e, j, m);
    if (k == 3) a[3] = fold(kind, a[3], v, c, e, j, m);
  }
  for (int k = 0; k < 4; ++k) _mm512_storeu_ps(lane + 16 * k, a[k]);
}

/* The portable order: lane 0 + lane 1 + ... + lane 63, from 0. */
static inline float sum_lanes(const float lane[64]) {
  float s = 0;
  for (int l = 0; l < 64; ++l) s += lane[l];
  return s;
}

/* The last pass: Y from the row src (bf16 where sb, else f32), as the
 * portable kernel computes it (no FMA). Meanwhile the next row of X (next;
 * NULL: none) is fetched into L2, a prefetch every 16 elements (a line
 * of f32, half a line of bf16), so that the memory stream keeps running
 * while this row computes from L1/L2. Into L2,
 * not L1: a 16 KiB row prefetched into the 32 KiB L1 evicts the row being
 * read and W and Bias (64 KiB as f32 at N = 8192, from L2 anyway) — in a
 * stand-alone loop on the Zen 4 VM, 2 threads, 8192^2 bf16, three runs:
 * layernorm 22-26 -> 25-33 GB/s, rmsnorm 27-32 -> 34-43 GB/s, softmax
 * 15-18 -> 17-20 GB/s; into L1 it was little better than none. */
enum out_mode { O_NORM, O_RMS_W, O_LN_WB, O_SCALE };

MB_SIMD_INLINE void out16(enum out_mode mode, const void *src, int sb,
                          void *out, int bf16, size_t j, __mmask16 m, __m512 mv,
                          __m512 sv, const float *w, const float *b, int nt) {
  const __m512 v = load16(src, sb, j, m);
  __m512 o = v;
  if (mode == O_NORM) o = _mm512_mul_ps(_mm512_sub_ps(v, mv), sv);
  if (mode == O_SCALE) o = _mm512_mul_ps(v, sv);
  if (mode == O_RMS_W)
    o = _mm512_mul_ps(_mm512_mul_ps(v, sv), _mm512_maskz_loadu_ps(m, w + j));
  if (mode == O_LN_WB)
    o = _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(v, mv), sv),
                                    _mm512_maskz_loadu_ps(m, w + j)),
                      _mm512_maskz_loadu_ps(m, b + j));
  store16(out, bf16, j, o, m, nt);
}

/* Whole vectors in a loop of their own (no mask to compute, no branch on
 * it; 1.05-1.09x on the bf16 norms, within the VM's spread), then the
 * masked tail. */
MB_SIMD_INLINE void out_pass(enum out_mode mode, const void *src, int sb,
                             void *out, int bf16, size_t n, float mean,
                             float scale, const float *w, const float *b,
                             const char *next, int nt) {
  const __m512 mv = _mm512_set1_ps(mean), sv = _mm512_set1_ps(scale);
  const size_t es = bf16 ? 2 : 4;
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    if (next) _mm_prefetch(next + j * es, _MM_HINT_T1);
    out16(mode, src, sb, out, bf16, j, (__mmask16)0xffff, mv, sv, w, b, nt);
  }
  if (j < n) {
    if (next) _mm_prefetch(next + j * es, _MM_HINT_T1);
    out16(mode, src, sb, out, bf16, j, tail_mask(n - j), mv, sv, w, b, nt);
  }
}

MB_SIMD_INLINE void norm_rows(const mb_cpu_norm_args_t *a, void *y,
                              const void *x, int64_t r0, int64_t r1, int bf16) {
  const size_t n = a->n, es = bf16 ? 2 : 4;
  const int rms = a->rms, affine = a->affine;
  const float eps = a->eps, *w = a->w, *b = a->b;
  const __m512 zero = _mm512_setzero_ps();
  float lane[64];
  for (int64_t r = r0; r < r1; ++r) {
    const size_t off = (size_t)r * n;
    const char *row = (const char *)x + off * es;
    const char *next = r + 1 < r1 ? row + n * es : NULL;
    void *out = (char *)y + off * es;
    float mean = 0;
    if (rms) {
      reduce(P_SQ, row, bf16, n, zero, NULL, 0.0f, lane);
    } else {
      reduce(P_SUM, row, bf16, n, zero, NULL, 0.0f, lane);
      mean = sum_lanes(lane) / (float)n;
      reduce(P_DEV, row, bf16, n, _mm512_set1_ps(mean), NULL, 0.0f, lane);
    }
    const float rstd = 1.0f / sqrtf(sum_lanes(lane) / (float)n + eps);
    if (!affine)
      out_pass(O_NORM, row, bf16, out, bf16, n, mean, rstd, w, b, next,
               a->stream);
    else if (rms)
      out_pass(O_RMS_W, row, bf16, out, bf16, n, mean, rstd, w, b, next,
               a->stream);
    else
      out_pass(O_LN_WB, row, bf16, out, bf16, n, mean, rstd, w, b, next,
               a->stream);
  }
  if (a->stream) _mm_sfence(); /* before another thread reads Y */
}

MB_SIMD_INLINE void softmax_rows(const mb_cpu_norm_args_t *a, void *y,
                                 const void *x, int64_t r0, int64_t r1,
                                 float *buf, int bf16) {
  const size_t n = a->n, es = bf16 ? 2 : 4;
  float lane[64];
  for (int64_t r = r0; r < r1; ++r) {
    const size_t off = (size_t)r * n;
    const char *row = (const char *)x + off * es;
    const char *next = r + 1 < r1 ? row + n * es : NULL;
    void *out = (char *)y + off * es;
    /* exp(x - max) goes to buf for bf16 (rounded once, at the end), to Y
     * itself for f32 but when Y is streamed (a line stored, read back and
     * streamed over measured 1.4x slower than the plain stores). */
    float *e = bf16 || a->stream ? buf : (float *)out;
    reduce(P_MAX, row, bf16, n, _mm512_setzero_ps(), NULL, -INFINITY, lane);
    float m = lane[0];
    for (int l = 1; l < 64; ++l) m = lane[l] > m ? lane[l] : m;
    reduce(P_EXP, row, bf16, n, _mm512_set1_ps(m), e, 0.0f, lane);
    out_pass(O_SCALE, e, 0, out, bf16, n, 0.0f, 1.0f / sum_lanes(lane), NULL,
             NULL, next, a->stream);
  }
  if (a->stream) _mm_sfence(); /* before another thread reads Y */
}

MB_SIMD_TARGET static void norm_f32(const mb_cpu_norm_args_t *a, void *y,
                                    const void *x, int64_t r0, int64_t r1,
                                    float *buf) {
  (void)buf; /* NULL: the norms re-read X's row */
  norm_rows(a, y, x, r0, r1, 0);
}
MB_SIMD_TARGET static void norm_bf16(const mb_cpu_norm_args_t *a, void *y,
                                     const void *x, int64_t r0, int64_t r1,
                                     float *buf) {
  (void)buf;
  norm_rows(a, y, x, r0, r1, 1);
}
MB_SIMD_TARGET static void softmax_f32(const mb_cpu_norm_args_t *a, void *y,
                                       const void *x, int64_t r0, int64_t r1,
                                       float *buf) {
  softmax_rows(a, y, x, r0, r1, buf, 0);
}
MB_SIMD_TARGET static void softmax_bf16(const mb_cpu_norm_args_t *a, void *y,
                                        const void *x, int64_t r0, int64_t r1,
                                        float *buf) {
  softmax_rows(a, y, x, r0, r1, buf, 1);
}

static int have_avx512(void) {
  return mb__cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
}

mb_cpu_simd_rows_fn mb__cpu_simd_norm(mb_dtype_t dtype) {
  if (!have_avx512()) return NULL;
  return dtype == MB_DTYPE_F32    ? norm_f32
         : dtype == MB_DTYPE_BF16 ? norm_bf16
                                  : NULL;
}

mb_cpu_simd_rows_fn mb__cpu_simd_softmax(mb_dtype_t dtype) {
  if (!have_avx512()) return NULL;
  return dtype == MB_DTYPE_F32    ? softmax_f32
         : dtype == MB_DTYPE_BF16 ? softmax_bf16
                                  : NULL;
}

#else

mb_cpu_simd_rows_fn mb__cpu_simd_norm(mb_dtype_t dtype) {
  (void)dtype;
  return NULL;
}

mb_cpu_simd_rows_fn mb__cpu_simd_softmax(mb_dtype_t dtype) {
  (void)dtype;
  return NULL;
}

#endif
