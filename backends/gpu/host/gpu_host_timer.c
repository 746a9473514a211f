/* The GPU backends' timing method (docs/measurement.md#gpu-timing), for
 * CUDA, HIP and the emulated GPU alike.
 *
 * Events on the device's stream bracket a batch of runs, so the elapsed
 * time is the GPU's. A blocking kernel holds the stream while the host
 * enqueues the start event, the runs and the stop event, so the GPU starts
 * on a full queue and the host's launch latency is not timed. At most
 * MB_GPUH_MAX_QUEUED launches may wait behind it: the stream's launch queue
 * is finite, and a host stuck in a launch on a full queue never releases
 * the kernel (it then times out, and that sample timed the wait). Launches,
 * not runs, are what fill the queue, and one run can be many (a GEMM that
 * quantizes its inputs, a 40-step composite), so a timing first counts
 * them: it captures one run into a graph and counts its nodes. Then, per
 * batch:
 *  - runs that launch nothing on the stream (host-only work), or whose
 *    launches fit under the cap: plain launches behind the blocking kernel;
 *  - more: the batch is captured once into a graph, instantiated and
 *    uploaded before any timed region, and that one graph launch is reused
 *    by every sample of the same batch size until the timing ends;
 *  - a run that cannot be captured (a library without capture support, a
 *    run that synchronises): chunks that fit under the cap (one run each
 *    when its launches are unknown), each behind the blocking kernel, their
 *    times summed; the gaps between chunks are outside the events.
 * The blocking kernel sets a flag if it gives up waiting; the host reads it
 * after the sample, and such a sample is dropped (NAN), never kept.
 *
 * A collective library's run (NCCL, RCCL: gpu_ccl.c) is the exception: its
 * kernel waits for the other ranks' kernels, so it is never held behind
 * the blocking kernel nor captured; its batch is launched back to back
 * between two events (nccl-tests' way, which times with the host's clock
 * around the same loop), the runner's barrier having aligned the ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ccl.h"
#include "gpu_host.h"

enum method { M_NONE, M_PLAIN, M_GRAPH, M_CHUNKS, M_DIRECT };

struct mb_gpuh_timing {
  mb_gpuh_state_t *st;
  mb_gpuh_device_t *d;
  mb_kernel_run_fn run;
  void *kstate;
  const mb_kernel_call_t *call;
  long launches;      /* per run; -1 not counted yet, -2 unknown (no capture) */
  const char *direct; /* why the runs are timed by events alone, or NULL */
  char no_capture[256];     /* why a run could not be captured */
  mb_gpu_graph_exec_t exec; /* a graph of exec_batch runs, uploaded */
  uint32_t exec_batch;
  uint32_t graphs;  /* graphs instantiated */
  uint32_t dropped; /* samples invalidated by a blocking-kernel timeout */
  enum method last; /* how the last batch was timed */
  uint32_t last_batch, last_chunk;
  char method_text[640];
  char launches_text[300];
};

/* ---- set-up -------------------------------------------------------------- */

mb_status_t mb__gpuh_timer_init(mb_gpuh_state_t *st, mb_gpuh_device_t *d) {
  mb_status_t s;
  void *flags = NULL;
  if ((s = mb__gpuh_check(st, mb_gpu_event_create(&d->start), "event")) !=
          MB_OK ||
      (s = mb__gpuh_check(st, mb_gpu_event_create(&d->stop), "event")) !=
          MB_OK ||
      (s = mb__gpuh_check(st,
                          mb_gpu_host_alloc_mapped(&flags, 2 * sizeof(int32_t)),
                          "host-mapped flags")) != MB_OK)
    return s;
  d->flags_host = flags;
  d->flags_host[0] = 1;
  d->flags_host[1] = 0;
  if ((s = mb__gpuh_check(st,
                          mb_gpu_host_device_ptr((void **)&d->flags_dev, flags),
                          "host-mapped flags (device pointer)")) != MB_OK)
    return s;
  /* Without code for this device even the blocking kernel cannot run; the
   * vendor libraries still can, timed without it (and the result says so). */
  snprintf(d->timer_info, sizeof d->timer_info,
           "%s events on the stream; %s; at most %u launches queued, more "
           "in a graph uploaded before the samples; samples whose blocking "
           "kernel timed out are dropped%s%s",
           st->vendor->device_word,
           d->own_code ? "a blocking kernel holds the stream while a sample "
                         "is enqueued"
                       : "no blocking kernel (no code for this GPU): launch "
                         "latency before the first run is timed",
           MB_GPUH_MAX_QUEUED, st->vendor->timer_note ? "; " : "",
           st->vendor->timer_note ? st->vendor->timer_note : "");
  return MB_OK;
}

