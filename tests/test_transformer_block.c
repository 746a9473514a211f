/* transformer_block: operands, the graph under baseline and a dynamic
 * recipe, the shape checks, and the reference (lazy, cached batches)
 * against a naive double implementation written here independently. */
#include <math.h>

#include "test_op_util.h"
#include "models/model_ops.h"
#include "ops/recipe.h"

#define SEQ 16
#define HEADS 8
#define NUM_IN 9
enum { X, N1, WQ, WK, WV, WO, N2, W1, W2, Y };

static const mb_op_t *const op = &mb__op_transformer_block;

static mb_op_params_t tb_params(int64_t m, int64_t k, mb_dtype_t dt) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = m, p.shape[1] = k, p.shape[2] = 1;
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

static void test_operands(void **state) {
  (void)state;
  static const struct {
    const char *name;
    uint32_t ndim;
    int64_t shape[3];
  } want[] = {{"X", 3, {2, 16, 64}}, {"n1", 1, {64}},      {"Wq", 2, {64, 64}},
              {"Wk", 2, {64, 64}},   {"Wv", 2, {64, 64}},  {"Wo", 2, {64, 64}},
              {"n2", 1, {64}},       {"W1", 2, {64, 256}}, {"W2", 2, {256, 64}},
              {"Y", 3, {2, 16, 64}}};
  assert_ptr_equal(mb_op_find("transformer_block"), op);
  mb_op_params_t p = tb_params(2, 64, MB_DTYPE_NONE);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  assert_int_equal(p.dtype, MB_DTYPE_BF16); /* torchao's hp dtype */
  assert_int_equal(mb_op_num_inputs(op), 9);
  assert_int_equal(mb_op_num_outputs(op), 1);
  for (uint32_t role = 0; role < 10; role++) {
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
  assert_string_equal(op->shape_note, "N is unused: the input is [M, 16, K]");
  assert_true(op->param_mask & MB__P_RECIPE);
  assert_true(op->param_mask & MB__P_EPS);
}

typedef struct step_want {
  const char *label, *op;
  mb_phase_t phase;
} step_want_t;

static void check_steps(const mb__graph_t *g, const step_want_t *want,
                        size_t n) {
  assert_int_equal(g->num_steps, n);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(g->steps[i].label, want[i].label);
    assert_string_equal(g->steps[i].op->name, want[i].op);
    assert_int_equal(g->steps[i].phase, want[i].phase);
  }
}

/* The step whose label is `label`; fails when absent. */
static const mb__gstep_t *step(const mb__graph_t *g, const char *label) {
  for (uint32_t i = 0; i < g->num_steps; i++)
    if (!strcmp(g->steps[i].label, label)) return &g->steps[i];
  fail_msg("no step \"%s\"", label);
  return NULL;
}

#define FWD MB_PHASE_FORWARD
#define SETUP MB_PHASE_SETUP

