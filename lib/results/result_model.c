/* A composite's extras in its result: the graph's steps with their times,
 * the forward/backward phases, whether the parts add up to the whole, and
 * the accuracy against the high-precision model (model.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/result.h"

static void forget_json(mb_result_t *r) {
  free(r->json); /* the cached JSON no longer says everything */
  r->json = NULL;
}

mb_status_t mb__result_add_step(mb_result_t *r, const mb_step_time_t *s) {
  struct mb__step *grown =
      realloc(r->steps, (r->num_steps + 1) * sizeof *r->steps);
  if (!grown) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a step");
  r->steps = grown;
  mb_step_time_t *d = &r->steps[r->num_steps].t;
  *d = *s;
  d->struct_size = sizeof *d;
  d->label = mb__strdup(s->label ? s->label : "");
  d->op = mb__strdup(s->op ? s->op : "");
  d->impl = mb__strdup(s->impl ? s->impl : "");
  if (!s->stop_reason) d->stop_reason = "";
  if (!d->label || !d->op || !d->impl) {
    free((char *)d->label);
    free((char *)d->op);
    free((char *)d->impl);
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a step");
  }
  r->num_steps++;
  forget_json(r);
  return MB_OK;
}

void mb__result_set_phase(mb_result_t *r, mb_phase_t phase,
                          const mb_step_time_t *s) {
  if (phase != MB_PHASE_FORWARD && phase != MB_PHASE_BACKWARD) return;
  mb_step_time_t *d = &r->phase[phase];
  const char *label = d->label;
  *d = *s;
  d->struct_size = sizeof *d;
  d->label = label;
  d->op = d->impl = "";
  d->phase = phase;
  if (!d->stop_reason) d->stop_reason = "";
  forget_json(r);
}

/* The parts: both phases in training; else the timed steps. */
static void add_parts(const mb_result_t *r, mb_parts_check_t *c) {
  c->sum_ns = c->sum_ci_low_ns = c->sum_ci_high_ns = 0;
  if (isfinite(r->phase[MB_PHASE_BACKWARD].median_ns)) {
    c->of = "phases";
    for (int p = 0; p < 2; p++) {
      c->sum_ns += r->phase[p].median_ns;
      c->sum_ci_low_ns += r->phase[p].ci_low_ns;
      c->sum_ci_high_ns += r->phase[p].ci_high_ns;
    }
    return;
  }
  c->of = "steps";
  for (size_t i = 0; i < r->num_steps; i++) {
    const mb_step_time_t *t = &r->steps[i].t;
    if (t->phase == MB_PHASE_SETUP) continue;
    c->sum_ns += t->median_ns;
    c->sum_ci_low_ns += t->ci_low_ns;
    c->sum_ci_high_ns += t->ci_high_ns;
  }
}

mb_status_t mb__result_check_parts(mb_result_t *r, double whole_ci_low_ns,
                                   double whole_ci_high_ns) {
  mb_parts_check_t *c = &r->parts;
  *c = (mb_parts_check_t)MB_PARTS_CHECK_INIT;
  add_parts(r, c);
  c->whole_ns = r->stats.median;
  c->whole_ci_low_ns = whole_ci_low_ns;
  c->whole_ci_high_ns = whole_ci_high_ns;
  if (!isfinite(c->sum_ns) || !(c->whole_ns > 0))
    return MB_OK; /* a part was not timed: nothing to compare */
  c->checked = 1;
  const int apart = c->sum_ci_low_ns > whole_ci_high_ns ||
                    c->sum_ci_high_ns < whole_ci_low_ns;
  const double off = c->sum_ns / c->whole_ns - 1.0;
  c->agree = !(apart && fabs(off) > MB_PARTS_TOLERANCE);
  forget_json(r);
  if (c->agree) return MB_OK;
  char w[320];
  snprintf(w, sizeof w,
           "the %s timed alone add up to %.4g ms, %+.0f%% from the whole's "
           "%.4g ms, beyond both medians' 95%% intervals ([%.4g, %.4g] vs "
           "[%.4g, %.4g] ms): the parts alone do not run as they do together",
           c->of, c->sum_ns / 1e6, 100.0 * off, c->whole_ns / 1e6,
           c->sum_ci_low_ns / 1e6, c->sum_ci_high_ns / 1e6,
           whole_ci_low_ns / 1e6, whole_ci_high_ns / 1e6);
  mb__result_warn(r, w);
  return MB_OK;
}

void mb__result_set_accuracy(mb_result_t *r, const mb_accuracy_t *a) {
  r->accuracy = *a;
  r->accuracy.struct_size = sizeof r->accuracy;
}

void mb__result_free_steps(mb_result_t *r) {
  for (size_t i = 0; i < r->num_steps; i++) {
    free((char *)r->steps[i].t.label);
    free((char *)r->steps[i].t.op);
    free((char *)r->steps[i].t.impl);
  }
  free(r->steps);
  r->steps = NULL;
  r->num_steps = 0;
}

size_t mb_result_step_count(const mb_result_t *r) {
  return r ? r->num_steps : 0;
}

mb_status_t mb_result_step(const mb_result_t *r, size_t index,
                           mb_step_time_t *out) {
  if (!r) return mb__fail(MB_ERR_INVALID_ARG, "mb_result_step: NULL result");
  if (index >= r->num_steps)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_result_step: index %zu of %zu steps", index,
                    r->num_steps);
  return mb__struct_out(MB__STRUCT_STEP_TIME, "mb_result_step",
                        &r->steps[index].t, out);
}

double mb_result_phase_ns(const mb_result_t *r, mb_phase_t phase) {
  if (!r || (phase != MB_PHASE_FORWARD && phase != MB_PHASE_BACKWARD))
    return NAN;
  return r->phase[phase].median_ns;
}

mb_status_t mb_result_phase(const mb_result_t *r, mb_phase_t phase,
                            mb_step_time_t *out) {
  if (!r) return mb__fail(MB_ERR_INVALID_ARG, "mb_result_phase: NULL result");
  if (phase != MB_PHASE_FORWARD && phase != MB_PHASE_BACKWARD)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_result_phase: phase %d; valid: forward, backward",
                    (int)phase);
  if (!isfinite(r->phase[phase].median_ns))
    return mb__fail(MB_ERR_NOT_FOUND, "mb_result_phase: %s was not measured",
                    mb_phase_name(phase));
  return mb__struct_out(MB__STRUCT_STEP_TIME, "mb_result_phase",
                        &r->phase[phase], out);
}

mb_status_t mb_result_parts_check(const mb_result_t *r, mb_parts_check_t *out) {
  if (!r)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_parts_check: NULL result");
  return mb__struct_out(MB__STRUCT_PARTS_CHECK, "mb_result_parts_check",
                        &r->parts, out);
}

mb_status_t mb_result_accuracy(const mb_result_t *r, mb_accuracy_t *out) {
  if (!r)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_accuracy: NULL result");
  return mb__struct_out(MB__STRUCT_ACCURACY, "mb_result_accuracy", &r->accuracy,
                        out);
}
