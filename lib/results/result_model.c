/* A composite's extras in its result: the graph's steps with their times,
 * the forward/backward medians and the accuracy against the
 * high-precision model (model.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/result.h"

mb_status_t mb__result_add_step(mb_result_t *r, const mb_step_time_t *s) {
  struct mb__step *grown =
      realloc(r->steps, (r->num_steps + 1) * sizeof *r->steps);
  if (!grown) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a step");
  r->steps = grown;
  struct mb__step *d = &r->steps[r->num_steps];
  *d = (struct mb__step){mb__strdup(s->label ? s->label : ""),
                         mb__strdup(s->op ? s->op : ""),
                         mb__strdup(s->impl ? s->impl : ""),
                         s->phase,
                         s->median_ns,
                         s->flop,
                         s->bytes};
  if (!d->label || !d->op || !d->impl) {
    free(d->label);
    free(d->op);
    free(d->impl);
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a step");
  }
  r->num_steps++;
  free(r->json); /* the cached JSON no longer says everything */
  r->json = NULL;
  return MB_OK;
}

void mb__result_set_phase(mb_result_t *r, mb_phase_t phase, double ns) {
  if (phase == MB_PHASE_FORWARD || phase == MB_PHASE_BACKWARD)
    r->phase_ns[phase] = ns;
}

void mb__result_set_accuracy(mb_result_t *r, const mb_accuracy_t *a) {
  r->accuracy = *a;
  r->accuracy.struct_size = sizeof r->accuracy;
}

void mb__result_free_steps(mb_result_t *r) {
  for (size_t i = 0; i < r->num_steps; i++) {
    free(r->steps[i].label);
    free(r->steps[i].op);
    free(r->steps[i].impl);
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
  const struct mb__step *s = &r->steps[index];
  const mb_step_time_t step = {sizeof step, s->label,     s->op,   s->impl,
                               s->phase,    s->median_ns, s->flop, s->bytes};
  return mb__struct_out(MB__STRUCT_STEP_TIME, "mb_result_step", &step, out);
}

double mb_result_phase_ns(const mb_result_t *r, mb_phase_t phase) {
  if (!r || (phase != MB_PHASE_FORWARD && phase != MB_PHASE_BACKWARD))
    return NAN;
  return r->phase_ns[phase];
}

mb_status_t mb_result_accuracy(const mb_result_t *r, mb_accuracy_t *out) {
  if (!r)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_accuracy: NULL result");
  return mb__struct_out(MB__STRUCT_ACCURACY, "mb_result_accuracy", &r->accuracy,
                        out);
}
