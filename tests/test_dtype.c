/* Conversions are checked against references written independently of
 * lib/dtype.c: decoding by the ldexp formula, encoding by picking the nearest
 * candidate in double (ties to the even pattern), and the compiler's own
 * _Float16 where it exists. Random samples use a fixed seed so a failure
 * reproduces. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_internal.h"
#include "rng.h"
#include "microbench/dtype.h"
#include "test_util.h"

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Random f32: half uniform bit patterns (mostly huge or tiny values), half
 * with exponents in [lo, hi] where the narrow formats actually live. */
static float random_f32(uint64_t *rng, int lo, int hi) {
  uint64_t r = test_splitmix64(rng);
  if (r & 1) return float_of((uint32_t)(r >> 32));
  int e = lo + (int)((r >> 1) % (uint64_t)(hi - lo + 1));
  float m = 1.0f + (float)((r >> 32) & 0x7FFFFF) * 0x1p-23f;
  float x = ldexpf(m, e);
  return (r >> 31) & 1 ? -x : x;
}

typedef struct {
  mb_dtype_t dtype;
  int exp_bits, man_bits, bias, has_inf;
  uint32_t max_bits;
} fmt_t;

static const fmt_t k_bf16 = {MB_DTYPE_BF16, 8, 7, 127, 1, 0x7F7F};
static const fmt_t k_f16 = {MB_DTYPE_F16, 5, 10, 15, 1, 0x7BFF};
static const fmt_t k_e4m3 = {MB_DTYPE_F8E4M3, 4, 3, 7, 0, 0x7E};
static const fmt_t k_e5m2 = {MB_DTYPE_F8E5M2, 5, 2, 15, 1, 0x7B};

/* Value of a positive pattern as if the exponent range were unbounded, so
 * max_bits + 1 gives the "next value above max" that decides overflow. */
static double ref_unbounded(const fmt_t *f, uint32_t bits) {
  uint32_t e = bits >> f->man_bits, m = bits & ((1u << f->man_bits) - 1);
  if (e == 0) return ldexp(m, 1 - f->bias - f->man_bits);
  return ldexp(1.0 + ldexp(m, -f->man_bits), (int)e - f->bias);
}

static double ref_decode(const fmt_t *f, uint32_t bits) {
  int width = f->exp_bits + f->man_bits;
  uint32_t mag = bits & ((1u << width) - 1);
  double sign = (bits >> width) & 1 ? -1.0 : 1.0;
  uint32_t e = mag >> f->man_bits, m = mag & ((1u << f->man_bits) - 1);
  if (f->has_inf && e == (1u << f->exp_bits) - 1)
    return m ? NAN : sign * INFINITY;
  if (!f->has_inf && mag == (1u << width) - 1) return NAN;
  return sign * ref_unbounded(f, mag);
}

static uint32_t overflow_bits(const fmt_t *f, unsigned flags) {
  if (flags & MB_CONVERT_SATURATE) return f->max_bits;
  if (f->has_inf) return ((1u << f->exp_bits) - 1) << f->man_bits;
  return (1u << (f->exp_bits + f->man_bits)) - 1; /* e4m3: NaN */
}

/* Nearest pattern to x by brute force over all patterns 0..max_bits+1
 * (vals[c] = ref_unbounded(f, c)), ties to the even pattern; max_bits+1
 * winning means overflow. */
static uint32_t ref_encode(const fmt_t *f, const double *vals, double x,
                           unsigned flags) {
  uint32_t sign = signbit(x) ? 1u << (f->exp_bits + f->man_bits) : 0;
  double a = fabs(x);
  /* At or past the value beyond max, distances in double could tie. */
  if (a >= vals[f->max_bits + 1]) return sign | overflow_bits(f, flags);
  uint32_t best = 0;
  double best_d = INFINITY;
  for (uint32_t c = 0; c <= f->max_bits + 1; c++) {
    double d = fabs(vals[c] - a);
    if (d < best_d || (d == best_d && (c & 1) == 0)) {
      best = c;
      best_d = d;
    }
  }
  if (best > f->max_bits) best = overflow_bits(f, flags);
  return sign | best;
}

static uint32_t store_bits(const fmt_t *f, double v, unsigned flags) {
  uint32_t out = 0; /* little-endian: the low bytes hold the element */
  mb__store(&out, f->dtype, 0, v, flags);
  return f->exp_bits + f->man_bits == 7 ? out & 0xFF : out & 0xFFFF;
}

