/* moe_layer_proxy (the JAX suite's transformer_layer_moe): operands, the
 * graph and its FLOP model, the reference (lazy, cached rows) against a
 * naive double implementation written here independently, the graph
 * executed step by step on the host (each step by its own primitive's
 * reference) meeting the accuracy floor while the same graph with its last
 * residual planted out fails it, and runs on the CPU backend and the
 * emulated GPU with every step checked. */
#include <math.h>

#include "test_op_util.h"
#include "models/composite.h"
#include "models/model_ops.h"
#include "ops/verify.h"

enum { X, WA, BA, WF, BF, Y, NUM_IN = Y };

static const mb_op_t *const op = &mb__op_moe_layer_proxy;

static mb_op_params_t moe_params(int64_t b, int64_t s, int64_t d,
                                 mb_dtype_t dt) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = b, p.shape[1] = s, p.shape[2] = d;
  p.dtype = dt;
  return p;
}

static mb__graph_t *compose(const mb_op_params_t *p) {
  mb__graph_t *g = malloc(sizeof *g);
  assert_non_null(g);
  op->compose(p, g);
  assert_int_equal(g->status, MB_OK);
  return g;
}

/* The step whose label is `label`; fails when absent. */
static const mb__gstep_t *step(const mb__graph_t *g, const char *label) {
  for (uint32_t i = 0; i < g->num_steps; i++)
    if (!strcmp(g->steps[i].label, label)) return &g->steps[i];
  fail_msg("no step \"%s\"", label);
  return NULL;
}

