/* The CPU backend's AVX-512 quantization loops (backends/cpu/cpu_quant_x86.c,
 * compiled into this test with the portable loops of cpu_quant_rows.c)
 * against the portable loops, byte for byte: q = cvt(x / s) from bf16, f16
 * and f32 to e4m3, e5m2, i8 and i4 (one scale, or one per element; i4
 * pieces that start or end in the middle of a byte, whose other nibble
 * must survive), and the absmax (NaN skipped or kept), whole and per
 * element.
 *
 * The inputs are what a random tensor rarely holds: every fp8 and i8
 * rounding boundary of the quotient (exact ties, and the f32 patterns a few
 * steps either side), f32 and input-format subnormals, values around and
 * past each format's saturation, +-inf, NaN of both signs, +-0; under
 * power-of-two scales (exact quotients, so the ties stay ties), odd scales
 * (rounded quotients) and extreme ones (quotients that overflow to
 * infinity or fall into f32's subnormals); over lengths 1..70 and longer
 * ones at odd offsets (every masked head and tail); and the transposed
 * 16 x 16 tiles against the portable widening. On a CPU without
 * AVX-512 the tests skip. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_quant.h"
#include "mb_cvt.h"
#include "test_util.h"

static const mb_dtype_t k_xdt[] = {MB_DTYPE_BF16, MB_DTYPE_F16, MB_DTYPE_F32};
static const mb_dtype_t k_qdt[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2,
                                   MB_DTYPE_I8, MB_DTYPE_I4};

/* The f32 values at which the code of qdt changes, with v the code's value:
 * midpoints of neighbouring codes (exact in f32: a few more bits than the
 * format), and for i8 and i4 the half-integers. Appends to out, returns the
 * count. */
static size_t boundaries(mb_dtype_t qdt, float *out) {
  size_t n = 0;
  if (qdt == MB_DTYPE_I8 || qdt == MB_DTYPE_I4) {
    for (int k = -130; k <= 130; ++k) out[n++] = (float)k + 0.5f;
    return n;
  }
  float prev = 0.0f;
  for (unsigned b = 1; b < 0x80u; ++b) {
    const float v = qdt == MB_DTYPE_F8E4M3 ? mb__cvt_e4m3_to_f32((uint8_t)b)
                                           : mb__cvt_e5m2_to_f32((uint8_t)b);
    if (!isfinite(v)) break;
    out[n++] = prev + (v - prev) / 2.0f;
    prev = v;
  }
  out[n++] = prev * 1.0625f; /* past the largest: saturation */
  return n;
}

/* Quotients q in f32 for the scale s: each boundary and the patterns up to
 * 3 steps either side, both signs, times s (exactly, for a power-of-two s;
 * rounded otherwise), then rounded to xdt. Plus the specials and random
 * values of every magnitude. Written as xdt into x; n is returned. */
static size_t make_x(mb_dtype_t xdt, mb_dtype_t qdt, float s, void *x,
                     size_t cap, uint64_t seed) {
  float *f = malloc(cap * sizeof *f), bnd[600];
  size_t n = 0;
  const size_t nb = boundaries(qdt, bnd);
  for (size_t i = 0; i < nb && n + 14 <= cap; ++i)
    for (int d = -3; d <= 3; ++d) {
      const float q = mb__cvt_float(mb__cvt_bits(bnd[i]) + (uint32_t)d);
      f[n++] = q * s;
      f[n++] = -q * s;
    }
  static const float sp[] = {
      0.0f,      -0.0f,      INFINITY,  -INFINITY,        NAN,       -NAN,
      0x1p-149f, -0x1p-149f, 0x1p-126f, 0x1.fffffep-127f, 0x1p-133f, 0x1p-24f,
      0x1p-14f,  0x1p-15f,   65504.0f,  65520.0f,         3.0e38f,   -3.0e38f,
      448.0f,    464.0f,     57344.0f,  61440.0f,         127.5f,    -128.5f,
      0x1p-9f,   0x1p-10f,   0x1p-16f,  0x1p-17f};
  for (size_t i = 0; i < sizeof sp / sizeof sp[0] && n < cap; ++i)
    f[n++] = sp[i];
  while (n < cap) { /* random sign, exponent and significand */
    const uint64_t r = test_splitmix64(&seed);
    f[n++] = mb__cvt_float((uint32_t)r & 0xFFFFFFFFu);
    if (n < cap)
      f[n++] = ldexpf((float)(r >> 40) * 0x1p-24f, (int)(r >> 32 & 63) - 40);
  }
  for (size_t i = 0; i < n; ++i) { /* shuffle, so every lane sees each */
    const size_t j = (size_t)(test_splitmix64(&seed) % n);
    const float t = f[i];
    f[i] = f[j], f[j] = t;
  }
  assert_int_equal(mb_convert(x, xdt, f, MB_DTYPE_F32, n, 0), MB_OK);
  free(f);
  return n;
}

