/* The JAX suite's transformer_layer_moe in its current layout: it runs as
 * our moe_layer_proxy composite (lib/plan/jax_moe.c), shape [1, mslen,
 * model_dim] in `dtype`; tp, etp, cp, ep are checked, recorded in
 * config.params and named; a small config runs on the CPU with every step
 * checked; a dtype the composite does not take is skipped saying why;
 * parameters the benchmark does not have are errors. */
#include "test_plan_util.h"

static mb_context_t *g_ctx;

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static void expect_error(const char *text, const char *what) {
  mb_plan_t *plan = NULL;
  assert_int_equal(mb_plan_parse(text, strlen(text), "t.yaml", NULL, &plan),
                   MB_ERR_PARSE);
  assert_null(plan);
  assert_contains(mb_error_last(), what);
}

/* Upstream's TransformerLayerParams defaults: [1, 1024, 7168] bf16. */
static void test_defaults(void **state) {
  (void)state;
  mb_plan_t *plan =
      test_plan_parse("benchmarks:\n- name: transformer_layer_moe\n");
  assert_int_equal(mb_plan_count(plan), 1);
  mb_plan_entry_t e = test_plan_entry(plan, 0);
  assert_string_equal(e.name, "transformer_layer_moe/1024x7168/bfloat16");
  assert_string_equal(e.group, "transformer_layer_moe");
  assert_string_equal(e.op, "moe_layer_proxy");
  assert_string_equal(e.model, "moe_layer_proxy");
  assert_string_equal(e.mode, "inference");
  assert_string_equal(e.skip_reason, "");
  assert_int_equal(e.params.ndim, 3);
  assert_int_equal(e.params.shape[0], 1);
  assert_int_equal(e.params.shape[1], 1024);
  assert_int_equal(e.params.shape[2], 7168);
  assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
  /* The FLOP model is what runs: 20 mslen D^2 in the four GEMMs (upstream
   * counts 24) and 8 mslen D in the layernorm and the two adds. */
  const double s = 1024, d = 7168;
  assert_true(e.flop == 20 * s * d * d + 8 * s * d);
  mb_plan_destroy(plan);
}

/* The item as upstream's study_llm_200b.yaml writes it: the LLM-200B
 * preset gives model_dim (16384), the item mslen and the degrees. */
static void test_study_item(void **state) {
  (void)state;
  /* global: makes it the current layout (an item with `model` alone
   * reads as a native one). */
  mb_plan_t *plan = test_plan_parse(
      "global:\n"
      "  dtype: bfloat16\n"
      "benchmarks:\n"
      "- name: transformer_layer_moe\n"
      "  model: \"LLM-200B\"\n"
      "  tp: 4\n"
      "  etp: 1\n"
      "  cp: 2\n"
      "  ep: 16\n"
      "  mslen: 8192\n");
  assert_int_equal(mb_plan_count(plan), 1);
  mb_plan_entry_t e = test_plan_entry(plan, 0);
  assert_string_equal(e.name,
                      "transformer_layer_moe/8192x16384/bfloat16/tp4/cp2/ep16");
  assert_string_equal(e.op, "moe_layer_proxy");
  assert_string_equal(e.skip_reason, "");
  assert_int_equal(e.params.shape[1], 8192);
  assert_int_equal(e.params.shape[2], 16384);
  mb_plan_destroy(plan);
}

/* The brief's small config, as upstream's study_llm_200b.yaml writes the
 * item (its parallelism degrees too), run on the CPU. */
