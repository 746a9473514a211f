/* The element-wise family's op definitions (activation, silu_mul,
 * layernorm, rmsnorm, softmax, attention, copy): validation messages, the
 * FLOP/byte models, references on values known in closed form, tolerances,
 * and the check itself on correctly rounded and on truncated outputs. */
#include <math.h>

#include "test_util.h"
#include "dtype_internal.h"
#include "ops/op_internal.h"
#include "ops/verify.h"

static const double k_u32 = 0x1p-24;

static mb_op_params_t params(uint32_t ndim, const int64_t *shape) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = ndim;
  for (uint32_t i = 0; i < ndim; i++) p.shape[i] = shape[i];
  return p;
}

static mb_op_params_t mn(int64_t m, int64_t n) {
  const int64_t s[] = {m, n};
  return params(2, s);
}

static mb_op_params_t attn(int64_t b, int64_t h, int64_t sq, int64_t skv,
                           int64_t d) {
  const int64_t s[] = {b, h, sq, skv, d};
  return params(5, s);
}

/* The reference value and scale of element idx of output 0. */
static void ref_at(const mb_op_t *op, const mb_op_params_t *p,
                   const void *const *host, size_t idx, double *v,
                   double *scale) {
  void *ref = NULL;
  assert_int_equal(op->ref_prepare(p, host, &ref), MB_OK);
  op->ref_element(ref, 0, idx, v, scale);
  op->ref_release(ref);
}

static void assert_near(double got, double want, double tol) {
  if (!(fabs(got - want) <= tol))
    fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void test_find_and_defaults(void **state) {
  (void)state;
  const char *names[] = {"activation", "silu_mul",  "layernorm", "rmsnorm",
                         "softmax",    "attention", "copy"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const mb_op_t *op = mb_op_find(names[i]);
    assert_non_null(op);
    assert_string_equal(mb_op_name(op), names[i]);
    mb_op_params_t p = op->rank == 5 ? attn(1, 2, 3, 4, 5) : mn(3, 4);
    assert_int_equal(mb_op_resolve(op, &p), MB_OK);
    assert_int_equal(p.dtype, MB_DTYPE_F32);
    assert_int_equal(p.dtype_out, MB_DTYPE_F32);
    assert_int_equal(p.dtype_acc, MB_DTYPE_F32);
  }
  assert_string_equal(mb_op_shape_syntax(&mb__op_attention), "BxHxSqxSkvxD");
  assert_string_equal(mb__op_attention.dim_names[3], "Skv");
  assert_string_equal(mb_op_operand_name(&mb__op_layernorm, 2), "Bias");
  assert_int_equal(mb__op_activation.param_mask, MB__P_ACT);
  assert_int_equal(mb__op_layernorm.param_mask, MB__P_EPS);
  assert_int_equal(mb__op_rmsnorm.param_mask, MB__P_EPS);
  assert_int_equal(mb__op_attention.param_mask,
                   MB__P_CAUSAL | MB__P_BSHD | MB__P_KV_HEADS);
}

/* Each message names the op, the field, the value and the valid choices. */
static void expect_error(const mb_op_t *op, mb_op_params_t p,
                         const char *message) {
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), message);
}

