/* What the API promises an embedding program and a backend module:
 *  - one struct-versioning rule (lib/versioned.c): an older caller's
 *    smaller struct is read with defaults for what it lacks, a struct
 *    smaller than the first version or larger than the library's is
 *    refused naming the struct and the sizes, and outputs are written only
 *    as far as the caller's struct_size;
 *  - a module built against ABI 1's first backend.h loads, lists and runs;
 *  - `samples` alone in a spec means exactly that many samples;
 *  - refusal reasons formatted through the host table reach the result
 *    intact, several in one selection. */
#include "test_util.h"

#include "internal.h"

#define END_OF(type, member) \
  (offsetof(type, member) + sizeof(((type *)0)->member))

static char g_path[4096];

static const char *fixture(const char *name) {
  snprintf(g_path, sizeof g_path, "%s/%s", test_env_dir("MB_TEST_FIXTURE_DIR"),
           name);
  return g_path;
}

static mb_result_t *run(mb_context_t *ctx, const mb_bench_spec_t *spec) {
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, spec, &r) != MB_OK) fail_msg("%s", mb_error_last());
  return r;
}

static mb_result_info_t info_of(const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  return info;
}

/* A short hot benchmark of `op` on f32 M x N. */
static mb_bench_spec_t quick(const char *op, const char *backend,
                             const mb_op_params_t *p) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = backend;
  s.cache = MB_CACHE_HOT;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 3;
  s.warmup_s = 0;
  return s;
}

/* ---- the rule, through the helpers -------------------------------------- */

static void test_input_older_takes_defaults(void **state) {
  (void)state;
  const size_t first = END_OF(mb_bench_spec_t, flags);
  assert_int_equal(mb__struct_first_size(MB__STRUCT_BENCH_SPEC), first);
  mb_bench_spec_t given = MB_BENCH_SPEC_INIT, full = MB_BENCH_SPEC_INIT;
  given.struct_size = (uint32_t)first;
  given.samples = 7;
  given.repetitions = 99; /* past the caller's struct: not its field */
  assert_int_equal(
      mb__struct_in(MB__STRUCT_BENCH_SPEC, "caller", &given, &full), MB_OK);
  assert_int_equal(full.samples, 7);
  assert_int_equal(full.repetitions, 1); /* MB_BENCH_SPEC_INIT's */
  assert_int_equal(full.struct_size, sizeof full);
  /* Today's size: everything. */
  given.struct_size = sizeof given;
  assert_int_equal(
      mb__struct_in(MB__STRUCT_BENCH_SPEC, "caller", &given, &full), MB_OK);
  assert_int_equal(full.repetitions, 99);
}

static void test_input_too_small_or_large_refused(void **state) {
  (void)state;
  char sizes[128];
  snprintf(sizes, sizeof sizes, "reads %zu to %zu bytes",
           END_OF(mb_bench_spec_t, flags), sizeof(mb_bench_spec_t));
  mb_bench_spec_t given = MB_BENCH_SPEC_INIT, full = MB_BENCH_SPEC_INIT;
  given.struct_size = (uint32_t)END_OF(mb_bench_spec_t, flags) - 1;
  assert_int_equal(
      mb__struct_in(MB__STRUCT_BENCH_SPEC, "caller", &given, &full),
      MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "caller: mb_bench_spec_t.struct_size");
  assert_contains(mb_error_last(), "smaller than its first version");
  assert_contains(mb_error_last(), sizes);
  assert_contains(mb_error_last(), "MB_BENCH_SPEC_INIT");
  given.struct_size = (uint32_t)sizeof given + 8;
  assert_int_equal(
      mb__struct_in(MB__STRUCT_BENCH_SPEC, "caller", &given, &full),
      MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "larger than this library's");
  assert_contains(mb_error_last(), sizes);
}