static int same_or_both_nan(double a, double b) {
  return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* ---- metadata and names -------------------------------------------------- */

static void test_metadata(void **state) {
  (void)state;
  assert_string_equal(mb_dtype_name(MB_DTYPE_NONE), "none");
  assert_string_equal(mb_dtype_name(MB_DTYPE_BF16), "bf16");
  assert_string_equal(mb_dtype_name(MB_DTYPE_F8E4M3), "f8e4m3");
  assert_string_equal(mb_dtype_name(MB_DTYPE_COUNT), "?");
  assert_string_equal(mb_dtype_name((mb_dtype_t)-1), "?");
  assert_int_equal(mb_dtype_bits(MB_DTYPE_F32), 32);
  assert_int_equal(mb_dtype_bits(MB_DTYPE_I4), 4);
  assert_int_equal(mb_dtype_bits(MB_DTYPE_NONE), 0);
  assert_int_equal(mb_dtype_bits(MB_DTYPE_COUNT), 0);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_I4, 3), 2);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_I4, 4), 2);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_I4, SIZE_MAX), SIZE_MAX / 2 + 1);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_BF16, 5), 10);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_NONE, 5), 0);
  assert_true(mb_dtype_is_float(MB_DTYPE_F8E5M2));
  assert_false(mb_dtype_is_float(MB_DTYPE_I8));
  assert_false(mb_dtype_is_float(MB_DTYPE_NONE));
  assert_true(mb_dtype_unit_roundoff(MB_DTYPE_F32) == 0x1p-24);
  assert_true(mb_dtype_unit_roundoff(MB_DTYPE_F16) == 0x1p-11);
  assert_true(mb_dtype_unit_roundoff(MB_DTYPE_BF16) == 0x1p-8);
  assert_true(mb_dtype_unit_roundoff(MB_DTYPE_F8E4M3) == 0x1p-4);
  assert_true(mb_dtype_unit_roundoff(MB_DTYPE_F8E5M2) == 0x1p-3);
  assert_true(mb_dtype_unit_roundoff(MB_DTYPE_I8) == 0.0);
  assert_true(mb_dtype_max(MB_DTYPE_F32) == FLT_MAX);
  assert_true(mb_dtype_max(MB_DTYPE_F16) == 65504.0);
  assert_true(mb_dtype_max(MB_DTYPE_BF16) == 0x1.FEp127);
  assert_true(mb_dtype_max(MB_DTYPE_F8E4M3) == 448.0);
  assert_true(mb_dtype_max(MB_DTYPE_F8E5M2) == 57344.0);
  assert_true(mb_dtype_max(MB_DTYPE_I8) == 127.0);
  assert_true(mb_dtype_max(MB_DTYPE_I4) == 7.0);
  assert_true(mb_dtype_max(MB_DTYPE_I32) == 2147483647.0);
  /* The max column and the max pattern agree. */
  const fmt_t *fmts[] = {&k_bf16, &k_f16, &k_e4m3, &k_e5m2};
  for (size_t k = 0; k < 4; k++) {
    uint32_t b = fmts[k]->max_bits;
    assert_true(mb__load(&b, fmts[k]->dtype, 0) ==
                mb_dtype_max(fmts[k]->dtype));
  }
}

static void test_from_name(void **state) {
  (void)state;
  static const struct {
    const char *name;
    mb_dtype_t dtype;
  } cases[] = {
      {"f32", MB_DTYPE_F32},
      {"fp32", MB_DTYPE_F32},
      {"float32", MB_DTYPE_F32},
      {"float", MB_DTYPE_F32},
      {"torch.float32", MB_DTYPE_F32},
      {"f16", MB_DTYPE_F16},
      {"fp16", MB_DTYPE_F16},
      {"float16", MB_DTYPE_F16},
      {"half", MB_DTYPE_F16},
      {"torch.float16", MB_DTYPE_F16},
      {"bf16", MB_DTYPE_BF16},
      {"bfloat16", MB_DTYPE_BF16},
      {"torch.bfloat16", MB_DTYPE_BF16},
      {"f8e4m3", MB_DTYPE_F8E4M3},
      {"fp8e4m3", MB_DTYPE_F8E4M3},
      {"float8_e4m3fn", MB_DTYPE_F8E4M3},
      {"e4m3", MB_DTYPE_F8E4M3},
      {"torch.float8_e4m3fn", MB_DTYPE_F8E4M3},
      {"f8e5m2", MB_DTYPE_F8E5M2},
      {"fp8e5m2", MB_DTYPE_F8E5M2},
      {"float8_e5m2", MB_DTYPE_F8E5M2},
      {"e5m2", MB_DTYPE_F8E5M2},
      {"torch.float8_e5m2", MB_DTYPE_F8E5M2},
      {"i8", MB_DTYPE_I8},
      {"int8", MB_DTYPE_I8},
      {"torch.int8", MB_DTYPE_I8},
      {"i4", MB_DTYPE_I4},
      {"int4", MB_DTYPE_I4},
      {"i32", MB_DTYPE_I32},
      {"int32", MB_DTYPE_I32},
      {"torch.int32", MB_DTYPE_I32},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mb_dtype_t t = MB_DTYPE_NONE;
    if (mb_dtype_from_name(cases[i].name, &t) != MB_OK || t != cases[i].dtype)
      fail_msg("\"%s\" gave %d", cases[i].name, (int)t);
  }
  /* Every canonical name round-trips. */
  for (int t = MB_DTYPE_NONE + 1; t < MB_DTYPE_COUNT; t++) {
    mb_dtype_t got = MB_DTYPE_NONE;
    assert_int_equal(mb_dtype_from_name(mb_dtype_name((mb_dtype_t)t), &got),
                     MB_OK);
    assert_int_equal(got, t);
  }

  mb_dtype_t t = MB_DTYPE_BF16;
  mb_error_clear();
  assert_int_equal(mb_dtype_from_name("fp33", &t), MB_ERR_INVALID_ARG);
  assert_int_equal(t, MB_DTYPE_BF16);
  const char *msg = mb_error_last();
  assert_non_null(strstr(msg, "\"fp33\""));
  assert_non_null(strstr(msg, "valid dtypes"));
  assert_string_equal(msg,
                      "unknown dtype \"fp33\"; valid dtypes: f32, f16, bf16, "
                      "f8e4m3, f8e5m2, i8, i4, i32, e8m0, f4e2m1");
  assert_int_equal(mb_dtype_from_name("", &t), MB_ERR_INVALID_ARG);
  assert_int_equal(mb_dtype_from_name("BF16", &t), MB_ERR_INVALID_ARG);
  mb_error_clear();
  assert_int_equal(mb_dtype_from_name(NULL, &t), MB_ERR_INVALID_ARG);
  assert_true(mb_error_last()[0] != '\0');
  assert_int_equal(mb_dtype_from_name("bf16", NULL), MB_ERR_INVALID_ARG);
}

/* ---- bf16 and f16: every pattern ----------------------------------------- */

