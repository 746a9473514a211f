/* The backward ops (rmsnorm_bwd, swiglu_bwd; lib/ops/backward.c): operands,
 * FLOP/byte models and validation; the references against values worked
 * out by hand and against central differences of the forward ops' own
 * references (so the gradient formulas are checked by something that does
 * not share them); and the check itself: correctly rounded outputs pass,
 * truncated ones and ones with a term of the gradient dropped fail. */
#include <math.h>

#include "test_op_util.h"
#include "dtype_internal.h"
#include "ops/op_internal.h"
#include "ops/verify.h"

static mb_op_params_t mn(int64_t m, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = m, p.shape[1] = n;
  return p;
}

/* Element idx of output `out` of op's reference on `host`. */
static double ref_at(const mb_op_t *op, const mb_op_params_t *p,
                     const void *const *host, uint32_t out, size_t idx,
                     double *scale) {
  void *ref = NULL;
  double v, s;
  assert_int_equal(op->ref_prepare(p, host, &ref), MB_OK);
  op->ref_element(ref, out, idx, &v, &s);
  op->ref_release(ref);
  if (scale) *scale = s;
  return v;
}

static void assert_near(double got, double want, double tol) {
  if (!(fabs(got - want) <= tol))
    fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void test_operands_and_models(void **state) {
  (void)state;
  const mb_op_t *rb = mb_op_find("rmsnorm_bwd"), *sb = mb_op_find("swiglu_bwd");
  assert_ptr_equal(rb, &mb__op_rmsnorm_bwd);
  assert_ptr_equal(sb, &mb__op_swiglu_bwd);
  mb_op_params_t p = mn(30, 100);
  assert_int_equal(mb_op_resolve(rb, &p), MB_OK);
  assert_int_equal(p.dtype, MB_DTYPE_F32);
  assert_int_equal(mb_op_num_inputs(rb), 3);
  assert_int_equal(mb_op_num_outputs(rb), 2);
  assert_string_equal(mb_op_operand_name(rb, 1), "W");
  assert_string_equal(mb_op_operand_name(rb, 4), "dW");
  mb_dtype_t dt;
  uint32_t nd;
  int64_t shape[MB_MAX_DIMS];
  p = mn(30, 100);
  p.dtype = MB_DTYPE_BF16;
  assert_int_equal(mb_op_resolve(rb, &p), MB_OK);
  assert_int_equal(mb_op_operand(rb, &p, 4, &dt, &nd, shape), MB_OK);
  assert_int_equal(dt, MB_DTYPE_BF16); /* dW in the weight's dtype */
  assert_int_equal(nd, 1);
  assert_int_equal(shape[0], 100);
  assert_int_equal(mb_op_operand(rb, &p, 3, &dt, &nd, shape), MB_OK);
  assert_int_equal(nd, 2);
  /* 11 FLOP an element; X, dY, dX and W, dW in bf16. */
  assert_true(mb_op_flop(rb, &p) == 11 * 3000);
  assert_true(mb_op_bytes(rb, &p) == (3 * 3000 + 2 * 100) * 2);
  p.flags = MB_PARAM_NO_WEIGHT;
  assert_true(mb_op_flop(rb, &p) == 7 * 3000);
  assert_true(mb_op_bytes(rb, &p) == 3 * 3000 * 2);
  p = mn(30, 100);
  assert_int_equal(mb_op_resolve(sb, &p), MB_OK);
  assert_true(mb_op_flop(sb, &p) == 12 * 3000);
  assert_true(mb_op_bytes(sb, &p) == 5 * 3000 * 4);
  assert_string_equal(mb_op_operand_name(sb, 3), "dA");
  /* Validation as the forward ops'. */
  p = mn(4, 4);
  p.eps = -1;
  assert_int_equal(mb_op_resolve(rb, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "rmsnorm_bwd: eps must be positive");
  p = mn(4, 4);
  p.flags = MB_PARAM_NO_WEIGHT;
  assert_int_equal(mb_op_resolve(sb, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "swiglu_bwd: \"no-affine\" does not apply");
  p = mn(4, 4);
  p.dtype = MB_DTYPE_I8;
  assert_int_equal(mb_op_resolve(sb, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(),
                  "swiglu_bwd: dtype \"i8\" is not supported; valid: f32");
}

static void test_rmsnorm_bwd_by_hand(void **state) {
  (void)state;
  /* Rows [3, 4] (mean square 12.5) and [1, 0] (0.5); W [2, 1]; dY [1, -1]
   * and [2, 5]. Row 0: g = [2, -1], mean(g x) = (6 - 4) / 2 = 1. Row 1:
   * g = [4, 5], mean(g x) = 2. */
  const float x[] = {3, 4, 1, 0}, w[] = {2, 1}, dy[] = {1, -1, 2, 5};
  const void *host[] = {x, w, dy, NULL, NULL};
  mb_op_params_t p = mn(2, 2);
  assert_int_equal(mb_op_resolve(&mb__op_rmsnorm_bwd, &p), MB_OK);
  const double r0 = 1 / sqrt(12.5 + 1e-5), r1 = 1 / sqrt(0.5 + 1e-5);
  const double want_dx[] = {r0 * (2 - 3 * r0 * r0), r0 * (-1 - 4 * r0 * r0),
                            r1 * (4 - 2 * r1 * r1), r1 * 5};
  double s;
  for (size_t i = 0; i < 4; i++)
    assert_near(ref_at(&mb__op_rmsnorm_bwd, &p, host, 0, i, &s), want_dx[i],
                1e-15);
  /* dX[0]'s scale: rstd (|g| + |x| rstd^2 mean|g x|), mean|g x| = 5. */
  ref_at(&mb__op_rmsnorm_bwd, &p, host, 0, 0, &s);
  assert_near(s, r0 * (2 + 3 * r0 * r0 * 5), 1e-15);
  /* dW = sum of dy x rstd over the rows; its scale the sum of |terms|. */
  assert_near(ref_at(&mb__op_rmsnorm_bwd, &p, host, 1, 0, &s), 3 * r0 + 2 * r1,
              1e-15);
  assert_near(s, 3 * r0 + 2 * r1, 1e-15);
  assert_near(ref_at(&mb__op_rmsnorm_bwd, &p, host, 1, 1, &s), -4 * r0, 1e-15);
  /* Without W: g = dY, and dW is zeros (no weight, no gradient). */
  p.flags = MB_PARAM_NO_WEIGHT;
  assert_int_equal(mb_op_resolve(&mb__op_rmsnorm_bwd, &p), MB_OK);
  assert_near(ref_at(&mb__op_rmsnorm_bwd, &p, host, 0, 0, NULL),
              r0 * (1 - 3 * r0 * r0 * (3 - 4) / 2.0), 1e-15);
  assert_true(ref_at(&mb__op_rmsnorm_bwd, &p, host, 1, 0, &s) == 0 && s == 0);
}

static void test_swiglu_bwd_by_hand(void **state) {
  (void)state;
  /* a = 0: s = 1/2, silu(0) = 0, silu'(0) = 1/2. a = 1: s = 1/(1 + e^-1),
   * silu' = s (2 - s). */
  const float a[] = {0, 1}, b[] = {3, -2}, dy[] = {5, 0.5f};
  const void *host[] = {a, b, dy, NULL, NULL};
  mb_op_params_t p = mn(1, 2);
  assert_int_equal(mb_op_resolve(&mb__op_swiglu_bwd, &p), MB_OK);
  const double s1 = 1 / (1 + exp(-1.0));
  assert_near(ref_at(&mb__op_swiglu_bwd, &p, host, 0, 0, NULL), 5 * 3 * 0.5,
              1e-15);
  assert_true(ref_at(&mb__op_swiglu_bwd, &p, host, 1, 0, NULL) == 0);
  double s;
  assert_near(ref_at(&mb__op_swiglu_bwd, &p, host, 0, 1, &s),
              0.5 * -2 * s1 * (2 - s1), 1e-15);
  assert_near(s, 1.0 * s1 * 2, 1e-15); /* |dy b| s (1 + |a|) */
  assert_near(ref_at(&mb__op_swiglu_bwd, &p, host, 1, 1, &s), 0.5 * s1, 1e-15);
  assert_near(s, 0.5, 1e-15); /* |dy a| */
}

/* L = sum dY . fwd(inputs) by the forward op's reference, f32 inputs. */
static double loss(const mb_op_t *fwd, const mb_op_params_t *p,
                   const void *const *in, const float *dy, size_t numel) {
  const void *host[] = {in[0], in[1], NULL};
  void *ref = NULL;
  double l = 0, v, s;
  assert_int_equal(fwd->ref_prepare(p, host, &ref), MB_OK);
  for (size_t i = 0; i < numel; i++) {
    fwd->ref_element(ref, 0, i, &v, &s);
    l += dy[i] * v;
  }
  fwd->ref_release(ref);
  return l;
}

/* Each gradient of bwd (outputs 0, 1: of forward inputs 0, 1) against the
 * central difference of L in that input, h = 2^-12 (exact on these f32
 * values; the O(h^2) truncation is ~1e-7 of the gradients here). */
static void check_differences(const mb_op_t *fwd, const mb_op_t *bwd,
                              mb_op_params_t p, float *in0, float *in1,
                              const float *dy, size_t numel1) {
  mb_op_params_t fp = p;
  assert_int_equal(mb_op_resolve(fwd, &fp), MB_OK);
  assert_int_equal(mb_op_resolve(bwd, &p), MB_OK);
  float *in[] = {in0, in1};
  const size_t numel = (size_t)(p.shape[0] * p.shape[1]);
  const size_t count[] = {numel, numel1};
  const void *host[] = {in0, in1, dy, NULL, NULL};
  const double h = 0x1p-12;
  for (uint32_t k = 0; k < 2; k++)
    for (size_t i = 0; i < count[k]; i++) {
      const float keep = in[k][i];
      const void *args[] = {in0, in1};
      in[k][i] = (float)(keep + h);
      const double up = loss(fwd, &fp, args, dy, numel);
      in[k][i] = (float)(keep - h);
      const double down = loss(fwd, &fp, args, dy, numel);
      in[k][i] = keep;
      assert_near(ref_at(bwd, &p, host, k, i, NULL), (up - down) / (2 * h),
                  2e-6);
    }
}

static void test_against_differences(void **state) {
  (void)state;
  float x[15], w[5], dy[15], a[15], b[15];
  for (int i = 0; i < 15; i++) {
    /* Values on a 2^-4 grid, both signs, no two rows alike. */
    x[i] = (float)((i * 7 % 11) - 5) / 4.0f + 0.0625f * (float)(i % 3);
    dy[i] = (float)((i * 5 % 13) - 6) / 8.0f;
    a[i] = (float)((i * 3 % 17) - 8) / 2.0f;
    b[i] = (float)((i * 4 % 9) - 4) / 4.0f;
  }
  for (int j = 0; j < 5; j++) w[j] = 1.0f + 0.125f * (float)(j - 2);
  check_differences(&mb__op_rmsnorm, &mb__op_rmsnorm_bwd, mn(3, 5), x, w, dy,
                    5);
  check_differences(&mb__op_silu_mul, &mb__op_swiglu_bwd, mn(3, 5), a, b, dy,
                    15);
}

/* Seeded inputs of bwd (p resolved), outputs made from the reference
 * (rounded, truncated, or with `drop` scaling the value: a lost term),
 * and whether the check passes. */
enum make { ROUND, TRUNCATE, PERTURB };

static int check_passes(const mb_op_t *op, const mb_op_params_t *p,
                        uint32_t bad_out, enum make how) {
  void *host[5] = {0};
  for (uint32_t role = 0; role < 5; role++)
    host[role] = test_op_operand(op, p, role, 7 + role, role < 3);
  void *ref;
  assert_int_equal(op->ref_prepare(p, (const void *const *)host, &ref), MB_OK);
  for (uint32_t out = 0; out < 2; out++) {
    const size_t n = mb__operand_numel(op, p, 3 + out);
    for (size_t i = 0; i < n; i++) {
      double v, s;
      op->ref_element(ref, out, i, &v, &s);
      double r = mb__round(v, p->dtype, 0);
      if (out == bad_out && how == TRUNCATE && fabs(r) > fabs(v))
        r -= copysign(mb__ulp(p->dtype, v), v);
      if (out == bad_out && how == PERTURB)
        r = mb__round(v * 1.05, p->dtype, 0);
      mb__store(host[3 + out], p->dtype, i, r, 0);
    }
  }
  op->ref_release(ref);
  const void *outs[] = {host[3], host[4]};
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  assert_int_equal(mb__verify(op, p, (const void *const *)host, outs, 3, &c),
                   MB_OK);
  for (uint32_t role = 0; role < 5; role++) free(host[role]);
  return c.pass;
}

static void test_check_judges_each_output(void **state) {
  (void)state;
  const mb_op_t *ops[] = {&mb__op_rmsnorm_bwd, &mb__op_swiglu_bwd};
  const mb_dtype_t dts[] = {MB_DTYPE_BF16, MB_DTYPE_F16, MB_DTYPE_F32};
  for (size_t o = 0; o < 2; o++)
    for (size_t d = 0; d < 3; d++) {
      mb_op_params_t p = mn(40, 96);
      p.dtype = dts[d];
      assert_int_equal(mb_op_resolve(ops[o], &p), MB_OK);
      if (!check_passes(ops[o], &p, 9, ROUND))
        fail_msg("%s %s: correctly rounded outputs fail", ops[o]->name,
                 mb_dtype_name(dts[d]));
      for (uint32_t out = 0; out < 2; out++) {
        /* f32's truncation is within the compute type's own error */
        if (dts[d] != MB_DTYPE_F32 && check_passes(ops[o], &p, out, TRUNCATE))
          fail_msg("%s %s: truncated output %u passes", ops[o]->name,
                   mb_dtype_name(dts[d]), out);
        if (check_passes(ops[o], &p, out, PERTURB))
          fail_msg("%s %s: output %u 5%% off passes", ops[o]->name,
                   mb_dtype_name(dts[d]), out);
      }
    }
}

/* dW's allowance grows with the rows it sums, (2 sqrt(M) + sqrt(N) + 5)
 * u(f32); dX's with the row length only. */
static void test_tolerances(void **state) {
  (void)state;
  mb_op_params_t p = mn(10000, 400);
  assert_int_equal(mb_op_resolve(&mb__op_rmsnorm_bwd, &p), MB_OK);
  mb__tolerance_t t = mb__op_rmsnorm_bwd.tolerance(&p, 1);
  assert_true(t.ulps == 0.5);
  assert_near(t.rel, (200 + 20 + 5) * 0x1p-24, 1e-20);
  t = mb__op_rmsnorm_bwd.tolerance(&p, 0);
  assert_near(t.rel, (5 * 20 + 15) * 0x1p-24, 1e-20);
  assert_int_equal(mb_op_resolve(&mb__op_swiglu_bwd, &p), MB_OK);
  assert_near(mb__op_swiglu_bwd.tolerance(&p, 0).rel, 20 * 0x1p-24, 1e-20);
  assert_near(mb__op_swiglu_bwd.tolerance(&p, 1).rel, 8 * 0x1p-24, 1e-20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_operands_and_models),
      cmocka_unit_test(test_rmsnorm_bwd_by_hand),
      cmocka_unit_test(test_swiglu_bwd_by_hand),
      cmocka_unit_test(test_against_differences),
      cmocka_unit_test(test_check_judges_each_output),
      cmocka_unit_test(test_tolerances),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
