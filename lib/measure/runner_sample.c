/* Warm-up, batch size and sampling. Each repetition takes samples until its
 * own criterion holds; every sample is kept, with the device's telemetry
 * read just before and just after it (untimed), and flagged when it is far
 * above the median of the samples before it (interference: kept, never
 * dropped). */
#include <math.h>
#include <stdio.h>

#include "measure/criterion.h"
#include "measure/runmed.h"
#include "measure/runner_internal.h"
#include "measure/stats.h"
#include "measure/timing.h"

/* Hot samples batch enough runs to last at least MB__TARGET_SAMPLE_NS, and
 * at least 1000 x the timer's overhead and resolution (under 0.1 % of a
 * sample). */
#define MB__OVERHEAD_SHARE 1e-3
/* A cold result is warned about once the timer's cost is 1 % of a sample:
 * below, it is inside any noise a cold sample has (the first GPU runs
 * warned at 0.13 % on 800 us GEMMs, where it changed nothing). */
#define MB__OVERHEAD_WARN_SHARE 1e-2
#define MB__MAX_BATCH 1000000u
/* Interference is judged against at least this many earlier samples. */
#define MB__INTERFERENCE_MIN_PRIOR 5u
/* A benchmark fails once the device's timer has invalidated this many of
 * its samples (a GPU's blocking kernel that keeps timing out): each is
 * dropped, and past a few the figures would stand on what is left. */
#define MB__MAX_DROPPED 3u

/* Rotation: each run takes the next copy (0 = the run's own operands). */
static mb_status_t rotate_run(void *kstate, const mb_kernel_call_t *call) {
  mb__run_t *r = kstate;
  (void)call;
  const uint32_t i = r->next_copy;
  r->next_copy = (i + 1) % r->num_copies;
  return mb__run_copy(r, i);
}

/* A sample whose batch would run longer than this is timed in parts of
 * about this length, their times summed, so that Ctrl-C is honoured
 * within it: a --batch of 10^8 short runs went on for six minutes after
 * it. A part's own timer overhead is under a millionth of it. */
#define MB__PART_NS 0.25e9

static mb_status_t interrupted(void) {
  return mb__fail(MB_ERR_INTERRUPTED, "interrupted");
}

/* The elapsed ns of `batch` runs timed at once, or NAN for a sample the
 * backend's timer dropped (counted; too many fail the benchmark). */
static mb_status_t time_whole(mb__run_t *r, uint32_t batch, double *ns) {
  mb_status_t st = mb__timing_batch(&r->timing, batch, ns);
  if (st != MB_OK || !isnan(*ns)) return st;
  snprintf(r->drop_reason, sizeof r->drop_reason, "%s", mb_error_last());
  if (++r->dropped >= MB__MAX_DROPPED)
    return mb__fail(MB_ERR_BACKEND,
                    "%u samples dropped by the device's timer: %s", r->dropped,
                    r->drop_reason);
  return MB_OK;
}

/* `batch` runs: at once, or in parts of r->part runs with a look at the
 * interrupt flag between them. A dropped part drops the sample. */
static mb_status_t time_runs(mb__run_t *r, uint32_t batch, double *ns) {
  if (!r->part || batch <= r->part) return time_whole(r, batch, ns);
  double sum = 0;
  for (uint32_t done = 0; done < batch;) {
    if (done && mb__interrupted(r->ctx)) return interrupted();
    const uint32_t n = batch - done < r->part ? batch - done : r->part;
    mb_status_t st = time_whole(r, n, ns);
    if (st != MB_OK || isnan(*ns)) return st;
    sum += *ns;
    done += n;
  }
  *ns = sum;
  return MB_OK;
}

/* Runs per part of a sample expected to last longer than MB__PART_NS (0:
 * none), a whole number of copy cycles under rotate, like the batch. */
static uint32_t part_for(const mb__run_t *r, uint32_t batch, double est_ns) {
  if (!(est_ns > 0) || est_ns * batch <= MB__PART_NS) return 0;
  double p = floor(MB__PART_NS / est_ns);
  if (r->spec.cache == MB_CACHE_ROTATE && r->num_copies > 1)
    p = fmax(1.0, floor(p / r->num_copies)) * r->num_copies;
  return p < 1.0 ? 1u : p >= batch ? 0u : (uint32_t)p;
}