static void check_all_16bit(const fmt_t *f, float (*dec)(uint16_t),
                            uint16_t (*enc)(float, unsigned)) {
  for (uint32_t b = 0; b < 65536; b++) {
    uint16_t h = (uint16_t)b;
    float x = dec(h);
    double ref = ref_decode(f, b);
    double generic = mb__load(&h, f->dtype, 0);
    if (!same_or_both_nan(x, ref) || !same_or_both_nan(generic, ref))
      fail_msg("%s %04x: fast %a generic %a want %a", mb_dtype_name(f->dtype),
               b, x, generic, ref);
    /* Decoding canonicalises NaN, so the fast path must match the generic
     * one bit for bit even there. */
    uint32_t via_generic = 0;
    mb__store(&via_generic, MB_DTYPE_F32, 0, generic, 0);
    if (bits_of(x) != via_generic)
      fail_msg("%s %04x: fast f32 %08x generic %08x", mb_dtype_name(f->dtype),
               b, bits_of(x), via_generic);
    uint16_t back = enc(x, 0);
    if (isnan(x) ? !isnan(dec(back)) : back != h)
      fail_msg("%s %04x: round trip gave %04x", mb_dtype_name(f->dtype), b,
               back);
    if (store_bits(f, x, 0) != back || store_bits(f, x, 1) != enc(x, 1))
      fail_msg("%s %04x: fast and generic encoders differ",
               mb_dtype_name(f->dtype), b);
#ifdef __FLT16_MAX__
    if (f->dtype == MB_DTYPE_F16) {
      _Float16 c;
      memcpy(&c, &h, sizeof c);
      if (!same_or_both_nan(x, (float)c))
        fail_msg("f16 %04x: %a, _Float16 says %a", b, x, (double)(float)c);
    }
#endif
  }
}

static void test_bf16_all_patterns(void **state) {
  (void)state;
  check_all_16bit(&k_bf16, mb_bf16_to_f32, mb_f32_to_bf16);
}

static void test_f16_all_patterns(void **state) {
  (void)state;
  check_all_16bit(&k_f16, mb_f16_to_f32, mb_f32_to_f16);
}

/* bf16 reference: the two bf16 neighbours of x (truncation and one ulp up,
 * the latter allowed past max), compared by distance in double (exact: the
 * operands are floats of nearly the same magnitude). */
static uint16_t ref_bf16(float x, unsigned flags) {
  uint32_t u = bits_of(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7FFFFFFF;
  if (a > 0x7F800000) return sign | 0x7FC0;
  if (a == 0x7F800000) return sign | (flags ? 0x7F7F : 0x7F80);
  uint32_t lo_bits = a >> 16;
  double lo = ref_unbounded(&k_bf16, lo_bits);
  double hi = ref_unbounded(&k_bf16, lo_bits + 1);
  double ax = fabsf(x), dlo = ax - lo, dhi = hi - ax;
  uint32_t r = dlo < dhi   ? lo_bits
               : dhi < dlo ? lo_bits + 1
                           : (lo_bits & 1 ? lo_bits + 1 : lo_bits);
  if (r > 0x7F7F) r = flags ? 0x7F7F : 0x7F80;
  return sign | (uint16_t)r;
}

static void test_bf16_encode_sample(void **state) {
  (void)state;
  uint64_t rng = 1;
  for (int i = 0; i < 4000000; i++) {
    float x = random_f32(&rng, -140, 127);
    unsigned flags = i & 2 ? MB_CONVERT_SATURATE : 0;
    uint16_t got = mb_f32_to_bf16(x, flags);
    uint16_t want = ref_bf16(x, flags);
    if (got != want)
      fail_msg("bf16(%a) flags %u: %04x want %04x", (double)x, flags, got,
               want);
    if (i % 4 == 0 && store_bits(&k_bf16, x, flags) != got)
      fail_msg("bf16(%a): generic %04x fast %04x", (double)x,
               store_bits(&k_bf16, x, flags), got);
  }
}

static void test_bf16_edges(void **state) {
  (void)state;
  /* Ties: 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7 (odd). */
  assert_int_equal(mb_f32_to_bf16(1.0f + 0x1p-8f, 0), 0x3F80);
  assert_int_equal(mb_f32_to_bf16(1.0f + 3 * 0x1p-8f, 0), 0x3F82);
  assert_int_equal(mb_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-23f, 0), 0x3F81);
  assert_int_equal(mb_f32_to_bf16(-(1.0f + 0x1p-8f), 0), 0xBF80);
  /* Overflow: max + half ulp ties away from max (odd) to inf. */
  float max = 0x1.FEp127f, beyond = 0x1.FFp127f;
  assert_int_equal(mb_f32_to_bf16(max, 0), 0x7F7F);
  assert_int_equal(mb_f32_to_bf16(nextafterf(beyond, 0), 0), 0x7F7F);
  assert_int_equal(mb_f32_to_bf16(beyond, 0), 0x7F80);
  assert_int_equal(mb_f32_to_bf16(beyond, MB_CONVERT_SATURATE), 0x7F7F);
  assert_int_equal(mb_f32_to_bf16(-INFINITY, 0), 0xFF80);
  assert_int_equal(mb_f32_to_bf16(-INFINITY, MB_CONVERT_SATURATE), 0xFF7F);
  assert_int_equal(mb_f32_to_bf16(-FLT_MAX, MB_CONVERT_SATURATE), 0xFF7F);
  assert_int_equal(mb_f32_to_bf16(float_of(0xFF800001u), 0), 0xFFC0);
  assert_int_equal(mb_f32_to_bf16(float_of(0x7FC00000u), 1), 0x7FC0);
  assert_int_equal(mb_f32_to_bf16(-0.0f, 0), 0x8000);
  /* Subnormal ties: 2^-134 is half the smallest bf16 subnormal. */
  assert_int_equal(mb_f32_to_bf16(0x1p-134f, 0), 0x0000);
  assert_int_equal(mb_f32_to_bf16(0x1p-134f + 0x1p-149f, 0), 0x0001);
  assert_int_equal(mb_f32_to_bf16(0x3p-134f, 0), 0x0002);
}

