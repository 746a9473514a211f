/* The GPU timing method (backends/gpu/host/gpu_host_timer.c) as it runs on
 * every GPU backend, executed here on the emulated GPU (tests/gpu_emu),
 * whose runtime models what the method must cope with: a stream's launch
 * queue of finite depth, a blocking kernel that times out when the host
 * fills that queue, graphs that cost an upload on first launch, stream
 * capture that fails (MB_GPUEMU_CAPTURE), and a device clock that can be
 * made exact (MB_GPUEMU_KERNEL_NS: every kernel takes that long).
 *
 * Each test names the defect it would catch: the cap counting runs instead
 * of launches (a multi-launch run stalls the queue), a timed-out sample
 * kept, a capture failure failing the benchmark, a graph rebuilt or not
 * uploaded per sample, chunks or batches summed wrong. */
#include <math.h>

#include "test_util.h"

/* The launches the GPU host layer lets wait behind its blocking kernel
 * (MB_GPUH_MAX_QUEUED). */
#define QUEUE_CAP 32

/* The emulated GPU's module directory, with `var` set while its backend
 * starts (the emulator reads it when the device's stream is created;
 * counting the devices starts the backends). */
static mb_context_t *emu_context(const char *var, const char *value) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/gpuemu", test_env_dir("MB_TEST_FIXTURE_DIR"));
  if (var) setenv(var, value, 1);
  mb_context_t *ctx = test_context(dir);
  assert_int_equal(mb_device_count(ctx), 1);
  if (var) unsetenv(var);
  return ctx;
}

/* Exactly `samples` samples of `batch` runs (0: automatic). */
static mb_result_t *run(mb_context_t *ctx, const char *op,
                        const mb_op_params_t *p, mb_cache_policy_t cache,
                        uint32_t samples, uint32_t batch) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "gpuemu";
  s.cache = cache;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = samples;
  s.batch = batch;
  s.warmup_s = 0;
  s.warmup_runs = 1;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(ctx, &s, &r), MB_OK);
  assert_non_null(r);
  return r;
}

static void expect_ok(const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  if (info.status != MB_RESULT_OK)
    fail_msg("%s: %s", mb_result_status_name(info.status), info.reason);
  if (*info.warning) fail_msg("warning: %s", info.warning);
}

/* The note `key` (NULL when absent); *value its number. */
static const char *note(const mb_result_t *r, const char *key, double *value) {
  for (size_t i = 0; i < mb_result_note_count(r); i++) {
    const char *k, *text;
    double v;
    assert_int_equal(mb_result_note(r, i, &k, &text, &v), MB_OK);
    if (strcmp(k, key)) continue;
    if (value) *value = v;
    return text ? text : "";
  }
  return NULL;
}

/* A transformer block quantizing its activations (int8wo on the emulated
 * GPU: 18 launches a run). 32 runs a sample fit a cap that counts runs,
 * and queue 576 launches behind the blocking kernel; the emulated queue
 * holds 64 entries here, so a cap on runs overflows it, the blocking kernel
 * times out and every sample is dropped. Counted in launches, the batch
 * goes into one graph instead. */
