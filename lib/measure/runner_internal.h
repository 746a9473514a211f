/* Internal: one benchmark run in progress, shared by the runner's files:
 * runner.c (set-up, the check, the public entries), runner_rotate.c (cache
 * rotation copies) and runner_sample.c (warm-up, batch, sampling). */
#ifndef MB_LIB_RUNNER_INTERNAL_H
#define MB_LIB_RUNNER_INTERNAL_H

#include "models/composite.h"
#include "ops/kernel.h"
#include "results/result.h"
#include "measure/timing.h"

#define MB__MAX_OPERANDS 16 /* a transformer block has 10 */

/* Copies 1..num_copies-1 of every operand for MB_CACHE_ROTATE (copy 0 is
 * the run's own), each prepared on its own. */
typedef struct mb__copy {
  mb_tensor_t *tensors[MB__MAX_OPERANDS];
  void *ptrs[MB__MAX_OPERANDS];
  mb_kernel_call_t call;
  mb_kernel_args_t args;
  void *kstate;
  int prepared;
  int ran; /* a timed run used it: its output is checked after timing */
} mb__copy_t;

typedef struct mb__run {
  mb_context_t *ctx;
  const mb_op_t *op;
  mb_op_params_t params;
  mb_bench_spec_t spec;
  uint64_t sample_seed; /* the sampled checks' (check_seed) */
  mb_device_t *dev;
  mb__kernel_t kernel;
  uint32_t num_operands;
  void *host[MB__MAX_OPERANDS];
  mb_tensor_t *tensors[MB__MAX_OPERANDS];
  void *ptrs[MB__MAX_OPERANDS];
  mb_kernel_call_t call;
  mb_kernel_args_t args; /* for user kernels */
  void *kstate;
  int prepared;
  /* The op's reference for the checks (op->ref_prepare of host), made at
   * the first check and kept for those after timing; NULL before. */
  void *ref;
  mb__copy_t *copies; /* cycled run by run */
  uint32_t num_copies, next_copy;
  mb__timing_t timing; /* while sampling */
  uint32_t dropped;    /* samples the device's timer invalidated */
  char drop_reason[256];
  uint32_t part; /* runs per timed part of a long sample; 0: whole */
  /* A collective's communicator (runner_lock.c); NULL for other ops and
   * without one. split: the ranks it runs over when fewer than the job's
   * (0: all), sub the communicator of those, world the context's own
   * while sub stands in for it. */
  mb_comm_t *comm;
  int split;
  mb_comm_t *sub, *world;
  /* runner_trace.c: the device's profiler ranges (ranges: its backend
   * has them; id: the result's, their names' stem), whether a
   * composite's part is being measured (its samples are no benchmark's
   * samples: no sample events, no ranges), the warm-up's span (us). */
  int ranges, in_part;
  char id[512];
  double warm_t0, warm_t1;
} mb__run_t;

/* A user kernel behind the backend's kernel-call interface. */
static inline mb_status_t mb__user_kernel_run(void *kstate,
                                              const mb_kernel_call_t *call) {
  const mb__run_t *r = kstate;
  (void)call;
  return r->kernel.uk->desc.run(r->kernel.uk->desc.user, &r->args);
}

static inline mb_kernel_run_fn mb__run_kernel_fn(const mb__run_t *r) {
  return r->kernel.bk          ? r->kernel.bk->run
         : r->kernel.composite ? mb__composite_run
                               : mb__user_kernel_run;
}

static inline void *mb__run_kernel_state(mb__run_t *r) {
  return r->kernel.uk ? (void *)r : r->kstate;
}

/* The chosen kernel's life cycle on one set of operands (the run's own or
 * a rotate copy's): prepare, one run, release — whichever kind it is. */
mb_status_t mb__run_prepare(mb__run_t *r, const mb_kernel_call_t *call,
                            const mb_kernel_args_t *args, void **kstate);
mb_status_t mb__run_once(mb__run_t *r, void *kstate,
                         const mb_kernel_call_t *call,
                         const mb_kernel_args_t *args);
void mb__run_release(mb__run_t *r, void *kstate, const mb_kernel_args_t *args);

/* runner_rotate.c */
/* Copies so that the bytes touched between two uses of one copy exceed
 * MB__ROTATE_CACHE_FACTOR x the cache: (N - 1) x per_copy > factor x cache,
 * i.e. N = floor(factor x cache / per_copy) + 2, capped by
 * MB__ROTATE_MAX_BYTES of operands and MB__ROTATE_MAX_COPIES; >= 2. Why 3x:
 * last-level caches are not LRU (adaptive insertion, non-inclusive victim
 * caches), so a footprint of 1.0-1.5x the L3 still hit partly on Zen 4
 * (docs/results/harness.md); from ~3x on rotate read like cold. */
#define MB__ROTATE_CACHE_FACTOR 3.0
#define MB__ROTATE_MAX_BYTES (4.0 * 1024 * 1024 * 1024)
#define MB__ROTATE_MAX_COPIES 4096u
uint32_t mb__rotate_copies(double cache, double per_copy);
mb_status_t mb__run_setup_rotation(mb__run_t *r, mb_result_t *res);
/* One run on operand set i: 0 the run's own, i > 0 rotate copy i. */
mb_status_t mb__run_copy(mb__run_t *r, uint32_t i);
/* The kernel's collect hook on operand set i, before its outputs are
 * checked (mb_backend_kernel_t.collect: a d2h copy's host buffer into
 * the output); MB_OK when it has none. */