enum { CAP = 8192, OFF = 37 };

/* Every (xdt, qdt, scale), whole and in pieces of each length 1..70 at odd
 * offsets: the vector loop's bytes against the portable loop's. */
static void test_quant_bytes(void **state) {
  (void)state;
  if (!mb__cpu_quant_vec_cpu()) skip(); /* the CPU's answer */
  assert_non_null(mb__cpu_qvec(MB_DTYPE_BF16, MB_DTYPE_F8E4M3));
  static const float scales[] = {1.0f,   0.5f,        0x1p-20f,
                                 3.0f,   0.00390625f, 0.0137f,
                                 1e-30f, 1e30f,       7.0f / 1024.0f};
  void *x = malloc(CAP * 4 + 64);
  float *buf = malloc(CAP * sizeof *buf), *sv = malloc(CAP * sizeof *sv);
  uint8_t *qv = malloc(CAP + OFF), *qp = malloc(CAP + OFF);
  uint8_t *qa = aligned_alloc(64, CAP); /* streamed lines */
  assert_true(x && buf && sv && qv && qp && qa);
  size_t checked = 0;
  for (size_t xi = 0; xi < 3; ++xi)
    for (size_t qi = 0; qi < sizeof k_qdt / sizeof k_qdt[0]; ++qi)
      for (size_t si = 0; si < sizeof scales / sizeof scales[0]; ++si) {
        const mb_cpu_qvec_t *v = mb__cpu_qvec(k_xdt[xi], k_qdt[qi]);
        const mb_cpu_qrow_t *xo = mb__cpu_qrow(k_xdt[xi]),
                            *qo = mb__cpu_qrow(k_qdt[qi]);
        assert_non_null(v);
        const float s = scales[si];
        const size_t n = make_x(k_xdt[xi], k_qdt[qi], s, x, CAP - OFF,
                                (uint64_t)(xi * 100 + qi * 10 + si));
        /* pieces: [e, e + len) for growing len, at shifting offsets */
        for (size_t e = 0, len = 1; e < n; e += len, len = len % 70 + 1) {
          const size_t w = e + len <= n ? len : n - e;
          const size_t qe = (e * 7) % OFF; /* an unaligned destination */
          memset(qv, 0xA5, CAP + OFF), memset(qp, 0xA5, CAP + OFF);
          v->quant1(qv, qe, x, e, s, w, (int)(e & 1)); /* nt: unaligned */
          xo->load(buf, x, e, w);
          qo->quant1(qp, qe, buf, s, w);
          if (memcmp(qv, qp, CAP + OFF) != 0) {
            size_t i = 0;
            while (qv[i] == qp[i]) ++i;
            fail_msg(
                "%s -> %s, s = %a, piece %zu+%zu: byte %zu is %02x, "
                "portable %02x (x = %a)",
                mb_dtype_name(k_xdt[xi]), mb_dtype_name(k_qdt[qi]), (double)s,
                e, w, i, qv[i], qp[i], (double)buf[i - qe < w ? i - qe : 0]);
          }
          /* one scale per element: s, 2s, 0.75s in turn */
          for (size_t i = 0; i < w; ++i)
            sv[i] = s * (float)(i % 3 + 1) * (i % 3 == 2 ? 0.375f : 1.0f);
          v->quantv(qv, qe, x, e, sv, w, (int)(e & 1));
          qo->quantv(qp, qe, buf, sv, w);
          if (memcmp(qv, qp, CAP + OFF) != 0)
            fail_msg("%s -> %s, per-element scales from %a, piece %zu+%zu",
                     mb_dtype_name(k_xdt[xi]), mb_dtype_name(k_qdt[qi]),
                     (double)s, e, w);
          checked += w;
        }
        /* the whole run in one call (the line-wide loop), one scale and
         * one per element, plain and streamed from each of the first three
         * elements of a line (the first is streamed; i4's odd start) */
        xo->load(buf, x, 0, n);
        for (size_t i = 0; i < n; ++i)
          sv[i] = s * (float)(i % 3 + 1) * (i % 3 == 2 ? 0.375f : 1.0f);
        for (int nt = 0; nt < 2; ++nt)
          for (size_t e = 0; e < (nt ? 3u : 1u); e += 1)
            for (int per = 0; per < 2; ++per) {
              memset(qa, 0, CAP), memset(qp, 0, CAP);
              /* this thread reads its own streamed stores: no fence */
              if (per) {
                v->quantv(qa, e, x, e, sv + e, n - e, nt);
                qo->quantv(qp, e, buf + e, sv + e, n - e);
              } else {
                v->quant1(qa, e, x, e, s, n - e, nt);
                qo->quant1(qp, e, buf + e, s, n - e);
              }
              if (memcmp(qa, qp, n) != 0)
                fail_msg("%s -> %s, s = %a, whole from %zu, nt %d, per %d",
                         mb_dtype_name(k_xdt[xi]), mb_dtype_name(k_qdt[qi]),
                         (double)s, e, nt, per);
            }
        /* a piece's blocks in one call (quantg): blocks of 37, 64 and
         * 128, the piece starting at element 3 of X and Q and `off` into
         * its first block (0, or the rest of a block: the first piece
         * short), the last one short, piece k's scale sv[k] */
        for (size_t gi = 0; gi < 6; ++gi) {
          const size_t g = gi % 3 == 0 ? 37 : 64u << (gi % 3 - 1), e = 3;
          const size_t off = gi < 3 ? 0 : g - 5;
          memset(qa, 0, CAP), memset(qp, 0, CAP);
          v->quantg(qa, e, x, e, sv, g, off, n - e, 0);
          for (size_t k = 0, j = 0, len = g - off; j < n - e;
               ++k, j += len, len = g)
            qo->quant1(qp, e + j, buf + e + j, sv[k],
                       n - e - j < len ? n - e - j : len);
          if (memcmp(qa, qp, n) != 0)
            fail_msg("%s -> %s, s = %a, blocks of %zu from %zu into one",
                     mb_dtype_name(k_xdt[xi]), mb_dtype_name(k_qdt[qi]),
                     (double)s, g, off);
        }
      }
  assert_true(checked > 100000);
  free(x), free(buf), free(sv), free(qv), free(qp), free(qa);
}