/* A timed batch; for a collective, started at a barrier and its time the
 * maximum over the ranks (runner_lock.c). */
static mb_status_t timed(mb__run_t *r, uint32_t batch, double *ns) {
  mb_status_t st = mb__lock_barrier(r);
  if (st != MB_OK) return st;
  return mb__lock_time(r, time_runs(r, batch, ns), ns);
}

/* The warm-up's runs (warm_up). */
static mb_status_t warm_up_runs(mb__run_t *r, double start, uint32_t *runs,
                                double *best_ns) {
  /* A collective's ranks go on while any of them would. */
  while (mb__lock_any(r, *runs < r->spec.warmup_runs ||
                             mb__now_s() - start < r->spec.warmup_s)) {
    if (mb__interrupted(r->ctx)) return interrupted();
    double ns;
    mb_status_t st = timed(r, 1, &ns);
    if (st != MB_OK) return st;
    if (!isnan(ns) && ns < *best_ns) *best_ns = ns;
    (*runs)++;
    if (mb__lock_any(r, mb__now_s() - start > r->spec.timeout_s)) break;
  }
  return MB_OK;
}

/* Runs until both warm-up limits are met; returns the fastest run (ns), the
 * estimate that sizes the batch. */
static mb_status_t warm_up(mb__run_t *r, uint32_t *runs, double *best_ns) {
  double start = mb__now_s();
  *best_ns = INFINITY;
  *runs = 0;
  mb__rt_warmup_begin(r);
  mb_status_t st = warm_up_runs(r, start, runs, best_ns);
  mb__rt_warmup_end(r);
  return st;
}

/* Cold samples are single runs: a batch would only be cold for its first
 * run. Hot and rotate samples batch short kernels far above the timer's
 * resolution and overhead. */
static uint32_t batch_for(const mb__run_t *r, double est_ns) {
  if (r->spec.batch) return r->spec.batch;
  if (r->spec.cache == MB_CACHE_COLD) return 1;
  const mb_calibration_t *c = &r->dev->cal;
  double floor_ns = fmax(c->timer_overhead_ns, c->timer_resolution_ns);
  double target = fmax(MB__TARGET_SAMPLE_NS,
                       isfinite(floor_ns) ? floor_ns / MB__OVERHEAD_SHARE : 0);
  if (!(est_ns > 0) || est_ns >= target) return 1;
  double b = ceil(target / est_ns);
  return b > MB__MAX_BATCH ? MB__MAX_BATCH : (uint32_t)b;
}

/* Rotate samples go round the copies a whole number of times: a GPU
 * backend may capture a batch once as a graph and replay it for every
 * sample, and a replayed batch must still touch every copy. */
static uint32_t choose_batch(const mb__run_t *r, double est_ns) {
  const uint32_t b = batch_for(r, est_ns);
  if (r->spec.cache != MB_CACHE_ROTATE || r->num_copies < 2 || r->spec.batch)
    return b;
  const uint32_t cycles = (b + r->num_copies - 1) / r->num_copies;
  return cycles * r->num_copies;
}

static void read_telemetry(const mb__run_t *r, mb_telemetry_t *t) {
  const mb__backend_t *b = r->dev->backend;
  *t = (mb_telemetry_t)MB_TELEMETRY_INIT;
  if (MB__VT_HAS(b->vt, telemetry) &&
      b->vt->telemetry(b->state, r->dev->index, t) != MB_OK)
    *t = (mb_telemetry_t)MB_TELEMETRY_INIT;
}

/* One sample: telemetry, flush (cold), the timed batch, telemetry again. A
 * sample the device's timer dropped is not kept (*per_run NAN). */
