/* The element-wise ops on fp8 inputs (add, activation — sigmoid among
 * them — and silu_mul): the output rule (the input's fp8 by default, or
 * f32, bf16, f16), the byte model counting an fp8 element as one byte,
 * references on exactly decoded values known in closed form, saturation of
 * fp8 outputs, and the check on correctly rounded and truncated outputs. */
#include <math.h>

#include "test_util.h"
#include "dtype_internal.h"
#include "ops/op_internal.h"
#include "ops/verify.h"
#include "eltwise_rounding.h"

/* Bit patterns: e4m3 1.0, 1.5, 2.0, -1.0, 448 (max); e5m2 1.0, 2.0, 57344
 * (max). */
enum {
  E4_ONE = 0x38,
  E4_ONE_HALF = 0x3C,
  E4_TWO = 0x40,
  E4_MINUS_ONE = 0xB8,
  E4_MAX = 0x7E,
  E5_ONE = 0x3C,
  E5_TWO = 0x40,
  E5_MAX = 0x7B
};

static const mb_dtype_t k_fp8[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2};
static const mb_op_t *const k_ops[] = {&mb__op_add, &mb__op_activation,
                                       &mb__op_silu_mul};

static mb_op_params_t mn(int64_t m, int64_t n, mb_dtype_t in, mb_dtype_t out) {
  mb_op_params_t p = test_shape2(in, m, n);
  p.dtype_out = out;
  p.activation = MB_ACT_SIGMOID;
  return p;
}

static double sigmoid(double x) {
  return 1.0 / (1.0 + exp(-x));
}

/* The reference value of element idx of output 0. */
static double ref_at(const mb_op_t *op, const mb_op_params_t *p,
                     const void *const *host, size_t idx) {
  void *ref = NULL;
  double v, s;
  assert_int_equal(op->ref_prepare(p, host, &ref), MB_OK);
  op->ref_element(ref, 0, idx, &v, &s);
  op->ref_release(ref);
  return v;
}

static void expect_refused(const mb_op_t *op, mb_op_params_t p,
                           const char *msg) {
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), msg);
}

/* fp8 in: out defaults to the input's fp8 and may be f32, bf16, f16, not
 * the other fp8; float in: out as before (activation and silu_mul the
 * input's own, add any of f32, bf16, f16). */