static void test_multi_launch_runs_do_not_stall(void **state) {
  (void)state;
  /* Kernels of 1 us on the device clock: a sample of 32 runs is far below
   * the 0.25 s past which samples are timed in parts (under ASan the real
   * runs took long enough to split it into graphs of 2 runs). */
  setenv("MB_GPUEMU_KERNEL_NS", "1000", 1);
  mb_context_t *ctx = emu_context("MB_GPUEMU_QUEUE_DEPTH", "64");
  unsetenv("MB_GPUEMU_KERNEL_NS");
  const char *op = NULL;
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  assert_int_equal(mb_model_resolve("transformer_block", NULL, &op, &p), MB_OK);
  p.ndim = 3;
  p.shape[0] = 2, p.shape[1] = 64, p.shape[2] = 1;
  p.recipe = MB_RECIPE_INT8WO;
  mb_result_t *r = run(ctx, op, &p, MB_CACHE_HOT, 3, 32);
  expect_ok(r);
  double launches = 0;
  assert_non_null(note(r, "launches_per_run", &launches));
  assert_true(launches > 1 && 32 * launches > QUEUE_CAP);
  assert_contains(note(r, "timing", NULL), "graph of 32 runs");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* A queue too short for even the cap's 32 launches: the blocking kernel
 * times out in every sample, each is dropped, never kept, and the benchmark
 * fails saying why rather than report the timeout as a figure. */
static void test_timed_out_samples_are_dropped(void **state) {
  (void)state;
  mb_context_t *ctx = emu_context("MB_GPUEMU_QUEUE_DEPTH", "4");
  const mb_op_params_t p = test_shape2(MB_DTYPE_F32, 8, 64);
  mb_result_t *r = run(ctx, "add", &p, MB_CACHE_HOT, 5, 16);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_FAILED);
  assert_contains(info.reason, "samples dropped");
  assert_contains(info.reason, "blocking kernel timed out");
  size_t n = 99;
  mb_result_samples(r, &n);
  assert_int_equal(n, 0);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* Work the runtime refuses to capture: the batch is timed in chunks that
 * fit behind the blocking kernel, and the result says so. */
static void test_capture_failure_falls_back_to_chunks(void **state) {
  (void)state;
  mb_context_t *ctx = emu_context("MB_GPUEMU_CAPTURE", "fail");
  const mb_op_params_t p = test_shape2(MB_DTYPE_F32, 8, 64);
  mb_result_t *r = run(ctx, "add", &p, MB_CACHE_HOT, 5, 40);
  expect_ok(r);
  assert_contains(note(r, "timing", NULL), "chunks of 1 run");
  assert_contains(note(r, "launches_per_run", NULL), "unknown");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* One graph for the samples' batch, built before them and reused: the
 * warm-up's single runs fit the cap, so exactly one graph is built. */
static void test_graph_built_once(void **state) {
  (void)state;
  mb_context_t *ctx = emu_context(NULL, NULL);
  const mb_op_params_t p = test_shape2(MB_DTYPE_BF16, 8, 64);
  mb_result_t *r = run(ctx, "add", &p, MB_CACHE_HOT, 20, 64);
  expect_ok(r);
  double graphs = 0;
  assert_non_null(note(r, "graphs_instantiated", &graphs));
  assert_true(graphs == 1.0);
  assert_contains(note(r, "timing", NULL), "graph of 64 runs");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* Every sample of `r` is `want` ns a run, exactly. */
static void expect_samples(const mb_result_t *r, double want) {
  size_t n = 0;
  const double *v = mb_result_samples(r, &n);
  assert_true(n > 0);
  for (size_t i = 0; i < n; i++)
    if (fabs(v[i] - want) > 1e-6 * want)
      fail_msg("sample %zu is %.9g ns a run, want %.9g", i, v[i], want);
}

/* With every kernel taking exactly 1 us of device time, a run's time is
 * its launches x 1 us whichever way it was timed: plain launches, one
 * graph (uploaded before the samples: a first launch would pay the upload
 * inside a sample), or chunks whose times are summed. The blocking kernel
 * and the host's enqueueing are never in it. */
static void test_every_path_times_the_runs_exactly(void **state) {
  (void)state;
  static const struct {
    const char *capture;
    uint32_t batch;
    const char *method;
  } k_paths[] = {{NULL, 8, "plain launches"},
                 {NULL, 40, "graph of 40 runs"},
                 {"fail", 40, "chunks of 1 run"}};
  for (size_t i = 0; i < sizeof k_paths / sizeof k_paths[0]; i++) {
    if (k_paths[i].capture) setenv("MB_GPUEMU_CAPTURE", k_paths[i].capture, 1);
    mb_context_t *ctx = emu_context("MB_GPUEMU_KERNEL_NS", "1000");
    unsetenv("MB_GPUEMU_CAPTURE");
    /* add: one launch a run; gemm_fp8_rowwise: three (quantize A,
     * quantize B, the GEMM). */
    const mb_op_params_t add = test_shape2(MB_DTYPE_F32, 8, 64);
    const mb_op_params_t qi = test_shape3(MB_DTYPE_NONE, 16, 32, 16);
    const struct {
      const char *op;
      const mb_op_params_t *p;
    } ops[] = {{"add", &add}, {"gemm_fp8_rowwise", &qi}};
    for (size_t o = 0; o < 2; o++) {
      mb_result_t *r =
          run(ctx, ops[o].op, ops[o].p, MB_CACHE_HOT, 5, k_paths[i].batch);
      expect_ok(r);
      assert_contains(note(r, "timing", NULL), k_paths[i].method);
      double launches = 1;
      if (!k_paths[i].capture)
        assert_non_null(note(r, "launches_per_run", &launches));
      if (o == 1 && !k_paths[i].capture) assert_true(launches == 3);
      if (!k_paths[i].capture || o == 0) expect_samples(r, 1000.0 * launches);
      mb_result_destroy(r);
    }
    mb_context_destroy(ctx);
  }
}

/* The bandwidth roof is the fastest of the backend's copy kernels: the
 * emulated GPU has its own copy kernel (fibers) and the runtime's memcpy,
 * far faster here, so a roof taken from the first kernel alone would be
 * the slow one (on an H200, memcpy beat our copy by 10 %). */
static void test_copy_roof_is_the_fastest_copy(void **state) {
  (void)state;
  mb_context_t *ctx = emu_context(NULL, NULL);
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "gpuemu", 0, &dev), MB_OK);
  mb_calibration_t cal = MB_CALIBRATION_INIT;
  assert_int_equal(mb_device_calibration(dev, &cal), MB_OK);
  assert_true(cal.copy_gbps > 0);
  if (!strstr(cal.copy_note, "each copy kernel: memcpy"))
    fail_msg("the roof is not memcpy's: %s", cal.copy_note);
  mb_context_destroy(ctx);
}

/* A sample expected to outlast 0.25 s is timed in parts, summed, so that
 * Ctrl-C is honoured within it: 600 runs of 1 ms each are three parts
 * (250, 250, 100), and every sample is still exactly 600 x 1 ms. */
static void test_long_samples_are_timed_in_parts(void **state) {
  (void)state;
  mb_context_t *ctx = emu_context("MB_GPUEMU_KERNEL_NS", "1000000");
  const mb_op_params_t add = test_shape2(MB_DTYPE_F32, 8, 64);
  mb_result_t *r = run(ctx, "add", &add, MB_CACHE_HOT, 3, 600);
  expect_ok(r);
  double part = 0;
  const char *text = note(r, "sample_parts", &part);
  if (!text) fail_msg("no sample_parts note");
  assert_true(part == 250);
  assert_contains(text, "600 runs are timed in parts of at most 250 runs");
  expect_samples(r, 1e6);
  mb_result_destroy(r);
  /* A short sample is timed whole. */
  r = run(ctx, "add", &add, MB_CACHE_HOT, 3, 100);
  expect_ok(r);
  assert_null(note(r, "sample_parts", NULL));
  expect_samples(r, 1e6);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* The read-only flush runs on a GPU backend and is recorded; a backend
 * without one (a fixture that only writes) is skipped saying so, not
 * flushed some other way. */
static void test_read_flush(void **state) {
  (void)state;
  mb_context_t *ctx = emu_context(NULL, NULL);
  const mb_op_params_t p = test_shape2(MB_DTYPE_F32, 8, 64);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "copy";
  s.params = &p;
  s.backend = "gpuemu";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 3;
  s.flags = MB_BENCH_FLUSH_READ;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(ctx, &s, &r), MB_OK);
  expect_ok(r);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.flush, MB_FLUSH_READ);
  assert_contains(mb_result_json(r), "\"flush\":\"read\"");
  mb_result_destroy(r);
  mb_context_destroy(ctx);

  char dir[1024];
  snprintf(dir, sizeof dir, "%s/working", test_env_dir("MB_TEST_FIXTURE_DIR"));
  ctx = test_context(dir);
  s.backend = "wrong";
  s.impl = "ok";
  assert_int_equal(mb_bench_run(ctx, &s, &r), MB_OK);
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_contains(info.reason, "no read-only cache flush");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_multi_launch_runs_do_not_stall),
      cmocka_unit_test(test_timed_out_samples_are_dropped),
      cmocka_unit_test(test_capture_failure_falls_back_to_chunks),
      cmocka_unit_test(test_graph_built_once),
      cmocka_unit_test(test_every_path_times_the_runs_exactly),
      cmocka_unit_test(test_read_flush),
      cmocka_unit_test(test_copy_roof_is_the_fastest_copy),
      cmocka_unit_test(test_long_samples_are_timed_in_parts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