static mb_status_t one_sample(mb__run_t *r, mb_result_t *res, uint32_t batch,
                              double *per_run, double *ns) {
  const mb__backend_t *b = r->dev->backend;
  const int has_tele = MB__VT_HAS(b->vt, telemetry);
  mb_telemetry_t before, after;
  if (has_tele) read_telemetry(r, &before);
  mb_status_t st = MB_OK;
  mb__trace_mark_t mark;
  mb__rt_sample_begin(r, res, &mark);
  if (r->spec.cache == MB_CACHE_COLD) {
    st = mb__timing_flush(r->dev, r->spec.flags & MB_BENCH_FLUSH_READ
                                      ? MB_FLUSH_READ
                                      : MB_FLUSH_WRITE);
    mark.flushed = mb__rt_now(r);
  }
  if (st == MB_OK) st = timed(r, batch, ns);
  *per_run = *ns / batch;
  if (st == MB_OK && !isnan(*ns)) st = mb__result_add_sample(res, *per_run);
  mb__rt_sample_end(r, res, &mark, st == MB_OK && !isnan(*ns));
  if (st != MB_OK || isnan(*ns) || !has_tele) return st;
  read_telemetry(r, &after);
  after.clock_before_hz = before.sm_clock_hz;
  return mb__result_add_telemetry(res, &after);
}

/* Flags the sample just added when it is MB_INTERFERENCE_FACTOR x the median
 * of the samples before it, then adds it to that median. */
static mb_status_t judge(mb_result_t *res, mb__runmed_t *med, double v) {
  if (mb__runmed_count(med) >= MB__INTERFERENCE_MIN_PRIOR &&
      v > MB_INTERFERENCE_FACTOR * mb__runmed_median(med)) {
    mb__result_flag_sample(res, res->num_samples - 1, MB_SAMPLE_INTERFERENCE);
    res->stats.interfered++;
  }
  return mb__runmed_push(med, v);
}

static mb_status_t repetition(mb__run_t *r, mb_result_t *res, uint32_t batch,
                              mb__runmed_t *med) {
  mb__criterion_t crit;
  mb_status_t st = mb__criterion_init(&crit, r->spec.criterion,
                                      r->spec.min_samples, r->spec.samples,
                                      r->spec.min_time_s, r->spec.max_noise);
  if (st != MB_OK) return st;
  const size_t first = res->num_samples;
  const double start = mb__now_s();
  const char *reason = NULL;
  while (st == MB_OK) {
    if (mb__interrupted(r->ctx)) {
      st = interrupted();
      break;
    }
    double per_run, ns;
    if ((st = one_sample(r, res, batch, &per_run, &ns)) != MB_OK) break;
    if (isnan(per_run)) continue; /* dropped: the criterion never saw it */
    if ((st = judge(res, med, per_run)) != MB_OK ||
        (st = mb__criterion_add(&crit, per_run, ns)) != MB_OK)
      break;
    res->stats.measured_ns += ns;
    /* Every rank of a collective holds the same samples, so the criterion
     * agrees by itself; the clock need not, so the timeout is agreed. */
    if (mb__criterion_done(&crit, &reason)) break;
    /* `fixed` means exactly N samples (num_runs); the others time out. */
    if (mb__lock_any(r, r->spec.criterion != MB_CRITERION_FIXED &&
                            mb__now_s() - start > r->spec.timeout_s)) {
      reason = "timeout";
      break;
    }
  }
  mb__criterion_fini(&crit);
  if (st == MB_OK) st = mb__result_add_repetition(res, first, reason);
  res->stats.stop_reason = reason ? reason : "";
  return st;
}

/* What makes a cold result's figures doubtful: single-run samples that the
 * timer's own cost distorts, or a flush that was found not to evict. */
static void warn_cold(const mb__run_t *r, mb_result_t *res, uint32_t batch) {
  const mb_calibration_t *c = &r->dev->cal;
  double sample_ns = res->stats.median * batch;
  if (sample_ns > 0 &&
      c->timer_overhead_ns > MB__OVERHEAD_WARN_SHARE * sample_ns) {
    char w[200];
    /* Phrased for any caller: the cache policy by name, not a flag. */
    snprintf(w, sizeof w,
             "timer overhead %.3g ns is %.2g%% of a sample (cold samples are "
             "single runs; the hot or rotate cache policy batches short "
             "kernels)",
             c->timer_overhead_ns, 100.0 * c->timer_overhead_ns / sample_ns);
    mb__result_warn(res, w);
  }
  if (r->dev->cal_flush_done && c->flush_checked && !c->flush_pass)
    mb__result_warn(res,
                    "cold: the flush check found a flushed re-read no "
                    "slower than a hot one (see the device's calibration)");
}

