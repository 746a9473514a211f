/* Cache rotation: N copies of every operand, cycled run by run, N chosen
 * from the device's last-level cache so that the bytes touched between two
 * uses of one copy exceed 3x it (runner_internal.h says why). The result
 * records N and the footprint, and warns when memory caps N below that or the
 * cache size is unknown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "measure/runner_internal.h"

/* Bytes of one copy of every operand. */
static double operand_bytes(const mb__run_t *r) {
  double b = 0;
  for (uint32_t i = 0; i < r->num_operands; i++)
    b += (double)mb_tensor_nbytes(r->tensors[i]);
  return b;
}

uint32_t mb__rotate_copies(double cache, double per_copy) {
  if (!(per_copy > 0)) return 1;
  double n = floor(MB__ROTATE_CACHE_FACTOR * cache / per_copy) + 2;
  double cap = floor(MB__ROTATE_MAX_BYTES / per_copy);
  if (n > cap) n = cap;
  if (n > MB__ROTATE_MAX_COPIES) n = MB__ROTATE_MAX_COPIES;
  return n < 2 ? 2 : (uint32_t)n;
}

static mb_status_t make_copy(mb__run_t *r, mb__copy_t *c) {
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
  mb_status_t st = mb__run_prepare(r, &c->call, &c->args, &c->kstate);
  c->prepared = st == MB_OK;
  return st;
}

mb_status_t mb__run_setup_rotation(mb__run_t *r, mb_result_t *res) {
  const double cache = (double)r->dev->info.cache_bytes[2];
  const double per_copy = operand_bytes(r);
  uint32_t n = mb__rotate_copies(cache, per_copy);
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
  if (cache > 0 && (n - 1) * per_copy <= MB__ROTATE_CACHE_FACTOR * cache) {
    char w[256];
    snprintf(w, sizeof w,
             "rotate: %u copies of %.0f bytes do not exceed %.0f x the "
             "%.0f-byte last-level cache (memory cap %.0f bytes); operands "
             "may be partly cached",
             n, per_copy, MB__ROTATE_CACHE_FACTOR, cache, MB__ROTATE_MAX_BYTES);
    mb__result_warn(res, w);
  }
  return MB_OK;
}

mb_status_t mb__run_copy(mb__run_t *r, uint32_t i) {
  if (i == 0) return mb__run_kernel_fn(r)(mb__run_kernel_state(r), &r->call);
  mb__copy_t *c = &r->copies[i - 1];
  c->ran = 1;
  return mb__run_once(r, c->kstate, &c->call, &c->args);
}

mb_status_t mb__run_collect(mb__run_t *r, uint32_t i) {
  const mb_backend_kernel_t *k = r->kernel.bk; /* the loader's full copy */
  if (!k || !k->collect) return MB_OK;
  if (i == 0) return k->collect(r->kstate, &r->call);
  mb__copy_t *c = &r->copies[i - 1];
  return k->collect(c->kstate, &c->call);
}

void mb__run_teardown_copies(mb__run_t *r) {
  for (uint32_t i = 1; i < r->num_copies; i++) {
    mb__copy_t *c = &r->copies[i - 1];
    if (c->prepared) mb__run_release(r, c->kstate, &c->args);
    for (uint32_t k = 0; k < r->num_operands; k++)
      mb_tensor_destroy(c->tensors[k]);
  }
  free(r->copies);
}
