/* The JAX suite's static-scaling GEMMs and tokamax_splash_attention (issue
 * 23 items 3 and 6): each legacy name maps to the op, shape, dtypes,
 * scaling and flags expected; splash attention's grouped-query
 * combinations (kv_heads < q_heads) run as our attention op's kv_heads,
 * mode bwd as attention_bwd, combined as attention then attention_bwd (two
 * entries), those it cannot run (another V head dim, q_heads not a
 * multiple of kv_heads) are skipped saying why, and upstream's own
 * attention.yaml plans. */
#include "test_plan_util.h"

/* Quantize-inputs from bf16 with every scale 0.5 (224 / 448), bf16 out. */
static void test_static_gemm_names(void **state) {
  (void)state;
  static const struct {
    const char *bench;
    mb_scaling_t sa, sb; /* after resolve */
  } k_rows[] = {
      {"gemm_fp8_rowwise_static_scaling",
       {MB_SCALE_ROW, {1, 256}},
       {MB_SCALE_COL, {256, 1}}},
      {"gemm_fp8_b128_fp32_static_scaling",
       {MB_SCALE_BLOCK, {1, 128}},
       {MB_SCALE_BLOCK, {128, 128}}},
  };
  for (size_t i = 0; i < sizeof k_rows / sizeof *k_rows; i++) {
    char doc[512];
    snprintf(doc, sizeof doc,
             "benchmarks:\n- benchmark_name: %s\n  num_runs: 3\n"
             "  benchmark_sweep_params:\n  - {m: 64, k: 256, n: 128}\n",
             k_rows[i].bench);
    mb_plan_t *plan = test_plan_parse(doc);
    mb_plan_entry_t e = test_plan_entry(plan, 0);
    assert_string_equal(e.op, k_rows[i].bench);
    assert_string_equal(e.skip_reason, "");
    mb_op_params_t p = e.params;
    assert_int_equal(mb_op_apply_alias(e.op, &p), MB_OK);
    assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
    assert_int_equal(p.ndim, 3);
    assert_int_equal(p.shape[0], 64);
    assert_int_equal(p.shape[1], 256);
    assert_int_equal(p.shape[2], 128);
    assert_int_equal(p.dtype, MB_DTYPE_BF16);
    assert_int_equal(p.dtype_q, MB_DTYPE_F8E4M3);
    assert_int_equal(p.dtype_out, MB_DTYPE_BF16);
    assert_int_equal(p.dtype_acc, MB_DTYPE_F32);
    assert_int_equal(p.flags, MB_PARAM_QUANTIZE_INPUTS | MB_PARAM_STATIC);
    assert_true(p.scale == 0.5);
    assert_int_equal(p.scale_a.mode, k_rows[i].sa.mode);
    assert_int_equal(p.scale_a.block[0], k_rows[i].sa.block[0]);
    assert_int_equal(p.scale_a.block[1], k_rows[i].sa.block[1]);
    assert_int_equal(p.scale_b.mode, k_rows[i].sb.mode);
    assert_int_equal(p.scale_b.block[0], k_rows[i].sb.block[0]);
    assert_int_equal(p.scale_b.block[1], k_rows[i].sb.block[1]);
    mb_plan_destroy(plan);
  }
}

/* One combination per row: the op (attention, or attention_bwd for mode
 * bwd), shape, K/V heads and causal flag, or why it skips. */
