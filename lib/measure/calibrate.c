/* What the library measures about a device above the runner: whether a
 * cache flush really evicts and the memory's copy bandwidth (timed copies
 * run as benchmarks), the public calibration record, and the backend's
 * environment facts. The timer's own
 * resolution and overhead are timer.c's, below the runner. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "results/result.h"
#include "measure/stats.h"
#include "measure/timing.h"
#include "measure/trace.h"
#include "ops/kernel.h"

/* ---- the flush check ----------------------------------------------------- */

/* Copy operands of 1/8 of the last-level cache each: both fit in it with
 * room to spare, so a hot re-read hits and a flushed one cannot. */
#define MB__FLUSH_CHECK_SAMPLES 31u

/* A calibration note: formatted into the device's buffer, which the
 * public record's string field then points at. */
static void set_note(char *buf, size_t cap, const char **field, const char *fmt,
                     ...) MB__FMT(4, 5);
static void set_note(char *buf, size_t cap, const char **field, const char *fmt,
                     ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  *field = buf;
}
#define flush_note(dev, ...)                                               \
  set_note((dev)->cal_note, sizeof(dev)->cal_note, &(dev)->cal.flush_note, \
           __VA_ARGS__)
#define copy_note(dev, ...)                                  \
  set_note((dev)->cal_copy_note, sizeof(dev)->cal_copy_note, \
           &(dev)->cal.copy_note, __VA_ARGS__)

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
  if (mb__flush_cache_load(dev, dev->cal_note, sizeof dev->cal_note)) {
    dev->cal.flush_note = dev->cal_note;
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
    mb__flush_cache_store(dev, dev->cal_note, sizeof dev->cal_note);
  }
  mb_result_destroy(hot);
  mb_result_destroy(cold);
}

/* ---- the copy bandwidth -------------------------------------------------- */

/* Each operand twice the last-level cache, so the copy streams from and to
 * memory whatever the cache's replacement policy (a footprint of 4x the
 * cache; docs/results/harness.md saw 1-1.5x still partly hit); at least
 * MB__COPY_MIN_BYTES, MB__COPY_UNKNOWN_BYTES when the cache size is
 * unknown. The roof is the fastest sample, as STREAM reports its best
 * rate: a bound on what the memory allows, where a median would take in
 * the interference of a shared machine. */
#define MB__COPY_CACHE_FACTOR 2.0
#define MB__COPY_MIN_BYTES (64.0 * 1024 * 1024)
#define MB__COPY_UNKNOWN_BYTES (256.0 * 1024 * 1024)
#define MB__COPY_WARMUP 3u
#define MB__COPY_SAMPLES 10u

/* Every element of the copy's output is the input's 1.0 (out held zeros):
 * a kernel that skipped work fails. h: a host buffer of out's size. */
static mb_status_t check_copy(const mb_tensor_t *out, float *h, size_t n) {
  mb_status_t st = mb_tensor_copy_to_host(out, h, n * sizeof *h);
  for (size_t i = 0; st == MB_OK && i < n; i++)
    if (h[i] != 1.0f)
      st = mb__fail(MB_ERR_BACKEND,
                    "the copy kernel's output element %zu is %g, not 1", i,
                    (double)h[i]);
  return st;
}

/* The fastest of MB__COPY_SAMPLES single runs of copy kernel k on prepared
 * operands, through the timing every benchmark uses. Not mb_bench_run: a
 * benchmark fills its input with normal random numbers and checks it
 * element by element against the reference, twice, which at these sizes
 * costs seconds in every process; a constant input and one exact pass over
 * the output cost milliseconds and still catch a kernel that skips the
 * work. */
static mb_status_t time_copy(mb_device_t *dev, const mb_op_params_t *p,
                             const mb__kernel_t *k, void **ptrs,
                             double *best_ns) {
  const mb__backend_t *b = dev->backend;
  const mb_kernel_call_t call = {sizeof call, p, ptrs,       1,
                                 ptrs + 1,    1, dev->index, 0u};
  void *ks = NULL;
  mb_status_t st = MB_OK;
  if (k->bk->prepare) st = k->bk->prepare(b->state, &call, &ks);
  mb__timing_t t = {0};
  if (st == MB_OK) st = mb__timing_begin(&t, dev, k->bk->run, ks, &call);
  *best_ns = INFINITY;
  for (uint32_t i = 0; st == MB_OK && i < MB__COPY_WARMUP + MB__COPY_SAMPLES;
       i++) {
    double ns = NAN;
    st = mb__timing_batch(&t, 1, &ns);
    if (i >= MB__COPY_WARMUP && ns < *best_ns) *best_ns = ns; /* NAN: no */
  }
  mb__timing_end(&t);
  if (k->bk->release && ks) k->bk->release(ks);
  if (st == MB_OK && !isfinite(*best_ns))
    st = mb__fail(MB_ERR_BACKEND, "the device's timer dropped every sample");
  return st;
}

/* The operands staged through one host buffer of plain stores: the
 * library's fill converts element by element, which at these sizes is most
 * of the measurement's cost. The backend's first f32 copy kernel and those
 * marked MB_KERNEL_ROOF_COPY (a GPU runtime's memcpy: the first H200 run
 * found it 10 % faster than ours, and a roof from the slower one put other
 * kernels above 100 % of it) are each timed and checked; the fastest is
 * the roof, *name its implementation. */
