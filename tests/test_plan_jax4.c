/* The JAX suite's configs that took parameters from elsewhere and were
 * refused or skipped whole: the legacy inference quantization's
 * quant_dtype, and the current layout's `model` presets
 * (core/model_configs.py) and `csv_shapes` files (core/csv_loader.py),
 * on upstream's own files (tests/configs/jax/; matrix_shapes.csv is
 * upstream's configs/shapes/matrix_shapes.csv at 6a306a8, verbatim) and
 * small ones written here. */
#include <stdlib.h>
#include <unistd.h>

#include "test_plan_util.h"

/* mb_plan_load of `path` fails with MB_ERR_PARSE naming a and b. */
static void expect_load_error(const char *path, const char *a, const char *b) {
  mb_plan_t *plan = NULL;
  mb_status_t st = mb_plan_load(path, NULL, &plan);
  if (st == MB_OK) {
    mb_plan_destroy(plan);
    fail_msg("loaded %s", path);
  }
  assert_int_equal(st, MB_ERR_PARSE);
  assert_contains(mb_error_last(), a);
  if (b) assert_contains(mb_error_last(), b);
}

/* ---- legacy: quantization's quant_dtype ---------------------------------- */

static void test_quant_dtype(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_parse(
      "benchmarks:\n- benchmark_name: quantization\n"
      "  benchmark_sweep_params:\n"
      "  - {m: 64, n: 256}\n"
      "  - {m: 64, n: 256, quant_dtype: float4_e2m1fn}\n"
      "  - {m: 64, n: 256, quant_dtype: int8}\n"
      "  - {m: 64, n: 256, quant_dtype: float8_e3m4}\n");
  static const struct {
    const char *name;
    mb_dtype_t out;
    const char *skip;
  } k_rows[] = {
      {"quantization/64x256", MB_DTYPE_F8E4M3, ""},
      {"quantization/64x256/q=float4_e2m1fn", MB_DTYPE_F4E2M1, ""},
      {"quantization/64x256/q=int8", MB_DTYPE_I8, ""},
      {"quantization/64x256/q=float8_e3m4", MB_DTYPE_NONE,
       "quant_dtype \"float8_e3m4\""},
  };
  assert_int_equal(mb_plan_count(plan), 4);
  for (size_t i = 0; i < 4; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.name, k_rows[i].name);
    if (*k_rows[i].skip) {
      assert_contains(e.skip_reason, k_rows[i].skip);
      continue;
    }
    assert_string_equal(e.skip_reason, "");
    mb_op_params_t p = e.params;
    assert_int_equal(mb_op_apply_alias(e.op, &p), MB_OK);
    assert_int_equal(mb_op_resolve(mb_op_find("quantize"), &p), MB_OK);
    assert_int_equal(p.dtype, MB_DTYPE_BF16);
    assert_int_equal(p.dtype_out, k_rows[i].out);
    assert_int_equal(p.scale_a.mode, MB_SCALE_ROW);
  }
  mb_plan_destroy(plan);
  test_plan_expect_error(
      "benchmarks:\n- benchmark_name: quantization\n"
      "  benchmark_sweep_params:\n  - {m: 8, n: 8, quant_dtype: fp9}\n",
      "quant_dtype: unknown dtype \"fp9\"", "float4_e2m1fn");
  test_plan_expect_error(
      "benchmarks:\n- benchmark_name: transpose_quantization\n"
      "  benchmark_sweep_params:\n  - {m: 8, n: 8, quant_dtype: int8}\n",
      "unknown parameter \"quant_dtype\"", NULL);
}

/* Upstream's file: both quant dtypes over m 1..65536 and n 128..65536. */
static void test_upstream_inference_quantization(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/inference_quantization.yaml");
  assert_int_equal(mb_plan_count(plan), 2 * 17 * 10);
  size_t f4 = 0;
  for (size_t i = 0; i < mb_plan_count(plan); i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.skip_reason, "");
    f4 += e.params.dtype_out == MB_DTYPE_F4E2M1;
  }
  assert_int_equal(f4, 17 * 10);
  mb_plan_destroy(plan);
}

/* ---- current layout: model presets --------------------------------------- */

static void test_model_preset(void **state) {
  (void)state;
  /* LLM-36B is MHA: 56 heads, seq 8192, head dim 128; an item's own
   * key wins over the preset, a sweep's over both. */
  mb_plan_t *plan = test_plan_parse(
      "global: {num_runs: 2}\nbenchmarks:\n"
      "- {name: attention_flashed, model: LLM-36B}\n"
      "- {name: attention_flashed, model: LLM-36B, seq_len: 1024,\n"
      "   sweep: {head_dim: [64]}}\n"
      "- {name: gemm_generalized, model: LLM-200B, m: 64, k: 128, n: 32}\n");
  assert_int_equal(mb_plan_count(plan), 3);
  mb_plan_entry_t e = test_plan_entry(plan, 0);
  const int64_t want0[] = {1, 56, 8192, 8192, 128};
  for (int d = 0; d < 5; d++) assert_int_equal(e.params.shape[d], want0[d]);
  assert_string_equal(e.skip_reason, "");
  e = test_plan_entry(plan, 1);
  const int64_t want1[] = {1, 56, 1024, 1024, 64};
  for (int d = 0; d < 5; d++) assert_int_equal(e.params.shape[d], want1[d]);
  /* gemm takes none of the preset's fields: its own shape, no error */
  e = test_plan_entry(plan, 2);
  assert_int_equal(e.params.shape[0], 64);
  assert_int_equal(e.params.shape[1], 128);
  assert_int_equal(e.params.shape[2], 32);
  assert_string_equal(e.skip_reason, "");
  mb_plan_destroy(plan);
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n"
      "- {name: attention_flashed, model: llama3_8b}\n",
      "benchmarks[0].model: unknown model preset \"llama3_8b\"",
      "LLM-36B, LLM-100B, LLM-200B, LLM-400B");
}

