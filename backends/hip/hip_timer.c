/* HIP backend — timing a batch of runs, as the CUDA backend does
 * (cuda_timer.c has the reasoning; docs/measurement.md the method).
 *
 * HIP events on the device's stream bracket the batch; elapsed time is the
 * GPU's. Launch overhead is hidden two ways:
 *  - a blocking kernel holds the stream while the host enqueues the start
 *    event, the runs and the stop event, so the GPU starts on a full queue;
 *  - a batch longer than MB_HIP_MAX_QUEUED runs is captured once into a HIP
 *    graph and launched as one item (the launch queue is finite, and a host
 *    blocked on a full queue behind the blocking kernel would deadlock).
 * Capture and instantiation happen before the blocking kernel, untimed. A
 * run that cannot be captured (a vendor library that does not support
 * stream capture, a kernel synchronising inside) falls back to plain
 * launches in chunks, logged at debug level. */
#include <stdio.h>

#include "hip_internal.h"

/* As nvbench and the CUDA backend: at most 32 launches behind the blocking
 * kernel. */
#define MB_HIP_MAX_QUEUED 32u
/* The blocking kernel gives up after this long. */
#define MB_HIP_BLOCK_TIMEOUT_S 30.0

mb_status_t mb__hip_timer_init(mb_hip_state_t *st, mb_hip_device_t *d) {
  mb_status_t s;
  if ((s = mb__hip_check(st, hipEventCreate(&d->start), "event")) != MB_OK ||
      (s = mb__hip_check(st, hipEventCreate(&d->stop), "event")) != MB_OK)
    return s;
  void *flag = NULL;
  s = mb__hip_check(st,
                    hipHostMalloc(&flag, sizeof(int32_t), hipHostMallocMapped),
                    "host-mapped flag");
  if (s != MB_OK) return s;
  d->flag_host = flag;
  *d->flag_host = 1;
  s = mb__hip_check(st, hipHostGetDevicePointer((void **)&d->flag_dev, flag, 0),
                    "host-mapped flag (device pointer)");
  if (s != MB_OK) return s;
  /* Without code for this device even the blocking kernel cannot run;
   * the vendor libraries still can, timed without it (and the result
   * says so). */
  snprintf(d->timer_info, sizeof d->timer_info,
           "HIP events on the stream; %s; batches over %u runs are one HIP "
           "graph",
           d->own_code ? "a blocking kernel holds the stream while a sample "
                         "is enqueued"
                       : "no blocking kernel (no code object for this GPU): "
                         "launch latency before the first run is timed",
           MB_HIP_MAX_QUEUED);
  return MB_OK;
}

void mb__hip_timer_fini(mb_hip_device_t *d) {
  if (d->start) hipEventDestroy(d->start);
  if (d->stop) hipEventDestroy(d->stop);
  if (d->flag_host) hipHostFree((void *)d->flag_host);
  d->start = d->stop = NULL;
  d->flag_host = NULL;
}

/* Captures `batch` runs into an executable graph; NULL (with the stream
 * out of capture mode) when some run cannot be captured. */
static hipGraphExec_t capture(mb_hip_device_t *d, mb_kernel_run_fn run,
                              void *kstate, const mb_kernel_call_t *call,
                              uint32_t batch, mb_status_t *status) {
  hipGraph_t graph = NULL;
  hipGraphExec_t exec = NULL;
  *status = MB_OK;
  if (hipStreamBeginCapture(d->stream, hipStreamCaptureModeThreadLocal) !=
      hipSuccess) {
    (void)hipGetLastError();
    return NULL;
  }
  for (uint32_t i = 0; i < batch && *status == MB_OK; i++)
    *status = run(kstate, call);
  hipError_t e = hipStreamEndCapture(d->stream, &graph);
  if (*status == MB_OK && e == hipSuccess)
    e = hipGraphInstantiate(&exec, graph, NULL, NULL, 0);
  if (graph) hipGraphDestroy(graph);
  if (e != hipSuccess) {
    (void)hipGetLastError(); /* capture errors are recoverable */
    exec = NULL;
  }
  return exec;
}

/* Enqueues the runs between the events while the stream is blocked. */
static mb_status_t enqueue_runs(mb_hip_state_t *st, mb_hip_device_t *d,
                                hipGraphExec_t exec, mb_kernel_run_fn run,
                                void *kstate, const mb_kernel_call_t *call,
                                uint32_t batch) {
  if (exec) return mb__hip_check(st, hipGraphLaunch(exec, d->stream), "graph");
  for (uint32_t i = 0; i < batch; i++) {
    mb_status_t s = run(kstate, call);
    if (s != MB_OK) return s;
  }
  return MB_OK;
}

/* One timed region: blocking kernel, start, runs, stop, release. The flag
 * is released on every path, or the stream would stay blocked. */
static mb_status_t timed(mb_hip_state_t *st, mb_hip_device_t *d,
                         hipGraphExec_t exec, mb_kernel_run_fn run,
                         void *kstate, const mb_kernel_call_t *call,
                         uint32_t batch, double *ms) {
  *d->flag_host = 0;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  mb_status_t s = MB_OK;
  if (d->own_code)
    s = mb__hip_check(
        st,
        mb__hip_launch_block(d->stream, d->flag_dev, MB_HIP_BLOCK_TIMEOUT_S),
        "blocking kernel");
  if (s == MB_OK)
    s = mb__hip_check(st, hipEventRecord(d->start, d->stream), "event");
  if (s == MB_OK) s = enqueue_runs(st, d, exec, run, kstate, call, batch);
  if (s == MB_OK)
    s = mb__hip_check(st, hipEventRecord(d->stop, d->stream), "event");
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  *d->flag_host = 1;
  mb_status_t sync =
      mb__hip_check(st, hipStreamSynchronize(d->stream), "running the batch");
  if (s != MB_OK) return s;
  if (sync != MB_OK) return sync;
  float f = 0;
  s = mb__hip_check(st, hipEventElapsedTime(&f, d->start, d->stop),
                    "event time");
  *ms = f;
  return s;
}

mb_status_t mb__hip_time_batch(mb_hip_state_t *st, mb_hip_device_t *d,
                               mb_kernel_run_fn run, void *kstate,
                               const mb_kernel_call_t *call, uint32_t batch,
                               double *elapsed_ns) {
  mb_status_t s = mb__hip_check(st, hipSetDevice(d->ordinal), "set device");
  if (s != MB_OK) return s;
  double ms = 0, total = 0;
  if (batch <= MB_HIP_MAX_QUEUED) {
    s = timed(st, d, NULL, run, kstate, call, batch, &ms);
    *elapsed_ns = ms * 1e6;
    return s;
  }
  hipGraphExec_t exec = capture(d, run, kstate, call, batch, &s);
  if (s != MB_OK) return s;
  if (exec) {
    s = timed(st, d, exec, run, kstate, call, batch, &ms);
    hipGraphExecDestroy(exec);
    *elapsed_ns = ms * 1e6;
    return s;
  }
  MB_HIP_LOG(st, MB_LOG_DEBUG,
             "hip: a run could not be captured into a graph; timing the "
             "batch of %u in chunks of %u launches",
             batch, MB_HIP_MAX_QUEUED);
  for (uint32_t done = 0; done < batch && s == MB_OK;) {
    uint32_t n =
        batch - done < MB_HIP_MAX_QUEUED ? batch - done : MB_HIP_MAX_QUEUED;
    s = timed(st, d, NULL, run, kstate, call, n, &ms);
    total += ms;
    done += n;
  }
  *elapsed_ns = total * 1e6;
  return s;
}
