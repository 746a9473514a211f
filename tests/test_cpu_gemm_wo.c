/* The CPU's int4 weight-only GEMM (bf16 A x i4 B with group scales): the
 * default, one bf16 matmul per K group of exact codes
 * (backends/cpu/cpu_gemm_wo_onednn.c, --impl onednn_bf16), and the f32
 * matmul of the dequantized weight (--impl onednn), against the op's
 * reference: groups of 32 to 256, a tensor scale, N odd (rows of B start
 * mid-byte), M and N past and between the kernel's 256 x 512 tiles (edge
 * tiles of each kind), every output dtype, alpha and beta (the epilogue)
 * and the direct f32 path. A weight rounded once to bf16 fails these
 * checks (measured: 7x96x65 errs 499 times the allowance); the kernel must
 * also say it multiplied in bf16 and be the default from groups of 64
 * rows on a CPU with AVX512-BF16, so a build that lost it (and fell back
 * to the f32 path) fails too; groups of 32 rows, and other CPUs, go to the
 * f32 path. Without oneDNN the C kernel runs the same cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "microbench/sys/backend.h" /* MB_KERNEL_NOTE_MATH */
#include "test_util.h"

typedef struct wcase {
  int64_t m, k, n;
  const char *group, *out;
  double alpha, beta;
} wcase_t;

/* The bf16 kernel takes groups of 64 rows and more (and a tensor scale),
 * on a CPU with AVX512-BF16 (the module's own rule). */
static int bf16_default(const wcase_t *c) {
  return TEST_CPU_HAS("avx512bf16") && strcmp(c->group, "group:32") != 0;
}

static const wcase_t k_cases[] = {
    {7, 96, 65, "group:32", "f32", 1, 0},      /* direct into D, odd N */
    {33, 192, 40, "group:64", "bf16", 0.5, 1}, /* epilogue with beta */
    {5, 384, 17, "group:128", "f32", 1, 0},
    {20, 512, 31, "group:256", "f16", 1, 0.5},
    {64, 256, 48, "group:32", "f32", 2, 0},
    {1, 1024, 129, "group:128", "f32", 1, 0},  /* one row (decode) */
    {300, 256, 600, "group:128", "f32", 1, 0}, /* edge tiles, both sides */
    {513, 64, 1031, "group:64", "bf16", 0.5, 1},
    {256, 128, 512, "tensor", "f32", 1, 0}, /* one group, whole tiles */
};

static int setup(void **state) {
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  mb_context_t *ctx = dir ? test_context(dir) : NULL;
  *state = ctx;
  return ctx ? 0 : -1;
}

static int teardown(void **state) {
  mb_context_destroy(*state);
  return 0;
}

/* The run's "math" note, or "" when it has none. */
static void math_note(const mb_result_t *r, char *out, size_t size) {
  out[0] = '\0';
  for (size_t i = 0; i < mb_result_note_count(r); ++i) {
    const char *key = NULL, *text = NULL;
    double v = 0;
    if (mb_result_note(r, i, &key, &text, &v) == MB_OK && key && text &&
        strcmp(key, MB_KERNEL_NOTE_MATH) == 0)
      snprintf(out, size, "%s", text);
  }
}

/* MB_ERR_NOT_FOUND when `impl` is not in this build; impl NULL: the
 * default, whose name goes to ran[]. */
static mb_status_t run_case(mb_context_t *ctx, const wcase_t *c,
                            const char *impl, char *math, size_t size,
                            char ran[32]) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = c->m, p.shape[1] = c->k, p.shape[2] = c->n;
  p.alpha = c->alpha, p.beta = c->beta;
  p.dtype = MB_DTYPE_BF16;
  p.dtype_b = MB_DTYPE_I4;
  assert_int_equal(mb_dtype_from_name(c->out, &p.dtype_out), MB_OK);
  assert_int_equal(mb_scaling_from_string(c->group, &p.scale_b), MB_OK);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "gemm", s.params = &p, s.backend = "cpu", s.impl = impl;
  s.criterion = MB_CRITERION_FIXED, s.samples = 1, s.cache = MB_CACHE_HOT;
  s.batch = 1, s.warmup_s = 0;
  mb_result_t *r = NULL;
  const mb_status_t st = mb_bench_run(ctx, &s, &r);
  if (st == MB_ERR_NOT_FOUND) return st;
  if (st != MB_OK) fail_msg("gemm/%s: %s", impl, mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t corr = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &corr);
  math_note(r, math, size);
  if (info.status != MB_RESULT_OK)
    fail_msg("%lldx%lldx%lld %s/%s: %s", (long long)c->m, (long long)c->k,
             (long long)c->n, c->group, impl, info.reason);
  if (!corr.checked || !corr.pass)
    fail_msg("%lldx%lldx%lld %s -> %s/%s: wrong (error/allowed %g)",
             (long long)c->m, (long long)c->k, (long long)c->n, c->group,
             c->out, impl, corr.max_err_ratio);
  if (impl) assert_string_equal(info.impl, impl);
  if (ran) snprintf(ran, 32, "%s", info.impl);
  mb_result_destroy(r);
  return MB_OK;
}

static void test_weight_only(void **state) {
  mb_context_t *ctx = *state;
  const size_t count = sizeof k_cases / sizeof k_cases[0];
  for (size_t i = 0; i < count; ++i) {
    char math[32], ran[32];
    /* The f32 path: dequantized to f32, an f32 matmul; where it ran (a
     * build with oneDNN), the bf16 one must run too, as the default. */
    if (run_case(ctx, &k_cases[i], "onednn", math, sizeof math, NULL) ==
        MB_OK) {
      assert_string_equal(math, "f32");
      assert_int_equal(run_case(ctx, &k_cases[i], NULL, math, sizeof math, ran),
                       MB_OK);
      assert_string_equal(ran,
                          bf16_default(&k_cases[i]) ? "onednn_bf16" : "onednn");
      /* the bf16 kernel, not f32's */
      assert_string_equal(math, bf16_default(&k_cases[i]) ? "bf16" : "f32");
    }
    assert_int_equal(run_case(ctx, &k_cases[i], "c", math, sizeof math, NULL),
                     MB_OK);
  }
}

/* Groups of 32 rows make GEMMs too thin: the f32 path is the default. */
static void test_thin_groups(void **state) {
  const wcase_t c = {16, 64, 40, "group:32", "f32", 1, 0};
  char math[32], ran[32];
  if (run_case(*state, &c, "onednn", math, sizeof math, NULL) != MB_OK) skip();
  assert_int_equal(run_case(*state, &c, NULL, math, sizeof math, ran), MB_OK);
  assert_string_equal(ran, "onednn");
  assert_string_equal(math, "f32");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_weight_only),
      cmocka_unit_test(test_thin_groups),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
