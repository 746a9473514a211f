/* The JAX suite's names we do not run (issue 23 item 7: skipped entries
 * saying why, in both layouts; a name or dtype the suite does not define
 * stays an error) and its current layout (item 8: global: + benchmarks:
 * [{name, sweep}]), through the public plan API, on upstream's own config
 * files (tests/configs/jax/current/) and small ones written here. */
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

static void expect_skip(const mb_plan_t *plan, size_t i, const char *name,
                        const char *why) {
  mb_plan_entry_t e = test_plan_entry(plan, i);
  assert_string_equal(e.name, name);
  assert_contains(e.skip_reason, why);
}

/* ---- item 7: the legacy layout ------------------------------------------ */

/* Every name of BENCHMARK_MAP in upstream's Ironwood/src/run_benchmark.py
 * (947f49d): none is an input error. */
static void test_legacy_every_name_defined(void **state) {
  (void)state;
  static const char *const k_names[] = {"all_gather",
                                        "psum",
                                        "psum_scatter",
                                        "all_to_all",
                                        "ppermute",
                                        "send_recv",
                                        "naive_matmul",
                                        "single_host_naive_matmul",
                                        "multilayer_collective_matmul",
                                        "collective_matmul_one_direction",
                                        "collective_matmul_two_directions",
                                        "numpy_convolve",
                                        "scipy_signal_convolve",
                                        "scipy_signal_convolve2d",
                                        "lax_conv_general_dilated",
                                        "tokamax_splash_attention",
                                        "single_device_hbm_copy",
                                        "gemm_simple",
                                        "gemm_simple_with_dtype",
                                        "gemm_multiple_run",
                                        "gemm_throttling",
                                        "gemm",
                                        "gemm_accum",
                                        "quantization",
                                        "transpose_quantization",
                                        "quantization_static_scaling",
                                        "transpose_quantization_static_scaling",
                                        "swiglu_fwd",
                                        "swiglu_bwd",
                                        "rmsnorm_fwd",
                                        "rmsnorm_bwd",
                                        "add",
                                        "gemm_fp8_rowwise",
                                        "gemm_fp8_b128_fp32",
                                        "gemm_fp8_rowwise_static_scaling",
                                        "gemm_fp8_b128_fp32_static_scaling",
                                        "gemm_mxfp8_b32",
                                        "gemm_mxfp8_b32_static_scaling",
                                        "gemm_fp8_rowwise_w_dequantize",
                                        "inference_add",
                                        "inference_rmsnorm",
                                        "inference_silu_mul",
                                        "inference_sigmoid",
                                        "host_device"};
  for (size_t i = 0; i < sizeof k_names / sizeof *k_names; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "benchmarks:\n- benchmark_name: %s\n"
             "  benchmark_params: [{m: 64, k: 64, n: 64}]\n",
             k_names[i]);
    mb_plan_t *plan = NULL;
    mb_status_t st = mb_plan_parse(text, strlen(text), "t.yaml", NULL, &plan);
    /* A name we run may refuse these params; none is "not defined". */
    if (st != MB_OK && strstr(mb_error_last(), "not a benchmark of"))
      fail_msg("%s: %s", k_names[i], mb_error_last());
    if (st == MB_OK && *test_plan_entry(plan, 0).skip_reason)
      assert_contains(test_plan_entry(plan, 0).skip_reason,
                      "defined by the JAX suite");
    mb_plan_destroy(plan);
  }
}

