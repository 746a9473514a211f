/* Internal: how the library times one run on one device, batch after
 * batch — through the backend's timing hooks when it has them (so a GPU
 * backend can keep what it builds for that run, a graph of a batch, until
 * the timing ends), else through time_batch. The runner, a composite's
 * per-step breakdown and the timer calibration all time this way. */
#ifndef MB_LIB_TIMING_H
#define MB_LIB_TIMING_H

#include "internal.h"
#include "results/result.h"

typedef struct mb__timing {
  const mb__backend_t *b;
  uint32_t dev;
  mb_kernel_run_fn run;
  void *kstate;
  const mb_kernel_call_t *call;
  void *bt; /* the backend's timing; NULL: time_batch */
} mb__timing_t;

mb_status_t mb__timing_begin(mb__timing_t *t, const mb_device_t *dev,
                             mb_kernel_run_fn run, void *kstate,
                             const mb_kernel_call_t *call);
/* The elapsed ns of `batch` runs; NAN when the backend dropped the sample
 * (mb_error_last() says why). */
mb_status_t mb__timing_batch(mb__timing_t *t, uint32_t batch, double *ns);
/* The backend's facts about how it timed, as notes of res. */
mb_status_t mb__timing_notes(mb__timing_t *t, mb_result_t *res);
/* MB_OK when the device's backend can flush that way (every backend can
 * write, or has nothing to flush; reading needs flush_cache_with), else
 * MB_ERR_UNSUPPORTED with the reason. */
mb_status_t mb__timing_flush_check(const mb_device_t *dev, mb_flush_t how);
/* Evicts the device's caches before a cold sample, outside it: by the
 * backend's read flush for MB_FLUSH_READ, else its flush (write); nothing
 * when it has none. MB_ERR_UNSUPPORTED when it cannot flush that way. */
mb_status_t mb__timing_flush(const mb_device_t *dev, mb_flush_t how);
/* Idempotent; a zeroed timing is ended already. */
void mb__timing_end(mb__timing_t *t);

/* A named range in the device's profiler (NVTX, roctx: the backend's
 * range_push / range_pop), around a benchmark and each of its samples,
 * outside what is timed; nothing when the backend has none. Pushes and
 * pops nest. has_ranges: whether a name is worth formatting. */
void mb__device_range_push(mb_device_t *dev, const char *name);
void mb__device_range_pop(mb_device_t *dev);
int mb__device_has_ranges(const mb_device_t *dev);

#endif
