/* The native schema's `sizes` key (issue 24 item 4): rank-1 ops (the
 * collectives) swept by size in bytes, nccl-tests style, each size
 * becoming [bytes / element size] for the entry's dtype; units, ranges,
 * and the errors naming file, field, value and the valid choices. */
#include "test_plan_util.h"

static mb_plan_t *sizes_plan(const char *sizes, const char *extra) {
  char text[1024];
  snprintf(text, sizeof text, "benchmarks:\n- op: all_reduce\n  sizes: %s\n%s",
           sizes, extra ? extra : "");
  return test_plan_parse(text);
}

static void expect_size(const mb_plan_t *plan, size_t i, const char *name,
                        int64_t n, mb_dtype_t dtype, double bytes) {
  mb_plan_entry_t e = test_plan_entry(plan, i);
  assert_string_equal(e.name, name);
  assert_int_equal(e.params.ndim, 1);
  assert_int_equal(e.params.shape[0], n);
  assert_int_equal(e.params.dtype, dtype);
  assert_true(e.bytes == bytes); /* the bytes written, whatever the dtype */
}

/* A list with units, swept with two dtypes (the dtype varies fastest). */
static void test_list_and_units(void **state) {
  (void)state;
  mb_plan_t *plan =
      sizes_plan("[8, 1KiB, \"64 MiB\", 1G, 3072]", "  dtypes: [f32, bf16]\n");
  assert_int_equal(mb_plan_count(plan), 10);
  expect_size(plan, 0, "all_reduce/8B/f32", 2, MB_DTYPE_F32, 8);
  expect_size(plan, 1, "all_reduce/8B/bf16", 4, MB_DTYPE_BF16, 8);
  expect_size(plan, 2, "all_reduce/1KiB/f32", 256, MB_DTYPE_F32, 1024);
  expect_size(plan, 5, "all_reduce/64MiB/bf16", 32 << 20, MB_DTYPE_BF16,
              64 << 20);
  expect_size(plan, 6, "all_reduce/1GiB/f32", 1 << 28, MB_DTYPE_F32, 1 << 30);
  expect_size(plan, 8, "all_reduce/3KiB/f32", 768, MB_DTYPE_F32, 3072);
  mb_plan_destroy(plan);
  /* one size alone; no dtype: the op's default (f32); the other units */
  plan = sizes_plan("2T", NULL);
  assert_int_equal(mb_plan_count(plan), 1);
  expect_size(plan, 0, "all_reduce/2TiB/f32", INT64_C(1) << 39, MB_DTYPE_F32,
              (double)(INT64_C(2) << 40));
  mb_plan_destroy(plan);
  plan = sizes_plan("[4K, 1M, 1 GiB, 1TiB, 16B]", "  dtype: i32\n");
  static const int64_t k_bytes[] = {4096, 1 << 20, 1 << 30, INT64_C(1) << 40,
                                    16};
  for (size_t i = 0; i < 5; i++)
    assert_int_equal(test_plan_entry(plan, i).params.shape[0], k_bytes[i] / 4);
  mb_plan_destroy(plan);
}

/* Ranges as nccl-tests' -b/-e with -f or -i, units in start and end. */
static void test_ranges(void **state) {
  (void)state;
  mb_plan_t *plan =
      sizes_plan("{start: 8, end: 64MiB, multiplier: 2}", "  dtype: bf16\n");
  assert_int_equal(mb_plan_count(plan), 24); /* 2^3 .. 2^26 */
  for (size_t i = 0; i < 24; i++)
    assert_int_equal(test_plan_entry(plan, i).params.shape[0],
                     (INT64_C(8) << i) / 2);
  assert_string_equal(test_plan_entry(plan, 23).name, "all_reduce/64MiB/bf16");
  mb_plan_destroy(plan);
  plan = sizes_plan("{start: 1KiB, end: 4KiB, increase_by: 1024}", NULL);
  assert_int_equal(mb_plan_count(plan), 4);
  assert_string_equal(test_plan_entry(plan, 3).name, "all_reduce/4KiB/f32");
  mb_plan_destroy(plan);
  /* in defaults, for every collective of the file, with their own keys */
  plan = test_plan_parse(
      "defaults: {sizes: [8, 16]}\n"
      "benchmarks:\n"
      "- {op: sendrecv, dtype: f16}\n"
      "- {op: all_gather, in_place: true}\n");
  assert_int_equal(mb_plan_count(plan), 4);
  assert_string_equal(test_plan_entry(plan, 0).name, "sendrecv/8B/f16");
  assert_int_equal(test_plan_entry(plan, 0).params.shape[0], 4);
  assert_true(test_plan_entry(plan, 3).params.flags & MB_PARAM_IN_PLACE);
  mb_plan_destroy(plan);
}

static void test_errors(void **state) {
  (void)state;
  static const struct {
    const char *sizes, *extra, *a, *b;
  } k_cases[] = {
      {"[8, 8XB]", NULL, "benchmarks[0].sizes[1]",
       "\"8XB\": unknown unit \"XB\"; valid: B, KiB (or K), MiB (M), GiB "
       "(G), TiB (T)"},
      {"[abc]", NULL, "benchmarks[0].sizes[0]", "\"abc\" is not a size"},
      {"[0]", NULL, "benchmarks[0].sizes[0]",
       "is not a size: give a whole number of bytes from 1 to 1 PiB"},
      {"[2.5]", NULL, "benchmarks[0].sizes[0]", "is not a size"},
      {"[]", NULL, "benchmarks[0].sizes", "empty list; give at least one size"},
      {"[6]", "  dtype: f32\n", "benchmarks[0].sizes[0]",
       "size 6B (6 bytes) is not a whole number of f32 elements (4 bytes "
       "each); give a multiple of 4 bytes"},
      {"{start: 1, end: 16, multiplier: 2}", "  dtype: bf16\n",
       "benchmarks[0].sizes",
       "size 1B (1 bytes) is not a whole number of bf16"},
      {"{start: 8, end: 1GiB}", NULL, "benchmarks[0].sizes",
       "a range needs `multiplier` or `increase_by`"},
      {"{start: 8, end: 1GiB, multiplier: 2, increase_by: 8}", NULL,
       "benchmarks[0].sizes", "give `multiplier` or `increase_by`, not both"},
      {"{start: 1GiB, end: 8, multiplier: 2}", NULL, "benchmarks[0].sizes",
       "start 1.07374e+09 is above end 8"},
      {"{start: 8, end: 9Q, multiplier: 2}", NULL, "benchmarks[0].sizes.end",
       "unknown unit \"Q\""},
  };
  for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "benchmarks:\n- op: all_reduce\n  sizes: %s\n%s", k_cases[i].sizes,
             k_cases[i].extra ? k_cases[i].extra : "");
    test_plan_expect_error(text, k_cases[i].a, k_cases[i].b);
  }
  /* sizes are for rank-1 ops */
  test_plan_expect_error("benchmarks:\n- {op: gemm, sizes: [8]}\n",
                         "benchmarks[0].sizes[0]",
                         "sizes give rank-1 shapes [bytes / element size], "
                         "but op gemm takes 3 dimensions");
  /* the file's name is in every message */
  test_plan_expect_error("benchmarks:\n- {op: all_reduce, sizes: [8Z]}\n",
                         "bad.yaml:2", "unknown unit");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_and_units),
      cmocka_unit_test(test_ranges),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
