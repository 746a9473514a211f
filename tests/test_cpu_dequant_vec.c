/* The CPU backend's AVX-512 dequantize loops (backends/cpu/cpu_dequant_x86.c,
 * compiled into this test with the portable loops of cpu_quant_rows.c)
 * against the portable load, scaling and store, bit for bit: y =
 * cvt(fl32(q * s)) from e4m3, e5m2, i8, i4 and e2m1 to f32, bf16 and f16.
 *
 * The codes are every byte pattern (NaN, infinity, subnormal and both
 * zeros of each format), in a shuffled order so every lane sees each; the
 * scales are the ordinary ones and those that push products into f32's
 * subnormals, past bf16's and f16's range, or make them NaN (0 times
 * infinity, a NaN scale); one scale per span and one per element; spans
 * of each length 0..70 at even and odd element offsets (a 4-bit span that
 * starts in the middle of a byte, every masked head and tail; Y's offset
 * apart from Q's), with and
 * without non-temporal stores, and nothing outside a span written (a NaN
 * code times a NaN scale may be either NaN: any is accepted). One scale
 * runs each span twice: computed, and looked up in a table kept across
 * spans, scales and formats (built by the first, long span of each scale
 * for byte codes; a table that outlived its scale or formats fails). Then
 * the whole-matrix pass (mb__cpu_dequant) with and without the vector
 * loops, over block, row, column and no scales. On a CPU without AVX-512
 * the tests skip. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_quant.h"
#include "mb_cvt.h"
#include "test_util.h"

static const mb_dtype_t k_in[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2, MB_DTYPE_I8,
                                  MB_DTYPE_I4, MB_DTYPE_F4E2M1};
static const mb_dtype_t k_out[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};

enum { CAP = 4096, OFF = 37, GUARD = 64 };

/* CAP elements' bytes: each of the 256 patterns as often as the next. */
static void make_codes(uint8_t *q, uint64_t seed) {
  for (size_t i = 0; i < CAP; ++i) q[i] = (uint8_t)i;
  for (size_t i = 0; i < CAP; ++i) {
    const size_t j = (size_t)(test_splitmix64(&seed) % CAP);
    const uint8_t t = q[i];
    q[i] = q[j], q[j] = t;
  }
}

static const float k_scales[] = {
    1.0f,     0.5f,     3.0f,      0.0137f, -2.5f,     1e-30f,        0x1p-140f,
    1e30f,    3.0e38f,  0x1p-126f, 0.0f,    INFINITY,  NAN,           -NAN,
    65504.0f, 0x1p-24f, 448.0f,    -0.0f,   0x1p-149f, 7.0f / 1024.0f};
enum { NSCALES = sizeof k_scales / sizeof k_scales[0] };

static size_t out_bytes(mb_dtype_t out, size_t n) {
  return out == MB_DTYPE_F32 ? 4 * n : 2 * n;
}

/* A NaN code times a NaN scale is either NaN (IEEE 754 leaves which one to
 * the implementation, and the compiler may swap a product's operands): for
 * that element alone any NaN is right, so the vector loop's is taken. */
static void nan_times_nan(void *want, const void *got, mb_dtype_t out,
                          size_t ye, float code, float scale) {
  if (!isnan(code) || !isnan(scale)) return;
  const size_t b = out_bytes(out, 1);
  const char *g = (const char *)got + ye * b;
  uint32_t bits = 0;
  memcpy(&bits, g, b); /* little-endian: the element's low bytes */
  const int nan = out == MB_DTYPE_F32    ? (bits & 0x7FFFFFFFu) > 0x7F800000u
                  : out == MB_DTYPE_BF16 ? (bits & 0x7FFFu) > 0x7F80u
                                         : (bits & 0x7FFFu) > 0x7C00u;
  if (nan) memcpy((char *)want + ye * b, g, b); /* any NaN, but a NaN */
}

/* What the portable path writes: load, then x *= s (or s[j]), then store
 * (got: the vector loop's output, for nan_times_nan). */
static void want_span(mb_dtype_t in, mb_dtype_t out, void *y, const void *got,
                      size_t ye, const void *q, size_t e0, float s1,
                      const float *sv, size_t n) {
  float *buf = malloc((n + 1) * sizeof *buf), *code = malloc((n + 1) * 4);
  mb__cpu_qrow(in)->load(buf, q, e0, n);
  memcpy(code, buf, n * sizeof *buf);
  if (sv)
    mb__cpu_scalev(buf, sv, n);
  else
    mb__cpu_scale1(buf, s1, n);
  mb__cpu_qrow(out)->store(y, ye, buf, n);
  for (size_t j = 0; j < n; ++j)
    nan_times_nan(y, got, out, ye + j, code[j], sv ? sv[j] : s1);
  free(buf);
  free(code);
}

