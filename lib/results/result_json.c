/* One result as a JSON object (schema microbench.results/1). Every figure
 * carries its unit in its name (_ns, _s, bytes, tflops, gbps). */
#include <math.h>
#include <stdio.h>

#include "ops/op_internal.h"
#include "results/result.h"
#include "results/json_exact.h"
#include "results/result_fields.h"

/* JSON has no inf/NaN: they become null. */
static void add_num(cJSON *o, const char *k, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static void add_shape(cJSON *o, const mb_result_t *r, const mb_op_t *op) {
  cJSON *shape = cJSON_AddObjectToObject(o, "shape");
  for (uint32_t i = 0; op && i < r->info.params.ndim; i++)
    cJSON_AddNumberToObject(shape, op->dim_names[i],
                            (double)r->info.params.shape[i]);
}

static void add_scaling(cJSON *o, const char *key, const mb_scaling_t *s) {
  cJSON *j = cJSON_AddObjectToObject(o, key);
  cJSON_AddStringToObject(j, "mode", mb_scale_mode_name(s->mode));
  if (s->mode != MB_SCALE_NONE) {
    cJSON *b = cJSON_AddArrayToObject(j, "block");
    cJSON_AddItemToArray(b, cJSON_CreateNumber((double)s->block[0]));
    cJSON_AddItemToArray(b, cJSON_CreateNumber((double)s->block[1]));
  }
}

/* Only the parameters the op uses (its param_mask). */
static void add_params(cJSON *o, const mb_op_params_t *p, const mb_op_t *op) {
  cJSON *j = cJSON_AddObjectToObject(o, "params");
  uint32_t m = op ? op->param_mask : 0;
  if (m & MB__P_ALPHA_BETA) {
    add_num(j, "alpha", p->alpha);
    add_num(j, "beta", p->beta);
  }
  if (m & (MB__P_SCALES | MB__P_SCALE_A))
    add_scaling(j, "scale_a", &p->scale_a);
  if (m & MB__P_SCALES) add_scaling(j, "scale_b", &p->scale_b);
  /* Only when not f32 (NONE), so f32 results read as they always did. */
  if (p->dtype_scale != MB_DTYPE_NONE)
    cJSON_AddStringToObject(j, "scale_dtype", mb_dtype_name(p->dtype_scale));
#define WRITE(key, mask, flag, inverted, opt) \
  if (m & (mask))                             \
    cJSON_AddBoolToObject(j, key, ((p->flags & (flag)) != 0) != (inverted));
  MB__PARAM_FLAGS(WRITE)
#undef WRITE
  if ((m & MB__P_QUANT) && (p->flags & MB_PARAM_QUANTIZE_INPUTS))
    cJSON_AddStringToObject(j, "dtype_q", mb_dtype_name(p->dtype_q));
  if ((m & MB__P_STATIC) && (p->flags & MB_PARAM_STATIC))
    add_num(j, "scale", p->scale);
  if (m & MB__P_ACT) {
    cJSON_AddStringToObject(j, "activation", mb_activation_name(p->activation));
    if (p->activation == MB_ACT_LEAKYRELU)
      add_num(j, "act_alpha", p->act_alpha);
  }
  if (m & MB__P_EPS) add_num(j, "eps", p->eps);
  if (m & MB__P_RECIPE)
    cJSON_AddStringToObject(j, "recipe",
                            mb_recipe_name((mb_recipe_t)p->recipe));
  if (mb__gqa_kv_heads(op, p))
    cJSON_AddNumberToObject(j, "kv_heads", (double)p->kv_heads);
  if (m & MB__P_REDUCE)
    cJSON_AddStringToObject(j, "reduce_op",
                            mb_reduce_op_name((mb_reduce_op_t)p->reduce_op));
  if (m & MB__P_ROOT) cJSON_AddNumberToObject(j, "root", p->root);
  if (m & MB__P_COLL) cJSON_AddNumberToObject(j, "ranks", p->ranks);
}

static void add_dtypes(cJSON *o, const mb_op_params_t *p) {
  cJSON *d = cJSON_AddObjectToObject(o, "dtypes");
  cJSON_AddStringToObject(d, "a", mb_dtype_name(p->dtype));
  cJSON_AddStringToObject(d, "b", mb_dtype_name(p->dtype_b));
  cJSON_AddStringToObject(d, "out", mb_dtype_name(p->dtype_out));
  cJSON_AddStringToObject(d, "acc", mb_dtype_name(p->dtype_acc));
}

static void add_timing(cJSON *o, const mb_bench_spec_t *t) {
  cJSON *j = cJSON_AddObjectToObject(o, "timing");
  cJSON_AddStringToObject(j, "criterion", mb_criterion_name(t->criterion));
  cJSON_AddNumberToObject(j, "min_samples", t->min_samples);
  cJSON_AddNumberToObject(j, "samples", t->samples);
  cJSON_AddNumberToObject(j, "min_time_s", t->min_time_s);
  cJSON_AddNumberToObject(j, "max_noise", t->max_noise);
  cJSON_AddNumberToObject(j, "timeout_s", t->timeout_s);
  cJSON_AddNumberToObject(j, "warmup_s", t->warmup_s);
  cJSON_AddNumberToObject(j, "warmup_runs", t->warmup_runs);
  cJSON_AddNumberToObject(j, "batch_requested", t->batch);
  cJSON_AddNumberToObject(j, "repetitions", t->repetitions);
  cJSON_AddStringToObject(
      j, "flush",
      mb_flush_name(t->flags & MB_BENCH_FLUSH_READ ? MB_FLUSH_READ
                                                   : MB_FLUSH_WRITE));
}

/* Counts are exact in a JSON number up to 2^53. */
/* A count or a seed: cJSON writes an integer of 16 digits with trailing
 * zeros as 8.706661036557e+15 (it reads back exactly, but as a float to
 * most readers), so those go out as integer text. */
static void add_count(cJSON *o, const char *k, double v) {
  if (v >= 1e15 && v < 9007199254740992.0 && v == floor(v)) {
    char text[32];
    snprintf(text, sizeof text, "%.0f", v);
    cJSON_AddRawToObject(o, k, text);
    return;
  }
  cJSON_AddNumberToObject(o, k, v);
}
#define add_NUM add_num
#define add_U32 add_count
#define add_U64 add_count
#define add_BOOL(j, key, v) cJSON_AddBoolToObject(j, key, v)

static void add_correctness(cJSON *o, const mb_correctness_t *c) {
  cJSON *j = cJSON_AddObjectToObject(o, "correctness");
  cJSON_AddBoolToObject(j, "checked", c->checked);
  if (!c->checked) return;
  cJSON_AddBoolToObject(j, "pass", c->pass);
  add_num(j, "max_abs_err", c->max_abs_err);
  add_num(j, "max_rel_err", c->max_rel_err);
  add_num(j, "max_err_ratio", c->max_err_ratio);
  add_num(j, "sqnr_db", c->sqnr_db); /* null: no error at all */
  cJSON_AddBoolToObject(j, "exact", c->max_abs_err == 0);
  add_num(j, "tolerance", c->tolerance);
  cJSON_AddNumberToObject(j, "elements_checked", (double)c->elements_checked);
  cJSON_AddNumberToObject(j, "elements_total", (double)c->elements_total);
  cJSON_AddBoolToObject(j, "sampled", c->elements_checked < c->elements_total);
#define WRITE(key, member, kind, flags) add_##kind(j, key, (double)c->member);
  MB__CORRECTNESS_FIELDS(WRITE)
#undef WRITE
}

static void add_stats(cJSON *o, const mb_stats_t *s) {
  cJSON *j = cJSON_AddObjectToObject(o, "stats");
#define WRITE(key, member, kind, flags) add_##kind(j, key, (double)s->member);
  MB__STATS_FIELDS(WRITE)
#undef WRITE
  cJSON_AddStringToObject(j, "stop_reason",
                          s->stop_reason ? s->stop_reason : "");
}

/* Flags parallel to samples_ns; only when some sample has one. */
static void add_sample_flags(cJSON *o, const mb_result_t *r) {
  size_t i = 0;
  while (i < r->num_samples && !r->flags[i]) i++;
  if (i == r->num_samples) return;
  cJSON *a = cJSON_AddArrayToObject(o, "sample_flags");
  for (i = 0; i < r->num_samples; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber(r->flags[i]));
}

/* Each repetition and the aggregates over their medians; only with more
 * than one (a single repetition is the stats block). */
static void add_repetitions(cJSON *o, const mb_result_t *r) {
  if (r->num_reps < 2) return;
  cJSON *a = cJSON_AddArrayToObject(o, "repetitions");
  for (size_t i = 0; i < r->num_reps; i++) {
    const mb_repetition_t *p = &r->reps[i];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "first_sample", (double)p->first_sample);
    cJSON_AddNumberToObject(j, "count", (double)p->count);
    add_num(j, "median_ns", p->median);
    add_num(j, "mean_ns", p->mean);
    add_num(j, "stdev_ns", p->stdev);
    cJSON_AddStringToObject(j, "stop_reason", p->stop_reason);
    cJSON_AddItemToArray(a, j);
  }
  mb_aggregate_t g = MB_AGGREGATE_INIT;
  if (mb_result_aggregate(r, &g) != MB_OK) return;
  cJSON *j = cJSON_AddObjectToObject(o, "aggregate");
  cJSON_AddNumberToObject(j, "count", g.count);
  add_num(j, "mean_ns", g.mean);
  add_num(j, "median_ns", g.median);
  add_num(j, "stddev_ns", g.stddev);
  add_num(j, "cv", g.cv);
  add_num(j, "min_ns", g.min);
  add_num(j, "max_ns", g.max);
}

