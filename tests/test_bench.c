/* The runner: criteria, batching, cache policy, correctness wiring, user
 * kernels, and every way a run can fail without losing the result. */
#include <math.h>

#include "test_util.h"

static mb_context_t *g_ctx;

static int setup(void **state) {
  (void)state;
  char path[8192];
  snprintf(path, sizeof path, "%s:%s/working",
           test_env_dir("MB_TEST_MODULE_DIR"),
           test_env_dir("MB_TEST_FIXTURE_DIR"));
  g_ctx = test_context(path);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static mb_op_params_t shape3(int64_t m, int64_t k, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = m;
  p.shape[1] = k;
  p.shape[2] = n;
  return p;
}

static mb_bench_spec_t quick_spec(const char *op, const mb_op_params_t *p) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "cpu";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 5;
  s.warmup_s = 0;
  return s;
}

typedef struct outcome {
  mb_result_info_t info;
  mb_correctness_t corr;
  mb_stats_t stats;
  mb_derived_t derived;
  size_t num_samples;
} outcome_t;

static outcome_t run_ok(const mb_bench_spec_t *s) {
  mb_result_t *r = NULL;
  outcome_t o = {MB_RESULT_INFO_INIT, MB_CORRECTNESS_INIT, MB_STATS_INIT,
                 MB_DERIVED_INIT, 0};
  if (mb_bench_run(g_ctx, s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  mb_result_info(r, &o.info);
  mb_result_correctness(r, &o.corr);
  mb_result_stats(r, &o.stats);
  mb_result_derived(r, &o.derived);
  const double *samples = mb_result_samples(r, &o.num_samples);
  for (size_t i = 0; i < o.num_samples; i++) assert_true(samples[i] > 0);
  /* Strings are the result's: copy what tests compare after destroy. */
  static char reason[1024], impl[64];
  snprintf(reason, sizeof reason, "%s", o.info.reason);
  snprintf(impl, sizeof impl, "%s", o.info.impl);
  o.info.reason = reason;
  o.info.impl = impl;
  o.info.op = o.info.backend = o.info.device = NULL;
  mb_result_destroy(r);
  return o;
}

static void test_fixed_count(void **state) {
  (void)state;
  mb_op_params_t p = shape3(64, 64, 64);
  mb_bench_spec_t s = quick_spec("gemm", &p);
  outcome_t o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_OK);
  assert_true(o.corr.checked && o.corr.pass);
  assert_int_equal(o.stats.count, 5);
  assert_int_equal(o.num_samples, 5);
  assert_string_equal(o.stats.stop_reason, "fixed");
  assert_int_equal(o.stats.batch, 1); /* cold: one run per sample */
  assert_true(o.stats.min <= o.stats.median && o.stats.median <= o.stats.max);
  assert_true(o.derived.flop == 2.0 * 64 * 64 * 64);
  assert_true(fabs(o.derived.tflops - o.derived.flop / o.stats.median / 1e3) <
              1e-12 * o.derived.tflops + 1e-15);
}

/* A single-threaded 16x16 add: the backend's own kernels use OpenMP, and on
 * a loaded machine (ctest -j) every run of those can take a time slice,
 * which rightly makes the batch 1. This one is short whatever the load. */
static mb_status_t tiny_add(void *user, const mb_kernel_args_t *a) {
  (void)user;
  const float *x = mb_tensor_data(a->inputs[0]),
              *y = mb_tensor_data(a->inputs[1]);
  float *z = mb_tensor_data(a->outputs[0]);
  for (size_t i = 0; i < mb_tensor_numel(a->outputs[0]); i++)
    z[i] = x[i] + y[i];
  return MB_OK;
}

static void test_stdrel_hot_batches(void **state) {
  (void)state;
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = 16;
  p.shape[1] = 16;
  mb_bench_spec_t s = quick_spec("add", &p);
  s.criterion = MB_CRITERION_STDREL;
  s.samples = 0;
  s.cache = MB_CACHE_HOT;
  s.min_time_s = 0.05;
  s.timeout_s = 2;
  s.impl = "tiny";
  mb_context_t *saved = g_ctx;
  setup(NULL); /* a context of its own, so "tiny" is not chosen elsewhere */
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = "add";
  d.name = "tiny";
  d.dtype = MB_DTYPE_F32;
  d.run = tiny_add;
  assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
  outcome_t o = run_ok(&s);
  teardown(NULL);
  g_ctx = saved;
  assert_int_equal(o.info.status, MB_RESULT_OK);
  assert_true(o.stats.batch > 1); /* a tiny add is batched */
  assert_true(o.stats.count >= 10);
  assert_true(o.stats.measured_ns >= 0.05e9 ||
              strcmp(o.stats.stop_reason, "timeout") == 0);
  assert_true(o.stats.warmup_runs >= 1);
}

/* %peak against the math that ran and %roof against the roofline:
 * max(FLOP / peak, bytes / the device's measured copy bandwidth). */
static mb_device_t *cpu0(void) {
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(g_ctx, "cpu", 0, &dev), MB_OK);
  return dev;
}

