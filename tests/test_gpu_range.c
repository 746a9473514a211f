/* The GPU backends' profiler ranges (backends/gpu/host/gpu_range*.c) without
 * a GPU or a profiler: each provider against a fake tool that records every
 * call in a file (MB_FAKE_RANGES_LOG), then the same through the emulated
 * GPU's vtable, whose gpuemu module pushes NVTX ranges as the CUDA module
 * does and gpuemu64 roctx ranges as the HIP module does.
 *   roctx: a fake libroctx64.so.4 (tests/fixtures/fake_roctx.c), named by
 *          MB_ROCTX_LIBRARY or found by its soname on LD_LIBRARY_PATH (the
 *          test's environment puts its directory there); a library that is
 *          not there means no ranges, said once, never an error.
 *   NVTX:  NVTX 3 itself (header-only) loading a fake tool
 *          (tests/fixtures/fake_nvtx.c) from NVTX_INJECTION64_PATH, which
 *          the test's environment sets: what Nsight Systems does. Built
 *          where NVTX's headers are (MB_TEST_NVTX). */
#include <unistd.h>

#include "gpu_range.h"
#include "internal.h"
#include "test_util.h"

#ifndef FAKE_ROCTX
#error "FAKE_ROCTX: the fake libroctx64's file (the build defines it)"
#endif

/* A fresh, empty log file for the fakes, named in MB_FAKE_RANGES_LOG. */
static void log_start(char *path, size_t cap) {
  snprintf(path, cap, "/tmp/mb_ranges_XXXXXX");
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  setenv("MB_FAKE_RANGES_LOG", path, 1);
}

/* The log's whole text (static storage: one test at a time), the file
 * removed. */
static const char *log_end(const char *path) {
  static char text[4096];
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  const size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  remove(path);
  unsetenv("MB_FAKE_RANGES_LOG");
  return text;
}

/* A benchmark's ranges as the library pushes them: the result around its
 * warm-up and each sample. */
static void push_benchmark(const mb_gpuh_range_api_t *api, void *r) {
  api->push(r, "gemm/f32/64x64x64");
  api->push(r, "gemm/f32/64x64x64 warm-up");
  api->pop(r);
  api->push(r, "gemm/f32/64x64x64 sample 0");
  api->pop(r);
  api->push(r, "gemm/f32/64x64x64 sample 1");
  api->pop(r);
  api->pop(r);
}

static const char k_roctx_benchmark[] =
    "push gemm/f32/64x64x64\n"
    "push gemm/f32/64x64x64 warm-up\n"
    "pop\n"
    "push gemm/f32/64x64x64 sample 0\n"
    "pop\n"
    "push gemm/f32/64x64x64 sample 1\n"
    "pop\n"
    "pop\n";

/* ---- roctx ---------------------------------------------------------------
 */

static void roctx_ranges_from(const char *env_value, const char *loaded) {
  char log[64], why[700] = "";
  if (env_value)
    setenv(MB_GPUH_ROCTX_ENV, env_value, 1);
  else
    unsetenv(MB_GPUH_ROCTX_ENV);
  log_start(log, sizeof log);
  const mb_gpuh_range_api_t *api = &mb__gpuh_roctx_ranges;
  void *r = api->open(why, sizeof why);
  assert_non_null(r);
  assert_non_null(strstr(why, "roctx ranges through"));
  assert_non_null(strstr(why, loaded));
  push_benchmark(api, r);
  api->close(r);
  assert_string_equal(log_end(log), k_roctx_benchmark);
  unsetenv(MB_GPUH_ROCTX_ENV);
}

/* MB_ROCTX_LIBRARY names the file. */
static void test_roctx_named(void **state) {
  (void)state;
  roctx_ranges_from(FAKE_ROCTX, FAKE_ROCTX);
}

/* Unset, the sonames: libroctx64.so.4 (the fake's, on LD_LIBRARY_PATH). */
static void test_roctx_soname(void **state) {
  (void)state;
  roctx_ranges_from(NULL, "libroctx64.so.4");
}

/* A library that does not load: no ranges, and why, naming the file and
 * the variable. */
static void test_roctx_missing(void **state) {
  (void)state;
  char why[700] = "";
  setenv(MB_GPUH_ROCTX_ENV, "/nonexistent/libroctx64.so.4", 1);
  assert_null(mb__gpuh_roctx_ranges.open(why, sizeof why));
  unsetenv(MB_GPUH_ROCTX_ENV);
  assert_non_null(strstr(why, "no roctx ranges"));
  assert_non_null(strstr(why, "/nonexistent/libroctx64.so.4"));
  assert_non_null(strstr(why, MB_GPUH_ROCTX_ENV));
}