static void add_derived(cJSON *o, const mb_derived_t *d) {
  cJSON *j = cJSON_AddObjectToObject(o, "derived");
  add_num(j, "flop", d->flop);
  add_num(j, "bytes", d->bytes);
  add_num(j, "intensity", d->intensity);
  add_num(j, "tflops", d->tflops);
  add_num(j, "gbps", d->gbps);
  add_num(j, "peak_tflops", d->peak_flops / 1e12);
  add_num(j, "pct_peak", d->pct_peak);
  add_num(j, "bandwidth_gbps", d->bandwidth_gbps);
  add_num(j, "roof_ns", d->roof_ns);
  add_num(j, "pct_roof", d->pct_roof);
  cJSON_AddStringToObject(j, "bound", d->bound ? d->bound : "");
}

static void add_rotate(cJSON *o, const mb_result_t *r) {
  cJSON *j = cJSON_AddObjectToObject(o, "rotate");
  cJSON_AddNumberToObject(j, "copies", r->info.rotate_copies);
  cJSON_AddNumberToObject(j, "footprint_bytes", r->info.footprint_bytes);
  cJSON_AddNumberToObject(j, "cache_bytes", r->cache_bytes);
}

/* Per-sample arrays parallel to samples_ns; null where unreadable. */
static void add_series(cJSON *j, const char *key, const mb_result_t *r,
                       size_t off, double unit) {
  cJSON *a = cJSON_AddArrayToObject(j, key);
  for (size_t i = 0; i < r->num_tele; i++) {
    double v = *(const double *)((const char *)&r->tele[i] + off);
    cJSON_AddItemToArray(
        a, isfinite(v) ? cJSON_CreateNumber(v * unit) : cJSON_CreateNull());
  }
}