static void assert_roof(const outcome_t *o, const char *bound) {
  const mb_derived_t *d = &o->derived;
  mb_calibration_t cal = MB_CALIBRATION_INIT;
  assert_int_equal(mb_device_calibration(cpu0(), &cal), MB_OK);
  assert_true(cal.copy_gbps > 0);
  assert_non_null(strstr(cal.copy_note, "fastest of"));
  assert_true(d->bandwidth_gbps == cal.copy_gbps);
  const double compute = d->flop / d->peak_flops * 1e9,
               memory = d->bytes / d->bandwidth_gbps;
  assert_string_equal(d->bound, bound);
  assert_true(d->roof_ns == (d->flop > 0 ? fmax(compute, memory) : memory));
  assert_true(fabs(d->pct_roof - 100.0 * d->roof_ns / o->stats.median) <
              1e-9 * d->pct_roof);
}

static void test_roofline(void **state) {
  (void)state;
  /* 85 FLOP per byte: compute-bound even if a loaded machine measured a
   * fifth of its bandwidth. */
  mb_op_params_t g = shape3(512, 512, 512);
  mb_bench_spec_t s = quick_spec("gemm", &g);
  outcome_t o = run_ok(&s);
  assert_true(o.derived.peak_flops ==
              mb_device_peak_flops(cpu0(), MB_DTYPE_F32));
  assert_roof(&o, "compute");

  mb_op_params_t a = MB_OP_PARAMS_INIT;
  a.ndim = 2;
  a.shape[0] = a.shape[1] = 1024;
  s = quick_spec("add", &a);
  o = run_ok(&s);
  assert_roof(&o, "memory"); /* 1 FLOP per 12 bytes */
}

/* A copy kernel that skips the work cannot raise the bandwidth roof: the
 * measurement checks the copy's whole output and is refused (no roof). */
static void test_lazy_copy_gives_no_roof(void **state) {
  (void)state;
  char path[8192];
  snprintf(path, sizeof path, "%s/lazy", test_env_dir("MB_TEST_FIXTURE_DIR"));
  mb_context_t *ctx = test_context(path);
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "lazy", 0, &dev), MB_OK);
  mb_calibration_t cal = MB_CALIBRATION_INIT;
  assert_int_equal(mb_device_calibration(dev, &cal), MB_OK);
  assert_true(cal.copy_gbps == 0);
  assert_non_null(strstr(cal.copy_note, "not measured"));
  assert_non_null(strstr(cal.copy_note, "is 0, not 1"));
  mb_context_destroy(ctx);
}

/* Whether the CPU backend has a kernel of `op` named `impl`. */
static int has_cpu_impl(const char *op, const char *impl) {
  for (size_t i = 0; i < mb_kernel_count(g_ctx); i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    if (mb_kernel_info(g_ctx, i, &k) == MB_OK && !strcmp(k.op, op) &&
        !strcmp(k.name, impl) && !strcmp(k.backend, "cpu"))
      return 1;
  }
  return 0;
}

/* The CPU's int4 weight-only GEMM on its f32 path (--impl onednn, and the
 * C kernel) dequantizes B and widens A to f32, then multiplies in f32: its
 * %peak is against the f32 peak; the default, onednn_bf16, multiplies in
 * bf16 and is held to bf16's. An emulated fp8 GEMM has no peak at all, and
 * so no roof. */
