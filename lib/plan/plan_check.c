/* A plan checked whole against a context before anything runs: every
 * entry's backend is one the context knows and every `impl` names a
 * kernel of its op there. Without this, the entries before a bad one ran
 * (minutes of them) and then the run stopped with exit 2; --dry-run said
 * nothing. A backend without a device is not an input error: its entries
 * are skipped when run, as --dry-run predicts. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "models/composite.h"
#include "ops/kernel.h"
#include "plan/plan_internal.h"

/* What a spec names that the context must know: its backend, and the
 * implementation on that backend. A backend without a device is no input
 * error (its results are skipped, saying why). */
static mb_status_t check_spec(mb_context_t *ctx, const mb_bench_spec_t *s) {
  mb_device_t *dev = NULL;
  mb_status_t st = s->backend ? mb_device_find(ctx, s->backend, s->device, &dev)
                              : mb__device_default(ctx, s->device, &dev);
  if (st == MB_ERR_NOT_FOUND) return st; /* an unknown backend */
  const mb_op_t *op = mb_op_find(s->op);
  if (!dev || !op || !s->impl) return MB_OK; /* skipped when run */
  if (mb_op_is_composite(op) && !strcmp(s->impl, MB__COMPOSITE_IMPL))
    return MB_OK;
  return mb__kernel_impl_known(ctx, op, dev->backend, s->impl, 1);
}

static mb_status_t check_entry(mb_context_t *ctx, const plan_entry_t *e) {
  if (*e->pub.skip_reason) return MB_OK; /* the file's own skip */
  return check_spec(ctx, &e->pub.spec);
}

mb_status_t mb_bench_check(mb_context_t *ctx, const mb_bench_spec_t *spec) {
  if (!ctx || !spec || !spec->op)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_bench_check: NULL argument");
  return check_spec(ctx, spec);
}

mb_status_t mb_plan_check(mb_context_t *ctx, const mb_plan_t *plan) {
  if (!ctx || !plan)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_plan_check: NULL argument");
  for (size_t i = 0; i < plan->count; i++) {
    mb_status_t st = check_entry(ctx, &plan->entries[i]);
    if (st != MB_OK) {
      mb__error_prefix("%s", plan->entries[i].pub.name);
      return st;
    }
  }
  return MB_OK;
}
