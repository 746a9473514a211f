/* The HIP backend module through the public API.
 *
 *   test_hip_module static  — needs no GPU: the module loads on a machine
 *       without an AMD GPU, says why it has no device, names the vendor
 *       libraries it found or why not; its kernel table is consistent with
 *       the op catalogue; and its shared kernels are the very entries the
 *       CUDA module (and the emulated GPU) list — one source, every GPU
 *       backend.
 *   test_hip_module device  — needs an AMD GPU; exits 77 (ctest: skipped,
 *       with the reason printed) when there is none. Every GEMM
 *       implementation on bf16 (the library's types recorded), timing and
 *       cache policies, telemetry, device facts, out-of-memory.
 * The numerics of every kernel are the conformance suite's (conformance_hip).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench.h"
#include "test_util.h"

static mb_context_t *g_ctx;

static int backend_info(const char *name, mb_backend_info_t *out) {
  for (size_t i = 0; i < mb_backend_count(g_ctx); i++) {
    mb_backend_info_t b = MB_BACKEND_INFO_INIT;
    assert_int_equal(mb_backend_info(g_ctx, i, &b), MB_OK);
    if (b.name && !strcmp(b.name, name)) {
      *out = b;
      return 1;
    }
  }
  return 0;
}

static mb_backend_info_t hip_info(void) {
  mb_backend_info_t b = MB_BACKEND_INFO_INIT;
  if (!backend_info("hip", &b))
    fail_msg("the hip module was not found in the module directory");
  return b;
}

/* ---- without a GPU ------------------------------------------------------- */

static void test_loads_and_explains(void **state) {
  (void)state;
  mb_backend_info_t b = hip_info();
  printf("  hip: loaded=%d devices=%u\n  version=\"%s\"\n  reason=\"%s\"\n",
         b.loaded, b.device_count, b.version, b.reason);
  assert_true(b.loaded);
  assert_non_null(strstr(b.version, "HIP runtime "));
  /* Each vendor library: its version, or that it is not loaded. */
  assert_non_null(strstr(b.version, "hipBLASLt"));
  assert_non_null(strstr(b.version, "rocBLAS"));
  assert_non_null(strstr(b.version, "rocm-smi"));
  if (b.device_count == 0) assert_non_null(strstr(b.reason, "no HIP device: "));
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
  static const char *const impls[] = {"hipblaslt", "rocblas", "native",
                                      "memcpy", "rccl"};
  size_t ops = 0, with_kernel = 0, gemm_impls[3] = {0, 0, 0};
  for (const mb_op_t *op = mb_op_next(NULL); op; op = mb_op_next(op)) {
    if (mb_op_is_composite(op)) continue; /* models run as graphs */
    ops++;
    int found = 0;
    for (size_t i = 0; i < mb_kernel_count(g_ctx); i++) {
      mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
      assert_int_equal(mb_kernel_info(g_ctx, i, &k), MB_OK);
      if (strcmp(k.backend, "hip") || strcmp(k.op, mb_op_name(op))) continue;
      found = 1;
      if (!dtype_ok(op, k.dtype))
        fail_msg("hip kernel %s/%s takes %s, which %s does not accept", k.op,
                 k.name, mb_dtype_name(k.dtype), k.op);
      size_t j = 0;
      while (j < 5 && strcmp(k.name, impls[j])) j++;
      if (j == 5)
        fail_msg(
            "hip kernel %s/%s: implementations are hipblaslt, rocblas, "
            "native, memcpy, rccl",
            k.op, k.name);
      if (!strcmp(k.op, "gemm") && j < 3) gemm_impls[j]++;
    }
    if (!found) printf("  no hip kernel for op %s\n", mb_op_name(op));
    with_kernel += (size_t)found;
  }
  assert_int_equal(with_kernel, ops);
  /* The three GEMM lines a comparison needs are all in the table, whether
   * or not their libraries are installed here. */
  for (size_t j = 0; j < 3; j++) assert_true(gemm_impls[j] > 0);
}