static void test_graph_baseline(void **state) {
  (void)state;
  static const step_want_t want[] = {
      {"norm1", "rmsnorm", FWD},       {"q: gemm", "gemm", FWD},
      {"k: gemm", "gemm", FWD},        {"v: gemm", "gemm", FWD},
      {"attention", "attention", FWD}, {"proj: gemm", "gemm", FWD},
      {"residual1", "add", FWD},       {"norm2", "rmsnorm", FWD},
      {"fc1: gemm", "gemm", FWD},      {"gelu", "activation", FWD},
      {"fc2: gemm", "gemm", FWD},      {"residual2", "add", FWD}};
  mb_op_params_t p = tb_params(2, 64, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  mb__graph_t *g = compose(&p);
  check_steps(g, want, sizeof want / sizeof *want);

  /* Wiring: norm1 reads X and n1; q, k, v read its output and write what
   * attention reads; the residuals read X, then r1; Y is the last write. */
  const mb__gstep_t *n1 = step(g, "norm1"), *at = step(g, "attention");
  assert_int_equal(n1->arg[0], X);
  assert_int_equal(n1->arg[1], N1);
  const char *qkv[] = {"q: gemm", "k: gemm", "v: gemm"};
  const uint32_t w[] = {WQ, WK, WV};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(step(g, qkv[i])->arg[0], n1->arg[2]);
    assert_int_equal(step(g, qkv[i])->arg[1], w[i]);
    assert_int_equal(at->arg[i], step(g, qkv[i])->arg[4]);
  }
  assert_int_equal(step(g, "proj: gemm")->arg[0], at->arg[3]);
  assert_int_equal(step(g, "proj: gemm")->arg[1], WO);
  const mb__gstep_t *r1 = step(g, "residual1"), *r2 = step(g, "residual2");
  assert_int_equal(r1->arg[0], X);
  assert_int_equal(r1->arg[1], step(g, "proj: gemm")->arg[4]);
  assert_int_equal(step(g, "norm2")->arg[0], r1->arg[2]);
  assert_int_equal(step(g, "norm2")->arg[1], N2);
  assert_int_equal(step(g, "fc1: gemm")->arg[1], W1);
  assert_int_equal(step(g, "gelu")->arg[0], step(g, "fc1: gemm")->arg[4]);
  assert_int_equal(step(g, "fc2: gemm")->arg[0], step(g, "gelu")->arg[1]);
  assert_int_equal(step(g, "fc2: gemm")->arg[1], W2);
  assert_int_equal(r2->arg[0], r1->arg[2]);
  assert_int_equal(r2->arg[1], step(g, "fc2: gemm")->arg[4]);
  assert_int_equal(r2->arg[2], Y);

  /* Attention: B = M, 8 heads, S = 16, D = K/8, [B, S, H, D] in place. */
  const int64_t ashape[5] = {2, 8, 16, 16, 8};
  for (int d = 0; d < 5; d++) assert_int_equal(at->params.shape[d], ashape[d]);
  assert_true(at->params.flags & MB_PARAM_BSHD);
  assert_false(at->params.flags & MB_PARAM_CAUSAL);
  assert_int_equal(step(g, "gelu")->params.activation, MB_ACT_GELU_ERF);
  assert_true(step(g, "norm1")->params.eps == p.eps);

  /* FLOP from the graph, against the block written out: T = M S rows;
   * 4 K x K and 2 K x 4K GEMMs, attention 4 D S^2 per (batch, head), two
   * rmsnorms (4), two adds (1), GELU (5) on 4K. */
  const double t = 2.0 * SEQ, k = 64, d = 8;
  const double want_flop = 4 * 2 * t * k * k + 2 * 2 * t * k * 4 * k +
                           4.0 * 2 * HEADS * d * SEQ * SEQ + 2 * 4 * t * k +
                           2 * t * k + 5 * t * 4 * k;
  assert_true(fabs(mb_op_flop(op, &p) - want_flop) <= 1e-9 * want_flop);
  free(g);
}

static void test_graph_float8dq_row(void **state) {
  (void)state;
  /* One quantization of h1 serves q, k and v; every other layer quantizes
   * its own input; weights once, untimed (setup). */
  static const step_want_t want[] = {
      {"norm1", "rmsnorm", FWD},
      {"q: quantize weights", "quantize", SETUP},
      {"q: quantize activations", "quantize", FWD},
      {"q: gemm", "gemm", FWD},
      {"k: quantize weights", "quantize", SETUP},
      {"k: gemm", "gemm", FWD},
      {"v: quantize weights", "quantize", SETUP},
      {"v: gemm", "gemm", FWD},
      {"attention", "attention", FWD},
      {"proj: quantize weights", "quantize", SETUP},
      {"proj: quantize activations", "quantize", FWD},
      {"proj: gemm", "gemm", FWD},
      {"residual1", "add", FWD},
      {"norm2", "rmsnorm", FWD},
      {"fc1: quantize weights", "quantize", SETUP},
      {"fc1: quantize activations", "quantize", FWD},
      {"fc1: gemm", "gemm", FWD},
      {"gelu", "activation", FWD},
      {"fc2: quantize weights", "quantize", SETUP},
      {"fc2: quantize activations", "quantize", FWD},
      {"fc2: gemm", "gemm", FWD},
      {"residual2", "add", FWD}};
  mb_op_params_t p = tb_params(2, 64, MB_DTYPE_BF16);
  p.recipe = MB_RECIPE_FLOAT8DQ_ROW;
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  mb__graph_t *g = compose(&p);
  check_steps(g, want, sizeof want / sizeof *want);
  const mb__gstep_t *qa = step(g, "q: quantize activations");
  assert_int_equal(qa->arg[0], step(g, "norm1")->arg[2]);
  const char *gemms[] = {"q: gemm", "k: gemm", "v: gemm"};
  for (int i = 0; i < 3; i++) {
    const mb__gstep_t *s = step(g, gemms[i]);
    assert_int_equal(s->arg[0], qa->arg[1]); /* the e4m3 h1 */
    assert_int_equal(s->arg[2], qa->arg[2]); /* its row scales */
    assert_int_equal(s->params.dtype, MB_DTYPE_F8E4M3);
  }
  assert_int_equal(step(g, "proj: quantize activations")->arg[0],
                   step(g, "attention")->arg[3]);
  /* Every recipe of a model shares the baseline's FLOP count. */
  mb_op_params_t b = tb_params(2, 64, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &b), MB_OK);
  assert_true(mb_op_flop(op, &p) == mb_op_flop(op, &b));
  free(g);
}

