/* CPU backend — AVX-512 activation, silu_mul and add on f32 and bf16 (see
 * cpu_simd_elt.h). 16 lanes per step, bf16 widened and rounded (to nearest
 * even, NaN kept quiet with its sign: mb_cvt.h's rule) in registers, the
 * tail under a mask. Outputs larger than the last-level cache are written
 * with non-temporal stores where the caller asks (`stream`): they skip the
 * read-for-ownership of every destination line. Each input is prefetched
 * MB_CPU_PREFETCH_AHEAD bytes ahead (cpu_simd.h). */
#include "cpu_simd_elt.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "cpu_simd.h"
#include "cpu_simd_bf16.h"
#include "cpu_simd_exp.h"

#define MB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define MB_AVX512_INLINE static inline MB_AVX512 __attribute__((always_inline))
/* With AVX512-BF16 (vcvtneps2bf16) for the bf16 stores. */
#define MB_AVX512BF16 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

/* ---- loads and stores: `full` (a constant after inlining) or mask m ---- */
MB_AVX512_INLINE __m512 ld_f32(const void *p, size_t i, __mmask16 m, int full) {
  const float *s = (const float *)p + i;
  return full ? _mm512_loadu_ps(s) : _mm512_maskz_loadu_ps(m, s);
}

/* bf16 is the upper half of an f32: widen and shift, exact. */
MB_AVX512_INLINE __m512 ld_bf16(const void *p, size_t i, __mmask16 m,
                                int full) {
  const uint16_t *s = (const uint16_t *)p + i;
  const __m256i h = full ? _mm256_loadu_si256((const __m256i *)s)
                         : _mm256_maskz_loadu_epi16(m, s);
  return mb__cpu_bf16_widen16(h);
}

/* The prefetch ahead of the 16 elements at i (cpu_simd.h). */
MB_AVX512_INLINE void pf_f32(const void *p, size_t i) {
  mb__cpu_prefetch_step16(p, i * sizeof(float), sizeof(float));
}
MB_AVX512_INLINE void pf_bf16(const void *p, size_t i) {
  mb__cpu_prefetch_step16(p, i * sizeof(uint16_t), sizeof(uint16_t));
}

MB_AVX512_INLINE void st_f32(void *p, size_t i, __m512 v, __mmask16 m, int full,
                             int stream) {
  float *d = (float *)p + i;
  if (!full)
    _mm512_mask_storeu_ps(d, m, v);
  else if (stream)
    _mm512_stream_ps(d, v);
  else
    _mm512_storeu_ps(d, v);
}

MB_AVX512_INLINE void st_h16(void *p, size_t i, __m256i h, __mmask16 m,
                             int full, int stream) {
  uint16_t *d = (uint16_t *)p + i;
  if (!full)
    _mm256_mask_storeu_epi16(d, m, h);
  else if (stream)
    _mm256_stream_si256((__m256i *)d, h);
  else
    _mm256_storeu_si256((__m256i *)d, h);
}

MB_AVX512_INLINE void st_bf16(void *p, size_t i, __m512 v, __mmask16 m,
                              int full, int stream) {
  st_h16(p, i, mb__cpu_bf16_sw16(v), m, full, stream);
}

/* By vcvtneps2bf16, the same answer (cpu_simd_bf16.h). */
static inline MB_AVX512BF16 __attribute__((always_inline)) void st_bf16h(
    void *p, size_t i, __m512 v, __mmask16 m, int full, int stream) {
  st_h16(p, i, mb__cpu_bf16_hw16(v, 0xffff), m, full, stream);
}

/* Elements before `p + i` reaches a 64-byte line (f32) or 32-byte half line
 * (bf16: 16 lanes store 32 bytes), at most hi - i: the head that streaming
 * stores, which need that alignment, leave to a masked store. */
static inline size_t head_f32(const void *p, size_t i, size_t hi) {
  const size_t mis = (uintptr_t)((const float *)p + i) % 64;
  const size_t h = mis ? (64 - mis) / sizeof(float) : 0;
  return h < hi - i ? h : hi - i;
}
static inline size_t head_bf16(const void *p, size_t i, size_t hi) {
  const size_t mis = (uintptr_t)((const uint16_t *)p + i) % 32;
  const size_t h = mis ? (32 - mis) / sizeof(uint16_t) : 0;
  return h < hi - i ? h : hi - i;
}
#define head_bf16h head_bf16

