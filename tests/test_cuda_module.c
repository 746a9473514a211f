/* The CUDA backend module through the public API.
 *
 *   test_cuda_module static   — needs no GPU: the module loads on a machine
 *       without a driver, says why it has no device, maps no cuBLASLt
 *       there, and its kernel table is consistent with the op catalogue
 *       (every op has a kernel, every entry names a real op and dtypes the
 *       op accepts).
 *   test_cuda_module device   — needs a GPU; exits 77 (ctest: skipped, with
 *       the reason printed) when there is none. Timing, cache policies,
 *       telemetry, kernel notes, peaks, tf32, fp8 fast accumulation and
 *       out-of-memory handling on the hardware.
 * The numerics of every kernel are the conformance suite's (conformance_cuda).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench.h"

#include "test_util.h"

static mb_context_t *g_ctx;
/* CUDA_MODULE_LOADING as the test was started (NULL: unset). */
static const char *g_loading_before;

static mb_backend_info_t cuda_info(void) {
  for (size_t i = 0; i < mb_backend_count(g_ctx); i++) {
    mb_backend_info_t b = MB_BACKEND_INFO_INIT;
    assert_int_equal(mb_backend_info(g_ctx, i, &b), MB_OK);
    if (b.name && !strcmp(b.name, "cuda")) return b;
  }
  fail_msg("the cuda module was not found in the module directory");
  mb_backend_info_t none = MB_BACKEND_INFO_INIT;
  return none;
}

/* ---- without a GPU ------------------------------------------------------- */

static void test_loads_and_explains(void **state) {
  (void)state;
  mb_backend_info_t b = cuda_info();
  printf("  cuda: loaded=%d devices=%u version=\"%s\" reason=\"%s\"\n",
         b.loaded, b.device_count, b.version, b.reason);
  assert_true(b.loaded);
  assert_non_null(strstr(b.version, "cuBLASLt"));
  if (b.device_count == 0) {
    assert_non_null(strstr(b.reason, "no CUDA device: "));
    /* No driver at all is said as such, not as an old one. */
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver)
      assert_non_null(strstr(b.reason, "no NVIDIA driver: libcuda.so.1"));
    else
      dlclose(driver);
  }
  /* Starting the backend asked the runtime for eager module loading
   * before its first call, unless the environment had chosen already. */
  const char *loading = getenv("CUDA_MODULE_LOADING");
  assert_non_null(loading);
  assert_string_equal(loading, g_loading_before ? g_loading_before : "EAGER");
}

/* cuBLASLt (hundreds of MB) is loaded only when there is a device to run
 * it on: a context on a machine without a GPU must not map it. */
static void test_cublaslt_only_with_a_device(void **state) {
  (void)state;
  const mb_backend_info_t b = cuda_info();
  FILE *maps = fopen("/proc/self/maps", "r");
  assert_non_null(maps);
  char line[1024];
  int mapped = 0;
  while (fgets(line, sizeof line, maps))
    if (strstr(line, "libcublasLt")) mapped = 1;
  fclose(maps);
  if (b.device_count == 0) {
    assert_false(mapped);
    assert_non_null(strstr(b.version, "cuBLASLt not loaded (no device)"));
  } else {
    assert_true(mapped);
    assert_null(strstr(b.version, "cuBLASLt not loaded"));
  }
}

/* cuSPARSELt (gemm_sparse24's vendor kernel) is optional and looked for
 * only with a device; the version says what loaded, or why not. */
static void test_cusparselt_said(void **state) {
  (void)state;
  const mb_backend_info_t b = cuda_info();
  if (b.device_count == 0)
    assert_non_null(strstr(b.version, "cuSPARSELt not loaded (no device)"));
  else
    assert_true(strstr(b.version, "cuSPARSELt 0.") ||
                strstr(b.version, "cuSPARSELt not loaded ("));
}

static int dtype_ok(const mb_op_t *op, mb_dtype_t d) {
  size_t n;
  const mb_dtype_t *list = mb_op_dtypes(op, &n);
  if (d == MB_DTYPE_NONE) return 1;
  for (size_t i = 0; i < n; i++)
    if (list[i] == d) return 1;
  return 0;
}

