/* Microscaling (OCP MX v1.0): the e8m0 scale dtype and the shared
 * exponent's rounding, bit for bit, on hand-computed cases.
 *
 * Three levels: the e8m0 dtype (names, every byte decoded, torch's rounding
 * into it); the core's reference quantizer (lib/ops/quant.c) on blocks
 * whose scale and elements were worked out by hand from the spec's rule
 * X = floor(log2(amax)) - emax_elem, q = RNE_sat(v / 2^X); and the kernels'
 * bit-field form of the rule (backends/common/mb_cvt.h) against the
 * reference's frexp form over every f32 exponent. */
#include <math.h>

#include "../backends/common/mb_cvt.h"
#include "dtype_internal.h"
#include "ops/op_internal.h"
#include "test_util.h"

static uint8_t to_e8m0(double v, unsigned flags) {
  uint8_t b = 0;
  mb__store(&b, MB_DTYPE_E8M0, 0, v, flags);
  return b;
}

/* ---- the dtype ----------------------------------------------------------- */

static void test_e8m0_dtype(void **state) {
  (void)state;
  static const char *const names[] = {"e8m0", "float8_e8m0fnu", "e8m0fnu",
                                      "torch.float8_e8m0fnu"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    mb_dtype_t d = MB_DTYPE_NONE;
    assert_int_equal(mb_dtype_from_name(names[i], &d), MB_OK);
    assert_int_equal(d, MB_DTYPE_E8M0);
  }
  assert_string_equal(mb_dtype_name(MB_DTYPE_E8M0), "e8m0");
  assert_int_equal(mb_dtype_bits(MB_DTYPE_E8M0), 8);
  assert_int_equal(mb_dtype_bytes(MB_DTYPE_E8M0, 32), 32);
  assert_true(mb_dtype_max(MB_DTYPE_E8M0) == 0x1p127);
  /* Appended: the existing enum values did not move. */
  assert_int_equal(MB_DTYPE_E8M0, MB_DTYPE_I32 + 1);
  /* Every byte: 2^(b - 127), 0xFF NaN; the kernels' decoder agrees. */
  for (unsigned b = 0; b < 256; ++b) {
    const uint8_t byte = (uint8_t)b;
    const double v = mb__load(&byte, MB_DTYPE_E8M0, 0);
    const float k = mb__cvt_e8m0_to_f32(byte);
    if (b == 255) {
      assert_true(isnan(v) && isnan(k));
      continue;
    }
    assert_true(v == ldexp(1.0, (int)b - 127));
    assert_true((double)k == v);
    assert_int_equal(mb__cvt_pow2_to_e8m0(k), b);
    assert_int_equal(to_e8m0(v, 0), b); /* exact values round-trip */
  }
  assert_int_equal(mb__cvt_pow2_to_e8m0(NAN), 0xFF);
}

/* torch's float8_e8m0fnu cast: |x|, up from a significand of 1.5. */
static void test_e8m0_rounding(void **state) {
  (void)state;
  static const struct {
    double v;
    unsigned flags;
    uint8_t want;
  } cases[] = {
      {1.0, 0, 127},
      {1.5, 0, 128},          /* the guard bit: up */
      {0x1.7FFFFEp0, 0, 127}, /* just below 1.5: down */
      {0.75, 0, 127},         /* 1.5 * 2^-1 */
      {3.0, 0, 129},          /* 1.5 * 2 -> 4 */
      {-4.0, 0, 129},         /* no sign: |x| */
      {0.0, 0, 0},            /* no zero: 2^-127 */
      {-0.0, 0, 0},           /* */
      {0x1p-127, 0, 0},       /* the f32 subnormal 2^-127 */
      {0x1.8p-127, 0, 1},     /* above 2^-127, below 2^-126: up */
      {0x1p-130, 0, 0},       /* below 2^-127 */
      {0x1p-126, 0, 1},       /* */
      {0x1p127, 0, 254},      /* the largest */
      {0x1.8p127, 0, 255},    /* rounds past 2^127: NaN */
      {0x1.8p127, MB_CONVERT_SATURATE, 254},
      {INFINITY, 0, 255}, /* */
      {INFINITY, MB_CONVERT_SATURATE, 254},
      {NAN, MB_CONVERT_SATURATE, 255}, /* NaN stays NaN */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const uint8_t got = to_e8m0(cases[i].v, cases[i].flags);
    if (got != cases[i].want)
      fail_msg("e8m0(%a, flags %u) = %u, want %u", cases[i].v, cases[i].flags,
               got, cases[i].want);
  }
  /* mb_convert goes the same way (f32 -> e8m0 -> f32). */
  const float x[3] = {6.0f, 0.1f, 1e-40f};
  uint8_t e[3];
  float back[3];
  assert_int_equal(mb_convert(e, MB_DTYPE_E8M0, x, MB_DTYPE_F32, 3, 0), MB_OK);
  assert_int_equal(mb_convert(back, MB_DTYPE_F32, e, MB_DTYPE_E8M0, 3, 0),
                   MB_OK);
  assert_true(back[0] == 8.0f && back[1] == 0.125f && back[2] == 0x1p-127f);
}

