/* attention_bwd (FlashAttention-2's backward from the forward's O and L):
 * its FLOP/byte model and parameter checks (the forward's), the O and L
 * the op's setup hands kernels, the reference against the textbook
 * gradient of softmax attention computed on its own (no O, no L), and
 * planted bugs — delta = rowsum(dO o O) left out, the 1/sqrt(D) scale left
 * out of dQ and dK, grouped-query heads mapped h % Hkv, the causal mask
 * aligned top-left — which must fail the check their correct twins pass.
 * Then the CPU backend's kernel on every dtype, layout, mask and grouping.
 * User kernels on the CPU backend's (host) memory, through the public
 * API. */
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum bug {
  BUG_NONE,     /* FA2's formulas from O and L; checks O and L first */
  BUG_TEXTBOOK, /* right: the softmax's own gradient, O and L unread */
  BUG_NO_DELTA, /* dS = P dP */
  BUG_NO_SCALE, /* dQ = dS K, dK = dS^T Q */
  BUG_HEAD_MOD, /* query head h reads K/V head h % Hkv */
  BUG_TOP_LEFT  /* causal: query i sees keys j <= i */
};
static const enum bug k_bugs[] = {BUG_NONE,     BUG_TEXTBOOK, BUG_NO_DELTA,
                                  BUG_NO_SCALE, BUG_HEAD_MOD, BUG_TOP_LEFT};
static const char *const k_names[] = {"right",    "textbook", "no_delta",
                                      "no_scale", "head_mod", "top_left"};
#define NUM_BUGS (sizeof k_bugs / sizeof k_bugs[0])

/* The dimensions and layout of a call, and where rows live. */
typedef struct dims {
  int64_t b, h, hkv, sq, skv, d;
  int bshd, causal;
} dims_t;

static size_t qi(const dims_t *m, int64_t b, int64_t h, int64_t i) {
  return (size_t)((m->bshd ? (b * m->sq + i) * m->h + h
                           : (b * m->h + h) * m->sq + i) *
                  m->d);
}
static size_t ki(const dims_t *m, int64_t b, int64_t g, int64_t j) {
  return (size_t)((m->bshd ? (b * m->skv + j) * m->hkv + g
                           : (b * m->hkv + g) * m->skv + j) *
                  m->d);
}

static float *to_f32(const mb_tensor_t *t, mb_dtype_t dt, size_t n) {
  float *f = malloc(n * sizeof *f);
  assert_non_null(f);
  mb_convert(f, MB_DTYPE_F32, mb_tensor_data(t), dt, n, 0);
  return f;
}

static void from_f64(mb_tensor_t *t, mb_dtype_t dt, const double *v, size_t n) {
  float *f = malloc(n * sizeof *f);
  assert_non_null(f);
  for (size_t i = 0; i < n; i++) f[i] = (float)v[i];
  mb_convert(mb_tensor_data(t), dt, f, MB_DTYPE_F32, n, 0);
  free(f);
}

/* The forward of row (b, h, i) in double: o (D) and the log-sum-exp. */
static double forward_row(const dims_t *m, const float *q, const float *k,
                          const float *v, int64_t b, int64_t h, int64_t i,
                          double *o) {
  const int64_t g = h / (m->h / m->hkv);
  const int64_t last = m->causal ? i + m->skv - m->sq : m->skv - 1;
  const double sc = 1.0 / sqrt((double)m->d);
  double mx = -INFINITY, z = 0;
  for (int64_t j = 0; j <= last; j++) {
    double s = 0;
    for (int64_t c = 0; c < m->d; c++)
      s += (double)q[qi(m, b, h, i) + c] * k[ki(m, b, g, j) + c];
    mx = fmax(mx, s * sc);
  }
  for (int64_t c = 0; c < m->d; c++) o[c] = 0;
  for (int64_t j = 0; j <= last; j++) {
    double s = 0;
    for (int64_t c = 0; c < m->d; c++)
      s += (double)q[qi(m, b, h, i) + c] * k[ki(m, b, g, j) + c];
    const double w = exp(s * sc - mx);
    z += w;
    for (int64_t c = 0; c < m->d; c++) o[c] += w * v[ki(m, b, g, j) + c];
  }
  for (int64_t c = 0; c < m->d; c++) o[c] /= z;
  return mx + log(z);
}

