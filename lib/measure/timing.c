/* Timing one run batch after batch (timing.h). */
#include "measure/timing.h"

#include <string.h>

/* The four hooks come together or not at all (backend.h). */
static int has_timing(const mb_backend_vtable_t *vt) {
  return MB__VT_HAS(vt, timing_begin) && MB__VT_HAS(vt, timing_batch) &&
         MB__VT_HAS(vt, timing_notes) && MB__VT_HAS(vt, timing_end);
}

mb_status_t mb__timing_begin(mb__timing_t *t, const mb_device_t *dev,
                             mb_kernel_run_fn run, void *kstate,
                             const mb_kernel_call_t *call) {
  *t = (mb__timing_t){dev->backend, dev->index, run, kstate, call, NULL};
  if (!has_timing(t->b->vt)) return MB_OK;
  mb_error_clear();
  return t->b->vt->timing_begin(t->b->state, t->dev, run, kstate, call, &t->bt);
}

mb_status_t mb__timing_batch(mb__timing_t *t, uint32_t batch, double *ns) {
  mb_error_clear();
  if (t->bt) return t->b->vt->timing_batch(t->bt, batch, ns);
  return t->b->vt->time_batch(t->b->state, t->dev, t->run, t->kstate, t->call,
                              batch, ns);
}

#define MB__MAX_TIMING_NOTES 8

mb_status_t mb__timing_notes(mb__timing_t *t, mb_result_t *res) {
  if (!t->bt) return MB_OK;
  mb_kernel_note_t notes[MB__MAX_TIMING_NOTES];
  uint32_t n = t->b->vt->timing_notes(t->bt, notes, MB__MAX_TIMING_NOTES);
  if (n > MB__MAX_TIMING_NOTES) n = MB__MAX_TIMING_NOTES;
  mb_status_t st = MB_OK;
  for (uint32_t i = 0; i < n && st == MB_OK; i++)
    st = mb__result_add_note(res, notes[i].key, notes[i].text, notes[i].value);
  return st;
}

void mb__timing_end(mb__timing_t *t) {
  if (t->bt) t->b->vt->timing_end(t->bt);
  t->bt = NULL;
}

mb_status_t mb__timing_flush_check(const mb_device_t *dev, mb_flush_t how) {
  if (how != MB_FLUSH_READ || MB__VT_HAS(dev->backend->vt, flush_cache_with))
    return MB_OK;
  return mb__fail(MB_ERR_UNSUPPORTED,
                  "backend %s has no read-only cache flush (it flushes by "
                  "writing: flush write)",
                  dev->backend->name);
}

mb_status_t mb__timing_flush(const mb_device_t *dev, mb_flush_t how) {
  const mb__backend_t *b = dev->backend;
  mb_error_clear();
  const mb_status_t st = mb__timing_flush_check(dev, how);
  if (st != MB_OK) return st;
  if (how == MB_FLUSH_READ)
    return b->vt->flush_cache_with(b->state, dev->index, how);
  return b->vt->flush_cache ? b->vt->flush_cache(b->state, dev->index) : MB_OK;
}

/* Both or neither: a push without its pop would leave every later range
 * nested in it. */
int mb__device_has_ranges(const mb_device_t *dev) {
  return MB__VT_HAS(dev->backend->vt, range_push) &&
         MB__VT_HAS(dev->backend->vt, range_pop);
}

void mb__device_range_push(mb_device_t *dev, const char *name) {
  const mb__backend_t *b = dev->backend;
  if (mb__device_has_ranges(dev)) b->vt->range_push(b->state, dev->index, name);
}

void mb__device_range_pop(mb_device_t *dev) {
  const mb__backend_t *b = dev->backend;
  if (mb__device_has_ranges(dev)) b->vt->range_pop(b->state, dev->index);
}
