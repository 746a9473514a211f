/* Models and recipes: names, graphs, the composites' references against
 * naive ones written here, every recipe run on the CPU backend within its
 * accuracy floor and with every step checked, training gradients, a planted
 * wrong GEMM caught, an unsupported recipe skipped with its reason. */
#include <inttypes.h>
#include <math.h>

#include "models/graph.h"
#include "results/result.h"
#include "rng.h"
#include "test_op_util.h"

static mb_context_t *g_cpu, *g_wrong;

static int setup(void **state) {
  (void)state;
  g_cpu = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/working", test_env_dir("MB_TEST_FIXTURE_DIR"));
  g_wrong = test_context(dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_cpu);
  mb_context_destroy(g_wrong);
  return 0;
}

static mb_op_params_t mkn(int64_t m, int64_t k, int64_t n, mb_recipe_t r) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = m, p.shape[1] = k, p.shape[2] = n;
  p.recipe = (uint32_t)r;
  return p;
}

/* ---- names -------------------------------------------------------------- */

static void test_recipe_names(void **state) {
  (void)state;
  static const char *const torchao[] = {"baseline",
                                        "int8wo",
                                        "int8dq",
                                        "int4wo-32",
                                        "int4wo-64",
                                        "int4wo-128",
                                        "int4wo-256",
                                        "float8wo",
                                        "float8dq-tensor",
                                        "float8dq-row",
                                        "float8-block",
                                        "int4wo-32-hqq",
                                        "int4wo-64-hqq",
                                        "int4wo-128-hqq",
                                        "int4wo-256-hqq",
                                        "gemlitewo-4-32",
                                        "gemlitewo-4-64",
                                        "gemlitewo-4-128",
                                        "gemlitewo-4-256",
                                        "gemlitewo-8-32",
                                        "gemlitewo-8-64",
                                        "gemlitewo-8-128",
                                        "gemlitewo-8-256",
                                        "semi-sparse",
                                        "block-sparse",
                                        "int8dq-semi-sparse",
                                        "float8dq-tensor-semi-sparse",
                                        "float8dq-row-semi-sparse"};
  assert_int_equal(MB_RECIPE_COUNT, 28);
  for (int r = 0; r < MB_RECIPE_COUNT; r++) {
    mb_recipe_t back;
    assert_string_equal(mb_recipe_name((mb_recipe_t)r), torchao[r]);
    assert_int_equal(mb_recipe_from_name(torchao[r], &back), MB_OK);
    assert_int_equal(back, r);
    assert_true(mb_recipe_min_sqnr_db((mb_recipe_t)r) > 0);
  }
  assert_int_equal(mb_recipe_from_name("my_new_quantization", NULL),
                   MB_ERR_NOT_FOUND);
  assert_contains(mb_error_last(), "\"my_new_quantization\"");
  assert_contains(mb_error_last(), "int4wo-128");
  assert_contains(mb_error_last(), "float8-block");
  assert_true(mb_recipe_trains(MB_RECIPE_FLOAT8DQ_ROW));
  assert_true(mb_recipe_trains(MB_RECIPE_BASELINE));
  assert_false(mb_recipe_trains(MB_RECIPE_INT4WO_64));
  assert_false(mb_recipe_trains(MB_RECIPE_FLOAT8WO));
  assert_false(mb_recipe_trains(MB_RECIPE_INT4WO_128_HQQ));
  assert_false(mb_recipe_trains(MB_RECIPE_GEMLITEWO_8_64));
}

static void test_model_names(void **state) {
  (void)state;
  static const char *const acts[] = {"sigmoid", "relu", "leakyrelu", "relu6",
                                     "gelu",    "silu", "hardswish"};
  assert_int_equal(mb_model_count(), 9);
  for (size_t i = 0; i < 7; i++) {
    char name[64];
    const char *op = NULL;
    mb_op_params_t p = MB_OP_PARAMS_INIT;
    snprintf(name, sizeof name, "ln_linear_%s", acts[i]);
    assert_int_equal(mb_model_resolve(name, "inference", &op, &p), MB_OK);
    assert_string_equal(op, "ln_linear");
    const char *want = strcmp(acts[i], "gelu") ? acts[i] : "gelu_erf";
    assert_string_equal(mb_activation_name(p.activation), want);
    assert_true(p.flags & MB_PARAM_NO_WEIGHT); /* elementwise_affine=False */
  }
  const char *op = NULL;
  assert_int_equal(mb_model_resolve("linear", "training", &op, NULL), MB_OK);
  assert_string_equal(op, "linear_training");
  assert_int_equal(mb_model_resolve("transformer_block", NULL, &op, NULL),
                   MB_OK);
  assert_string_equal(op, "transformer_block");
  assert_int_equal(mb_model_resolve("my_custom_model", NULL, &op, NULL),
                   MB_ERR_NOT_FOUND);
  assert_contains(mb_error_last(), "ln_linear_hardswish");
  assert_int_equal(mb_model_resolve("linear", "serving", &op, NULL),
                   MB_ERR_NOT_FOUND);
  assert_contains(mb_error_last(), "inference, training");
  assert_int_equal(mb_model_resolve("ln_linear_relu", "training", &op, NULL),
                   MB_ERR_UNSUPPORTED);
  assert_contains(mb_error_last(), "backward");
}