/* Upstream's study: gemm and swiglu run with the preset beside them. */
static void test_upstream_study(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/current/study_llm_200b.yaml");
  assert_true(mb_plan_count(plan) >= 5);
  for (size_t i = 0; i < 4; i++) { /* 3 gemm sizes, swiglu */
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.skip_reason, "");
  }
  assert_int_equal(test_plan_entry(plan, 3).params.shape[1],
                   16384); /* swiglu dim */
  mb_plan_entry_t attn = test_plan_entry(plan, 4);
  assert_string_equal(attn.op, "attention");
  assert_int_equal(attn.params.shape[1], 128);   /* num_q_heads */
  assert_int_equal(attn.params.shape[2], 16384); /* seq_len */
  assert_int_equal(attn.params.shape[4], 128);   /* head_dim */
  mb_plan_destroy(plan);
}

/* ---- current layout: csv_shapes ------------------------------------------ */

typedef struct dir {
  char path[256];
} dir_t;

static void write_file(const dir_t *d, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", d->path, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void remove_dir(const dir_t *d) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->path);
  assert_int_equal(system(cmd), 0);
}

/* Rows over the item (a row's m beats the item's), an empty cell falls
 * through to the item, each row swept; the CSV beside the config. */
static void test_csv_shapes(void **state) {
  (void)state;
  dir_t d = {"/tmp/mb-jax4-XXXXXX"};
  assert_non_null(mkdtemp(d.path));
  write_file(&d, "s.csv", "m,k,n\r\n64,128,32\r\n\r\n\"16\",,8\r\n");
  write_file(&d, "t.yaml",
             "global: {num_runs: 2}\nbenchmarks:\n"
             "- name: gemm_generalized\n  csv_shapes: s.csv\n"
             "  m: 999\n  k: 256\n  sweep: {transpose_b: [false, true]}\n");
  char cfg[512];
  snprintf(cfg, sizeof cfg, "%s/t.yaml", d.path);
  mb_plan_t *plan = NULL;
  assert_int_equal(mb_plan_load(cfg, NULL, &plan), MB_OK);
  assert_int_equal(mb_plan_count(plan), 4);
  const int64_t want[4][3] = {
      {64, 128, 32}, {64, 128, 32}, {16, 256, 8}, {16, 256, 8}};
  for (size_t i = 0; i < 4; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    for (int k = 0; k < 3; k++) assert_int_equal(e.params.shape[k], want[i][k]);
    assert_int_equal(!!(e.params.flags & MB_PARAM_TRANS_B), (int)(i % 2));
  }
  mb_plan_destroy(plan);
  /* a column the benchmark does not take: the file and row named */
  write_file(&d, "s.csv", "m,k,n,depth\n8,8,8,3\n");
  expect_load_error(cfg, "csv_shapes(s.csv:2)", "no parameter \"depth\"");
  write_file(&d, "s.csv", "m,k,n\n8,8,8,9\n");
  expect_load_error(cfg, "s.csv:2: 4 fields", "3 columns");
  write_file(&d, "s.csv", "m,k,n\n\"8,8,8\n");
  expect_load_error(cfg, "s.csv:2: a quoted field is not closed", NULL);
  write_file(&d, "s.csv", "");
  expect_load_error(cfg, "no header row", NULL);
  /* missing: an error naming the path as written */
  write_file(&d, "t.yaml",
             "global: {}\nbenchmarks:\n"
             "- {name: gemm_generalized, csv_shapes: none.csv}\n");
  expect_load_error(cfg,
                    "benchmarks[0].csv_shapes: csv_shapes file "
                    "\"none.csv\" not found",
                    NULL);
  remove_dir(&d);
  /* a URL cannot be fetched: that item is skipped saying so */
  plan = test_plan_parse(
      "global: {}\nbenchmarks:\n"
      "- {name: gemm_generalized, csv_shapes: 'https://x/s.csv'}\n"
      "- {name: simple_add, size: 64}\n");
  assert_int_equal(mb_plan_count(plan), 2);
  assert_contains(test_plan_entry(plan, 0).skip_reason, "is a URL");
  assert_string_equal(test_plan_entry(plan, 1).skip_reason, "");
  mb_plan_destroy(plan);
}

/* Upstream's file names configs/shapes/matrix_shapes.csv from its
 * repository's root: found from the config's directory up. */
static void test_upstream_csv_loader(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/current/test_csv_loader.yaml");
  assert_int_equal(mb_plan_count(plan), 3);
  const int64_t want[3] = {512, 1024, 2048};
  for (size_t i = 0; i < 3; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.skip_reason, "");
    assert_int_equal(e.params.shape[0], want[i]);
    assert_int_equal(e.params.dtype, MB_DTYPE_F8E4M3);
  }
  mb_plan_destroy(plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quant_dtype),
      cmocka_unit_test(test_upstream_inference_quantization),
      cmocka_unit_test(test_model_preset),
      cmocka_unit_test(test_upstream_study),
      cmocka_unit_test(test_csv_shapes),
      cmocka_unit_test(test_upstream_csv_loader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