static void test_resolve_errors(void **state) {
  (void)state;
  mb_op_params_t p = mn(4, 4);
  p.dtype = MB_DTYPE_I8;
  expect_error(&mb__op_activation, p,
               "activation: dtype \"i8\" is not supported; valid: f32, bf16, "
               "f16");
  p = mn(4, 4);
  p.activation = (mb_activation_t)42;
  expect_error(&mb__op_activation, p,
               "activation: activation 42 is not valid; valid: relu, "
               "gelu_tanh, gelu_erf, silu, sigmoid, leakyrelu, relu6, "
               "hardswish");
  p = mn(4, 4);
  p.activation = MB_ACT_LEAKYRELU;
  p.act_alpha = NAN;
  expect_error(&mb__op_activation, p,
               "activation: act_alpha (the leakyrelu slope) must be finite "
               "(got nan)");
  p = mn(4, 4);
  p.dtype = MB_DTYPE_BF16;
  p.dtype_out = MB_DTYPE_F32;
  expect_error(&mb__op_softmax, p,
               "softmax: dtype_out \"f32\" is not supported; valid: bf16");
  p = mn(4, 4);
  p.dtype_b = MB_DTYPE_F16;
  expect_error(&mb__op_silu_mul, p,
               "silu_mul: dtype_b \"f16\" is not supported; valid: f32");
  p = mn(4, 4);
  p.dtype_acc = MB_DTYPE_BF16;
  expect_error(&mb__op_rmsnorm, p,
               "rmsnorm: dtype_acc \"bf16\" is not supported; valid: f32");
  p = mn(4, 4);
  p.flags = MB_PARAM_CAUSAL;
  expect_error(&mb__op_softmax, p,
               "softmax: \"causal\" does not apply to this op");
  p = mn(4, 4);
  p.flags = MB_PARAM_CAUSAL;
  expect_error(&mb__op_layernorm, p,
               "layernorm: \"causal\" does not apply to this op");
  p = mn(4, 4);
  p.eps = 0;
  expect_error(&mb__op_layernorm, p,
               "layernorm: eps must be positive and finite (got 0)");
  p = mn(4, 4);
  p.eps = INFINITY;
  expect_error(&mb__op_rmsnorm, p,
               "rmsnorm: eps must be positive and finite (got inf)");
  p = attn(1, 1, 8, 5, 4);
  p.flags = MB_PARAM_CAUSAL;
  expect_error(&mb__op_attention, p,
               "attention: causal with Sq 8 > Skv 5 leaves the first 3 "
               "queries without a key");
  p = mn(4, 4);
  p.flags = MB_PARAM_BSHD;
  expect_error(&mb__op_softmax, p,
               "softmax: \"bshd\" does not apply to this op");
  p = attn(1, 1, 8, 5, 4);
  p.flags = MB_PARAM_NO_WEIGHT;
  expect_error(&mb__op_attention, p,
               "attention: \"no-affine\" does not apply to this op");
  p = mn(4, 4);
  expect_error(&mb__op_attention, p,
               "attention: shape 4x4 has 2 dimensions; attention needs 5 "
               "(BxHxSqxSkvxD)");
  p = attn(1 << 20, 1 << 20, 1, 1, 1 << 20);
  expect_error(&mb__op_attention, p,
               "attention: operand Q would have 1.15e+18 elements; at most "
               "2^48");
  p = mn(4, 4);
  p.dtype = MB_DTYPE_I4;
  p.dtype_out = MB_DTYPE_I8;
  expect_error(&mb__op_copy, p,
               "copy: dtype_out \"i8\" is not supported; valid: i4");
  /* Valid corner cases. */
  p = attn(1, 1, 5, 5, 4);
  p.flags = MB_PARAM_CAUSAL;
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  p = mn(4, 4);
  p.dtype = MB_DTYPE_F8E5M2;
  assert_int_equal(mb_op_resolve(&mb__op_copy, &p), MB_OK);
  assert_int_equal(p.dtype_out, MB_DTYPE_F8E5M2);
}