/* dQ, dK, dV in double, as `bug` says. */
static mb_status_t bwd(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const mb_op_params_t *p = a->params;
  const dims_t m = {p->shape[0],
                    p->shape[1],
                    p->kv_heads ? p->kv_heads : p->shape[1],
                    p->shape[2],
                    p->shape[3],
                    p->shape[4],
                    (p->flags & MB_PARAM_BSHD) != 0,
                    (p->flags & MB_PARAM_CAUSAL) != 0};
  const mb_dtype_t dt = p->dtype;
  const size_t nq = (size_t)(m.b * m.h * m.sq * m.d);
  const size_t nk = (size_t)(m.b * m.hkv * m.skv * m.d);
  float *q = to_f32(a->inputs[0], dt, nq), *k = to_f32(a->inputs[1], dt, nk),
        *v = to_f32(a->inputs[2], dt, nk), *o = to_f32(a->inputs[3], dt, nq),
        *dout = to_f32(a->inputs[4], dt, nq);
  const float *l = mb_tensor_data(a->inputs[5]);
  double *dq = calloc(nq, sizeof *dq), *dk = calloc(nk, sizeof *dk),
         *dv = calloc(nk, sizeof *dv), *orow = malloc((size_t)m.d * 8);
  double *prow = malloc((size_t)m.skv * sizeof *prow);
  assert_true(dq && dk && dv && orow && prow);
  const double sc = 1.0 / sqrt((double)m.d), f = bug == BUG_NO_SCALE ? 1 : sc;
  mb_status_t st = MB_OK;
  for (int64_t b = 0; b < m.b; b++)
    for (int64_t h = 0; h < m.h; h++)
      for (int64_t i = 0; i < m.sq; i++) {
        const size_t qo = qi(&m, b, h, i);
        const double lse = forward_row(&m, q, k, v, b, h, i, orow);
        const double l_in = l[(b * m.h + h) * m.sq + i];
        /* The setup's O and L: the forward's, rounded once. */
        for (int64_t c = 0; bug == BUG_NONE && c < m.d; c++)
          if (fabs(o[qo + c] - orow[c]) >
              1e-2 * (dt == MB_DTYPE_F32 ? 1e-4 : 1))
            st = MB_ERR_INVALID_ARG;
        if (bug == BUG_NONE && fabs(l_in - lse) > 1e-6 * (1 + fabs(lse)))
          st = MB_ERR_INVALID_ARG;
        const int64_t g = bug == BUG_HEAD_MOD ? h % m.hkv : h / (m.h / m.hkv);
        const int64_t last = !m.causal             ? m.skv - 1
                             : bug == BUG_TOP_LEFT ? i
                                                   : i + m.skv - m.sq;
        double delta = 0;
        for (int64_t j = 0; j <= last; j++) {
          double s = 0, dp = 0;
          for (int64_t c = 0; c < m.d; c++) {
            s += (double)q[qo + c] * k[ki(&m, b, g, j) + c];
            dp += (double)dout[qo + c] * v[ki(&m, b, g, j) + c];
          }
          /* textbook: P from the exact softmax, delta = sum_j P_j dP_j */
          prow[j] = exp(s * sc - (bug == BUG_TEXTBOOK ? lse : l_in));
          if (bug == BUG_TEXTBOOK) delta += prow[j] * dp;
        }
        for (int64_t c = 0; bug != BUG_TEXTBOOK && c < m.d; c++)
          delta += (double)dout[qo + c] * o[qo + c];
        if (bug == BUG_NO_DELTA) delta = 0;
        for (int64_t j = 0; j <= last; j++) {
          const size_t ko = ki(&m, b, g, j);
          double dp = 0;
          for (int64_t c = 0; c < m.d; c++)
            dp += (double)dout[qo + c] * v[ko + c];
          const double ds = prow[j] * (dp - delta);
          for (int64_t c = 0; c < m.d; c++) {
            dq[qo + c] += ds * k[ko + c] * f;
            dk[ko + c] += ds * q[qo + c] * f;
            dv[ko + c] += prow[j] * dout[qo + c];
          }
        }
      }
  from_f64(a->outputs[0], dt, dq, nq);
  from_f64(a->outputs[1], dt, dk, nk);
  from_f64(a->outputs[2], dt, dv, nk);
  free(q), free(k), free(v), free(o), free(dout);
  free(dq), free(dk), free(dv), free(orow), free(prow);
  return st;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  static const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16};
  for (size_t t = 0; t < 2; t++)
    for (size_t b = 0; b < NUM_BUGS; b++) {
      mb_kernel_desc_t k = MB_KERNEL_DESC_INIT;
      k.op = "attention_bwd";
      k.name = k_names[b];
      k.dtype = dts[t];
      k.dtype_out = dts[t];
      k.run = bwd;
      k.user = (void *)&k_bugs[b];
      assert_int_equal(mb_kernel_register(g_ctx, &k), MB_OK);
    }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static mb_op_params_t shape5(mb_dtype_t dt, int64_t b, int64_t h, int64_t sq,
                             int64_t skv, int64_t d, int64_t kv,
                             uint32_t flags) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 5;
  p.shape[0] = b, p.shape[1] = h, p.shape[2] = sq, p.shape[3] = skv;
  p.shape[4] = d;
  p.kv_heads = kv;
  p.dtype = dt;
  p.flags = flags;
  return p;
}

