/* FP4 (OCP MX v1.0 E2M1, torch's and JAX's float4_e2m1fn): the dtype, bit
 * for bit.
 *
 * Every one of the 16 codes decoded; every rounding boundary (each midpoint
 * between neighbouring values, and the f32 values either side of it)
 * encoded, by the library's converter (lib/dtype.c) and by the kernels'
 * select form (backends/common/mb_cvt.h), against values worked out by
 * hand from the format: 1 sign, 2 exponent bits of bias 1, 1 mantissa bit,
 * +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}, round to nearest even, saturating to +-6
 * (infinities too), NaN to 6 with its sign. Also the names, the packing
 * (two per byte, low nibble first) and the two converters against each
 * other over a large sample of f32 patterns.
 *
 * MXFP4 (e2m1 elements, one e8m0 scale per 32): the core's reference
 * quantizer on blocks worked out by hand from the OCP rule
 * X = floor(log2(amax)) - 2 (6 = 1.5 2^2), q = RNE_sat(x / 2^X). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../backends/common/mb_cvt.h"
#include "dtype_internal.h"
#include "ops/op_internal.h"
#include "test_util.h"

/* The 8 magnitudes, by code: 0.00.0 .. 0.11.1. */
static const double k_mag[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};

static uint8_t lib_encode(double v, unsigned flags) {
  uint8_t b = 0;
  mb__store(&b, MB_DTYPE_F4E2M1, 0, v, flags);
  return b & 0xFu;
}

static void test_fp4_names(void **state) {
  (void)state;
  static const char *const names[] = {
      "f4e2m1", "float4",           "float4_e2m1fn",         "fp4",
      "e2m1",   "float4_e2m1fn_x2", "torch.float4_e2m1fn_x2"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    mb_dtype_t d = MB_DTYPE_NONE;
    assert_int_equal(mb_dtype_from_name(names[i], &d), MB_OK);
    assert_int_equal(d, MB_DTYPE_F4E2M1);
  }
  assert_string_equal(mb_dtype_name(MB_DTYPE_F4E2M1), "f4e2m1");
  assert_int_equal(mb_dtype_bits(MB_DTYPE_F4E2M1), 4);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_F4E2M1, 32), 16);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_F4E2M1, 3), 2);
  assert_true(mb_dtype_is_float(MB_DTYPE_F4E2M1));
  assert_true(mb_dtype_max(MB_DTYPE_F4E2M1) == 6.0);
  assert_true(mb_dtype_unit_roundoff(MB_DTYPE_F4E2M1) == 0.25);
  /* Appended: the existing enum values did not move. */
  assert_int_equal(MB_DTYPE_F4E2M1, MB_DTYPE_E8M0 + 1);
}

/* Every code: sign in bit 3, then the magnitude table; both decoders. */
static void test_fp4_all_codes(void **state) {
  (void)state;
  for (unsigned c = 0; c < 16; ++c) {
    const double want = (c & 8u) ? -k_mag[c & 7u] : k_mag[c & 7u];
    const uint8_t byte = (uint8_t)(c | (c << 4));
    const double lo = mb__load(&byte, MB_DTYPE_F4E2M1, 0);
    const double hi = mb__load(&byte, MB_DTYPE_F4E2M1, 1);
    assert_true(lo == want && hi == want);
    assert_int_equal(signbit(lo) != 0, (c & 8u) != 0); /* -0 is 0x8 */
    const float k = mb__cvt_e2m1_to_f32((uint8_t)c);
    assert_int_equal(mb__cvt_bits(k), mb__cvt_bits((float)want));
    assert_true(mb__cvt_e2m1_at(&byte, 1) == (float)want);
    /* Round trip: every value encodes to its own code. */
    assert_int_equal(lib_encode(want, 0), c);
    assert_int_equal(mb__cvt_f32_to_e2m1((float)want), c);
  }
}

/* Both converters give `want` (a nibble) for x, with and without the
 * saturate flag (the format has no other overflow). */
static void expect(float x, unsigned want) {
  const unsigned got[3] = {lib_encode(x, 0), lib_encode(x, MB_CONVERT_SATURATE),
                           mb__cvt_f32_to_e2m1(x)};
  for (int k = 0; k < 3; ++k)
    if (got[k] != want)
      fail_msg("f32 %a (0x%08x): converter %d gives 0x%x, want 0x%x", (double)x,
               mb__cvt_bits(x), k, got[k], want);
}

/* Every midpoint between neighbouring magnitudes (and past 6: 7, the
 * would-be midpoint to 8, which does not exist): the tie goes to the even
 * code (mantissa bit 0), one f32 ulp either side to the nearer value. */
