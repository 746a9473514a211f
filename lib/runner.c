/* One benchmark: set up seeded inputs, run once and check against the
 * reference, warm up, sample until the criterion holds, summarise.
 * Whether it ran (status) is kept apart from what it measured. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "criterion.h"
#include "kernel.h"
#include "result.h"
#include "rng.h"
#include "stats.h"
#include "verify.h"

/* Hot samples batch enough runs to last this long: ~10^4 x the cost of
 * reading CLOCK_MONOTONIC (~20 ns), so timer overhead stays under 0.01 %. */
#define MB__TARGET_SAMPLE_NS 2e5
#define MB__MAX_BATCH 1000000u
#define MB__MAX_OPERANDS 8

typedef struct run {
  mb_context_t *ctx;
  const mb_op_t *op;
  mb_op_params_t params;
  mb_bench_spec_t spec;
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
  /* cache rotation: copies 1..num_copies-1 of every operand (copy 0 is the
   * fields above), each prepared on its own, cycled run by run */
  struct copy *copies;
  uint32_t num_copies, next_copy;
} run_t;

typedef struct copy {
  mb_tensor_t *tensors[MB__MAX_OPERANDS];
  void *ptrs[MB__MAX_OPERANDS];
  mb_kernel_call_t call;
  mb_kernel_args_t args;
  void *kstate;
  int prepared;
} copy_t;

/* A user kernel behind the backend's kernel-call interface. */
static mb_status_t user_kernel_run(void *kstate, const mb_kernel_call_t *call) {
  const run_t *r = kstate;
  (void)call;
  return r->kernel.uk->desc.run(r->kernel.uk->desc.user, &r->args);
}

static mb_kernel_run_fn kernel_fn(const run_t *r) {
  return r->kernel.bk ? r->kernel.bk->run : user_kernel_run;
}

static void *kernel_state(run_t *r) {
  return r->kernel.bk ? r->kstate : (void *)r;
}

/* Rotation: each run takes the next copy (0 = the run_t's own operands). */
static mb_status_t rotate_run(void *kstate, const mb_kernel_call_t *call) {
  run_t *r = kstate;
  (void)call;
  const uint32_t i = r->next_copy;
  r->next_copy = (i + 1) % r->num_copies;
  if (i == 0) return kernel_fn(r)(kernel_state(r), &r->call);
  const copy_t *c = &r->copies[i - 1];
  return r->kernel.bk
             ? r->kernel.bk->run(c->kstate, &c->call)
             : r->kernel.uk->desc.run(r->kernel.uk->desc.user, &c->args);
}

static mb_status_t time_runs(run_t *r, uint32_t batch, double *ns) {
  const mb__backend_t *b = r->dev->backend;
  mb_error_clear();
  if (r->num_copies > 1)
    return b->vt->time_batch(b->state, r->dev->index, rotate_run, r, &r->call,
                             batch, ns);
  return b->vt->time_batch(b->state, r->dev->index, kernel_fn(r),
                           kernel_state(r), &r->call, batch, ns);
}

/* ---- set-up and tear-down ------------------------------------------------ */

/* Integers fill their range; floats normal(0, 1); the op may choose
 * otherwise (positive scales, norm weights around 1). */
static void default_fill(mb_dtype_t dt, mb_fill_t *fill) {
  if (!mb_dtype_is_float(dt)) {
    double m = dt == MB_DTYPE_I32 ? 1e6 : mb_dtype_max(dt);
    fill->kind = MB_FILL_UNIFORM;
    fill->a = -m - 1.0;
    fill->b = m + 1.0;
  }
}

/* Inputs get seeded values (same bytes on every backend); outputs that the
 * kernel does not read get NaN (0 for integers), so an element the kernel
 * never writes fails the check. Then the op may derive inputs from others
 * (quantized operands from a normal matrix) before anything is copied. */