static void test_kernel_table_matches_the_catalogue(void **state) {
  (void)state;
  size_t ops = 0, with_kernel = 0;
  for (const mb_op_t *op = mb_op_next(NULL); op; op = mb_op_next(op)) {
    if (mb_op_is_composite(op)) continue; /* models run as graphs */
    ops++;
    int found = 0;
    for (size_t i = 0; i < mb_kernel_count(g_ctx); i++) {
      mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
      assert_int_equal(mb_kernel_info(g_ctx, i, &k), MB_OK);
      if (strcmp(k.backend, "cuda") || strcmp(k.op, mb_op_name(op))) continue;
      found = 1;
      if (!dtype_ok(op, k.dtype))
        fail_msg("cuda kernel %s/%s takes %s, which %s does not accept", k.op,
                 k.name, mb_dtype_name(k.dtype), k.op);
      if (strcmp(k.name, "cublaslt") && strcmp(k.name, "native") &&
          strcmp(k.name, "memcpy") && strcmp(k.name, "cusparselt") &&
          strcmp(k.name, "nccl"))
        fail_msg(
            "cuda kernel %s/%s: implementations are cublaslt, native, "
            "memcpy, cusparselt, nccl",
            k.op, k.name);
    }
    if (!found) printf("  no cuda kernel for op %s\n", mb_op_name(op));
    with_kernel += (size_t)found;
  }
  assert_int_equal(with_kernel, ops);
}

/* A request for the missing device is a skip with the reason, not a crash
 * and not an input error. */
static void test_no_device_is_a_skip(void **state) {
  (void)state;
  if (cuda_info().device_count) skip();
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = p.shape[1] = p.shape[2] = 64;
  p.dtype = MB_DTYPE_BF16;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "gemm";
  s.params = &p;
  s.backend = "cuda";
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_OK);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_non_null(strstr(info.reason, "no CUDA device"));
  mb_result_destroy(r);
}

/* ---- on a GPU ------------------------------------------------------------ */

static mb_result_t *run(const char *op, mb_op_params_t *p,
                        mb_cache_policy_t cache) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "cuda";
  s.cache = cache;
  s.min_time_s = 0.05;
  s.timeout_s = 5;
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  return r;
}

static void expect_ok(const mb_result_t *r, mb_result_info_t *info,
                      mb_stats_t *st) {
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, info);
  mb_result_stats(r, st);
  mb_result_correctness(r, &c);
  if (info->status != MB_RESULT_OK)
    fail_msg("%s: %s: %s", info->op, mb_result_status_name(info->status),
             info->reason);
  if (!c.pass)
    fail_msg("%s: wrong result (%.3g x tol)", info->op, c.max_err_ratio);
}

static const char *note_text(const mb_result_t *r, const char *key,
                             double *value) {
  for (size_t i = 0; i < mb_result_note_count(r); i++) {
    const char *k, *t;
    double v;
    mb_result_note(r, i, &k, &t, &v);
    if (!strcmp(k, key)) {
      if (value) *value = v;
      return t ? t : "";
    }
  }
  return NULL;
}

/* cuBLASLt bf16: autotuned (algorithm and workspace recorded), timed with
 * events, per-sample telemetry, a sane fraction of the peak. */
static void test_gemm_bf16(void **state) {
  (void)state;
  mb_op_params_t p = test_shape3(MB_DTYPE_BF16, 4096, 4096, 4096);
  mb_result_t *r = run("gemm", &p, MB_CACHE_COLD);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_stats_t st = MB_STATS_INIT;
  mb_derived_t d = MB_DERIVED_INIT;
  expect_ok(r, &info, &st);
  mb_result_derived(r, &d);
  assert_string_equal(info.impl, "cublaslt");
  assert_non_null(note_text(r, "algo_id", NULL));
  assert_non_null(note_text(r, "workspace_bytes", NULL));
  assert_non_null(strstr(info.timer, "CUDA events"));
  size_t nt;
  mb_result_telemetry(r, &nt);
  printf(
      "  bf16 4096^3: %.1f TFLOP/s, %.1f%% of %.0f TFLOP/s; %zu telemetry "
      "samples of %llu; throttled %llu\n",
      d.tflops, d.pct_peak, d.peak_flops * 1e-12, nt,
      (unsigned long long)st.count, (unsigned long long)st.throttled);
  /* NVML loaded (the backend's version says otherwise when not): one
   * telemetry record per sample, each with a readable SM clock. */
  if (!strstr(cuda_info().version, "NVML not loaded")) {
    const mb_telemetry_t *t = mb_result_telemetry(r, &nt);
    assert_int_equal(nt, st.count);
    for (size_t i = 0; i < nt; i++) assert_true(t[i].sm_clock_hz > 0);
  } else {
    assert_int_equal(nt, 0);
  }
  assert_true(d.pct_peak > 10 && d.pct_peak < 105);
  mb_result_destroy(r);
}