/* Bytes of y and want from element 0 to e0 + n + GUARD, compared. */
static void same(const void *y, const void *want, size_t bytes,
                 const char *what, mb_dtype_t in, mb_dtype_t out, size_t e0,
                 size_t n, int nt) {
  if (memcmp(y, want, bytes) == 0) return;
  const uint8_t *a = y, *b = want;
  size_t k = 0;
  while (a[k] == b[k]) ++k;
  fail_msg("%s %s -> %s, e0 %zu, n %zu, nt %d: byte %zu is %02x, want %02x",
           what, mb_dtype_name(in), mb_dtype_name(out), e0, n, nt, k, a[k],
           b[k]);
}

/* One (in, out): every scale, one per span and one per element, spans of
 * the whole and then 0..70 elements at offsets 0 and OFF, nt 0 and 1; one
 * scale computed (tab NULL) and by tab. */
static void check_pair(mb_dtype_t in, mb_dtype_t out, const uint8_t *q,
                       const float *sv, mb_cpu_dqtab_t *tab) {
  const mb_cpu_dqvec_t *v = mb__cpu_dqvec(in, out);
  assert_non_null(v);
  const size_t cap = out_bytes(out, CAP + OFF + GUARD);
  /* aligned: the spans at offset 0 take the non-temporal stores */
  const size_t cap64 = (cap + 63) / 64 * 64;
  uint8_t *y = aligned_alloc(64, cap64), *w = aligned_alloc(64, cap64);
  for (int per = 0; per < 3; ++per) /* 0: computed, 1: per element, 2: tab */
    for (size_t si = 0; si < (per == 1 ? 1u : (size_t)NSCALES); ++si)
      for (int nt = 0; nt < 2; ++nt)
        for (size_t k = 0; k <= 71; ++k)
          for (size_t e0 = 0; e0 <= OFF; e0 += OFF) {
            const size_t n = (k + 71) % 72; /* 71 (the whole) first */
            const size_t len = n == 71 ? CAP - e0 : n;
            const size_t ye = e0 ? 5 : 0; /* Y's offset apart from Q's */
            memset(y, 0xA5, cap);
            memset(w, 0xA5, cap);
            if (per == 1)
              v->deqv(y, ye, q, e0, sv + e0, len, nt);
            else
              v->deq1(y, ye, q, e0, k_scales[si], len, nt,
                      per == 2 ? tab : NULL);
            if (nt) v->fence();
            want_span(in, out, w, y, ye, q, e0, k_scales[si],
                      per == 1 ? sv + e0 : NULL, len);
            same(y, w, out_bytes(out, ye + len + GUARD),
                 per == 1   ? "deqv"
                 : per == 2 ? "deq1 (table)"
                            : "deq1",
                 in, out, e0, len, nt);
          }
  free(y);
  free(w);
}

/* What the portable path writes for a span whose groups of g (the first
 * `off` into its group) have the scales s[0], s[1], ...: one want_span a
 * group. */
static void want_groups(mb_dtype_t in, mb_dtype_t out, void *y, const void *got,
                        size_t ye, const void *q, size_t e0, const float *s,
                        size_t g, size_t off, size_t n) {
  for (size_t k = 0, j = 0, len = g - off; j < n; ++k, j += len, len = g)
    want_span(in, out, y, got, ye + j, q, e0 + j, s[k], NULL,
              n - j < len ? n - j : len);
}

/* deqg for one (in, out): groups of 2, 3, 16, 113 and 128, pieces of
 * 0..300 elements starting at every offset into a group up to 5 and at its
 * last element, at an even and an odd element (a mid-byte start for
 * nibbles), streamed and not; the scales any pattern or a special. */
static void check_groups(mb_dtype_t in, mb_dtype_t out, const uint8_t *q,
                         const float *sv, mb_cpu_dqtab_t *tab) {
  static const size_t k_g[] = {2, 3, 16, 113, 128};
  const mb_cpu_dqvec_t *v = mb__cpu_dqvec(in, out);
  assert_non_null(v);
  const size_t cap64 = (out_bytes(out, CAP + OFF + GUARD) + 63) / 64 * 64;
  uint8_t *y = aligned_alloc(64, cap64), *w = aligned_alloc(64, cap64);
  for (size_t gi = 0; gi < sizeof k_g / sizeof k_g[0]; ++gi)
    for (size_t off = 0; off < k_g[gi]; ++off)
      for (size_t n = 0; n <= 300 && (off <= 5 || off == k_g[gi] - 1);
           n += n < 40 ? 1 : 37)
        for (size_t e0 = 0; e0 <= 1; ++e0) {
          const int nt = (int)((n + off) & 1);
          memset(y, 0xA5, cap64);
          memset(w, 0xA5, cap64);
          v->deqg(y, 0, q, e0, sv, k_g[gi], off, n, nt, tab);
          if (nt) v->fence();
          want_groups(in, out, w, y, 0, q, e0, sv, k_g[gi], off, n);
          same(y, w, out_bytes(out, n + GUARD), "deqg", in, out, e0, n, nt);
        }
  free(y);
  free(w);
}

