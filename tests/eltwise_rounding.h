/* Test helper shared by the element-wise ops' unit tests
 * (test_ops_eltwise.c, test_ops_fp8_eltwise.c): the check itself on whole
 * outputs written from the reference, correctly rounded (must pass) and
 * truncated (must fail). Include after test_util.h, dtype_internal.h,
 * ops/op_internal.h and ops/verify.h. */
#ifndef MB_TESTS_ELTWISE_ROUNDING_H
#define MB_TESTS_ELTWISE_ROUNDING_H

/* ---- the check on whole outputs ------------------------------------------ */

/* Writes every element of output 0 from the reference, rounded to nearest
 * (what a perfect kernel produces) or toward zero (a truncating one). */
static inline void make_output(const mb_op_t *op, const mb_op_params_t *p,
                               const void *const *host, void *out,
                               int truncate) {
  mb_dtype_t dt;
  uint32_t nd;
  int64_t shape[MB_MAX_DIMS];
  op->operand(p, op->num_inputs, &dt, &nd, shape);
  size_t total = mb__operand_numel(op, p, op->num_inputs);
  void *ref;
  assert_int_equal(op->ref_prepare(p, host, &ref), MB_OK);
  for (size_t i = 0; i < total; i++) {
    double v, s;
    op->ref_element(ref, 0, i, &v, &s);
    double r = mb__round(v, dt, 0);
    /* Rounded up in magnitude: one step of v's binade back toward zero. */
    if (truncate && fabs(r) > fabs(v)) r -= copysign(mb__ulp(dt, v), v);
    mb__store(out, dt, i, r, 0);
  }
  op->ref_release(ref);
}

/* Seeded normal inputs for op's operands, then the check of a correctly
 * rounded and of a truncated output. */
static inline void check_rounding(const mb_op_t *op, mb_op_params_t p) {
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  void *host[8] = {0};
  const uint32_t n_ops = op->num_inputs + op->num_outputs;
  for (uint32_t role = 0; role < n_ops; role++) {
    mb_dtype_t dt;
    uint32_t nd;
    int64_t shape[MB_MAX_DIMS];
    op->operand(&p, role, &dt, &nd, shape);
    size_t n = mb__operand_numel(op, &p, role);
    host[role] = calloc(1, mb_dtype_bytes(dt, n) + 1);
    mb_fill_t f = MB_FILL_INIT;
    if (op->fill) op->fill(&p, role, &f);
    f.seed = 100 + role;
    assert_int_equal(mb_fill_host(host[role], dt, n, &f), MB_OK);
  }
  void *out = host[op->num_inputs];
  const void *outs[] = {out};
  mb_correctness_t r = MB_CORRECTNESS_INIT;
  make_output(op, &p, (const void *const *)host, out, 0);
  assert_int_equal(mb__verify(op, &p, (const void *const *)host, outs, 7, &r),
                   MB_OK);
  if (!r.pass) fail_msg("%s: a correctly rounded output fails", op->name);
  assert_true(r.max_err_ratio <= 1.0);
  make_output(op, &p, (const void *const *)host, out, 1);
  assert_int_equal(mb__verify(op, &p, (const void *const *)host, outs, 7, &r),
                   MB_OK);
  if (r.pass) fail_msg("%s: a truncated output passes", op->name);
  for (uint32_t role = 0; role < n_ops; role++) free(host[role]);
}

#endif