static void test_tf32_is_marked(void **state) {
  (void)state;
  mb_op_params_t p = test_shape3(MB_DTYPE_F32, 1024, 1024, 1024);
  p.flags = MB_PARAM_TF32;
  mb_result_t *r = run("gemm", &p, MB_CACHE_HOT);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_stats_t st = MB_STATS_INIT;
  expect_ok(r, &info, &st);
  const char *math = note_text(r, "math", NULL);
  assert_non_null(math);
  assert_non_null(strstr(math, "tf32"));
  mb_result_destroy(r);
}

/* fp8 with and without fast accumulation: cuBLASLt gets
 * CUBLASLT_MATMUL_DESC_FAST_ACCUM only when asked (the note says which),
 * and the fast result passes the check the flag widens. Below compute
 * capability 8.9 cuBLASLt has no fp8 GEMM: skipped. */
static void test_fp8_fast_accum(void **state) {
  (void)state;
  double tflops[2] = {0, 0};
  for (int fast = 0; fast < 2; fast++) {
    mb_op_params_t p = test_shape3(MB_DTYPE_F8E4M3, 4096, 4096, 4096);
    p.scale_a.mode = p.scale_b.mode = MB_SCALE_TENSOR;
    p.flags = fast ? MB_PARAM_FAST_ACCUM : 0;
    mb_result_t *r = run("gemm", &p, MB_CACHE_HOT);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_stats_t st = MB_STATS_INIT;
    mb_derived_t d = MB_DERIVED_INIT;
    mb_result_info(r, &info);
    if (info.status == MB_RESULT_SKIPPED &&
        strstr(info.reason, "compute capability")) {
      printf("  fp8: %s\n", info.reason);
      mb_result_destroy(r);
      skip();
    }
    expect_ok(r, &info, &st);
    assert_string_equal(info.impl, "cublaslt");
    double v = -1;
    assert_non_null(note_text(r, "fast_accum", &v));
    assert_true(v == fast);
    assert_non_null(strstr(mb_result_json(r), fast ? "\"fast_accum\":true"
                                                   : "\"fast_accum\":false"));
    mb_result_derived(r, &d);
    tflops[fast] = d.tflops;
    mb_result_destroy(r);
  }
  printf("  fp8 e4m3 4096^3: %.1f TFLOP/s, %.1f with fast accumulation\n",
         tflops[0], tflops[1]);
}

/* The flush is real: a copy that fits in L2 is slower cold than hot. */
static void test_cold_is_slower_than_hot(void **state) {
  (void)state;
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 1024, 1024); /* 4 MiB each way */
  mb_result_t *cold = run("copy", &p, MB_CACHE_COLD);
  mb_result_t *hot = run("copy", &p, MB_CACHE_HOT);
  mb_result_info_t i1 = MB_RESULT_INFO_INIT, i2 = MB_RESULT_INFO_INIT;
  mb_stats_t s1 = MB_STATS_INIT, s2 = MB_STATS_INIT;
  expect_ok(cold, &i1, &s1);
  expect_ok(hot, &i2, &s2);
  printf("  copy 4 MiB: cold %.2f us, hot %.2f us (batch %u)\n",
         s1.median * 1e-3, s2.median * 1e-3, s2.batch);
  assert_true(s1.median > 1.2 * s2.median);
  assert_true(s2.batch > 32); /* a short kernel: the graph path */
  mb_result_destroy(cold);
  mb_result_destroy(hot);
}