/* ---- graphs ------------------------------------------------------------- */

typedef struct step_want {
  const char *label, *op;
  mb_phase_t phase;
} step_want_t;

static void expect_graph(const char *opname, mb_op_params_t p,
                         const step_want_t *want, size_t n) {
  const mb_op_t *op = mb_op_find(opname);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  mb__graph_t *g = malloc(sizeof *g);
  op->compose(&p, g);
  assert_int_equal(g->status, MB_OK);
  if (g->num_steps != n) {
    for (uint32_t i = 0; i < g->num_steps; i++)
      print_message("step %u: %s\n", i, g->steps[i].label);
    fail_msg("%s: %u steps, expected %zu", opname, g->num_steps, n);
  }
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(g->steps[i].label, want[i].label);
    assert_string_equal(g->steps[i].op->name, want[i].op);
    assert_int_equal(g->steps[i].phase, want[i].phase);
  }
  free(g);
}

static void test_linear_graphs(void **state) {
  (void)state;
  const mb_phase_t S = MB_PHASE_SETUP, F = MB_PHASE_FORWARD,
                   B = MB_PHASE_BACKWARD;
  const step_want_t base[] = {{"gemm", "gemm", F}};
  expect_graph("linear", mkn(64, 256, 128, MB_RECIPE_BASELINE), base, 1);
  const step_want_t wo[] = {{"quantize weights", "quantize", S},
                            {"dequantize weights", "dequantize", F},
                            {"gemm", "gemm", F}};
  expect_graph("linear", mkn(64, 256, 128, MB_RECIPE_INT8WO), wo, 3);
  expect_graph("linear", mkn(64, 256, 128, MB_RECIPE_FLOAT8WO), wo, 3);
  const step_want_t i4[] = {{"quantize weights", "quantize", S},
                            {"gemm", "gemm", F}};
  expect_graph("linear", mkn(64, 256, 128, MB_RECIPE_INT4WO_64), i4, 2);
  const step_want_t dq[] = {{"quantize weights", "quantize", S},
                            {"quantize activations", "quantize", F},
                            {"gemm", "gemm", F}};
  expect_graph("linear", mkn(64, 256, 128, MB_RECIPE_INT8DQ), dq, 3);
  expect_graph("linear", mkn(64, 256, 128, MB_RECIPE_FLOAT8_BLOCK), dq, 3);
  /* Training: weights cast every step; transposes made by quantize. */
  const step_want_t tr_base[] = {{"gemm", "gemm", F},
                                 {"dX = dY.W^T", "gemm", B},
                                 {"dW = X^T.dY", "gemm", B}};
  expect_graph("linear_training", mkn(64, 256, 128, MB_RECIPE_BASELINE),
               tr_base, 3);
  const step_want_t tr_row[] = {{"quantize weights", "quantize", F},
                                {"quantize activations", "quantize", F},
                                {"gemm", "gemm", F},
                                {"quantize dY (as A)", "quantize", B},
                                {"quantize W^T", "quantize", B},
                                {"dX = dY.W^T", "gemm", B},
                                {"quantize X^T", "quantize", B},
                                {"quantize dY (as B)", "quantize", B},
                                {"dW = X^T.dY", "gemm", B}};
  expect_graph("linear_training", mkn(64, 256, 128, MB_RECIPE_FLOAT8DQ_ROW),
               tr_row, 9);
  /* Tensorwise: one cast of dY serves both GEMMs. */
  const step_want_t tr_tensor[] = {{"quantize weights", "quantize", F},
                                   {"quantize activations", "quantize", F},
                                   {"gemm", "gemm", F},
                                   {"quantize dY (as A)", "quantize", B},
                                   {"quantize W^T", "quantize", B},
                                   {"dX = dY.W^T", "gemm", B},
                                   {"quantize X^T", "quantize", B},
                                   {"dW = X^T.dY", "gemm", B}};
  expect_graph("linear_training", mkn(64, 256, 128, MB_RECIPE_FLOAT8DQ_TENSOR),
               tr_tensor, 8);
  mb_op_params_t ln = mkn(64, 256, 128, MB_RECIPE_FLOAT8DQ_ROW);
  ln.activation = MB_ACT_SILU;
  const step_want_t ln_steps[] = {{"layernorm", "layernorm", F},
                                  {"quantize weights", "quantize", S},
                                  {"quantize activations", "quantize", F},
                                  {"gemm", "gemm", F},
                                  {"silu", "activation", F}};
  expect_graph("ln_linear", ln, ln_steps, 5);
}

/* The primitives a composite says it runs are those of its recipes'
 * graphs (above): every one, each once, in catalogue order; a primitive
 * op runs on none, and asking leaves the last error as it was. */
static void expect_primitives(const char *opname, const char *want) {
  const mb_op_t *op = mb_op_find(opname), *p;
  char got[256] = "";
  for (size_t i = 0; (p = mb_op_primitive(op, i)) != NULL; i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "",
             mb_op_name(p));
  assert_string_equal(got, want);
}