static void test_flop_bytes(void **state) {
  (void)state;
  /* activation: per function (see activation.c), 2 MN size. */
  const double act_flop[MB_ACT_COUNT] = {1, 9, 5, 4, 4, 2, 2, 5};
  for (int a = 0; a < MB_ACT_COUNT; a++) {
    mb_op_params_t p = mn(30, 100);
    p.activation = (mb_activation_t)a;
    p.dtype = MB_DTYPE_BF16;
    assert_int_equal(mb_op_resolve(&mb__op_activation, &p), MB_OK);
    assert_true(mb_op_flop(&mb__op_activation, &p) == act_flop[a] * 3000);
    assert_true(mb_op_bytes(&mb__op_activation, &p) == 2 * 3000 * 2);
  }
  mb_op_params_t p = mn(30, 100);
  assert_int_equal(mb_op_resolve(&mb__op_silu_mul, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_silu_mul, &p) == 5 * 3000);
  assert_true(mb_op_bytes(&mb__op_silu_mul, &p) == 3 * 3000 * 4);
  /* Norms: 8 / 6 and 4 / 3 per element; parameters counted when used. */
  p = mn(30, 100);
  p.dtype = MB_DTYPE_F16;
  assert_int_equal(mb_op_resolve(&mb__op_layernorm, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_layernorm, &p) == 8 * 3000);
  assert_true(mb_op_bytes(&mb__op_layernorm, &p) == (2 * 3000 + 200) * 2);
  p.flags = MB_PARAM_NO_WEIGHT;
  assert_true(mb_op_flop(&mb__op_layernorm, &p) == 6 * 3000);
  assert_true(mb_op_bytes(&mb__op_layernorm, &p) == 2 * 3000 * 2);
  p = mn(30, 100);
  assert_int_equal(mb_op_resolve(&mb__op_rmsnorm, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_rmsnorm, &p) == 4 * 3000);
  assert_true(mb_op_bytes(&mb__op_rmsnorm, &p) == (2 * 3000 + 100) * 4);
  p.flags = MB_PARAM_NO_WEIGHT;
  assert_true(mb_op_flop(&mb__op_rmsnorm, &p) == 3 * 3000);
  p = mn(30, 100);
  assert_int_equal(mb_op_resolve(&mb__op_softmax, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_softmax, &p) == 5 * 3000);
  assert_true(mb_op_bytes(&mb__op_softmax, &p) == 2 * 3000 * 4);
  /* copy: no FLOP; i4 is half a byte per element. */
  p = mn(3, 5);
  p.dtype = MB_DTYPE_I4;
  assert_int_equal(mb_op_resolve(&mb__op_copy, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_copy, &p) == 0);
  assert_true(mb_op_bytes(&mb__op_copy, &p) == 15);
  /* attention: 4 D per unmasked pair; bytes |Q| + |K| + |V| + |O|. */
  p = attn(2, 3, 4, 6, 8);
  p.dtype = MB_DTYPE_BF16;
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_attention, &p) == 4.0 * 2 * 3 * 4 * 6 * 8);
  assert_true(mb_op_bytes(&mb__op_attention, &p) ==
              2.0 * (2 * 2 * 3 * 4 * 8 + 2 * 2 * 3 * 6 * 8));
  /* Causal, bottom-right: query i sees i + 3 keys (Sq 4, Skv 6): 3+4+5+6. */
  p.flags = MB_PARAM_CAUSAL;
  assert_true(mb_op_flop(&mb__op_attention, &p) == 4.0 * 2 * 3 * 8 * 18);
  /* Square: S (S + 1) / 2 pairs. */
  p = attn(1, 1, 1024, 1024, 64);
  p.flags = MB_PARAM_CAUSAL;
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_attention, &p) == 4.0 * 64 * 1024 * 1025 / 2);
}