/* A library without roctx's entry points is refused, naming the first one
 * missing (the fake NVTX tool has neither). */
#ifdef FAKE_NVTX
static void test_roctx_wrong_library(void **state) {
  (void)state;
  char why[700] = "";
  setenv(MB_GPUH_ROCTX_ENV, FAKE_NVTX, 1);
  assert_null(mb__gpuh_roctx_ranges.open(why, sizeof why));
  unsetenv(MB_GPUH_ROCTX_ENV);
  assert_non_null(strstr(why, "no entry point roctxRangePushA"));
}
#endif

/* ---- NVTX ----------------------------------------------------------------
 */

#ifdef MB_TEST_NVTX
static const char k_nvtx_benchmark[] =
    "push libmicrobench gemm/f32/64x64x64\n"
    "push libmicrobench gemm/f32/64x64x64 warm-up\n"
    "pop libmicrobench\n"
    "push libmicrobench gemm/f32/64x64x64 sample 0\n"
    "pop libmicrobench\n"
    "push libmicrobench gemm/f32/64x64x64 sample 1\n"
    "pop libmicrobench\n"
    "pop libmicrobench\n";

/* NVTX loads the tool at its first call (open's domain), once per copy of
 * NVTX (this executable's here); the ranges go to our domain, in order,
 * ASCII, and close destroys it. */
static void test_nvtx_through_a_tool(void **state) {
  (void)state;
  char log[64], why[700] = "", want[2048];
  assert_non_null(getenv("NVTX_INJECTION64_PATH"));
  log_start(log, sizeof log);
  const mb_gpuh_range_api_t *api = &mb__gpuh_nvtx_ranges;
  void *r = api->open(why, sizeof why);
  assert_non_null(r);
  assert_string_equal(why, "NVTX ranges in domain libmicrobench");
  push_benchmark(api, r);
  api->close(r);
  snprintf(want, sizeof want, "domain libmicrobench\n%sdestroy libmicrobench\n",
           k_nvtx_benchmark);
  assert_string_equal(log_end(log), want);
}
#endif

/* ---- through the emulated GPU's vtable -----------------------------------
 */

/* The backend of `module`'s device 0 (its own fixture directory). */
static mb_context_t *emu_context(const char *module, mb__backend_t **b) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", test_env_dir("MB_TEST_FIXTURE_DIR"),
           module);
  mb_context_t *ctx = test_context(dir);
  assert_true(mb_device_count(ctx) >= 1);
  mb_device_t *d = mb_device_at(ctx, 0);
  *b = d->backend;
  assert_non_null((*b)->vt->range_push);
  assert_non_null((*b)->vt->range_pop);
  return ctx;
}

static void vt_benchmark(const mb__backend_t *b) {
  b->vt->range_push(b->state, 0, "gemm/f32/64x64x64");
  b->vt->range_push(b->state, 0, "gemm/f32/64x64x64 sample 0");
  b->vt->range_pop(b->state, 0);
  b->vt->range_pop(b->state, 0);
}

/* gpuemu64: roctx, as the HIP module; the library loads when the backend
 * starts (with its devices) and goes with it. */
static void test_emu_roctx(void **state) {
  (void)state;
  char log[64];
  setenv(MB_GPUH_ROCTX_ENV, FAKE_ROCTX, 1);
  log_start(log, sizeof log);
  mb__backend_t *b = NULL;
  mb_context_t *ctx = emu_context("gpuemu64", &b);
  vt_benchmark(b);
  mb_context_destroy(ctx);
  unsetenv(MB_GPUH_ROCTX_ENV);
  assert_string_equal(log_end(log),
                      "push gemm/f32/64x64x64\n"
                      "push gemm/f32/64x64x64 sample 0\n"
                      "pop\n"
                      "pop\n");
}

/* Without a roctx library the hooks do nothing, and the backend runs. */
static void test_emu_roctx_absent(void **state) {
  (void)state;
  char log[64];
  setenv(MB_GPUH_ROCTX_ENV, "/nonexistent/libroctx64.so.4", 1);
  log_start(log, sizeof log);
  mb__backend_t *b = NULL;
  mb_context_t *ctx = emu_context("gpuemu64", &b);
  vt_benchmark(b);
  mb_context_destroy(ctx);
  unsetenv(MB_GPUH_ROCTX_ENV);
  assert_string_equal(log_end(log), "");
}