static void test_splash_attention(void **state) {
  (void)state;
  static const struct {
    const char *params, *name, *why; /* why "": runs */
    uint32_t flags;
    int64_t kv_heads; /* of a row that runs */
  } k_rows[] = {
      {"batch_size: 2, q_seq_len: 64, kv_seq_len: 96, q_heads: 4, "
       "kv_heads: 4, qk_head_dim: 32, v_head_dim: 32, mode: fwd, "
       "causal: true, num_samples: 10, tune_pallas_only: true",
       "tokamax_splash_attention/b2_h4_kvh4_q64_kv96_d32_fwd_causal", "",
       MB_PARAM_CAUSAL, 4},
      {"batch_size: 2, q_seq_len: 64, kv_seq_len: 96, q_heads: 4, "
       "kv_heads: 4, qk_head_dim: 32, v_head_dim: 32, causal: false",
       "tokamax_splash_attention/b2_h4_kvh4_q64_kv96_d32_fwd", "", 0, 4},
      /* the suite's default is causal */
      {"batch_size: 1, q_seq_len: 64, kv_seq_len: 64, q_heads: 2, "
       "kv_heads: 2, qk_head_dim: 16, v_head_dim: 16",
       "tokamax_splash_attention/b1_h2_kvh2_q64_kv64_d16_fwd_causal", "",
       MB_PARAM_CAUSAL, 2},
      /* grouped-query: 4 query heads per K/V head; multi-query */
      {"batch_size: 1, q_seq_len: 64, kv_seq_len: 64, q_heads: 8, "
       "kv_heads: 2, qk_head_dim: 16, v_head_dim: 16",
       "tokamax_splash_attention/b1_h8_kvh2_q64_kv64_d16_fwd_causal", "",
       MB_PARAM_CAUSAL, 2},
      {"batch_size: 1, q_seq_len: 64, kv_seq_len: 64, q_heads: 8, "
       "kv_heads: 1, qk_head_dim: 16, v_head_dim: 16, causal: false",
       "tokamax_splash_attention/b1_h8_kvh1_q64_kv64_d16_fwd", "", 0, 1},
      {"batch_size: 1, q_seq_len: 64, kv_seq_len: 64, q_heads: 6, "
       "kv_heads: 4, qk_head_dim: 16, v_head_dim: 16",
       "tokamax_splash_attention/b1_h6_kvh4_q64_kv64_d16_fwd_causal",
       "q_heads 6 is not a multiple of kv_heads 4", MB_PARAM_CAUSAL, 0},
      {"batch_size: 1, q_seq_len: 64, kv_seq_len: 64, q_heads: 2, "
       "kv_heads: 2, qk_head_dim: 16, v_head_dim: 32",
       "tokamax_splash_attention/b1_h2_kvh2_q64_kv64_d16_fwd_causal",
       "v_head_dim 32 != qk_head_dim 16", MB_PARAM_CAUSAL, 0},
      {"batch_size: 1, q_seq_len: 64, kv_seq_len: 64, q_heads: 8, "
       "kv_heads: 2, qk_head_dim: 16, v_head_dim: 16, mode: bwd",
       "tokamax_splash_attention/b1_h8_kvh2_q64_kv64_d16_bwd_causal", "",
       MB_PARAM_CAUSAL, 2},
  };
  for (size_t i = 0; i < sizeof k_rows / sizeof *k_rows; i++) {
    char doc[1024];
    snprintf(doc, sizeof doc,
             "benchmarks:\n- benchmark_name: tokamax_splash_attention\n"
             "  benchmark_sweep_params:\n  - {%s}\n",
             k_rows[i].params);
    mb_plan_t *plan = test_plan_parse(doc);
    mb_plan_entry_t e = test_plan_entry(plan, 0);
    const char *op =
        strstr(k_rows[i].name, "_bwd") ? "attention_bwd" : "attention";
    assert_string_equal(e.op, op);
    assert_string_equal(e.name, k_rows[i].name);
    if (*k_rows[i].why) {
      assert_contains(e.skip_reason, k_rows[i].why);
    } else {
      assert_string_equal(e.skip_reason, "");
      mb_op_params_t p = e.params;
      assert_int_equal(mb_op_resolve(mb_op_find(op), &p), MB_OK);
      assert_int_equal(p.ndim, 5);
      assert_int_equal(p.dtype, MB_DTYPE_F32);
      assert_int_equal(p.kv_heads, k_rows[i].kv_heads);
    }
    assert_int_equal(e.params.flags, k_rows[i].flags);
    mb_plan_destroy(plan);
  }
  mb_plan_t *plan = test_plan_parse(
      "benchmarks:\n- benchmark_name: tokamax_splash_attention\n"
      "  benchmark_params:\n  - {batch_size: 2, q_seq_len: 64, kv_seq_len: "
      "96, q_heads: 4, kv_heads: 4, qk_head_dim: 32, v_head_dim: 32}\n");
  mb_plan_entry_t e = test_plan_entry(plan, 0);
  const int64_t want[5] = {2, 4, 64, 96, 32};
  for (int d = 0; d < 5; d++) assert_int_equal(e.params.shape[d], want[d]);
  mb_plan_destroy(plan);
  /* combined: the forward, then the backward, one entry each (their times
   * add up to upstream's one), same shape and mask */
  plan = test_plan_parse(
      "benchmarks:\n- benchmark_name: tokamax_splash_attention\n"
      "  benchmark_params:\n  - {batch_size: 1, q_seq_len: 32, kv_seq_len: "
      "48, q_heads: 4, kv_heads: 2, qk_head_dim: 16, v_head_dim: 16, mode: "
      "combined}\n");
  assert_int_equal(mb_plan_count(plan), 2);
  static const char *const k_ops[] = {"attention", "attention_bwd"};
  for (size_t i = 0; i < 2; i++) {
    char name[128];
    snprintf(name, sizeof name,
             "tokamax_splash_attention/b1_h4_kvh2_q32_kv48_d16_combined_causal/"
             "%s",
             k_ops[i]);
    e = test_plan_entry(plan, i);
    assert_string_equal(e.name, name);
    assert_string_equal(e.op, k_ops[i]);
    assert_string_equal(e.skip_reason, "");
    assert_int_equal(e.params.kv_heads, 2);
    assert_int_equal(e.params.shape[3], 48);
    assert_int_equal(e.params.flags, MB_PARAM_CAUSAL);
  }
  mb_plan_destroy(plan);
}