static void test_small_config_runs(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_parse(
      "global:\n"
      "  warmup_tries: 1\n"
      "  num_runs: 2\n"
      "  dtype: bfloat16\n"
      "benchmarks:\n"
      "- name: transformer_layer_moe\n"
      "  tp: 4\n"
      "  etp: 1\n"
      "  cp: 2\n"
      "  ep: 16\n"
      "  model_dim: 256\n"
      "  mslen: 64\n");
  assert_int_equal(mb_plan_count(plan), 1);
  mb_plan_entry_t e = test_plan_entry(plan, 0);
  /* The degrees other than 1 are in the name. */
  assert_string_equal(e.name,
                      "transformer_layer_moe/64x256/bfloat16/tp4/cp2/ep16");
  assert_string_equal(e.skip_reason, "");
  mb_result_t *r = NULL;
  assert_int_equal(mb_plan_run(g_ctx, plan, 0, &r), MB_OK);
  assert_true(test_result_passes(r, e.name));
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_accuracy_t a = MB_ACCURACY_INIT;
  mb_result_info(r, &info);
  mb_result_accuracy(r, &a);
  assert_string_equal(info.op, "moe_layer_proxy");
  assert_string_equal(info.impl, "graph");
  assert_string_equal(info.model, "moe_layer_proxy");
  assert_true(a.checked && a.pass);
  /* Every step of the graph was run and timed (and checked: the check
   * folds each step's in, worst_step naming the worst). */
  assert_int_equal(mb_result_step_count(r), 7);
  const char *json = mb_result_json(r);
  assert_contains(json, "\"worst_step\"");
  assert_contains(json, "\"benchmark\":\"transformer_layer_moe\"");
  /* The degrees as written, in config.params. */
  assert_contains(json, "\"tp\":4");
  assert_contains(json, "\"etp\":1");
  assert_contains(json, "\"cp\":2");
  assert_contains(json, "\"ep\":16");
  mb_result_destroy(r);
  mb_plan_destroy(plan);
}

/* A sweep over a degree alone gives distinct names; each dtype is the
 * suite's name; one our composite does not take is skipped saying why. */
static void test_sweeps_and_dtypes(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_parse(
      "benchmarks:\n"
      "- name: transformer_layer_moe\n"
      "  num_runs: 2\n"
      "  model_dim: 64\n"
      "  mslen: 8\n"
      "  sweep:\n"
      "    ep: [1, 8]\n"
      "    dtype: [float32, float16, float8_e4m3fn]\n");
  assert_int_equal(mb_plan_count(plan), 6);
  static const char *const names[] = {
      "transformer_layer_moe/8x64/float32",
      "transformer_layer_moe/8x64/float16",
      "transformer_layer_moe/8x64/float8_e4m3fn",
      "transformer_layer_moe/8x64/float32/ep8",
      "transformer_layer_moe/8x64/float16/ep8",
      "transformer_layer_moe/8x64/float8_e4m3fn/ep8"};
  for (size_t i = 0; i < 6; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.name, names[i]);
    if (i % 3 == 2) {
      assert_contains(e.skip_reason, "the JAX suite runs this");
      assert_contains(e.skip_reason, "moe_layer_proxy");
      continue;
    }
    assert_string_equal(e.skip_reason, "");
    assert_int_equal(e.params.dtype, i % 3 ? MB_DTYPE_F16 : MB_DTYPE_F32);
  }
  mb_result_t *r = NULL;
  assert_int_equal(mb_plan_run(g_ctx, plan, 0, &r), MB_OK);
  assert_true(test_result_passes(r, "float32"));
  mb_result_destroy(r);
  mb_plan_destroy(plan);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("benchmarks:\n- name: transformer_layer_moe\n  tp: 0\n",
               "benchmarks[0].tp");
  expect_error("benchmarks:\n- name: transformer_layer_moe\n  ep: two\n",
               "benchmarks[0].ep");
  /* Not a parameter of TransformerLayerParams: upstream refuses it too. */
  expect_error(
      "benchmarks:\n- name: transformer_layer_moe\n"
      "  num_experts: 8\n",
      "takes no parameter \"num_experts\"");
  expect_error(
      "benchmarks:\n- name: transformer_layer_moe\n  sweep:\n"
      "    dim: [64]\n",
      "mslen");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_study_item),
      cmocka_unit_test(test_small_config_runs),
      cmocka_unit_test(test_sweeps_and_dtypes),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
