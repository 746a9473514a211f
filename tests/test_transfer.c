/* The host transfers h2d and d2h (lib/ops/copy.c): on the cpu backend,
 * pageable and pinned, each checked exactly — d2h's check reads what its
 * collect hook brought back from the kernel's host buffer, so a runner that
 * skipped the hook leaves Y unwritten and fails here — with the transfer's
 * bytes (MN size, each byte across once) and no roofline (the device's copy
 * bandwidth is not a link's). On the emulated GPU (when built) pinned runs
 * and pageable is skipped with its reason. */
#include "test_util.h"

static mb_result_t *run_on(mb_context_t *ctx, const char *backend,
                           const char *op, uint32_t flags) {
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 33, 65);
  p.flags = flags;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = backend;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 5;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(ctx, &s, &r), MB_OK);
  return r;
}

static void expect_exact(mb_result_t *r, const char *what) {
  assert_true(test_result_passes(r, what));
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  assert_int_equal(mb_result_correctness(r, &c), MB_OK);
  assert_true(c.max_abs_err == 0.0);
  assert_true(c.runs_checked >= 2); /* the first run and after timing */
  mb_derived_t d = MB_DERIVED_INIT;
  assert_int_equal(mb_result_derived(r, &d), MB_OK);
  assert_true(d.bytes == 33.0 * 65 * 4);
  assert_true(d.flop == 0.0);
  assert_true(d.bandwidth_gbps == 0.0 && d.roof_ns == 0.0 && d.pct_roof == 0);
  assert_true(d.gbps > 0.0);
}

static void test_cpu(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  const char *ops[] = {"h2d", "d2h"};
  for (size_t i = 0; i < 2; i++)
    for (uint32_t pinned = 0; pinned < 2; pinned++) {
      mb_result_t *r =
          run_on(ctx, "cpu", ops[i], pinned ? MB_PARAM_PINNED : 0u);
      printf("  cpu %s %s\n", ops[i], pinned ? "pinned" : "pageable");
      expect_exact(r, ops[i]);
      mb_result_destroy(r);
    }
  mb_context_destroy(ctx);
}

static void test_gpuemu(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/gpuemu", test_env_dir("MB_TEST_FIXTURE_DIR"));
  mb_context_t *ctx = test_context(dir);
  const char *ops[] = {"h2d", "d2h"};
  for (size_t i = 0; i < 2; i++) {
    mb_result_t *r = run_on(ctx, "gpuemu", ops[i], MB_PARAM_PINNED);
    expect_exact(r, ops[i]);
    mb_result_destroy(r);
    r = run_on(ctx, "gpuemu", ops[i], 0u);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    assert_int_equal(mb_result_info(r, &info), MB_OK);
    assert_int_equal(info.status, MB_RESULT_SKIPPED);
    assert_contains(info.reason, "pageable host memory on a GPU");
    mb_result_destroy(r);
  }
  mb_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu),
      cmocka_unit_test(test_gpuemu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