/* The kernels a module lists that are not a vendor library's, as text
 * lines "op impl dtype->out", sorted; *n of them. */
static char **own_kernels(const char *backend, size_t *n) {
  static const char *const vendor[] = {"cublaslt", "cusparselt", "hipblaslt",
                                       "rocblas",  "nccl",       "rccl"};
  char **lines = NULL;
  *n = 0;
  for (size_t i = 0; i < mb_kernel_count(g_ctx); i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    assert_int_equal(mb_kernel_info(g_ctx, i, &k), MB_OK);
    if (strcmp(k.backend, backend) || k.user) continue;
    int is_vendor = 0;
    for (size_t j = 0; j < sizeof vendor / sizeof *vendor; j++)
      is_vendor |= !strcmp(k.name, vendor[j]);
    if (is_vendor) continue;
    lines = realloc(lines, (*n + 1) * sizeof *lines);
    assert_non_null(lines);
    char buf[160];
    snprintf(buf, sizeof buf, "%s %s %s->%s", k.op, k.name,
             mb_dtype_name(k.dtype), mb_dtype_name(k.dtype_out));
    lines[(*n)++] = strdup(buf);
  }
  return lines;
}

static void free_lines(char **lines, size_t n) {
  for (size_t i = 0; i < n; i++) free(lines[i]);
  free(lines);
}

/* The shared kernels are one source for every GPU backend: the hip module
 * lists exactly the entries the cuda module does (and the emulated GPU of
 * the tests, when its module is in the directory), in the same order. */
static void test_shared_kernels_are_the_same_source(void **state) {
  (void)state;
  size_t nh = 0;
  char **hip = own_kernels("hip", &nh);
  assert_true(nh > 10);
  static const char *const others[] = {"cuda", "gpuemu"};
  int compared = 0;
  for (size_t o = 0; o < 2; o++) {
    mb_backend_info_t b = MB_BACKEND_INFO_INIT;
    if (!backend_info(others[o], &b) || !b.loaded) {
      printf("  %s module not here: not compared\n", others[o]);
      continue;
    }
    size_t n = 0;
    char **lines = own_kernels(others[o], &n);
    if (n != nh)
      fail_msg("hip lists %zu shared kernels, %s %zu", nh, others[o], n);
    for (size_t i = 0; i < n; i++)
      if (strcmp(lines[i], hip[i]))
        fail_msg("shared kernel %zu: hip \"%s\", %s \"%s\"", i, hip[i],
                 others[o], lines[i]);
    printf("  hip and %s: the same %zu shared kernels\n", others[o], n);
    free_lines(lines, n);
    compared++;
  }
  free_lines(hip, nh);
  if (!compared) skip();
}

static mb_result_t *run_impl(const char *op, mb_op_params_t *p,
                             const char *impl, mb_cache_policy_t cache) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "hip";
  s.impl = impl;
  s.cache = cache;
  s.min_time_s = 0.05;
  s.timeout_s = 5;
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  return r;
}

/* A request for the missing device is a skip with the reason, not a crash
 * and not an input error — for every GEMM implementation by name too. */
static void test_no_device_is_a_skip(void **state) {
  (void)state;
  if (hip_info().device_count) skip();
  static const char *const impls[] = {NULL, "hipblaslt", "rocblas", "native"};
  for (size_t i = 0; i < 4; i++) {
    mb_op_params_t p = test_shape3(MB_DTYPE_BF16, 64, 64, 64);
    mb_result_t *r = run_impl("gemm", &p, impls[i], MB_CACHE_HOT);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_result_info(r, &info);
    printf("  --impl %s: %s: %s\n", impls[i] ? impls[i] : "(default)",
           mb_result_status_name(info.status), info.reason);
    assert_int_equal(info.status, MB_RESULT_SKIPPED);
    assert_non_null(strstr(info.reason, "no HIP device"));
    mb_result_destroy(r);
  }
}

