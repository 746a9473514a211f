/* STREAM's scale (Y = 3 X) and triad (A = B + 3 C): their FLOP/byte model
 * (STREAM's: 2 and 3 arrays moved), planted bugs — scale without its
 * scalar (a copy), triad with B and C swapped, triad without the scalar —
 * which must fail the check their correct twins pass, the CPU backend's
 * kernels, and the JAX suite's hbm_bandwidth op_type scale and triad
 * planned and run as them. User kernels on the CPU backend's (host)
 * memory, through the public API. */
#include "test_util.h"

static mb_context_t *g_ctx;

enum bug { BUG_NONE, BUG_NO_Q, BUG_SWAP };
static const enum bug k_bugs[] = {BUG_NONE, BUG_NO_Q, BUG_SWAP};
static const char *const k_names[] = {"right", "no_q", "swap"};

/* f32 scale (one input) or triad (two), in double, rounded once. */
static mb_status_t stream(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const double q = bug == BUG_NO_Q ? 1.0 : 3.0;
  const int triad = a->num_inputs == 2;
  const float *b = mb_tensor_data(a->inputs[0]);
  const float *c = triad ? mb_tensor_data(a->inputs[1]) : NULL;
  float *y = mb_tensor_data(a->outputs[0]);
  if (bug == BUG_SWAP && triad) {
    const float *t = b;
    b = c, c = t;
  }
  for (size_t i = 0; i < mb_tensor_numel(a->outputs[0]); i++)
    y[i] = triad ? (float)(b[i] + q * c[i]) : (float)(q * b[i]);
  return MB_OK;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  static const char *const ops[] = {"scale", "triad"};
  for (size_t o = 0; o < 2; o++)
    for (size_t b = 0; b < sizeof k_bugs / sizeof k_bugs[0]; b++) {
      mb_kernel_desc_t k = MB_KERNEL_DESC_INIT;
      k.op = ops[o];
      k.name = k_names[b];
      k.dtype = MB_DTYPE_F32;
      k.dtype_out = MB_DTYPE_F32;
      k.run = stream;
      k.user = (void *)&k_bugs[b];
      assert_int_equal(mb_kernel_register(g_ctx, &k), MB_OK);
    }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

/* scale: 1 FLOP, 2 arrays; triad: 2 FLOPs, 3 arrays (per element). */
static void test_model(void **state) {
  (void)state;
  const mb_op_t *scale = mb_op_find("scale"), *triad = mb_op_find("triad");
  assert_non_null(scale);
  assert_non_null(triad);
  mb_op_params_t p = test_shape2(MB_DTYPE_BF16, 1, 1 << 20);
  assert_int_equal(mb_op_resolve(scale, &p), MB_OK);
  assert_true(mb_op_flop(scale, &p) == 1 << 20);
  assert_true(mb_op_bytes(scale, &p) == 2.0 * 2 * (1 << 20));
  assert_int_equal(mb_op_resolve(triad, &p), MB_OK);
  assert_true(mb_op_flop(triad, &p) == 2.0 * (1 << 20));
  assert_true(mb_op_bytes(triad, &p) == 3.0 * 2 * (1 << 20));
  p = test_shape2(MB_DTYPE_F8E4M3, 4, 4);
  assert_int_equal(mb_op_resolve(triad, &p), MB_ERR_INVALID_ARG);
}

static int passes(const char *op, const char *impl) {
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 37, 129);
  return test_impl_passes(g_ctx, op, &p, impl);
}

static void test_planted(void **state) {
  (void)state;
  assert_true(passes("scale", "right"));
  assert_false(passes("scale", "no_q"));
  assert_true(passes("triad", "right"));
  assert_false(passes("triad", "no_q"));
  assert_false(passes("triad", "swap"));
}

/* The CPU backend's kernels on every dtype, across threads and a tail. */
static void test_cpu_kernels(void **state) {
  (void)state;
  static const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
  for (size_t t = 0; t < 3; t++) {
    mb_op_params_t p = test_shape2(dts[t], 3, 40001);
    assert_true(test_impl_passes(g_ctx, "scale", &p, "c"));
    assert_true(test_impl_passes(g_ctx, "triad", &p, "c"));
  }
}

/* hbm_bandwidth's op_type scale and triad are our ops, in `dtype`. */
static void test_jax_hbm(void **state) {
  (void)state;
  static const char text[] =
      "global: {dtype: bfloat16, num_runs: 2, warmup_tries: 1}\n"
      "benchmarks:\n"
      "- name: hbm_bandwidth\n"
      "  sweep: {size: [4096], op_type: [scale, triad]}\n";
  mb_plan_options_t opts = MB_PLAN_OPTIONS_INIT;
  opts.backend = "cpu";
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(text, strlen(text), "t.yaml", &opts, &plan) != MB_OK)
    fail_msg("%s", mb_error_last());
  assert_int_equal(mb_plan_count(plan), 2);
  static const char *const ops[] = {"scale", "triad"};
  for (size_t i = 0; i < 2; i++) {
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    assert_int_equal(mb_plan_entry(plan, i, &e), MB_OK);
    assert_string_equal(e.op, ops[i]);
    assert_string_equal(e.skip_reason, "");
    assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
    assert_true(e.bytes == (i ? 3.0 : 2.0) * 2 * 4096);
    mb_result_t *r = NULL;
    assert_int_equal(mb_plan_run(g_ctx, plan, i, &r), MB_OK);
    assert_true(test_result_passes(r, e.name));
    mb_result_destroy(r);
  }
  mb_plan_destroy(plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model),
      cmocka_unit_test(test_planted),
      cmocka_unit_test(test_cpu_kernels),
      cmocka_unit_test(test_jax_hbm),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