static void test_legacy_skips_and_runs_the_rest(void **state) {
  (void)state;
  static const char k_text[] =
      "benchmarks:\n"
      "- benchmark_name: add\n"
      "  benchmark_params: [{m: 64, n: 64, num_runs: 3}]\n"
      "- benchmark_name: numpy_convolve\n"
      "  csv_path: /tmp/mb_jax2\n"
      "  benchmark_sweep_params: [{m: 64, k: 64, n: 64}]\n"
      "- benchmark_name: naive_matmul\n"
      "  benchmark_sweep_params: [{matrix_dim: 8}]\n"
      "- benchmark_name: host_device\n"
      "  benchmark_sweep_params: [{data_size_mib: 1}]\n"
      "- benchmark_name: single_device_hbm_copy\n"
      "  benchmark_sweep_params:\n"
      "  - {num_elements: 1024, dtype_list: [bfloat16, float4], num_runs: 2}\n";
  mb_plan_options_t opts = MB_PLAN_OPTIONS_INIT;
  opts.backend = "cpu"; /* does not lift a skip that is the library's */
  mb_plan_t *plan = test_plan_parse_opts(k_text, &opts);
  assert_string_equal(mb_plan_schema(plan), "jax");
  assert_int_equal(mb_plan_count(plan), 7); /* host_device: h2d and d2h */
  assert_string_equal(test_plan_entry(plan, 0).skip_reason, "");
  expect_skip(plan, 1, "numpy_convolve",
              "benchmark_name \"numpy_convolve\" (1-D convolution, NumPy on "
              "the host) is defined by the JAX suite but not available in "
              "libmicrobench yet: convolution is not an op of libmicrobench "
              "yet");
  assert_string_equal(test_plan_entry(plan, 1).op, "gemm");
  assert_string_equal(test_plan_entry(plan, 1).csv_path,
                      "/tmp/mb_jax2/numpy_convolve.csv");
  expect_skip(plan, 2, "naive_matmul",
              "a matmul sharded over a device mesh with its collectives is "
              "not an op of libmicrobench yet");
  /* 1 MiB of f32 in rows of 128, there and back */
  const char *dirs[] = {"h2d", "d2h"};
  for (size_t i = 0; i < 2; i++) {
    char name[64];
    snprintf(name, sizeof name, "host_device/1MiB/%s", dirs[i]);
    assert_string_equal(test_plan_entry(plan, 3 + i).name, name);
    assert_string_equal(test_plan_entry(plan, 3 + i).op, dirs[i]);
    assert_string_equal(test_plan_entry(plan, 3 + i).skip_reason, "");
  }
  assert_string_equal(test_plan_entry(plan, 5).skip_reason, "");
  /* float4 is f4e2m1 (packed two per byte): copied like any dtype. */
  assert_string_equal(test_plan_entry(plan, 6).name,
                      "single_device_hbm_copy/1024/float4");
  assert_string_equal(test_plan_entry(plan, 6).skip_reason, "");
  assert_int_equal(test_plan_entry(plan, 6).params.dtype, MB_DTYPE_F4E2M1);
  /* The skipped ones still make results (JSON with every dimension). */
  for (size_t i = 1; i < 3; i++) {
    mb_result_t *r = NULL;
    assert_int_equal(mb_plan_run(g_ctx, plan, i, &r), MB_OK);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_result_info(r, &info);
    assert_int_equal(info.status, MB_RESULT_SKIPPED);
    assert_contains(mb_result_json(r), "\"block\"");
    mb_result_destroy(r);
  }
  mb_plan_destroy(plan);
}

/* gemm_simple_with_dtype reads str_to_dtype's names; gemm_throttling runs
 * gemm_simple in its dtype (float8 by default), gap_strategy recorded. */