static void add_telemetry(cJSON *o, const mb_result_t *r) {
  if (!r->num_tele) return;
  cJSON *j = cJSON_AddObjectToObject(o, "telemetry");
#define WRITE(key, member, unit, flags) \
  add_series(j, key, r, offsetof(mb_telemetry_t, member), unit);
  MB__TELEMETRY_SERIES(WRITE)
#undef WRITE
  cJSON *t = cJSON_AddArrayToObject(j, "throttle");
  for (size_t i = 0; i < r->num_tele; i++)
    cJSON_AddItemToArray(t, cJSON_CreateNumber(r->tele[i].throttle));
  cJSON_AddNumberToObject(j, "throttled_samples", (double)r->stats.throttled);
}

/* A step's or phase's time alone and its noise. */
static void add_part_time(cJSON *j, const mb_step_time_t *s) {
#define WRITE(key, member, kind, opt) add_##kind(j, key, s->member);
  MB__PART_TIME_FIELDS(WRITE)
#undef WRITE
  cJSON_AddStringToObject(j, "stop_reason", s->stop_reason);
}

static void add_phases(cJSON *o, const mb_result_t *r) {
  const double fwd = r->phase[MB_PHASE_FORWARD].median_ns,
               bwd = r->phase[MB_PHASE_BACKWARD].median_ns;
  if (!isfinite(fwd) && !isfinite(bwd)) return;
  cJSON *j = cJSON_AddObjectToObject(o, "phases");
  add_num(j, "forward_ns", fwd);
  add_num(j, "backward_ns", bwd);
  for (int p = 0; p < 2; p++)
    if (isfinite(r->phase[p].median_ns))
      add_part_time(cJSON_AddObjectToObject(j, mb_phase_name((mb_phase_t)p)),
                    &r->phase[p]);
  const mb_parts_check_t *c = &r->parts;
  if (!c->checked) return;
  cJSON *k = cJSON_AddObjectToObject(j, "parts");
#define WRITE(key, member, kind, opt) add_##kind(k, key, c->member);
  MB__PARTS_FIELDS(WRITE)
#undef WRITE
  cJSON_AddStringToObject(k, "of", c->of);
}