/* ---- the shared exponent, by hand --------------------------------------- */

/* One block of 32 along a row: its values (the rest zero), the scale byte
 * and the element bytes the spec gives for them. */
typedef struct hand_block {
  const char *what;
  float v[6];
  uint8_t scale;
  uint8_t q[6];
} hand_block_t;

#define QNAN 0xFFu /* a marker: any NaN pattern (the scale says NaN) */

/* e4m3: emax_elem = 8 (448 = 1.75 2^8). */
static const hand_block_t k_e4m3[] = {
    {"amax exactly 2^8: X = 0",
     {256.0f, 1.0f, -3.0f, 0.5f, 0, 0},
     127,
     {0x78, 0x38, 0xC4, 0x30, 0, 0}},
    /* 0x437FFFFF = 256 - 2^-16: floor(log2) = 7, X = -1, and its quotient
     * 512 - 2^-15 saturates; 100 / 0.5 = 200 = 1.5625 2^7 is a tie between
     * 192 and 208, to even: 192. */
    {"amax just below 2^8: X = -1",
     {0x1.fffffep7f, 100.0f, -64.0f, 0, 0, 0},
     126,
     {0x7E, 0x74, 0xF0, 0, 0, 0}},
    {"all zero: the smallest scale", {0, 0, 0, 0, 0, 0}, 0, {0, 0, 0, 0, 0, 0}},
    {"a NaN: the NaN scale",
     {1.0f, NAN, 2.0f, 0, 0, 0},
     0xFF,
     {QNAN, QNAN, QNAN, QNAN, QNAN, QNAN}},
    {"an infinity: the NaN scale",
     {1.0f, -INFINITY, 0, 0, 0, 0},
     0xFF,
     {QNAN, QNAN, QNAN, QNAN, QNAN, QNAN}},
    /* amax 1: X = -8. 2^-17 2^8 = 2^-9, e4m3's smallest subnormal; 3 2^-18
     * is 1.5 of it, a tie to even (2); 2^-18 is half of it, a tie to 0;
     * 7 2^-17 the largest subnormal; 2^-14 the smallest normal. */
    {"subnormal results",
     {1.0f, 0x1p-17f, 0x1.8p-17f, 0x1p-18f, 0x1.Cp-15f, 0x1p-14f},
     119,
     {0x78, 0x01, 0x02, 0x00, 0x07, 0x08}},
    /* amax 500: X = 0; 500 and -470 saturate, 464 (the tie between 448
     * and the absent 480) rounds to even, 448. */
    {"saturation",
     {500.0f, -470.0f, 464.0f, 448.0f, 0, 0},
     127,
     {0x7E, 0xFE, 0x7E, 0x7E, 0, 0}},
    {"amax 448 exactly",
     {448.0f, -0.25f, 0, 0, 0, 0},
     127,
     {0x7E, 0xA8, 0, 0, 0, 0}},
    /* An f32-subnormal amax: X = -149 - 8 clamps to -127; 2^-140 2^127 =
     * 2^-13 is below half of e4m3's smallest subnormal. */
    {"subnormal amax: X clamps to -127",
     {0x1p-140f, 0, 0, 0, 0, 0},
     0,
     {0, 0, 0, 0, 0, 0}},
    /* 3e38: floor(log2) = 127, X = 119 (byte 246); 3e38 / 2^119 = 451.4
     * saturates. */
    {"the largest amaxes",
     {3e38f, 0x1p119f, 0, 0, 0, 0},
     246,
     {0x7E, 0x38, 0, 0, 0, 0}},
};

