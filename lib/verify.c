#include "verify.h"

#include <math.h>

#include "dtype_internal.h"
#include "rng.h"

typedef struct err_acc {
  double max_abs, max_rel, max_ratio, sig, noise;
  int nonfinite;
} err_acc_t;

static void check_one(const mb_op_t *op, const void *ref, const void *out,
                      mb_dtype_t dt, double tol, size_t idx, err_acc_t *e) {
  double want, scale;
  op->ref_element(ref, idx, &want, &scale);
  double got = mb__load(out, dt, idx);
  double err = fabs(got - want);
  if (!isfinite(got) && isfinite(want)) e->nonfinite = 1;
  if (err > e->max_abs || isnan(err)) e->max_abs = err;
  if (want != 0 && err / fabs(want) > e->max_rel) e->max_rel = err / fabs(want);
  /* A zero allowance (e.g. all-zero inputs) allows exactly zero error. */
  double allowed = tol * scale;
  double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
  if (ratio > e->max_ratio || isnan(ratio)) e->max_ratio = ratio;
  e->sig += want * want;
  e->noise += err * err;
}

mb_status_t mb__verify(const mb_op_t *op, const mb_op_params_t *p,
                       const void *const *host, const void *out, uint64_t seed,
                       mb_correctness_t *c) {
  void *ref = NULL;
  mb_status_t st = op->ref_prepare(p, host, &ref);
  if (st != MB_OK) return st;
  mb_dtype_t dt;
  uint32_t nd;
  int64_t shape[MB_MAX_DIMS];
  op->operand(p, op->num_inputs, &dt, &nd, shape);
  size_t total = mb__operand_numel(op, p, op->num_inputs);
  double tol = op->tolerance(p);
  err_acc_t e = {0, 0, 0, 0, 0, 0};
  size_t checked;
  if ((double)total * op->ref_cost(p) <= (double)MB__VERIFY_FULL_WORK ||
      total <= MB__VERIFY_SAMPLES) {
    for (size_t i = 0; i < total; i++) check_one(op, ref, out, dt, tol, i, &e);
    checked = total;
  } else {
    /* The corners catch edge-handling bugs that uniform sampling may miss. */
    check_one(op, ref, out, dt, tol, 0, &e);
    check_one(op, ref, out, dt, tol, total - 1, &e);
    for (uint32_t s = 0; s < MB__VERIFY_SAMPLES; s++)
      check_one(op, ref, out, dt, tol, (size_t)(mb__rng_u64(seed, s) % total),
                &e);
    checked = MB__VERIFY_SAMPLES + 2;
  }
  op->ref_release(ref);
  c->checked = 1;
  c->max_abs_err = e.max_abs;
  c->max_rel_err = e.max_rel;
  c->max_err_ratio = e.max_ratio;
  c->sqnr_db = e.noise > 0 ? 10.0 * log10(e.sig / e.noise) : INFINITY;
  c->tolerance = tol;
  c->elements_checked = checked;
  c->elements_total = total;
  c->pass = !e.nonfinite && e.max_ratio <= 1.0;
  return MB_OK;
}