static void test_legacy_gemm_dtype_names(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_parse(
      "benchmarks:\n"
      "- benchmark_name: gemm_simple_with_dtype\n"
      "  benchmark_sweep_params:\n"
      "  - {m: 16, k: 32, n: 8, in_dtype_str: FP8, out_dtype_str: fp32}\n"
      "  - {m: 16, k: 32, n: 8, in_dtype_str: bf16, out_dtype_str: fp32}\n"
      "- benchmark_name: gemm_throttling\n"
      "  benchmark_sweep_params:\n"
      "  - {m: 16, k: 32, n: 8, num_runs: 4, gap_strategy: "
      "data_gen_every_iter_block_every_iter}\n");
  assert_int_equal(mb_plan_count(plan), 3);
  const struct {
    const char *name;
    mb_dtype_t in, out;
  } want[] = {
      {"gemm_simple_with_dtype/16x32x8/FP8->fp32", MB_DTYPE_F8E4M3,
       MB_DTYPE_F32},
      {"gemm_simple_with_dtype/16x32x8/bf16->fp32", MB_DTYPE_BF16,
       MB_DTYPE_F32},
      {"gemm_throttling/16x32x8", MB_DTYPE_F8E4M3, MB_DTYPE_BF16},
  };
  for (size_t i = 0; i < 3; i++) {
    const mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.name, want[i].name);
    assert_string_equal(e.skip_reason, "");
    mb_result_t *r = NULL;
    assert_int_equal(mb_plan_run(g_ctx, plan, i, &r), MB_OK);
    assert_true(test_result_passes(r, e.name));
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_result_info(r, &info);
    assert_int_equal(info.params.dtype, want[i].in);
    assert_int_equal(info.params.dtype_out, want[i].out);
    if (i == 2) assert_contains(mb_result_json(r), "data_gen_every_iter");
    mb_result_destroy(r);
  }
  mb_plan_destroy(plan);
  test_plan_expect_error(
      "benchmarks:\n- benchmark_name: gemm_simple_with_dtype\n"
      "  benchmark_params: [{m: 8, k: 8, n: 8, in_dtype_str: fp4, "
      "out_dtype_str: bf16}]\n",
      "unknown in_dtype_str \"fp4\"; valid: fp8", NULL);
}

static void test_legacy_undefined_names_are_errors(void **state) {
  (void)state;
  test_plan_expect_error(
      "benchmarks:\n- benchmark_name: gemm_mxfp9\n"
      "  benchmark_params: [{m: 8}]\n",
      "bad.yaml:2: benchmarks[0].benchmark_name: benchmark_name "
      "\"gemm_mxfp9\" is not a benchmark of the JAX suite; its "
      "benchmarks: all_gather, psum",
      "gemm_mxfp8_b32, gemm_mxfp8_b32_static_scaling");
  test_plan_expect_error(
      "benchmarks:\n- benchmark_name: inference_add\n"
      "  benchmark_params: [{m: 8, n: 8, dtype: float4_e2m1fn}]\n",
      "bad.yaml:3: benchmarks[0].benchmark_params[0].dtype: unknown "
      "dtype \"float4_e2m1fn\"; valid: bfloat16",
      "int32, float4");
}

/* ---- item 8: the current layout ----------------------------------------- */

static void test_sweep_detected(void **state) {
  (void)state;
  static const char *const k_jax[] = {
      "global: {num_runs: 2}\nbenchmarks:\n- {name: simple_add, size: 64}\n",
      "benchmarks:\n- name: simple_add\n  sweep: {size: [64]}\n",
      "benchmarks:\n- {name: simple_add, size: 64}\n",
      "hardware: {tflops: 1}\nbenchmarks:\n- {name: simple_add}\n"};
  for (size_t i = 0; i < sizeof k_jax / sizeof *k_jax; i++) {
    mb_plan_t *plan = test_plan_parse(k_jax[i]);
    assert_string_equal(mb_plan_schema(plan), "jax");
    assert_string_equal(test_plan_entry(plan, 0).op, "add");
    mb_plan_destroy(plan);
  }
  /* A native item names its op: still native, even named like a JAX one. */
  mb_plan_t *plan = test_plan_parse(
      "benchmarks:\n- {name: simple_add, op: gemm, shapes: [[8, 8, 8]]}\n");
  assert_string_equal(mb_plan_schema(plan), "native");
  mb_plan_destroy(plan);
}