static void test_rotate_exceeds_l2(void **state) {
  (void)state;
  mb_op_params_t p = test_shape2(MB_DTYPE_BF16, 1024, 1024);
  mb_result_t *r = run("add", &p, MB_CACHE_ROTATE);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_stats_t st = MB_STATS_INIT;
  expect_ok(r, &info, &st);
  mb_device_t *dev;
  mb_device_info_t di = MB_DEVICE_INFO_INIT;
  assert_int_equal(mb_device_find(g_ctx, "cuda", 0, &dev), MB_OK);
  mb_device_info(dev, &di);
  printf("  rotate: %u copies, %.1f MiB footprint, L2 %.1f MiB\n",
         info.rotate_copies, info.footprint_bytes / 1048576.0,
         di.cache_bytes[2] / 1048576.0);
  assert_true(info.rotate_copies >= 2);
  assert_true(info.footprint_bytes > (double)di.cache_bytes[2]);
  assert_string_equal(info.warning, "");
  mb_result_destroy(r);
}

static void test_out_of_memory_is_a_failed_result(void **state) {
  (void)state;
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 1 << 20, 1 << 20); /* 4 TiB */
  mb_result_t *r = run("copy", &p, MB_CACHE_HOT);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  printf("  4 TiB copy: %s: %s\n", mb_result_status_name(info.status),
         info.reason);
  assert_int_equal(info.status, MB_RESULT_FAILED);
  assert_non_null(strstr(info.reason, "out of device memory"));
  mb_result_destroy(r);
}

static void test_device_info(void **state) {
  (void)state;
  mb_device_t *dev;
  mb_device_info_t di = MB_DEVICE_INFO_INIT;
  assert_int_equal(mb_device_find(g_ctx, "cuda", 0, &dev), MB_OK);
  mb_device_info(dev, &di);
  printf("  %s: %u SMs, %.0f MHz, %.1f GiB, L2 %.0f MiB, %.2f TB/s; %s\n",
         di.name, di.compute_units, di.clock_hz * 1e-6,
         di.memory_bytes / 1073741824.0, di.cache_bytes[2] / 1048576.0,
         di.mem_bw_bytes_per_s * 1e-12, di.peak_source);
  assert_int_equal(di.kind, MB_DEVICE_GPU);
  assert_true(di.compute_units > 0 && di.cache_bytes[2] > 0);
  assert_true(di.mem_bw_bytes_per_s > 0);
  assert_true(mb_device_peak_flops(dev, MB_DTYPE_BF16) > 0);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "static";
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  g_loading_before = getenv("CUDA_MODULE_LOADING");
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  o.backend_path = dir;
  if (dir && *dir) o.flags = MB_CONTEXT_NO_DEFAULT_BACKENDS;
  if (mb_context_create(&g_ctx, &o) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  int rc;
  if (!strcmp(mode, "static")) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_and_explains),
        cmocka_unit_test(test_cublaslt_only_with_a_device),
        cmocka_unit_test(test_cusparselt_said),
        cmocka_unit_test(test_kernel_table_matches_the_catalogue),
        cmocka_unit_test(test_no_device_is_a_skip),
    };
    rc = cmocka_run_group_tests_name("cuda static", tests, NULL, NULL);
  } else {
    mb_device_t *dev;
    if (mb_device_find(g_ctx, "cuda", 0, &dev) != MB_OK) {
      printf("SKIPPED: cuda device tests: %s\n", mb_error_last());
      mb_context_destroy(g_ctx);
      return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_info),
        cmocka_unit_test(test_gemm_bf16),
        cmocka_unit_test(test_tf32_is_marked),
        cmocka_unit_test(test_fp8_fast_accum),
        cmocka_unit_test(test_cold_is_slower_than_hot),
        cmocka_unit_test(test_rotate_exceeds_l2),
        cmocka_unit_test(test_out_of_memory_is_a_failed_result),
    };
    rc = cmocka_run_group_tests_name("cuda device", tests, NULL, NULL);
  }
  mb_context_destroy(g_ctx);
  return rc;
}