/* A parameter splash attention does not take lists the ones it does; an
 * unknown mode is an error. */
static void test_splash_errors(void **state) {
  (void)state;
  static const char *const k_bad[][2] = {
      {"{batch_size: 1, m: 4}", "valid: batch_size, q_seq_len"},
      {"{batch_size: 1, q_seq_len: 8, kv_seq_len: 8, q_heads: 1, kv_heads: 1,"
       " qk_head_dim: 8, v_head_dim: 8, mode: sideways}",
       "unknown mode \"sideways\"; valid: fwd, bwd, combined"},
      {"{batch_size: 1, q_seq_len: 8}", "needs q_heads"},
  };
  for (size_t i = 0; i < sizeof k_bad / sizeof *k_bad; i++) {
    char doc[512];
    snprintf(doc, sizeof doc,
             "benchmarks:\n- benchmark_name: tokamax_splash_attention\n"
             "  benchmark_params:\n  - %s\n",
             k_bad[i][0]);
    mb_plan_t *plan = NULL;
    assert_int_equal(mb_plan_parse(doc, strlen(doc), "b.yaml", NULL, &plan),
                     MB_ERR_PARSE);
    assert_contains(mb_error_last(), k_bad[i][1]);
  }
}

/* Upstream's Ironwood/configs/training/attention.yaml: every combination
 * is GQA (q_heads 128, kv_heads 8), so the forward ones run as our
 * attention with kv_heads 8 and the backward ones as attention_bwd. */
static void test_upstream_attention_yaml(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof path, "%s/jax/attention.yaml", MB_TEST_CONFIG_DIR);
  mb_plan_t *plan = NULL;
  if (mb_plan_load(path, NULL, &plan) != MB_OK)
    fail_msg("%s: %s", path, mb_error_last());
  assert_int_equal(mb_plan_count(plan), 6 * 2 * 2);
  size_t fwd = 0;
  for (size_t i = 0; i < mb_plan_count(plan); i++) {
    const mb_plan_entry_t e = test_plan_entry(plan, i);
    assert_string_equal(e.skip_reason, "");
    assert_int_equal(e.params.shape[1], 128);
    assert_int_equal(e.params.kv_heads, 8);
    fwd += strstr(e.name, "_fwd") != NULL;
    assert_string_equal(e.op,
                        strstr(e.name, "_fwd") ? "attention" : "attention_bwd");
  }
  assert_int_equal(fwd, 6 * 2);
  mb_plan_destroy(plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_static_gemm_names),
      cmocka_unit_test(test_splash_attention),
      cmocka_unit_test(test_splash_errors),
      cmocka_unit_test(test_upstream_attention_yaml),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