static void test_output_at_most_callers_size(void **state) {
  (void)state;
  mb_stats_t ours = MB_STATS_INIT;
  ours.count = 5;
  ours.throttled = 4;
  ours.repetitions = 3;
  /* An older caller: what lies past its struct is not written. */
  mb_stats_t old = MB_STATS_INIT;
  old.struct_size = (uint32_t)END_OF(mb_stats_t, stop_reason);
  old.throttled = 77;
  assert_int_equal(mb__struct_out(MB__STRUCT_STATS, "f", &ours, &old), MB_OK);
  assert_int_equal(old.count, 5);
  assert_int_equal(old.throttled, 77);
  assert_int_equal(old.struct_size, END_OF(mb_stats_t, stop_reason));
  /* A newer caller: ours, and its tail kept; struct_size says how much. */
  struct {
    mb_stats_t s;
    double later;
  } newer = {MB_STATS_INIT, 9.0};
  newer.s.struct_size = (uint32_t)sizeof newer;
  assert_int_equal(mb__struct_out(MB__STRUCT_STATS, "f", &ours, &newer), MB_OK);
  assert_int_equal(newer.s.repetitions, 3);
  assert_int_equal(newer.s.struct_size, sizeof(mb_stats_t));
  assert_true(newer.later == 9.0);
  /* Not a struct of ours (0: never set). */
  old.struct_size = 0;
  assert_int_equal(mb__struct_out(MB__STRUCT_STATS, "f", &ours, &old),
                   MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "MB_STATS_INIT");
}

/* ---- the rule at entry points ------------------------------------------- */

static void test_entry_points_older_caller(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  /* Params and spec of their first versions; garbage past their ends
   * (a recipe on a primitive, repetitions) would be errors if read. */
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 16, 16);
  p.struct_size = (uint32_t)END_OF(mb_op_params_t, flags);
  p.recipe = 5;
  p.act_alpha = 42.0;
  mb_bench_spec_t s = quick("copy", "cpu", &p);
  s.struct_size = (uint32_t)END_OF(mb_bench_spec_t, flags);
  s.repetitions = 4;
  mb_result_t *r = run(ctx, &s);
  mb_result_info_t info = info_of(r);
  assert_int_equal(info.status, MB_RESULT_OK);
  size_t reps = 0;
  mb_result_repetitions(r, &reps);
  assert_int_equal(reps, 1);
  /* An older caller's output struct: its prefix only. */
  mb_stats_t st = MB_STATS_INIT;
  st.struct_size = (uint32_t)END_OF(mb_stats_t, stop_reason);
  st.repetitions = 1234;
  assert_int_equal(mb_result_stats(r, &st), MB_OK);
  assert_int_equal(st.count, 3);
  assert_int_equal(st.repetitions, 1234);
  mb_result_destroy(r);

  /* mb_op_resolve reads the old params and writes back only what they
   * hold (dtype_out resolved; past the end untouched). */
  assert_int_equal(mb_op_resolve(mb_op_find("copy"), &p), MB_OK);
  assert_int_equal(p.dtype_out, MB_DTYPE_F32);
  assert_int_equal(p.struct_size, END_OF(mb_op_params_t, flags));
  assert_true(p.act_alpha == 42.0 && p.recipe == 5);

  /* A newer caller's options: refused, naming the struct and sizes. */
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  mb_context_t *other = NULL;
  o.struct_size = (uint32_t)sizeof o + 16;
  assert_int_equal(mb_context_create(&other, &o), MB_ERR_INVALID_ARG);
  assert_null(other);
  assert_contains(mb_error_last(), "mb_context_create: mb_context_options_t");
  assert_contains(mb_error_last(), "larger than this library's");
  mb_context_destroy(ctx);
}

/* The entry points that take params or a fill without running: the same
 * rule. A first-version caller's recipe slot (past its end) holds a real
 * recipe, which changes a model's bytes if read. */
