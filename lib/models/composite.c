/* The "graph" implementation of composite ops (composite.h): a composite's
 * graph run step by step with the backend's own primitive kernels on
 * device buffers and checked step by step; the runner times it part by
 * part (measure/runner_parts.c). */
#include "models/composite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/graph.h"
#include "ops/recipe.h"
#include "ops/verify.h"

typedef struct mb__cstep {
  mb__kernel_t kernel;
  void *kstate;
  int prepared;
  void *ptrs[8];
  mb_kernel_call_t call;
  char note[192]; /* a host step's line for the result */
} mb__cstep_t;

typedef struct mb__composite {
  mb_device_t *dev;
  const mb_op_t *op;
  mb_op_params_t params;
  mb__graph_t g;
  mb_tensor_t *owned[MB__GRAPH_MAX_BUFS]; /* intermediates */
  void *ptr[MB__GRAPH_MAX_BUFS];          /* every buffer's device address */
  mb__cstep_t steps[MB__GRAPH_MAX_STEPS];
} mb__composite_t;

static const mb__backend_t *backend(const mb__composite_t *c) {
  return c->dev->backend;
}

/* A host step (graph.h): its inputs from the device, the core's function,
 * its outputs to the device. */
static mb_status_t run_host(mb__composite_t *c, uint32_t i) {
  const mb__backend_t *b = backend(c);
  const mb__gstep_t *gs = &c->g.steps[i];
  const uint32_t nin = gs->op->num_inputs, n = nin + gs->op->num_outputs;
  void *host[8] = {0};
  size_t bytes[8] = {0};
  mb_status_t st = MB_OK;
  for (uint32_t r = 0; st == MB_OK && r < n; r++) {
    const mb__gbuf_t *gb = &c->g.bufs[gs->arg[r]];
    bytes[r] = mb_dtype_bytes(gb->dtype, gb->numel);
    if (!(host[r] = calloc(1, bytes[r] ? bytes[r] : 1)))
      st = mb__fail(MB_ERR_NO_MEMORY, "%s: out of host memory for \"%s\"",
                    c->op->name, gs->label);
    else if (r < nin)
      st = b->vt->copy_to_host(b->state, c->dev->index, host[r],
                               c->ptr[gs->arg[r]], bytes[r]);
  }
  if (st == MB_OK)
    st = gs->host(&gs->params, (const void *const *)host, host + nin,
                  c->steps[i].note, sizeof c->steps[i].note);
  for (uint32_t r = nin; st == MB_OK && r < n; r++)
    st = b->vt->copy_to_device(b->state, c->dev->index, c->ptr[gs->arg[r]],
                               host[r], bytes[r]);
  for (uint32_t r = 0; r < n; r++) free(host[r]);
  return st;
}

static mb_status_t run_step(mb__composite_t *c, uint32_t i) {
  mb__cstep_t *s = &c->steps[i];
  if (c->g.steps[i].host) return run_host(c, i);
  return s->kernel.bk->run(s->kstate, &s->call);
}

/* A kernel for every step, or MB_ERR_UNSUPPORTED naming the step. */
static mb_status_t choose_kernels(mb__composite_t *c, mb_context_t *ctx) {
  char why[768];
  for (uint32_t i = 0; i < c->g.num_steps; i++) {
    const mb__gstep_t *gs = &c->g.steps[i];
    if (gs->host) continue;
    mb_status_t st =
        mb__kernel_select_backend(ctx, gs->op, &gs->params, c->dev, NULL,
                                  &c->steps[i].kernel, why, sizeof why);
    if (st != MB_OK)
      return mb__fail(MB_ERR_UNSUPPORTED,
                      "%s under %s: step %u \"%s\" (%s %s -> %s) has no "
                      "kernel: %s",
                      c->op->name,
                      mb_recipe_name((mb_recipe_t)c->params.recipe), i + 1,
                      gs->label, gs->op->name, mb_dtype_name(gs->params.dtype),
                      mb_dtype_name(gs->params.dtype_out), why);
  }
  return MB_OK;
}