static void test_graph_every_recipe(void **state) {
  (void)state;
  /* K = 256 takes every recipe's blocks and groups (the largest: 256).
   * The sparsity recipes run on the linear model only: refused here with
   * that reason (test_sparsity runs them). */
  for (uint32_t r = 0; r < MB_RECIPE_COUNT; r++) {
    mb_op_params_t p = tb_params(1, 256, MB_DTYPE_BF16);
    p.recipe = r;
    if (mb__recipe_row((mb_recipe_t)r)->sparsity != MB__SPARSE_NONE) {
      assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
      assert_contains(mb_error_last(), "runs on the linear model only");
      continue;
    }
    if (mb_op_resolve(op, &p) != MB_OK)
      fail_msg("recipe %s: %s", mb_recipe_name((mb_recipe_t)r),
               mb_error_last());
    assert_true(mb_op_bytes(op, &p) > 0);
  }
}

static void test_errors(void **state) {
  (void)state;
  mb_op_params_t p = tb_params(2, 60, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(),
                  "transformer_block: K = 60 is not a multiple of the 8 "
                  "attention heads");
  p = tb_params(2, 64, MB_DTYPE_BF16);
  p.eps = 0;
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "eps must be positive");
  p = tb_params(2, 64, MB_DTYPE_I8);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  p = tb_params((int64_t)1 << 40, 1 << 10, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "at most 2^48");
  /* A recipe whose blocks K does not take: the error names the step. */
  p = tb_params(2, 64, MB_DTYPE_BF16);
  p.recipe = MB_RECIPE_FLOAT8_BLOCK;
  assert_int_not_equal(mb_op_resolve(op, &p), MB_OK);
  assert_contains(mb_error_last(), "transformer_block: step \"q: ");
  /* Training has no graph for this model. */
  const char *name = NULL;
  assert_int_equal(
      mb_model_resolve("transformer_block", "training", &name, NULL),
      MB_ERR_UNSUPPORTED);
}

/* ---- the reference against a naive implementation ----------------------- */

static double *load(const void *src, mb_dtype_t dt, size_t n) {
  float *f = malloc(n * sizeof *f);
  double *d = malloc(n * sizeof *d);
  assert_non_null(f);
  assert_non_null(d);
  assert_int_equal(mb_convert(f, MB_DTYPE_F32, src, dt, n, 0), MB_OK);
  for (size_t i = 0; i < n; i++) d[i] = f[i];
  free(f);
  return d;
}

/* y[t, n] = x[t, kin] . w[kin, n], one dot product per element. */
static void naive_linear(const double *x, const double *w, int64_t t,
                         int64_t kin, int64_t n, double *y) {
  for (int64_t i = 0; i < t; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t c = 0; c < kin; c++) s += x[i * kin + c] * w[c * n + j];
      y[i * n + j] = s;
    }
}

static void naive_rmsnorm(const double *x, const double *w, int64_t t,
                          int64_t k, double eps, double *y) {
  for (int64_t i = 0; i < t; i++) {
    double ms = 0;
    for (int64_t j = 0; j < k; j++) ms += x[i * k + j] * x[i * k + j] / k;
    for (int64_t j = 0; j < k; j++)
      y[i * k + j] = x[i * k + j] / sqrt(ms + eps) * (w ? w[j] : 1.0);
  }
}

/* torchao's way: permute [B, S, H, D] to [B, H, S, D], P = softmax(Q K^T
 * / sqrt(D)), O = P V, permute back. */