static mb_status_t setup_operands(run_t *r) {
  const mb_op_t *op = r->op;
  r->num_operands = op->num_inputs + op->num_outputs;
  for (uint32_t role = 0; role < r->num_operands; role++) {
    mb_dtype_t dt;
    uint32_t nd;
    int64_t shape[MB_MAX_DIMS];
    op->operand(&r->params, role, &dt, &nd, shape);
    mb_status_t st = mb_tensor_create(r->dev, dt, nd, shape, &r->tensors[role]);
    if (st != MB_OK) return st;
    size_t bytes = mb_tensor_nbytes(r->tensors[role]);
    r->host[role] = calloc(1, bytes ? bytes : 1);
    if (!r->host[role])
      return mb__fail(MB_ERR_NO_MEMORY,
                      "out of host memory: %zu bytes for operand %u", bytes,
                      role);
    mb_fill_t fill = MB_FILL_INIT;
    default_fill(dt, &fill);
    if (op->fill) op->fill(&r->params, role, &fill);
    fill.seed = mb__rng_u64(r->spec.seed, role);
    int is_output = role >= op->num_inputs;
    if (is_output &&
        !(role == op->num_inputs && op->reads_output(&r->params))) {
      fill.kind = MB_FILL_CONSTANT;
      fill.a = NAN;
    }
    st = mb_fill_host(r->host[role], dt, mb_tensor_numel(r->tensors[role]),
                      &fill);
    if (st != MB_OK) return st;
    r->ptrs[role] = mb_tensor_data(r->tensors[role]);
  }
  if (op->post_fill) {
    mb_status_t st =
        op->post_fill(&r->params, r->host, mb__rng_u64(r->spec.seed, 1000));
    if (st != MB_OK) return st;
  }
  for (uint32_t role = 0; role < r->num_operands; role++) {
    mb_status_t st = mb_tensor_copy_from_host(
        r->tensors[role], r->host[role], mb_tensor_nbytes(r->tensors[role]));
    if (st != MB_OK) return st;
  }
  r->call = (mb_kernel_call_t){
      sizeof r->call,           &r->params,      r->ptrs,      op->num_inputs,
      r->ptrs + op->num_inputs, op->num_outputs, r->dev->index};
  r->args = (mb_kernel_args_t){sizeof r->args, op,
                               &r->params,     r->tensors,
                               op->num_inputs, r->tensors + op->num_inputs,
                               op->num_outputs};
  return MB_OK;
}

static mb_status_t prepare_kernel(run_t *r) {
  mb_status_t st = MB_OK;
  mb_error_clear();
  if (r->kernel.bk && r->kernel.bk->prepare)
    st = r->kernel.bk->prepare(r->dev->backend->state, &r->call, &r->kstate);
  else if (r->kernel.uk && r->kernel.uk->desc.setup)
    st = r->kernel.uk->desc.setup(r->kernel.uk->desc.user, &r->args);
  r->prepared = st == MB_OK;
  return st;
}

static void teardown_copies(run_t *r) {
  for (uint32_t i = 1; i < r->num_copies; i++) {
    copy_t *c = &r->copies[i - 1];
    if (c->prepared) {
      if (r->kernel.bk && r->kernel.bk->release)
        r->kernel.bk->release(c->kstate);
      else if (r->kernel.uk && r->kernel.uk->desc.teardown)
        r->kernel.uk->desc.teardown(r->kernel.uk->desc.user, &c->args);
    }
    for (uint32_t k = 0; k < r->num_operands; k++)
      mb_tensor_destroy(c->tensors[k]);
  }
  free(r->copies);
}

static void teardown(run_t *r) {
  teardown_copies(r);
  if (r->prepared) {
    if (r->kernel.bk && r->kernel.bk->release)
      r->kernel.bk->release(r->kstate);
    else if (r->kernel.uk && r->kernel.uk->desc.teardown)
      r->kernel.uk->desc.teardown(r->kernel.uk->desc.user, &r->args);
  }
  for (uint32_t i = 0; i < r->num_operands; i++) {
    mb_tensor_destroy(r->tensors[i]);
    free(r->host[i]);
  }
}

/* ---- cache rotation ------------------------------------------------------ */