#ifdef MB_TEST_NVTX
/* gpuemu: NVTX, as the CUDA module; the module's own copy of NVTX loads
 * the tool when the backend creates its domain. */
static void test_emu_nvtx(void **state) {
  (void)state;
  char log[64];
  log_start(log, sizeof log);
  mb__backend_t *b = NULL;
  mb_context_t *ctx = emu_context("gpuemu", &b);
  vt_benchmark(b);
  mb_context_destroy(ctx);
  assert_string_equal(log_end(log),
                      "domain libmicrobench\n"
                      "push libmicrobench gemm/f32/64x64x64\n"
                      "push libmicrobench gemm/f32/64x64x64 sample 0\n"
                      "pop libmicrobench\n"
                      "pop libmicrobench\n"
                      "destroy libmicrobench\n");
}
#endif

/* ---- end to end: mbench run ------------------------------------------------
 * The library's side (lib/measure/runner_trace.c) around a real run: the
 * benchmark's range named by its result id, holding its warm-up's and each
 * sample's, in order and balanced. Other benchmarks of the run (the copy
 * bandwidth the roofline measures once per cache directory) may have
 * ranges of their own around it; only this one's are checked. */
#ifdef MBENCH

/* The log's lines from "<prefix><id>" to the pop that closes it, each
 * without the prefix; fails unless it is there and balanced. */
static void expect_benchmark_ranges(const char *log, const char *push,
                                    const char *pop, const char *id,
                                    uint32_t samples) {
  char want[4096];
  size_t n = (size_t)snprintf(want, sizeof want, "%s%s\n%s%s warm-up\n%s\n",
                              push, id, push, id, pop);
  for (uint32_t i = 0; i < samples; i++)
    n += (size_t)snprintf(want + n, sizeof want - n, "%s%s sample %u\n%s\n",
                          push, id, i, pop);
  snprintf(want + n, sizeof want - n, "%s\n", pop);
  if (!strstr(log, want)) fail_msg("no ranges\n%s\nin the log\n%s", want, log);
}

static void mbench_run_ranges(const char *module, const char *push,
                              const char *pop) {
  char log[64], out[64], cmd[4096];
  log_start(log, sizeof log);
  snprintf(out, sizeof out, "/tmp/mb_ranges_out_XXXXXX");
  const int fd = mkstemp(out);
  assert_true(fd >= 0);
  close(fd);
  snprintf(cmd, sizeof cmd,
           "MB_BACKEND_PATH='%s/%s' '%s' run --backend %s --op gemm "
           "--shape 16x16x16 --samples 3 -q --format json -o '%s' >/dev/null",
           test_env_dir("MB_TEST_FIXTURE_DIR"), module, MBENCH, module, out);
  assert_int_equal(system(cmd), 0);
  mb_results_t *set = NULL;
  assert_int_equal(mb_results_load(out, &set), MB_OK);
  remove(out);
  assert_int_equal(mb_results_count(set), 1);
  const char *text = log_end(log);
  expect_benchmark_ranges(text, push, pop, mb_results_id(set, 0), 3);
  mb_results_destroy(set);
}

#ifdef MB_TEST_NVTX
/* gpuemu: NVTX, through the fake tool NVTX_INJECTION64_PATH names. */
static void test_mbench_run_nvtx(void **state) {
  (void)state;
  mbench_run_ranges("gpuemu", "push libmicrobench ", "pop libmicrobench");
}
#endif

/* gpuemu64: roctx, through the fake library MB_ROCTX_LIBRARY names. */
static void test_mbench_run_roctx(void **state) {
  (void)state;
  setenv(MB_GPUH_ROCTX_ENV, FAKE_ROCTX, 1);
  mbench_run_ranges("gpuemu64", "push ", "pop");
  unsetenv(MB_GPUH_ROCTX_ENV);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roctx_named),
    cmocka_unit_test(test_roctx_soname),
    cmocka_unit_test(test_roctx_missing),
#ifdef FAKE_NVTX
    cmocka_unit_test(test_roctx_wrong_library),
#endif
#ifdef MB_TEST_NVTX
    cmocka_unit_test(test_nvtx_through_a_tool),
    cmocka_unit_test(test_emu_nvtx),
#endif
    cmocka_unit_test(test_emu_roctx),
    cmocka_unit_test(test_emu_roctx_absent),
#if defined(MBENCH) && defined(MB_TEST_NVTX)
    cmocka_unit_test(test_mbench_run_nvtx),
#endif
#ifdef MBENCH
    cmocka_unit_test(test_mbench_run_roctx),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