/* Intermediates on the device; the unit scales get their 1. */
static mb_status_t allocate(mb__composite_t *c, const mb_kernel_call_t *call) {
  const uint32_t nin = c->op->num_inputs;
  for (uint32_t b = 0; b < c->g.num_bufs; b++) {
    const mb__gbuf_t *gb = &c->g.bufs[b];
    if (gb->operand >= 0) {
      c->ptr[b] = (uint32_t)gb->operand < nin ? call->in[gb->operand]
                                              : call->out[gb->operand - nin];
      continue;
    }
    mb_status_t st =
        mb_tensor_create(c->dev, gb->dtype, gb->ndim, gb->shape, &c->owned[b]);
    if (st != MB_OK) {
      mb__error_prefix("%s: intermediate \"%s\"", c->op->name, gb->name);
      return st;
    }
    c->ptr[b] = mb_tensor_data(c->owned[b]);
    if (!isnan(gb->value)) {
      const float v = (float)gb->value;
      st = mb_tensor_copy_from_host(c->owned[b], &v, sizeof v);
      if (st != MB_OK) return st;
    }
  }
  return MB_OK;
}

/* Bit r of the result: input r of step i is written by a timed step
 * (varying_in in sys/backend.h): its contents change from run to run. */
static uint32_t varying_inputs(const mb__composite_t *c, uint32_t i) {
  const mb__gstep_t *gs = &c->g.steps[i];
  uint32_t bits = 0;
  for (uint32_t r = 0; r < gs->op->num_inputs; r++)
    for (uint32_t j = 0; j < c->g.num_steps; j++) {
      const mb__gstep_t *w = &c->g.steps[j];
      if (w->phase == MB_PHASE_SETUP) continue;
      for (uint32_t o = 0; o < w->op->num_outputs; o++)
        if (w->arg[w->op->num_inputs + o] == gs->arg[r]) bits |= 1u << r;
    }
  return bits;
}

/* Prepares step i with its kernel; a backend kernel whose prepare declines
 * the call (MB_ERR_UNSUPPORTED: it would pre-pack an input that varies)
 * gives way to the backend's next kernel for the step, as a kernel whose
 * supports() declines does. */
static mb_status_t prepare_step(mb__composite_t *c, mb_context_t *ctx,
                                uint32_t i) {
  const mb__backend_t *b = backend(c);
  const mb__gstep_t *gs = &c->g.steps[i];
  mb__cstep_t *s = &c->steps[i];
  const uint32_t nin = gs->op->num_inputs, nout = gs->op->num_outputs;
  if (gs->host) return MB_OK; /* no kernel: run_host does it all */
  for (uint32_t r = 0; r < nin + nout; r++) s->ptrs[r] = c->ptr[gs->arg[r]];
  s->call = (mb_kernel_call_t){
      sizeof s->call, &gs->params, s->ptrs,       nin,
      s->ptrs + nin,  nout,        c->dev->index, varying_inputs(c, i)};
  for (;;) {
    mb_error_clear();
    mb_status_t st = MB_OK;
    if (s->kernel.bk->prepare)
      st = s->kernel.bk->prepare(b->state, &s->call, &s->kstate);
    if (st == MB_OK) break;
    char declined[512], why[512];
    snprintf(declined, sizeof declined, "%s", mb_error_last());
    if (st != MB_ERR_UNSUPPORTED ||
        mb__kernel_select_backend(ctx, gs->op, &gs->params, c->dev,
                                  s->kernel.bk, &s->kernel, why,
                                  sizeof why) != MB_OK) {
      mb__fail(st, "%s", declined);
      mb__error_prefix("%s: step %u \"%s\"", c->op->name, i + 1, gs->label);
      return st;
    }
  }
  s->prepared = 1;
  return MB_OK;
}

/* The setup steps (weight quantization, once and untimed) are prepared and
 * run before the timed steps are prepared: a kernel that pre-packs an
 * input in prepare (cuBLASLt's fp8 B^T) then reads the quantized weights,
 * not a buffer nothing has written yet. */
