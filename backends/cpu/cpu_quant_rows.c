/* CPU backend — the element loops of quantization: loading any dtype as
 * f32, storing f32 as f32/bf16/f16, quantizing with one scale or one per
 * element, absmax, and the two whole-matrix passes built from them
 * (dequantize/widen, and the scaled GEMMs' output epilogue).
 *
 * One small function per dtype, no branches on the dtype inside a loop, so
 * each loop vectorises; MB_CPU_QCLONES adds AVX2 and AVX-512 versions. The
 * matrix passes split rows into chunks of CHUNK elements converted through
 * a buffer on the stack: no scratch to allocate, and the buffer stays in L1
 * between the load, the arithmetic and the store. */
#include "mb_cvt.h"
#include "cpu_quant.h"

#include <string.h>

enum { CHUNK = 1024 };

/* ---- loads --------------------------------------------------------------- */

static void load_f32(float *restrict d, const void *src, size_t e0, size_t n) {
  memcpy(d, (const float *)src + e0, n * sizeof *d);
}

/* A load from a format whose elements are whole bytes or halves. */
#define MB__LOAD(name, T, expr)                                       \
  MB_CPU_QCLONES static void name(float *restrict d, const void *src, \
                                  size_t e0, size_t n) {              \
    const T *restrict s = (const T *)src + e0;                        \
    for (size_t j = 0; j < n; ++j) d[j] = expr(s[j]);                 \
  }
#define MB__I8_TO_F32(v) ((float)(int8_t)(v))
MB__LOAD(load_bf16, uint16_t, mb__cvt_bf16_to_f32)
MB__LOAD(load_f16, uint16_t, mb__cvt_f16_to_f32)
MB__LOAD(load_e4m3, uint8_t, mb__cvt_e4m3_to_f32)
MB__LOAD(load_e5m2, uint8_t, mb__cvt_e5m2_to_f32)
MB__LOAD(load_i8, uint8_t, MB__I8_TO_F32)

/* 4-bit formats (i4, e2m1): a leading odd element is the high nibble of
 * its byte; then whole bytes (low nibble first); then a trailing low
 * nibble. NIB(v) is the value of nibble v. */
#define MB__LOAD_NIB(name, NIB)                                       \
  MB_CPU_QCLONES static void name(float *restrict d, const void *src, \
                                  size_t e0, size_t n) {              \
    const uint8_t *p = src;                                           \
    size_t j = 0;                                                     \
    if ((e0 & 1u) && n) d[j++] = NIB((uint32_t)(p[e0 / 2] >> 4));     \
    const uint8_t *restrict b = p + (e0 + j) / 2;                     \
    const size_t pairs = (n - j) / 2;                                 \
    float *restrict o = d + j;                                        \
    for (size_t k = 0; k < pairs; ++k) {                              \
      o[2 * k] = NIB(b[k] & 0xFu);                                    \
      o[2 * k + 1] = NIB((uint32_t)(b[k] >> 4));                      \
    }                                                                 \
    j += 2 * pairs;                                                   \
    if (j < n) d[j] = NIB(p[(e0 + j) / 2] & 0xFu);                    \
  }
#define MB__I4_NIB(v) ((float)((int32_t)((v) ^ 8u) - 8))
#define MB__E2M1_NIB(v) mb__cvt_e2m1_to_f32((uint8_t)(v))
MB__LOAD_NIB(load_i4, MB__I4_NIB)
MB__LOAD_NIB(load_e2m1, MB__E2M1_NIB)

/* ---- stores (float targets, overflow to infinity as mb_convert) ---------- */

static void store_f32(void *dst, size_t e0, const float *restrict s, size_t n) {
  memcpy((float *)dst + e0, s, n * sizeof *s);
}

#define MB__STORE(name, T, expr)                                       \
  MB_CPU_QCLONES static void name(void *dst, size_t e0,                \
                                  const float *restrict s, size_t n) { \
    T *restrict d = (T *)dst + e0;                                     \
    for (size_t j = 0; j < n; ++j) d[j] = expr(s[j]);                  \
  }
MB__STORE(store_bf16, uint16_t, mb__cvt_f32_to_bf16)
MB__STORE(store_f16, uint16_t, mb__cvt_f32_to_f16)

