/* The timer's resolution and per-sample overhead, measured once per device
 * and context before any timing is trusted. Below the runner: the runner's
 * sampling asks for it (mb__device_timer), and it times empty runs through
 * the backend's own timer, not through the runner. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "measure/stats.h"
#include "measure/timing.h"

/* Enough empty samples to see the timer's step and a stable median, yet a
 * few milliseconds even with GPU events (~10 us each). */
#define MB__TIMER_READINGS 1000u

static mb_status_t empty_run(void *kstate, const mb_kernel_call_t *call) {
  (void)kstate, (void)call;
  return MB_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The resolution is the step between the values the timer actually
 * lands on: a timer that counts in 1 us steps shows only multiples of 1 us,
 * however cheap it is to read. Conversions to ns add stray values one off
 * the real levels (20 and 21 ns for a 10 ns step, 21 in ~2 % of readings),
 * so only values that hold at least 10 % of the readings count as levels;
 * with fewer than two such levels the smallest step between any two
 * distinct readings (or the smallest nonzero reading) stands in. */
static double smallest_step(const double *sorted, size_t n, size_t min_count,
                            size_t *levels) {
  double step = INFINITY, prev = NAN;
  *levels = 0;
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i; j < n && sorted[j] == sorted[i];) j++;
    if (j - i < min_count) continue;
    if (isnan(prev) && sorted[i] > 0) step = sorted[i];
    if (!isnan(prev) && sorted[i] - prev < step) step = sorted[i] - prev;
    prev = sorted[i];
    ++*levels;
  }
  return step;
}

static double resolution_of(const double *sorted, size_t n) {
  size_t levels;
  double step = smallest_step(sorted, n, n / 10 > 2 ? n / 10 : 2, &levels);
  if (levels < 2) step = smallest_step(sorted, n, 1, &levels);
  return isfinite(step) ? step : NAN;
}

mb_status_t mb__device_timer(mb_device_t *dev) {
  if (dev->cal.timer_readings) return MB_OK;
  double *ns = malloc(MB__TIMER_READINGS * sizeof *ns);
  if (!ns) return mb__fail(MB_ERR_NO_MEMORY, "out of memory (timer)");
  mb_op_params_t params = MB_OP_PARAMS_INIT;
  const mb_kernel_call_t call = {sizeof call, &params, NULL,       0,
                                 NULL,        0,       dev->index, 0u};
  mb__timing_t t;
  uint32_t n = 0, tries = 0;
  mb_status_t st = mb__timing_begin(&t, dev, empty_run, NULL, &call);
  /* A reading the timer dropped is not one; a timer that drops most of
   * them is not trusted. */
  while (st == MB_OK && n < MB__TIMER_READINGS &&
         tries++ < 2 * MB__TIMER_READINGS) {
    st = mb__timing_batch(&t, 1, &ns[n]);
    if (st == MB_OK && !isnan(ns[n])) n++;
  }
  mb__timing_end(&t);
  if (st == MB_OK && n < MB__TIMER_READINGS)
    st = mb__fail(MB_ERR_BACKEND,
                  "the device's timer dropped %u of %u empty samples: %s",
                  tries - n, tries, mb_error_last());
  if (st == MB_OK) {
    qsort(ns, n, sizeof *ns, cmp_double);
    dev->cal.struct_size = sizeof dev->cal;
    dev->cal.timer_resolution_ns = resolution_of(ns, n);
    dev->cal.timer_overhead_ns = mb__quantile_sorted(ns, n, 0.5);
    dev->cal.timer_readings = n;
  }
  free(ns);
  return st;
}