/* The absmax pattern, NaN skipped and kept, with NaN, infinity and
 * subnormals placed in every lane position and tail. */
static void test_amax(void **state) {
  (void)state;
  if (!mb__cpu_quant_vec_cpu()) skip(); /* the CPU's answer */
  assert_non_null(mb__cpu_qvec(MB_DTYPE_BF16, MB_DTYPE_F8E4M3));
  void *x = malloc(CAP * 4);
  float *buf = malloc(CAP * sizeof *buf), *f = malloc(CAP * sizeof *f);
  assert_true(x && buf && f);
  uint64_t seed = 7;
  static const float big[] = {NAN,       -NAN,      INFINITY,
                              -INFINITY, 0x1p-140f, -65504.0f};
  for (size_t xi = 0; xi < 3; ++xi)
    for (size_t len = 1; len < 300; len += len < 70 ? 1 : 37)
      for (size_t k = 0; k <= sizeof big / sizeof big[0]; ++k)
        for (int keep = 0; keep < 2; ++keep) {
          const size_t e0 = len % 13;
          for (size_t i = 0; i < e0 + len; ++i)
            f[i] =
                ldexpf((float)(test_splitmix64(&seed) >> 40) * 0x1p-24f - 0.5f,
                       (int)(i % 9) - 4);
          if (k < sizeof big / sizeof big[0])
            f[e0 + (size_t)(test_splitmix64(&seed) % len)] = big[k];
          mb_convert(x, k_xdt[xi], f, MB_DTYPE_F32, e0 + len, 0);
          const mb_cpu_qvec_t *v = mb__cpu_qvec(k_xdt[xi], MB_DTYPE_I8);
          mb__cpu_qrow(k_xdt[xi])->load(buf, x, e0, len);
          const uint32_t want = mb__cpu_amax_bits(buf, len, keep);
          const uint32_t got = v->amax(x, e0, len, keep);
          if (got != want)
            fail_msg(
                "%s amax of %zu at %zu (special %zu, keep_nan %d): "
                "%08x, portable %08x",
                mb_dtype_name(k_xdt[xi]), len, e0, k, keep, got, want);
          /* a row's blocks in one call (amaxg): blocks of 7 and of 32,
           * the last one short, into running maxima */
          for (size_t g = 7; g <= 32; g += 25) {
            uint32_t mg[300], mw[300];
            for (size_t b = 0; b < (len + g - 1) / g; ++b)
              mg[b] = mw[b] = (uint32_t)test_splitmix64(&seed) & 0x7F000000u;
            v->amaxg(mg, x, e0, len, g, keep);
            for (size_t b = 0, j = 0; j < len; ++b, j += g) {
              const uint32_t m =
                  mb__cpu_amax_bits(buf + j, len - j < g ? len - j : g, keep);
              mw[b] = m > mw[b] ? m : mw[b];
            }
            if (memcmp(mg, mw, (len + g - 1) / g * sizeof mg[0]) != 0)
              fail_msg(
                  "%s amaxg of %zu at %zu in blocks of %zu (special %zu, "
                  "keep_nan %d)",
                  mb_dtype_name(k_xdt[xi]), len, e0, g, k, keep);
          }
          if (!v->amaxv) continue; /* f16: the portable loop */
          /* per column over a block of rows ld apart (a row group and a
           * part of one: 1..11 rows), into running maxima (of other rows),
           * the special in a random row */
          const size_t rows = 1 + len % 11, ld = len + 5;
          for (size_t i = 0; i < rows * ld; ++i)
            f[i] =
                ldexpf((float)(test_splitmix64(&seed) >> 40) * 0x1p-24f - 0.5f,
                       (int)(i % 9) - 4);
          if (k < sizeof big / sizeof big[0])
            f[(size_t)(test_splitmix64(&seed) % rows) * ld + e0 +
              (size_t)(test_splitmix64(&seed) % len)] = big[k];
          mb_convert(x, k_xdt[xi], f, MB_DTYPE_F32, rows * ld, 0);
          uint32_t mv[300], mp[300];
          for (size_t i = 0; i < len; ++i)
            mv[i] = mp[i] = (uint32_t)test_splitmix64(&seed) & 0x7F800000u;
          v->amaxv(mv, x, e0, ld, rows, len, keep);
          for (size_t r = 0; r < rows; ++r) {
            mb__cpu_qrow(k_xdt[xi])->load(buf, x, r * ld + e0, len);
            mb__cpu_amax_bits_v(mp, buf, len, keep);
          }
          if (memcmp(mv, mp, len * sizeof mv[0]) != 0)
            fail_msg("%s amaxv of %zu x %zu at %zu (special %zu, keep_nan %d)",
                     mb_dtype_name(k_xdt[xi]), rows, len, e0, k, keep);
        }
  free(x), free(buf), free(f);
}