void mb__gpuh_timer_fini(mb_gpuh_device_t *d) {
  if (d->start) mb_gpu_event_destroy(d->start);
  if (d->stop) mb_gpu_event_destroy(d->stop);
  if (d->flags_host) mb_gpu_host_free((void *)d->flags_host);
  d->start = d->stop = NULL;
  d->flags_host = NULL;
}

/* ---- one timed region ---------------------------------------------------- */

static mb_status_t enqueue(mb_gpuh_timing_t *t, mb_gpu_graph_exec_t exec,
                           uint32_t runs) {
  if (exec)
    return mb__gpuh_check(t->st, mb_gpu_graph_launch(exec, t->d->stream),
                          "graph launch");
  for (uint32_t i = 0; i < runs; i++) {
    const mb_status_t s = t->run(t->kstate, t->call);
    if (s != MB_OK) return s;
  }
  return MB_OK;
}

/* Blocking kernel, start, the work, stop, release, wait. The flag is
 * released on every path, or the stream would stay blocked. *ns is NAN
 * when the blocking kernel gave up before the release. */
static mb_status_t timed(mb_gpuh_timing_t *t, mb_gpu_graph_exec_t exec,
                         uint32_t runs, double *ns) {
  mb_gpuh_state_t *st = t->st;
  mb_gpuh_device_t *d = t->d;
  d->flags_host[0] = 0;
  d->flags_host[1] = 0;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  mb_status_t s = MB_OK;
  if (d->own_code && !t->direct)
    s = mb__gpuh_check(
        st,
        mb__gpu_launch_block(d->stream, d->flags_dev, d->flags_dev + 1,
                             MB_GPUH_BLOCK_TIMEOUT_S),
        "blocking kernel");
  if (s == MB_OK)
    s = mb__gpuh_check(st, mb_gpu_event_record(d->start, d->stream), "event");
  if (s == MB_OK) s = enqueue(t, exec, runs);
  if (s == MB_OK)
    s = mb__gpuh_check(st, mb_gpu_event_record(d->stop, d->stream), "event");
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  d->flags_host[0] = 1;
  const mb_status_t sync =
      mb__gpuh_check(st, mb_gpu_stream_sync(d->stream), "running the batch");
  if (s != MB_OK) return s;
  if (sync != MB_OK) return sync;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (d->flags_host[1]) {
    t->dropped++;
    *ns = NAN;
    st->host.set_error(
        "%s: the blocking kernel timed out after %.0f s before the host "
        "released it (the work queued behind it filled the launch queue?): "
        "the sample timed the wait and was dropped",
        st->vendor->name, MB_GPUH_BLOCK_TIMEOUT_S);
    return MB_OK;
  }
  float ms = 0;
  s = mb__gpuh_check(st, mb_gpu_event_elapsed_ms(&ms, d->start, d->stop),
                     "event time");
  *ns = (double)ms * 1e6;
  return s;
}

/* ---- capture ------------------------------------------------------------- */

/* `runs` runs captured into *graph, or an error in t->no_capture (the
 * stream always leaves capture mode). */