/* Bytes of one copy of every operand. */
static double operand_bytes(const run_t *r) {
  double b = 0;
  for (uint32_t i = 0; i < r->num_operands; i++)
    b += (double)mb_tensor_nbytes(r->tensors[i]);
  return b;
}

/* Rotation never takes more than this much extra device memory. */
#define MB__ROTATE_MAX_BYTES (4.0 * 1024 * 1024 * 1024)
#define MB__ROTATE_MAX_COPIES 4096u

/* Between two uses of one copy the other N-1 copies are touched, so N - 1
 * copies must exceed the last-level cache: N = floor(cache / copy) + 2. */
static uint32_t rotate_copies(double cache, double per_copy) {
  if (!(per_copy > 0)) return 1;
  double n = floor(cache / per_copy) + 2;
  double cap = floor(MB__ROTATE_MAX_BYTES / per_copy);
  if (n > cap) n = cap;
  if (n > MB__ROTATE_MAX_COPIES) n = MB__ROTATE_MAX_COPIES;
  return n < 2 ? 2 : (uint32_t)n;
}

static mb_status_t make_copy(run_t *r, copy_t *c) {
  const mb_op_t *op = r->op;
  for (uint32_t k = 0; k < r->num_operands; k++) {
    const mb_tensor_t *t = r->tensors[k];
    mb_status_t st =
        mb_tensor_create(r->dev, mb_tensor_dtype(t), mb_tensor_ndim(t),
                         mb_tensor_shape(t), &c->tensors[k]);
    if (st == MB_OK)
      st = mb_tensor_copy_from_host(c->tensors[k], r->host[k],
                                    mb_tensor_nbytes(t));
    if (st != MB_OK) return st;
    c->ptrs[k] = mb_tensor_data(c->tensors[k]);
  }
  c->call = r->call;
  c->call.in = c->ptrs;
  c->call.out = c->ptrs + op->num_inputs;
  c->args = r->args;
  c->args.inputs = c->tensors;
  c->args.outputs = c->tensors + op->num_inputs;
  mb_status_t st = MB_OK;
  mb_error_clear();
  if (r->kernel.bk && r->kernel.bk->prepare)
    st = r->kernel.bk->prepare(r->dev->backend->state, &c->call, &c->kstate);
  else if (r->kernel.uk && r->kernel.uk->desc.setup)
    st = r->kernel.uk->desc.setup(r->kernel.uk->desc.user, &c->args);
  c->prepared = st == MB_OK;
  return st;
}

/* Makes the copies for MB_CACHE_ROTATE and records the footprint; warns
 * when the cache size is unknown or memory caps the copies below it. */
static mb_status_t setup_rotation(run_t *r, mb_result_t *res) {
  const double cache = (double)r->dev->info.cache_bytes[2];
  const double per_copy = operand_bytes(r);
  uint32_t n = rotate_copies(cache, per_copy);
  if (!(cache > 0))
    mb__result_warn(res,
                    "rotate: the device's last-level cache size is "
                    "unknown, so the footprint cannot be checked");
  if (!(r->copies = calloc(n - 1, sizeof *r->copies)))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for %u operand copies", n);
  r->num_copies = 1;
  for (uint32_t i = 1; i < n; i++) {
    mb_status_t st = make_copy(r, &r->copies[i - 1]);
    r->num_copies = i + 1;
    if (st != MB_OK) return st;
  }
  res->info.rotate_copies = n;
  res->info.footprint_bytes = n * per_copy;
  res->cache_bytes = cache;
  if (cache > 0 && (n - 1) * per_copy <= cache) {
    char w[256];
    snprintf(w, sizeof w,
             "rotate: %u copies of %.0f bytes do not exceed the %.0f-byte "
             "last-level cache (memory cap %.0f bytes); operands may be "
             "partly cached",
             n, per_copy, cache, MB__ROTATE_MAX_BYTES);
    mb__result_warn(res, w);
  }
  return MB_OK;
}

