/* A composite's steps on a backend whose fp8 GEMM pre-packs B in prepare
 * (gpuemu64's "prepack" entry, tests/gpu_emu/gpuemu_prepack.c, standing
 * for cuBLASLt), which is what the first run on an H100 found wrong: a
 * float8dq linear layer gave zeros (SQNR 0 dB) because its GEMM was
 * prepared, and its B^T copied, before the setup step had quantized the
 * weights.
 *
 * - inference: the setup steps run before the timed steps are prepared,
 *   so the pre-packing kernel copies the quantized weights and the result
 *   is right, with the prepack kernel running the GEMM;
 * - training: the weights are quantized inside the timed run (varying_in),
 *   so the pre-packing kernel declines and the step runs on the next
 *   kernel (native), right again. */
#include "test_util.h"

static mb_context_t *g_ctx;

static int setup(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/gpuemu64", test_env_dir("MB_TEST_FIXTURE_DIR"));
  g_ctx = test_context(dir);
  return mb_device_count(g_ctx) == 1 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static mb_result_t *run(const char *op, mb_recipe_t recipe) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = 32, p.shape[1] = 64, p.shape[2] = 48;
  p.dtype = MB_DTYPE_BF16;
  p.recipe = (uint32_t)recipe;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = "gpuemu64";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 2;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_OK);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &c);
  if (info.status != MB_RESULT_OK)
    fail_msg("%s %s: %s: %s", op, mb_recipe_name(recipe),
             mb_result_status_name(info.status), info.reason);
  if (!c.checked || !c.pass)
    fail_msg("%s %s: wrong result (%.3g x the tolerance)", op,
             mb_recipe_name(recipe), c.max_err_ratio);
  return r;
}

/* How many GEMM steps ran on kernel `impl`, of *total GEMM steps. */
static size_t gemm_steps_on(const mb_result_t *r, const char *impl,
                            size_t *total) {
  size_t n = 0;
  *total = 0;
  for (size_t i = 0; i < mb_result_step_count(r); i++) {
    mb_step_time_t t = MB_STEP_TIME_INIT;
    assert_int_equal(mb_result_step(r, i, &t), MB_OK);
    if (strcmp(t.op, "gemm")) continue;
    ++*total;
    n += !strcmp(t.impl, impl);
  }
  return n;
}

static void test_inference_packs_the_quantized_weights(void **state) {
  (void)state;
  static const mb_recipe_t recipes[] = {MB_RECIPE_FLOAT8DQ_TENSOR,
                                        MB_RECIPE_FLOAT8DQ_ROW};
  for (size_t i = 0; i < sizeof recipes / sizeof *recipes; i++) {
    mb_result_t *r = run("linear", recipes[i]);
    size_t total = 0;
    assert_int_equal(gemm_steps_on(r, "prepack", &total), 1);
    assert_int_equal(total, 1);
    mb_result_destroy(r);
  }
}

static void test_training_gemms_fall_back(void **state) {
  (void)state;
  mb_result_t *r = run("linear_training", MB_RECIPE_FLOAT8DQ_ROW);
  size_t total = 0;
  /* Every GEMM's B is quantized inside the step: W in the forward pass,
   * W^T and dY in the backward pass. */
  assert_int_equal(gemm_steps_on(r, "native", &total), 3);
  assert_int_equal(total, 3);
  mb_result_destroy(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inference_packs_the_quantized_weights),
      cmocka_unit_test(test_training_gemms_fall_back),
  };
  return cmocka_run_group_tests_name("composite prepack", tests, setup,
                                     teardown);
}
