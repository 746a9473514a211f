/* One benchmark: set up seeded inputs, run once and check against the
 * reference, warm up, sample until the criterion holds, summarise.
 * Whether it ran (status) is kept apart from what it measured. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rng.h"
#include "measure/runner_internal.h"
#include "models/model_ops.h"
#include "ops/verify.h"

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

/* What an output the kernel does not read starts as, by dtype: a value no
 * correct kernel writes there, so an element it never writes fails the
 * check. Floats: NaN. Integers: their most negative value, -2^(bits-1)
 * (i8 -128, i4 -8, i32 INT32_MIN), which symmetric quantization (-qmax ..
 * qmax) and an i32 accumulator that has not overflowed never produce; 0
 * would pass wherever the right answer is 0 (a kernel that accumulates into
 * its output assuming it zeroed). */
#define MB__UNWRITTEN_ROW(e, name, bits, flt) \
  [MB_DTYPE_##e] = (flt) ? NAN : -(double)(1ull << ((bits)-1)),
static const double k_unwritten[MB_DTYPE_COUNT] = {
    MB_DTYPE_MAP(MB__UNWRITTEN_ROW)};
#undef MB__UNWRITTEN_ROW

/* Inputs get seeded values (same bytes on every backend); outputs that the
 * kernel does not read get k_unwritten. Then the op may derive inputs from
 * others (quantized operands from a normal matrix) before anything is
 * copied. */
static mb_status_t setup_operands(mb__run_t *r) {
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
      fill.a = k_unwritten[dt];
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
  r->call = (mb_kernel_call_t){sizeof r->call,
                               &r->params,
                               r->ptrs,
                               op->num_inputs,
                               r->ptrs + op->num_inputs,
                               op->num_outputs,
                               r->dev->index,
                               0u /* every operand is filled before prepare */};
  r->args = (mb_kernel_args_t){sizeof r->args, op,
                               &r->params,     r->tensors,
                               op->num_inputs, r->tensors + op->num_inputs,
                               op->num_outputs};
  return MB_OK;
}

mb_status_t mb__run_prepare(mb__run_t *r, const mb_kernel_call_t *call,
                            const mb_kernel_args_t *args, void **kstate) {
  mb_error_clear();
  if (r->kernel.composite)
    return mb__composite_prepare(r->ctx, r->dev, r->op, call, kstate);
  if (r->kernel.bk && r->kernel.bk->prepare)
    return r->kernel.bk->prepare(r->dev->backend->state, call, kstate);
  if (r->kernel.uk && r->kernel.uk->desc.setup)
    return r->kernel.uk->desc.setup(r->kernel.uk->desc.user, args);
  return MB_OK;
}

mb_status_t mb__run_once(mb__run_t *r, void *kstate,
                         const mb_kernel_call_t *call,
                         const mb_kernel_args_t *args) {
  if (r->kernel.composite) return mb__composite_run(kstate, call);
  if (r->kernel.bk) return r->kernel.bk->run(kstate, call);
  return r->kernel.uk->desc.run(r->kernel.uk->desc.user, args);
}

void mb__run_release(mb__run_t *r, void *kstate, const mb_kernel_args_t *args) {
  if (r->kernel.composite)
    mb__composite_release(kstate);
  else if (r->kernel.bk && r->kernel.bk->release)
    r->kernel.bk->release(kstate);
  else if (r->kernel.uk && r->kernel.uk->desc.teardown)
    r->kernel.uk->desc.teardown(r->kernel.uk->desc.user, args);
}

static mb_status_t prepare_kernel(mb__run_t *r) {
  mb_status_t st = mb__run_prepare(r, &r->call, &r->args, &r->kstate);
  r->prepared = st == MB_OK;
  return st;
}

static void teardown(mb__run_t *r) {
  if (r->ref) r->op->ref_release(r->ref);
  mb__run_teardown_copies(r);
  if (r->prepared) mb__run_release(r, r->kstate, &r->args);
  for (uint32_t i = 0; i < r->num_operands; i++) {
    mb_tensor_destroy(r->tensors[i]);
    free(r->host[i]);
  }
}

/* The kernel's notes (algorithm, workspace, math mode, the autotuner's
 * candidates) into the result; a kernel with more is cut. */
static void record_notes(const mb__run_t *r, mb_result_t *res) {
  const mb_backend_kernel_t *k = r->kernel.bk; /* the loader's full copy */
  if (!k || !k->notes) return;
  mb_kernel_note_t notes[MB__MAX_KERNEL_NOTES];
  uint32_t n = k->notes(r->kstate, notes, MB__MAX_KERNEL_NOTES);
  for (uint32_t i = 0; i < n && i < MB__MAX_KERNEL_NOTES; i++)
    mb__result_add_note(res, notes[i].key, notes[i].text, notes[i].value);
}

/* ---- phases ----------------------------------------------------------------
 */

/* The seed of the sampled checks' choice of elements: from the spec's
 * seed alone (a repeatable check), or under MB_BENCH_FRESH_SAMPLE mixed
 * with the context's run count and the clock, so every run looks at other
 * elements. 53 bits, so the result's JSON number keeps it exactly. */
static uint64_t check_seed(mb__run_t *r) {
  uint64_t base = mb__rng_u64(r->spec.seed, 0x5eedull);
  if (r->spec.flags & MB_BENCH_FRESH_SAMPLE) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t now = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    base = mb__rng_u64(base ^ now, r->ctx->runs++);
  }
  return base >> 11;
}