/* Dropped samples leave a warning with the timer's reason. */
static void warn_dropped(const mb__run_t *r, mb_result_t *res) {
  if (!r->dropped) return;
  char w[400];
  snprintf(w, sizeof w, "%u sample%s dropped by the device's timer: %s",
           r->dropped, r->dropped == 1 ? "" : "s", r->drop_reason);
  mb__result_warn(res, w);
}

static mb_status_t sample(mb__run_t *r, mb_result_t *res) {
  uint32_t warm_runs;
  double est_ns;
  mb_status_t st = warm_up(r, &warm_runs, &est_ns);
  if (st != MB_OK) return st;
  const uint32_t batch = mb__lock_batch(r, choose_batch(r, est_ns));
  r->part = part_for(r, batch, est_ns);
  if (r->part) {
    char text[200];
    snprintf(text, sizeof text,
             "each sample's %u runs are timed in parts of at most %u runs "
             "(about %.2g s each), their times summed",
             batch, r->part, MB__PART_NS / 1e9);
    st = mb__result_add_note(res, "sample_parts", text, (double)r->part);
  }
  const uint32_t reps = r->spec.repetitions ? r->spec.repetitions : 1;
  mb__runmed_t med = MB__RUNMED_INIT;
  const double start = mb__now_s();
  for (uint32_t i = 0; i < reps && st == MB_OK; i++)
    st = repetition(r, res, batch, &med);
  mb__runmed_fini(&med);
  /* Stopped by Ctrl-C after a repetition finished: what finished stands
   * (the unfinished repetition's samples are kept too, as every sample
   * is); before that, the benchmark did not finish. */
  if (st == MB_ERR_INTERRUPTED && res->num_reps > 0) {
    char w[200];
    snprintf(w, sizeof w,
             "interrupted: %zu of %u repetitions finished; the aggregate is "
             "theirs",
             res->num_reps, reps);
    mb__result_warn(res, w);
    res->stats.stop_reason = "interrupted";
    mb_error_clear();
    st = MB_OK;
  }
  res->stats.wall_s = mb__now_s() - start;
  res->stats.batch = batch;
  res->stats.warmup_runs = warm_runs;
  res->stats.repetitions = (uint32_t)res->num_reps;
  return st;
}

mb_status_t mb__run_measure_with(mb__run_t *r, mb_kernel_run_fn run,
                                 void *kstate, mb_result_t *res) {
  mb_status_t st = mb__device_timer(r->dev);
  if (st != MB_OK) return st;
  r->dropped = 0;
  res->stats.timer_resolution_ns = r->dev->cal.timer_resolution_ns;
  res->stats.timer_overhead_ns = r->dev->cal.timer_overhead_ns;
  st = mb__timing_begin(&r->timing, r->dev, run, kstate, &r->call);
  if (st == MB_OK) st = sample(r, res);
  mb__rt_sampling(r, res);
  if (st == MB_OK) st = mb__timing_notes(&r->timing, res);
  mb__timing_end(&r->timing);
  warn_dropped(r, res);
  if (st == MB_OK)
    st = mb__stats_compute(res->samples, res->num_samples, &res->stats);
  if (st == MB_OK) st = mb__result_set_aggregate(res);
  if (st == MB_OK && r->spec.cache == MB_CACHE_COLD)
    warn_cold(r, res, res->stats.batch);
  return st;
}

mb_status_t mb__run_measure(mb__run_t *r, mb_result_t *res) {
  return r->num_copies > 1 ? mb__run_measure_with(r, rotate_run, r, res)
                           : mb__run_measure_with(r, mb__run_kernel_fn(r),
                                                  mb__run_kernel_state(r), res);
}