/* FLOP 2.5 times the forward's, causal or not; bytes Q, K, V, O, dO, dQ,
 * dK, dV in the dtype (K-like ones of Hkv heads) and L in f32; the
 * forward's checks, naming attention_bwd. */
static void test_model(void **state) {
  (void)state;
  const mb_op_t *op = mb_op_find("attention_bwd");
  const mb_op_t *fwd = mb_op_find("attention");
  assert_non_null(op);
  for (uint32_t flags = 0; flags <= MB_PARAM_CAUSAL; flags += MB_PARAM_CAUSAL) {
    mb_op_params_t p = shape5(MB_DTYPE_BF16, 2, 32, 1024, 4096, 128, 8, flags);
    mb_op_params_t pf = p;
    assert_int_equal(mb_op_resolve(op, &p), MB_OK);
    assert_int_equal(mb_op_resolve(fwd, &pf), MB_OK);
    assert_true(mb_op_flop(op, &p) == 2.5 * mb_op_flop(fwd, &pf));
    const double nq = 2.0 * 32 * 1024 * 128, nk = 2.0 * 8 * 4096 * 128;
    assert_true(mb_op_bytes(op, &p) ==
                2.0 * (4 * nq + 4 * nk) + 4.0 * 2 * 32 * 1024);
  }
  mb_op_params_t p = shape5(MB_DTYPE_F32, 1, 6, 8, 8, 16, 4, 0);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "attention_bwd: H = 6");
  p = shape5(MB_DTYPE_F32, 1, 2, 9, 8, 16, 0, MB_PARAM_CAUSAL);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "Sq 9 > Skv 8");
  p = shape5(MB_DTYPE_I8, 1, 2, 8, 8, 16, 0, 0);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
}

static int passes(const mb_op_params_t *p, const char *impl) {
  return test_impl_passes(g_ctx, "attention_bwd", p, impl);
}

/* The setup's O and L are the forward's (the right kernel checks them),
 * the reference is the textbook gradient's (f32: O's rounding is below
 * the tolerance; in bf16 it is not, and the op is the backward of its
 * inputs, O included), and each planted bug fails: grouped heads, the
 * mask's corner with Sq < Skv. */
static void test_planted(void **state) {
  (void)state;
  static const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16};
  for (size_t t = 0; t < 2; t++) {
    const mb_op_params_t p =
        shape5(dts[t], 2, 4, 19, 27, 16, 2, MB_PARAM_CAUSAL);
    assert_true(passes(&p, "right"));
    if (dts[t] == MB_DTYPE_F32) assert_true(passes(&p, "textbook"));
    assert_false(passes(&p, "no_delta"));
    assert_false(passes(&p, "no_scale"));
    assert_false(passes(&p, "head_mod"));
    assert_false(passes(&p, "top_left"));
    const mb_op_params_t pb = shape5(dts[t], 1, 3, 13, 13, 8, 1, MB_PARAM_BSHD);
    assert_true(passes(&pb, "right"));
    assert_false(passes(&pb, "no_delta"));
  }
}

/* The CPU backend's kernel: every dtype; causal or not; multi-head,
 * grouped and multi-query; both layouts; Sq < Skv, Sq > Skv, blocks of
 * 64 queries and keys crossed, D not a multiple of 4 or 16. */
static void test_cpu_kernel(void **state) {
  (void)state;
  static const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
  for (size_t t = 0; t < 3; t++) {
    mb_op_params_t p = shape5(dts[t], 2, 4, 70, 133, 24, 2, MB_PARAM_CAUSAL);
    assert_true(passes(&p, "c"));
    p = shape5(dts[t], 1, 6, 130, 67, 13, 0, MB_PARAM_BSHD);
    assert_true(passes(&p, "c"));
    p = shape5(dts[t], 3, 4, 65, 65, 64, 1, MB_PARAM_CAUSAL | MB_PARAM_BSHD);
    assert_true(passes(&p, "c"));
    p = shape5(dts[t], 1, 1, 1, 1, 1, 0, 0);
    assert_true(passes(&p, "c"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model),
      cmocka_unit_test(test_planted),
      cmocka_unit_test(test_cpu_kernel),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