static void test_entry_points_without_a_run(void **state) {
  (void)state;
  const mb_op_t *linear = mb_op_find("linear");
  mb_op_params_t full = test_shape3(MB_DTYPE_BF16, 64, 256, 256);
  assert_int_equal(mb_op_resolve(linear, &full), MB_OK);
  mb_op_params_t old = full;
  old.struct_size = (uint32_t)END_OF(mb_op_params_t, flags);
  old.recipe = MB_RECIPE_INT8WO;
  assert_true(mb_op_bytes(linear, &old) == mb_op_bytes(linear, &full));
  assert_true(mb_op_flop(linear, &old) == mb_op_flop(linear, &full));
  mb_dtype_t dt;
  uint32_t nd;
  int64_t shape[MB_MAX_DIMS];
  assert_int_equal(mb_op_operand(linear, &old, 0, &dt, &nd, shape), MB_OK);
  old.struct_size = (uint32_t)sizeof old + 8;
  assert_true(mb_op_bytes(linear, &old) == 0.0);
  assert_contains(mb_error_last(), "mb_op_bytes: mb_op_params_t");
  assert_int_equal(mb_op_operand(linear, &old, 0, &dt, &nd, shape),
                   MB_ERR_INVALID_ARG);

  /* An alias's presets reach only what an old caller's params hold. */
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.struct_size = (uint32_t)END_OF(mb_op_params_t, flags);
  assert_int_equal(mb_op_apply_alias("gemm_fp8", &p), MB_OK);
  assert_int_equal(p.dtype, MB_DTYPE_F8E4M3);
  assert_int_equal(p.scale_a.mode, MB_SCALE_NONE); /* row past its end */
  assert_int_equal(p.struct_size, END_OF(mb_op_params_t, flags));

  /* A fill from a newer header is refused, not half-read. */
  mb_fill_t f = MB_FILL_INIT;
  float out[4];
  f.struct_size = (uint32_t)sizeof f + 8;
  assert_int_equal(mb_fill_host(out, MB_DTYPE_F32, 4, &f), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "mb_fill_host: mb_fill_t");
}

/* ---- a module built against ABI 1's first backend.h ----------------------
 */

static void test_abi1_module_loads_lists_runs(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(fixture("abi1"));
  assert_int_equal(mb_backend_count(ctx), 1);
  mb_backend_info_t b = MB_BACKEND_INFO_INIT;
  assert_int_equal(mb_backend_info(ctx, 0, &b), MB_OK);
  if (!b.loaded) fail_msg("not loaded: %s", b.reason);
  assert_string_equal(b.name, "abi1");
  assert_string_equal(b.version, "abi1 fixture");
  assert_int_equal(b.device_count, 1);
  /* Both entries, read with the module's own stride. */
  assert_int_equal(mb_kernel_count(ctx), 2);
  const char *ops[] = {"copy", "add"};
  for (size_t i = 0; i < 2; i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    assert_int_equal(mb_kernel_info(ctx, i, &k), MB_OK);
    assert_string_equal(k.op, ops[i]);
    assert_string_equal(k.name, "abi1");
    assert_string_equal(k.backend, "abi1");
  }
  /* Hot and cold (the plain flush_cache), each checked and timed; none of
   * the appended hooks (telemetry, timer_info, timing_*, notes, flags) is
   * touched: they sit right after the module's tables and abort. */
  const mb_cache_policy_t caches[] = {MB_CACHE_HOT, MB_CACHE_COLD};
  for (size_t i = 0; i < 2; i++)
    for (size_t c = 0; c < 2; c++) {
      mb_op_params_t p = test_shape2(MB_DTYPE_F32, 32, 48);
      mb_bench_spec_t s = quick(ops[i], "abi1", &p);
      s.cache = caches[c];
      mb_result_t *r = run(ctx, &s);
      mb_result_info_t info = info_of(r);
      if (info.status != MB_RESULT_OK) fail_msg("%s: %s", ops[i], info.reason);
      assert_string_equal(info.impl, "abi1");
      assert_false(info.emulated);
      assert_string_equal(info.timer, "");
      mb_correctness_t corr = MB_CORRECTNESS_INIT;
      assert_int_equal(mb_result_correctness(r, &corr), MB_OK);
      assert_true(corr.checked && corr.pass);
      size_t n = 0;
      assert_non_null(mb_result_samples(r, &n));
      assert_int_equal(n, 3);
      assert_int_equal(mb_result_note_count(r), 0);
      mb_result_destroy(r);
    }
  mb_context_destroy(ctx);
}