/* ---- on a GPU ------------------------------------------------------------ */

static void expect_ok(const mb_result_t *r, mb_result_info_t *info,
                      mb_stats_t *st) {
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, info);
  mb_result_stats(r, st);
  mb_result_correctness(r, &c);
  if (info->status != MB_RESULT_OK)
    fail_msg("%s/%s: %s: %s", info->op, info->impl,
             mb_result_status_name(info->status), info->reason);
  if (!c.pass)
    fail_msg("%s/%s: wrong result (%.3g x tol)", info->op, info->impl,
             c.max_err_ratio);
}

static const char *note_text(const mb_result_t *r, const char *key) {
  for (size_t i = 0; i < mb_result_note_count(r); i++) {
    const char *k, *t;
    double v;
    mb_result_note(r, i, &k, &t, &v);
    if (!strcmp(k, key)) return t ? t : "";
  }
  return NULL;
}

/* bf16 on every GEMM implementation: the library's result is right and
 * says it was handed bf16; a missing library is a skip naming it. */
static void test_gemm_bf16_every_impl(void **state) {
  (void)state;
  const mb_backend_info_t b = hip_info();
  static const struct {
    const char *impl, *absent; /* version text when the library is missing */
  } impls[] = {{"hipblaslt", "hipBLASLt not loaded"},
               {"rocblas", "rocBLAS not loaded"},
               {"native", NULL}};
  for (size_t i = 0; i < 3; i++) {
    mb_op_params_t p = test_shape3(MB_DTYPE_BF16, 2048, 2048, 2048);
    mb_result_t *r = run_impl("gemm", &p, impls[i].impl, MB_CACHE_COLD);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_stats_t st = MB_STATS_INIT;
    mb_result_info(r, &info);
    if (impls[i].absent && strstr(b.version, impls[i].absent)) {
      printf("  %s: %s: %s\n", impls[i].impl,
             mb_result_status_name(info.status), info.reason);
      assert_int_equal(info.status, MB_RESULT_SKIPPED);
      assert_non_null(strstr(info.reason, "not loaded"));
      mb_result_destroy(r);
      continue;
    }
    expect_ok(r, &info, &st);
    assert_string_equal(info.impl, impls[i].impl);
    assert_non_null(strstr(info.timer, "HIP events"));
    mb_derived_t d = MB_DERIVED_INIT;
    mb_result_derived(r, &d);
    const char *a_type = note_text(r, "a_type");
    printf("  %s bf16 2048^3: %.1f TFLOP/s, %.1f%% of peak; a_type %s\n",
           impls[i].impl, d.tflops, d.pct_peak, a_type ? a_type : "-");
    if (impls[i].absent) {
      assert_non_null(a_type);
      assert_non_null(strstr(a_type, "16BF") ? a_type : strstr(a_type, "bf16"));
    }
    assert_true(d.pct_peak > 0 && d.pct_peak < 105);
    mb_result_destroy(r);
  }
}

/* The flush is real: a copy that fits in the last-level cache is slower
 * cold than hot. */
static void test_cold_is_slower_than_hot(void **state) {
  (void)state;
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 512, 1024); /* 2 MiB each way */
  mb_result_t *cold = run_impl("copy", &p, NULL, MB_CACHE_COLD);
  mb_result_t *hot = run_impl("copy", &p, NULL, MB_CACHE_HOT);
  mb_result_info_t i1 = MB_RESULT_INFO_INIT, i2 = MB_RESULT_INFO_INIT;
  mb_stats_t s1 = MB_STATS_INIT, s2 = MB_STATS_INIT;
  expect_ok(cold, &i1, &s1);
  expect_ok(hot, &i2, &s2);
  printf("  copy 2 MiB: cold %.2f us, hot %.2f us (batch %u)\n",
         s1.median * 1e-3, s2.median * 1e-3, s2.batch);
  assert_true(s1.median > 1.1 * s2.median);
  assert_true(s2.batch > 32); /* a short kernel: the graph path */
  mb_result_destroy(cold);
  mb_result_destroy(hot);
}