static mb_status_t copy_bandwidth(mb_device_t *dev, int64_t rows,
                                  double *best_ns, double *bytes,
                                  const char **name) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = rows;
  p.shape[1] = 1024;
  p.dtype = MB_DTYPE_F32;
  const mb_op_t *op = mb_op_find("copy");
  const size_t n = (size_t)rows * 1024;
  float *h = malloc(n * sizeof *h);
  if (!h) return mb__fail(MB_ERR_NO_MEMORY, "out of host memory for a copy");
  mb_tensor_t *in = NULL, *out = NULL;
  mb_status_t st = mb_op_resolve(op, &p);
  if (st == MB_OK) st = mb_tensor_create(dev, p.dtype, p.ndim, p.shape, &in);
  if (st == MB_OK) st = mb_tensor_create(dev, p.dtype, p.ndim, p.shape, &out);
  for (size_t i = 0; st == MB_OK && i < n; i++) h[i] = 1.0f;
  if (st == MB_OK) st = mb_tensor_copy_from_host(in, h, n * sizeof *h);
  void *ptrs[2] = {in ? mb_tensor_data(in) : NULL,
                   out ? mb_tensor_data(out) : NULL};
  *best_ns = INFINITY;
  *name = NULL;
  const mb_backend_kernel_t *after = NULL;
  mb__kernel_t k;
  char why[512] = "";
  while (st == MB_OK &&
         mb__kernel_select_backend(dev->ctx, op, &p, dev, after, &k, why,
                                   sizeof why) == MB_OK) {
    const int first = !after;
    after = k.bk;
    if (!first && !(k.bk->flags & MB_KERNEL_ROOF_COPY)) continue;
    double ns = INFINITY;
    memset(h, 0, n * sizeof *h);
    st = mb_tensor_copy_from_host(out, h, n * sizeof *h);
    if (st == MB_OK) st = time_copy(dev, &p, &k, ptrs, &ns);
    if (st == MB_OK) st = check_copy(out, h, n);
    if (st != MB_OK) mb__error_prefix("copy kernel %s", k.name);
    if (st == MB_OK && ns < *best_ns) *best_ns = ns, *name = k.name;
  }
  if (st == MB_OK && !*name)
    st = mb__fail(MB_ERR_UNSUPPORTED, "no copy kernel: %s", why);
  *bytes = op->bytes(&p);
  mb_tensor_destroy(in);
  mb_tensor_destroy(out);
  free(h);
  return st;
}

static void measure_bandwidth(mb_device_t *dev) {
  if (mb__bandwidth_cache_load(dev, dev->cal_copy_note,
                               sizeof dev->cal_copy_note)) {
    dev->cal.copy_note = dev->cal_copy_note;
    return;
  }
  const double llc = (double)dev->info.cache_bytes[2];
  double bytes = llc > 0 ? MB__COPY_CACHE_FACTOR * llc : MB__COPY_UNKNOWN_BYTES;
  if (bytes < MB__COPY_MIN_BYTES) bytes = MB__COPY_MIN_BYTES;
  const int64_t rows = (int64_t)ceil(bytes / (1024 * sizeof(float)));
  double best_ns = 0, moved = 0;
  const char *name = NULL;
  if (copy_bandwidth(dev, rows, &best_ns, &moved, &name) != MB_OK) {
    copy_note(dev, "not measured: %s", mb_error_last());
    return;
  }
  dev->cal.copy_gbps = moved / best_ns;
  dev->cal.copy_bytes = moved;
  copy_note(dev,
            "copy f32 %lldx1024 (%.3g MB read + written per run, LLC %.3g "
            "MB), fastest of %u single runs of each copy kernel: %s, %.4g ms",
            (long long)rows, moved / 1e6, llc / 1e6, MB__COPY_SAMPLES, name,
            best_ns / 1e6);
  mb__bandwidth_cache_store(dev, dev->cal_copy_note, sizeof dev->cal_copy_note);
}

/* A calibration step in the context's trace (the flush check's copy
 * benchmarks nest in it), named so it is not taken for a result. */
static void trace_step(mb_device_t *dev, const char *what, double t0,
                       const char *note) {
  cJSON *args;
  if (!dev->ctx->trace) return;
  cJSON *ev = mb__trace_slice(what, t0, mb__trace_now_us(), &args);
  if (!ev) return;
  cJSON_AddStringToObject(args, "backend", dev->backend->name);
  cJSON_AddNumberToObject(args, "device_index", dev->index);
  cJSON_AddStringToObject(args, "note", note);
  mb__trace_emit(dev->ctx, ev);
  mb__trace_flush(dev->ctx);
}

double mb__device_bandwidth(mb_device_t *dev) {
  if (!dev->cal_copy_done) {
    dev->cal_copy_done = 1; /* once, whatever the outcome */
    const double t0 = dev->ctx->trace ? mb__trace_now_us() : 0;
    measure_bandwidth(dev);
    trace_step(dev, "calibration: copy bandwidth", t0, dev->cal_copy_note);
  }
  return dev->cal.copy_gbps;
}

mb_status_t mb_device_calibration(mb_device_t *dev, mb_calibration_t *out) {
  if (!dev)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_device_calibration: NULL device");
  mb_status_t st = mb__device_timer(dev);
  if (st != MB_OK) return st;
  if (!dev->cal_flush_done) {
    dev->cal_flush_done = 1; /* also guards against re-entry */
    const double t0 = dev->ctx->trace ? mb__trace_now_us() : 0;
    flush_check(dev);
    trace_step(dev, "calibration: flush check", t0, dev->cal_note);
  }
  mb__device_bandwidth(dev);
  mb_calibration_t cal = dev->cal;
  if (!cal.flush_note) cal.flush_note = "";
  if (!cal.copy_note) cal.copy_note = "";
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