static void expect_refused(const char *dir, const char *a, const char *b) {
  mb_context_t *ctx = test_context(fixture(dir));
  assert_int_equal(mb_backend_count(ctx), 1);
  mb_backend_info_t info = MB_BACKEND_INFO_INIT;
  assert_int_equal(mb_backend_info(ctx, 0, &info), MB_OK);
  assert_false(info.loaded);
  assert_contains(info.reason, a);
  assert_contains(info.reason, b);
  assert_int_equal(mb_device_count(ctx), 0);
  mb_context_destroy(ctx);
}

static void test_abi1_variants_refused(void **state) {
  (void)state;
  char sizes[128];
  snprintf(sizes, sizeof sizes, "reads %zu to %zu bytes",
           END_OF(mb_backend_vtable_t, num_kernels),
           sizeof(mb_backend_vtable_t));
  expect_refused("abi1small", "vtable: mb_backend_vtable_t.struct_size",
                 "smaller than its first version");
  expect_refused("abi1small", sizes, "");
  expect_refused("abi1large", "larger than this library's", sizes);
  expect_refused("abi1mixed", "kernels[1]: struct_size",
                 "one array, one struct size");
}

/* ---- samples alone ------------------------------------------------------ */

static void test_samples_alone_is_fixed(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 64, 64);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT; /* criterion left at stdrel */
  s.op = "copy";
  s.params = &p;
  s.backend = "cpu";
  s.cache = MB_CACHE_HOT;
  s.warmup_s = 0;
  /* stdrel would take at least min_samples (10) and min_time (1 s). */
  s.samples = 7;
  s.min_time_s = 1.0;
  mb_result_t *r = run(ctx, &s);
  assert_int_equal(info_of(r).status, MB_RESULT_OK);
  mb_stats_t st = MB_STATS_INIT;
  assert_int_equal(mb_result_stats(r, &st), MB_OK);
  assert_int_equal(st.count, 7);
  assert_string_equal(st.stop_reason, "fixed");
  size_t n = 0;
  mb_result_samples(r, &n);
  assert_int_equal(n, 7);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* ---- refusal reasons through the host table ----------------------------- */

static void expect_reasons(const mb_result_t *r, long long columns) {
  static const int multiples[] = {7, 11, 13};
  mb_result_info_t info = info_of(r);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  for (int i = 0; i < 3; i++) {
    char want[128];
    snprintf(want, sizeof want, "r%d: %lld columns, not a multiple of %d",
             i + 1, columns, multiples[i]);
    assert_contains(info.reason, want);
  }
}

static void test_formatted_reasons_intact(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(fixture("reasons"));
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 4, 1000);
  mb_bench_spec_t s = quick("add", "reasons", &p);
  mb_result_t *first = run(ctx, &s);
  expect_reasons(first, 1000);
  /* Again with other numbers: the new texts, and the first result's are
   * its own copies. */
  p.shape[1] = 999;
  mb_result_t *second = run(ctx, &s);
  expect_reasons(second, 999);
  expect_reasons(first, 1000);
  mb_result_destroy(first);
  mb_result_destroy(second);
  mb_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_input_older_takes_defaults),
      cmocka_unit_test(test_input_too_small_or_large_refused),
      cmocka_unit_test(test_output_at_most_callers_size),
      cmocka_unit_test(test_entry_points_older_caller),
      cmocka_unit_test(test_entry_points_without_a_run),
      cmocka_unit_test(test_abi1_module_loads_lists_runs),
      cmocka_unit_test(test_abi1_variants_refused),
      cmocka_unit_test(test_samples_alone_is_fixed),
      cmocka_unit_test(test_formatted_reasons_intact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