static void test_composite_primitives(void **state) {
  (void)state;
  mb_error_set("earlier");
  /* add: the zero points' term of the HQQ recipes (layer_graph.c); the
   * sparse GEMMs: the sparsity recipes' */
  expect_primitives("linear",
                    "add dequantize gemm gemm_block_sparse gemm_sparse24 "
                    "quantize");
  /* weight-only recipes do not train: no dequantize */
  expect_primitives("linear_training", "gemm quantize");
  expect_primitives("ln_linear",
                    "activation add dequantize gemm layernorm quantize");
  expect_primitives("transformer_block",
                    "activation add attention dequantize gemm quantize "
                    "rmsnorm");
  assert_string_equal(mb_error_last(), "earlier");
  assert_null(mb_op_primitive(mb_op_find("gemm"), 0));
  assert_null(mb_op_primitive(NULL, 0));
}

static void test_resolve_errors(void **state) {
  (void)state;
  const mb_op_t *lin = mb_op_find("linear");
  mb_op_params_t p = mkn(64, 96, 128, MB_RECIPE_FLOAT8_BLOCK);
  assert_int_not_equal(mb_op_resolve(lin, &p), MB_OK);
  assert_contains(mb_error_last(), "linear: step");
  assert_contains(mb_error_last(), "128");
  p = mkn(64, 96, 128, MB_RECIPE_INT4WO_64);
  assert_int_not_equal(mb_op_resolve(lin, &p), MB_OK);
  assert_contains(mb_error_last(), "quantize weights");
  p = mkn(64, 256, 128, MB_RECIPE_INT8WO);
  assert_int_not_equal(mb_op_resolve(mb_op_find("linear_training"), &p), MB_OK);
  assert_contains(mb_error_last(), "weight-only");
  p = mkn(64, 256, 128, MB_RECIPE_INT8DQ);
  assert_int_not_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(mb_error_last(), "recipe");
  p = mkn(64, 256, 128, MB_RECIPE_BASELINE);
  p.dtype = MB_DTYPE_I8;
  assert_int_not_equal(mb_op_resolve(lin, &p), MB_OK);
  assert_contains(mb_error_last(), "bf16");
}

/* ---- the references against naive ones ----------------------------------
 */

/* The op's inputs from the runner's generator (same seeds). */
static void **make_inputs(const mb_op_t *op, const mb_op_params_t *p) {
  void **host = calloc(op->num_inputs + op->num_outputs, sizeof *host);
  for (uint32_t role = 0; role < op->num_inputs; role++)
    host[role] = test_op_operand(op, p, role, mb__rng_u64(7, role), 1);
  return host;
}

static void free_inputs(const mb_op_t *op, void **host) {
  for (uint32_t i = 0; i < op->num_inputs + op->num_outputs; i++) free(host[i]);
  free(host);
}

static double f32_at(const void *h, size_t i) {
  return ((const float *)h)[i];
}

static void test_linear_reference(void **state) {
  (void)state;
  const mb_op_t *op = mb_op_find("linear_training");
  mb_op_params_t p = mkn(5, 7, 3, MB_RECIPE_BASELINE);
  p.dtype = MB_DTYPE_F32;
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  void **h = make_inputs(op, &p);
  void *ref;
  assert_int_equal(op->ref_prepare(&p, (const void *const *)h, &ref), MB_OK);
  const int M = 5, K = 7, N = 3;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double want = 0, got, scale;
      for (int k = 0; k < K; k++)
        want += f32_at(h[0], i * K + k) * f32_at(h[1], k * N + j);
      op->ref_element(ref, 0, (size_t)(i * N + j), &got, &scale);
      assert_true(fabs(got - want) <= 1e-12 * scale + 1e-300);
    }
  for (int i = 0; i < M; i++) /* dX = dY . W^T */
    for (int k = 0; k < K; k++) {
      double want = 0, got, scale;
      for (int j = 0; j < N; j++)
        want += f32_at(h[2], i * N + j) * f32_at(h[1], k * N + j);
      op->ref_element(ref, 1, (size_t)(i * K + k), &got, &scale);
      assert_true(fabs(got - want) <= 1e-12 * scale + 1e-300);
    }
  for (int k = 0; k < K; k++) /* dW = X^T . dY */
    for (int j = 0; j < N; j++) {
      double want = 0, got, scale;
      for (int i = 0; i < M; i++)
        want += f32_at(h[0], i * K + k) * f32_at(h[2], i * N + j);
      op->ref_element(ref, 2, (size_t)(k * N + j), &got, &scale);
      assert_true(fabs(got - want) <= 1e-12 * scale + 1e-300);
    }
  op->ref_release(ref);
  free_inputs(op, h);
}