static void test_sweep_upstream_gemm_and_hbm(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/current/gemm_generalized.yaml");
  assert_string_equal(mb_plan_schema(plan), "jax");
  assert_int_equal(mb_plan_count(plan), 4); /* m 1024, 2048, 4096; one */
  static const int64_t k_m[] = {1024, 2048, 4096, 2048};
  for (size_t i = 0; i < 4; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.op, "gemm");
    assert_int_equal(e.params.shape[0], k_m[i]);
    assert_int_equal(e.params.shape[1], 2048);
    assert_int_equal(e.params.shape[2], 2048);
    /* in_dtype's default, not global's dtype (matmul.py ignores it) */
    assert_int_equal(e.params.dtype, MB_DTYPE_F8E4M3);
    assert_int_equal(e.params.dtype_out, MB_DTYPE_BF16);
    assert_int_equal(e.spec.criterion, MB_CRITERION_FIXED);
    assert_int_equal(e.spec.samples, 5);
    assert_int_equal(e.spec.warmup_runs, 2);
  }
  assert_string_equal(
      test_plan_entry(plan, 0).name,
      "gemm_generalized/1024x2048x2048/float8_e4m3fn->bfloat16");
  mb_plan_destroy(plan);
  plan = test_plan_load("jax/current/hbm_bandwidth.yaml");
  assert_int_equal(mb_plan_count(plan), 11); /* 2^19 .. 2^29, end included */
  for (size_t i = 0; i < 11; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.op, "copy");
    assert_int_equal(e.params.shape[0], 1);
    assert_int_equal(e.params.shape[1], INT64_C(524288) << i);
    assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
  }
  mb_plan_destroy(plan);
}

static void test_sweep_upstream_skips(void **state) {
  (void)state;
  /* (the collectives run: test_plan_jax5) */
  mb_plan_t *plan =
      test_plan_parse("global: {}\nbenchmarks:\n- {name: device_to_device}\n");
  assert_int_equal(mb_plan_count(plan), 1);
  expect_skip(plan, 0, "device_to_device",
              "name \"device_to_device\" (copies between two devices) is "
              "defined by the JAX suite but not available in libmicrobench "
              "yet: a copy between two devices is not mapped to an op of "
              "ours yet");
  mb_plan_destroy(plan);
  /* 11 sizes each way, f32 in rows of 128 */
  plan = test_plan_load("jax/current/host_device.yaml");
  assert_int_equal(mb_plan_count(plan), 22);
  assert_string_equal(test_plan_entry(plan, 0).name,
                      "host_to_device/1/float32/MiB");
  assert_string_equal(test_plan_entry(plan, 0).op, "h2d");
  assert_string_equal(test_plan_entry(plan, 0).skip_reason, "");
  assert_string_equal(test_plan_entry(plan, 21).name,
                      "device_to_host/1024/float32/MiB");
  assert_string_equal(test_plan_entry(plan, 21).op, "d2h");
  mb_plan_destroy(plan);
  /* 4 seq_len x causal x mode; fwd runs as grouped-query attention (8 K/V
   * heads for 128 query heads, in the name), bwd as attention_bwd */
  plan = test_plan_load("jax/current/attention_jax_flash.yaml");
  assert_int_equal(mb_plan_count(plan), 16);
  mb_plan_entry_t fwd = test_plan_entry(plan, 0);
  assert_string_equal(
      fwd.name, "attention_flashed/1x128x4096x256/bfloat16/fwd/kv8/causal");
  assert_string_equal(fwd.skip_reason, "");
  assert_int_equal(fwd.params.shape[1], 128);
  assert_int_equal(fwd.params.kv_heads, 8);
  assert_int_equal(fwd.params.flags, MB_PARAM_CAUSAL);
  mb_plan_entry_t bwd = test_plan_entry(plan, 1);
  assert_string_equal(
      bwd.name, "attention_flashed/1x128x4096x256/bfloat16/bwd/kv8/causal");
  assert_string_equal(bwd.op, "attention_bwd");
  assert_string_equal(bwd.skip_reason, "");
  assert_int_equal(bwd.params.kv_heads, 8);
  assert_int_equal(bwd.params.flags, MB_PARAM_CAUSAL);
  mb_plan_destroy(plan);
  /* num_q_heads not a multiple of num_kv_heads: skipped in the op's words */
  plan = test_plan_parse(
      "benchmarks:\n- name: attention_flashed\n  batch: 1\n"
      "  num_q_heads: 6\n  num_kv_heads: 4\n  head_dim: 16\n"
      "  seq_len: 64\n");
  expect_skip(plan, 0, "attention_flashed/1x6x64x16/bfloat16/fwd/kv4/causal",
              "H = 6 query heads is not a multiple of kv_heads = 4");
  mb_plan_destroy(plan);
  plan = test_plan_load("jax/current/sample.yaml");
  /* every collective item sweeps 3 matrix_dims (test_plan_jax5) */
  assert_int_equal(mb_plan_count(plan), 4 + 5 * 3 + 11);
  for (size_t i = 0; i < mb_plan_count(plan); i++)
    assert_string_equal(test_plan_entry(plan, i).skip_reason, "");
  assert_string_equal(test_plan_entry(plan, 4).name,
                      "all_reduce/512/bfloat16/sum/mesh=4x4x8");
  mb_plan_destroy(plan);
}

