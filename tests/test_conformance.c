/* The backend conformance suite: every kernel a backend offers, on shapes
 * with ragged edges, through the full harness, must pass the reference
 * check. Run once per backend (argument); exits 77 (skipped, visibly) when
 * the backend has no device here. */
#include "test_util.h"

static const char *g_backend;
static mb_context_t *g_ctx;

static const int64_t k_gemm_shapes[][3] = {
    {1, 1, 1}, {17, 33, 9}, {64, 128, 96}, {129, 257, 65}, {256, 256, 256}};
static const int64_t k_add_shapes[][2] = {
    {1, 1}, {3, 1000}, {257, 129}, {1024, 1024}};

static void run_kernel(const mb_kernel_info_t *k, const int64_t *shape,
                       uint32_t ndim) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = ndim;
  memcpy(p.shape, shape, ndim * sizeof *shape);
  p.dtype = k->dtype;
  p.dtype_out = k->dtype_out;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = k->op;
  s.params = &p;
  s.backend = g_backend;
  s.impl = k->name;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 2;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &c);
  printf("  %-5s %-7s %5s->%-5s %lldx%lldx%lld  %s  max err ratio %.3g\n",
         k->op, k->name, mb_dtype_name(k->dtype), mb_dtype_name(k->dtype_out),
         (long long)shape[0], (long long)shape[1],
         ndim > 2 ? (long long)shape[2] : 0LL,
         info.status == MB_RESULT_OK ? (c.pass ? "pass" : "FAIL")
                                     : mb_result_status_name(info.status),
         c.max_err_ratio);
  if (info.status != MB_RESULT_OK) fail_msg("%s", info.reason);
  if (!c.pass)
    fail_msg("wrong result: error %.3g x tolerance", c.max_err_ratio);
  mb_result_destroy(r);
}

static void test_every_kernel(void **state) {
  (void)state;
  int tested = 0;
  for (size_t i = 0; i < mb_kernel_count(g_ctx); i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    assert_int_equal(mb_kernel_info(g_ctx, i, &k), MB_OK);
    if (strcmp(k.backend, g_backend) != 0) continue;
    if (strcmp(k.op, "gemm") == 0)
      for (size_t s = 0; s < sizeof k_gemm_shapes / sizeof *k_gemm_shapes; s++)
        run_kernel(&k, k_gemm_shapes[s], 3);
    else if (strcmp(k.op, "add") == 0)
      for (size_t s = 0; s < sizeof k_add_shapes / sizeof *k_add_shapes; s++)
        run_kernel(&k, k_add_shapes[s], 2);
    else
      fail_msg("conformance has no shapes for op %s: add them", k.op);
    tested++;
  }
  assert_true(tested > 0);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_conformance BACKEND\n");
    return 2;
  }
  g_backend = argv[1];
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  o.backend_path = dir;
  if (dir && *dir) o.flags = MB_CONTEXT_NO_DEFAULT_BACKENDS;
  if (mb_context_create(&g_ctx, &o) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  mb_device_t *dev;
  if (mb_device_find(g_ctx, g_backend, 0, &dev) != MB_OK) {
    printf("SKIPPED: backend %s: %s\n", g_backend, mb_error_last());
    mb_context_destroy(g_ctx);
    return 77;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_kernel)};
  int rc = cmocka_run_group_tests_name(g_backend, tests, NULL, NULL);
  mb_context_destroy(g_ctx);
  return rc;
}