static void test_peak_of_the_math_that_ran(void **state) {
  (void)state;
  mb_op_params_t p = shape3(64, 256, 64);
  p.dtype = MB_DTYPE_BF16;
  p.dtype_b = MB_DTYPE_I4;
  p.scale_b.mode = MB_SCALE_GROUP;
  p.scale_b.block[1] =
      64; /* the bf16 kernel takes groups of 64 rows and more */
  mb_bench_spec_t s = quick_spec("gemm", &p);
  int ran = 0;
  static const char *const impls[] = {"c", "onednn", "onednn_bf16"};
  for (int i = 0; i < 3; i++) {
    s.impl = impls[i];
    if (!has_cpu_impl("gemm", s.impl)) continue; /* a build without oneDNN */
    if (i == 2 && !TEST_CPU_HAS("avx512bf16")) continue; /* its CPUs only */
    outcome_t o = run_ok(&s);
    ran++;
    assert_int_equal(o.info.status, MB_RESULT_OK);
    assert_true(
        o.derived.peak_flops ==
        mb_device_peak_flops(cpu0(), i == 2 ? MB_DTYPE_BF16 : MB_DTYPE_F32));
  }
  assert_true(ran >= 1); /* the C kernel is in every build */
  mb_op_params_t f = shape3(64, 64, 64);
  f.dtype = MB_DTYPE_F8E4M3;
  f.scale_a.mode = f.scale_b.mode = MB_SCALE_TENSOR;
  s = quick_spec("gemm", &f);
  outcome_t o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_OK);
  assert_true(o.info.emulated);
  assert_true(o.derived.peak_flops == 0 && o.derived.pct_peak == 0);
  assert_true(o.derived.roof_ns == 0 && o.derived.pct_roof == 0);
  assert_string_equal(o.derived.bound, "");
}

/* A device index is honoured or refused, with a backend named or not:
 * device 7 of a one-device CPU backend used to run on cpu:0. */
static void test_device_index_honoured(void **state) {
  (void)state;
  mb_op_params_t p = shape3(8, 8, 8);
  for (int named = 0; named < 2; named++) {
    mb_bench_spec_t s = quick_spec("gemm", &p);
    s.backend = named ? "cpu" : NULL;
    s.device = 7;
    outcome_t o = run_ok(&s);
    assert_int_equal(o.info.status, MB_RESULT_SKIPPED);
    assert_non_null(strstr(o.info.reason, "device 7 does not exist"));
  }
}

static void test_no_kernel_is_skipped(void **state) {
  (void)state;
  mb_op_params_t p = shape3(8, 8, 8);
  p.dtype = MB_DTYPE_F16; /* a valid gemm the CPU backend has no kernel for */
  mb_bench_spec_t s = quick_spec("gemm", &p);
  outcome_t o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_SKIPPED);
  assert_contains(o.info.reason, "no gemm kernel on cpu for f16");
  assert_int_equal(o.num_samples, 0);
}

static void test_input_errors(void **state) {
  (void)state;
  mb_op_params_t p = shape3(8, 8, 8);
  mb_bench_spec_t s = quick_spec("gemm", &p);
  mb_result_t *r = NULL;
  s.impl = "nosuch";
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_ERR_NOT_FOUND);
  assert_null(r);
  assert_contains(mb_error_last(), "unknown implementation \"nosuch\"");
  /* The implementations by name, each once ("c" is always built). */
  assert_contains(mb_error_last(), "; available:");
  const char *avail = strstr(mb_error_last(), "available:");
  assert_true(strstr(avail, " c") != NULL);
  assert_null(strstr(avail, "("));
  assert_true(strstr(strstr(avail, " c") + 2, " c ") == NULL);
  s = quick_spec("gemmm", &p);
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_ERR_NOT_FOUND);
  s = quick_spec("gemm", &p);
  s.backend = "tpu";
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_ERR_NOT_FOUND);
  assert_contains(mb_error_last(), "unknown backend \"tpu\"");
  s = quick_spec("gemm", &p);
  s.criterion = MB_CRITERION_STDREL;
  s.max_noise = 0;
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_ERR_INVALID_ARG);
  assert_null(r);
}

static void test_out_of_memory_is_a_failed_result(void **state) {
  (void)state;
  mb_op_params_t p = shape3(1 << 22, 1 << 22, 1 << 22); /* 64 TiB per operand */
  mb_bench_spec_t s = quick_spec("gemm", &p);
  outcome_t o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_FAILED);
  assert_contains(o.info.reason, "out of memory");
  assert_contains(o.info.reason, "cpu:0");
  /* The backend's own words follow (a GPU's say how much is free). */
  assert_contains(o.info.reason, "mmap of ");
}

/* ---- user kernels ----------------------------------------------------------
 */

typedef struct naive {
  int drop_last_term; /* deliberately wrong */
  int fail;
  int setups, teardowns;
} naive_t;

static mb_status_t naive_gemm(void *user, const mb_kernel_args_t *a) {
  naive_t *cfg = user;
  if (cfg->fail) {
    mb_error_set("naive_broken: the device said no");
    return MB_ERR_BACKEND;
  }
  const int64_t m = a->params->shape[0], k = a->params->shape[1],
                n = a->params->shape[2];
  const float *x = mb_tensor_data(a->inputs[0]),
              *w = mb_tensor_data(a->inputs[1]);
  float *d = mb_tensor_data(a->outputs[0]);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t p = 0; p < k - cfg->drop_last_term; p++)
        acc += (double)x[i * k + p] * w[p * n + j];
      d[i * n + j] = (float)acc;
    }
  return MB_OK;
}

