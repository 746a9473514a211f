/* Shared by the tests: cmocka's includes and small helpers. */
#ifndef MB_TEST_UTIL_H
#define MB_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <microbench.h>

/* splitmix64: the tests' one pseudo-random stream, the same on every
 * platform and libc (state in *s). */
static inline uint64_t test_splitmix64(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* A directory the build put fixtures or modules in (from ctest's env). */
static inline const char *test_env_dir(const char *var) {
  const char *v = getenv(var);
  if (!v || !*v) fail_msg("%s is not set: run this test through ctest", var);
  return v;
}

/* A context that loads only from `path` (no env, no default dir). */
static inline mb_context_t *test_context(const char *path) {
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  mb_context_t *ctx = NULL;
  o.backend_path = path;
  o.flags = MB_CONTEXT_NO_DEFAULT_BACKENDS;
  assert_int_equal(mb_context_create(&ctx, &o), MB_OK);
  return ctx;
}

/* An op's params with a 2-D (M x N) or 3-D (M x K x N) shape and the
 * input dtype; MB_DTYPE_NONE leaves the op's default. */
static inline mb_op_params_t test_shape2(mb_dtype_t dt, int64_t m, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = m;
  p.shape[1] = n;
  p.dtype = dt;
  return p;
}

static inline mb_op_params_t test_shape3(mb_dtype_t dt, int64_t m, int64_t k,
                                         int64_t n) {
  mb_op_params_t p = test_shape2(dt, m, k);
  p.ndim = 3;
  p.shape[2] = n;
  return p;
}

/* `samples` fixed samples of `op` on `backend` (MB_OK asserted). */
static inline mb_result_t *test_run_on(mb_context_t *ctx, const char *backend,
                                       const char *op, const mb_op_params_t *p,
                                       uint32_t samples) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = backend;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = samples;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(ctx, &s, &r), MB_OK);
  return r;
}

/* The same on the cpu backend. */
static inline mb_result_t *test_run_cpu(mb_context_t *ctx, const char *op,
                                        const mb_op_params_t *p,
                                        uint32_t samples) {
  return test_run_on(ctx, "cpu", op, p, samples);
}

/* Whether result r (of kernel `impl`) ran, was checked, and passed. */
static inline int test_result_passes(mb_result_t *r, const char *impl) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &c);
  if (info.status != MB_RESULT_OK) fail_msg("%s: %s", impl, info.reason);
  assert_true(c.checked);
  return c.pass;
}

/* One checked sample of `op` (an op or alias) with params p on the cpu
 * backend's kernel `impl` (seed 42): whether it passed. The planted-bug
 * tests ask this of a right kernel and of its wrong twins. */
static inline int test_impl_passes(mb_context_t *ctx, const char *op,
                                   const mb_op_params_t *p, const char *impl) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "cpu";
  s.impl = impl;
  s.seed = 42;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 1;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  const int pass = test_result_passes(r, impl);
  mb_result_destroy(r);
  return pass;
}

/* Whether this x86 CPU has `feature` (a __builtin_cpu_supports name), for
 * tests that expect a kernel only where it runs; 0 elsewhere. */
#if defined(__x86_64__) && defined(__GNUC__)
#define TEST_CPU_HAS(feature) \
  (__builtin_cpu_init(), __builtin_cpu_supports(feature))
#else
#define TEST_CPU_HAS(feature) 0
#endif

static inline void assert_contains(const char *hay, const char *needle) {
  if (!strstr(hay, needle))
    fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

#endif