/* ---- the maths ---------------------------------------------------------- */
#define SET1 _mm512_set1_ps

/* exp(-x) (every caller wants a negated argument): the shared vector exp
 * (cpu_simd_exp.h) of -x, the sign flipped exactly (NaN stays NaN). */
MB_AVX512_INLINE __m512 v_expm(__m512 x) {
  return mb__cpu_simd_expf(_mm512_xor_ps(x, SET1(-0.0f)));
}

/* 1 / d for d >= 1 or NaN: rcp14 and one Newton step (~1 ulp). Lanes above
 * 2^126, whose reciprocal is subnormal (or 0 for inf, where the Newton step
 * would make inf * 0 = NaN), are divided: rare, so behind a branch. */
MB_AVX512_INLINE __m512 v_recip(__m512 d) {
  __m512 r = _mm512_rcp14_ps(d);
  r = _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, SET1(1.0f)), r);
  const __mmask16 big = _mm512_cmp_ps_mask(d, SET1(0x1p126f), _CMP_GT_OQ);
  if (__builtin_expect(big != 0, 0))
    r = _mm512_mask_div_ps(r, big, SET1(1.0f), d);
  return r;
}

/* x / (1 + exp(-z)): silu (z = x), gelu_tanh's form. */
MB_AVX512_INLINE __m512 v_x_sigmoid(__m512 x, __m512 z) {
  return _mm512_mul_ps(x, v_recip(_mm512_add_ps(SET1(1.0f), v_expm(z))));
}

MB_AVX512_INLINE __m512 v_relu(__m512 x, __m512 a) {
  (void)a;
  return _mm512_maskz_mov_ps(
      _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), x);
}

/* max(x, 0) + alpha min(x, 0), in the portable kernel's order. */
MB_AVX512_INLINE __m512 v_leakyrelu(__m512 x, __m512 a) {
  const __mmask16 gt = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_add_ps(
      _mm512_maskz_mov_ps(gt, x),
      _mm512_mul_ps(a, _mm512_mask_mov_ps(x, gt, _mm512_setzero_ps())));
}

/* v < 0 ? 0 : v > 6 ? 6 : v; NaN stays NaN (both compares false). */
MB_AVX512_INLINE __m512 v_relu6(__m512 v, __m512 a) {
  (void)a;
  const __m512 t = _mm512_mask_mov_ps(
      v, _mm512_cmp_ps_mask(v, SET1(6.0f), _CMP_GT_OQ), SET1(6.0f));
  return _mm512_mask_mov_ps(
      t, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ),
      _mm512_setzero_ps());
}

MB_AVX512_INLINE __m512 v_hardswish(__m512 x, __m512 a) {
  return _mm512_mul_ps(
      _mm512_mul_ps(x, v_relu6(_mm512_add_ps(x, SET1(3.0f)), a)),
      SET1(1.0f / 6.0f));
}

MB_AVX512_INLINE __m512 v_silu(__m512 x, __m512 a) {
  (void)a;
  return v_x_sigmoid(x, x);
}

MB_AVX512_INLINE __m512 v_sigmoid(__m512 x, __m512 a) {
  (void)a;
  return v_recip(_mm512_add_ps(SET1(1.0f), v_expm(x)));
}

/* x / (1 + exp(-2 sqrt(2/pi) x (1 + 0.044715 x^2))), as the portable. */
MB_AVX512_INLINE __m512 v_gelu_tanh(__m512 x, __m512 a) {
  (void)a;
  const __m512 inner =
      _mm512_fmadd_ps(SET1(0.044715f), _mm512_mul_ps(x, x), SET1(1.0f));
  return v_x_sigmoid(
      x, _mm512_mul_ps(_mm512_mul_ps(SET1(1.5957691216057308f), x), inner));
}

/* 0.5 x erfc(-x/sqrt2). erfc(|z|) = t P(t) exp(-z^2), t = 1/(1 + p|z|)
 * (Abramowitz & Stegun 7.1.26: absolute error 1.5e-7, ~2.5 u), and
 * erfc(-|z|) = 2 - erfc(|z|): each side without cancellation where erfc is
 * small, and the op's tolerance is relative to |x| where it cancels. */