static int capture(mb_gpuh_timing_t *t, uint32_t runs, mb_gpu_graph_t *graph) {
  mb_gpuh_device_t *d = t->d;
  *graph = NULL;
  mb_gpu_error_t e = mb_gpu_capture_begin(d->stream);
  if (e != mb_gpu_success) {
    snprintf(t->no_capture, sizeof t->no_capture, "%s (%s)",
             mb_gpu_error_string(e), mb_gpu_error_name(e));
    (void)mb_gpu_get_last_error();
    return 0;
  }
  mb_status_t rs = MB_OK;
  for (uint32_t i = 0; i < runs && rs == MB_OK; i++)
    rs = t->run(t->kstate, t->call);
  e = mb_gpu_capture_end(d->stream, graph);
  if (rs == MB_OK && e == mb_gpu_success) return 1;
  if (rs != MB_OK)
    snprintf(t->no_capture, sizeof t->no_capture,
             "the run failed under stream capture (status %d)", (int)rs);
  else
    snprintf(t->no_capture, sizeof t->no_capture, "%s (%s)",
             mb_gpu_error_string(e), mb_gpu_error_name(e));
  (void)mb_gpu_get_last_error(); /* capture errors are not sticky */
  if (*graph) mb_gpu_graph_destroy(*graph);
  *graph = NULL;
  return 0;
}

/* The launches one run makes: the nodes of a graph of one run. */
static void count_launches(mb_gpuh_timing_t *t) {
  mb_gpu_graph_t g;
  size_t n = 0;
  if (!capture(t, 1, &g)) {
    t->launches = -2;
    return;
  }
  if (mb_gpu_graph_nodes(g, &n) != mb_gpu_success) {
    (void)mb_gpu_get_last_error();
    snprintf(t->no_capture, sizeof t->no_capture,
             "the runtime could not count a graph's nodes");
    n = 0;
    t->launches = -2;
  } else {
    t->launches = (long)n;
  }
  mb_gpu_graph_destroy(g);
}

/* A graph of `batch` runs, instantiated and uploaded (untimed); kept for
 * every later sample of that batch size. 0 when capture fails. */
static int ensure_graph(mb_gpuh_timing_t *t, uint32_t batch,
                        mb_status_t *status) {
  *status = MB_OK;
  if (t->exec && t->exec_batch == batch) return 1;
  if (t->exec) mb_gpu_graph_exec_destroy(t->exec);
  t->exec = NULL;
  mb_gpu_graph_t g;
  if (!capture(t, batch, &g)) return 0;
  mb_gpu_graph_exec_t x = NULL;
  *status = mb__gpuh_check(t->st, mb_gpu_graph_instantiate(&x, g),
                           "graph instantiation");
  mb_gpu_graph_destroy(g);
  if (*status == MB_OK)
    *status = mb__gpuh_check(t->st, mb_gpu_graph_upload(x, t->d->stream),
                             "graph upload");
  if (*status == MB_OK)
    *status =
        mb__gpuh_check(t->st, mb_gpu_stream_sync(t->d->stream), "graph upload");
  if (*status != MB_OK) {
    if (x) mb_gpu_graph_exec_destroy(x);
    return 0;
  }
  t->exec = x;
  t->exec_batch = batch;
  t->graphs++;
  return 1;
}

/* ---- a timing ------------------------------------------------------------ */

mb_status_t mb__gpuh_timing_begin(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                                  mb_kernel_run_fn run, void *kstate,
                                  const mb_kernel_call_t *call,
                                  mb_gpuh_timing_t **out) {
  mb_gpuh_timing_t *t = calloc(1, sizeof *t);
  if (!t) {
    st->host.set_error("%s: out of memory for a timing", st->vendor->name);
    return MB_ERR_NO_MEMORY;
  }
  *t = (mb_gpuh_timing_t){.st = st,
                          .d = d,
                          .run = run,
                          .kstate = kstate,
                          .call = call,
                          .launches = -1,
                          .direct = mb__gpuh_ccl_direct(run)};
  *out = t;
  return MB_OK;
}