/* The roofline bound of one run (ns): the larger of its FLOPs at the peak
 * and its bytes at the measured bandwidth; 0 when a term it needs is
 * unknown (FLOPs without a peak would make any bandwidth bound a lie). */
static void roof(mb_derived_t *d) {
  const double compute =
      d->flop > 0 && d->peak_flops > 0 ? d->flop / d->peak_flops * 1e9 : 0;
  const double memory =
      d->bytes > 0 && d->bandwidth_gbps > 0 ? d->bytes / d->bandwidth_gbps : 0;
  if ((d->flop > 0 && !(compute > 0)) || !(d->bandwidth_gbps > 0)) return;
  d->roof_ns = fmax(compute, memory);
  d->bound = compute >= memory ? "compute" : "memory";
}

static void derive(const mb__run_t *r, mb_result_t *res) {
  mb_derived_t *d = &res->derived;
  double median_ns = res->stats.median;
  d->flop = r->op->flop(&r->params);
  d->bytes = r->op->bytes(&r->params);
  d->intensity = d->bytes > 0 ? d->flop / d->bytes : 0;
  d->tflops = median_ns > 0 ? d->flop / median_ns / 1e3 : 0;
  d->gbps = median_ns > 0 ? d->bytes / median_ns : 0;
  d->peak_flops =
      r->kernel.composite
          ? mb__composite_peak(r->kstate)
          : mb__kernel_peak(r->dev, r->kernel.bk, r->kstate, r->op, &r->params);
  d->pct_peak =
      d->peak_flops > 0 ? 100.0 * d->tflops * 1e12 / d->peak_flops : 0;
  /* A transfer's roof is its link's datasheet figure, never the device's
   * memory: unknown (0) unless the kernel read it. */
  d->bandwidth_gbps = r->op->link_bound
                          ? mb__kernel_link_gbps(r->kernel.bk, r->kstate)
                          : r->dev->cal.copy_gbps;
  roof(d);
  if (r->op->link_bound && d->roof_ns > 0) d->bound = "link";
  d->pct_roof =
      d->roof_ns > 0 && median_ns > 0 ? 100.0 * d->roof_ns / median_ns : 0;
}

/* A composite's extras: its working set, what its shape means, each step
 * and phase timed alone (the composite's own samples time the whole).
 * Interrupted while timing the parts, the whole's figures stand: the
 * breakdown is what is lost, and the result says so. */
static mb_status_t describe_composite(mb__run_t *r, mb_result_t *res) {
  mb_status_t st = MB_OK;
  if (r->op->shape_note)
    st = mb__result_add_note(res, "shape_note", r->op->shape_note, 0.0);
  if (!r->kernel.composite || st != MB_OK) return st;
  st = mb__result_add_note(res, "working_set_bytes", NULL,
                           mb__composite_working_set(r->kstate));
  if (st == MB_OK) st = mb__run_time_parts(r, res);
  if (st != MB_ERR_INTERRUPTED) return st;
  mb__result_warn(res,
                  "interrupted while timing the steps alone: the "
                  "breakdown is incomplete");
  return MB_OK;
}