static void test_output_rule(void **state) {
  (void)state;
  static const mb_dtype_t wide[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
  for (size_t o = 0; o < 3; o++)
    for (size_t f = 0; f < 2; f++) {
      mb_op_params_t p = mn(4, 8, k_fp8[f], MB_DTYPE_NONE);
      assert_int_equal(mb_op_resolve(k_ops[o], &p), MB_OK);
      assert_int_equal(p.dtype_out, k_fp8[f]);
      assert_int_equal(p.dtype_b, k_fp8[f]);
      for (size_t w = 0; w < 3; w++) {
        p = mn(4, 8, k_fp8[f], wide[w]);
        assert_int_equal(mb_op_resolve(k_ops[o], &p), MB_OK);
      }
    }
  expect_refused(&mb__op_activation, mn(4, 8, MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2),
                 "activation: dtype_out \"f8e5m2\" is not supported; valid: "
                 "f8e4m3, f32, bf16, f16");
  expect_refused(&mb__op_silu_mul, mn(4, 8, MB_DTYPE_BF16, MB_DTYPE_F32),
                 "silu_mul: dtype_out \"f32\" is not supported; valid: bf16");
  expect_refused(&mb__op_add, mn(4, 8, MB_DTYPE_BF16, MB_DTYPE_F8E4M3),
                 "add: dtype_out \"f8e4m3\" is not supported; valid: f32, "
                 "bf16, f16");
  expect_refused(&mb__op_add, mn(4, 8, MB_DTYPE_I8, MB_DTYPE_NONE),
                 "add: dtype \"i8\" is not supported; valid: f32, bf16, f16, "
                 "f8e4m3, f8e5m2");
  mb_op_params_t p = mn(4, 8, MB_DTYPE_BF16, MB_DTYPE_F32);
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
}

/* Bytes: each operand once, an fp8 element one byte (the JAX suite's
 * 3 MN for add and silu_mul, 2 MN for sigmoid on fp8); FLOP as on floats. */
static void test_flop_bytes(void **state) {
  (void)state;
  const double n = 10 * 300;
  mb_op_params_t p = mn(10, 300, MB_DTYPE_F8E4M3, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(&mb__op_activation, &p), MB_OK);
  assert_true(mb_op_bytes(&mb__op_activation, &p) == 2 * n);
  assert_true(mb_op_flop(&mb__op_activation, &p) == 4 * n);
  p = mn(10, 300, MB_DTYPE_F8E5M2, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(&mb__op_activation, &p), MB_OK);
  assert_true(mb_op_bytes(&mb__op_activation, &p) == n + 2 * n);
  p = mn(10, 300, MB_DTYPE_F8E4M3, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(&mb__op_silu_mul, &p), MB_OK);
  assert_true(mb_op_bytes(&mb__op_silu_mul, &p) == 3 * n);
  assert_true(mb_op_flop(&mb__op_silu_mul, &p) == 5 * n);
  p = mn(10, 300, MB_DTYPE_F8E4M3, MB_DTYPE_F32);
  assert_int_equal(mb_op_resolve(&mb__op_silu_mul, &p), MB_OK);
  assert_true(mb_op_bytes(&mb__op_silu_mul, &p) == 2 * n + 4 * n);
  p = mn(10, 300, MB_DTYPE_F8E5M2, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
  assert_true(mb_op_bytes(&mb__op_add, &p) == 3 * n);
  assert_true(mb_op_flop(&mb__op_add, &p) == n);
  p = mn(10, 300, MB_DTYPE_F8E4M3, MB_DTYPE_F16);
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
  assert_true(mb_op_bytes(&mb__op_add, &p) == 2 * n + 2 * n);
}

/* The references read the fp8 patterns exactly (e4m3 and e5m2 each as
 * itself) and compute in double. */
static void test_reference_values(void **state) {
  (void)state;
  const uint8_t x4[] = {E4_ONE, E4_MINUS_ONE, E4_TWO};
  const void *h4[] = {x4, NULL};
  mb_op_params_t p = mn(1, 3, MB_DTYPE_F8E4M3, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(&mb__op_activation, &p), MB_OK);
  assert_true(ref_at(&mb__op_activation, &p, h4, 0) == sigmoid(1.0));
  assert_true(ref_at(&mb__op_activation, &p, h4, 1) == sigmoid(-1.0));
  assert_true(ref_at(&mb__op_activation, &p, h4, 2) == sigmoid(2.0));
  /* silu(2) * 1.5 on e4m3; silu(1) * 2 on e5m2. */
  const uint8_t a4[] = {E4_TWO}, b4[] = {E4_ONE_HALF};
  const void *s4[] = {a4, b4};
  p = mn(1, 1, MB_DTYPE_F8E4M3, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(&mb__op_silu_mul, &p), MB_OK);
  assert_true(ref_at(&mb__op_silu_mul, &p, s4, 0) == 2.0 * sigmoid(2.0) * 1.5);
  const uint8_t a5[] = {E5_ONE}, b5[] = {E5_TWO};
  const void *s5[] = {a5, b5};
  p = mn(1, 1, MB_DTYPE_F8E5M2, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(&mb__op_silu_mul, &p), MB_OK);
  assert_true(ref_at(&mb__op_silu_mul, &p, s5, 0) == sigmoid(1.0) * 2.0);
}

/* max + max: saturated to max in the fp8 itself (the conversions'
 * satfinite), exact in a wider output. */
static void test_saturation(void **state) {
  (void)state;
  const uint8_t m4[] = {E4_MAX}, m5[] = {E5_MAX};
  const void *h4[] = {m4, m4}, *h5[] = {m5, m5};
  mb_op_params_t p = mn(1, 1, MB_DTYPE_F8E4M3, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
  assert_true(ref_at(&mb__op_add, &p, h4, 0) == 448.0);
  p = mn(1, 1, MB_DTYPE_F8E4M3, MB_DTYPE_F32);
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
  assert_true(ref_at(&mb__op_add, &p, h4, 0) == 896.0);
  p = mn(1, 1, MB_DTYPE_F8E5M2, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
  assert_true(ref_at(&mb__op_add, &p, h5, 0) == 57344.0);
  p = mn(1, 1, MB_DTYPE_F8E5M2, MB_DTYPE_F32);
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
  assert_true(ref_at(&mb__op_add, &p, h5, 0) == 114688.0);
}

/* Seeded normal fp8 inputs: a correctly rounded output passes, a
 * truncated one fails, into the fp8 itself and into bf16 (add into bf16
 * is often exact: fp8 only). */
static void test_rounding_is_judged(void **state) {
  (void)state;
  static const mb_activation_t acts[] = {MB_ACT_SIGMOID, MB_ACT_GELU_TANH,
                                         MB_ACT_SILU, MB_ACT_HARDSWISH};
  for (size_t f = 0; f < 2; f++) {
    const mb_dtype_t outs[] = {k_fp8[f], MB_DTYPE_BF16};
    for (size_t o = 0; o < 2; o++) {
      mb_op_params_t p = mn(17, 130, k_fp8[f], outs[o]);
      for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        p.activation = acts[a];
        check_rounding(&mb__op_activation, p);
      }
      check_rounding(&mb__op_silu_mul, p);
    }
    check_rounding(&mb__op_add, mn(17, 130, k_fp8[f], MB_DTYPE_NONE));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_output_rule),
      cmocka_unit_test(test_flop_bytes),
      cmocka_unit_test(test_reference_values),
      cmocka_unit_test(test_saturation),
      cmocka_unit_test(test_rounding_is_judged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