static void test_sweep_ranges_and_layers(void **state) {
  (void)state;
  /* No multiplier: +increase_by, default 1; global < item < sweep. */
  mb_plan_t *plan = test_plan_parse(
      "global: {num_runs: 4, warmup_tries: 0, dtype: float32}\n"
      "benchmarks:\n"
      "- name: hbm_bandwidth\n"
      "  num_runs: 3\n"
      "  sweep:\n"
      "    size: {start: 8, end: 10}\n"
      "    num_runs: [7]\n"
      "- name: hbm_bandwidth\n"
      "  sweep: {size: {start: 8, end: 12, multiplier: 1, increase_by: 4}}\n"
      "- name: gemm_generalized\n"
      "  sweep:\n"
      "    in_dtype: [bfloat16, float4_e2m1fn]\n"
      "    transpose_b: [true]\n");
  assert_int_equal(mb_plan_count(plan), 3 + 2 + 2);
  for (size_t i = 0; i < 3; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_int_equal(e.params.shape[1], 8 + (int64_t)i);
    assert_int_equal(e.params.dtype, MB_DTYPE_F32);
    assert_int_equal(e.spec.samples, 7);
    assert_int_equal(e.spec.warmup_runs, 0);
  }
  assert_int_equal(test_plan_entry(plan, 4).params.shape[1], 12);
  assert_int_equal(test_plan_entry(plan, 4).spec.samples, 4);
  mb_plan_entry_t g = test_plan_entry(plan, 5);
  assert_string_equal(g.name,
                      "gemm_generalized/1024x1024x1024/"
                      "bfloat16->bfloat16/tb");
  assert_true(g.params.flags & MB_PARAM_TRANS_B);
  assert_string_equal(g.skip_reason, "");
  /* FP4 with B stored N x K (packed along K) runs. */
  g = test_plan_entry(plan, 6);
  assert_string_equal(g.name,
                      "gemm_generalized/1024x1024x1024/"
                      "float4_e2m1fn->bfloat16/tb");
  assert_int_equal(g.params.dtype, MB_DTYPE_F4E2M1);
  assert_true(g.params.flags & MB_PARAM_TRANS_B);
  assert_string_equal(g.skip_reason, "");
  mb_plan_destroy(plan);
  /* More than 1000 combinations: the first 1000, as the suite, noted. */
  plan = test_plan_parse(
      "benchmarks:\n- name: simple_add\n"
      "  sweep: {size: {start: 1, end: 100}, num_runs: "
      "{start: 1, end: 20}}\n");
  assert_int_equal(mb_plan_count(plan), 1000);
  int noted = 0;
  for (size_t i = 0; i < mb_plan_note_count(plan); i++)
    noted |= strstr(mb_plan_note(plan, i), "the first 1000 run") != NULL;
  assert_true(noted);
  mb_plan_destroy(plan);
}