static void test_rotate_exceeds_the_cache(void **state) {
  (void)state;
  mb_op_params_t p = test_shape2(MB_DTYPE_BF16, 1024, 1024);
  mb_result_t *r = run_impl("add", &p, NULL, MB_CACHE_ROTATE);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_stats_t st = MB_STATS_INIT;
  expect_ok(r, &info, &st);
  mb_device_t *dev;
  mb_device_info_t di = MB_DEVICE_INFO_INIT;
  assert_int_equal(mb_device_find(g_ctx, "hip", 0, &dev), MB_OK);
  mb_device_info(dev, &di);
  printf("  rotate: %u copies, %.1f MiB footprint, cache %.1f MiB\n",
         info.rotate_copies, info.footprint_bytes / 1048576.0,
         di.cache_bytes[2] / 1048576.0);
  assert_true(info.rotate_copies >= 2);
  assert_true(info.footprint_bytes > (double)di.cache_bytes[2]);
  mb_result_destroy(r);
}

static void test_out_of_memory_is_a_failed_result(void **state) {
  (void)state;
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 1 << 20, 1 << 20); /* 4 TiB */
  mb_result_t *r = run_impl("copy", &p, NULL, MB_CACHE_HOT);
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
  assert_int_equal(mb_device_find(g_ctx, "hip", 0, &dev), MB_OK);
  mb_device_info(dev, &di);
  printf("  %s: %u CUs, %.0f MHz, %.1f GiB, cache %.0f MiB, %.2f TB/s; %s\n",
         di.name, di.compute_units, di.clock_hz * 1e-6,
         di.memory_bytes / 1073741824.0, di.cache_bytes[2] / 1048576.0,
         di.mem_bw_bytes_per_s * 1e-12, di.peak_source);
  assert_int_equal(di.kind, MB_DEVICE_GPU);
  assert_true(di.compute_units > 0 && di.cache_bytes[2] > 0);
  assert_true(di.mem_bw_bytes_per_s > 0);
  assert_true(mb_device_peak_flops(dev, MB_DTYPE_BF16) > 0);
  assert_true(!strncmp(di.peak_source, "table: ", 7) ||
              !strncmp(di.peak_source, "estimated ", 10));
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "static";
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  /* The emulated GPU's module lives in a fixture directory of its own. */
  const char *emu = getenv("MB_TEST_GPUEMU_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", emu ? ":" : "",
           emu ? emu : "");
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  o.backend_path = path;
  if (dir && *dir) o.flags = MB_CONTEXT_NO_DEFAULT_BACKENDS;
  if (mb_context_create(&g_ctx, &o) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  int rc;
  if (!strcmp(mode, "static")) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_and_explains),
        cmocka_unit_test(test_kernel_table_matches_the_catalogue),
        cmocka_unit_test(test_shared_kernels_are_the_same_source),
        cmocka_unit_test(test_no_device_is_a_skip),
    };
    rc = cmocka_run_group_tests_name("hip static", tests, NULL, NULL);
  } else {
    mb_device_t *dev;
    if (mb_device_find(g_ctx, "hip", 0, &dev) != MB_OK) {
      printf("SKIPPED: hip device tests: %s\n", mb_error_last());
      mb_context_destroy(g_ctx);
      return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_info),
        cmocka_unit_test(test_gemm_bf16_every_impl),
        cmocka_unit_test(test_cold_is_slower_than_hot),
        cmocka_unit_test(test_rotate_exceeds_the_cache),
        cmocka_unit_test(test_out_of_memory_is_a_failed_result),
    };
    rc = cmocka_run_group_tests_name("hip device", tests, NULL, NULL);
  }
  mb_context_destroy(g_ctx);
  return rc;
}