static void test_operands(void **state) {
  (void)state;
  static const struct {
    const char *name;
    uint32_t ndim;
    int64_t shape[3];
  } want[] = {{"X", 3, {1, 8, 32}},    {"w_attn", 2, {32, 96}},
              {"b_attn", 2, {96, 32}}, {"w_ffn", 2, {32, 64}},
              {"b_ffn", 2, {64, 32}},  {"Y", 3, {1, 8, 32}}};
  assert_ptr_equal(mb_op_find("moe_layer_proxy"), op);
  assert_true(mb_op_is_composite(op));
  mb_op_params_t p = moe_params(1, 8, 32, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  assert_int_equal(p.dtype, MB_DTYPE_BF16); /* the suite's default */
  assert_true(p.eps == 1e-5);               /* jax.nn.standardize's */
  assert_int_equal(mb_op_num_inputs(op), 5);
  assert_int_equal(mb_op_num_outputs(op), 1);
  for (uint32_t role = 0; role < 6; role++) {
    mb_dtype_t dt;
    uint32_t nd;
    int64_t shape[MB_MAX_DIMS];
    assert_int_equal(mb_op_operand(op, &p, role, &dt, &nd, shape), MB_OK);
    assert_string_equal(mb_op_operand_name(op, role), want[role].name);
    assert_int_equal(dt, MB_DTYPE_BF16);
    assert_int_equal(nd, want[role].ndim);
    for (uint32_t d = 0; d < nd; d++)
      assert_int_equal(shape[d], want[role].shape[d]);
  }
  /* No quantization recipe: the JAX suite has none. */
  assert_false(op->param_mask & MB__P_RECIPE);
  p = moe_params(1, 8, 32, MB_DTYPE_BF16);
  p.recipe = MB_RECIPE_INT8DQ;
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  p = moe_params(1, 8, 32, MB_DTYPE_BF16);
  p.recipe = MB_RECIPE_INT8DQ;
  assert_int_equal(op->resolve(&p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "takes no quantization recipe");
  /* Not one of torchao's model types. */
  assert_int_equal(mb_model_resolve("moe_layer_proxy", NULL, NULL, NULL),
                   MB_ERR_NOT_FOUND);
}

static void test_graph(void **state) {
  (void)state;
  static const char *const want[][2] = {
      {"standardize", "layernorm"}, {"qkv: gemm", "gemm"},
      {"attn: gemm", "gemm"},       {"residual1", "add"},
      {"fc1: gemm", "gemm"},        {"fc2: gemm", "gemm"},
      {"residual2", "add"}};
  const int64_t t = 2 * 8, d = 32;
  mb_op_params_t p = moe_params(2, 8, d, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  mb__graph_t *g = compose(&p);
  assert_int_equal(g->num_steps, 7);
  for (uint32_t i = 0; i < 7; i++) {
    assert_string_equal(g->steps[i].label, want[i][0]);
    assert_string_equal(g->steps[i].op->name, want[i][1]);
    assert_int_equal(g->steps[i].phase, MB_PHASE_FORWARD);
  }
  /* standardize: layernorm over [T, D] with no affine part, eps 1e-5. */
  const mb__gstep_t *n = step(g, "standardize");
  assert_int_equal(n->arg[0], X);
  assert_true(n->params.flags & MB_PARAM_NO_WEIGHT);
  assert_true(n->params.eps == 1e-5);
  assert_int_equal(n->params.shape[0], t);
  assert_int_equal(n->params.shape[1], d);
  /* The GEMMs: shapes and weights, chained as upstream's matmuls are. */
  static const struct {
    const char *label;
    uint32_t w;
    int64_t k, n;
  } gemm[] = {{"qkv: gemm", WA, 1, 3},
              {"attn: gemm", BA, 3, 1},
              {"fc1: gemm", WF, 1, 2},
              {"fc2: gemm", BF, 2, 1}};
  for (int i = 0; i < 4; i++) {
    const mb__gstep_t *s = step(g, gemm[i].label);
    assert_int_equal(s->arg[1], gemm[i].w);
    assert_int_equal(s->params.shape[0], t);
    assert_int_equal(s->params.shape[1], gemm[i].k * d);
    assert_int_equal(s->params.shape[2], gemm[i].n * d);
    assert_int_equal(s->params.dtype, MB_DTYPE_BF16);
  }
  assert_int_equal(step(g, "qkv: gemm")->arg[0], n->arg[3]);
  assert_int_equal(step(g, "attn: gemm")->arg[0], step(g, "qkv: gemm")->arg[4]);
  const mb__gstep_t *r1 = step(g, "residual1"), *r2 = step(g, "residual2");
  assert_int_equal(r1->arg[0], X);
  assert_int_equal(r1->arg[1], step(g, "attn: gemm")->arg[4]);
  assert_int_equal(step(g, "fc1: gemm")->arg[0], r1->arg[2]);
  assert_int_equal(step(g, "fc2: gemm")->arg[0], step(g, "fc1: gemm")->arg[4]);
  assert_int_equal(r2->arg[0], r1->arg[2]);
  assert_int_equal(r2->arg[1], step(g, "fc2: gemm")->arg[4]);
  assert_int_equal(r2->arg[2], Y);

  /* FLOP: the graph's, what runs: the four GEMMs 2 T (3 + 3 + 2 + 2) D^2
   * = 20 T D^2 (upstream's figure, 24 T D^2, counts 20% more), layernorm
   * without affine 6 T D, two adds T D each. */
  const double want_flop = 20.0 * t * d * d + 6.0 * t * d + 2.0 * t * d;
  assert_true(fabs(mb_op_flop(op, &p) - want_flop) <= 1e-12 * want_flop);
  /* Bytes: every step's operands once (the layernorm's unread affine
   * operands not counted): the GEMMs' A, B, D and the unit scales. */
  assert_true(mb_op_bytes(op, &p) > 2.0 * (10.0 * d * d));
  free(g);
}

static void test_errors(void **state) {
  (void)state;
  mb_op_params_t p = moe_params(1, 8, 32, MB_DTYPE_BF16);
  p.eps = 0;
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "eps must be positive");
  p = moe_params(1, 8, 32, MB_DTYPE_I8);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  p = moe_params(1, (int64_t)1 << 40, 1 << 10, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "at most 2^48");
}

/* ---- the reference against a naive implementation ----------------------- */

static double *load(const void *src, mb_dtype_t dt, size_t n) {
  float *f = malloc(n * sizeof *f);
  double *v = malloc(n * sizeof *v);
  assert_non_null(f);
  assert_non_null(v);
  assert_int_equal(mb_convert(f, MB_DTYPE_F32, src, dt, n, 0), MB_OK);
  for (size_t i = 0; i < n; i++) v[i] = f[i];
  free(f);
  return v;
}

static void naive_linear(const double *x, const double *w, int64_t t,
                         int64_t kin, int64_t n, double *y) {
  for (int64_t i = 0; i < t; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t c = 0; c < kin; c++) s += x[i * kin + c] * w[c * n + j];
      y[i * n + j] = s;
    }
}

/* Upstream's full_layer_fwd on all T rows at once; Y, malloc'd. */
static double *naive_layer(void *const *host, mb_dtype_t dt, int64_t t,
                           int64_t d, double eps) {
  const size_t td = (size_t)(t * d), dd = (size_t)(d * d);
  double *x = load(host[X], dt, td), *wa = load(host[WA], dt, 3 * dd),
         *ba = load(host[BA], dt, 3 * dd), *wf = load(host[WF], dt, 2 * dd),
         *bf = load(host[BF], dt, 2 * dd);
  double *xn = malloc(td * sizeof *xn), *qkv = malloc(3 * td * sizeof *qkv),
         *at = malloc(td * sizeof *at), *f = malloc(2 * td * sizeof *f),
         *y = malloc(td * sizeof *y);
  assert_true(xn && qkv && at && f && y);
  for (int64_t i = 0; i < t; i++) { /* jax.nn.standardize */
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; j++) mean += x[i * d + j] / (double)d;
    for (int64_t j = 0; j < d; j++)
      var += (x[i * d + j] - mean) * (x[i * d + j] - mean) / (double)d;
    for (int64_t j = 0; j < d; j++)
      xn[i * d + j] = (x[i * d + j] - mean) / sqrt(var + eps);
  }
  naive_linear(xn, wa, t, d, 3 * d, qkv);
  naive_linear(qkv, ba, t, 3 * d, d, at);
  for (size_t i = 0; i < td; i++) x[i] += at[i];
  naive_linear(x, wf, t, d, 2 * d, f);
  naive_linear(f, bf, t, 2 * d, d, y);
  for (size_t i = 0; i < td; i++) y[i] += x[i];
  double *all[] = {x, wa, ba, wf, bf, xn, qkv, at, f};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
  return y;
}

