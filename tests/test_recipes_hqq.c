/* torchao's remaining recipes: int4wo-{g}-hqq (HQQ's solver as untimed
 * weight preparation, then the i4 weight-only GEMM with a zero-point term)
 * and gemlitewo-{4,8}-{g} (gemlite's layouts on our weight-only kernels):
 * the solver against torchao's formulas and against round-to-nearest, the
 * graph a recipe becomes, and every recipe run on the CPU backend within
 * its accuracy floor, saying what ran. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/graph.h"
#include "ops/hqq.h"
#include "rng.h"
#include "test_util.h"

static mb_context_t *g_cpu;

static int setup(void **state) {
  (void)state;
  g_cpu = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_cpu);
  return 0;
}

/* normal(0, sd) weights, K x N, as the models fill them. */
static float *weights(int64_t k, int64_t n, uint64_t seed, double sd) {
  mb_fill_t f = MB_FILL_INIT;
  f.seed = seed;
  f.b = sd;
  float *w = malloc((size_t)(k * n) * sizeof *w);
  assert_non_null(w);
  for (int64_t i = 0; i < k * n; i++)
    w[i] = (float)mb__fill_value(&f, (uint64_t)i);
  return w;
}

/* ---- the solver --------------------------------------------------------- */

/* One group of 8, one solver round, written out from torchao's Python
 * (quant_primitives.py at 36027d82) with its numbers: the zero after the
 * round and the final q must be what the solver made. */
static void test_hqq_one_round_as_torchao(void **state) {
  (void)state;
  const float w[8] = {-0.9f, -0.35f, -0.1f, 0.05f, 0.2f, 0.3f, 0.61f, 1.1f};
  /* scale = 15 / (max - min), zero = round(-min * scale) */
  const float scale = fminf(15.0f / (1.1f - -0.9f), 2e4f);
  const float zero0 = rintf(0.9f * scale);
  double acc = 0;
  for (int i = 0; i < 8; i++) {
    const float wq = fminf(fmaxf(rintf(w[i] * scale + zero0), 0.0f), 15.0f);
    const float wr = (wq - zero0) / scale, x = w[i] - wr;
    /* shrink_lp_op, lp_norm 0.7, beta 10 */
    const float mag =
        fmaxf(fabsf(x) - (float)(1.0 / 10.0) * powf(fabsf(x), -0.3f), 0.0f);
    const float we = x > 0 ? mag : x < 0 ? -mag : 0.0f;
    acc += (double)(wq - (w[i] - we) * scale);
  }
  const float zero1 = (float)(acc / 8);
  mb__hqq_opts_t o = MB__HQQ_OPTS_INIT;
  o.iters = 1;
  uint8_t q[8];
  float s, z;
  assert_int_equal(mb__hqq_quantize(w, 8, 1, 8, 4, &o, q, &s, &z), 1);
  assert_float_equal(z, zero1, 1e-6);
  assert_float_equal(s, 1.0f / scale, 0);
  for (int i = 0; i < 8; i++)
    assert_int_equal(q[i], (int)fminf(fmaxf(rintf(w[i] * scale + z), 0), 15));
}

/* No optimisation: HQQ's start is min-max round-to-nearest, which a group
 * of 16 evenly spaced values reproduces exactly. */
static void test_hqq_minmax_start(void **state) {
  (void)state;
  float w[16];
  for (int i = 0; i < 16; i++) w[i] = 0.25f * (float)i - 1.0f;
  mb__hqq_opts_t o = MB__HQQ_OPTS_INIT;
  o.optimize = 0;
  uint8_t q[16];
  float s, z;
  assert_int_equal(mb__hqq_quantize(w, 16, 1, 16, 4, &o, q, &s, &z), 0);
  assert_float_equal(s, 0.25f, 0);
  assert_float_equal(z, 4.0f, 0);
  for (int i = 0; i < 16; i++) assert_int_equal(q[i], i);
  assert_float_equal(mb__hqq_error(w, 16, 1, 16, q, &s, &z), 0.0, 0);
  /* A constant group: the scale clamps at 2e4 and nothing is NaN. */
  for (int i = 0; i < 16; i++) w[i] = 0.5f;
  o = (mb__hqq_opts_t)MB__HQQ_OPTS_INIT;
  assert_true(mb__hqq_quantize(w, 16, 1, 16, 4, &o, q, &s, &z) >= 1);
  assert_float_equal(s, 1.0f / 2e4f, 0);
  assert_true(isfinite(z) && mb__hqq_error(w, 16, 1, 16, q, &s, &z) < 1e-3);
}

/* On random weights HQQ reconstructs no worse than round-to-nearest: the
 * min-max start it improves on and int4wo's symmetric absmax quantization,
 * at every group size, and twice the same (deterministic). */