mb_status_t mb__run_collect(mb__run_t *r, uint32_t i);
void mb__run_teardown_copies(mb__run_t *r);

/* runner_sample.c: warm-up, batch size, every repetition's samples and
 * the statistics into res (derived figures are the caller's), of the
 * run's kernel (cycling the rotate copies). MB_ERR_INTERRUPTED when the
 * context's interrupt flag stopped it. */
mb_status_t mb__run_measure(mb__run_t *r, mb_result_t *res);
/* The same for another run function on the run's device and spec (a part
 * of a composite): every rule the whole was measured by. */
mb_status_t mb__run_measure_with(mb__run_t *r, mb_kernel_run_fn run,
                                 void *kstate, mb_result_t *res);

/* runner_check.c: the check of the first run (then the outputs are put
 * back as they started), the check after timing, and what a wrong result
 * does (strict: it fails, returning 1; else a warning), `which` naming
 * the check ("first run", "after timing", "copy 2"). */
mb_status_t mb__run_check_first(mb__run_t *r, mb_result_t *res);
mb_status_t mb__run_check_after(mb__run_t *r, mb_result_t *res);
int mb__run_report_wrong(mb_result_t *res, const char *which,
                         const mb_correctness_t *c);

/* runner_lock.c: a collective's ranks in lockstep (no-ops without a
 * communicator or for other ops).
 * setup: r->comm, and params.ranks (as given, or all the job's) and rank
 *   for a collective, resolved again with them (its operands depend on
 *   them); an error there (N not a multiple of the ranks, a root or a rank
 *   count this job lacks) is this job's, not the input's: the benchmark is
 *   skipped with it.
 * join: a collective over fewer ranks than the job's: the job's ranks
 *   split (collective over them all), the first `ranks` go on over their
 *   part, in the context too; the others' results are skipped, saying so.
 * leave: the context's communicator back, the part freed.
 * agree: every rank learns whether any failed `step` (unsupported or an
 *   error) and takes the worst status with the lowest such rank's reason.
 * barrier: before each timed batch.
 * time: *ns becomes the maximum over the ranks (st: this rank's status of
 *   the timing, joined either way so that no rank waits alone).
 * any: whether any rank says `local` (stop sampling, say).
 * batch: the largest batch any rank chose.
 * correctness: the worst check over the ranks.
 * notes: a collective's busbw, ranks and transport on its result. */
mb_status_t mb__lock_setup(mb__run_t *r);
void mb__lock_join(mb__run_t *r, mb_result_t *res);
void mb__lock_leave(mb__run_t *r);
mb_status_t mb__lock_agree(mb__run_t *r, mb_status_t st, const char *step);
mb_status_t mb__lock_barrier(mb__run_t *r);
mb_status_t mb__lock_time(mb__run_t *r, mb_status_t st, double *ns);
int mb__lock_any(mb__run_t *r, int local);
uint32_t mb__lock_batch(mb__run_t *r, uint32_t batch);
void mb__lock_correctness(mb__run_t *r, mb_correctness_t *c);
mb_status_t mb__lock_notes(const mb__run_t *r, mb_result_t *res);

/* runner_parts.c: a composite's steps and phases, each alone, measured as
 * the whole was, and whether they add up to it. */
mb_status_t mb__run_time_parts(mb__run_t *r, mb_result_t *res);

/* runner_trace.c: the context's trace (trace.h) and the device's ranges.
 * begin / end: the benchmark's range (after its kernel is chosen).
 * warmup_begin / _end, sample_begin / _end (kept: the sample was added
 * to res, not dropped): their ranges and times; outside the timed batch.
 * sampling: the warm-up and sample events, once sampling ended.
 * check: a check that started at t0 (us), res->corr its figures.
 * part: a composite's step (step >= 0) or phase (step < 0), measured
 * alone from t0. benchmark: the benchmark's event from t0, then a flush.
 * now: the trace's clock (us), 0 without a trace. */
#include "measure/trace.h"
double mb__rt_now(const mb__run_t *r);
void mb__rt_begin(mb__run_t *r, const mb_result_t *res);
void mb__rt_end(mb__run_t *r);
void mb__rt_warmup_begin(mb__run_t *r);
void mb__rt_warmup_end(mb__run_t *r);
void mb__rt_sample_begin(mb__run_t *r, const mb_result_t *res,
                         mb__trace_mark_t *m);
void mb__rt_sample_end(mb__run_t *r, const mb_result_t *res,
                       mb__trace_mark_t *m, int kept);
void mb__rt_sampling(mb__run_t *r, const mb_result_t *res);
void mb__rt_check(mb__run_t *r, const mb_result_t *res, const char *which,
                  double t0);
void mb__rt_part(mb__run_t *r, int step, mb_phase_t phase,
                 const mb_step_time_t *s, double t0);
void mb__rt_benchmark(mb_context_t *ctx, const mb_result_t *res, double t0);

#endif