/* Everything after the kernel is chosen. Failures become the result's
 * status; nothing here is an input error. */
/* A read flush asked of a backend that only writes: skipped, not silently
 * flushed another way (mb__timing_flush's reason). */
static int read_flush_missing(const mb__run_t *r, mb_result_t *res) {
  if (r->spec.cache != MB_CACHE_COLD || !(r->spec.flags & MB_BENCH_FLUSH_READ))
    return 0;
  if (mb__timing_flush_check(r->dev, MB_FLUSH_READ) == MB_OK) return 0;
  mb__result_set_status(res, MB_RESULT_SKIPPED, mb_error_last());
  return 1;
}

/* A check's verdict over every rank of a collective: one that passed here
 * but failed elsewhere is reported as the others' checks would. Returns
 * whether the result failed. */
static int check_everywhere(mb__run_t *r, mb_result_t *res, const char *which) {
  const int here = res->corr.pass;
  mb__lock_correctness(r, &res->corr);
  return here && !res->corr.pass &&
         mb__run_report_wrong(res, which, &res->corr);
}

static void execute_phases(mb__run_t *r, mb_result_t *res) {
  if (read_flush_missing(r, res)) return;
  mb_status_t st = setup_operands(r);
  if (st == MB_OK) st = prepare_kernel(r);
  st = mb__lock_agree(r, st, "set up the benchmark");
  if (st == MB_ERR_UNSUPPORTED) {
    mb__result_set_status(res, MB_RESULT_SKIPPED, mb_error_last());
    return;
  }
  if (st != MB_OK) goto failed;
  record_notes(r, res);
  if (r->kernel.composite)
    res->info.emulated = mb__composite_emulated(r->kstate);
  double t0 = mb__rt_now(r);
  st = mb__lock_agree(r, mb__run_check_first(r, res), "run and check it");
  mb__rt_check(r, res, "first run", t0);
  if (st != MB_OK) goto failed;
  /* Without strict, a wrong first run shows as pass false alone (the
   * figures are still taken), as it always has. */
  if (check_everywhere(r, res, "first run, on another rank") ||
      (!res->corr.pass && (r->spec.flags & MB_BENCH_STRICT) &&
       mb__run_report_wrong(res, "first run", &res->corr)))
    return;
  if (r->spec.cache == MB_CACHE_ROTATE)
    st = mb__lock_agree(r, mb__run_setup_rotation(r, res), "rotate operands");
  if (st != MB_OK) goto failed;
  const mb__backend_t *b = r->dev->backend;
  if (MB__VT_HAS(b->vt, timer_info))
    mb__result_set_timer(res, b->vt->timer_info(b->state, r->dev->index));
  st = mb__lock_agree(r, mb__run_measure(r, res), "measure it");
  if (st == MB_OK) {
    t0 = mb__rt_now(r);
    st = mb__lock_agree(r, mb__run_check_after(r, res), "check it again");
    /* A composite's graph is checked once, step by step: no second check */
    if (res->corr.checked && !r->kernel.composite)
      mb__rt_check(r, res, "after timing", t0);
  }
  if (st != MB_OK) goto failed;
  check_everywhere(r, res, "after timing, on another rank");
  if (res->info.status != MB_RESULT_OK) return; /* wrong after timing */
  derive(r, res);
  if ((st = describe_composite(r, res)) != MB_OK ||
      (st = mb__lock_notes(r, res)) != MB_OK)
    goto failed;
  return;
failed:
  mb__result_set_status(res, MB_RESULT_FAILED,
                        *mb_error_last() ? mb_error_last() : mb_status_str(st));
}

static void execute(mb__run_t *r, mb_result_t *res) {
  /* Peak memory: what this benchmark's tensors add to what was live. */
  const double live = r->dev->mem_live;
  r->dev->mem_peak = live;
  execute_phases(r, res);
  res->info.peak_memory_bytes = r->dev->mem_peak - live;
}

/* ---- the public entry -----------------------------------------------------
 */