/* Activations at points whose values are known in closed form. */
static void test_activation_reference(void **state) {
  (void)state;
  const float x[] = {-4.0f, -1.0f, 0.0f, 1.0f, 2.0f, 7.0f};
  const size_t n = sizeof x / sizeof *x;
  const double s2 = sqrt(2.0), c = sqrt(2.0 / M_PI);
  for (int a = 0; a < MB_ACT_COUNT; a++) {
    mb_op_params_t p = mn(1, (int64_t)n);
    p.activation = (mb_activation_t)a;
    p.act_alpha = 0.25;
    assert_int_equal(mb_op_resolve(&mb__op_activation, &p), MB_OK);
    for (size_t i = 0; i < n; i++) {
      const double v = x[i];
      double want;
      switch (a) {
        case MB_ACT_RELU:
          want = v > 0 ? v : 0;
          break;
        case MB_ACT_GELU_TANH:
          want = 0.5 * v * (1 + tanh(c * (v + 0.044715 * v * v * v)));
          break;
        case MB_ACT_GELU_ERF:
          want = 0.5 * v * (1 + erf(v / s2));
          break;
        case MB_ACT_SILU:
          want = v / (1 + exp(-v));
          break;
        case MB_ACT_SIGMOID:
          want = 1 / (1 + exp(-v));
          break;
        case MB_ACT_LEAKYRELU:
          want = v > 0 ? v : 0.25 * v;
          break;
        case MB_ACT_RELU6:
          want = v < 0 ? 0 : v > 6 ? 6 : v;
          break;
        default:
          want = v * fmin(fmax(v + 3, 0), 6) / 6;
          break;
      }
      const void *host[] = {x, NULL};
      double got, scale;
      ref_at(&mb__op_activation, &p, host, i, &got, &scale);
      assert_near(got, want, 1e-15);
      assert_true(scale >= fabs(got));
    }
  }
  /* Spot values: gelu_tanh(1) = 0.8411920, gelu_erf(1) = 0.8413447. */
  mb_op_params_t p = mn(1, 1);
  const float one = 1.0f;
  const void *host[] = {&one, NULL};
  double v, s;
  p.activation = MB_ACT_GELU_TANH;
  assert_int_equal(mb_op_resolve(&mb__op_activation, &p), MB_OK);
  ref_at(&mb__op_activation, &p, host, 0, &v, &s);
  assert_near(v, 0.84119199, 1e-8);
  p.activation = MB_ACT_GELU_ERF;
  ref_at(&mb__op_activation, &p, host, 0, &v, &s);
  assert_near(v, 0.84134475, 1e-8);
  /* silu_mul: silu(1) * 3. */
  const float three = 3.0f;
  const void *host2[] = {&one, &three, NULL};
  p = mn(1, 1);
  assert_int_equal(mb_op_resolve(&mb__op_silu_mul, &p), MB_OK);
  ref_at(&mb__op_silu_mul, &p, host2, 0, &v, &s);
  assert_near(v, 3.0 / (1 + exp(-1.0)), 1e-15);
  assert_true(s == 3.0);
}

static void test_softmax_reference(void **state) {
  (void)state;
  /* Row 0: [1, 2, 3]; row 1 shifted by 1000 gives the same probabilities
   * (the max is subtracted). */
  const float x[] = {1, 2, 3, 1001, 1002, 1003};
  mb_op_params_t p = mn(2, 3);
  assert_int_equal(mb_op_resolve(&mb__op_softmax, &p), MB_OK);
  const void *host[] = {x, NULL};
  const double z = exp(-2.0) + exp(-1.0) + 1.0;
  void *ref;
  assert_int_equal(mb__op_softmax.ref_prepare(&p, host, &ref), MB_OK);
  for (int r = 0; r < 2; r++) {
    double sum = 0;
    for (int j = 0; j < 3; j++) {
      double v, s;
      mb__op_softmax.ref_element(ref, 0, (size_t)(r * 3 + j), &v, &s);
      assert_near(v, exp((double)j - 2.0) / z, 1e-15);
      assert_true(s >= v);
      sum += v;
    }
    assert_near(sum, 1.0, 1e-15);
  }
  mb__op_softmax.ref_release(ref);
}

static void test_norm_reference(void **state) {
  (void)state;
  /* [1, 2, 3, 4]: mean 2.5, biased variance 1.25. */
  const float x[] = {1, 2, 3, 4}, w[] = {1, 2, 1, 1}, b[] = {0, 0, 0, 0.5f};
  mb_op_params_t p = mn(1, 4);
  assert_int_equal(mb_op_resolve(&mb__op_layernorm, &p), MB_OK);
  const void *host[] = {x, w, b, NULL};
  const double r = 1.0 / sqrt(1.25 + 1e-5);
  double v, s;
  ref_at(&mb__op_layernorm, &p, host, 1, &v, &s);
  assert_near(v, (2 - 2.5) * r * 2, 1e-15);
  ref_at(&mb__op_layernorm, &p, host, 3, &v, &s);
  assert_near(v, (4 - 2.5) * r + 0.5, 1e-15);
  /* Scale: |w| (|xhat| + rstd mean|x|) + |b|. */
  assert_near(s, 1.5 * r + r * 2.5 + 0.5, 1e-15);
  p.flags = MB_PARAM_NO_WEIGHT; /* W and Bias exist but are ignored */
  assert_int_equal(mb_op_resolve(&mb__op_layernorm, &p), MB_OK);
  ref_at(&mb__op_layernorm, &p, host, 1, &v, &s);
  assert_near(v, (2 - 2.5) * r, 1e-15);
  ref_at(&mb__op_layernorm, &p, host, 3, &v, &s);
  assert_near(v, 1.5 * r, 1e-15);
  /* rmsnorm of [3, 4]: mean square 12.5. */
  const float y[] = {3, 4}, wy[] = {2, 1};
  const void *host2[] = {y, wy, NULL};
  p = mn(1, 2);
  assert_int_equal(mb_op_resolve(&mb__op_rmsnorm, &p), MB_OK);
  ref_at(&mb__op_rmsnorm, &p, host2, 0, &v, &s);
  assert_near(v, 3 * 2 / sqrt(12.5 + 1e-5), 1e-15);
  assert_true(s == fabs(v));
  p.flags = MB_PARAM_NO_WEIGHT;
  assert_int_equal(mb_op_resolve(&mb__op_rmsnorm, &p), MB_OK);
  ref_at(&mb__op_rmsnorm, &p, host2, 0, &v, &s);
  assert_near(v, 3 / sqrt(12.5 + 1e-5), 1e-15);
}

