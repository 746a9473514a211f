/* The measurement blocks of a result's JSON read back (result_parse.c
 * reads the identity first): timing, correctness, samples and telemetry,
 * statistics, repetitions, derived figures, a composite's steps and
 * accuracy, notes, the plan's facts and the texts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "results/result_read.h"

/* Static, so stats.stop_reason never points into the freed JSON. */
static const char *const k_stop_reasons[] = {
    "converged", "plateau", "fixed", "unstable", "timeout", "entropy", ""};

static mb_status_t read_stop_reason_opt(const cJSON *o, const char *block,
                                        unsigned flags, const char **out) {
  const char *text = "";
  char path[160];
  snprintf(path, sizeof path, "%s.stop_reason", block);
  mb_status_t st =
      mb__rj_value(o, block, "stop_reason", MB__RJ_STR, flags, &text);
  for (size_t i = 0; st == MB_OK && i < MB__COUNT(k_stop_reasons); i++)
    if (strcmp(text, k_stop_reasons[i]) == 0) {
      *out = k_stop_reasons[i];
      return MB_OK;
    }
  return st != MB_OK
             ? st
             : mb__rj_bad(path,
                          "unknown stop reason \"%s\"; valid: converged, "
                          "plateau, fixed, unstable, timeout, entropy, \"\"",
                          text);
}

static mb_status_t read_stop_reason(const cJSON *o, const char *block,
                                    const char **out) {
  return read_stop_reason_opt(o, block, 0, out);
}

/* ---- the measurement ------------------------------------------------------
 */

static mb_status_t read_timing(const cJSON *root, mb_result_t *r) {
  static const mb__rj_field_t k_fields[] = {
      {"min_samples", offsetof(mb_result_t, timing.min_samples), MB__RJ_U32, 0},
      {"samples", offsetof(mb_result_t, timing.samples), MB__RJ_U32, 0},
      {"min_time_s", offsetof(mb_result_t, timing.min_time_s), MB__RJ_NUM, 0},
      {"max_noise", offsetof(mb_result_t, timing.max_noise), MB__RJ_NUM, 0},
      {"timeout_s", offsetof(mb_result_t, timing.timeout_s), MB__RJ_NUM,
       MB__NULL_INF},
      {"warmup_s", offsetof(mb_result_t, timing.warmup_s), MB__RJ_NUM, 0},
      {"warmup_runs", offsetof(mb_result_t, timing.warmup_runs), MB__RJ_U32, 0},
      {"batch_requested", offsetof(mb_result_t, timing.batch), MB__RJ_U32, 0},
      {"repetitions", offsetof(mb_result_t, timing.repetitions), MB__RJ_U32,
       MB__FIELD_OPT},
  };
  const cJSON *o;
  const char *crit = NULL;
  mb_status_t st = mb__rj_block(root, "timing", &o);
  if (st != MB_OK || !o) return st;
  const char *flush = NULL;
  mb_flush_t how = MB_FLUSH_WRITE;
  if ((st = mb__rj_value(o, "timing", "criterion", MB__RJ_STR, 0, &crit)) !=
          MB_OK ||
      (st = mb__rj_wrap(mb_criterion_from_name(crit, &r->timing.criterion),
                        "timing.criterion")) != MB_OK ||
      /* absent in files written before there was a choice: write */
      (st = mb__rj_value(o, "timing", "flush", MB__RJ_STR, MB__FIELD_OPT,
                         &flush)) != MB_OK ||
      (flush && (st = mb__rj_wrap(mb_flush_from_name(flush, &how),
                                  "timing.flush")) != MB_OK))
    return st;
  if (how == MB_FLUSH_READ) r->timing.flags |= MB_BENCH_FLUSH_READ;
  r->info.flush = how;
  return mb__rj_fields(o, "timing", r, k_fields, MB__COUNT(k_fields));
}