static mb_status_t check_spec(const mb_bench_spec_t *s) {
  if (s->cache != MB_CACHE_COLD && s->cache != MB_CACHE_HOT &&
      s->cache != MB_CACHE_ROTATE)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "cache policy %d; valid: cold, hot, rotate", (int)s->cache);
  /* A batch of cold runs is cold for its first run only; the figures
   * would mix one cold run with N - 1 warm ones. */
  if (s->cache == MB_CACHE_COLD && s->batch > 1)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "batch %u with cache cold: only the first run of each "
                    "sample would be cold; use batch 1 (cold samples are "
                    "single runs) or cache rotate to batch runs on cold "
                    "operands",
                    s->batch);
  if (s->criterion != MB_CRITERION_STDREL &&
      s->criterion != MB_CRITERION_FIXED &&
      s->criterion != MB_CRITERION_ENTROPY)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "criterion %d; valid: stdrel, fixed, entropy",
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

/* `samples` alone asks for exactly that many, as `mbench run --samples N`,
 * Python's samples=N and a config's `samples:` do: with the default
 * criterion (stdrel, which has no use for it) it means fixed. Entropy
 * keeps its own rule. */
static void samples_mean_fixed(mb_bench_spec_t *s) {
  if (s->samples && s->criterion == MB_CRITERION_STDREL)
    s->criterion = MB_CRITERION_FIXED;
}

/* A composite's result says which model, recipe and mode it measured
 * (a plan may set them again, the same). */
static mb_status_t label_model(const mb__run_t *r, mb_result_t *res) {
  char model[64];
  mb__model_label(r->op, &r->params, model, sizeof model);
  mb__result_plan_t facts = {
      "",    mb_recipe_name((mb_recipe_t)r->params.recipe),
      model, r->op == &mb__op_linear_training ? "training" : "inference",
      "",    NULL};
  return mb__result_set_plan(res, &facts);
}

/* Everything before running: the spec checked, the op resolved, the device
 * found and a result with the identity made. An input error returns non-OK
 * and no result; a known backend without a device gives a skipped result
 * and r->dev NULL. */
static mb_status_t resolve(mb_context_t *ctx, const mb_bench_spec_t *spec,
                           const char *fn, mb__run_t *r, mb_result_t **res) {
  if (!ctx || !spec || !res)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: NULL argument", fn);
  *res = NULL;
  /* The caller's spec and params (older, shorter structs included) at
   * today's size; everything below reads these copies. */
  *r = (mb__run_t){
      .ctx = ctx, .spec = MB_BENCH_SPEC_INIT, .params = MB_OP_PARAMS_INIT};
  mb_status_t st = mb__struct_in(MB__STRUCT_BENCH_SPEC, fn, spec, &r->spec);
  if (st == MB_OK && spec->params)
    st = mb__struct_in(MB__STRUCT_OP_PARAMS, fn, spec->params, &r->params);
  if (st != MB_OK) return st;
  spec = &r->spec;
  r->spec.params = &r->params;
  samples_mean_fixed(&r->spec);
  r->sample_seed = check_seed(r);
  if (!(r->op = mb_op_find(spec->op))) return MB_ERR_NOT_FOUND;
  mb_op_apply_alias(spec->op, &r->params);
  st = mb_op_resolve(r->op, &r->params);
  if (st != MB_OK || (st = check_spec(spec)) != MB_OK) return st;
  const mb_status_t ranks_st = mb__lock_setup(r);
  if (spec->backend) {
    st = mb_device_find(ctx, spec->backend, spec->device, &r->dev);
    if (st == MB_ERR_NOT_FOUND) return st; /* unknown backend: input error */
  } else {
    mb__device_default(ctx, spec->device, &r->dev);
  }
  *res = mb__result_new(r->op->name, r->op->shape_syntax, &r->params, spec,
                        r->dev);
  if (!*res) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  if (r->op->compose && (st = label_model(r, *res)) != MB_OK) {
    mb_result_destroy(*res);
    *res = NULL;
    return st;
  }
  if (!r->dev) /* a known backend without a usable device */
    mb__result_set_status(*res, MB_RESULT_SKIPPED, mb_error_last());
  else if (ranks_st != MB_OK) { /* a collective this job cannot run */
    mb__result_set_status(*res, MB_RESULT_SKIPPED, mb_error_last());
    r->dev = NULL;
  }
  return MB_OK;
}

/* A backend's (or the program's) kernel for the op; for a composite
 * without a fused kernel, or asked for by name, the core's graph. */