MB_AVX512_INLINE __m512 v_gelu_erf(__m512 x, __m512 a) {
  (void)a;
  const __m512 z = _mm512_mul_ps(x, SET1(0.70710678118654752f));
  const __m512 az = _mm512_abs_ps(z);
  const __m512 t = v_recip(_mm512_fmadd_ps(SET1(0.3275911f), az, SET1(1.0f)));
  __m512 p = SET1(1.061405429f);
  p = _mm512_fmadd_ps(p, t, SET1(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, SET1(1.421413741f));
  p = _mm512_fmadd_ps(p, t, SET1(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, SET1(0.254829592f));
  p = _mm512_mul_ps(p, t);
  const __m512 e = _mm512_mul_ps(p, v_expm(_mm512_mul_ps(az, az)));
  /* x > 0: erfc(-z) = 2 - erfc(z); else erfc(|z|). NaN: e is NaN. */
  const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
  const __m512 c = _mm512_mask_sub_ps(e, pos, SET1(2.0f), e);
  return _mm512_mul_ps(_mm512_mul_ps(SET1(0.5f), x), c);
}

/* silu(x) * y, as the portable kernel: x / (1 + exp(-x)) * y. */
MB_AVX512_INLINE __m512 v_silu_mul(__m512 x, __m512 y) {
  return _mm512_mul_ps(v_x_sigmoid(x, x), y);
}

MB_AVX512_INLINE __m512 v_add(__m512 x, __m512 y) {
  return _mm512_add_ps(x, y);
}

/* ---- the loops ---------------------------------------------------------- */
/* y = F(x) over [lo, hi): IN, OUT are f32 or bf16. */
#define MB__SIMD_UNARY(name, IN, OUT, F, TARGET)                         \
  static TARGET void name(void *y, const void *x, size_t lo, size_t hi,  \
                          float alpha, int stream) {                     \
    const __m512 a = SET1(alpha);                                        \
    size_t i = lo;                                                       \
    if (stream && i < hi) {                                              \
      const size_t h = head_##OUT(y, i, hi);                             \
      if (h)                                                             \
        st_##OUT(y, i, F(ld_##IN(x, i, mb__cpu_mask16(h), 0), a),        \
                 mb__cpu_mask16(h), 0, 0);                               \
      i += h;                                                            \
    }                                                                    \
    for (; i + 16 <= hi; i += 16) {                                      \
      pf_##IN(x, i);                                                     \
      st_##OUT(y, i, F(ld_##IN(x, i, 0xffff, 1), a), 0xffff, 1, stream); \
    }                                                                    \
    if (i < hi) {                                                        \
      const __mmask16 m = mb__cpu_mask16(hi - i);                        \
      st_##OUT(y, i, F(ld_##IN(x, i, m, 0), a), m, 0, 0);                \
    }                                                                    \
    if (stream) _mm_sfence();                                            \
  }

/* z = F(x, y) over [lo, hi). */
#define MB__SIMD_BINARY(name, IN, OUT, F, TARGET)                             \
  static TARGET void name(void *z, const void *x, const void *y, size_t lo,   \
                          size_t hi, int stream) {                            \
    size_t i = lo;                                                            \
    if (stream && i < hi) {                                                   \
      const size_t h = head_##OUT(z, i, hi);                                  \
      const __mmask16 m = mb__cpu_mask16(h);                                  \
      if (h)                                                                  \
        st_##OUT(z, i, F(ld_##IN(x, i, m, 0), ld_##IN(y, i, m, 0)), m, 0, 0); \
      i += h;                                                                 \
    }                                                                         \
    for (; i + 16 <= hi; i += 16) {                                           \
      pf_##IN(x, i);                                                          \
      pf_##IN(y, i);                                                          \
      st_##OUT(z, i, F(ld_##IN(x, i, 0xffff, 1), ld_##IN(y, i, 0xffff, 1)),   \
               0xffff, 1, stream);                                            \
    }                                                                         \
    if (i < hi) {                                                             \
      const __mmask16 m = mb__cpu_mask16(hi - i);                             \
      st_##OUT(z, i, F(ld_##IN(x, i, m, 0), ld_##IN(y, i, m, 0)), m, 0, 0);   \
    }                                                                         \
    if (stream) _mm_sfence();                                                 \
  }