static void check_element(const void *ref, const double *naive, size_t idx) {
  double v, s;
  op->ref_element(ref, 0, idx, &v, &s);
  if (!(fabs(v - naive[idx]) <= 1e-12 * s))
    fail_msg("element %zu: reference %.17g, naive %.17g (scale %g)", idx, v,
             naive[idx], s);
  assert_true(s >= fabs(v));
}

/* Elements in the order `stride` (coprime with the total) walks them, so
 * rows are asked for out of order and evicted from the reference's cache. */
static void check_reference(int64_t b, int64_t s, int64_t d, mb_dtype_t dt,
                            size_t stride) {
  mb_op_params_t p = moe_params(b, s, d, dt);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  void **host =
      test_op_operands(op, &p, NUM_IN + 1, NUM_IN, 500 + (uint64_t)(s * d));
  double *naive = naive_layer(host, dt, b * s, d, p.eps);
  void *ref = NULL;
  assert_int_equal(op->ref_prepare(&p, (const void *const *)host, &ref), MB_OK);
  const size_t total = mb__operand_numel(op, &p, Y);
  for (size_t i = 0, idx = 0; i < total; i++, idx = (idx + stride) % total)
    check_element(ref, naive, idx);
  op->ref_release(ref);
  free(naive);
  test_op_operands_free(host, NUM_IN + 1);
}

static void test_reference(void **state) {
  (void)state;
  check_reference(1, 8, 32, MB_DTYPE_BF16, 1);
  check_reference(1, 8, 32, MB_DTYPE_F32, 1);
  check_reference(2, 3, 16, MB_DTYPE_F16, 1);
  /* 12 rows through 4 cached ones, asked for in a jumping order. */
  check_reference(1, 12, 16, MB_DTYPE_BF16, 5 * 16 + 3);
}

/* The seeded samples fall in 4 rows — first, last, two between — and reach
 * every column of them. */