static void test_fp4_rounding_boundaries(void **state) {
  (void)state;
  for (unsigned c = 0; c < 7; ++c) {
    const float mid = (float)((k_mag[c] + k_mag[c + 1]) / 2);
    const unsigned even = (c & 1u) ? c + 1 : c;
    for (unsigned s = 0; s < 2; ++s) {
      const float sg = s ? -1.0f : 1.0f;
      const unsigned sb = s ? 8u : 0u;
      expect(sg * mid, sb | even);
      expect(sg * nextafterf(mid, 0.0f), sb | c);
      expect(sg * nextafterf(mid, INFINITY), sb | (c + 1));
      expect(sg * (float)k_mag[c + 1], sb | (c + 1));
    }
  }
  /* Hand-written, so the loop above is not its own oracle. */
  static const struct {
    float x;
    unsigned q;
  } cases[] = {
      {0.25f, 0x0},      {0.2500001f, 0x1}, {0.75f, 0x2},  {1.25f, 0x2},
      {1.75f, 0x4},      {2.5f, 0x4},       {3.5f, 0x6},   {5.0f, 0x6},
      {5.0000005f, 0x7}, {-1.25f, 0xA},     {-5.0f, 0xE},  {0x1p-149f, 0x0},
      {-0x1p-149f, 0x8}, {-0.0f, 0x8},      {6.0f, 0x7},   {7.0f, 0x7},
      {1e30f, 0x7},      {-7.0f, 0xF},      {-1e30f, 0xF}, {FLT_MAX, 0x7},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    expect(cases[i].x, cases[i].q);
}

/* No infinity, no NaN: infinities saturate to +-6, NaN becomes 6 with its
 * sign, with or without MB_CONVERT_SATURATE. */
static void test_fp4_specials(void **state) {
  (void)state;
  expect(INFINITY, 0x7);
  expect(-INFINITY, 0xF);
  expect(NAN, 0x7);
  expect(-NAN, 0xF);
  assert_true(mb__round(NAN, MB_DTYPE_F4E2M1, 0) == 6.0);
  assert_true(mb__round(-INFINITY, MB_DTYPE_F4E2M1, 0) == -6.0);
  assert_true(mb__round(2.5, MB_DTYPE_F4E2M1, 0) == 2.0);
  /* From double, exactly (one rounding): just above the tie at 2.5. */
  assert_int_equal(lib_encode(2.5 + 0x1p-40, 0), 0x5);
}

/* Two per byte, low nibble first; an odd count leaves the last byte's
 * high nibble alone; mb_convert to and from f32. */
static void test_fp4_packing(void **state) {
  (void)state;
  const float src[5] = {1.0f, -6.0f, 0.5f, 3.0f, -0.0f};
  uint8_t q[3] = {0xAA, 0xAA, 0xAA};
  assert_int_equal(mb_convert(q, MB_DTYPE_F4E2M1, src, MB_DTYPE_F32, 5, 0),
                   MB_OK);
  assert_int_equal(q[0], 0xF2); /* 1.0 = 0x2 low, -6 = 0xF high */
  assert_int_equal(q[1], 0x51); /* 0.5 = 0x1, 3.0 = 0x5 */
  assert_int_equal(q[2], 0xA8); /* -0 = 0x8; high nibble kept */
  assert_int_equal(mb__cvt_f32x2_to_e2m1x2(1.0f, -6.0f), 0xF2);
  float back[5];
  assert_int_equal(mb_convert(back, MB_DTYPE_F32, q, MB_DTYPE_F4E2M1, 5, 0),
                   MB_OK);
  for (int i = 0; i < 5; ++i) {
    assert_int_equal(mb__cvt_bits(back[i]), mb__cvt_bits(src[i]));
    assert_int_equal(mb__cvt_bits(mb__cvt_e2m1_at(q, (size_t)i)),
                     mb__cvt_bits(src[i]));
  }
  /* Same-type copy of an odd count keeps the destination's high nibble. */
  uint8_t d[3] = {0x00, 0x00, 0x30};
  assert_int_equal(mb_convert(d, MB_DTYPE_F4E2M1, q, MB_DTYPE_F4E2M1, 5, 0),
                   MB_OK);
  assert_int_equal(d[2], 0x38);
  /* To i4 and back through the exact value: 3.0 -> 3. */
  uint8_t i4 = 0;
  assert_int_equal(mb_convert(&i4, MB_DTYPE_I4, &q[1], MB_DTYPE_F4E2M1, 2, 0),
                   MB_OK);
  assert_int_equal(i4, 0x30); /* 0.5 rounds to even 0, 3 stays 3 */
}

/* The kernels' converter against the library's over a stride through every
 * f32 pattern plus every pattern near the boundaries' exponents. */
static void test_fp4_converters_agree(void **state) {
  (void)state;
  size_t bad = 0;
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 4099u) {
    const float x = mb__cvt_float((uint32_t)u);
    bad += mb__cvt_f32_to_e2m1(x) != lib_encode(x, 0);
  }
  /* Dense over [2^-3, 2^4) (every rounding boundary lies there), both
   * signs: 7 exponents times 2^23 patterns would be slow, so every 7th. */
  for (uint32_t u = 0x3E000000u; u < 0x41800000u; u += 7u)
    for (uint32_t s = 0; s < 2; ++s) {
      const float x = mb__cvt_float(u | (s << 31));
      bad += mb__cvt_f32_to_e2m1(x) != lib_encode(x, 0);
    }
  assert_int_equal(bad, 0);
}