static mb_status_t read_correctness(const cJSON *root, mb_result_t *r) {
  static const mb__rj_field_t k_fields[] = {
      {"pass", offsetof(mb_correctness_t, pass), MB__RJ_BOOL, 0},
      {"max_abs_err", offsetof(mb_correctness_t, max_abs_err), MB__RJ_NUM, 0},
      {"max_rel_err", offsetof(mb_correctness_t, max_rel_err), MB__RJ_NUM, 0},
      {"max_err_ratio", offsetof(mb_correctness_t, max_err_ratio), MB__RJ_NUM,
       0},
      /* null: no error at all, which verify.c writes as +inf dB */
      {"sqnr_db", offsetof(mb_correctness_t, sqnr_db), MB__RJ_NUM,
       MB__NULL_INF},
      {"tolerance", offsetof(mb_correctness_t, tolerance), MB__RJ_NUM, 0},
      {"elements_checked", offsetof(mb_correctness_t, elements_checked),
       MB__RJ_U64, 0},
      {"elements_total", offsetof(mb_correctness_t, elements_total), MB__RJ_U64,
       0},
#define FIELD(key, member, kind, flags) \
  {key, offsetof(mb_correctness_t, member), MB__RJ_##kind, flags},
      MB__CORRECTNESS_FIELDS(FIELD)
#undef FIELD
  };
  const cJSON *o;
  mb_status_t st = mb__rj_block(root, "correctness", &o);
  if (st != MB_OK || !o) return st;
  st = mb__rj_value(o, "correctness", "checked", MB__RJ_BOOL, 0,
                    &r->corr.checked);
  if (st != MB_OK || !r->corr.checked) return st;
  return mb__rj_fields(o, "correctness", &r->corr, k_fields,
                       MB__COUNT(k_fields));
}

mb_status_t mb__rj_times(const cJSON *root) {
  static const char *const k_stats[] = {"min_ns", "median_ns", "mean_ns",
                                        "max_ns", "iqr_ns"};
  const cJSON *o, *arr;
  size_t n = 0;
  char path[64];
  mb_status_t st = mb__rj_block(root, "stats", &o);
  for (size_t i = 0; st == MB_OK && o && i < MB__COUNT(k_stats); i++) {
    double v = NAN;
    snprintf(path, sizeof path, "stats.%s", k_stats[i]);
    st = mb__rj_value(o, "stats", k_stats[i], MB__RJ_NUM, MB__FIELD_OPT, &v);
    if (st == MB_OK && v < 0)
      st = mb__rj_bad(path, "%g ns: a time is not negative", v);
  }
  if (st == MB_OK)
    st = mb__rj_array(root, "", "samples_ns", MB__FIELD_OPT, &arr, &n);
  const cJSON *v = n ? arr->child : NULL;
  for (size_t i = 0; st == MB_OK && i < n; i++, v = v->next) {
    double ns = 0;
    snprintf(path, sizeof path, "samples_ns[%zu]", i);
    if ((st = mb__rj_item(v, path, MB__RJ_NUM, 0, &ns)) == MB_OK && ns < 0)
      st = mb__rj_bad(path, "%g ns: a time is not negative", ns);
  }
  return st;
}

static mb_status_t read_stats(const cJSON *root, mb_result_t *r) {
#define FIELD(key, member, kind, flags) \
  {key, offsetof(mb_stats_t, member), MB__RJ_##kind, flags},
  static const mb__rj_field_t k_fields[] = {MB__STATS_FIELDS(FIELD)};
#undef FIELD
  const cJSON *o;
  mb_status_t st = mb__rj_block(root, "stats", &o);
  if (st != MB_OK || !o) return st;
  st = mb__rj_fields(o, "stats", &r->stats, k_fields, MB__COUNT(k_fields));
  if (st == MB_OK) st = mb__rj_times(root);
  return st != MB_OK ? st : read_stop_reason(o, "stats", &r->stats.stop_reason);
}

/* The x whose written form x * unit (or x / unit) is `shown`. The inverse
 * can be an ulp off, but only where cJSON wrote 15 digits that read back
 * within DBL_EPSILON, and then x is written as the same 15 digits; where it
 * wrote the exact value, the inverse was exact in every one of 5e6 random
 * clocks tried. */
static double unscale(double shown, double unit, int divided) {
  return divided ? shown * unit : shown / unit;
}

static mb_status_t read_derived(const cJSON *root, mb_result_t *r) {
  static const mb__rj_field_t k_fields[] = {
      {"flop", offsetof(mb_derived_t, flop), MB__RJ_NUM, 0},
      {"bytes", offsetof(mb_derived_t, bytes), MB__RJ_NUM, 0},
      {"intensity", offsetof(mb_derived_t, intensity), MB__RJ_NUM, 0},
      {"tflops", offsetof(mb_derived_t, tflops), MB__RJ_NUM, 0},
      {"gbps", offsetof(mb_derived_t, gbps), MB__RJ_NUM, 0},
      {"pct_peak", offsetof(mb_derived_t, pct_peak), MB__RJ_NUM, 0},
      {"bandwidth_gbps", offsetof(mb_derived_t, bandwidth_gbps), MB__RJ_NUM,
       MB__FIELD_OPT},
      {"roof_ns", offsetof(mb_derived_t, roof_ns), MB__RJ_NUM, MB__FIELD_OPT},
      {"pct_roof", offsetof(mb_derived_t, pct_roof), MB__RJ_NUM, MB__FIELD_OPT},
  };
  static const char *const k_bounds[] = {"", "compute", "memory", "link"};
  const cJSON *o;
  double peak_tflops = 0;
  const char *bound = "";
  mb_status_t st = mb__rj_block(root, "derived", &o);
  if (st != MB_OK || !o) return st;
  if ((st = mb__rj_fields(o, "derived", &r->derived, k_fields,
                          MB__COUNT(k_fields))) != MB_OK ||
      (st = mb__rj_value(o, "derived", "peak_tflops", MB__RJ_NUM, 0,
                         &peak_tflops)) != MB_OK ||
      (st = mb__rj_value(o, "derived", "bound", MB__RJ_STR, MB__FIELD_OPT,
                         &bound)) != MB_OK)
    return st;
  r->derived.peak_flops = unscale(peak_tflops, 1e12, 1);
  for (size_t i = 0; i < MB__COUNT(k_bounds); i++)
    if (!strcmp(bound, k_bounds[i])) {
      r->derived.bound = k_bounds[i];
      return MB_OK;
    }
  return mb__rj_bad("derived.bound",
                    "unknown bound \"%s\"; valid: compute, memory, \"\"",
                    bound);
}

static mb_status_t read_rotate(const cJSON *root, mb_result_t *r) {
  static const mb__rj_field_t k_fields[] = {
      {"copies", offsetof(mb_result_t, info.rotate_copies), MB__RJ_U32, 0},
      {"footprint_bytes", offsetof(mb_result_t, info.footprint_bytes),
       MB__RJ_NUM, 0},
      {"cache_bytes", offsetof(mb_result_t, cache_bytes), MB__RJ_NUM, 0},
  };
  const cJSON *o;
  mb_status_t st = mb__rj_block(root, "rotate", &o);
  if (st != MB_OK || !o) return st;
  return mb__rj_fields(o, "rotate", r, k_fields, MB__COUNT(k_fields));
}

/* ---- per-sample arrays ----------------------------------------------------
 */

/* The writer's series, in its units (result_json.c): value x unit. */
static const struct {
  const char *key;
  size_t off;
  double unit;
  unsigned flags;
} k_series[] = {
#define SERIES(key, member, unit, flags) \
  {key, offsetof(mb_telemetry_t, member), unit, flags},
    MB__TELEMETRY_SERIES(SERIES)
#undef SERIES
};

/* telemetry: one entry per sample taken (at most num_samples); *out is
 * malloc'd, NULL when there is none. */
static mb_status_t read_telemetry(const cJSON *root, size_t num_samples,
                                  mb_telemetry_t **out, size_t *n,
                                  uint64_t *throttled) {
  const cJSON *o, *arr;
  char path[96];
  *out = NULL;
  *n = 0;
  mb_status_t st = mb__rj_block(root, "telemetry", &o);
  if (st != MB_OK || !o) return st;
  size_t len;
  if ((st = mb__rj_array(o, "telemetry", "throttle", 0, &arr, &len)) != MB_OK ||
      (st = mb__rj_value(o, "telemetry", "throttled_samples", MB__RJ_U64, 0,
                         throttled)) != MB_OK)
    return st;
  if (len > num_samples)
    return mb__rj_bad("telemetry.throttle", "%zu entries for %zu samples", len,
                      num_samples);
  mb_telemetry_t *t = malloc((len ? len : 1) * sizeof *t);
  if (!t) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for telemetry");
  for (size_t i = 0; i < len; i++) t[i] = (mb_telemetry_t)MB_TELEMETRY_INIT;
  const cJSON *v = arr->child; /* walked, not indexed: lists are linked */
  for (size_t i = 0; st == MB_OK && i < len; i++, v = v->next) {
    snprintf(path, sizeof path, "telemetry.throttle[%zu]", i);
    st = mb__rj_item(v, path, MB__RJ_U32, 0, &t[i].throttle);
  }
  for (size_t k = 0; st == MB_OK && k < MB__COUNT(k_series); k++) {
    const cJSON *s;
    size_t sn;
    st = mb__rj_array(o, "telemetry", k_series[k].key, k_series[k].flags, &s,
                      &sn);
    if (st != MB_OK || !s) continue;
    if (sn != len) {
      snprintf(path, sizeof path, "telemetry.%s", k_series[k].key);
      st = mb__rj_bad(path, "%zu entries; telemetry.throttle has %zu", sn, len);
    }
    v = s->child;
    for (size_t i = 0; st == MB_OK && i < len; i++, v = v->next) {
      double shown = NAN;
      snprintf(path, sizeof path, "telemetry.%s[%zu]", k_series[k].key, i);
      st = mb__rj_item(v, path, MB__RJ_NUM, 0, &shown);
      *(double *)((char *)&t[i] + k_series[k].off) =
          unscale(shown, k_series[k].unit, 0);
    }
  }
  if (st != MB_OK) {
    free(t);
    return st;
  }
  *out = t;
  *n = len;
  return MB_OK;
}

/* samples_ns, the telemetry taken with them, and their flags. */
static mb_status_t read_samples(const cJSON *root, mb_result_t *r) {
  const cJSON *arr, *flags;
  size_t n, nflags, ntele = 0;
  char path[64];
  uint64_t throttled = 0;
  mb_telemetry_t *tele = NULL;
  mb_status_t st =
      mb__rj_array(root, "", "samples_ns", MB__FIELD_OPT, &arr, &n);
  if (st == MB_OK)
    st = mb__rj_array(root, "", "sample_flags", MB__FIELD_OPT, &flags, &nflags);
  if (st == MB_OK && flags && nflags != n)
    st = mb__rj_bad("sample_flags", "%zu entries for %zu samples", nflags, n);
  if (st == MB_OK) st = read_telemetry(root, n, &tele, &ntele, &throttled);
  const cJSON *v = arr ? arr->child : NULL;
  for (size_t i = 0; st == MB_OK && i < n; i++, v = v->next) {
    double ns = 0;
    snprintf(path, sizeof path, "samples_ns[%zu]", i);
    if ((st = mb__rj_item(v, path, MB__RJ_NUM, 0, &ns)) == MB_OK &&
        (st = mb__result_add_sample(r, ns)) == MB_OK && i < ntele)
      st = mb__result_add_telemetry(r, &tele[i]);
  }
  free(tele);
  /* Exactly the flags written: adding telemetry flagged throttled samples,
   * which the written flags already say. */
  v = flags ? flags->child : NULL;
  for (size_t i = 0; st == MB_OK && i < n; i++) {
    uint32_t f = 0;
    snprintf(path, sizeof path, "sample_flags[%zu]", i);
    if (v && (st = mb__rj_item(v, path, MB__RJ_U32, 0, &f)) == MB_OK && f > 255)
      st = mb__rj_bad(path, "%u is not a set of MB_SAMPLE_* flags (0 .. 255)",
                      f);
    r->flags[i] = (uint8_t)f;
    v = v ? v->next : NULL;
  }
  r->stats.throttled = throttled;
  return st;
}

/* Written only when there were several; one is the whole of the samples,
 * summarised as the stats block says. */
/* The aggregate as written (recomputing it from medians read back an ulp
 * off could change its last digits); computed when absent. */
static mb_status_t read_aggregate(const cJSON *root, mb_result_t *r) {
  static const mb__rj_field_t k_fields[] = {
      {"count", offsetof(mb_aggregate_t, count), MB__RJ_U32, 0},
      {"mean_ns", offsetof(mb_aggregate_t, mean), MB__RJ_NUM, 0},
      {"median_ns", offsetof(mb_aggregate_t, median), MB__RJ_NUM, 0},
      {"stddev_ns", offsetof(mb_aggregate_t, stddev), MB__RJ_NUM, 0},
      {"cv", offsetof(mb_aggregate_t, cv), MB__RJ_NUM, 0},
      {"min_ns", offsetof(mb_aggregate_t, min), MB__RJ_NUM, 0},
      {"max_ns", offsetof(mb_aggregate_t, max), MB__RJ_NUM, 0},
  };
  const cJSON *o;
  mb_status_t st = mb__rj_block(root, "aggregate", &o);
  if (st != MB_OK) return st;
  if (!o) return mb__result_set_aggregate(r);
  mb_aggregate_t a = MB_AGGREGATE_INIT;
  st = mb__rj_fields(o, "aggregate", &a, k_fields, MB__COUNT(k_fields));
  if (st == MB_OK) r->agg = a;
  return st;
}

static mb_status_t read_repetitions(const cJSON *root, mb_result_t *r) {
  static const mb__rj_field_t k_fields[] = {
      {"first_sample", offsetof(mb_repetition_t, first_sample), MB__RJ_U64, 0},
      {"count", offsetof(mb_repetition_t, count), MB__RJ_U64, 0},
      {"median_ns", offsetof(mb_repetition_t, median), MB__RJ_NUM, 0},
      {"mean_ns", offsetof(mb_repetition_t, mean), MB__RJ_NUM, 0},
      {"stdev_ns", offsetof(mb_repetition_t, stdev), MB__RJ_NUM, 0},
  };
  const cJSON *arr;
  size_t n;
  char path[64];
  mb_status_t st =
      mb__rj_array(root, "", "repetitions", MB__FIELD_OPT, &arr, &n);
  if (st != MB_OK) return st;
  if (!arr || !n)
    return r->num_samples
               ? mb__result_add_repetition(r, 0, r->stats.stop_reason)
               : MB_OK;
  if (!(r->reps = calloc(n, sizeof *r->reps)))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for repetitions");
  const cJSON *v = arr->child;
  for (size_t i = 0; st == MB_OK && i < n; i++, v = v->next) {
    mb_repetition_t *p = &r->reps[i];
    snprintf(path, sizeof path, "repetitions[%zu]", i);
    p->struct_size = sizeof *p;
    if (!cJSON_IsObject(v))
      st = mb__rj_bad(path, "expected an object, got %s", mb__rj_type_name(v));
    if (st == MB_OK)
      st = mb__rj_fields(v, path, p, k_fields, MB__COUNT(k_fields));
    if (st == MB_OK) st = read_stop_reason(v, path, &p->stop_reason);
    if (st == MB_OK && (p->first_sample > r->num_samples ||
                        p->count > r->num_samples - p->first_sample))
      st = mb__rj_bad(
          path, "samples %llu .. %llu are beyond samples_ns (%zu samples)",
          (unsigned long long)p->first_sample,
          (unsigned long long)(p->first_sample + p->count), r->num_samples);
    if (st == MB_OK) r->num_reps = i + 1;
  }
  return st == MB_OK ? read_aggregate(root, r) : st;
}

/* ---- notes and the plan's facts -------------------------------------------
 */

static mb_status_t read_notes(const cJSON *root, mb_result_t *r) {
  const cJSON *o, *v;
  char path[160];
  mb_status_t st = mb__rj_block(root, "kernel", &o);
  if (st != MB_OK || !o) return st;
  cJSON_ArrayForEach(v, o) {
    snprintf(path, sizeof path, "kernel.%s", v->string);
    if (cJSON_IsString(v))
      st = mb__result_add_note(r, v->string, v->valuestring, 0.0);
    else if (cJSON_IsNumber(v) || cJSON_IsNull(v))
      st = mb__result_add_note(r, v->string, NULL,
                               cJSON_IsNull(v) ? NAN : v->valuedouble);
    else
      st = mb__rj_bad(path, "expected a string or a number, got %s",
                      mb__rj_type_name(v));
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

static mb_status_t read_plan(const cJSON *root, mb_result_t *r) {
  mb__result_plan_t p = {"", "", "", "", "", NULL};
  const mb__rj_field_t k_fields[] = {
      {"name", offsetof(mb__result_plan_t, name), MB__RJ_STR, MB__FIELD_OPT},
      {"recipe", offsetof(mb__result_plan_t, recipe), MB__RJ_STR,
       MB__FIELD_OPT},
      {"model", offsetof(mb__result_plan_t, model), MB__RJ_STR, MB__FIELD_OPT},
      {"mode", offsetof(mb__result_plan_t, mode), MB__RJ_STR, MB__FIELD_OPT},
      {"shape_name", offsetof(mb__result_plan_t, shape_name), MB__RJ_STR,
       MB__FIELD_OPT},
  };
  mb_status_t st = mb__rj_fields(root, "", &p, k_fields, MB__COUNT(k_fields));
  if (st == MB_OK)
    st = mb__rj_value(root, "", "speedup_vs_baseline", MB__RJ_NUM,
                      MB__FIELD_OPT, &r->info.speedup_vs_baseline);
  if (st != MB_OK) return st;
  const cJSON *config = cJSON_GetObjectItemCaseSensitive(root, "config");
  if (config && !(p.config = cJSON_Duplicate(config, 1)))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result's config");
  return mb__result_set_plan(r, &p); /* takes p.config */
}

/* ---- a composite's extras (phases, steps, accuracy) and memory -----------
 */

static mb_status_t read_phase_name(const char *name, const char *path,
                                   mb_phase_t *out) {
  for (int p = MB_PHASE_FORWARD; p <= MB_PHASE_SETUP; p++)
    if (!strcmp(name, mb_phase_name((mb_phase_t)p))) {
      *out = (mb_phase_t)p;
      return MB_OK;
    }
  return mb__rj_bad(
      path, "unknown phase \"%s\"; valid: forward, backward, setup", name);
}

/* A step's or phase's time fields from the object at `block`. */
static mb_status_t read_part_time(const cJSON *o, const char *block,
                                  mb_step_time_t *t) {
  const mb__rj_field_t k_fields[] = {
#define ROW(key, member, kind, flags) \
  {key, offsetof(mb_step_time_t, member), MB__RJ_##kind, flags},
      MB__STEP_FIELDS(ROW)
#undef ROW
  };
  /* The label, op and impl rows are the step's; a phase has none. */
  const size_t skip = t->label ? 0 : 3;
  mb_status_t st =
      mb__rj_fields(o, block, t, k_fields + skip, MB__COUNT(k_fields) - skip);
  return st != MB_OK
             ? st
             : read_stop_reason_opt(o, block, MB__FIELD_OPT, &t->stop_reason);
}

static mb_status_t read_steps(const cJSON *root, mb_result_t *r) {
  const cJSON *arr;
  size_t n;
  char block[64];
  mb_status_t st = mb__rj_array(root, "", "steps", MB__FIELD_OPT, &arr, &n);
  for (size_t i = 0; st == MB_OK && i < n; i++) {
    const cJSON *o = cJSON_GetArrayItem(arr, (int)i);
    snprintf(block, sizeof block, "steps[%zu]", i);
    if (!cJSON_IsObject(o)) return mb__rj_bad(block, "expected an object");
    mb_step_time_t t = MB_STEP_TIME_INIT;
    t.label = ""; /* a step: read its label, op and impl */
    const char *phase = NULL;
    st = read_part_time(o, block, &t);
    if (st == MB_OK)
      st = mb__rj_value(o, block, "phase", MB__RJ_STR, 0, &phase);
    if (st == MB_OK) st = read_phase_name(phase, block, &t.phase);
    if (st == MB_OK) st = mb__result_add_step(r, &t);
  }
  return st;
}

/* phases: the medians (every version), each phase's noise and the parts
 * check (optional: added later). */
static mb_status_t read_phases(const cJSON *root, mb_result_t *r) {
  const cJSON *o, *k;
  mb_status_t st = mb__rj_block(root, "phases", &o);
  if (st != MB_OK || !o) return st;
  static const char *const k_median[] = {"forward_ns", "backward_ns"};
  for (int p = 0; p < 2 && st == MB_OK; p++) {
    mb_step_time_t t = MB_STEP_TIME_INIT;
    const char *name = mb_phase_name((mb_phase_t)p);
    char block[32];
    snprintf(block, sizeof block, "phases.%s", name);
    st = mb__rj_value(o, "phases", k_median[p], MB__RJ_NUM, 0, &t.median_ns);
    if (st == MB_OK && (k = cJSON_GetObjectItemCaseSensitive(o, name)))
      st = cJSON_IsObject(k) ? read_part_time(k, block, &t)
                             : mb__rj_bad(block, "expected an object");
    if (st == MB_OK && isfinite(t.median_ns))
      mb__result_set_phase(r, (mb_phase_t)p, &t);
  }
  if (st != MB_OK || !(k = cJSON_GetObjectItemCaseSensitive(o, "parts")))
    return st;
  if (!cJSON_IsObject(k))
    return mb__rj_bad("phases.parts", "expected an object");
  static const char *const k_of[] = {"phases", "steps"};
  const mb__rj_field_t k_fields[] = {
#define ROW(key, member, kind, flags) \
  {key, offsetof(mb_parts_check_t, member), MB__RJ_##kind, flags},
      MB__PARTS_FIELDS(ROW)
#undef ROW
  };
  mb_parts_check_t c = MB_PARTS_CHECK_INIT;
  const char *of = "";
  st = mb__rj_fields(k, "phases.parts", &c, k_fields, MB__COUNT(k_fields));
  if (st == MB_OK)
    st = mb__rj_value(k, "phases.parts", "of", MB__RJ_STR, 0, &of);
  for (size_t i = 0; st == MB_OK && i < MB__COUNT(k_of); i++)
    if (!strcmp(of, k_of[i])) {
      c.of = k_of[i];
      c.checked = 1;
      r->parts = c;
      return MB_OK;
    }
  return st != MB_OK ? st
                     : mb__rj_bad("phases.parts.of",
                                  "\"%s\"; valid: phases, steps", of);
}

static mb_status_t read_model(const cJSON *root, mb_result_t *r) {
  const cJSON *o;
  mb_status_t st = mb__rj_value(root, "", "peak_memory_bytes", MB__RJ_NUM,
                                MB__FIELD_OPT, &r->info.peak_memory_bytes);
  if (st == MB_OK) st = read_phases(root, r);
  if (st == MB_OK) st = read_steps(root, r);
  if (st == MB_OK) st = mb__rj_block(root, "accuracy", &o);
  if (st != MB_OK || !o) return st;
  mb_accuracy_t a = MB_ACCURACY_INIT;
  const mb__rj_field_t k_fields[] = {
#define ROW(key, member, kind, flags) \
  {key, offsetof(mb_accuracy_t, member), MB__RJ_##kind, flags},
      MB__ACCURACY_FIELDS(ROW)
#undef ROW
  };
  st = mb__rj_fields(o, "accuracy", &a, k_fields, MB__COUNT(k_fields));
  a.checked = 1;
  if (st == MB_OK) mb__result_set_accuracy(r, &a);
  return st;
}

/* timer, warning, status and the rest of the identity. */
mb_status_t mb__rj_status(const cJSON *root, mb_result_status_t *out) {
  const char *name = NULL;
  mb_status_t st = mb__rj_value(root, "", "status", MB__RJ_STR, 0, &name);
  for (int i = MB_RESULT_OK; st == MB_OK && i <= MB_RESULT_FAILED; i++)
    if (strcmp(name, mb_result_status_name((mb_result_status_t)i)) == 0) {
      *out = (mb_result_status_t)i;
      return MB_OK;
    }
  return st != MB_OK ? st
                     : mb__rj_bad("status",
                                  "unknown status \"%s\"; valid: ok, "
                                  "skipped, failed",
                                  name);
}

static mb_status_t read_texts(const cJSON *root, mb_result_t *r) {
  const char *timer = "", *warning = "", *reason = "";
  mb_result_status_t status = MB_RESULT_OK;
  mb_status_t st = mb__rj_status(root, &status);
  if (st == MB_OK)
    st = mb__rj_value(root, "", "reason", MB__RJ_STR, 0, &reason);
  if (st == MB_OK)
    st = mb__rj_value(root, "", "timer", MB__RJ_STR, MB__FIELD_OPT, &timer);
  if (st == MB_OK)
    st = mb__rj_value(root, "", "warning", MB__RJ_STR, MB__FIELD_OPT, &warning);
  if (st != MB_OK) return st;
  mb__result_set_status(r, status, reason);
  mb__result_set_timer(r, timer);
  if (*warning) mb__result_warn(r, warning); /* the warning was "" */
  if (strcmp(r->reason, reason) || strcmp(r->timer, timer) ||
      strcmp(r->warning, warning))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  return MB_OK;
}

mb_status_t mb__rj_measurement(const cJSON *root, mb_result_t *r) {
  mb_status_t st = MB_OK;
  /* In the order each needs: repetitions read the samples and stats. */
  mb_status_t (*const readers[])(const cJSON *, mb_result_t *) = {
      read_texts,   read_rotate, read_timing,      read_correctness,
      read_samples, read_stats,  read_repetitions, read_derived,
      read_model,   read_notes,  read_plan};
  for (size_t i = 0; st == MB_OK && i < MB__COUNT(readers); i++)
    st = readers[i](root, r);
  return st;
}