static void test_f16_edges(void **state) {
  (void)state;
  assert_int_equal(mb_f32_to_f16(65504.0f, 0), 0x7BFF);
  assert_int_equal(mb_f32_to_f16(nextafterf(65520.0f, 0), 0), 0x7BFF);
  assert_int_equal(mb_f32_to_f16(65520.0f, 0), 0x7C00);
  assert_int_equal(mb_f32_to_f16(65520.0f, MB_CONVERT_SATURATE), 0x7BFF);
  assert_int_equal(mb_f32_to_f16(-1e9f, MB_CONVERT_SATURATE), 0xFBFF);
  assert_int_equal(mb_f32_to_f16(INFINITY, MB_CONVERT_SATURATE), 0x7BFF);
  assert_int_equal(mb_f32_to_f16(INFINITY, 0), 0x7C00);
  assert_int_equal(mb_f32_to_f16(-NAN, 0) & 0x8000, 0x8000);
  assert_int_equal(mb_f32_to_f16(NAN, 0) & 0x7FFF, 0x7E00);
  assert_int_equal(mb_f32_to_f16(1.0f + 0x1p-11f, 0), 0x3C00);
  assert_int_equal(mb_f32_to_f16(1.0f + 0x3p-11f, 0), 0x3C02);
  assert_int_equal(mb_f32_to_f16(0x1p-24f, 0), 0x0001);
  assert_int_equal(mb_f32_to_f16(0x1p-25f, 0), 0x0000);
  assert_int_equal(mb_f32_to_f16(-0x1p-25f, 0), 0x8000);
  assert_int_equal(mb_f32_to_f16(nextafterf(0x1p-25f, 1), 0), 0x0001);
  assert_int_equal(mb_f32_to_f16(0x3p-25f, 0), 0x0002);
  assert_int_equal(mb_f32_to_f16(0x1p-14f - 0x1p-25f, 0), 0x0400);
}

static void test_f16_encode_sample(void **state) {
  (void)state;
  uint64_t rng = 2;
  for (int i = 0; i < 4000000; i++) {
    float x = random_f32(&rng, -26, 16);
    unsigned flags = i & 2 ? MB_CONVERT_SATURATE : 0;
    uint16_t got = mb_f32_to_f16(x, flags);
    if (i % 4 == 0 && store_bits(&k_f16, x, flags) != got)
      fail_msg("f16(%a): generic %04x fast %04x", (double)x,
               store_bits(&k_f16, x, flags), got);
#ifdef __FLT16_MAX__
    if (flags) continue; /* _Float16 knows no saturation */
    _Float16 c = (_Float16)x;
    uint16_t want;
    memcpy(&want, &c, sizeof want);
    if (isnan(x) ? (got & 0x7C00) != 0x7C00 || !(got & 0x3FF) : got != want)
      fail_msg("f16(%a): %04x, _Float16 says %04x", (double)x, got, want);
#endif
  }
}

/* ---- fp8 ----------------------------------------------------------------- */

static void check_all_f8(const fmt_t *f, float (*dec)(uint8_t),
                         uint8_t (*enc)(float, unsigned)) {
  for (uint32_t b = 0; b < 256; b++) {
    uint8_t q = (uint8_t)b;
    float x = dec(q);
    if (!same_or_both_nan(x, ref_decode(f, b)))
      fail_msg("%s %02x: %a want %a", mb_dtype_name(f->dtype), b, (double)x,
               ref_decode(f, b));
    if (!same_or_both_nan(mb__load(&q, f->dtype, 0), x))
      fail_msg("%s %02x: mb__load differs", mb_dtype_name(f->dtype), b);
    for (unsigned flags = 0; flags < 2; flags++) {
      uint8_t back = enc(x, flags);
      int inf = isinf(x);
      if (isnan(x)) {
        if (!isnan(dec(back)) || (back & 0x80) != (q & 0x80))
          fail_msg("%s %02x: NaN came back as %02x", mb_dtype_name(f->dtype), b,
                   back);
      } else if (inf && flags) {
        assert_int_equal(back, (q & 0x80) | f->max_bits);
      } else if (back != q) {
        fail_msg("%s %02x flags %u: round trip gave %02x",
                 mb_dtype_name(f->dtype), b, flags, back);
      }
    }
  }
}

static void test_f8e4m3_all_patterns(void **state) {
  (void)state;
  check_all_f8(&k_e4m3, mb_f8e4m3_to_f32, mb_f32_to_f8e4m3);
  /* Exactly two NaN patterns; 0x78..0x7E (exponent field 1111) are normal. */
  for (uint32_t b = 0; b < 256; b++)
    assert_int_equal(isnan(mb_f8e4m3_to_f32((uint8_t)b)), (b & 0x7F) == 0x7F);
  assert_true(mb_f8e4m3_to_f32(0x78) == 256.0f);
  assert_true(mb_f8e4m3_to_f32(0x7E) == 448.0f);
  assert_true(mb_f8e4m3_to_f32(0x01) == 0x1p-9f);
  assert_true(mb_f8e4m3_to_f32(0x08) == 0x1p-6f);
}

static void test_f8e5m2_all_patterns(void **state) {
  (void)state;
  check_all_f8(&k_e5m2, mb_f8e5m2_to_f32, mb_f32_to_f8e5m2);
  assert_true(mb_f8e5m2_to_f32(0x7C) == INFINITY);
  assert_true(mb_f8e5m2_to_f32(0xFC) == -INFINITY);
  assert_true(isnan(mb_f8e5m2_to_f32(0x7D)));
  assert_true(mb_f8e5m2_to_f32(0x7B) == 57344.0f);
  assert_true(mb_f8e5m2_to_f32(0x01) == 0x1p-16f);
}

/* Every midpoint between neighbours (including max and the value past it)
 * goes to the even pattern; a hair either side goes to the nearer one. */
