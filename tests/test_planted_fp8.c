/* Planted bugs in the element-wise ops on fp8 inputs (add, sigmoid,
 * silu_mul): kernels that decode e4m3 as e5m2 or round the fp8 output
 * toward zero must fail the correctness check; their correct twins pass.
 * User kernels on the CPU backend's (host) memory, through the public API
 * (test_planted.c's harness, for these ops). */
#include <math.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum bug {
  BUG_NONE,
  BUG_WRONG_FORMAT, /* e4m3 inputs decoded as e5m2 */
  BUG_TRUNCATE      /* the fp8 output rounded toward zero */
};
static const enum bug k_bugs[] = {BUG_NONE, BUG_WRONG_FORMAT, BUG_TRUNCATE};
static const char *const k_names[] = {"right", "wrong_format", "truncate"};

/* The element-wise functions in f32, as the library's kernels compute. */
typedef float (*elt_fn)(float x, float y);
static float f_add(float x, float y) {
  return x + y;
}
static float f_sigmoid(float x, float y) {
  (void)y;
  return 1.0f / (1.0f + expf(-x));
}
static float f_silu_mul(float x, float y) {
  return x / (1.0f + expf(-x)) * y;
}

/* Z = f(X[, Y]) on e4m3 operands into e4m3, RNE saturating, or the bug. */
static mb_status_t run_fp8(void *user, const mb_kernel_args_t *a, elt_fn f) {
  const enum bug bug = *(const enum bug *)user;
  const uint8_t *x = mb_tensor_data(a->inputs[0]);
  const uint8_t *y = a->num_inputs > 1 ? mb_tensor_data(a->inputs[1]) : NULL;
  uint8_t *z = mb_tensor_data(a->outputs[0]);
  float (*decode)(uint8_t) =
      bug == BUG_WRONG_FORMAT ? mb_f8e5m2_to_f32 : mb_f8e4m3_to_f32;
  for (size_t i = 0; i < mb_tensor_numel(a->outputs[0]); i++) {
    const float v = f(decode(x[i]), y ? decode(y[i]) : 0.0f);
    uint8_t r = mb_f32_to_f8e4m3(v, MB_CONVERT_SATURATE);
    /* Toward zero: step back when rounding went away from zero. */
    if (bug == BUG_TRUNCATE && fabsf(mb_f8e4m3_to_f32(r)) > fabsf(v)) r--;
    z[i] = r;
  }
  return MB_OK;
}

static mb_status_t k_add(void *user, const mb_kernel_args_t *a) {
  return run_fp8(user, a, f_add);
}
static mb_status_t k_sigmoid(void *user, const mb_kernel_args_t *a) {
  return run_fp8(user, a, f_sigmoid);
}
static mb_status_t k_silu_mul(void *user, const mb_kernel_args_t *a) {
  return run_fp8(user, a, f_silu_mul);
}

static const struct {
  const char *op;
  mb_kernel_fn fn;
} k_ops[] = {
    {"add", k_add}, {"activation", k_sigmoid}, {"silu_mul", k_silu_mul}};

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  for (size_t o = 0; o < sizeof k_ops / sizeof k_ops[0]; o++)
    for (size_t b = 0; b < sizeof k_bugs / sizeof k_bugs[0]; b++) {
      mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
      d.op = k_ops[o].op;
      d.name = k_names[b];
      d.dtype = MB_DTYPE_F8E4M3;
      d.dtype_out = MB_DTYPE_F8E4M3;
      d.run = k_ops[o].fn;
      d.user = (void *)&k_bugs[b];
      assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
    }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

/* One checked sample of `op` (an op or alias) on e4m3 37 x 129 (default
 * output: e4m3) with kernel `impl`: whether it passed. */
static int passes(const char *op, const char *impl) {
  mb_op_params_t p = test_shape2(MB_DTYPE_F8E4M3, 37, 129);
  return test_impl_passes(g_ctx, op, &p, impl);
}

static void test_fp8_eltwise_bugs(void **state) {
  (void)state;
  static const char *const ops[] = {"add", "sigmoid", "silu_mul"};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    assert_true(passes(ops[o], "right"));
    assert_false(passes(ops[o], "wrong_format"));
    assert_false(passes(ops[o], "truncate"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fp8_eltwise_bugs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