/* The kernel's notes (algorithm, workspace, math mode) into the result. */
static void record_notes(const run_t *r, mb_result_t *res) {
  const mb_backend_kernel_t *k = r->kernel.bk;
  if (!k ||
      k->struct_size < offsetof(mb_backend_kernel_t, notes) + sizeof k->notes ||
      !k->notes)
    return;
  mb_kernel_note_t notes[16];
  uint32_t n = k->notes(r->kstate, notes, 16);
  for (uint32_t i = 0; i < n && i < 16; i++)
    mb__result_add_note(res, notes[i].key, notes[i].text, notes[i].value);
}

/* ---- phases ----------------------------------------------------------------
 */

static mb_status_t check_correctness(run_t *r, mb_result_t *res) {
  const mb__backend_t *b = r->dev->backend;
  const uint32_t nin = r->op->num_inputs, nout = r->op->num_outputs;
  void *got[MB__MAX_OPERANDS] = {0};
  mb_error_clear();
  mb_status_t st = kernel_fn(r)(kernel_state(r), &r->call);
  if (st == MB_OK) st = b->vt->sync(b->state, r->dev->index);
  for (uint32_t o = 0; o < nout && st == MB_OK; o++) {
    size_t bytes = mb_tensor_nbytes(r->tensors[nin + o]);
    if (!(got[o] = malloc(bytes ? bytes : 1)))
      st = mb__fail(MB_ERR_NO_MEMORY, "out of host memory for the check");
    else
      st = mb_tensor_copy_to_host(r->tensors[nin + o], got[o], bytes);
  }
  if (st == MB_OK)
    st = mb__verify(r->op, &r->params, (const void *const *)r->host,
                    (const void *const *)got, r->spec.seed ^ 0x5eedull,
                    &res->corr);
  for (uint32_t o = 0; o < nout; o++) free(got[o]);
  return st;
}

/* Runs until both warm-up limits are met; returns the fastest run (ns), the
 * estimate that sizes the batch. */
static mb_status_t warm_up(run_t *r, uint32_t *runs, double *best_ns) {
  double start = mb__now_s();
  *best_ns = INFINITY;
  *runs = 0;
  while (*runs < r->spec.warmup_runs ||
         mb__now_s() - start < r->spec.warmup_s) {
    double ns;
    mb_status_t st = time_runs(r, 1, &ns);
    if (st != MB_OK) return st;
    if (ns < *best_ns) *best_ns = ns;
    (*runs)++;
    if (mb__now_s() - start > r->spec.timeout_s) break;
  }
  return MB_OK;
}

/* Cold samples are single runs: a batch would only be cold for its first
 * run. Hot samples batch short kernels far above timer resolution. */
static uint32_t choose_batch(const run_t *r, double est_ns) {
  if (r->spec.batch) return r->spec.batch;
  if (r->spec.cache == MB_CACHE_COLD) return 1;
  if (!(est_ns > 0) || est_ns >= MB__TARGET_SAMPLE_NS) return 1;
  double b = ceil(MB__TARGET_SAMPLE_NS / est_ns);
  return b > MB__MAX_BATCH ? MB__MAX_BATCH : (uint32_t)b;
}

static mb_status_t sample(run_t *r, mb_result_t *res, uint32_t batch) {
  const mb__backend_t *b = r->dev->backend;
  mb__criterion_t crit;
  mb__criterion_init(&crit, r->spec.criterion, r->spec.min_samples,
                     r->spec.samples, r->spec.min_time_s, r->spec.max_noise);
  double start = mb__now_s();
  const char *reason = NULL;
  for (;;) {
    if (r->spec.cache == MB_CACHE_COLD && b->vt->flush_cache) {
      mb_status_t st = b->vt->flush_cache(b->state, r->dev->index);
      if (st != MB_OK) return st;
    }
    double ns;
    mb_status_t st = time_runs(r, batch, &ns);
    if (st != MB_OK) return st;
    st = mb__result_add_sample(res, ns / batch);
    if (st != MB_OK) return st;
    if (MB__VT_HAS(b->vt, telemetry)) {
      mb_telemetry_t t = MB_TELEMETRY_INIT;
      if (b->vt->telemetry(b->state, r->dev->index, &t) == MB_OK &&
          (st = mb__result_add_telemetry(res, &t)) != MB_OK)
        return st;
    }
    res->stats.measured_ns += ns;
    mb__criterion_add(&crit, ns / batch, ns);
    if (mb__criterion_done(&crit, &reason)) break;
    /* `fixed` means exactly N samples (num_runs), so only stdrel times out. */
    if (r->spec.criterion == MB_CRITERION_STDREL &&
        mb__now_s() - start > r->spec.timeout_s) {
      reason = "timeout";
      break;
    }
  }
  res->stats.wall_s = mb__now_s() - start;
  res->stats.stop_reason = reason;
  return MB_OK;
}