/* f32, bf16 rounded in software, bf16 rounded by vcvtneps2bf16. */
#define MB__SIMD_UNARY_BOTH(fn)                            \
  MB__SIMD_UNARY(fn##_f32, f32, f32, v_##fn, MB_AVX512)    \
  MB__SIMD_UNARY(fn##_bf16, bf16, bf16, v_##fn, MB_AVX512) \
  MB__SIMD_UNARY(fn##_bf16h, bf16, bf16h, v_##fn, MB_AVX512BF16)
MB__SIMD_UNARY_BOTH(relu)
MB__SIMD_UNARY_BOTH(gelu_tanh)
MB__SIMD_UNARY_BOTH(gelu_erf)
MB__SIMD_UNARY_BOTH(silu)
MB__SIMD_UNARY_BOTH(sigmoid)
MB__SIMD_UNARY_BOTH(leakyrelu)
MB__SIMD_UNARY_BOTH(relu6)
MB__SIMD_UNARY_BOTH(hardswish)
#define MB__SIMD_BINARY_BOTH(fn)                            \
  MB__SIMD_BINARY(fn##_f32, f32, f32, v_##fn, MB_AVX512)    \
  MB__SIMD_BINARY(fn##_bf16, bf16, bf16, v_##fn, MB_AVX512) \
  MB__SIMD_BINARY(fn##_bf16h, bf16, bf16h, v_##fn, MB_AVX512BF16)
MB__SIMD_BINARY_BOTH(silu_mul)
MB__SIMD_BINARY_BOTH(add)

static const mb_cpu_simd_un_fn k_act[MB_ACT_COUNT][3] = {
    [MB_ACT_RELU] = {relu_f32, relu_bf16, relu_bf16h},
    [MB_ACT_GELU_TANH] = {gelu_tanh_f32, gelu_tanh_bf16, gelu_tanh_bf16h},
    [MB_ACT_GELU_ERF] = {gelu_erf_f32, gelu_erf_bf16, gelu_erf_bf16h},
    [MB_ACT_SILU] = {silu_f32, silu_bf16, silu_bf16h},
    [MB_ACT_SIGMOID] = {sigmoid_f32, sigmoid_bf16, sigmoid_bf16h},
    [MB_ACT_LEAKYRELU] = {leakyrelu_f32, leakyrelu_bf16, leakyrelu_bf16h},
    [MB_ACT_RELU6] = {relu6_f32, relu6_bf16, relu6_bf16h},
    [MB_ACT_HARDSWISH] = {hardswish_f32, hardswish_bf16, hardswish_bf16h},
};

/* 0 for f32 -> f32, 1 for bf16 -> bf16 (2 with vcvtneps2bf16: bf16_hw < 0
 * where the CPU has it), -1 for other dtypes or without AVX-512. */
static int simd_index(mb_dtype_t in, mb_dtype_t out, int bf16_hw) {
  if (!mb__cpu_has_avx512() || in != out) return -1;
  if (bf16_hw < 0) bf16_hw = __builtin_cpu_supports("avx512bf16");
  return in == MB_DTYPE_F32 ? 0 : in == MB_DTYPE_BF16 ? 1 + !!bf16_hw : -1;
}

mb_cpu_simd_un_fn mb__cpu_simd_activation_isa(mb_activation_t act,
                                              mb_dtype_t in, mb_dtype_t out,
                                              int bf16_hw) {
  const int k = simd_index(in, out, bf16_hw);
  return k < 0 || (unsigned)act >= MB_ACT_COUNT ? NULL : k_act[act][k];
}

mb_cpu_simd_bin_fn mb__cpu_simd_silu_mul_isa(mb_dtype_t in, mb_dtype_t out,
                                             int bf16_hw) {
  static const mb_cpu_simd_bin_fn fns[] = {silu_mul_f32, silu_mul_bf16,
                                           silu_mul_bf16h};
  const int k = simd_index(in, out, bf16_hw);
  return k < 0 ? NULL : fns[k];
}

mb_cpu_simd_bin_fn mb__cpu_simd_add_isa(mb_dtype_t in, mb_dtype_t out,
                                        int bf16_hw) {
  static const mb_cpu_simd_bin_fn fns[] = {add_f32, add_bf16, add_bf16h};
  const int k = simd_index(in, out, bf16_hw);
  return k < 0 ? NULL : fns[k];
}

/* 4 lines per step, loads unaligned, stores aligned and non-temporal; no
 * fence (stream_copy's). */
static MB_AVX512 void stream_lines(void *dst, const void *src, size_t bytes) {
  char *d = dst;
  const char *s = src;
  const size_t mis = (uintptr_t)d % 64;
  size_t head = mis ? 64 - mis : 0;
  if (head > bytes) head = bytes;
  memcpy(d, s, head);
  size_t i = head;
  for (; i + 256 <= bytes; i += 256) {
    const __m512i a = _mm512_loadu_si512(s + i),
                  b = _mm512_loadu_si512(s + i + 64),
                  c = _mm512_loadu_si512(s + i + 128),
                  e = _mm512_loadu_si512(s + i + 192);
    _mm512_stream_si512((void *)(d + i), a);
    _mm512_stream_si512((void *)(d + i + 64), b);
    _mm512_stream_si512((void *)(d + i + 128), c);
    _mm512_stream_si512((void *)(d + i + 192), e);
  }
  for (; i + 64 <= bytes; i += 64)
    _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512(s + i));
  memcpy(d + i, s + i, bytes - i);
}

static MB_AVX512 void stream_copy(void *dst, const void *src, size_t bytes) {
  stream_lines(dst, src, bytes);
  _mm_sfence();
}

mb_cpu_simd_copy_fn mb__cpu_simd_stream_copy(void) {
  return simd_index(MB_DTYPE_F32, MB_DTYPE_F32, 0) < 0 ? NULL : stream_copy;
}

void mb__cpu_simd_sfence(void) {
  _mm_sfence();
}

#else /* not x86-64: the portable kernels only */

mb_cpu_simd_copy_fn mb__cpu_simd_stream_copy(void) {
  return NULL;
}

void mb__cpu_simd_sfence(void) {}

mb_cpu_simd_un_fn mb__cpu_simd_activation_isa(mb_activation_t act,
                                              mb_dtype_t in, mb_dtype_t out,
                                              int bf16_hw) {
  (void)act, (void)in, (void)out, (void)bf16_hw;
  return NULL;
}
mb_cpu_simd_bin_fn mb__cpu_simd_silu_mul_isa(mb_dtype_t in, mb_dtype_t out,
                                             int bf16_hw) {
  (void)in, (void)out, (void)bf16_hw;
  return NULL;
}
mb_cpu_simd_bin_fn mb__cpu_simd_add_isa(mb_dtype_t in, mb_dtype_t out,
                                        int bf16_hw) {
  (void)in, (void)out, (void)bf16_hw;
  return NULL;
}

#endif

mb_cpu_simd_un_fn mb__cpu_simd_activation(mb_activation_t act, mb_dtype_t in,
                                          mb_dtype_t out) {
  return mb__cpu_simd_activation_isa(act, in, out, -1);
}
mb_cpu_simd_bin_fn mb__cpu_simd_silu_mul(mb_dtype_t in, mb_dtype_t out) {
  return mb__cpu_simd_silu_mul_isa(in, out, -1);
}
mb_cpu_simd_bin_fn mb__cpu_simd_add(mb_dtype_t in, mb_dtype_t out) {
  return mb__cpu_simd_add_isa(in, out, -1);
}

int mb__cpu_stream_stores(unsigned long long llc_bytes, size_t bytes) {
  /* Non-temporal stores skip the read for ownership of each destination
   * line (a third of a copy's traffic) but also the cache: worth it once
   * the working set is past what stays cached. The last-level cache is
   * shared with every other core (and, in a VM, tenant), so half of it is
   * the bound: 8192^2 bf16 copied (256 MiB) on this 300 MB-LLC VM copied
   * faster streamed (56 and 68 ms against memcpy's 72 and 84, loaded). */
  return llc_bytes && bytes > llc_bytes / 2;
}
