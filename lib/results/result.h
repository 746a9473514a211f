/* Internal: the object behind mb_result_t. */
#ifndef MB_LIB_RESULT_H
#define MB_LIB_RESULT_H

#include <cjson/cJSON.h>

#include "internal.h"

struct mb_result {
  mb_result_info_t info; /* strings point at the copies below */
  char *reason, *op, *backend, *device, *impl, *shape_syntax, *alias;
  mb_bench_spec_t timing; /* the spec's numeric settings (string fields NULL) */
  mb_correctness_t corr;
  mb_stats_t stats;
  mb_derived_t derived;
  double *samples;
  size_t num_samples, cap_samples;
  mb_telemetry_t *tele; /* parallel to samples when the backend reports it */
  size_t num_tele;
  uint8_t *flags; /* MB_SAMPLE_*, parallel to samples (same capacity) */
  mb_repetition_t *reps;
  size_t num_reps;
  /* Over the repetitions' medians: computed once when sampling ends
   * (mb__result_set_aggregate) or read back from JSON, so it is written
   * the same digits every time. count 0: not set, computed on demand. */
  mb_aggregate_t agg;
  struct mb__note {
    char *key, *text; /* text NULL: value */
    double value;
  } * notes;
  size_t num_notes;
  char *warning, *timer;
  double cache_bytes; /* rotate: the last-level cache it must exceed */
  /* Set by mb_plan_run; the info struct's views point at these. */
  char *name, *recipe, *model, *mode, *shape_name;
  cJSON *config; /* the file's facts about this entry (owned); NULL */
  /* Composites (result_model.c): the graph's steps, each timed alone
   * (label, op and impl owned: t's point at them), the phases (median NAN:
   * not measured; static strings), whether the parts add up to the whole,
   * and the output's accuracy against the high-precision model. */
  struct mb__step {
    mb_step_time_t t;
  } * steps;
  size_t num_steps;
  mb_step_time_t phase[2];
  mb_parts_check_t parts;
  mb_accuracy_t accuracy;
  mb_placement_t place; /* ranks 0: not placed */
  char *json;           /* built on first mb_result_json() */
};

/* A result with its identity set; status ok, reason "". NULL on OOM. */
mb_result_t *mb__result_new(const char *op, const char *shape_syntax,
                            const mb_op_params_t *params,
                            const mb_bench_spec_t *spec,
                            const mb_device_t *dev);
void mb__result_set_status(mb_result_t *r, mb_result_status_t s,
                           const char *reason);
void mb__result_set_impl(mb_result_t *r, const char *impl);
mb_status_t mb__result_add_sample(mb_result_t *r, double ns);
/* Telemetry of the sample just added (same index). */
mb_status_t mb__result_add_telemetry(mb_result_t *r, const mb_telemetry_t *t);
/* Ors MB_SAMPLE_* flags into sample i (< num_samples). */
void mb__result_flag_sample(mb_result_t *r, size_t i, uint8_t flags);
/* Closes a repetition: samples [first, num_samples), summarised. */
mb_status_t mb__result_add_repetition(mb_result_t *r, size_t first,
                                      const char *stop_reason);
/* Computes and keeps the aggregate over the repetitions so far. */
mb_status_t mb__result_set_aggregate(mb_result_t *r);
mb_status_t mb__result_add_note(mb_result_t *r, const char *key,
                                const char *text, double value);
/* Appends to the warning ("; " between several). */
void mb__result_warn(mb_result_t *r, const char *text);
void mb__result_set_timer(mb_result_t *r, const char *timer);
/* What the plan knows about a result (mb_plan_run). Strings are copied,
 * config is taken over (NULL: none). */
typedef struct mb__result_plan {
  const char *name, *recipe, *model, *mode, *shape_name;
  cJSON *config;
} mb__result_plan_t;
mb_status_t mb__result_set_plan(mb_result_t *r, const mb__result_plan_t *p);

/* result_model.c: a composite's step (strings copied), phase times and
 * accuracy. */
mb_status_t mb__result_add_step(mb_result_t *r, const mb_step_time_t *s);
/* s's strings are not kept: a phase's label is mb_phase_name's, its op
 * and impl "", its stop reason must be static. */
void mb__result_set_phase(mb_result_t *r, mb_phase_t phase,
                          const mb_step_time_t *s);
/* Compares the parts (phases when there is a backward one, else the timed
 * steps) with the whole's median and its interval; warns on a
 * disagreement (mb_parts_check_t's rule). */
mb_status_t mb__result_check_parts(mb_result_t *r, double whole_ci_low_ns,
                                   double whole_ci_high_ns);
void mb__result_set_accuracy(mb_result_t *r, const mb_accuracy_t *a);
void mb__result_free_steps(mb_result_t *r);

/* The problem: "gemm/1024x1024x1024/f8e4m3.f8e4m3.bf16[/a:row,b:col]
 * [/recipe][/mode]" — what was computed, wherever it ran. */
void mb__result_problem_id(const mb_result_t *r, char *buf, size_t cap);
/* The problem plus where and how: ".../cpu:0/onednn/cold"; unique within a
 * plan's results. */
void mb__result_id(const mb_result_t *r, char *buf, size_t cap);
/* "1024x1024x1024" */
void mb__result_shape(const mb_result_t *r, char *buf, size_t cap);
/* The op's own parameters, compactly ("a:row b:col", "1x128 T static",
 * "gelu_tanh", "causal"); "" when there are none. */
void mb__result_variant(const mb_result_t *r, char *buf, size_t cap);
/* The result as a cJSON object (caller frees). */
cJSON *mb__result_to_cjson(const mb_result_t *r);

#endif