static void test_attention_reference(void **state) {
  (void)state;
  /* Skv = 1: every query's softmax is [1], O = V. */
  const float q[] = {1, 2, -3, 4, 5, 6}, k1[] = {7, -8}, v1[] = {0.5f, -9};
  mb_op_params_t p = attn(1, 1, 3, 1, 2);
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  const void *host[] = {q, k1, v1, NULL};
  for (size_t i = 0; i < 6; i++) {
    double v, s;
    ref_at(&mb__op_attention, &p, host, i, &v, &s);
    assert_near(v, v1[i % 2], 1e-15);
  }
  /* Two queries, two keys, D = 1, K = 0: uniform weights; causal: query 0
   * sees key 0 only (bottom-right aligned with Sq = Skv: j <= i). */
  const float q2[] = {1, 2}, k2[] = {0, 0}, v2[] = {10, 20};
  const void *host2[] = {q2, k2, v2, NULL};
  p = attn(1, 1, 2, 2, 1);
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  double v, s;
  ref_at(&mb__op_attention, &p, host2, 0, &v, &s);
  assert_near(v, 15, 1e-13);
  p.flags = MB_PARAM_CAUSAL;
  ref_at(&mb__op_attention, &p, host2, 0, &v, &s);
  assert_near(v, 10, 1e-13);
  ref_at(&mb__op_attention, &p, host2, 1, &v, &s);
  assert_near(v, 15, 1e-13);
  /* Sq 1 < Skv 2, causal: the one query is the last, it sees both keys. */
  p = attn(1, 1, 1, 2, 1);
  p.flags = MB_PARAM_CAUSAL;
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  ref_at(&mb__op_attention, &p, host2, 0, &v, &s);
  assert_near(v, 15, 1e-13);
  /* Scores q.k / sqrt(D): q = [1, 1], k0 = [2, 2], k1 = 0: s = [2 sqrt2, 0]. */
  const float q3[] = {1, 1}, k3[] = {2, 2, 0, 0}, v3[] = {1, 0, 0, 1};
  const void *host3[] = {q3, k3, v3, NULL};
  p = attn(1, 1, 1, 2, 2);
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  const double e = exp(2 * sqrt(2.0));
  ref_at(&mb__op_attention, &p, host3, 0, &v, &s);
  assert_near(v, e / (e + 1), 1e-15);
  ref_at(&mb__op_attention, &p, host3, 1, &v, &s);
  assert_near(v, 1 / (e + 1), 1e-15);
}

/* Seeded normal(0, 1) f32 values. */
static float *normal_f32(size_t n, uint64_t seed) {
  float *x = malloc(n * sizeof *x);
  mb_fill_t f = MB_FILL_INIT;
  f.seed = seed;
  assert_non_null(x);
  assert_int_equal(mb_fill_host(x, MB_DTYPE_F32, n, &f), MB_OK);
  return x;
}

