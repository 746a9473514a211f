/* What a benchmark tells the context's trace (trace.h) and the device's
 * profiler ranges: the benchmark, its checks, warm-up and samples, a
 * composite's parts. Nothing here runs inside a timed batch: sampling
 * reads the clock around each batch (a mark), and the events are made
 * from the marks once sampling ends. Without a trace and without ranges
 * each hook is a test of two fields. */
#include <math.h>
#include <stdio.h>

#include "measure/runner_internal.h"
#include "measure/trace.h"

double mb__rt_now(const mb__run_t *r) {
  return r->ctx->trace ? mb__trace_now_us() : 0.0;
}

void mb__rt_begin(mb__run_t *r, const mb_result_t *res) {
  r->ranges = mb__device_has_ranges(r->dev);
  if (!r->ranges) return;
  mb__result_id(res, r->id, sizeof r->id);
  mb__device_range_push(r->dev, r->id);
}

void mb__rt_end(mb__run_t *r) {
  if (r->ranges) mb__device_range_pop(r->dev);
  r->ranges = 0;
}

/* The range of one sample or of the warm-up: the name is made only for a
 * backend that takes it, and outside the timed batch. */
static void range_push(mb__run_t *r, long sample) {
  if (!r->ranges || r->in_part) return;
  char name[sizeof r->id + 32];
  if (sample < 0)
    snprintf(name, sizeof name, "%s warm-up", r->id);
  else
    snprintf(name, sizeof name, "%s sample %ld", r->id, sample);
  mb__device_range_push(r->dev, name);
}

static void range_pop(mb__run_t *r) {
  if (r->ranges && !r->in_part) mb__device_range_pop(r->dev);
}

void mb__rt_warmup_begin(mb__run_t *r) {
  range_push(r, -1);
  r->warm_t0 = mb__rt_now(r);
}

void mb__rt_warmup_end(mb__run_t *r) {
  r->warm_t1 = mb__rt_now(r);
  range_pop(r);
}

void mb__rt_sample_begin(mb__run_t *r, const mb_result_t *res,
                         mb__trace_mark_t *m) {
  range_push(r, (long)res->num_samples);
  m->t0 = m->flushed = mb__rt_now(r);
}

void mb__rt_sample_end(mb__run_t *r, const mb_result_t *res,
                       mb__trace_mark_t *m, int kept) {
  m->t1 = mb__rt_now(r);
  range_pop(r);
  if (!r->ctx->trace || r->in_part) return;
  m->index = kept ? (long)res->num_samples - 1 : -1;
  mb__trace_mark(r->ctx->trace, m);
}

static void add_flags(cJSON *args, uint8_t flags) {
  cJSON *list = cJSON_AddArrayToObject(args, "flags");
  if (flags & MB_SAMPLE_INTERFERENCE)
    cJSON_AddItemToArray(list, cJSON_CreateString("interfered"));
}

/* One sample's slice, its flush (cold) nested in it. */
static void emit_sample(mb__run_t *r, const mb_result_t *res,
                        const mb__trace_mark_t *m) {
  char name[48];
  cJSON *args;
  if (m->index >= 0)
    snprintf(name, sizeof name, "sample %ld", m->index);
  else
    snprintf(name, sizeof name, "dropped sample");
  cJSON *ev = mb__trace_slice(name, m->t0, m->t1, &args);
  if (!ev) return;
  cJSON_AddNumberToObject(args, "batch", res->stats.batch);
  if (m->index >= 0 && (size_t)m->index < res->num_samples) {
    cJSON_AddNumberToObject(args, "ns_per_run", res->samples[m->index]);
    add_flags(args, res->flags ? res->flags[m->index] : 0);
  } else {
    cJSON_AddStringToObject(args, "dropped", r->drop_reason);
  }
  mb__trace_emit(r->ctx, ev);
  if (m->flushed > m->t0) {
    ev = mb__trace_slice("flush", m->t0, m->flushed, &args);
    if (!ev) return;
    cJSON_AddStringToObject(
        args, "how",
        mb_flush_name(r->spec.flags & MB_BENCH_FLUSH_READ ? MB_FLUSH_READ
                                                          : MB_FLUSH_WRITE));
    mb__trace_emit(r->ctx, ev);
  }
}

void mb__rt_sampling(mb__run_t *r, const mb_result_t *res) {
  mb__trace_t *t = r->ctx->trace;
  if (!t || r->in_part) return;
  cJSON *args;
  /* No warm-up ran when the timing could not begin: no slice (its times
   * would be 0, a slice at the clock's origin). Used once. */
  cJSON *ev = r->warm_t1 > 0
                  ? mb__trace_slice("warm-up", r->warm_t0, r->warm_t1, &args)
                  : NULL;
  r->warm_t0 = r->warm_t1 = 0;
  if (ev) {
    cJSON_AddNumberToObject(args, "runs", res->stats.warmup_runs);
    mb__trace_emit(r->ctx, ev);
  }
  for (size_t i = 0; i < t->num_marks; i++) emit_sample(r, res, &t->marks[i]);
  t->num_marks = 0;
}