void mb__gpuh_timing_end(mb_gpuh_timing_t *t) {
  if (!t) return;
  if (t->exec) {
    (void)mb_gpu_set_device(t->d->ordinal);
    mb_gpu_graph_exec_destroy(t->exec);
    (void)mb_gpu_get_last_error();
  }
  free(t);
}

/* Runs per chunk when a batch cannot be one graph: as many as fit under the
 * cap, one when the launches of a run are unknown. */
static uint32_t chunk_runs(const mb_gpuh_timing_t *t) {
  if (t->launches <= 0) return 1;
  const long n = (long)MB_GPUH_MAX_QUEUED / t->launches;
  return n > 1 ? (uint32_t)n : 1u;
}

static mb_status_t time_chunks(mb_gpuh_timing_t *t, uint32_t batch,
                               double *ns) {
  const uint32_t per = chunk_runs(t);
  double total = 0;
  mb_status_t s = MB_OK;
  for (uint32_t done = 0; done < batch && s == MB_OK;) {
    const uint32_t n = batch - done < per ? batch - done : per;
    double part = 0;
    s = timed(t, NULL, n, &part);
    total += part; /* a dropped chunk makes the whole sample NAN */
    done += n;
  }
  t->last = M_CHUNKS;
  t->last_chunk = per;
  *ns = total;
  return s;
}

mb_status_t mb__gpuh_timing_batch(mb_gpuh_timing_t *t, uint32_t batch,
                                  double *ns) {
  mb_status_t s =
      mb__gpuh_check(t->st, mb_gpu_set_device(t->d->ordinal), "set device");
  if (s != MB_OK) return s;
  t->last_batch = batch;
  if (t->direct) {
    t->last = M_DIRECT;
    return timed(t, NULL, batch, ns);
  }
  if (t->launches == -1) count_launches(t);
  /* Runs that launch nothing on the stream (host-only work) always fit. */
  if (t->launches >= 0 &&
      (uint64_t)batch * (uint64_t)t->launches <= MB_GPUH_MAX_QUEUED) {
    t->last = M_PLAIN;
    return timed(t, NULL, batch, ns);
  }
  if (t->launches > 0) {
    if (ensure_graph(t, batch, &s)) {
      t->last = M_GRAPH;
      return timed(t, t->exec, batch, ns);
    }
    if (s != MB_OK) return s;
  }
  MB_GPUH_LOG(t->st, MB_LOG_DEBUG,
              "%s: a run could not be captured into a graph (%s); timing "
              "the batch of %u in chunks of %u",
              t->st->vendor->name, t->no_capture, batch, chunk_runs(t));
  return time_chunks(t, batch, ns);
}

uint32_t mb__gpuh_timing_notes(mb_gpuh_timing_t *t, mb_kernel_note_t *out,
                               uint32_t max) {
  mb_kernel_note_t n[4];
  uint32_t c = 0;
  const char *dev = t->st->vendor->device_word;
  switch (t->last) {
    case M_PLAIN:
      snprintf(t->method_text, sizeof t->method_text,
               "plain launches behind the blocking kernel (%u runs a sample)",
               t->last_batch);
      break;
    case M_GRAPH:
      snprintf(t->method_text, sizeof t->method_text,
               "%s graph of %u runs, instantiated and uploaded before the "
               "samples, launched once a sample",
               dev, t->last_batch);
      break;
    case M_CHUNKS:
      snprintf(t->method_text, sizeof t->method_text,
               "chunks of %u run(s) behind the blocking kernel, their times "
               "summed: the run could not be captured into a graph: %s",
               t->last_chunk, t->no_capture);
      break;
    case M_DIRECT:
      snprintf(t->method_text, sizeof t->method_text,
               "%u runs launched back to back between two events, no "
               "blocking kernel or graph: %s",
               t->last_batch, t->direct);
      break;
    default:
      snprintf(t->method_text, sizeof t->method_text, "not timed");
  }
  n[c++] = (mb_kernel_note_t){"timing", t->method_text, 0};
  if (t->launches >= 0) {
    n[c++] = (mb_kernel_note_t){"launches_per_run", NULL, (double)t->launches};
  } else if (t->launches == -2) {
    snprintf(t->launches_text, sizeof t->launches_text,
             "unknown (no capture: %s)", t->no_capture);
    n[c++] = (mb_kernel_note_t){"launches_per_run", t->launches_text, 0};
  }
  if (t->graphs)
    n[c++] = (mb_kernel_note_t){"graphs_instantiated", NULL, (double)t->graphs};
  if (t->dropped)
    n[c++] = (mb_kernel_note_t){"samples_dropped", NULL, (double)t->dropped};
  for (uint32_t i = 0; i < c && i < max; i++) out[i] = n[i];
  return c;
}