static void naive_attention(const double *q, const double *k, const double *v,
                            int64_t m, int64_t hid, double *o) {
  const int64_t d = hid / HEADS;
  double *qh = malloc((size_t)(SEQ * d) * sizeof *qh);
  double *kh = malloc((size_t)(SEQ * d) * sizeof *kh);
  double *vh = malloc((size_t)(SEQ * d) * sizeof *vh);
  double p[SEQ][SEQ];
  for (int64_t b = 0; b < m; b++)
    for (int64_t h = 0; h < HEADS; h++) {
      for (int64_t s = 0; s < SEQ; s++)
        for (int64_t e = 0; e < d; e++) {
          const int64_t at = (b * SEQ + s) * hid + h * d + e;
          qh[s * d + e] = q[at], kh[s * d + e] = k[at], vh[s * d + e] = v[at];
        }
      for (int i = 0; i < SEQ; i++) {
        double mx = -INFINITY, z = 0;
        for (int j = 0; j < SEQ; j++) {
          double s = 0;
          for (int64_t e = 0; e < d; e++) s += qh[i * d + e] * kh[j * d + e];
          p[i][j] = s / sqrt((double)d);
          if (p[i][j] > mx) mx = p[i][j];
        }
        for (int j = 0; j < SEQ; j++) z += exp(p[i][j] - mx);
        for (int j = 0; j < SEQ; j++) p[i][j] = exp(p[i][j] - mx) / z;
      }
      for (int i = 0; i < SEQ; i++)
        for (int64_t e = 0; e < d; e++) {
          double s = 0;
          for (int j = 0; j < SEQ; j++) s += p[i][j] * vh[j * d + e];
          o[(b * SEQ + i) * hid + h * d + e] = s;
        }
    }
  free(qh);
  free(kh);
  free(vh);
}