/* [B,S,H,D] -> [B,H,S,D]. */
static float *to_bhsd(const float *x, int64_t b, int64_t s, int64_t h,
                      int64_t d) {
  float *y = malloc((size_t)(b * s * h * d) * sizeof *y);
  assert_non_null(y);
  for (int64_t ib = 0; ib < b; ib++)
    for (int64_t is = 0; is < s; is++)
      for (int64_t ih = 0; ih < h; ih++)
        for (int64_t id = 0; id < d; id++)
          y[((ib * h + ih) * s + is) * d + id] =
              x[((ib * s + is) * h + ih) * d + id];
  return y;
}

/* MB_PARAM_BSHD: operands [B,S,H,D]; the reference on [B,S,H,D] data is
 * the default layout's reference on the same data permuted to [B,H,S,D],
 * element for element (the same sums in the same order: exactly equal);
 * FLOP and bytes do not change. Sq != Skv, H > 1, B > 1, causal and not. */
static void test_attention_bshd(void **state) {
  (void)state;
  static const struct {
    int64_t b, h, sq, skv, d;
    uint32_t flags;
  } k_shapes[] = {
      {2, 3, 4, 5, 3, 0},
      {2, 3, 4, 5, 3, MB_PARAM_CAUSAL},
      {1, 2, 3, 3, 2, MB_PARAM_CAUSAL},
      {2, 2, 5, 3, 4, 0},
  };
  for (size_t t = 0; t < sizeof k_shapes / sizeof *k_shapes; t++) {
    const int64_t b = k_shapes[t].b, h = k_shapes[t].h, sq = k_shapes[t].sq,
                  skv = k_shapes[t].skv, d = k_shapes[t].d;
    mb_op_params_t pb = attn(b, h, sq, skv, d), ph = pb;
    pb.flags = k_shapes[t].flags | MB_PARAM_BSHD;
    ph.flags = k_shapes[t].flags;
    assert_int_equal(mb_op_resolve(&mb__op_attention, &pb), MB_OK);
    assert_int_equal(mb_op_resolve(&mb__op_attention, &ph), MB_OK);
    assert_true(mb_op_flop(&mb__op_attention, &pb) ==
                mb_op_flop(&mb__op_attention, &ph));
    assert_true(mb_op_bytes(&mb__op_attention, &pb) ==
                mb_op_bytes(&mb__op_attention, &ph));
    for (uint32_t role = 0; role < 4; role++) {
      mb_dtype_t dt;
      uint32_t nd;
      int64_t shape[MB_MAX_DIMS];
      const int64_t seq = role == 1 || role == 2 ? skv : sq;
      mb__op_attention.operand(&pb, role, &dt, &nd, shape);
      assert_int_equal(nd, 4);
      assert_true(shape[0] == b && shape[1] == seq && shape[2] == h &&
                  shape[3] == d);
      mb__op_attention.operand(&ph, role, &dt, &nd, shape);
      assert_true(shape[0] == b && shape[1] == h && shape[2] == seq &&
                  shape[3] == d);
    }
    float *q = normal_f32((size_t)(b * sq * h * d), 10 + t);
    float *k = normal_f32((size_t)(b * skv * h * d), 20 + t);
    float *v = normal_f32((size_t)(b * skv * h * d), 30 + t);
    float *qh = to_bhsd(q, b, sq, h, d), *kh = to_bhsd(k, b, skv, h, d),
          *vh = to_bhsd(v, b, skv, h, d);
    const void *hb[] = {q, k, v, NULL}, *hh[] = {qh, kh, vh, NULL};
    void *rb, *rh;
    assert_int_equal(mb__op_attention.ref_prepare(&pb, hb, &rb), MB_OK);
    assert_int_equal(mb__op_attention.ref_prepare(&ph, hh, &rh), MB_OK);
    for (int64_t ib = 0; ib < b; ib++)
      for (int64_t i = 0; i < sq; i++)
        for (int64_t ih = 0; ih < h; ih++)
          for (int64_t e = 0; e < d; e++) {
            const size_t xb = (size_t)(((ib * sq + i) * h + ih) * d + e);
            const size_t xh = (size_t)(((ib * h + ih) * sq + i) * d + e);
            double vb, sb, vhd, shd;
            mb__op_attention.ref_element(rb, 0, xb, &vb, &sb);
            mb__op_attention.ref_element(rh, 0, xh, &vhd, &shd);
            if (vb != vhd || sb != shd)
              fail_msg(
                  "shape %zu, (b %lld, i %lld, h %lld, e %lld): bshd "
                  "%.17g (scale %.17g), bhsd %.17g (scale %.17g)",
                  t, (long long)ib, (long long)i, (long long)ih, (long long)e,
                  vb, sb, vhd, shd);
          }
    mb__op_attention.ref_release(rb);
    mb__op_attention.ref_release(rh);
    free(q), free(k), free(v), free(qh), free(kh), free(vh);
  }
}