static void derive(const run_t *r, mb_result_t *res) {
  mb_derived_t *d = &res->derived;
  double median_ns = res->stats.median;
  d->flop = r->op->flop(&r->params);
  d->bytes = r->op->bytes(&r->params);
  d->intensity = d->bytes > 0 ? d->flop / d->bytes : 0;
  d->tflops = median_ns > 0 ? d->flop / median_ns / 1e3 : 0;
  d->gbps = median_ns > 0 ? d->bytes / median_ns : 0;
  const mb__backend_t *b = r->dev->backend;
  d->peak_flops =
      MB__VT_HAS(b->vt, peak_for)
          ? b->vt->peak_for(b->state, r->dev->index, r->op->name, &r->params)
          : mb_device_peak_flops(r->dev, r->params.dtype);
  d->pct_peak =
      d->peak_flops > 0 ? 100.0 * d->tflops * 1e12 / d->peak_flops : 0;
}

/* Everything after the kernel is chosen. Failures become the result's
 * status; nothing here is an input error. */
static void execute(run_t *r, mb_result_t *res) {
  mb_status_t st = setup_operands(r);
  if (st != MB_OK) goto failed;
  st = prepare_kernel(r);
  if (st == MB_ERR_UNSUPPORTED) {
    mb__result_set_status(res, MB_RESULT_SKIPPED, mb_error_last());
    return;
  }
  if (st != MB_OK) goto failed;
  record_notes(r, res);
  if ((st = check_correctness(r, res)) != MB_OK) goto failed;
  if (!res->corr.pass && (r->spec.flags & MB_BENCH_STRICT)) {
    char why[256];
    snprintf(why, sizeof why,
             "wrong result: error %.3g x the tolerance (max abs error %.3g)",
             res->corr.max_err_ratio, res->corr.max_abs_err);
    mb__result_set_status(res, MB_RESULT_FAILED, why);
    return;
  }
  if (r->spec.cache == MB_CACHE_ROTATE &&
      (st = setup_rotation(r, res)) != MB_OK)
    goto failed;
  const mb__backend_t *b = r->dev->backend;
  if (MB__VT_HAS(b->vt, timer_info))
    mb__result_set_timer(res, b->vt->timer_info(b->state, r->dev->index));
  uint32_t warm_runs;
  double est_ns;
  if ((st = warm_up(r, &warm_runs, &est_ns)) != MB_OK) goto failed;
  uint32_t batch = choose_batch(r, est_ns);
  if ((st = sample(r, res, batch)) != MB_OK) goto failed;
  if ((st = mb__stats_compute(res->samples, res->num_samples, &res->stats)) !=
      MB_OK)
    goto failed;
  res->stats.batch = batch;
  res->stats.warmup_runs = warm_runs;
  derive(r, res);
  return;
failed:
  mb__result_set_status(res, MB_RESULT_FAILED,
                        *mb_error_last() ? mb_error_last() : mb_status_str(st));
}

/* ---- the public entry -----------------------------------------------------
 */

