/* The runner's checks: a benchmark's outputs against the op's reference,
 * after its first run and again after timing (every operand set a timed
 * run used), and what a wrong result does to it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rng.h"
#include "measure/runner_internal.h"
#include "ops/verify.h"

/* Copies the outputs of one operand set (tensors: inputs then outputs) to
 * the host and checks them against the reference of the run's inputs
 * (every copy holds the same bytes; prepared once, as converting a large
 * GEMM's operands costs more than its sampled check), drawing check k's
 * sample. A backend's
 * fused kernel for a composite is held to the recipe's accuracy floor (the
 * op's reference is the high-precision model); acc: where that goes. */
static mb_status_t check_set(mb__run_t *r, mb_tensor_t *const *tensors,
                             uint32_t k, mb_correctness_t *c,
                             mb_accuracy_t *acc) {
  const uint32_t nin = r->op->num_inputs, nout = r->op->num_outputs;
  void *got[MB__MAX_OPERANDS] = {0};
  mb_status_t st = MB_OK;
  for (uint32_t o = 0; o < nout && st == MB_OK; o++) {
    size_t bytes = mb_tensor_nbytes(tensors[nin + o]);
    if (!(got[o] = malloc(bytes ? bytes : 1)))
      st = mb__fail(MB_ERR_NO_MEMORY, "out of host memory for the check");
    else
      st = mb_tensor_copy_to_host(tensors[nin + o], got[o], bytes);
  }
  if (st == MB_OK && !r->ref)
    st = r->op->ref_prepare(&r->params, (const void *const *)r->host, &r->ref);
  if (st == MB_OK)
    mb__verify_with(r->op, &r->params, r->ref, (const void *const *)got,
                    mb__rng_u64(r->sample_seed, k), c);
  for (uint32_t o = 0; o < nout; o++) free(got[o]);
  if (st == MB_OK && r->op->compose) {
    mb__accuracy_from(c, (mb_recipe_t)r->params.recipe, acc);
    c->pass = acc->pass;
  }
  return st;
}

/* Puts the outputs' initial contents (k_unwritten, or what an op that reads
 * its output starts from) back into one operand set. */
static mb_status_t reset_outputs(const mb__run_t *r,
                                 mb_tensor_t *const *tensors) {
  mb_status_t st = MB_OK;
  for (uint32_t role = r->op->num_inputs; role < r->num_operands && st == MB_OK;
       role++)
    st = mb_tensor_copy_from_host(tensors[role], r->host[role],
                                  mb_tensor_nbytes(tensors[role]));
  return st;
}

mb_status_t mb__run_check_first(mb__run_t *r, mb_result_t *res) {
  const mb__backend_t *b = r->dev->backend;
  mb_error_clear();
  mb_status_t st = mb__run_kernel_fn(r)(mb__run_kernel_state(r), &r->call);
  if (st == MB_OK) st = b->vt->sync(b->state, r->dev->index);
  if (st == MB_OK) st = mb__run_collect(r, 0);
  if (st == MB_OK && r->kernel.composite)
    st = mb__composite_check(r->kstate, r->sample_seed, &res->corr, res);
  else if (st == MB_OK) {
    mb_accuracy_t acc;
    st = check_set(r, r->tensors, 0, &res->corr, &acc);
    if (st == MB_OK && r->op->compose) mb__result_set_accuracy(res, &acc);
    /* The timed runs start from the initial outputs again, so one that
     * writes nothing leaves k_unwritten for the check after timing. */
    if (st == MB_OK) st = reset_outputs(r, r->tensors);
  }
  res->corr.runs_checked = st == MB_OK;
  res->corr.sample_seed = r->sample_seed;
  return st;
}

/* A wrong result: with MB_BENCH_STRICT the result fails, else the warning
 * says so; `which` names the check ("first run", "after timing", "copy 2").
 * Returns whether the result failed. */
int mb__run_report_wrong(mb_result_t *res, const char *which,
                         const mb_correctness_t *c) {
  char why[256];
  snprintf(why, sizeof why,
           "wrong result (%s): error %.3g x the tolerance (max abs error %.3g)",
           which, c->max_err_ratio, c->max_abs_err);
  if (res->timing.flags & MB_BENCH_STRICT) {
    mb__result_set_status(res, MB_RESULT_FAILED, why);
    return 1;
  }
  mb__result_warn(res, why);
  return 0;
}

/* The worst of two checks of the same outputs: the errors, the verdict. */
static void merge_check(mb_correctness_t *into, const mb_correctness_t *c) {
  into->max_abs_err = fmax(into->max_abs_err, c->max_abs_err);
  into->max_rel_err = fmax(into->max_rel_err, c->max_rel_err);
  into->max_err_ratio = fmax(into->max_err_ratio, c->max_err_ratio);
  into->sqnr_db = fmin(into->sqnr_db, c->sqnr_db);
  into->pass = into->pass && c->pass;
  into->runs_checked++;
}

/* After sampling: the outputs the timed runs left, of the run's own
 * operands and (rotate) of every copy a timed run used, so a kernel right
 * only on its first call is caught. An op that reads its output (gemm with
 * beta) has accumulated over the runs: it gets its initial output back and
 * runs once more. A composite's graph was checked step by step once. */
mb_status_t mb__run_check_after(mb__run_t *r, mb_result_t *res) {
  if (r->kernel.composite || !res->corr.checked) return MB_OK;
  const mb__backend_t *b = r->dev->backend;
  const uint32_t sets = r->num_copies > 1 ? r->num_copies : 1;
  const int rerun = r->op->reads_output(&r->params);
  int reported = 0;
  mb_status_t st = MB_OK;
  for (uint32_t i = 0; i < sets && st == MB_OK; i++) {
    const mb__copy_t *c = i ? &r->copies[i - 1] : NULL;
    if (c && !c->ran) continue;
    mb_tensor_t *const *t = c ? c->tensors : r->tensors;
    if (rerun && (st = reset_outputs(r, t)) == MB_OK) st = mb__run_copy(r, i);
    if (st == MB_OK) st = b->vt->sync(b->state, r->dev->index);
    if (st == MB_OK) st = mb__run_collect(r, i);
    mb_correctness_t got = MB_CORRECTNESS_INIT;
    mb_accuracy_t acc;
    if (st == MB_OK) st = check_set(r, t, 1 + i, &got, &acc);
    if (st != MB_OK) break;
    merge_check(&res->corr, &got);
    if (!got.pass && !reported) {
      char which[32] = "after timing";
      if (i) snprintf(which, sizeof which, "copy %u", i);
      reported = 1;
      if (mb__run_report_wrong(res, which, &got)) break;
    }
  }
  return st;
}