static void check_midpoints(const fmt_t *f, uint8_t (*enc)(float, unsigned)) {
  for (uint32_t c = 0; c <= f->max_bits; c++) {
    double lo = ref_unbounded(f, c), hi = ref_unbounded(f, c + 1);
    double mid = (lo + hi) / 2;
    for (unsigned flags = 0; flags < 2; flags++) {
      uint32_t up = c + 1 > f->max_bits ? overflow_bits(f, flags) : c + 1;
      uint32_t even = c & 1 ? up : c;
      uint32_t neg = 1u << (f->exp_bits + f->man_bits);
      uint32_t got[6] = {
          store_bits(f, mid, flags),
          store_bits(f, nextafter(mid, INFINITY), flags),
          store_bits(f, nextafter(mid, 0), flags),
          enc((float)mid, flags),
          enc(nextafterf((float)mid, INFINITY), flags),
          store_bits(f, -mid, flags),
      };
      uint32_t want[6] = {even, up, c, even, up, neg | even};
      for (int k = 0; k < 6; k++)
        if (got[k] != want[k])
          fail_msg("%s between %02x and %02x, case %d flags %u: %02x want %02x",
                   mb_dtype_name(f->dtype), c, c + 1, k, flags, got[k],
                   want[k]);
    }
  }
}

static void test_f8_midpoints(void **state) {
  (void)state;
  check_midpoints(&k_e4m3, mb_f32_to_f8e4m3);
  check_midpoints(&k_e5m2, mb_f32_to_f8e5m2);
}

static void test_f8_boundaries(void **state) {
  (void)state;
  const unsigned S = MB_CONVERT_SATURATE;
  /* e4m3: 464 is the tie between 448 (mantissa 110, even) and 480, which
   * does not exist: it rounds to 448 as in cuda_fp8.hpp; above it is NaN. */
  assert_int_equal(mb_f32_to_f8e4m3(448.0f, 0), 0x7E);
  assert_int_equal(mb_f32_to_f8e4m3(464.0f, 0), 0x7E);
  assert_int_equal(mb_f32_to_f8e4m3(-464.0f, 0), 0xFE);
  assert_int_equal(mb_f32_to_f8e4m3(nextafterf(464.0f, 1e9f), 0), 0x7F);
  assert_int_equal(mb_f32_to_f8e4m3(nextafterf(464.0f, 1e9f), S), 0x7E);
  assert_int_equal(mb_f32_to_f8e4m3(480.0f, 0), 0x7F);
  assert_int_equal(mb_f32_to_f8e4m3(-480.0f, 0), 0xFF);
  assert_int_equal(mb_f32_to_f8e4m3(480.0f, S), 0x7E);
  assert_int_equal(mb_f32_to_f8e4m3(1e30f, S), 0x7E);
  assert_int_equal(mb_f32_to_f8e4m3(INFINITY, 0), 0x7F);
  assert_int_equal(mb_f32_to_f8e4m3(-INFINITY, 0), 0xFF);
  assert_int_equal(mb_f32_to_f8e4m3(INFINITY, S), 0x7E);
  assert_int_equal(mb_f32_to_f8e4m3(-INFINITY, S), 0xFE);
  assert_int_equal(mb_f32_to_f8e4m3(NAN, 0), 0x7F);
  assert_int_equal(mb_f32_to_f8e4m3(NAN, S), 0x7F);
  assert_int_equal(mb_f32_to_f8e4m3(-NAN, S), 0xFF);
  /* e5m2: 61440 is the tie between 57344 (mantissa 11, odd) and 2^16. */
  assert_int_equal(mb_f32_to_f8e5m2(57344.0f, 0), 0x7B);
  assert_int_equal(mb_f32_to_f8e5m2(nextafterf(61440.0f, 0), 0), 0x7B);
  assert_int_equal(mb_f32_to_f8e5m2(61440.0f, 0), 0x7C);
  assert_int_equal(mb_f32_to_f8e5m2(61440.0f, S), 0x7B);
  assert_int_equal(mb_f32_to_f8e5m2(-61440.0f, S), 0xFB);
  assert_int_equal(mb_f32_to_f8e5m2(INFINITY, 0), 0x7C);
  assert_int_equal(mb_f32_to_f8e5m2(-INFINITY, 0), 0xFC);
  assert_int_equal(mb_f32_to_f8e5m2(INFINITY, S), 0x7B);
  assert_int_equal(mb_f32_to_f8e5m2(NAN, 0), 0x7E);
  assert_int_equal(mb_f32_to_f8e5m2(-NAN, S), 0xFE);
  /* Subnormals and signed zero. */
  assert_int_equal(mb_f32_to_f8e4m3(0x1p-9f, 0), 0x01);
  assert_int_equal(mb_f32_to_f8e4m3(0x1p-10f, 0), 0x00);
  assert_int_equal(mb_f32_to_f8e4m3(nextafterf(0x1p-10f, 1), 0), 0x01);
  assert_int_equal(mb_f32_to_f8e4m3(0x3p-10f, 0), 0x02);
  assert_int_equal(mb_f32_to_f8e4m3(0x7p-9f, 0), 0x07);
  assert_int_equal(mb_f32_to_f8e4m3(0xFp-10f, 0), 0x08); /* to min normal */
  assert_int_equal(mb_f32_to_f8e4m3(-0x1p-11f, 0), 0x80);
  assert_int_equal(mb_f32_to_f8e4m3(-0.0f, 0), 0x80);
  assert_int_equal(mb_f32_to_f8e4m3(0.0f, 0), 0x00);
  assert_int_equal(mb_f32_to_f8e5m2(0x1p-16f, 0), 0x01);
  assert_int_equal(mb_f32_to_f8e5m2(0x1p-17f, 0), 0x00);
  assert_int_equal(mb_f32_to_f8e5m2(nextafterf(0x1p-17f, 1), 0), 0x01);
  assert_int_equal(mb_f32_to_f8e5m2(-0.0f, S), 0x80);
  assert_int_equal(mb_f32_to_f8e5m2(FLT_TRUE_MIN, 0), 0x00);
  assert_true(signbit(mb_f8e5m2_to_f32(0x80)));
}