/* ---- quantization: q = cvt(x / s), the f32 division of the semantics ----- */

#define MB__QUANT_BYTES(name, cvt)                                         \
  MB_CPU_QCLONES static void name##_1(                                     \
      void *dst, size_t e0, const float *restrict x, float s, size_t n) {  \
    uint8_t *restrict q = (uint8_t *)dst + e0;                             \
    for (size_t j = 0; j < n; ++j) q[j] = (uint8_t)cvt(x[j] / s);          \
  }                                                                        \
  MB_CPU_QCLONES static void name##_v(void *dst, size_t e0,                \
                                      const float *restrict x,             \
                                      const float *restrict s, size_t n) { \
    uint8_t *restrict q = (uint8_t *)dst + e0;                             \
    for (size_t j = 0; j < n; ++j) q[j] = (uint8_t)cvt(x[j] / s[j]);       \
  }
MB__QUANT_BYTES(quant_e4m3, mb__cvt_f32_to_e4m3)
MB__QUANT_BYTES(quant_e5m2, mb__cvt_f32_to_e5m2)
MB__QUANT_BYTES(quant_i8, mb__cvt_f32_to_i8)

/* 4-bit formats pack pairs; S(j) is the scale of element j of the span,
 * CVT the conversion to a nibble. */
#define MB__QUANT_NIB(name, SCALE_T, S, CVT)                                \
  MB_CPU_QCLONES static void name(                                          \
      void *dst, size_t e0, const float *restrict x, SCALE_T s, size_t n) { \
    uint8_t *p = dst;                                                       \
    size_t j = 0;                                                           \
    if ((e0 & 1u) && n) {                                                   \
      mb__cpu_set_nibble(p, e0, CVT(x[0] / S(0)));                          \
      j = 1;                                                                \
    }                                                                       \
    uint8_t *restrict b = p + (e0 + j) / 2;                                 \
    const size_t pairs = (n - j) / 2;                                       \
    for (size_t k = 0; k < pairs; ++k) {                                    \
      const size_t a = j + 2 * k;                                           \
      b[k] = (uint8_t)(CVT(x[a] / S(a)) | (CVT(x[a + 1] / S(a + 1)) << 4)); \
    }                                                                       \
    j += 2 * pairs;                                                         \
    if (j < n) mb__cpu_set_nibble(p, e0 + j, CVT(x[j] / S(j)));             \
  }
#define MB__S_ONE(j) s
#define MB__S_VEC(j) s[j]
MB__QUANT_NIB(quant_i4_1, float, MB__S_ONE, mb__cvt_f32_to_i4)
MB__QUANT_NIB(quant_i4_v, const float *restrict, MB__S_VEC, mb__cvt_f32_to_i4)
MB__QUANT_NIB(quant_e2m1_1, float, MB__S_ONE, mb__cvt_f32_to_e2m1)
MB__QUANT_NIB(quant_e2m1_v, const float *restrict, MB__S_VEC,
              mb__cvt_f32_to_e2m1)

/* ---- the table ----------------------------------------------------------- */

static const mb_cpu_qrow_t k_rows[] = {
    {MB_DTYPE_F32, load_f32, store_f32, NULL, NULL, 0.0f},
    {MB_DTYPE_BF16, load_bf16, store_bf16, NULL, NULL, 0.0f},
    {MB_DTYPE_F16, load_f16, store_f16, NULL, NULL, 0.0f},
    {MB_DTYPE_F8E4M3, load_e4m3, NULL, quant_e4m3_1, quant_e4m3_v, 448.0f},
    {MB_DTYPE_F8E5M2, load_e5m2, NULL, quant_e5m2_1, quant_e5m2_v, 57344.0f},
    {MB_DTYPE_I8, load_i8, NULL, quant_i8_1, quant_i8_v, 127.0f},
    {MB_DTYPE_I4, load_i4, NULL, quant_i4_1, quant_i4_v, 7.0f},
    {MB_DTYPE_F4E2M1, load_e2m1, NULL, quant_e2m1_1, quant_e2m1_v, 6.0f},
};