static mb_status_t check_spec(const mb_bench_spec_t *s) {
  if (s->cache != MB_CACHE_COLD && s->cache != MB_CACHE_HOT &&
      s->cache != MB_CACHE_ROTATE)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "cache policy %d; valid: cold, hot, rotate", (int)s->cache);
  if (s->criterion != MB_CRITERION_STDREL && s->criterion != MB_CRITERION_FIXED)
    return mb__fail(MB_ERR_INVALID_ARG, "criterion %d; valid: stdrel, fixed",
                    (int)s->criterion);
  if (s->criterion == MB_CRITERION_FIXED && s->samples == 0)
    return mb__fail(MB_ERR_INVALID_ARG, "samples: fixed criterion needs >= 1");
  if (s->min_samples == 0)
    return mb__fail(MB_ERR_INVALID_ARG, "min_samples must be >= 1");
  if (!(s->max_noise > 0) || !(s->min_time_s >= 0) || !(s->timeout_s > 0) ||
      !(s->warmup_s >= 0))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "timing: need max_noise > 0, min_time_s >= 0, timeout_s > "
                    "0, warmup_s >= 0 (got %g, %g, %g, %g)",
                    s->max_noise, s->min_time_s, s->timeout_s, s->warmup_s);
  return MB_OK;
}

/* The first GPU device if any, else the first device. */
static mb_device_t *best_device(mb_context_t *ctx) {
  size_t n = mb_device_count(ctx);
  for (size_t i = 0; i < n; i++)
    if (ctx->devices[i].info.kind == MB_DEVICE_GPU) return &ctx->devices[i];
  return n ? &ctx->devices[0] : NULL;
}

mb_status_t mb_bench_run(mb_context_t *ctx, const mb_bench_spec_t *spec,
                         mb_result_t **out) {
  if (!ctx || !spec || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_bench_run: NULL argument");
  *out = NULL;
  if (spec->struct_size != sizeof *spec)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_bench_run: spec.struct_size %u, expected %zu (use "
                    "MB_BENCH_SPEC_INIT)",
                    spec->struct_size, sizeof *spec);
  run_t r = {.ctx = ctx, .spec = *spec};
  if (!(r.op = mb_op_find(spec->op))) return MB_ERR_NOT_FOUND;
  mb_op_params_t defaults = MB_OP_PARAMS_INIT;
  r.params = spec->params ? *spec->params : defaults;
  mb_op_apply_alias(spec->op, &r.params);
  mb_status_t st = mb_op_resolve(r.op, &r.params);
  if (st != MB_OK || (st = check_spec(spec)) != MB_OK) return st;

  mb_result_t *res;
  if (spec->backend) {
    st = mb_device_find(ctx, spec->backend, spec->device, &r.dev);
    if (st == MB_ERR_NOT_FOUND) return st; /* unknown backend: input error */
  } else if (!(r.dev = best_device(ctx))) {
    st = mb__fail(MB_ERR_NO_DEVICE, "no device: %s",
                  ctx->num_backends ? "no backend has a device"
                                    : "no backend module found");
  }
  res = mb__result_new(r.op->name, r.op->shape_syntax, &r.params, spec, r.dev);
  if (!res) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  if (!r.dev) { /* a known backend without a usable device */
    mb__result_set_status(res, MB_RESULT_SKIPPED, mb_error_last());
    *out = res;
    return MB_OK;
  }
  char why[1024];
  st = mb__kernel_select(ctx, r.op, &r.params, r.dev, spec->impl, &r.kernel,
                         why, sizeof why);
  if (st == MB_ERR_NOT_FOUND) {
    mb_result_destroy(res);
    return st;
  }
  if (st != MB_OK) {
    mb__result_set_status(res, MB_RESULT_SKIPPED, why);
  } else {
    mb__result_set_impl(res, r.kernel.name);
    res->info.emulated =
        r.kernel.bk &&
        r.kernel.bk->struct_size >= sizeof(mb_backend_kernel_t) &&
        (r.kernel.bk->flags & MB_KERNEL_EMULATED);
    execute(&r, res);
    teardown(&r);
  }
  *out = res;
  return MB_OK;
}