static void test_ln_linear_reference(void **state) {
  (void)state;
  const mb_op_t *op = mb_op_find("ln_linear");
  for (int run = 0; run < 2 * MB_ACT_COUNT; run++) {
    const int act = run % MB_ACT_COUNT, affine = run < MB_ACT_COUNT;
    mb_op_params_t p = mkn(4, 16, 5, MB_RECIPE_BASELINE);
    p.dtype = MB_DTYPE_F32;
    p.activation = (mb_activation_t)act;
    if (!affine) p.flags |= MB_PARAM_NO_WEIGHT; /* torchao's model */
    assert_int_equal(mb_op_resolve(op, &p), MB_OK);
    void **h = make_inputs(op, &p);
    void *ref;
    assert_int_equal(op->ref_prepare(&p, (const void *const *)h, &ref), MB_OK);
    const int M = 4, K = 16, N = 5;
    for (int i = 0; i < M; i++) {
      double mean = 0, var = 0, hrow[16];
      for (int k = 0; k < K; k++) mean += f32_at(h[0], i * K + k) / K;
      for (int k = 0; k < K; k++) {
        double d = f32_at(h[0], i * K + k) - mean;
        var += d * d / K;
      }
      for (int k = 0; k < K; k++)
        hrow[k] = (f32_at(h[0], i * K + k) - mean) / sqrt(var + 1e-5) *
                      (affine ? f32_at(h[1], k) : 1.0) +
                  (affine ? f32_at(h[2], k) : 0.0);
      for (int j = 0; j < N; j++) {
        double z = 0, got, scale;
        for (int k = 0; k < K; k++) z += hrow[k] * f32_at(h[3], k * N + j);
        double want = mb__act_eval((mb_activation_t)act, z, p.act_alpha);
        op->ref_element(ref, 0, (size_t)(i * N + j), &got, &scale);
        /* The reference keeps H in f32. */
        assert_true(fabs(got - want) <= 1e-6 * (scale + 1));
      }
    }
    op->ref_release(ref);
    free_inputs(op, h);
  }
}

/* ---- running on the CPU backend -------------------------------------------
 */

static mb_result_t *run(mb_context_t *ctx, const char *backend, const char *op,
                        mb_op_params_t p) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = backend;
  s.cache = MB_CACHE_HOT;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 2;
  s.min_samples = 2;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, &s, &r) != MB_OK)
    fail_msg("%s: %s", op, mb_error_last());
  return r;
}

static void expect_ok(mb_result_t *r, const char *what) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_accuracy_t a = MB_ACCURACY_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(mb_result_correctness(r, &c), MB_OK);
  assert_int_equal(mb_result_accuracy(r, &a), MB_OK);
  if (info.status != MB_RESULT_OK || !c.pass || !a.pass)
    fail_msg(
        "%s: status %s (%s), check %d (ratio %.3g), accuracy %.1f dB "
        "(floor %.0f)",
        what, mb_result_status_name(info.status), info.reason, c.pass,
        c.max_err_ratio, a.sqnr_db, a.min_sqnr_db);
  assert_true(a.checked);
  assert_true(a.sqnr_db >= a.min_sqnr_db);
  assert_true(fabs(a.rel_err - pow(10, -a.sqnr_db / 20)) < 1e-12);
  assert_string_equal(info.impl, "graph");
  assert_true(info.peak_memory_bytes > 0);
  /* Every timed step measured alone; setup steps not timed. */
  assert_true(mb_result_step_count(r) >= 1);
  for (size_t i = 0; i < mb_result_step_count(r); i++) {
    mb_step_time_t t = MB_STEP_TIME_INIT;
    assert_int_equal(mb_result_step(r, i, &t), MB_OK);
    if (t.phase == MB_PHASE_SETUP)
      assert_true(isnan(t.median_ns));
    else
      assert_true(t.median_ns > 0);
  }
  assert_true(mb_result_phase_ns(r, MB_PHASE_FORWARD) > 0);
}

static void test_linear_every_recipe(void **state) {
  (void)state;
  for (int rc = 0; rc < MB_RECIPE_COUNT; rc++) {
    mb_result_t *r = run(g_cpu, "cpu", "linear", mkn(32, 256, 128, rc));
    expect_ok(r, mb_recipe_name((mb_recipe_t)rc));
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_result_info(r, &info);
    assert_string_equal(info.recipe, mb_recipe_name((mb_recipe_t)rc));
    assert_string_equal(info.model, "linear");
    assert_string_equal(info.mode, "inference");
    assert_true(isnan(mb_result_phase_ns(r, MB_PHASE_BACKWARD)));
    mb_result_destroy(r);
  }
}

static void test_ln_linear_recipes(void **state) {
  (void)state;
  const mb_recipe_t rs[] = {MB_RECIPE_BASELINE, MB_RECIPE_INT8DQ,
                            MB_RECIPE_FLOAT8WO, MB_RECIPE_INT4WO_128};
  for (size_t i = 0; i < 4; i++) {
    mb_op_params_t p = mkn(16, 256, 64, rs[i]);
    p.activation = (mb_activation_t)(i * 2 + 1);
    mb_result_t *r = run(g_cpu, "cpu", "ln_linear", p);
    expect_ok(r, mb_recipe_name(rs[i]));
    mb_result_destroy(r);
  }
}