static void test_sweep_errors(void **state) {
  (void)state;
  /* A range longer than any sweep can run is refused, not built (the
   * fuzzer's: seconds to expand under ASan). */
  test_plan_expect_error(
      "benchmarks:\n- name: hbm_bandwidth\n"
      "  sweep: {size: {start: 1024, end: 3088888888872, increase_by: "
      "2048}}\n",
      "sweep.size", "more than 1000 values");
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n- {name: gemm_generalised}\n",
      "bad.yaml:3: benchmarks[0].name: name \"gemm_generalised\" is "
      "not a benchmark of the JAX suite; its benchmarks: "
      "gemm_generalized, hbm_bandwidth",
      "host_to_device, device_to_host");
  test_plan_expect_error(
      "global: {dtype: float99}\nbenchmarks:\n- {name: simple_add}\n"
      "- {name: hbm_bandwidth}\n",
      "bad.yaml:1: global.dtype: unknown dtype \"float99\"; valid: "
      "bfloat16, float32",
      "float4_e2m1fn");
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n- name: rmsnorm\n  size: 8\n",
      "bad.yaml:4: benchmarks[0].size: rmsnorm takes no parameter "
      "\"size\"; valid: warmup_tries",
      "batch, dim");
  test_plan_expect_error(
      "global: {op_type: copy}\nbenchmarks:\n- {name: swiglu}\n",
      "global.op_type: swiglu takes no parameter \"op_type\"", NULL);
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n- name: hbm_bandwidth\n"
      "  sweep: {op_type: [copy, sum]}\n",
      "bad.yaml:4: benchmarks[0].sweep.op_type: unknown op_type "
      "\"sum\"; valid: copy, scale, add, triad",
      NULL);
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n- name: simple_add\n"
      "  sweep: {size: {start: 8, end: 64, multiplier: 0.5}}\n",
      "bad.yaml:4: benchmarks[0].sweep.size: multiplier 0.5 would "
      "never pass end",
      NULL);
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n- name: simple_add\n"
      "  sweep: {size: {start: 8, end: 64, step: 2}}\n",
      "unknown key", "step");
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n- {name: simple_add, size: -8}\n",
      "benchmarks[0].size", NULL);
  test_plan_expect_error("global: [1]\nbenchmarks:\n- {name: simple_add}\n",
                         "bad.yaml:1: global: expected a map, got a list",
                         NULL);
}

/* The small file runs here: every mapped benchmark passes its check. */
static void test_sweep_runs_on_cpu(void **state) {
  (void)state;
  mb_plan_options_t opts = MB_PLAN_OPTIONS_INIT;
  opts.backend = "cpu";
  char path[4096];
  mb_plan_t *plan = NULL;
  snprintf(path, sizeof path, "%s/jax/tiny_sweep.yaml", MB_TEST_CONFIG_DIR);
  assert_int_equal(mb_plan_load(path, &opts, &plan), MB_OK);
  size_t ran = 0, skipped = 0;
  for (size_t i = 0; i < mb_plan_count(plan); i++) {
    mb_result_t *r = NULL;
    assert_int_equal(mb_plan_run(g_ctx, plan, i, &r), MB_OK);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_result_info(r, &info);
    mb_correctness_t c = MB_CORRECTNESS_INIT;
    mb_result_correctness(r, &c);
    if (info.status == MB_RESULT_SKIPPED) {
      skipped++;
    } else {
      if (info.status != MB_RESULT_OK || (c.checked && !c.pass))
        fail_msg("%s: %s", test_plan_entry(plan, i).name, info.reason);
      ran++;
    }
    mb_result_destroy(r);
  }
  assert_int_equal(ran, 19);    /* host_to_device and triad included */
  assert_int_equal(skipped, 2); /* all_reduce, rope's odd D */
  mb_plan_destroy(plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_legacy_every_name_defined),
      cmocka_unit_test(test_legacy_skips_and_runs_the_rest),
      cmocka_unit_test(test_legacy_gemm_dtype_names),
      cmocka_unit_test(test_legacy_undefined_names_are_errors),
      cmocka_unit_test(test_sweep_detected),
      cmocka_unit_test(test_sweep_upstream_gemm_and_hbm),
      cmocka_unit_test(test_sweep_upstream_skips),
      cmocka_unit_test(test_sweep_ranges_and_layers),
      cmocka_unit_test(test_sweep_errors),
      cmocka_unit_test(test_sweep_runs_on_cpu),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