/* ---- MXFP4 ----------------------------------------------------------------
 */

typedef struct mx4_case {
  const char *what;
  float x[6]; /* the block's first elements; the other 26 are 0 */
  double static_scale;
  uint8_t scale_byte; /* e8m0 */
  uint8_t q[3];       /* the first six nibbles, packed */
} mx4_case_t;

static void test_mxfp4_hand_computed(void **state) {
  (void)state;
  static const mx4_case_t cases[] = {
      /* amax 6: X = 2 - 2 = 0, scale 1; 3 -> 0x5, -1.5 -> 0xB, the ties
       * 0.25 -> 0 and 0.75 -> 1.0 (0x2), 5 -> 4 (0x6). */
      {"amax 6", {6, 3, -1.5f, 0.25f, 0.75f, 5}, 0, 127, {0x57, 0x0B, 0x62}},
      /* amax 8: X = 1, scale 2; 7/2 = 3.5 ties to 4 (0x6), 1/2 = 0.5. */
      {"amax 8", {8, 7, 1, -0.5f, 0, 0}, 0, 128, {0x66, 0x81, 0x00}},
      /* just below 8: X = 0, and 7.99 saturates to 6 (the spec's
       * clamp: amax / 2^X lies in [4, 8)). */
      {"amax 7.99", {7.99f, -6.5f, 2.5f, 0, 0, 0}, 0, 127, {0xF7, 0x04, 0}},
      /* amax 1: X = -2, scale 1/4; 0.3 / 0.25 = 1.2 -> 1.0. */
      {"amax 1", {1, 0.3f, -0.125f, 0, 0, 0}, 0, 125, {0x26, 0x09, 0}},
      /* all zero: the smallest scale 2^-127 (byte 0), never NaN. */
      {"zero", {0, 0, 0, 0, 0, 0}, 0, 0, {0, 0, 0}},
      /* amax 2^-126: X = -128 clamps to -127; 2^-126 / 2^-127 = 2. */
      {"tiny", {0x1p-126f, 0, 0, 0, 0, 0}, 0, 0, {0x04, 0, 0}},
      /* a NaN makes the block's scale NaN (0xFF). */
      {"nan", {1, NAN, 0, 0, 0, 0}, 0, 255, {0xFF, 0, 0}},
      /* static 0.5 (byte 126): 3 / 0.5 = 6, 4 / 0.5 = 8 saturates. */
      {"static", {3, 4, -1, 0, 0, 0}, 0.5, 126, {0x77, 0x0C, 0}},
  };
  mb_scaling_t s = {0};
  assert_int_equal(mb_scaling_from_string("block:1x32", &s), MB_OK);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const mx4_case_t *c = &cases[k];
    float x[32] = {0}, grid = 0;
    uint8_t q[16], g = 0;
    memset(q, 0xA5, sizeof q);
    memcpy(x, c->x, sizeof c->x);
    mb__quantize_ref_sd(x, 1, 32, &s, MB_DTYPE_F4E2M1, MB_DTYPE_E8M0,
                        c->static_scale, q, &grid);
    mb__store(&g, MB_DTYPE_E8M0, 0, grid, 0);
    if (g != c->scale_byte)
      fail_msg("%s: scale byte 0x%02x, want 0x%02x", c->what, g, c->scale_byte);
    if (c->scale_byte == 255) continue; /* the elements of a NaN block */
    for (int i = 0; i < 3; ++i)
      if (q[i] != c->q[i])
        fail_msg("%s: Q byte %d = 0x%02x, want 0x%02x", c->what, i, q[i],
                 c->q[i]);
    for (int i = 3; i < 16; ++i) assert_int_equal(q[i], 0);
  }
}