static void test_spans(void **state) {
  (void)state;
  if (!mb__cpu_quant_vec_cpu()) skip(); /* the CPU's answer */
  assert_non_null(mb__cpu_dqvec(MB_DTYPE_I8, MB_DTYPE_F32));
  uint8_t *q = malloc(CAP);
  float *sv = malloc((CAP + OFF) * sizeof *sv);
  make_codes(q, 7);
  uint64_t seed = 3;
  for (size_t j = 0; j < CAP + OFF; ++j) { /* the specials, and any pattern */
    const uint64_t r = test_splitmix64(&seed);
    sv[j] = r & 1 ? k_scales[(r >> 1) % NSCALES]
                  : mb__cvt_float((uint32_t)(r >> 32));
  }
  mb_cpu_dqtab_t tab; /* one for every pair: the formats change under it */
  tab.key = 0;
  for (size_t i = 0; i < sizeof k_in / sizeof k_in[0]; ++i)
    for (size_t o = 0; o < sizeof k_out / sizeof k_out[0]; ++o)
      check_pair(k_in[i], k_out[o], q, sv, &tab);
  for (size_t i = 0; i < sizeof k_in / sizeof k_in[0]; ++i)
    for (size_t o = 0; o < sizeof k_out / sizeof k_out[0]; ++o)
      check_groups(k_in[i], k_out[o], q, sv, &tab);
  free(q);
  free(sv);
}

/* The whole matrix, rows x cols (odd cols: rows that start mid-byte), by
 * the vector loops (streamed and not) and by the portable ones. */
static void test_matrix(void **state) {
  (void)state;
  if (!mb__cpu_quant_vec_cpu()) skip(); /* the CPU's answer */
  assert_non_null(mb__cpu_dqvec(MB_DTYPE_I8, MB_DTYPE_F32));
  enum { ROWS = 12, COLS = 2 * 1024 + 96 + 3 }; /* two chunks and a part */
  /* COLS = 19 x 113: groups of an odd size, each row's pieces starting
   * inside one and mid-byte */
  static const int64_t blocks[][2] = {{1, 1}, {4, 1},   {1, COLS},
                                      {3, 1}, {1, 113}, {2, 113}};
  uint8_t *q = malloc(ROWS * COLS);
  float *grid = malloc(ROWS * COLS * sizeof *grid);
  uint8_t *y = malloc(ROWS * COLS * 4), *w = malloc(ROWS * COLS * 4);
  uint64_t seed = 5;
  for (size_t i = 0; i < ROWS * COLS; ++i) {
    q[i] = (uint8_t)test_splitmix64(&seed);
    grid[i] = k_scales[test_splitmix64(&seed) % NSCALES];
  }
  for (size_t i = 0; i < sizeof k_in / sizeof k_in[0]; ++i)
    for (size_t o = 0; o < sizeof k_out / sizeof k_out[0]; ++o)
      for (size_t b = 0; b <= sizeof blocks / sizeof blocks[0]; ++b)
        for (int nt = 0; nt < 2; ++nt) {
          const int none = b == sizeof blocks / sizeof blocks[0];
          const int64_t bm = none ? 1 : blocks[b][0],
                        bn = none ? 1 : blocks[b][1];
          const int64_t rows = ROWS, cols = COLS;
          const size_t bytes = out_bytes(k_out[o], (size_t)(rows * cols));
          memset(y, 0xA5, bytes);
          memset(w, 0xA5, bytes);
          mb__cpu_dequant(2, mb__cpu_dqvec(k_in[i], k_out[o]), nt, q, k_in[i],
                          none ? NULL : grid, bm, bn, y, k_out[o], rows, cols);
          mb__cpu_dequant(2, NULL, 0, q, k_in[i], none ? NULL : grid, bm, bn, w,
                          k_out[o], rows, cols);
          for (int64_t e = 0; e < rows * cols; ++e) {
            float code;
            mb__cpu_qrow(k_in[i])->load(&code, q, (size_t)e, 1);
            const float sc =
                none ? 1.0f : grid[e / cols / bm * (cols / bn) + e % cols / bn];
            nan_times_nan(w, y, k_out[o], (size_t)e, code, sc);
          }
          same(y, w, bytes, "matrix", k_in[i], k_out[o], (size_t)bm, (size_t)bn,
               nt);
        }
  free(q);
  free(grid);
  free(y);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spans),
      cmocka_unit_test(test_matrix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