static void test_ref_sample(void **state) {
  (void)state;
  mb_op_params_t p = moe_params(1, 1000, 64, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  assert_true(op->ref_cost(&p) == 10.0 * 64);
  const int64_t want[4] = {0, 333, 666, 999};
  int seen[4] = {0}, cols[64] = {0};
  for (uint64_t s = 1; s <= 4096; s++) {
    size_t idx = op->ref_sample(&p, 0, s * 0x9E3779B97F4A7C15ull);
    assert_true(idx < 1000 * 64);
    int hit = -1;
    for (int i = 0; i < 4; i++)
      if ((int64_t)(idx / 64) == want[i]) hit = i;
    if (hit < 0) fail_msg("sample %zu is in row %zu", idx, idx / 64);
    seen[hit] = 1;
    cols[idx % 64] = 1;
  }
  for (int i = 0; i < 4; i++) assert_true(seen[i]);
  for (int i = 0; i < 64; i++) assert_true(cols[i]);
  p = moe_params(1, 1, 64, MB_DTYPE_BF16); /* one row */
  for (uint64_t i = 0; i < 64; i++)
    assert_true(op->ref_sample(&p, 0, i * 0x9E3779B97F4A7C15ull) < 64);
}

/* ---- the graph on the host: a missing residual fails the accuracy ------ */

/* Runs g on host buffers (inputs in host[0 .. NUM_IN-1], f32), each step by
 * its own primitive's reference in double, rounded to f32 as a device
 * would store it; Y into host[Y]. */
static void run_on_host(const mb__graph_t *g, void **host) {
  void *buf[MB__GRAPH_MAX_BUFS] = {0};
  for (uint32_t b = 0; b < g->num_bufs; b++) {
    const mb__gbuf_t *gb = &g->bufs[b];
    assert_int_equal(gb->dtype, MB_DTYPE_F32);
    if (gb->operand >= 0) {
      buf[b] = host[gb->operand];
      continue;
    }
    float *v = calloc(gb->numel, sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; !isnan(gb->value) && i < gb->numel; i++)
      v[i] = (float)gb->value;
    buf[b] = v;
  }
  for (uint32_t i = 0; i < g->num_steps; i++) {
    const mb__gstep_t *s = &g->steps[i];
    const mb_op_t *sop = s->op;
    const void *ops[8];
    for (uint32_t r = 0; r < sop->num_inputs + sop->num_outputs; r++)
      ops[r] = buf[s->arg[r]];
    void *ref = NULL;
    assert_int_equal(sop->ref_prepare(&s->params, ops, &ref), MB_OK);
    for (uint32_t o = 0; o < sop->num_outputs; o++) {
      float *out = buf[s->arg[sop->num_inputs + o]];
      const size_t n = mb__operand_numel(sop, &s->params, sop->num_inputs + o);
      for (size_t e = 0; e < n; e++) {
        double v, scale;
        sop->ref_element(ref, o, e, &v, &scale);
        out[e] = (float)v;
      }
    }
    sop->ref_release(ref);
  }
  for (uint32_t b = 0; b < g->num_bufs; b++)
    if (g->bufs[b].operand < 0) free(buf[b]);
}

/* The graph's Y against the composite's reference, as the runner judges a
 * composite's accuracy (mb__verify, then the recipe's floor). */
static mb_accuracy_t accuracy_of(const mb__graph_t *g, const mb_op_params_t *p,
                                 void **host) {
  memset(host[Y], 0, mb__operand_numel(op, p, Y) * sizeof(float));
  run_on_host(g, host);
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  assert_int_equal(mb__verify(op, p, (const void *const *)host,
                              (const void *const *)host + NUM_IN, 77, &c),
                   MB_OK);
  mb_accuracy_t acc;
  mb__accuracy_from(&c, MB_RECIPE_BASELINE, &acc);
  return acc;
}

static void test_planted_missing_residual(void **state) {
  (void)state;
  mb_op_params_t p = moe_params(1, 8, 32, MB_DTYPE_F32);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  void **host = test_op_operands(op, &p, NUM_IN + 1, NUM_IN, 9);
  mb__graph_t *g = compose(&p);
  mb_accuracy_t right = accuracy_of(g, &p, host);
  if (!right.pass)
    fail_msg("the graph: %.1f dB, floor %.0f", right.sqnr_db,
             right.min_sqnr_db);
  assert_true(right.sqnr_db > 100); /* f32 steps, double references */

  /* Planted: the last residual left out, fc2 writing Y (Y = ffn). */
  assert_string_equal(g->steps[g->num_steps - 1].label, "residual2");
  g->num_steps--;
  g->steps[g->num_steps - 1].arg[4] = Y;
  mb_accuracy_t wrong = accuracy_of(g, &p, host);
  assert_true(wrong.checked);
  assert_false(wrong.pass);
  assert_true(wrong.sqnr_db < 10);

  /* Planted: the first residual left out (x1 = attn_out). */
  free(g);
  g = compose(&p);
  mb__gstep_t *r1 = NULL;
  for (uint32_t i = 0; i < g->num_steps; i++)
    if (!strcmp(g->steps[i].label, "residual1")) r1 = &g->steps[i];
  assert_non_null(r1);
  /* x1 = attn_out + attn_out would still be a residual of the wrong
   * tensor; x1 = 0 + attn_out is the residual dropped. */
  r1->arg[0] = mb__graph_buf(g, "zeros", MB_DTYPE_F32, 8, 32);
  assert_int_equal(g->status, MB_OK);
  wrong = accuracy_of(g, &p, host);
  assert_false(wrong.pass);
  free(g);
  test_op_operands_free(host, NUM_IN + 1);
}

/* ---- runs ---------------------------------------------------------------- */

static void run_and_check(const char *dir_var, const char *sub,
                          const char *backend) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s%s%s", test_env_dir(dir_var), *sub ? "/" : "",
           sub);
  mb_context_t *ctx = test_context(dir);
  /* The brief's small config: model_dim 256, mslen 64, batch 1. */
  mb_op_params_t p = moe_params(1, 64, 256, MB_DTYPE_BF16);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "moe_layer_proxy";
  s.params = &p;
  s.backend = backend;
  s.cache = MB_CACHE_HOT;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 2;
  s.min_samples = 2;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, &s, &r) != MB_OK)
    fail_msg("%s: %s", backend, mb_error_last());
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
        backend, mb_result_status_name(info.status), info.reason, c.pass,
        c.max_err_ratio, a.sqnr_db, a.min_sqnr_db);
  assert_true(c.checked);
  assert_string_equal(info.impl, "graph");
  assert_string_equal(info.model, "moe_layer_proxy");
  /* Every step ran on a kernel of the backend and was timed alone. */
  assert_int_equal(mb_result_step_count(r), 7);
  for (size_t i = 0; i < mb_result_step_count(r); i++) {
    mb_step_time_t t = MB_STEP_TIME_INIT;
    assert_int_equal(mb_result_step(r, i, &t), MB_OK);
    assert_true(t.median_ns > 0);
    assert_true(*t.impl);
  }
  const char *key, *text = NULL;
  double v;
  int worst = 0; /* the step check's note: every step was checked */
  for (size_t i = 0; i < mb_result_note_count(r); i++)
    if (mb_result_note(r, i, &key, &text, &v) == MB_OK &&
        !strcmp(key, "worst_step"))
      worst = text && *text;
  assert_true(worst);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

static void test_runs_on_cpu(void **state) {
  (void)state;
  run_and_check("MB_TEST_MODULE_DIR", "", "cpu");
}

/* The shared GPU kernels, emulated (tests/gpu_emu), where built. */
static void test_runs_on_gpuemu(void **state) {
  (void)state;
#ifdef MB_TEST_GPUEMU
  run_and_check("MB_TEST_FIXTURE_DIR", "gpuemu", "gpuemu");
#else
  skip();
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_operands),
      cmocka_unit_test(test_graph),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_reference),
      cmocka_unit_test(test_ref_sample),
      cmocka_unit_test(test_planted_missing_residual),
      cmocka_unit_test(test_runs_on_cpu),
      cmocka_unit_test(test_runs_on_gpuemu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