static void check_f8_sample(const fmt_t *f, uint8_t (*enc)(float, unsigned),
                            float (*dec)(uint8_t), uint64_t seed) {
  double vals[256];
  for (uint32_t c = 0; c <= f->max_bits + 1; c++) vals[c] = ref_unbounded(f, c);
  uint64_t rng = seed;
  for (int i = 0; i < 150000; i++) {
    float x = random_f32(&rng, -20, 17);
    for (unsigned flags = 0; flags < 2; flags++) {
      uint8_t got = enc(x, flags);
      if (isnan(x)) {
        if (!isnan(dec(got))) fail_msg("NaN %a gave %02x", (double)x, got);
        continue;
      }
      uint32_t want = ref_encode(f, vals, x, flags);
      if (got != want)
        fail_msg("%s(%a) flags %u: %02x want %02x", mb_dtype_name(f->dtype),
                 (double)x, flags, got, want);
      /* Through f32 and back is the nearest value, whatever the path. */
      float back = 0;
      assert_int_equal(mb_convert(&back, MB_DTYPE_F32, &got, f->dtype, 1, 0),
                       MB_OK);
      if (!same_or_both_nan(back, dec(got)))
        fail_msg("%s %02x: mb_convert back %a", mb_dtype_name(f->dtype), got,
                 (double)back);
    }
  }
}

static void test_f8_brute_force_sample(void **state) {
  (void)state;
  check_f8_sample(&k_e4m3, mb_f32_to_f8e4m3, mb_f8e4m3_to_f32, 3);
  check_f8_sample(&k_e5m2, mb_f32_to_f8e5m2, mb_f8e5m2_to_f32, 4);
}

/* ---- one rounding from the exact value ------------------------------------
 */

static void test_no_double_rounding(void **state) {
  (void)state;
  /* Through f32 these would tie and round to even (down); directly they are
   * just above the midpoint and round up. */
  assert_int_equal(store_bits(&k_bf16, 1 + 0x1p-8 + 0x1p-30, 0), 0x3F81);
  assert_int_equal(store_bits(&k_f16, 1 + 0x1p-11 + 0x1p-40, 0), 0x3C01);
  assert_int_equal(store_bits(&k_e4m3, 1 + 0x1p-4 + 0x1p-40, 0), 0x39);
  assert_int_equal(store_bits(&k_e5m2, 1 + 0x1p-3 + 0x1p-40, 0), 0x3D);
  /* i32 -> bf16 in one step: 2^24 + 2^16 + 1 is above the tie. */
  int32_t i = (1 << 24) + (1 << 16) + 1;
  uint16_t h = 0;
  assert_int_equal(mb_convert(&h, MB_DTYPE_BF16, &i, MB_DTYPE_I32, 1, 0),
                   MB_OK);
  assert_int_equal(h, 0x4B81);
  /* mb__round to f32 is (float)v; saturation clamps. */
  uint64_t rng = 5;
  for (int k = 0; k < 200000; k++) {
    uint64_t r = test_splitmix64(&rng);
    double v;
    memcpy(&v, &r, sizeof v);
    if (isnan(v)) continue;
    double want = (double)(float)v;
    if (mb__round(v, MB_DTYPE_F32, 0) != want)
      fail_msg("mb__round(%a, f32) = %a want %a", v,
               mb__round(v, MB_DTYPE_F32, 0), want);
    double sat = isinf(want) ? copysign(FLT_MAX, v) : want;
    if (mb__round(v, MB_DTYPE_F32, MB_CONVERT_SATURATE) != sat)
      fail_msg("mb__round(%a, f32, sat) wrong", v);
  }
  assert_true(mb__round(464.0, MB_DTYPE_F8E4M3, 0) == 448.0);
  assert_true(isnan(mb__round(465.0, MB_DTYPE_F8E4M3, 0)));
  assert_true(mb__round(465.0, MB_DTYPE_F8E4M3, MB_CONVERT_SATURATE) == 448.0);
  assert_true(mb__round(2.5, MB_DTYPE_I8, 0) == 2.0);
  assert_true(mb__round(NAN, MB_DTYPE_I32, 0) == 0.0);
  assert_true(mb__round(-1e300, MB_DTYPE_I32, 0) == -2147483648.0);
}

/* ---- integers ------------------------------------------------------------ */