static mb_status_t count_setup(void *user, const mb_kernel_args_t *a) {
  (void)a;
  ((naive_t *)user)->setups++;
  return MB_OK;
}
static mb_status_t count_teardown(void *user, const mb_kernel_args_t *a) {
  (void)a;
  ((naive_t *)user)->teardowns++;
  return MB_OK;
}

static void register_naive(const char *name, naive_t *cfg) {
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = "gemm";
  d.name = name;
  d.dtype = MB_DTYPE_F32;
  d.run = naive_gemm;
  d.setup = count_setup;
  d.teardown = count_teardown;
  d.user = cfg;
  assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
}

static void test_user_kernels(void **state) {
  (void)state;
  static naive_t right = {0, 0, 0, 0}, wrong = {1, 0, 0, 0},
                 broken = {0, 1, 0, 0};
  register_naive("naive", &right);
  register_naive("naive_wrong", &wrong);
  register_naive("naive_broken", &broken);
  mb_kernel_desc_t dup = MB_KERNEL_DESC_INIT;
  dup.op = "gemm";
  dup.name = "naive";
  dup.dtype = MB_DTYPE_F32;
  dup.run = naive_gemm;
  assert_int_equal(mb_kernel_register(g_ctx, &dup), MB_ERR_INVALID_ARG);
  dup.name = "Bad Name";
  assert_int_equal(mb_kernel_register(g_ctx, &dup), MB_ERR_INVALID_ARG);

  mb_op_params_t p = shape3(48, 40, 56);
  mb_bench_spec_t s = quick_spec("gemm", &p);
  s.impl = "naive";
  outcome_t o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_OK);
  assert_string_equal(o.info.impl, "naive");
  assert_true(o.corr.pass);
  assert_int_equal(right.setups, 1);
  assert_int_equal(right.teardowns, 1);

  s.impl = "naive_wrong"; /* timed, but marked wrong */
  o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_OK);
  assert_true(o.corr.checked);
  assert_false(o.corr.pass);
  assert_true(o.corr.max_err_ratio > 1);
  assert_int_equal(o.num_samples, 5);

  s.flags = MB_BENCH_STRICT; /* wrong is a failure, not timed */
  o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_FAILED);
  assert_contains(o.info.reason, "wrong result");
  assert_int_equal(o.num_samples, 0);

  s.flags = 0;
  s.impl = "naive_broken"; /* the kernel's own message is the reason */
  o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_FAILED);
  assert_contains(o.info.reason, "naive_broken: the device said no");

  /* No impl named: the user kernel registered first wins over the backend's. */
  s.impl = NULL;
  o = run_ok(&s);
  assert_string_equal(o.info.impl, "naive");
}

/* mb_error_set: a copy, truncated, NULL clears, its own text is fine. */
static void test_error_set(void **state) {
  (void)state;
  char msg[64];
  snprintf(msg, sizeof msg, "kernel says %d", 42);
  mb_error_set(msg);
  msg[0] = 'X';
  assert_string_equal(mb_error_last(), "kernel says 42");
  mb_error_set(mb_error_last() + 7);
  assert_string_equal(mb_error_last(), "says 42");
  static char big[4096];
  memset(big, 'a', sizeof big - 1);
  mb_error_set(big);
  assert_int_equal(strlen(mb_error_last()), 2047);
  mb_error_set(NULL);
  assert_string_equal(mb_error_last(), "");
}

/* A backend whose gemm is wrong: caught on the backend path too. */
static void test_wrong_backend_kernel(void **state) {
  (void)state;
  mb_op_params_t p = shape3(16, 16, 16);
  mb_bench_spec_t s = quick_spec("gemm", &p);
  s.backend = "wrong";
  outcome_t o = run_ok(&s);
  assert_int_equal(o.info.status, MB_RESULT_OK);
  assert_false(o.corr.pass);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixed_count),
      cmocka_unit_test(test_stdrel_hot_batches),
      cmocka_unit_test(test_roofline),
      cmocka_unit_test(test_peak_of_the_math_that_ran),
      cmocka_unit_test(test_lazy_copy_gives_no_roof),
      cmocka_unit_test(test_device_index_honoured),
      cmocka_unit_test(test_no_kernel_is_skipped),
      cmocka_unit_test(test_input_errors),
      cmocka_unit_test(test_out_of_memory_is_a_failed_result),
      cmocka_unit_test(test_wrong_backend_kernel),
      cmocka_unit_test(test_error_set),
      cmocka_unit_test(test_user_kernels), /* last: it registers kernels */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