/* A composite's per-step times, phases and accuracy. */
static void add_model(cJSON *o, const mb_result_t *r) {
  add_phases(o, r);
  if (r->num_steps) {
    cJSON *a = cJSON_AddArrayToObject(o, "steps");
    for (size_t i = 0; i < r->num_steps; i++) {
      const mb_step_time_t *s = &r->steps[i].t;
      cJSON *j = cJSON_CreateObject();
      cJSON_AddStringToObject(j, "label", s->label);
      cJSON_AddStringToObject(j, "op", s->op);
      cJSON_AddStringToObject(j, "impl", s->impl);
      cJSON_AddStringToObject(j, "phase", mb_phase_name(s->phase));
      add_part_time(j, s);
      cJSON_AddItemToArray(a, j);
    }
  }
  const mb_accuracy_t *c = &r->accuracy;
  if (!c->checked) return;
  cJSON *j = cJSON_AddObjectToObject(o, "accuracy");
#define WRITE(key, member, kind, opt) add_##kind(j, key, c->member);
  MB__ACCURACY_FIELDS(WRITE)
#undef WRITE
}

static void add_notes(cJSON *o, const mb_result_t *r) {
  if (!r->num_notes) return;
  cJSON *j = cJSON_AddObjectToObject(o, "kernel");
  for (size_t i = 0; i < r->num_notes; i++) {
    if (r->notes[i].text)
      cJSON_AddStringToObject(j, r->notes[i].key, r->notes[i].text);
    else
      add_num(j, r->notes[i].key, r->notes[i].value);
  }
}

/* What a plan recorded (mb_plan_run): only the fields it set. */
static void add_plan(cJSON *o, const mb_result_t *r) {
  const struct {
    const char *key, *value;
  } k_fields[] = {{"name", r->name},
                  {"recipe", r->recipe},
                  {"model", r->model},
                  {"mode", r->mode},
                  {"shape_name", r->shape_name}};
  for (size_t i = 0; i < sizeof k_fields / sizeof k_fields[0]; i++)
    if (*k_fields[i].value)
      cJSON_AddStringToObject(o, k_fields[i].key, k_fields[i].value);
  if (*r->recipe)
    add_num(o, "speedup_vs_baseline", r->info.speedup_vs_baseline);
  if (r->config)
    cJSON_AddItemToObject(o, "config", cJSON_Duplicate(r->config, 1));
}

/* A run across processes: where this result was measured. */
static void add_placement(cJSON *o, const mb_placement_t *p) {
  if (!p->ranks) return;
  cJSON *j = cJSON_AddObjectToObject(o, "placement");
  cJSON_AddStringToObject(j, "host", p->host);
  cJSON_AddNumberToObject(j, "rank", p->rank);
  cJSON_AddNumberToObject(j, "ranks", p->ranks);
  cJSON_AddNumberToObject(j, "local_rank", p->local_rank);
}

cJSON *mb__result_to_cjson(const mb_result_t *r) {
  char id[512];
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  mb__result_id(r, id, sizeof id);
  cJSON_AddStringToObject(o, "id", id);
  mb__result_problem_id(r, id, sizeof id);
  cJSON_AddStringToObject(o, "problem", id);
  add_plan(o, r);
  const mb_op_t *op = mb_op_find(r->op);
  cJSON_AddStringToObject(o, "op", r->op);
  if (*r->alias) cJSON_AddStringToObject(o, "alias", r->alias);
  add_shape(o, r, op);
  add_dtypes(o, &r->info.params);
  add_params(o, &r->info.params, op);
  cJSON_AddStringToObject(o, "backend", r->backend);
  cJSON_AddNumberToObject(o, "device_index", r->info.device_index);
  cJSON_AddStringToObject(o, "device", r->device);
  add_placement(o, &r->place);
  cJSON_AddStringToObject(o, "impl", r->impl);
  cJSON_AddBoolToObject(o, "emulated", r->info.emulated);
  cJSON_AddStringToObject(o, "cache", mb_cache_policy_name(r->info.cache));
  if (r->info.cache == MB_CACHE_ROTATE) add_rotate(o, r);
  cJSON_AddNumberToObject(o, "seed", (double)r->info.seed);
  cJSON_AddStringToObject(o, "status", mb_result_status_name(r->info.status));
  cJSON_AddStringToObject(o, "reason", r->reason);
  add_timing(o, &r->timing);
  add_correctness(o, &r->corr);
  add_stats(o, &r->stats);
  cJSON *samples = cJSON_AddArrayToObject(o, "samples_ns");
  for (size_t i = 0; i < r->num_samples; i++)
    cJSON_AddItemToArray(samples, cJSON_CreateNumber(r->samples[i]));
  add_sample_flags(o, r);
  add_repetitions(o, r);
  add_telemetry(o, r);
  add_derived(o, &r->derived);
  cJSON_AddNumberToObject(o, "peak_memory_bytes", r->info.peak_memory_bytes);
  add_model(o, r);
  add_notes(o, r);
  if (*r->timer) cJSON_AddStringToObject(o, "timer", r->timer);
  if (*r->warning) cJSON_AddStringToObject(o, "warning", r->warning);
  /* Every consumer prints it: make its doubles read back exactly. */
  mb__json_exact_numbers(o);
  return o;
}