static void test_int_rounding(void **state) {
  (void)state;
  const float in[] = {2.5f,  3.5f,     -2.5f,     -3.5f, 0.5f,    1.5f,
                      -0.5f, 127.4f,   127.5f,    200.f, -128.5f, -1e9f,
                      NAN,   INFINITY, -INFINITY, 6.5f,  7.49f,   -8.5f};
  const int want_i8[] = {2,   4,    -2,   -4, 0,   2,    0, 127, 127,
                         127, -128, -128, 0,  127, -128, 6, 7,   -8};
  const int want_i4[] = {2, 4,  -2, -4, 0, 2,  0, 7, 7,
                         7, -8, -8, 0,  7, -8, 6, 7, -8};
  enum { N = sizeof in / sizeof in[0] };
  int8_t i8[N];
  uint8_t i4[(N + 1) / 2];
  int32_t i32[N];
  assert_int_equal(mb_convert(i8, MB_DTYPE_I8, in, MB_DTYPE_F32, N, 0), MB_OK);
  assert_int_equal(mb_convert(i4, MB_DTYPE_I4, in, MB_DTYPE_F32, N, 0), MB_OK);
  assert_int_equal(mb_convert(i32, MB_DTYPE_I32, in, MB_DTYPE_F32, N, 0),
                   MB_OK);
  for (int k = 0; k < N; k++) {
    if (i8[k] != want_i8[k])
      fail_msg("i8(%a) = %d want %d", (double)in[k], i8[k], want_i8[k]);
    double v4 = mb__load(i4, MB_DTYPE_I4, (size_t)k);
    if (v4 != want_i4[k])
      fail_msg("i4(%a) = %g want %d", (double)in[k], v4, want_i4[k]);
  }
  assert_int_equal(i32[0], 2);
  assert_int_equal(i32[2], -2);
  assert_int_equal(i32[11], -1000000000);
  assert_int_equal(i32[12], 0);
  assert_int_equal(i32[13], INT32_MAX);
  assert_int_equal(i32[14], INT32_MIN);
  float big[] = {2147483648.0f, -2147483648.0f, -3e9f, 1e10f, 16777216.5f};
  assert_int_equal(mb_convert(i32, MB_DTYPE_I32, big, MB_DTYPE_F32, 5, 0),
                   MB_OK);
  assert_int_equal(i32[0], INT32_MAX);
  assert_int_equal(i32[1], INT32_MIN);
  assert_int_equal(i32[2], INT32_MIN);
  assert_int_equal(i32[3], INT32_MAX);
  /* Doubles reach what floats cannot: ties near the top of the range. */
  int32_t one = 0;
  mb__store(&one, MB_DTYPE_I32, 0, 2147483646.5, 0);
  assert_int_equal(one, 2147483646);
  mb__store(&one, MB_DTYPE_I32, 0, 2147483645.5, 0);
  assert_int_equal(one, 2147483646);
  mb__store(&one, MB_DTYPE_I32, 0, -2147483648.5, 0);
  assert_int_equal(one, INT32_MIN);
  /* i32 -> f32 rounds to nearest even; i32 -> f16 overflows to inf. */
  int32_t ints[] = {16777217, 16777219, INT32_MAX, -7};
  float f[4];
  assert_int_equal(mb_convert(f, MB_DTYPE_F32, ints, MB_DTYPE_I32, 4, 0),
                   MB_OK);
  assert_true(f[0] == 16777216.0f && f[1] == 16777220.0f);
  assert_true(f[2] == 2147483648.0f && f[3] == -7.0f);
  uint16_t h[4];
  assert_int_equal(mb_convert(h, MB_DTYPE_F16, ints, MB_DTYPE_I32, 4, 0),
                   MB_OK);
  assert_int_equal(h[2], 0x7C00);
  assert_int_equal(
      mb_convert(h, MB_DTYPE_F16, ints, MB_DTYPE_I32, 4, MB_CONVERT_SATURATE),
      MB_OK);
  assert_int_equal(h[2], 0x7BFF);
  assert_int_equal(h[3], 0xC700);
}

static void test_i4_packing(void **state) {
  (void)state;
  const float in[5] = {1, -1, 7, -8, 3};
  uint8_t packed[3] = {0x55, 0x55, 0xA0};
  assert_int_equal(mb_convert(packed, MB_DTYPE_I4, in, MB_DTYPE_F32, 5, 0),
                   MB_OK);
  assert_int_equal(packed[0], 0xF1); /* element 0 in the low nibble */
  assert_int_equal(packed[1], 0x87);
  assert_int_equal(packed[2], 0xA3); /* the unused high nibble is kept */
  float out[5];
  assert_int_equal(mb_convert(out, MB_DTYPE_F32, packed, MB_DTYPE_I4, 5, 0),
                   MB_OK);
  for (int k = 0; k < 5; k++) assert_true(out[k] == in[k]);
  /* i4 <-> i8, with saturation on the way in. */
  const int8_t wide[5] = {100, -100, 5, -3, 0};
  assert_int_equal(mb_convert(packed, MB_DTYPE_I4, wide, MB_DTYPE_I8, 5, 0),
                   MB_OK);
  int8_t back[5];
  assert_int_equal(mb_convert(back, MB_DTYPE_I8, packed, MB_DTYPE_I4, 5, 0),
                   MB_OK);
  const int8_t want[5] = {7, -8, 5, -3, 0};
  assert_memory_equal(back, want, sizeof want);
  /* Same-type copy of an odd count leaves the neighbouring nibble alone. */
  uint8_t dst[3] = {0xEE, 0xEE, 0xEE};
  assert_int_equal(mb_convert(dst, MB_DTYPE_I4, packed, MB_DTYPE_I4, 5, 0),
                   MB_OK);
  assert_int_equal(dst[0], packed[0]);
  assert_int_equal(dst[1], packed[1]);
  assert_int_equal(dst[2], 0xE0 | (packed[2] & 0x0F));
  /* Stores into the odd element touch only the high nibble. */
  uint8_t one = 0x0C;
  mb__store(&one, MB_DTYPE_I4, 1, -2.0, 0);
  assert_int_equal(one, 0xEC);
  assert_true(mb__load(&one, MB_DTYPE_I4, 0) == -4.0);
}

/* ---- bulk conversions -----------------------------------------------------
 */