static void test_transformer_block_runs(void **state) {
  (void)state;
  const mb_recipe_t rs[] = {MB_RECIPE_BASELINE, MB_RECIPE_FLOAT8DQ_ROW,
                            MB_RECIPE_INT4WO_32};
  for (size_t i = 0; i < 3; i++) {
    mb_result_t *r =
        run(g_cpu, "cpu", "transformer_block", mkn(2, 128, 1, rs[i]));
    expect_ok(r, mb_recipe_name(rs[i]));
    int said = 0; /* the result says N is unused */
    for (size_t k = 0; k < mb_result_note_count(r); k++) {
      const char *key, *text;
      double v;
      mb_result_note(r, k, &key, &text, &v);
      said |= !strcmp(key, "shape_note") && text && strstr(text, "N is unused");
    }
    assert_true(said);
    mb_result_destroy(r);
  }
}

static void test_training(void **state) {
  (void)state;
  const mb_recipe_t rs[] = {MB_RECIPE_BASELINE, MB_RECIPE_INT8DQ,
                            MB_RECIPE_FLOAT8DQ_TENSOR, MB_RECIPE_FLOAT8DQ_ROW,
                            MB_RECIPE_FLOAT8_BLOCK};
  for (size_t i = 0; i < 5; i++) {
    mb_result_t *r =
        run(g_cpu, "cpu", "linear_training", mkn(128, 256, 128, rs[i]));
    expect_ok(r, mb_recipe_name(rs[i]));
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_result_info(r, &info);
    assert_string_equal(info.mode, "training");
    assert_true(mb_result_phase_ns(r, MB_PHASE_BACKWARD) > 0);
    mb_result_destroy(r);
  }
}

/* Every part of a composite is measured by the rules the whole was: the
 * same criterion (here exactly 7 samples, where parts used to get a fixed
 * max(5, min_samples)), each with its noise and median interval; the sum
 * of the parts is compared with the whole. */
static void expect_part(const mb_step_time_t *t, uint64_t samples) {
  assert_true(t->samples == samples);
  assert_string_equal(t->stop_reason, "fixed");
  assert_true(t->ci_low_ns <= t->median_ns && t->median_ns <= t->ci_high_ns);
  assert_true(t->rel_stdev >= 0);
}

static void test_parts_measured_as_the_whole(void **state) {
  (void)state;
  mb_op_params_t p = mkn(64, 128, 64, MB_RECIPE_INT8DQ);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "linear_training";
  s.params = &p;
  s.backend = "cpu";
  s.cache = MB_CACHE_HOT;
  s.samples = 7;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(g_cpu, &s, &r), MB_OK);
  expect_ok(r, "int8dq training");
  size_t timed = 0;
  for (size_t i = 0; i < mb_result_step_count(r); i++) {
    mb_step_time_t t = MB_STEP_TIME_INIT;
    assert_int_equal(mb_result_step(r, i, &t), MB_OK);
    if (t.phase == MB_PHASE_SETUP) continue;
    expect_part(&t, 7);
    timed++;
  }
  assert_true(timed >= 6);
  mb_step_time_t ph[2] = {MB_STEP_TIME_INIT, MB_STEP_TIME_INIT};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(mb_result_phase(r, (mb_phase_t)i, &ph[i]), MB_OK);
    expect_part(&ph[i], 7);
  }
  mb_parts_check_t c = MB_PARTS_CHECK_INIT;
  assert_int_equal(mb_result_parts_check(r, &c), MB_OK);
  assert_true(c.checked);
  assert_string_equal(c.of, "phases");
  assert_true(c.sum_ns == ph[0].median_ns + ph[1].median_ns);
  mb_stats_t st = MB_STATS_INIT;
  mb_result_stats(r, &st);
  assert_true(c.whole_ns == st.median);
  mb_result_destroy(r);

  /* Inference: the forward phase is the whole; the parts are the steps. */
  s.op = "linear";
  assert_int_equal(mb_bench_run(g_cpu, &s, &r), MB_OK);
  mb_result_stats(r, &st);
  assert_int_equal(mb_result_phase(r, MB_PHASE_FORWARD, &ph[0]), MB_OK);
  assert_true(ph[0].median_ns == st.median && ph[0].samples == st.count);
  assert_int_equal(mb_result_phase(r, MB_PHASE_BACKWARD, &ph[1]),
                   MB_ERR_NOT_FOUND);
  assert_int_equal(mb_result_parts_check(r, &c), MB_OK);
  assert_true(c.checked);
  assert_string_equal(c.of, "steps");
  mb_result_destroy(r);
}

/* Parts that disagree with the whole beyond both intervals and the
 * tolerance are flagged, with a warning that gives the numbers; within
 * either they agree. Synthetic: the phases of a training result set by
 * hand (forward 3.05 ms + backward 21.86 ms against a 3.32 ms whole, as
 * once seen). */