static void test_hqq_beats_round_to_nearest(void **state) {
  (void)state;
  enum { K = 512, N = 96 };
  static const int64_t groups[] = {32, 64, 128, 256};
  uint8_t *q = malloc(K * N), *q2 = malloc(K * N);
  float *s = malloc(2 * K * N * sizeof *s), *s2 = malloc(2 * K * N * sizeof *s);
  assert_true(q && q2 && s && s2);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    float *w = weights(K, N, seed, 1.0 / sqrt((double)K));
    for (size_t gi = 0; gi < 4; gi++) {
      const int64_t g = groups[gi], ng = (K / g) * N;
      mb__hqq_opts_t o = MB__HQQ_OPTS_INIT;
      assert_true(mb__hqq_quantize(w, K, N, g, 4, &o, q, s, s + ng) >= 1);
      const double hqq = mb__hqq_error(w, K, N, g, q, s, s + ng);
      mb__hqq_quantize(w, K, N, g, 4, &o, q2, s2, s2 + ng);
      assert_memory_equal(q, q2, K * N);
      assert_memory_equal(s, s2, 2 * (size_t)ng * sizeof *s);
      o.optimize = 0;
      mb__hqq_quantize(w, K, N, g, 4, &o, q2, s2, s2 + ng);
      const double minmax = mb__hqq_error(w, K, N, g, q2, s2, s2 + ng);
      const double rtn = mb__rtn_error(w, K, N, g, MB_DTYPE_I4);
      print_message(
          "seed %d g %3d: HQQ %.4f, min-max RTN %.4f, int4wo RTN "
          "%.4f\n",
          (int)seed, (int)g, hqq, minmax, rtn);
      assert_true(hqq <= minmax);
      assert_true(hqq <= rtn);
    }
    free(w);
  }
  free(q), free(q2), free(s), free(s2);
}

/* ---- the graph ---------------------------------------------------------- */

static int find_step(const mb__graph_t *g, const char *label) {
  for (uint32_t i = 0; i < g->num_steps; i++)
    if (!strcmp(g->steps[i].label, label)) return (int)i;
  fail_msg("no step \"%s\"", label);
  return -1;
}

/* int4wo-128-hqq's linear layer: HQQ on the host (setup), the i4 GEMM on
 * its Q and scales, X's group sums, their GEMM with the zero points, and
 * the sum into Y; gemlitewo-4-128 is the same graph. */
static void test_hqq_graph(void **state) {
  (void)state;
  enum { M = 64, K = 512, N = 96, G = 128 };
  const mb_recipe_t rs[] = {MB_RECIPE_INT4WO_128_HQQ,
                            MB_RECIPE_GEMLITEWO_4_128};
  const mb_op_t *op = mb_op_find("linear");
  mb__graph_t *g = malloc(sizeof *g);
  assert_non_null(g);
  for (size_t i = 0; i < 2; i++) {
    mb_op_params_t p = MB_OP_PARAMS_INIT;
    p.ndim = 3;
    p.shape[0] = M, p.shape[1] = K, p.shape[2] = N;
    p.recipe = rs[i];
    assert_int_equal(mb_op_resolve(op, &p), MB_OK);
    op->compose(&p, g);
    assert_int_equal(g->status, MB_OK);
    assert_int_equal(g->num_steps, 5);
    const mb__gstep_t *h = &g->steps[find_step(g, "HQQ weights")];
    assert_true(h->host != NULL);
    assert_int_equal(h->phase, MB_PHASE_SETUP);
    assert_string_equal(h->op->name, "hqq_weights");
    const mb__gstep_t *mm = &g->steps[find_step(g, "gemm")];
    assert_int_equal(mm->params.dtype_b, MB_DTYPE_I4);
    assert_int_equal(mm->params.scale_b.mode, MB_SCALE_GROUP);
    assert_int_equal(mm->params.scale_b.block[0], G);
    assert_int_equal(mm->arg[1], h->arg[1]); /* Q */
    assert_int_equal(mm->arg[3], h->arg[2]); /* its scales */
    const mb__gstep_t *sum = &g->steps[find_step(g, "group sums of X")];
    assert_int_equal(sum->params.shape[2], K / G);
    assert_int_equal(sum->arg[1], h->arg[4]); /* G */
    const mb__gstep_t *zp = &g->steps[find_step(g, "zero points: gemm")];
    assert_int_equal(zp->params.shape[1], K / G);
    assert_int_equal(zp->arg[0], sum->arg[4]);
    assert_int_equal(zp->arg[1], h->arg[3]); /* the offsets */
    const mb__gstep_t *add = &g->steps[find_step(g, "zero points: add")];
    assert_int_equal(add->arg[0], mm->arg[4]);
    assert_int_equal(add->arg[1], zp->arg[4]);
    assert_int_equal(add->arg[2], 2u); /* Y, the layer's output */
    assert_int_equal(g->bufs[h->arg[3]].dtype, MB_DTYPE_BF16);
    assert_int_equal(g->bufs[h->arg[4]].shape[1], K / G);
  }
  free(g);
}

/* ---- runs ----------------------------------------------------------------
 */

/* op under recipe r on `backend`: ran, every step checked, above the
 * recipe's accuracy floor. */
