/* A result's samples and what is kept per sample: telemetry, flags, and the
 * repetitions they belong to. Telemetry and flags share the samples'
 * capacity, so the parallel arrays can never disagree in length. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/result.h"
#include "measure/stats.h"

static mb_status_t grow(mb_result_t *r) {
  size_t cap = r->cap_samples ? 2 * r->cap_samples : 256;
  double *s = realloc(r->samples, cap * sizeof *s);
  if (!s) return mb__fail(MB_ERR_NO_MEMORY, "out of memory keeping samples");
  r->samples = s;
  uint8_t *f = realloc(r->flags, cap * sizeof *f);
  if (!f) return mb__fail(MB_ERR_NO_MEMORY, "out of memory keeping samples");
  r->flags = f;
  if (r->tele) {
    mb_telemetry_t *t = realloc(r->tele, cap * sizeof *t);
    if (!t)
      return mb__fail(MB_ERR_NO_MEMORY, "out of memory keeping telemetry");
    r->tele = t;
  }
  r->cap_samples = cap; /* only once every array has it */
  return MB_OK;
}

mb_status_t mb__result_add_sample(mb_result_t *r, double ns) {
  if (r->num_samples == r->cap_samples) {
    mb_status_t st = grow(r);
    if (st != MB_OK) return st;
  }
  r->flags[r->num_samples] = 0;
  r->samples[r->num_samples++] = ns;
  return MB_OK;
}

mb_status_t mb__result_add_telemetry(mb_result_t *r, const mb_telemetry_t *t) {
  if (!r->num_samples || r->num_tele != r->num_samples - 1)
    return mb__fail(MB_ERR_INTERNAL, "telemetry without its sample");
  if (!r->tele && !(r->tele = malloc(r->cap_samples * sizeof *r->tele)))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory keeping telemetry");
  r->tele[r->num_tele++] = *t;
  if (t->throttle) {
    r->stats.throttled++;
    mb__result_flag_sample(r, r->num_tele - 1, MB_SAMPLE_THROTTLED);
  }
  return MB_OK;
}

void mb__result_flag_sample(mb_result_t *r, size_t i, uint8_t flags) {
  if (i < r->num_samples) r->flags[i] |= flags;
}

mb_status_t mb__result_add_repetition(mb_result_t *r, size_t first,
                                      const char *stop_reason) {
  mb_repetition_t *grown = realloc(r->reps, (r->num_reps + 1) * sizeof *grown);
  if (!grown) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  r->reps = grown;
  mb_stats_t s = MB_STATS_INIT;
  size_t n = r->num_samples > first ? r->num_samples - first : 0;
  mb_status_t st = mb__stats_compute(r->samples + first, n, &s);
  if (st != MB_OK) return st;
  r->reps[r->num_reps++] = (mb_repetition_t){
      sizeof(mb_repetition_t),       first, n, s.median, s.mean, s.stdev,
      stop_reason ? stop_reason : ""};
  return MB_OK;
}

const double *mb_result_samples(const mb_result_t *r, size_t *count) {
  if (count) *count = r ? r->num_samples : 0;
  return r && r->num_samples ? r->samples : NULL;
}

const mb_telemetry_t *mb_result_telemetry(const mb_result_t *r, size_t *count) {
  if (count) *count = r && r->tele ? r->num_tele : 0;
  return r && r->num_tele ? r->tele : NULL;
}

const uint8_t *mb_result_sample_flags(const mb_result_t *r, size_t *count) {
  if (count) *count = r ? r->num_samples : 0;
  return r && r->num_samples ? r->flags : NULL;
}

const mb_repetition_t *mb_result_repetitions(const mb_result_t *r,
                                             size_t *count) {
  if (count) *count = r ? r->num_reps : 0;
  return r && r->num_reps ? r->reps : NULL;
}

static mb_status_t compute_aggregate(const mb_result_t *r,
                                     mb_aggregate_t *out) {
  mb_aggregate_t a = MB_AGGREGATE_INIT;
  if (r->num_reps) {
    double *med = malloc(r->num_reps * sizeof *med);
    if (!med) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < r->num_reps; i++) med[i] = r->reps[i].median;
    mb_stats_t s = MB_STATS_INIT;
    mb_status_t st = mb__stats_compute(med, r->num_reps, &s);
    free(med);
    if (st != MB_OK) return st;
    a.count = (uint32_t)r->num_reps;
    a.mean = s.mean;
    a.median = s.median;
    a.stddev = s.stdev;
    a.cv = s.rel_stdev;
    a.min = s.min;
    a.max = s.max;
  }
  *out = a;
  return MB_OK;
}

mb_status_t mb__result_set_aggregate(mb_result_t *r) {
  return compute_aggregate(r, &r->agg);
}

mb_status_t mb_result_aggregate(const mb_result_t *r, mb_aggregate_t *out) {
  if (!r)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_aggregate: NULL result");
  mb_aggregate_t a = r->agg;
  mb_status_t st = a.count ? MB_OK : compute_aggregate(r, &a);
  return st != MB_OK ? st
                     : mb__struct_out(MB__STRUCT_AGGREGATE,
                                      "mb_result_aggregate", &a, out);
}