static mb_status_t choose_kernel(mb_context_t *ctx, mb__run_t *r,
                                 const char *impl, char *why, size_t cap) {
  const int graph = impl && !strcmp(impl, MB__COMPOSITE_IMPL);
  mb_status_t st = MB_ERR_UNSUPPORTED;
  if (!graph)
    st = mb__kernel_select(ctx, r->op, &r->params, r->dev, impl, &r->kernel,
                           why, cap);
  if (r->op->compose && (graph || (!impl && st == MB_ERR_UNSUPPORTED))) {
    r->kernel = (mb__kernel_t){MB__COMPOSITE_IMPL, NULL, NULL, 1};
    return MB_OK;
  }
  if (graph)
    return mb__fail(MB_ERR_NOT_FOUND,
                    "implementation \"graph\" runs composite ops (models); "
                    "%s is a primitive",
                    r->op->name);
  return st;
}

/* After resolving: the device, the kernel and the run, into res. */
static mb_status_t run_resolved(mb__run_t *r, mb_result_t *res,
                                mb_result_t **out) {
  mb_status_t st = MB_OK;
  /* A collective's ranks agree that each has the device (a skip) */
  if (r->comm &&
      mb__lock_agree(r, r->dev ? MB_OK : MB_ERR_UNSUPPORTED, "find a device") !=
          MB_OK &&
      r->dev) {
    mb__result_set_status(res, MB_RESULT_SKIPPED, mb_error_last());
    r->dev = NULL;
  }
  if (!r->dev) {
    if (out) *out = res;
    return MB_OK;
  }
  if (mb__interrupted(r->ctx)) {
    mb__result_set_status(res, MB_RESULT_FAILED, "interrupted");
    *out = res;
    return MB_OK;
  }
  char why[1024];
  st = choose_kernel(r->ctx, r, r->spec.impl, why, sizeof why);
  if (r->comm && st != MB_ERR_NOT_FOUND) { /* every rank's choice, or none */
    if (st != MB_OK) mb__fail(st, "%s", why);
    if ((st = mb__lock_agree(r, st, "find a kernel")) != MB_OK)
      snprintf(why, sizeof why, "%s", mb_error_last());
  }
  if (st == MB_ERR_NOT_FOUND) {
    mb_result_destroy(res);
    return st;
  }
  if (st != MB_OK) {
    mb__result_set_status(res, MB_RESULT_SKIPPED, why);
  } else {
    mb__result_set_impl(res, r->kernel.name);
    res->info.emulated =
        r->kernel.bk && (r->kernel.bk->flags & MB_KERNEL_EMULATED);
    mb__device_bandwidth(r->dev); /* before the operands: see its comment */
    mb__rt_begin(r, res);
    execute(r, res);
    teardown(r);
    mb__rt_end(r);
  }
  *out = res;
  return MB_OK;
}

mb_status_t mb_bench_run(mb_context_t *ctx, const mb_bench_spec_t *spec,
                         mb_result_t **out) {
  mb__run_t r;
  mb_result_t *res;
  mb_status_t st = resolve(ctx, spec, "mb_bench_run", &r, &res);
  if (st != MB_OK) {
    if (out) *out = res;
    return st;
  }
  const double t0 = mb__rt_now(&r);
  mb__lock_join(&r, res);
  st = run_resolved(&r, res, out);
  mb__lock_leave(&r);
  if (st == MB_OK) mb__rt_benchmark(ctx, res, t0);
  return st;
}

mb_status_t mb_bench_result_without_run(mb_context_t *ctx,
                                        const mb_bench_spec_t *spec,
                                        mb_result_status_t status,
                                        const char *reason, mb_result_t **out) {
  if (status != MB_RESULT_SKIPPED && status != MB_RESULT_FAILED)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_bench_result_without_run: status %d; valid: skipped, "
                    "failed",
                    (int)status);
  mb__run_t r;
  mb_result_t *res;
  mb_status_t st = resolve(ctx, spec, "mb_bench_result_without_run", &r, &res);
  if (st != MB_OK) return st;
  if (r.spec.impl) mb__result_set_impl(res, r.spec.impl);
  mb__result_set_status(res, status, reason ? reason : "");
  /* An isolated child that died: its own events stop where it did, and
   * this says how it ended. */
  mb__rt_benchmark(ctx, res, mb__rt_now(&r));
  *out = res;
  return MB_OK;
}