static void test_parts_disagree(void **state) {
  (void)state;
  mb_result_t *r =
      run(g_cpu, "cpu", "linear_training", mkn(64, 64, 64, MB_RECIPE_BASELINE));
  const double med[2] = {3.05e6, 21.86e6};
  for (int i = 0; i < 2; i++) {
    mb_step_time_t t = MB_STEP_TIME_INIT;
    t.median_ns = med[i];
    t.ci_low_ns = 0.99 * med[i];
    t.ci_high_ns = 1.01 * med[i];
    mb__result_set_phase(r, (mb_phase_t)i, &t);
  }
  r->stats.median = 3.32e6;
  assert_int_equal(mb__result_check_parts(r, 3.3e6, 3.34e6), MB_OK);
  mb_parts_check_t c = MB_PARTS_CHECK_INIT;
  mb_result_parts_check(r, &c);
  assert_true(c.checked && !c.agree);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  assert_contains(info.warning, "phases timed alone add up to 24.91 ms");
  assert_contains(mb_result_json(r), "\"agree\":false");

  /* Apart beyond the intervals but within 5 %: agree. */
  r->stats.median = 24.91e6 / 1.04;
  assert_int_equal(mb__result_check_parts(r, 0.999 * r->stats.median,
                                          1.001 * r->stats.median),
                   MB_OK);
  mb_result_parts_check(r, &c);
  assert_true(c.checked && c.agree);
  /* 20 % apart but the whole's interval reaches the sum: agree. */
  r->stats.median = 24.91e6 / 1.2;
  assert_int_equal(mb__result_check_parts(r, 20e6, 25e6), MB_OK);
  mb_result_parts_check(r, &c);
  assert_true(c.checked && c.agree);
  mb_result_destroy(r);
}

/* The planted GEMM drops the last k: every step is checked, so the graph
 * run fails its check and names the step; the accuracy floor fails too. */
static void test_planted_wrong_gemm(void **state) {
  (void)state;
  mb_op_params_t p = mkn(16, 64, 16, MB_RECIPE_BASELINE);
  p.dtype = MB_DTYPE_F32;
  mb_result_t *r = run(g_wrong, "wrong", "linear", p);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_accuracy_t a = MB_ACCURACY_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &c);
  mb_result_accuracy(r, &a);
  assert_int_equal(info.status, MB_RESULT_OK);
  assert_false(c.pass);
  assert_true(c.max_err_ratio > 1);
  assert_true(a.checked);
  assert_false(a.pass);
  int named = 0;
  for (size_t i = 0; i < mb_result_note_count(r); i++) {
    const char *key, *text;
    double v;
    mb_result_note(r, i, &key, &text, &v);
    if (!strcmp(key, "worst_step")) named = text && !strcmp(text, "gemm");
  }
  assert_true(named);
  mb_result_destroy(r);
}

/* The fixture has no quantize kernel: a dynamic recipe is skipped, and
 * the reason says which step and why. */
static void test_unsupported_recipe_skipped(void **state) {
  (void)state;
  mb_op_params_t p = mkn(16, 128, 16, MB_RECIPE_INT8DQ);
  p.dtype = MB_DTYPE_F32;
  mb_result_t *r = run(g_wrong, "wrong", "linear", p);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_contains(info.reason, "int8dq");
  assert_contains(info.reason, "quantize weights");
  assert_contains(info.reason, "no quantize kernel");
  mb_result_destroy(r);
}

/* Everything a composite adds survives its JSON. */
static void test_json_round_trip(void **state) {
  (void)state;
  mb_result_t *r = run(g_cpu, "cpu", "linear_training",
                       mkn(128, 128, 128, MB_RECIPE_FLOAT8DQ_ROW));
  const char *json = mb_result_json(r);
  assert_non_null(json);
  assert_contains(json, "\"recipe\":\"float8dq-row\"");
  assert_contains(json, "\"backward_ns\"");
  assert_contains(json, "\"quantize X^T\"");
  assert_contains(json, "\"peak_memory_bytes\"");
  mb_result_t *back = NULL;
  assert_int_equal(mb_result_from_json(json, &back), MB_OK);
  assert_string_equal(mb_result_json(back), json);
  mb_result_destroy(back);
  mb_result_destroy(r);
}

/* ---- recipes are what they say ------------------------------------------
 * Each recipe's linear layer, composed and read back: the dtype of every
 * quantized operand and the shape of its scale grid, which is what the
 * scaling granularity and group size mean (docs/ops.md's table, written
 * out here independently of recipe.c's rows, so a wrong row fails). X is
 * M x K, W is K x N; M, K, N distinct so a per-row grid cannot pass for a
 * per-channel one. */

enum { RM = 256, RK = 512, RN = 384 };

typedef struct recipe_want {
  mb_recipe_t r;
  mb_dtype_t wdt;   /* NONE: no weight quantization */
  int64_t wgrid[2]; /* scale grid of W (K x N) */
  int dequant;      /* weights dequantized, then an hp GEMM */
  mb_dtype_t adt;   /* NONE: activations stay hp */
  int64_t agrid[2]; /* scale grid of X (M x K) */
} recipe_want_t;

