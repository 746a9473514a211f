/* A composite's breakdown: each timed step of its graph alone, then each
 * phase's steps together, every part measured by the rules the whole was
 * (mb__run_measure_with: the spec's warm-up, batch rule, stopping
 * criterion, repetitions and cache policy; rotate cycles the copies), each
 * with its noise and the 95 % interval of its median. Then whether the
 * parts add up to the whole (mb__result_check_parts). A fixed handful of
 * samples per part, as before, let a noisy machine show parts three times
 * the whole. In inference the forward phase is the whole: it is not
 * measured twice. */
#include <math.h>

#include "measure/runner_internal.h"
#include "measure/stats.h"

typedef struct part {
  mb__run_t *r;
  int step; /* >= 0: that step alone; < 0: every step of `phase` */
  mb_phase_t phase;
} part_t;

/* One run of the part, on the next rotate copy's graph when rotating. */
static mb_status_t run_part(void *kstate, const mb_kernel_call_t *call) {
  part_t *p = kstate;
  mb__run_t *r = p->r;
  (void)call;
  void *graph = r->kstate;
  if (r->num_copies > 1) {
    const uint32_t i = r->next_copy;
    r->next_copy = (i + 1) % r->num_copies;
    if (i) graph = r->copies[i - 1].kstate;
  }
  return mb__composite_run_part(graph, p->step, p->phase);
}

/* A result's median, noise and interval into t. */
static mb_status_t summarise(const mb_result_t *m, mb_step_time_t *t) {
  t->median_ns = m->stats.median;
  t->samples = m->stats.count;
  t->rel_stdev = m->stats.rel_stdev;
  t->stop_reason = m->stats.stop_reason;
  return mb__median_ci(m->samples, m->num_samples, &t->ci_low_ns,
                       &t->ci_high_ns);
}

/* The part measured into a result of its own (its samples are not the
 * benchmark's), summarised into t. */
static mb_status_t time_part(mb__run_t *r, part_t *p, mb_step_time_t *t) {
  mb_result_t *m = mb__result_new(r->op->name, r->op->shape_syntax, &r->params,
                                  &r->spec, r->dev);
  if (!m) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a part");
  const double t0 = mb__rt_now(r);
  r->in_part = 1;
  mb_status_t st = mb__run_measure_with(r, run_part, p, m);
  r->in_part = 0;
  if (st == MB_OK) st = summarise(m, t);
  if (st == MB_OK) mb__rt_part(r, p->step, p->phase, t, t0);
  mb_result_destroy(m);
  return st;
}

static mb_status_t time_steps(mb__run_t *r, mb_result_t *res,
                              mb_step_time_t phase[2], int has[2]) {
  const uint32_t n = mb__composite_step_count(r->kstate);
  for (uint32_t i = 0; i < n; i++) {
    mb_step_time_t t;
    mb__composite_step(r->kstate, i, &t);
    mb_status_t st = MB_OK;
    if (t.phase != MB_PHASE_SETUP) {
      has[t.phase] = 1;
      phase[t.phase].flop += t.flop;
      phase[t.phase].bytes += t.bytes;
      part_t p = {r, (int)i, t.phase};
      st = time_part(r, &p, &t);
    }
    if (st == MB_OK) st = mb__result_add_step(res, &t);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

mb_status_t mb__run_time_parts(mb__run_t *r, mb_result_t *res) {
  mb_step_time_t phase[2] = {MB_STEP_TIME_INIT, MB_STEP_TIME_INIT};
  int has[2] = {0, 0};
  phase[0].flop = phase[0].bytes = phase[1].flop = phase[1].bytes = 0;
  mb_status_t st = time_steps(r, res, phase, has);
  for (int ph = 0; ph < 2 && st == MB_OK; ph++) {
    if (!has[ph]) continue;
    part_t p = {r, -1, (mb_phase_t)ph};
    st = has[MB_PHASE_BACKWARD] ? time_part(r, &p, &phase[ph])
                                : summarise(res, &phase[ph]);
    if (st == MB_OK) mb__result_set_phase(res, (mb_phase_t)ph, &phase[ph]);
  }
  double lo, hi;
  if (st == MB_OK) st = mb__median_ci(res->samples, res->num_samples, &lo, &hi);
  if (st == MB_OK) st = mb__result_check_parts(res, lo, hi);
  return st;
}