/* e5m2: emax_elem = 15 (57344 = 1.75 2^15). */
static const hand_block_t k_e5m2[] = {
    {"amax 1: X = -15",
     {1.0f, -0.5f, 0, 0, 0, 0},
     112,
     {0x78, 0xF4, 0, 0, 0, 0}},
    {"amax exactly 2^15",
     {32768.0f, 1.0f, 0, 0, 0, 0},
     127,
     {0x78, 0x3C, 0, 0, 0, 0}},
    /* just below 2^15: X = -1; (2^15 - 2^-9) / 0.5 = 2^16 - 2^-8 saturates */
    {"amax just below 2^15",
     {0x1.fffffep14f, 3.0f, 0, 0, 0, 0},
     126,
     {0x7B, 0x46, 0, 0, 0, 0}},
    /* 60000: X = 0; 61440 is the tie past 57344 (odd): it overflows, and
     * saturates */
    {"saturation",
     {60000.0f, -61440.0f, 0, 0, 0, 0},
     127,
     {0x7B, 0xFB, 0, 0, 0, 0}},
    /* amax 1: 2^-31 2^15 = 2^-16, e5m2's smallest subnormal; 3 2^-32 a tie
     * to even (2) */
    {"subnormal results",
     {1.0f, 0x1p-31f, 0x1.8p-31f, 0x1p-32f, 0, 0},
     112,
     {0x78, 0x01, 0x02, 0x00, 0, 0}},
};

static void check_blocks(const hand_block_t *blocks, size_t count,
                         mb_dtype_t qdt) {
  const int64_t cols = 32 * (int64_t)count;
  float *x = calloc((size_t)cols, sizeof *x), *grid = calloc(count, 4);
  uint8_t *q = calloc((size_t)cols, 1), *sb = calloc(count, 1);
  assert_true(x && grid && q && sb);
  for (size_t b = 0; b < count; ++b)
    for (size_t i = 0; i < 6; ++i) x[32 * b + i] = blocks[b].v[i];
  mb_scaling_t s = {MB_SCALE_BLOCK, {1, 32}};
  mb__quantize_ref_sd(x, 1, cols, &s, qdt, MB_DTYPE_E8M0, 0.0, q, grid);
  assert_int_equal(mb_convert(sb, MB_DTYPE_E8M0, grid, MB_DTYPE_F32, count, 0),
                   MB_OK);
  for (size_t b = 0; b < count; ++b) {
    const hand_block_t *h = &blocks[b];
    if (sb[b] != h->scale)
      fail_msg("%s %s: scale byte %u, want %u", mb_dtype_name(qdt), h->what,
               sb[b], h->scale);
    /* The kernels' rule gives the same byte from the same absmax. */
    uint32_t amax = 0;
    for (size_t i = 0; i < 32; ++i) {
      const uint32_t a = mb__cvt_bits(x[32 * b + i]) & 0x7FFFFFFFu;
      amax = a > amax ? a : amax;
    }
    assert_int_equal(mb__cvt_mx_scale_e8m0(amax, mb__mx_emax(qdt)), h->scale);
    for (size_t i = 0; i < 32; ++i) {
      /* the zeros after the six: 0, or NaN in a NaN block (0 / NaN) */
      const uint8_t want = i < 6 ? h->q[i] : h->scale == 0xFF ? QNAN : 0;
      const uint8_t got = q[32 * b + i];
      const int ok = want == QNAN ? isnan(mb__load(&got, qdt, 0)) : got == want;
      if (!ok)
        fail_msg("%s %s: element %zu = %02x, want %02x", mb_dtype_name(qdt),
                 h->what, i, got, want);
    }
  }
  free(x), free(grid), free(q), free(sb);
}

static void test_mx_scale_e4m3(void **state) {
  (void)state;
  check_blocks(k_e4m3, sizeof k_e4m3 / sizeof k_e4m3[0], MB_DTYPE_F8E4M3);
}

static void test_mx_scale_e5m2(void **state) {
  (void)state;
  check_blocks(k_e5m2, sizeof k_e5m2 / sizeof k_e5m2[0], MB_DTYPE_F8E5M2);
}

/* A static scale is every block's, stored as its byte: 0.5 is 126. */
static void test_mx_static(void **state) {
  (void)state;
  float x[64] = {1.0f, 300.0f, -0.75f}, grid[2];
  x[32] = 1000.0f;
  uint8_t q[64], sb[2];
  mb_scaling_t s = {MB_SCALE_BLOCK, {1, 32}};
  mb__quantize_ref_sd(x, 1, 64, &s, MB_DTYPE_F8E4M3, MB_DTYPE_E8M0, 0.5, q,
                      grid);
  assert_int_equal(mb_convert(sb, MB_DTYPE_E8M0, grid, MB_DTYPE_F32, 2, 0),
                   MB_OK);
  assert_int_equal(sb[0], 126);
  assert_int_equal(sb[1], 126);
  assert_int_equal(q[0], 0x40);  /* 2 */
  assert_int_equal(q[1], 0x7E);  /* 600 saturates */
  assert_int_equal(q[2], 0xBC);  /* -1.5 */
  assert_int_equal(q[32], 0x7E); /* 2000 saturates */
  /* resolve refuses a static scale e8m0 cannot hold */
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2, p.shape[0] = 32, p.shape[1] = 64;
  p.dtype_scale = MB_DTYPE_E8M0, p.flags = MB_PARAM_STATIC, p.scale = 0.3;
  assert_int_equal(mb_op_resolve(mb_op_find("quantize"), &p),
                   MB_ERR_INVALID_ARG);
  p.scale = 0x1p-127;
  assert_int_equal(mb_op_resolve(mb_op_find("quantize"), &p), MB_OK);
  p.scale = 0x1p-128;
  assert_int_equal(mb_op_resolve(mb_op_find("quantize"), &p),
                   MB_ERR_INVALID_ARG);
}