static mb_result_t *run_on(mb_context_t *ctx, const char *backend,
                           const char *op, mb_recipe_t r, int64_t m, int64_t k,
                           int64_t n) {
  mb_op_params_t p = test_shape3(MB_DTYPE_BF16, m, k, n);
  p.recipe = (uint32_t)r;
  mb_result_t *res = test_run_on(ctx, backend, op, &p, 2);
  mb_accuracy_t a = MB_ACCURACY_INIT;
  mb_result_accuracy(res, &a);
  if (!test_result_passes(res, mb_recipe_name(r)) || !a.pass || !a.checked)
    fail_msg("%s %s: accuracy %.1f dB (floor %.1f)", op, mb_recipe_name(r),
             a.sqnr_db, a.min_sqnr_db);
  return res;
}

static mb_result_t *run(const char *op, mb_recipe_t r, int64_t m, int64_t k,
                        int64_t n) {
  return run_on(g_cpu, "cpu", op, r, m, k, n);
}

static const char *note(const mb_result_t *r, const char *key) {
  for (size_t i = 0; i < mb_result_note_count(r); i++) {
    const char *k, *text;
    double v;
    mb_result_note(r, i, &k, &text, &v);
    if (!strcmp(k, key)) return text;
  }
  return NULL;
}

static double sqnr(const mb_result_t *r) {
  mb_accuracy_t a = MB_ACCURACY_INIT;
  mb_result_accuracy(r, &a);
  return a.sqnr_db;
}

/* Every new recipe runs and passes its floor; HQQ's zero points beat
 * int4wo's symmetric groups at the same size; each result says what its
 * weights cost to prepare and, for gemlite, which kernels ran. */
static void test_recipes_run(void **state) {
  (void)state;
  static const mb_recipe_t rtn[] = {MB_RECIPE_INT4WO_32, MB_RECIPE_INT4WO_64,
                                    MB_RECIPE_INT4WO_128, MB_RECIPE_INT4WO_256};
  for (int i = 0; i < 4; i++) {
    mb_result_t *h = run("linear", MB_RECIPE_INT4WO_32_HQQ + i, 128, 512, 256);
    mb_result_t *r = run("linear", rtn[i], 128, 512, 256);
    print_message("%s %.2f dB, %s %.2f dB\n",
                  mb_recipe_name(MB_RECIPE_INT4WO_32_HQQ + i), sqnr(h),
                  mb_recipe_name(rtn[i]), sqnr(r));
    assert_true(sqnr(h) > sqnr(r));
    assert_non_null(note(h, "weight_prep"));
    assert_contains(note(h, "weight_prep"), "HQQ weights: ");
    assert_contains(note(h, "weight_prep"), "solver rounds");
    assert_null(note(h, "recipe_kernel"));
    assert_null(note(r, "weight_prep"));
    mb_result_destroy(h);
    mb_result_destroy(r);
  }
  for (int i = MB_RECIPE_GEMLITEWO_4_32; i <= MB_RECIPE_GEMLITEWO_8_256; i++) {
    mb_result_t *r = run("linear", (mb_recipe_t)i, 64, 256, 128);
    const char *k = note(r, "recipe_kernel");
    assert_non_null(k);
    assert_contains(k, "not on gemlite's Triton kernels");
    assert_contains(k, i <= MB_RECIPE_GEMLITEWO_4_256 ? "i4 weight-only GEMM"
                                                      : "i8 weight-only");
    mb_result_destroy(r);
  }
  /* Six HQQ layers in one graph, each with its own line. */
  mb_result_t *tb =
      run("transformer_block", MB_RECIPE_INT4WO_32_HQQ, 2, 128, 1);
  assert_contains(note(tb, "weight_prep"), "fc2: HQQ weights: ");
  mb_result_destroy(tb);
}

/* On a device whose memory is not the host's (the emulated GPU, whose
 * gpuemu64 pre-packs B in prepare): the host step's outputs are uploaded
 * before the timed steps are prepared, so the i4 GEMM reads HQQ's Q. */
static void test_hqq_on_emulated_gpu(void **state) {
  (void)state;
  char dir[1024], so[1100];
  snprintf(dir, sizeof dir, "%s/gpuemu64", test_env_dir("MB_TEST_FIXTURE_DIR"));
  snprintf(so, sizeof so, "%s/mb_backend_gpuemu64.so", dir);
  FILE *f = fopen(so, "rb");
  if (!f) skip(); /* built without the emulated GPU */
  fclose(f);
  mb_context_t *ctx = test_context(dir);
  mb_result_t *r =
      run_on(ctx, "gpuemu64", "linear", MB_RECIPE_INT4WO_64_HQQ, 64, 256, 128);
  assert_contains(note(r, "weight_prep"), "solver rounds");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hqq_one_round_as_torchao),
      cmocka_unit_test(test_hqq_minmax_start),
      cmocka_unit_test(test_hqq_beats_round_to_nearest),
      cmocka_unit_test(test_hqq_graph),
      cmocka_unit_test(test_recipes_run),
      cmocka_unit_test(test_hqq_on_emulated_gpu),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