static const recipe_want_t k_recipe_want[] = {
    {MB_RECIPE_BASELINE, MB_DTYPE_NONE, {0, 0}, 0, MB_DTYPE_NONE, {0, 0}},
    /* i8 per channel (one scale per output column n) */
    {MB_RECIPE_INT8WO, MB_DTYPE_I8, {1, RN}, 1, MB_DTYPE_NONE, {0, 0}},
    /* + i8 per-row dynamic activations */
    {MB_RECIPE_INT8DQ, MB_DTYPE_I8, {1, RN}, 0, MB_DTYPE_I8, {RM, 1}},
    /* i4, one scale per group of g along K, per column */
    {MB_RECIPE_INT4WO_32, MB_DTYPE_I4, {RK / 32, RN}, 0, MB_DTYPE_NONE, {0, 0}},
    {MB_RECIPE_INT4WO_64, MB_DTYPE_I4, {RK / 64, RN}, 0, MB_DTYPE_NONE, {0, 0}},
    {MB_RECIPE_INT4WO_128,
     MB_DTYPE_I4,
     {RK / 128, RN},
     0,
     MB_DTYPE_NONE,
     {0, 0}},
    {MB_RECIPE_INT4WO_256,
     MB_DTYPE_I4,
     {RK / 256, RN},
     0,
     MB_DTYPE_NONE,
     {0, 0}},
    /* e4m3 per channel */
    {MB_RECIPE_FLOAT8WO, MB_DTYPE_F8E4M3, {1, RN}, 1, MB_DTYPE_NONE, {0, 0}},
    /* e4m3, one scale per tensor on each side */
    {MB_RECIPE_FLOAT8DQ_TENSOR,
     MB_DTYPE_F8E4M3,
     {1, 1},
     0,
     MB_DTYPE_F8E4M3,
     {1, 1}},
    /* e4m3 per-row activations, per-channel weights */
    {MB_RECIPE_FLOAT8DQ_ROW,
     MB_DTYPE_F8E4M3,
     {1, RN},
     0,
     MB_DTYPE_F8E4M3,
     {RM, 1}},
    /* e4m3 1 x 128 activation blocks, 128 x 128 weight blocks */
    {MB_RECIPE_FLOAT8_BLOCK,
     MB_DTYPE_F8E4M3,
     {RK / 128, RN / 128},
     0,
     MB_DTYPE_F8E4M3,
     {RM, RK / 128}},
    /* gemlite's 8 bits: i8 in groups of g along K (dequantized, hp GEMM);
     * its 4 bits and int4wo-{g}-hqq prepare weights with HQQ, no quantize
     * step: test_recipes_hqq.c reads their graphs. */
    {MB_RECIPE_GEMLITEWO_8_32,
     MB_DTYPE_I8,
     {RK / 32, RN},
     1,
     MB_DTYPE_NONE,
     {0, 0}},
    {MB_RECIPE_GEMLITEWO_8_64,
     MB_DTYPE_I8,
     {RK / 64, RN},
     1,
     MB_DTYPE_NONE,
     {0, 0}},
    {MB_RECIPE_GEMLITEWO_8_128,
     MB_DTYPE_I8,
     {RK / 128, RN},
     1,
     MB_DTYPE_NONE,
     {0, 0}},
    {MB_RECIPE_GEMLITEWO_8_256,
     MB_DTYPE_I8,
     {RK / 256, RN},
     1,
     MB_DTYPE_NONE,
     {0, 0}},
};
/* The recipes whose weights HQQ prepares (test_recipes_hqq.c) and the
 * sparsity recipes (test_sparsity.c). */
enum { HQQ_RECIPES = 8, SPARSE_RECIPES = 5 };

/* The step labelled `label`, or -1. */
static int find_step(const mb__graph_t *g, const char *label) {
  for (uint32_t i = 0; i < g->num_steps; i++)
    if (!strcmp(g->steps[i].label, label)) return (int)i;
  return -1;
}

static void expect_buf(const mb__graph_t *g, uint32_t b, mb_dtype_t dt,
                       int64_t rows, int64_t cols, const char *what) {
  const mb__gbuf_t *x = &g->bufs[b];
  if (x->dtype != dt || x->ndim != 2 || x->shape[0] != rows ||
      x->shape[1] != cols)
    fail_msg("%s: %s %" PRId64 "x%" PRId64 ", expected %s %" PRId64 "x%" PRId64,
             what, mb_dtype_name(x->dtype), x->shape[0],
             x->ndim > 1 ? x->shape[1] : 0, mb_dtype_name(dt), rows, cols);
}

/* A quantize step of src (rows x cols) to dt with a gr x gc scale grid;
 * returns it (its Q is arg 1, its scales arg 2). */
static uint32_t expect_quantize(const mb__graph_t *g, const char *label,
                                uint32_t src, int64_t rows, int64_t cols,
                                mb_dtype_t dt, const int64_t grid[2],
                                const char *recipe) {
  char what[96];
  int st = find_step(g, label);
  if (st < 0) fail_msg("%s: no step \"%s\"", recipe, label);
  assert_string_equal(g->steps[st].op->name, "quantize");
  assert_int_equal(mb__graph_arg(g, (uint32_t)st, 0), src);
  assert_false(g->steps[st].params.flags & MB_PARAM_STATIC); /* dynamic */
  snprintf(what, sizeof what, "%s: %s, Q", recipe, label);
  expect_buf(g, mb__graph_arg(g, (uint32_t)st, 1), dt, rows, cols, what);
  snprintf(what, sizeof what, "%s: %s, scales", recipe, label);
  expect_buf(g, mb__graph_arg(g, (uint32_t)st, 2), MB_DTYPE_F32, grid[0],
             grid[1], what);
  return (uint32_t)st;
}