void mb__rt_check(mb__run_t *r, const mb_result_t *res, const char *which,
                  double t0) {
  if (!r->ctx->trace) return;
  const mb_correctness_t *c = &res->corr;
  cJSON *args;
  cJSON *ev = mb__trace_slice("check", t0, mb__trace_now_us(), &args);
  if (!ev) return;
  cJSON_AddStringToObject(args, "which", which);
  cJSON_AddBoolToObject(args, "checked", c->checked);
  cJSON_AddBoolToObject(args, "pass", c->pass);
  cJSON_AddNumberToObject(args, "max_abs_err", c->max_abs_err);
  cJSON_AddNumberToObject(args, "max_rel_err", c->max_rel_err);
  cJSON_AddNumberToObject(args, "max_err_ratio", c->max_err_ratio);
  /* inf (exact) has no JSON number: the format's readers get a string */
  if (isfinite(c->sqnr_db))
    cJSON_AddNumberToObject(args, "sqnr_db", c->sqnr_db);
  else
    cJSON_AddStringToObject(args, "sqnr_db", c->sqnr_db > 0 ? "inf" : "nan");
  cJSON_AddNumberToObject(args, "tolerance", c->tolerance);
  cJSON_AddNumberToObject(args, "elements_checked",
                          (double)c->elements_checked);
  mb__trace_emit(r->ctx, ev);
}

void mb__rt_part(mb__run_t *r, int step, mb_phase_t ph, const mb_step_time_t *s,
                 double t0) {
  if (!r->ctx->trace) return;
  const char *phase = mb_phase_name(ph);
  char name[160];
  if (step >= 0)
    snprintf(name, sizeof name, "step %s", s->label ? s->label : "");
  else
    snprintf(name, sizeof name, "phase %s", phase);
  cJSON *args;
  cJSON *ev = mb__trace_slice(name, t0, mb__trace_now_us(), &args);
  if (!ev) return;
  if (step >= 0) {
    cJSON_AddNumberToObject(args, "step", step);
    cJSON_AddStringToObject(args, "label", s->label ? s->label : "");
    cJSON_AddStringToObject(args, "op", s->op ? s->op : "");
    cJSON_AddStringToObject(args, "impl", s->impl ? s->impl : "");
  }
  cJSON_AddStringToObject(args, "phase", phase);
  cJSON_AddNumberToObject(args, "median_ns", s->median_ns);
  cJSON_AddNumberToObject(args, "samples", (double)s->samples);
  cJSON_AddNumberToObject(args, "rel_stdev", s->rel_stdev);
  cJSON_AddStringToObject(args, "stop_reason",
                          s->stop_reason ? s->stop_reason : "");
  mb__trace_emit(r->ctx, ev);
}

/* The benchmark's slice, named by its result id, with what a reader looks
 * for first as args; then the file is flushed (a crash later keeps it). */
void mb__rt_benchmark(mb_context_t *ctx, const mb_result_t *res, double t0) {
  if (!ctx->trace || !res) return;
  char id[512], shape[128];
  mb__result_id(res, id, sizeof id);
  mb__result_shape(res, shape, sizeof shape);
  cJSON *args;
  cJSON *ev = mb__trace_slice(id, t0, mb__trace_now_us(), &args);
  if (!ev) return;
  const mb_op_params_t *p = &res->info.params;
  char dtypes[64];
  snprintf(dtypes, sizeof dtypes, "%s.%s.%s", mb_dtype_name(p->dtype),
           mb_dtype_name(p->dtype_b), mb_dtype_name(p->dtype_out));
  const struct {
    const char *key, *value;
  } text[] = {
      {"op", res->op},
      {"shape", shape},
      {"dtypes", dtypes},
      {"backend", res->backend},
      {"device", res->device},
      {"impl", res->impl},
      {"cache", mb_cache_policy_name(res->info.cache)},
      {"status", mb_result_status_name(res->info.status)},
      {"reason", res->reason},
      {"stop_reason", res->stats.stop_reason},
  };
  for (size_t i = 0; i < sizeof text / sizeof *text; i++)
    cJSON_AddStringToObject(args, text[i].key,
                            text[i].value ? text[i].value : "");
  cJSON_AddNumberToObject(args, "device_index", res->info.device_index);
  if (res->num_samples) {
    cJSON_AddNumberToObject(args, "median_ns", res->stats.median);
    cJSON_AddNumberToObject(args, "batch", res->stats.batch);
  }
  cJSON_AddNumberToObject(args, "samples", (double)res->num_samples);
  if (res->corr.checked) cJSON_AddBoolToObject(args, "pass", res->corr.pass);
  mb__trace_emit(ctx, ev);
  mb__trace_flush(ctx);
}