/* The transposed 16 x 16 tiles, at odd offsets and strides. */
static void test_tile(void **state) {
  (void)state;
  if (!mb__cpu_quant_vec_cpu()) skip(); /* the CPU's answer */
  assert_non_null(mb__cpu_qvec(MB_DTYPE_BF16, MB_DTYPE_F8E4M3));
  enum { XLD = 43, LD = 21 };
  float f[16 * XLD + 8], t[16 * LD], want[16 * XLD + 8];
  void *x = malloc(sizeof f);
  uint64_t seed = 11;
  for (size_t i = 0; i < sizeof f / sizeof f[0]; ++i)
    f[i] = mb__cvt_float((uint32_t)test_splitmix64(&seed));
  for (size_t xi = 0; xi < 3; ++xi) {
    const size_t n = sizeof f / sizeof f[0];
    mb_convert(x, k_xdt[xi], f, MB_DTYPE_F32, n, 0);
    mb__cpu_qrow(k_xdt[xi])->load(want, x, 0, n);
    memset(t, 0, sizeof t);
    mb__cpu_qvec(k_xdt[xi], MB_DTYPE_I8)->tile16(t, LD, x, 5, XLD);
    for (size_t i = 0; i < 16; ++i)
      for (size_t j = 0; j < 16; ++j)
        if (mb__cvt_bits(t[i * LD + j]) != mb__cvt_bits(want[5 + j * XLD + i]))
          fail_msg("%s tile [%zu][%zu]: %a, want %a", mb_dtype_name(k_xdt[xi]),
                   i, j, (double)t[i * LD + j], (double)want[5 + j * XLD + i]);
  }
  free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quant_bytes),
      cmocka_unit_test(test_amax),
      cmocka_unit_test(test_tile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