const mb_cpu_qrow_t *mb__cpu_qrow(mb_dtype_t dtype) {
  for (size_t i = 0; i < sizeof k_rows / sizeof k_rows[0]; ++i)
    if (k_rows[i].dtype == dtype) return &k_rows[i];
  return NULL;
}

/* ---- absmax and scaling
 * ------------------------------------------------------ Patterns of
 * non-negative floats order as unsigned integers, so the maximum is an integer
 * maximum (which vectorises without -ffast-math); NaN patterns, above
 * infinity's, are dropped first, unless kept (MX scales: a NaN makes the
 * block's scale NaN). */
static inline uint32_t abs_bits(float x, int keep_nan) {
  const uint32_t a = mb__cvt_bits(x) & 0x7FFFFFFFu;
  return mb__cvt_sel(a > 0x7F800000u && !keep_nan, 0u, a);
}

MB_CPU_QCLONES uint32_t mb__cpu_amax_bits(const float *restrict x, size_t n,
                                          int keep_nan) {
  uint32_t m = 0;
  for (size_t j = 0; j < n; ++j) {
    const uint32_t a = abs_bits(x[j], keep_nan);
    m = a > m ? a : m;
  }
  return m;
}

MB_CPU_QCLONES void mb__cpu_amax_bits_v(uint32_t *restrict m,
                                        const float *restrict x, size_t n,
                                        int keep_nan) {
  for (size_t j = 0; j < n; ++j) {
    const uint32_t a = abs_bits(x[j], keep_nan);
    m[j] = a > m[j] ? a : m[j];
  }
}

MB_CPU_QCLONES void mb__cpu_e8m0_load(float *restrict dst,
                                      const uint8_t *restrict src, size_t n) {
  for (size_t j = 0; j < n; ++j) dst[j] = mb__cvt_e8m0_to_f32(src[j]);
}

MB_CPU_QCLONES void mb__cpu_e8m0_store(uint8_t *restrict dst,
                                       const float *restrict src, size_t n) {
  for (size_t j = 0; j < n; ++j) dst[j] = mb__cvt_pow2_to_e8m0(src[j]);
}

MB_CPU_QCLONES void mb__cpu_e4m3_scales(float *restrict dst,
                                        const uint8_t *restrict src, float s,
                                        size_t n) {
  for (size_t j = 0; j < n; ++j) dst[j] = mb__cvt_e4m3_to_f32(src[j]) * s;
}

MB_CPU_QCLONES void mb__cpu_scale1(float *restrict x, float s, size_t n) {
  for (size_t j = 0; j < n; ++j) x[j] *= s;
}

MB_CPU_QCLONES void mb__cpu_scalev(float *restrict x, const float *restrict s,
                                   size_t n) {
  for (size_t j = 0; j < n; ++j) x[j] *= s[j];
}

/* x[0, w) is columns [c0, c0 + w) of a row whose block columns of width bn
 * have the scales srow[]: one call per block, or per element when bn = 1. */
static void scale_span(float *x, const float *srow, int64_t c0, int64_t w,
                       int64_t bn) {
  if (bn == 1) {
    mb__cpu_scalev(x, srow + c0, (size_t)w);
    return;
  }
  for (int64_t c = c0, end; c < c0 + w; c = end) {
    end = mb__cpu_block_end(c, bn, c0 + w);
    mb__cpu_scale1(x + (c - c0), srow[c / bn], (size_t)(end - c));
  }
}

/* ---- whole matrices ------------------------------------------------------ */

int mb__cpu_dequant_supports(mb_dtype_t in, mb_dtype_t out) {
  const mb_cpu_qrow_t *o = mb__cpu_qrow(out);
  return mb__cpu_qrow(in) && o && o->store;
}

/* One task's span with the vector loops: one call for its scale blocks
 * (deqg), or per element scales (deqv), or none (s = 1, a product that
 * changes nothing, NaN included, the decoded NaNs being quiet). tab: the
 * thread's lookup table. */