static void test_convert_fast_paths(void **state) {
  (void)state;
  enum { N = 1 << 18 };
  float *src = malloc(N * sizeof *src);
  uint16_t *h = malloc(N * sizeof *h);
  uint16_t *g = malloc(N * sizeof *g);
  float *back = malloc(N * sizeof *back);
  uint32_t *all = malloc(65536 * sizeof *all);
  assert_non_null(src);
  assert_non_null(h);
  assert_non_null(g);
  assert_non_null(back);
  assert_non_null(all);
  uint64_t rng = 6;
  for (size_t i = 0; i < N; i++) src[i] = random_f32(&rng, -30, 20);
  static const struct {
    const fmt_t *f;
    uint16_t (*enc)(float, unsigned);
    float (*dec)(uint16_t);
  } kinds[] = {{&k_bf16, mb_f32_to_bf16, mb_bf16_to_f32},
               {&k_f16, mb_f32_to_f16, mb_f16_to_f32}};
  for (size_t k = 0; k < 2; k++) {
    mb_dtype_t t = kinds[k].f->dtype;
    for (unsigned flags = 0; flags < 2; flags++) {
      assert_int_equal(mb_convert(h, t, src, MB_DTYPE_F32, N, flags), MB_OK);
      for (size_t i = 0; i < N; i++) {
        mb__store(g, t, i, src[i], flags);
        if (h[i] != kinds[k].enc(src[i], flags) || h[i] != g[i])
          fail_msg("%s(%a): bulk %04x scalar %04x generic %04x",
                   mb_dtype_name(t), (double)src[i], h[i],
                   kinds[k].enc(src[i], flags), g[i]);
      }
    }
    for (uint32_t b = 0; b < 65536; b++) h[b] = (uint16_t)b;
    assert_int_equal(mb_convert(all, MB_DTYPE_F32, h, t, 65536, 0), MB_OK);
    for (uint32_t b = 0; b < 65536; b++) {
      uint32_t generic = 0;
      mb__store(&generic, MB_DTYPE_F32, 0, mb__load(h, t, b), 0);
      if (all[b] != bits_of(kinds[k].dec(h[b])) || all[b] != generic)
        fail_msg("%s %04x -> f32: bulk %08x generic %08x", mb_dtype_name(t), b,
                 all[b], generic);
    }
  }
  /* f32 -> f32 is a copy, NaN payloads and all. */
  src[0] = float_of(0x7F800001u);
  assert_int_equal(mb_convert(back, MB_DTYPE_F32, src, MB_DTYPE_F32, N, 0),
                   MB_OK);
  assert_memory_equal(back, src, N * sizeof *src);
  /* A pair without a fast path: bf16 -> f8e4m3 equals load + round once. */
  assert_int_equal(
      mb_convert(h, MB_DTYPE_BF16, src, MB_DTYPE_F32, N, MB_CONVERT_SATURATE),
      MB_OK);
  uint8_t *q = (uint8_t *)g;
  assert_int_equal(
      mb_convert(q, MB_DTYPE_F8E4M3, h, MB_DTYPE_BF16, N, MB_CONVERT_SATURATE),
      MB_OK);
  for (size_t i = 0; i < N; i++) {
    uint8_t want = mb_f32_to_f8e4m3(mb_bf16_to_f32(h[i]), MB_CONVERT_SATURATE);
    if (q[i] != want)
      fail_msg("bf16 %04x -> e4m3: %02x want %02x", h[i], q[i], want);
  }
  free(src);
  free(h);
  free(g);
  free(back);
  free(all);
}

static void test_convert_errors(void **state) {
  (void)state;
  float x = 1.0f;
  uint16_t h = 0;
  mb_error_clear();
  assert_int_equal(mb_convert(NULL, MB_DTYPE_BF16, &x, MB_DTYPE_F32, 1, 0),
                   MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "dst"));
  assert_int_equal(mb_convert(&h, MB_DTYPE_BF16, NULL, MB_DTYPE_F32, 1, 0),
                   MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "src"));
  assert_int_equal(mb_convert(NULL, MB_DTYPE_BF16, NULL, MB_DTYPE_F32, 0, 0),
                   MB_OK);
  assert_int_equal(mb_convert(&h, MB_DTYPE_NONE, &x, MB_DTYPE_F32, 1, 0),
                   MB_ERR_INVALID_ARG);
  assert_int_equal(mb_convert(&h, MB_DTYPE_BF16, &x, MB_DTYPE_COUNT, 1, 0),
                   MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "dtype"));
  assert_int_equal(mb_convert(&h, MB_DTYPE_BF16, &x, MB_DTYPE_F32, 1, 0),
                   MB_OK);
  assert_int_equal(h, 0x3F80);
}

/* A fill large enough to be split over threads writes exactly the bytes of
 * filling element by element, packed i4 included (its parts must not share
 * a byte) and an odd count (the last part is shorter). */
static void test_parallel_fill_is_the_serial_fill(void **state) {
  (void)state;
  const size_t n = ((size_t)3 << 20) + 5;
  static const mb_dtype_t k_types[] = {MB_DTYPE_F32, MB_DTYPE_BF16,
                                       MB_DTYPE_I4};
  for (size_t t = 0; t < sizeof k_types / sizeof k_types[0]; t++) {
    const mb_dtype_t dt = k_types[t];
    const size_t bytes = mb_dtype_bytes(dt, n);
    unsigned char *got = calloc(1, bytes), *want = calloc(1, bytes);
    assert_non_null(got);
    assert_non_null(want);
    mb_fill_t f = MB_FILL_INIT;
    f.seed = 7;
    if (dt == MB_DTYPE_I4) f.kind = MB_FILL_UNIFORM, f.a = -9, f.b = 9;
    assert_int_equal(mb_fill_host(got, dt, n, &f), MB_OK);
    for (size_t i = 0; i < n; i++)
      mb__store(want, dt, i, mb__fill_value(&f, i), MB_CONVERT_SATURATE);
    assert_memory_equal(got, want, bytes);
    free(got);
    free(want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata),
      cmocka_unit_test(test_parallel_fill_is_the_serial_fill),
      cmocka_unit_test(test_from_name),
      cmocka_unit_test(test_bf16_all_patterns),
      cmocka_unit_test(test_f16_all_patterns),
      cmocka_unit_test(test_bf16_encode_sample),
      cmocka_unit_test(test_bf16_edges),
      cmocka_unit_test(test_f16_edges),
      cmocka_unit_test(test_f16_encode_sample),
      cmocka_unit_test(test_f8e4m3_all_patterns),
      cmocka_unit_test(test_f8e5m2_all_patterns),
      cmocka_unit_test(test_f8_midpoints),
      cmocka_unit_test(test_f8_boundaries),
      cmocka_unit_test(test_f8_brute_force_sample),
      cmocka_unit_test(test_no_double_rounding),
      cmocka_unit_test(test_int_rounding),
      cmocka_unit_test(test_i4_packing),
      cmocka_unit_test(test_convert_fast_paths),
      cmocka_unit_test(test_convert_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
