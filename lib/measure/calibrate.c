/* What the library measures about a device above the runner: whether a
 * cache flush really evicts (timed copies run as benchmarks), the public
 * calibration record, and the backend's environment facts. The timer's own
 * resolution and overhead are timer.c's, below the runner. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "results/result.h"
#include "measure/stats.h"
#include "measure/timing.h"

/* ---- the flush check ----------------------------------------------------- */

/* Copy operands of 1/8 of the last-level cache each: both fit in it with
 * room to spare, so a hot re-read hits and a flushed one cannot. */
#define MB__FLUSH_CHECK_SAMPLES 31u

static void flush_note(mb_device_t *dev, const char *fmt, ...) MB__FMT(2, 3);
static void flush_note(mb_device_t *dev, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dev->cal_note, sizeof dev->cal_note, fmt, ap);
  va_end(ap);
  dev->cal.flush_note = dev->cal_note;
}

static mb_status_t timed_copy(mb_device_t *dev, mb_cache_policy_t cache,
                              int64_t rows, mb_result_t **out) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = rows;
  p.shape[1] = 1024;
  p.dtype = MB_DTYPE_F32;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "copy";
  s.params = &p;
  s.backend = dev->backend->name;
  s.device = dev->index;
  s.cache = cache;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = MB__FLUSH_CHECK_SAMPLES;
  s.batch = 1; /* the same single-run samples under both policies */
  s.warmup_runs = 3;
  s.warmup_s = 0;
  return mb_bench_run(dev->ctx, &s, out);
}

static void flush_check(mb_device_t *dev) {
  const mb__backend_t *b = dev->backend;
  const double llc = (double)dev->info.cache_bytes[2];
  if (!b->vt->flush_cache) {
    flush_note(dev, "not checked: backend %s cannot flush its caches", b->name);
    return;
  }
  if (!(llc > 0)) {
    flush_note(dev, "not checked: the last-level cache size of %s is unknown",
               dev->info.name);
    return;
  }
  int64_t rows = (int64_t)(llc / 8 / (1024 * sizeof(float)));
  if (rows < 1) rows = 1;
  mb_result_t *hot = NULL, *cold = NULL;
  if (timed_copy(dev, MB_CACHE_HOT, rows, &hot) != MB_OK ||
      timed_copy(dev, MB_CACHE_COLD, rows, &cold) != MB_OK ||
      hot->info.status != MB_RESULT_OK || cold->info.status != MB_RESULT_OK) {
    const char *why = hot && hot->info.status != MB_RESULT_OK ? hot->reason
                      : cold && cold->info.status != MB_RESULT_OK
                          ? cold->reason
                          : mb_error_last();
    flush_note(dev, "not checked: the copy benchmark did not run: %s", why);
  } else {
    mb_calibration_t *c = &dev->cal;
    c->flush_checked = 1;
    c->flush_hot_ns = hot->stats.median;
    c->flush_cold_ns = cold->stats.median;
    c->flush_ratio = c->flush_cold_ns / c->flush_hot_ns;
    c->flush_bytes = hot->derived.bytes;
    c->flush_pass = cold->stats.p25 > hot->stats.median;
    char text[160];
    snprintf(text, sizeof text,
             "copy f32 %lldx1024 (%.3g MB per run, LLC %.3g MB), %u samples "
             "each: flushed p25 %s hot median",
             (long long)rows, c->flush_bytes / 1e6, llc / 1e6,
             MB__FLUSH_CHECK_SAMPLES, c->flush_pass ? ">" : "<=");
    flush_note(dev, "%s", text);
  }
  mb_result_destroy(hot);
  mb_result_destroy(cold);
}

mb_status_t mb_device_calibration(mb_device_t *dev, mb_calibration_t *out) {
  if (!dev)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_device_calibration: NULL device");
  mb_status_t st = mb__device_timer(dev);
  if (st != MB_OK) return st;
  if (!dev->cal_flush_done) {
    dev->cal_flush_done = 1; /* also guards against re-entry */
    flush_check(dev);
  }
  mb_calibration_t cal = dev->cal;
  if (!cal.flush_note) cal.flush_note = "";
  return mb__struct_out(MB__STRUCT_CALIBRATION, "mb_device_calibration", &cal,
                        out);
}

/* ---- environment facts --------------------------------------------------- */

static void read_facts(mb_device_t *dev) {
  if (dev->facts_ready) return;
  dev->facts_ready = 1;
  const mb__backend_t *b = dev->backend;
  if (!MB__VT_HAS(b->vt, environment)) return;
  uint32_t n =
      b->vt->environment(b->state, dev->index, dev->facts, MB__MAX_FACTS);
  dev->num_facts = n < MB__MAX_FACTS ? n : MB__MAX_FACTS;
}

size_t mb_device_fact_count(mb_device_t *dev) {
  if (!dev) return 0;
  read_facts(dev);
  return dev->num_facts;
}

mb_status_t mb_device_fact(mb_device_t *dev, size_t i, const char **key,
                           const char **text, double *value) {
  if (!dev || i >= mb_device_fact_count(dev))
    return mb__fail(MB_ERR_INVALID_ARG, "mb_device_fact: index %zu of %zu", i,
                    dev ? (size_t)dev->num_facts : 0);
  if (key) *key = dev->facts[i].key;
  if (text) *text = dev->facts[i].text;
  if (value) *value = dev->facts[i].value;
  return MB_OK;
}