static mb_status_t prepare_steps(mb__composite_t *c, mb_context_t *ctx) {
  const mb__backend_t *b = backend(c);
  mb_status_t st = MB_OK;
  for (uint32_t i = 0; st == MB_OK && i < c->g.num_steps; i++)
    if (c->g.steps[i].phase == MB_PHASE_SETUP) st = prepare_step(c, ctx, i);
  for (uint32_t i = 0; st == MB_OK && i < c->g.num_steps; i++)
    if (c->g.steps[i].phase == MB_PHASE_SETUP) st = run_step(c, i);
  if (st == MB_OK) st = b->vt->sync(b->state, c->dev->index);
  for (uint32_t i = 0; st == MB_OK && i < c->g.num_steps; i++)
    if (c->g.steps[i].phase != MB_PHASE_SETUP) st = prepare_step(c, ctx, i);
  return st;
}

mb_status_t mb__composite_prepare(mb_context_t *ctx, mb_device_t *dev,
                                  const mb_op_t *op,
                                  const mb_kernel_call_t *call, void **state) {
  mb__composite_t *c = calloc(1, sizeof *c);
  if (!c) return mb__fail(MB_ERR_NO_MEMORY, "%s: out of memory", op->name);
  c->dev = dev;
  c->op = op;
  c->params = *call->params;
  op->compose(&c->params, &c->g);
  mb_status_t st = c->g.status;
  if (st == MB_OK) st = choose_kernels(c, ctx);
  if (st == MB_OK) st = allocate(c, call);
  if (st == MB_OK) st = prepare_steps(c, ctx);
  if (st != MB_OK) {
    mb__composite_release(c);
    return st;
  }
  *state = c;
  return MB_OK;
}

mb_status_t mb__composite_run(void *state, const mb_kernel_call_t *call) {
  mb__composite_t *c = state;
  (void)call; /* the steps hold their own calls */
  for (uint32_t i = 0; i < c->g.num_steps; i++) {
    if (c->g.steps[i].phase == MB_PHASE_SETUP) continue;
    mb_status_t st = run_step(c, i);
    if (st != MB_OK) {
      mb__error_prefix("%s: step %u \"%s\"", c->op->name, i + 1,
                       c->g.steps[i].label);
      return st;
    }
  }
  return MB_OK;
}

void mb__composite_release(void *state) {
  mb__composite_t *c = state;
  if (!c) return;
  for (uint32_t i = 0; i < c->g.num_steps; i++)
    if (c->steps[i].prepared && c->steps[i].kernel.bk->release)
      c->steps[i].kernel.bk->release(c->steps[i].kstate);
  for (uint32_t b = 0; b < MB__GRAPH_MAX_BUFS; b++)
    mb_tensor_destroy(c->owned[b]);
  free(c);
}

int mb__composite_emulated(const void *state) {
  const mb__composite_t *c = state;
  for (uint32_t i = 0; i < c->g.num_steps; i++) {
    /* The loader's full-size copy: an older module's flags read 0. */
    const mb_backend_kernel_t *k = c->steps[i].kernel.bk;
    if (k && (k->flags & MB_KERNEL_EMULATED)) return 1;
  }
  return 0;
}

double mb__composite_peak(const void *state) {
  const mb__composite_t *c = state;
  if (mb__composite_emulated(state)) return 0.0;
  const mb__gstep_t *top = NULL;
  uint32_t at = 0;
  double most = -1;
  for (uint32_t i = 0; i < c->g.num_steps; i++) {
    const mb__gstep_t *gs = &c->g.steps[i];
    double f = gs->op->flop(&gs->params);
    if (gs->phase != MB_PHASE_SETUP && f > most) most = f, top = gs, at = i;
  }
  if (!top) return 0.0;
  return mb__kernel_peak(c->dev, c->steps[at].kernel.bk, c->steps[at].kstate,
                         top->op, &top->params);
}