static void test_tolerances(void **state) {
  (void)state;
  mb_op_params_t p = mn(4, 1024);
  p.dtype = MB_DTYPE_BF16;
  p.activation = MB_ACT_GELU_TANH;
  assert_int_equal(mb_op_resolve(&mb__op_activation, &p), MB_OK);
  mb__tolerance_t t = mb__op_activation.tolerance(&p, 0);
  assert_true(t.ulps == 0.5 && t.rel == 12 * k_u32);
  p.activation = MB_ACT_RELU;
  t = mb__op_activation.tolerance(&p, 0);
  assert_true(t.ulps == 0.5 && t.rel == 0);
  assert_int_equal(mb_op_resolve(&mb__op_layernorm, &p), MB_OK);
  t = mb__op_layernorm.tolerance(&p, 0);
  assert_true(t.ulps == 0.5 && t.rel == (64 + 8) * k_u32);
  assert_int_equal(mb_op_resolve(&mb__op_softmax, &p), MB_OK);
  t = mb__op_softmax.tolerance(&p, 0);
  assert_near(t.rel, (64 + log(1024.0) + 10) * k_u32, 1e-20);
  p = attn(1, 2, 16, 256, 64);
  assert_int_equal(mb_op_resolve(&mb__op_attention, &p), MB_OK);
  t = mb__op_attention.tolerance(&p, 0);
  assert_true(t.ulps == 0.5 && t.rel == (4 * 16 + 16) * k_u32);
  p = mn(3, 3);
  assert_int_equal(mb_op_resolve(&mb__op_copy, &p), MB_OK);
  t = mb__op_copy.tolerance(&p, 0);
  assert_true(t.ulps == 0 && t.rel == 0);
}

#include "eltwise_rounding.h"

static void test_rounding_is_judged(void **state) {
  (void)state;
  const mb_dtype_t dts[] = {MB_DTYPE_BF16, MB_DTYPE_F16};
  for (size_t i = 0; i < 2; i++) {
    mb_op_params_t p = mn(17, 130);
    p.dtype = dts[i];
    for (int a = 0; a < MB_ACT_COUNT; a++) {
      if (a == MB_ACT_RELU || a == MB_ACT_RELU6) continue; /* exact */
      p.activation = (mb_activation_t)a;
      check_rounding(&mb__op_activation, p);
    }
    check_rounding(&mb__op_silu_mul, p);
    check_rounding(&mb__op_layernorm, p);
    check_rounding(&mb__op_rmsnorm, p);
    check_rounding(&mb__op_softmax, p);
    mb_op_params_t a = attn(2, 2, 9, 13, 16);
    a.dtype = dts[i];
    check_rounding(&mb__op_attention, a);
    a.flags = MB_PARAM_CAUSAL;
    check_rounding(&mb__op_attention, a);
    a.flags = MB_PARAM_CAUSAL | MB_PARAM_BSHD;
    check_rounding(&mb__op_attention, a);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_find_and_defaults),
      cmocka_unit_test(test_resolve_errors),
      cmocka_unit_test(test_flop_bytes),
      cmocka_unit_test(test_activation_reference),
      cmocka_unit_test(test_softmax_reference),
      cmocka_unit_test(test_norm_reference),
      cmocka_unit_test(test_attention_reference),
      cmocka_unit_test(test_attention_bshd),
      cmocka_unit_test(test_tolerances),
      cmocka_unit_test(test_rounding_is_judged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