static void test_recipes_are_what_they_say(void **state) {
  (void)state;
  const size_t n = sizeof k_recipe_want / sizeof *k_recipe_want;
  assert_int_equal(n + HQQ_RECIPES + SPARSE_RECIPES, MB_RECIPE_COUNT);
  for (size_t i = 0; i < n; i++) {
    const recipe_want_t *w = &k_recipe_want[i];
    const char *name = mb_recipe_name(w->r);
    mb_op_params_t p = mkn(RM, RK, RN, w->r);
    p.dtype = MB_DTYPE_BF16;
    const mb_op_t *op = mb_op_find("linear");
    assert_int_equal(mb_op_resolve(op, &p), MB_OK);
    mb__graph_t *g = malloc(sizeof *g);
    assert_non_null(g);
    op->compose(&p, g);
    assert_int_equal(g->status, MB_OK);
    const int gs = find_step(g, "gemm");
    assert_true(gs >= 0);
    const mb__gstep_t *gemm = &g->steps[gs];
    /* The layer's own X and W (the composite's operands 0 and 1). */
    uint32_t x = UINT32_MAX, wt = UINT32_MAX;
    for (uint32_t b = 0; b < g->num_bufs; b++) {
      if (g->bufs[b].operand == 0) x = b;
      if (g->bufs[b].operand == 1) wt = b;
    }
    assert_true(x != UINT32_MAX && wt != UINT32_MAX);
    uint32_t a_in = x, b_in = wt;
    mb_dtype_t a_dt = MB_DTYPE_BF16, b_dt = MB_DTYPE_BF16;
    if (w->wdt == MB_DTYPE_NONE) {
      assert_int_equal(find_step(g, "quantize weights"), -1);
    } else {
      uint32_t q = expect_quantize(g, "quantize weights", wt, RK, RN, w->wdt,
                                   w->wgrid, name);
      /* Inference: the weights are quantized once, untimed. */
      assert_int_equal(g->steps[q].phase, MB_PHASE_SETUP);
      b_in = mb__graph_arg(g, q, 1), b_dt = w->wdt;
      if (w->dequant) {
        int d = find_step(g, "dequantize weights");
        if (d < 0) fail_msg("%s: no dequantize step", name);
        assert_int_equal(mb__graph_arg(g, (uint32_t)d, 0), b_in);
        assert_int_equal(mb__graph_arg(g, (uint32_t)d, 1),
                         mb__graph_arg(g, q, 2));
        b_in = mb__graph_arg(g, (uint32_t)d, 2), b_dt = MB_DTYPE_BF16;
      } else {
        assert_int_equal(find_step(g, "dequantize weights"), -1);
        /* The GEMM scales B by the quantize step's own scales. */
        assert_int_equal(mb__graph_arg(g, (uint32_t)gs, 3),
                         mb__graph_arg(g, q, 2));
      }
    }
    if (w->adt == MB_DTYPE_NONE) {
      assert_int_equal(find_step(g, "quantize activations"), -1);
    } else {
      uint32_t q = expect_quantize(g, "quantize activations", x, RM, RK, w->adt,
                                   w->agrid, name);
      assert_int_equal(g->steps[q].phase, MB_PHASE_FORWARD); /* timed */
      a_in = mb__graph_arg(g, q, 1), a_dt = w->adt;
      assert_int_equal(mb__graph_arg(g, (uint32_t)gs, 2),
                       mb__graph_arg(g, q, 2));
    }
    /* The GEMM reads those operands, in those dtypes. */
    assert_int_equal(mb__graph_arg(g, (uint32_t)gs, 0), a_in);
    assert_int_equal(mb__graph_arg(g, (uint32_t)gs, 1), b_in);
    if (gemm->params.dtype != a_dt || gemm->params.dtype_b != b_dt)
      fail_msg("%s: gemm %s x %s, expected %s x %s", name,
               mb_dtype_name(gemm->params.dtype),
               mb_dtype_name(gemm->params.dtype_b), mb_dtype_name(a_dt),
               mb_dtype_name(b_dt));
    free(g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_recipe_names),
      cmocka_unit_test(test_model_names),
      cmocka_unit_test(test_linear_graphs),
      cmocka_unit_test(test_composite_primitives),
      cmocka_unit_test(test_recipes_are_what_they_say),
      cmocka_unit_test(test_resolve_errors),
      cmocka_unit_test(test_linear_reference),
      cmocka_unit_test(test_ln_linear_reference),
      cmocka_unit_test(test_linear_every_recipe),
      cmocka_unit_test(test_ln_linear_recipes),
      cmocka_unit_test(test_transformer_block_runs),
      cmocka_unit_test(test_training),
      cmocka_unit_test(test_parts_measured_as_the_whole),
      cmocka_unit_test(test_parts_disagree),
      cmocka_unit_test(test_planted_wrong_gemm),
      cmocka_unit_test(test_unsupported_recipe_skipped),
      cmocka_unit_test(test_json_round_trip),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