/* The reference (frexp) and the kernels' rule (the exponent field) over
 * every f32 exponent with four significands, both element formats, and
 * NaN and infinity. */
static void test_mx_rules_agree(void **state) {
  (void)state;
  static const uint32_t sig[] = {0, 1, 0x400000, 0x7FFFFF};
  static const mb_dtype_t q[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2};
  for (size_t qi = 0; qi < 2; ++qi)
    for (uint32_t e = 0; e < 256; ++e)
      for (size_t si = 0; si < 4; ++si) {
        const uint32_t bits = e << 23 | sig[si];
        const float s = mb__mx_scale(mb__cvt_float(bits), q[qi]);
        uint8_t want = 0;
        assert_int_equal(
            mb_convert(&want, MB_DTYPE_E8M0, &s, MB_DTYPE_F32, 1, 0), MB_OK);
        const uint8_t got = mb__cvt_mx_scale_e8m0(bits, mb__mx_emax(q[qi]));
        if (got != want)
          fail_msg("%s amax %08x: kernels' byte %u, reference %u",
                   mb_dtype_name(q[qi]), bits, got, want);
        assert_int_equal(mb__cvt_pow2_to_e8m0(s), want);
      }
}

/* What resolve accepts: e8m0 with fp8 only, scaled sides only. */
static void test_mx_resolve(void **state) {
  (void)state;
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3, p.shape[0] = 64, p.shape[1] = 128, p.shape[2] = 32;
  assert_int_equal(mb_op_apply_alias("gemm_mxfp8_b32", &p), MB_OK);
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_int_equal(p.dtype_scale, MB_DTYPE_E8M0);
  assert_int_equal(p.scale_a.block[1], 32);
  assert_int_equal(p.scale_b.block[0], 32);
  /* quantized inside: the scales are scratch, not bytes moved */
  assert_true(mb_op_bytes(mb_op_find("gemm"), &p) ==
              2.0 * (64 * 128 + 128 * 32) + 2 * 64 * 32);
  /* given MXFP8: scales (64 x 4) + (4 x 32) bytes, one each */
  mb_op_params_t g = MB_OP_PARAMS_INIT;
  g.ndim = 3, g.shape[0] = 64, g.shape[1] = 128, g.shape[2] = 32;
  g.dtype = MB_DTYPE_F8E4M3, g.dtype_out = MB_DTYPE_BF16;
  g.dtype_scale = MB_DTYPE_E8M0;
  g.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 32}};
  g.scale_b = (mb_scaling_t){MB_SCALE_BLOCK, {32, 1}};
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &g), MB_OK);
  assert_true(mb_op_bytes(mb_op_find("gemm"), &g) ==
              64 * 128 + 128 * 32 + 256 + 128 + 2 * 64 * 32);
  mb_op_params_t f = MB_OP_PARAMS_INIT;
  f.ndim = 3, f.shape[0] = 64, f.shape[1] = 128, f.shape[2] = 32;
  f.dtype = MB_DTYPE_BF16, f.dtype_scale = MB_DTYPE_E8M0;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &f), MB_ERR_INVALID_ARG);
  mb_op_params_t a = MB_OP_PARAMS_INIT;
  a.ndim = 2, a.shape[0] = 64, a.shape[1] = 64, a.dtype_scale = MB_DTYPE_E8M0;
  assert_int_equal(mb_op_resolve(mb_op_find("add"), &a), MB_ERR_INVALID_ARG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_e8m0_dtype),
      cmocka_unit_test(test_e8m0_rounding),
      cmocka_unit_test(test_mx_scale_e4m3),
      cmocka_unit_test(test_mx_scale_e5m2),
      cmocka_unit_test(test_mx_static),
      cmocka_unit_test(test_mx_rules_agree),
      cmocka_unit_test(test_mx_resolve),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
