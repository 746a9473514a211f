/* Building a composite's graph (graph.h): buffers, steps and the wiring
 * check that catches a composite feeding a step the wrong tensor. */
#include "models/graph.h"

#include <math.h>
#include <string.h>

void mb__graph_init(mb__graph_t *g, const mb_op_t *op,
                    const mb_op_params_t *p) {
  memset(g, 0, sizeof *g);
  g->op = op->name;
  const uint32_t n = op->num_inputs + op->num_outputs;
  for (uint32_t role = 0; role < n; role++) {
    mb__gbuf_t *b = &g->bufs[role];
    op->operand(p, role, &b->dtype, &b->ndim, b->shape);
    b->numel = mb__operand_numel(op, p, role);
    b->name = op->operand_names[role];
    b->operand = (int)role;
    b->value = NAN;
  }
  g->num_bufs = n;
}

static uint32_t add_buf(mb__graph_t *g, const char *name, mb_dtype_t dtype,
                        uint32_t ndim, const int64_t *shape) {
  if (g->status != MB_OK) return 0;
  if (g->num_bufs == MB__GRAPH_MAX_BUFS) {
    g->status = mb__fail(MB_ERR_INTERNAL, "%s: more than %d buffers", g->op,
                         MB__GRAPH_MAX_BUFS);
    return 0;
  }
  mb__gbuf_t *b = &g->bufs[g->num_bufs];
  *b = (mb__gbuf_t){.name = name,
                    .dtype = dtype,
                    .ndim = ndim,
                    .numel = 1,
                    .operand = -1,
                    .value = NAN};
  for (uint32_t d = 0; d < ndim; d++) {
    b->shape[d] = shape[d];
    b->numel *= (size_t)shape[d];
  }
  return g->num_bufs++;
}

uint32_t mb__graph_buf(mb__graph_t *g, const char *name, mb_dtype_t dtype,
                       int64_t rows, int64_t cols) {
  const int64_t shape[2] = {rows, cols};
  return add_buf(g, name, dtype, 2, shape);
}

uint32_t mb__graph_unit(mb__graph_t *g) {
  /* One per graph: every unscaled side reads the same 1. */
  for (uint32_t i = 0; i < g->num_bufs; i++)
    if (g->bufs[i].operand < 0 && g->bufs[i].value == 1.0) return i;
  uint32_t b = mb__graph_buf(g, "unit_scale", MB_DTYPE_F32, 1, 1);
  if (g->status == MB_OK) g->bufs[b].value = 1.0;
  return b;
}

/* Operand `role` of the step against the buffer wired to it. */
static mb_status_t check_wire(const mb__graph_t *g, const mb__gstep_t *s,
                              uint32_t role) {
  mb_dtype_t dt;
  uint32_t nd;
  int64_t shape[MB_MAX_DIMS];
  s->op->operand(&s->params, role, &dt, &nd, shape);
  size_t numel = mb__operand_numel(s->op, &s->params, role);
  const mb__gbuf_t *b = &g->bufs[s->arg[role]];
  if (b->dtype == dt && b->numel == numel) return MB_OK;
  return mb__fail(MB_ERR_INTERNAL,
                  "%s: step \"%s\" (%s) operand %s is %s x %zu but is wired "
                  "to buffer \"%s\", %s x %zu",
                  g->op, s->label, s->op->name, s->op->operand_names[role],
                  mb_dtype_name(dt), numel, b->name, mb_dtype_name(b->dtype),
                  b->numel);
}

uint32_t mb__graph_step(mb__graph_t *g, const char *label, mb_phase_t phase,
                        const mb_op_t *op, const mb_op_params_t *params,
                        const uint32_t *args) {
  if (g->status != MB_OK) return 0;
  if (g->num_steps == MB__GRAPH_MAX_STEPS) {
    g->status = mb__fail(MB_ERR_INTERNAL, "%s: more than %d steps", g->op,
                         MB__GRAPH_MAX_STEPS);
    return 0;
  }
  mb__gstep_t *s = &g->steps[g->num_steps];
  *s = (mb__gstep_t){
      .label = label, .op = op, .params = *params, .phase = phase};
  s->params.struct_size = sizeof s->params;
  mb_status_t st = mb_op_resolve(op, &s->params);
  if (st != MB_OK) {
    /* The recipe or shape does not fit this step (a block that does not
     * divide K, ...): say which step of which composite. */
    mb__error_prefix("%s: step \"%s\"", g->op, label);
    g->status = st;
    return 0;
  }
  const uint32_t n = op->num_inputs + op->num_outputs;
  for (uint32_t role = 0; role < n && g->status == MB_OK; role++) {
    if (args[role] == MB__NEW) {
      mb_dtype_t dt;
      uint32_t nd;
      int64_t shape[MB_MAX_DIMS];
      op->operand(&s->params, role, &dt, &nd, shape);
      s->arg[role] = add_buf(g, op->operand_names[role], dt, nd, shape);
    } else if (args[role] < g->num_bufs) {
      s->arg[role] = args[role];
    } else {
      g->status =
          mb__fail(MB_ERR_INTERNAL, "%s: step \"%s\" wired to buffer %u of %u",
                   g->op, label, args[role], g->num_bufs);
    }
    if (g->status == MB_OK) g->status = check_wire(g, s, role);
  }
  if (g->status != MB_OK) return 0;
  return g->num_steps++;
}

uint32_t mb__graph_host_step(mb__graph_t *g, const char *label,
                             const mb_op_t *op, const mb_op_params_t *params,
                             const uint32_t *args, mb__host_fn_t fn) {
  uint32_t st = mb__graph_step(g, label, MB_PHASE_SETUP, op, params, args);
  if (g->status == MB_OK) g->steps[st].host = fn;
  return st;
}

double mb__graph_flop(const mb__graph_t *g) {
  double f = 0;
  for (uint32_t i = 0; i < g->num_steps; i++)
    if (g->steps[i].phase != MB_PHASE_SETUP)
      f += g->steps[i].op->flop(&g->steps[i].params);
  return f;
}

double mb__graph_bytes(const mb__graph_t *g) {
  double b = 0;
  for (uint32_t i = 0; i < g->num_steps; i++)
    if (g->steps[i].phase != MB_PHASE_SETUP)
      b += g->steps[i].op->bytes(&g->steps[i].params);
  return b;
}