static void dequant_span(const mb_cpu_dqvec_t *vec, int nt, void *dst,
                         const void *src, size_t e0, const float *srow,
                         int64_t c0, int64_t w, int64_t bn,
                         mb_cpu_dqtab_t *tab) {
  if (!srow) {
    vec->deq1(dst, e0, src, e0, 1.0f, (size_t)w, nt, tab);
    return;
  }
  if (bn == 1) {
    vec->deqv(dst, e0, src, e0, srow + c0, (size_t)w, nt);
    return;
  }
  vec->deqg(dst, e0, src, e0, srow + c0 / bn, (size_t)bn, (size_t)(c0 % bn),
            (size_t)w, nt, tab);
}

/* Tasks are (row, chunk) pairs, so a short, wide matrix still spreads over
 * every thread; no output byte is shared (outputs are 2 or 4 bytes). */
void mb__cpu_dequant(unsigned threads, const mb_cpu_dqvec_t *vec, int stream,
                     const void *src, mb_dtype_t in, const float *grid,
                     int64_t bm, int64_t bn, void *dst, mb_dtype_t out,
                     int64_t rows, int64_t cols) {
  const mb_cpu_qrow_t *io = mb__cpu_qrow(in), *oo = mb__cpu_qrow(out);
  const int64_t chunks = (cols + CHUNK - 1) / CHUNK;
  const int64_t gc = grid ? cols / bn : 0;
#pragma omp parallel num_threads(threads)
  {
    /* A row's chunks, one thread's in turn (static schedule), share its
     * scale: the table is built once for them. */
    mb_cpu_dqtab_t tab;
    tab.key = 0;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < rows * chunks; ++t) {
      float buf[CHUNK];
      const int64_t i = t / chunks, c0 = t % chunks * CHUNK;
      const int64_t w = cols - c0 < CHUNK ? cols - c0 : CHUNK;
      const size_t e0 = (size_t)(i * cols + c0);
      const float *srow = grid ? grid + i / bm * gc : NULL;
      if (vec) {
        dequant_span(vec, stream, dst, src, e0, srow, c0, w, bn, &tab);
        continue;
      }
      float *y = out == MB_DTYPE_F32 ? (float *)dst + e0 : buf;
      io->load(y, src, e0, (size_t)w);
      if (srow) scale_span(y, srow, c0, w, bn);
      if (y == buf) oo->store(dst, e0, buf, (size_t)w);
    }
    if (vec && stream) vec->fence(); /* before the barrier that ends this */
  }
}

MB_CPU_QCLONES static void rescale_f32(float *restrict y,
                                       const float *restrict a, float r,
                                       size_t n) {
  for (size_t j = 0; j < n; ++j) y[j] = a[j] * r;
}

MB_CPU_QCLONES static void rescale_i32(float *restrict y,
                                       const int32_t *restrict a, float r,
                                       size_t n) {
  for (size_t j = 0; j < n; ++j) y[j] = (float)a[j] * r;
}

MB_CPU_QCLONES static void add_scaled(float *restrict y,
                                      const float *restrict old, float beta,
                                      size_t n) {
  for (size_t j = 0; j < n; ++j) y[j] += beta * old[j];
}

void mb__cpu_scale_out(unsigned threads, const void *acc, int acc_i32,
                       float alpha, const float *rs, const float *cs,
                       float beta, void *d, mb_dtype_t out, int64_t rows,
                       int64_t cols) {
  const mb_cpu_qrow_t *o = mb__cpu_qrow(out);
  const int64_t chunks = (cols + CHUNK - 1) / CHUNK;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t t = 0; t < rows * chunks; ++t) {
    float buf[CHUNK], old[CHUNK];
    const int64_t i = t / chunks, c0 = t % chunks * CHUNK;
    const size_t w = (size_t)(cols - c0 < CHUNK ? cols - c0 : CHUNK);
    const size_t e0 = (size_t)(i * cols + c0);
    const float r = rs ? rs[i] : alpha;
    if (acc_i32)
      rescale_i32(buf, (const int32_t *)acc + e0, r, w);
    else
      rescale_f32(buf, (const float *)acc + e0, r, w);
    if (cs) mb__cpu_scalev(buf, cs + c0, w);
    /* beta == 0 must not read D: it may hold anything, NaN included. */
    if (beta != 0.0f) {
      o->load(old, d, e0, w);
      add_scaled(buf, old, beta, w);
    }
    o->store(d, e0, buf, w);
  }
}