/* ---- helpers for the library and the vendors ----------------------------- */

mb_status_t mb__gpuh_time_batch(void *state, uint32_t dev, mb_kernel_run_fn run,
                                void *kstate, const mb_kernel_call_t *call,
                                uint32_t batch, double *elapsed_ns) {
  mb_gpuh_device_t *d = mb__gpuh_device(state, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  mb_gpuh_timing_t *t = NULL;
  mb_status_t s = mb__gpuh_timing_begin(state, d, run, kstate, call, &t);
  if (s == MB_OK) s = mb__gpuh_timing_batch(t, batch, elapsed_ns);
  mb__gpuh_timing_end(t);
  return s;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define MB_GPUH_MAX_TUNE_BATCH 10000u

mb_status_t mb__gpuh_time_median(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                                 mb_kernel_run_fn run, void *kstate,
                                 const mb_kernel_call_t *call, uint32_t samples,
                                 double min_ns, double slow_ns,
                                 double *median_ns) {
  double v[64];
  if (samples == 0 || samples > 64) samples = 64;
  mb_gpuh_timing_t *t = NULL;
  mb_status_t s = mb__gpuh_timing_begin(st, d, run, kstate, call, &t);
  if (s != MB_OK) return s;
  double one = NAN;
  s = mb__gpuh_timing_batch(t, 1, &one); /* also warms up */
  uint32_t batch = 1;
  if (one > slow_ns) samples = 1;
  if (s == MB_OK && one > 0 && one < min_ns) {
    const double b = ceil(min_ns / one);
    batch = b > MB_GPUH_MAX_TUNE_BATCH ? MB_GPUH_MAX_TUNE_BATCH : (uint32_t)b;
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < samples && s == MB_OK; i++) {
    double ns = NAN;
    s = mb__gpuh_timing_batch(t, batch, &ns);
    if (s == MB_OK && !isnan(ns)) v[n++] = ns / batch;
  }
  mb__gpuh_timing_end(t);
  if (s != MB_OK) return s;
  if (n == 0) {
    st->host.set_error("%s: no valid sample: %s", st->vendor->name,
                       "every sample's blocking kernel timed out");
    return MB_ERR_BACKEND;
  }
  qsort(v, n, sizeof *v, cmp_double);
  *median_ns = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return MB_OK;
}

/* ---- the vtable's timing hooks ------------------------------------------- */

mb_status_t mb__gpuh_vt_timing_begin(void *state, uint32_t dev,
                                     mb_kernel_run_fn run, void *kstate,
                                     const mb_kernel_call_t *call,
                                     void **timing) {
  mb_gpuh_device_t *d = mb__gpuh_device(state, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  return mb__gpuh_timing_begin(state, d, run, kstate, call,
                               (mb_gpuh_timing_t **)timing);
}

mb_status_t mb__gpuh_vt_timing_batch(void *timing, uint32_t batch,
                                     double *elapsed_ns) {
  return mb__gpuh_timing_batch(timing, batch, elapsed_ns);
}

uint32_t mb__gpuh_vt_timing_notes(void *timing, mb_kernel_note_t *out,
                                  uint32_t max) {
  return mb__gpuh_timing_notes(timing, out, max);
}

void mb__gpuh_vt_timing_end(void *timing) {
  mb__gpuh_timing_end(timing);
}