double mb__composite_working_set(const void *state) {
  const mb__composite_t *c = state;
  int used[MB__GRAPH_MAX_BUFS] = {0};
  for (uint32_t i = 0; i < c->g.num_steps; i++) {
    const mb__gstep_t *gs = &c->g.steps[i];
    if (gs->phase == MB_PHASE_SETUP) continue;
    for (uint32_t r = 0; r < gs->op->num_inputs + gs->op->num_outputs; r++)
      used[gs->arg[r]] = 1;
  }
  double bytes = 0;
  for (uint32_t b = 0; b < c->g.num_bufs; b++)
    if (used[b])
      bytes += (double)mb_dtype_bytes(c->g.bufs[b].dtype, c->g.bufs[b].numel);
  return bytes;
}

/* ---- the check --------------------------------------------------------- */

static void free_host(void **host, uint32_t n) {
  for (uint32_t b = 0; b < n; b++) free(host[b]);
}

/* Every buffer as the device left it. */
static mb_status_t copy_back(const mb__composite_t *c, void **host) {
  const mb__backend_t *b = backend(c);
  for (uint32_t i = 0; i < c->g.num_bufs; i++) {
    const mb__gbuf_t *gb = &c->g.bufs[i];
    size_t bytes = mb_dtype_bytes(gb->dtype, gb->numel);
    if (!(host[i] = calloc(1, bytes ? bytes : 1)))
      return mb__fail(MB_ERR_NO_MEMORY, "%s: out of host memory for the check",
                      c->op->name);
    mb_status_t st =
        b->vt->copy_to_host(b->state, c->dev->index, host[i], c->ptr[i], bytes);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

static void fold(mb_correctness_t *acc, const mb_correctness_t *s) {
  acc->pass &= s->pass;
  if (s->max_abs_err > acc->max_abs_err) acc->max_abs_err = s->max_abs_err;
  if (s->max_rel_err > acc->max_rel_err) acc->max_rel_err = s->max_rel_err;
  if (s->max_err_ratio > acc->max_err_ratio)
    acc->max_err_ratio = s->max_err_ratio;
  if (s->sqnr_db < acc->sqnr_db) acc->sqnr_db = s->sqnr_db;
  if (s->tolerance > acc->tolerance) acc->tolerance = s->tolerance;
  acc->elements_checked += s->elements_checked;
  acc->elements_total += s->elements_total;
}

static mb_status_t check_steps(const mb__composite_t *c, void **host,
                               uint64_t seed, mb_correctness_t *corr,
                               mb_result_t *res) {
  *corr = (mb_correctness_t)MB_CORRECTNESS_INIT;
  corr->checked = 1;
  corr->pass = 1;
  corr->sqnr_db = INFINITY;
  double worst = -1;
  const char *worst_label = "";
  for (uint32_t i = 0; i < c->g.num_steps; i++) {
    const mb__gstep_t *gs = &c->g.steps[i];
    const uint32_t n = gs->op->num_inputs + gs->op->num_outputs;
    const void *ops[8];
    /* A host step is the core's own code on the host, tested on its own
     * (test_hqq); the device steps after it are checked on what it made. */
    if (gs->host) continue;
    for (uint32_t r = 0; r < n; r++) ops[r] = host[gs->arg[r]];
    mb_correctness_t s = MB_CORRECTNESS_INIT;
    mb_status_t st = mb__verify(gs->op, &gs->params, ops,
                                ops + gs->op->num_inputs, seed + i, &s);
    if (st != MB_OK) {
      mb__error_prefix("%s: checking step %u \"%s\"", c->op->name, i + 1,
                       gs->label);
      return st;
    }
    if (s.max_err_ratio > worst || isnan(s.max_err_ratio))
      worst = s.max_err_ratio, worst_label = gs->label;
    fold(corr, &s);
  }
  return mb__result_add_note(res, "worst_step", worst_label, 0.0);
}

void mb__accuracy_from(const mb_correctness_t *hp, mb_recipe_t recipe,
                       mb_accuracy_t *acc) {
  *acc = (mb_accuracy_t)MB_ACCURACY_INIT;
  acc->checked = hp->checked;
  acc->sqnr_db = hp->sqnr_db;
  /* sqnr = 10 log10(sum ref^2 / sum err^2), so the relative Frobenius
   * error ||err|| / ||ref|| is 10^(-sqnr / 20). */
  acc->rel_err = pow(10.0, -hp->sqnr_db / 20.0);
  acc->max_abs_err = hp->max_abs_err;
  acc->max_rel_err = hp->max_rel_err;
  acc->min_sqnr_db = mb_recipe_min_sqnr_db(recipe);
  acc->pass = hp->checked && hp->sqnr_db >= acc->min_sqnr_db;
  acc->elements_checked = hp->elements_checked;
}

/* The outputs against the model in double with no quantization. */
static mb_status_t check_accuracy(const mb__composite_t *c, void **host,
                                  uint64_t seed, mb_accuracy_t *acc) {
  mb_correctness_t hp = MB_CORRECTNESS_INIT;
  mb_status_t st =
      mb__verify(c->op, &c->params, (const void *const *)host,
                 (const void *const *)host + c->op->num_inputs, seed, &hp);
  if (st != MB_OK) return st;
  mb__accuracy_from(&hp, (mb_recipe_t)c->params.recipe, acc);
  return MB_OK;
}

/* The host steps' lines as one note, "label: line; label: line". */
static mb_status_t add_host_notes(const mb__composite_t *c, mb_result_t *res) {
  char text[1536] = "";
  size_t len = 0;
  for (uint32_t i = 0; i < c->g.num_steps && len < sizeof text; i++)
    if (c->steps[i].note[0])
      len += (size_t)snprintf(text + len, sizeof text - len, "%s%s: %s",
                              len ? "; " : "", c->g.steps[i].label,
                              c->steps[i].note);
  return text[0] ? mb__result_add_note(res, "weight_prep", text, 0.0) : MB_OK;
}

mb_status_t mb__composite_check(void *state, uint64_t seed,
                                mb_correctness_t *corr, mb_result_t *res) {
  mb__composite_t *c = state;
  void *host[MB__GRAPH_MAX_BUFS] = {0};
  mb_status_t st = copy_back(c, host);
  if (st == MB_OK) st = check_steps(c, host, seed, corr, res);
  if (st == MB_OK) st = add_host_notes(c, res);
  /* A recipe named after another library's kernels says what ran instead. */
  const mb__recipe_row_t *r = mb__recipe_row((mb_recipe_t)c->params.recipe);
  if (st == MB_OK && r && r->kernel_note)
    st = mb__result_add_note(res, "recipe_kernel", r->kernel_note, 0.0);
  mb_accuracy_t acc;
  if (st == MB_OK) st = check_accuracy(c, host, seed ^ 0xacc, &acc);
  if (st == MB_OK) {
    mb__result_set_accuracy(res, &acc);
    corr->pass &= acc.pass; /* fast but wrong must show */
  }
  free_host(host, c->g.num_bufs);
  return st;
}

/* ---- the breakdown: what the runner times part by part ---------------- */

mb_status_t mb__composite_run_part(void *state, int step, mb_phase_t phase) {
  mb__composite_t *c = state;
  if (step >= 0) return run_step(c, (uint32_t)step);
  for (uint32_t i = 0; i < c->g.num_steps; i++) {
    if (c->g.steps[i].phase != phase) continue;
    mb_status_t st = run_step(c, i);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

uint32_t mb__composite_step_count(const void *state) {
  const mb__composite_t *c = state;
  return c->g.num_steps;
}

void mb__composite_step(const void *state, uint32_t i, mb_step_time_t *t) {
  const mb__composite_t *c = state;
  const mb__gstep_t *gs = &c->g.steps[i];
  *t = (mb_step_time_t)MB_STEP_TIME_INIT;
  t->label = gs->label;
  t->op = gs->op->name;
  t->impl = gs->host ? "core" : c->steps[i].kernel.name;
  t->phase = gs->phase;
  t->flop = gs->op->flop(&gs->params);
  t->bytes = gs->op->bytes(&gs->params);
}