/* ---- NVFP4 ----------------------------------------------------------------
 */

/* The per-tensor scale, the e4m3 block scale and the elements, by hand:
 * S = amax_t / 2688, s_b = e4m3(amax_b / 6 / S), q = RNE_sat(x / (s_b S)).
 * e4m3 bytes: 448 = 0x7E, 128 = 0x70, 1 = 0x38. */
static void test_nvfp4_hand_computed(void **state) {
  (void)state;
  assert_true(mb__nvfp4_tensor_scale(2688.0f) == 1.0f);
  assert_true(mb__nvfp4_tensor_scale(0.0f) == 1.0f); /* all zero */
  assert_true(mb__nvfp4_tensor_scale(NAN) == 1.0f);
  assert_true(mb__nvfp4_tensor_scale(1.0f) == 1.0f / 2688.0f);
  /* S = 1: the block scale is amax_b / 6 rounded to e4m3. */
  assert_int_equal(mb__nvfp4_block_scale(6.0f, 1.0f), 0x38);    /* 1 */
  assert_int_equal(mb__nvfp4_block_scale(2688.0f, 1.0f), 0x7E); /* 448 */
  assert_int_equal(mb__nvfp4_block_scale(3000.0f, 1.0f), 0x7E); /* sat */
  /* 0.001 / 6 is below half of e4m3's smallest subnormal 2^-9: 0. */
  assert_int_equal(mb__nvfp4_block_scale(0.001f, 1.0f), 0x00);
  assert_int_equal(mb__nvfp4_block_scale(NAN, 1.0f) & 0x7F, 0x7F);
  /* S = 1/2688 (tensor amax 1): amax_b 1 -> 448; amax_b 0.3 -> 0.05 / S
   * = 134.4 -> 128 (e4m3 steps by 16 in [128, 256)). */
  const float s1 = mb__nvfp4_tensor_scale(1.0f);
  assert_int_equal(mb__nvfp4_block_scale(1.0f, s1), 0x7E);
  assert_int_equal(mb__nvfp4_block_scale(0.3f, s1), 0x70);

  /* Two 1x16 blocks of a 1x32 row, tensor amax 1 (S = 1/2688):
   * block 0, amax 1, s_b 448, s_b S = 1/6: 1 -> 6 (0x7), -0.5 -> -3
   * (0xD), 0.25 -> 1.5 (0x3), 0.2 -> 1.2 -> 1 (0x2);
   * block 1, amax 0.3, s_b 128, s_b S = 128/2688 = 1/21: 0.3 -> 6.3
   * saturates (0x7), 0.1 -> 2.1 -> 2 (0x4), -0.15 -> -3.15 -> -3 (0xD). */
  float x[32] = {0};
  x[0] = 1.0f, x[1] = -0.5f, x[2] = 0.25f, x[3] = 0.2f;
  x[16] = 0.3f, x[17] = 0.1f, x[18] = -0.15f;
  mb_scaling_t s = {0};
  assert_int_equal(mb_scaling_from_string("block:1x16", &s), MB_OK);
  uint8_t q[16], g[2];
  memset(q, 0xA5, sizeof q);
  mb__nvfp4_quantize_ref(x, 1, 32, &s, s1, q, g);
  assert_int_equal(g[0], 0x7E);
  assert_int_equal(g[1], 0x70);
  static const uint8_t want[16] = {0xD7, 0x23, 0, 0, 0, 0, 0, 0,
                                   0x47, 0x0D, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 16; ++i)
    if (q[i] != want[i])
      fail_msg("NVFP4 Q byte %d = 0x%02x, want 0x%02x", i, q[i], want[i]);
  /* An all-zero block: scale 0, elements 0 (never x / 0). */
  float z[16] = {0};
  mb__nvfp4_quantize_ref(z, 1, 16, &s, 1.0f, q, g);
  assert_int_equal(g[0], 0);
  for (int i = 0; i < 8; ++i) assert_int_equal(q[i], 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fp4_names),
      cmocka_unit_test(test_fp4_all_codes),
      cmocka_unit_test(test_fp4_rounding_boundaries),
      cmocka_unit_test(test_fp4_specials),
      cmocka_unit_test(test_fp4_packing),
      cmocka_unit_test(test_fp4_converters_agree),
      cmocka_unit_test(test_mxfp4_hand_computed),
      cmocka_unit_test(test_nvfp4_hand_computed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