/* The whole block on all M batches at once; Y, malloc'd. */
static double *naive_block(void *const *host, mb_dtype_t dt, int64_t m,
                           int64_t k, double eps, int affine) {
  const int64_t t = m * SEQ;
  const size_t tk = (size_t)(t * k);
  double *x = load(host[X], dt, tk), *n1 = load(host[N1], dt, (size_t)k),
         *n2 = load(host[N2], dt, (size_t)k);
  double *w[4];
  for (int i = 0; i < 4; i++) w[i] = load(host[WQ + i], dt, (size_t)(k * k));
  double *w1 = load(host[W1], dt, (size_t)(4 * k * k));
  double *w2 = load(host[W2], dt, (size_t)(4 * k * k));
  double *buf[6];
  for (int i = 0; i < 6; i++)
    assert_non_null(buf[i] = malloc(tk * sizeof(double)));
  double *h = buf[0], *q = buf[1], *kk = buf[2], *v = buf[3], *o = buf[4],
         *r1 = buf[5];
  double *f = malloc(4 * tk * sizeof *f), *y = malloc(tk * sizeof *y);
  naive_rmsnorm(x, affine ? n1 : NULL, t, k, eps, h);
  naive_linear(h, w[0], t, k, k, q);
  naive_linear(h, w[1], t, k, k, kk);
  naive_linear(h, w[2], t, k, k, v);
  naive_attention(q, kk, v, m, k, o);
  naive_linear(o, w[3], t, k, k, r1);
  for (size_t i = 0; i < tk; i++) r1[i] += x[i];
  naive_rmsnorm(r1, affine ? n2 : NULL, t, k, eps, h);
  naive_linear(h, w1, t, k, 4 * k, f);
  for (size_t i = 0; i < 4 * tk; i++) /* torch's nn.GELU(): the erf form */
    f[i] = 0.5 * f[i] * (1.0 + erf(f[i] / sqrt(2.0)));
  naive_linear(f, w2, t, 4 * k, k, y);
  for (size_t i = 0; i < tk; i++) y[i] += r1[i];
  double *all[] = {x,  n1, n2,     w[0],   w[1],   w[2],   w[3],   w1,
                   w2, f,  buf[0], buf[1], buf[2], buf[3], buf[4], buf[5]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
  return y;
}

/* The reference at element idx agrees with the naive Y to ~1e-12 of its
 * scale, and the scale bounds |Y|. */
static void check_element(const void *ref, const double *naive, size_t idx) {
  double v, s;
  op->ref_element(ref, 0, idx, &v, &s);
  if (!(fabs(v - naive[idx]) <= 1e-12 * s))
    fail_msg("element %zu: reference %.17g, naive %.17g (scale %g)", idx, v,
             naive[idx], s);
  assert_true(s >= fabs(v));
}

/* Checks elements in the order `stride` (coprime with the total) walks
 * them, after element 0 and the last, so batches are asked for out of
 * order and evicted from the reference's cache. */
static void check_reference(int64_t m, int64_t k, mb_dtype_t dt, int affine,
                            size_t stride) {
  mb_op_params_t p = tb_params(m, k, dt);
  if (!affine) p.flags |= MB_PARAM_NO_WEIGHT;
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  void **host =
      test_op_operands(op, &p, NUM_IN, NUM_IN, 1000 + (uint64_t)(m * k));
  double *naive = naive_block(host, dt, m, k, p.eps, affine);
  void *ref = NULL;
  assert_int_equal(op->ref_prepare(&p, (const void *const *)host, &ref), MB_OK);
  const size_t total = mb__operand_numel(op, &p, Y);
  check_element(ref, naive, 0);
  check_element(ref, naive, total - 1);
  for (size_t i = 0, idx = 0; i < total; i++, idx = (idx + stride) % total)
    check_element(ref, naive, idx);
  op->ref_release(ref);
  free(naive);
  test_op_operands_free(host, NUM_IN);
}

static void test_reference(void **state) {
  (void)state;
  check_reference(2, 32, MB_DTYPE_BF16, 1, 1);
  check_reference(2, 32, MB_DTYPE_F32, 1, 1);
  check_reference(2, 32, MB_DTYPE_F16, 0, 1);
  /* 6 batches through 4 cached ones, asked for in a jumping order. */
  check_reference(6, 16, MB_DTYPE_BF16, 1, 7 * 16 * 16 + 3);
}

/* The seeded samples fall in 4 batches — first, last, two between — and
 * reach every row and column of them; a reference asked only for those is
 * right. */
static void test_ref_sample(void **state) {
  (void)state;
  mb_op_params_t p = tb_params(1000, 64, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  const size_t per = SEQ * 64, total = 1000 * per;
  assert_true(op->ref_cost(&p) == 12.0 * 64);
  int seen[4] = {0, 0, 0, 0}, rows_seen[SEQ] = {0};
  const int64_t want[4] = {0, 333, 666, 999};
  uint64_t r = 88172645463325252ull;
  for (int s = 0; s < 8192; s++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17; /* xorshift64 */
    size_t idx = op->ref_sample(&p, 0, r);
    assert_true(idx < total);
    int64_t b = (int64_t)(idx / per);
    int hit = -1;
    for (int i = 0; i < 4; i++)
      if (b == want[i]) hit = i;
    if (hit < 0) fail_msg("sample %zu is in batch %lld", idx, (long long)b);
    seen[hit] = 1;
    rows_seen[idx % per / 64] = 1;
  }
  for (int i = 0; i < 4; i++) assert_true(seen[i]);
  for (int i = 0; i < SEQ; i++) assert_true(rows_seen[i]);
  /* M < 4: the batches there are. */
  p = tb_params(1, 64, MB_DTYPE_BF16);
  for (uint64_t i = 0; i < 64; i++)
    assert_true(op->ref_sample(&p, 0, i * 0x9E3779B97F4A7C15ull) < per);

  /* Sampled checking as verify will do it, on M = 64. */
  p = tb_params(64, 16, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  void **host = test_op_operands(op, &p, NUM_IN, NUM_IN, 7);
  double *naive = naive_block(host, p.dtype, 64, 16, p.eps, 1);
  void *ref = NULL;
  assert_int_equal(op->ref_prepare(&p, (const void *const *)host, &ref), MB_OK);
  check_element(ref, naive, 0);
  check_element(ref, naive, mb__operand_numel(op, &p, Y) - 1);
  for (uint64_t s = 1; s <= 2000; s++)
    check_element(ref, naive, op->ref_sample(&p, 0, s * 0x9E3779B97F4A7C15ull));
  op->ref_release(ref);
  free(naive);
  test_op_operands_free(host, NUM_IN);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_operands),
      cmocka_unit_test(test_graph_baseline),
      cmocka_unit_test(test_graph_float8dq_row),
      cmocka_unit_test(test_graph_every_recipe),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_reference),
      cmocka_unit_test(test_ref_sample),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
