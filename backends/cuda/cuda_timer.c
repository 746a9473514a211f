/* CUDA backend — timing a batch of runs.
 *
 * CUDA events on the device's stream bracket the batch; elapsed time is the
 * GPU's. Launch overhead is hidden two ways (docs/measurement.md):
 *  - a blocking kernel holds the stream while the host enqueues the start
 *    event, the runs and the stop event, so the GPU starts on a full queue
 *    and the host's launch latency before the first run is not timed;
 *  - a batch longer than MB_CUDA_MAX_QUEUED runs is captured once into a
 *    CUDA graph and launched as one item: the launch queue is finite (about
 *    a thousand entries), and a host blocked on a full queue behind the
 *    blocking kernel would deadlock; a graph also removes the per-launch
 *    gaps that dominate kernels of a few microseconds.
 * Capture and instantiation happen before the blocking kernel, untimed. A
 * run that cannot be captured (a kernel synchronising inside) falls back to
 * plain launches in chunks, recorded in the timer description. */
#include <stdio.h>

#include "cuda_internal.h"

/* nvbench keeps at most ~32 launches behind its blocking kernel. */
#define MB_CUDA_MAX_QUEUED 32u
/* The blocking kernel gives up after this long. */
#define MB_CUDA_BLOCK_TIMEOUT_S 30.0

mb_status_t mb__cuda_timer_init(mb_cuda_state_t *st, mb_cuda_device_t *d) {
  mb_status_t s;
  if ((s = mb__cuda_check(st, cudaEventCreate(&d->start), "event")) != MB_OK ||
      (s = mb__cuda_check(st, cudaEventCreate(&d->stop), "event")) != MB_OK)
    return s;
  void *flag = NULL;
  s = mb__cuda_check(st,
                     cudaHostAlloc(&flag, sizeof(int32_t), cudaHostAllocMapped),
                     "host-mapped flag");
  if (s != MB_OK) return s;
  d->flag_host = flag;
  *d->flag_host = 1;
  s = mb__cuda_check(st,
                     cudaHostGetDevicePointer((void **)&d->flag_dev, flag, 0),
                     "host-mapped flag (device pointer)");
  if (s != MB_OK) return s;
  snprintf(d->timer_info, sizeof d->timer_info,
           "CUDA events on the stream; a blocking kernel holds the stream "
           "while a sample is enqueued; batches over %u runs are one CUDA "
           "graph",
           MB_CUDA_MAX_QUEUED);
  return MB_OK;
}

void mb__cuda_timer_fini(mb_cuda_device_t *d) {
  if (d->start) cudaEventDestroy(d->start);
  if (d->stop) cudaEventDestroy(d->stop);
  if (d->flag_host) cudaFreeHost((void *)d->flag_host);
  d->start = d->stop = NULL;
  d->flag_host = NULL;
}

/* Captures `batch` runs into an executable graph; NULL (with the stream
 * out of capture mode) when some run cannot be captured. */
static cudaGraphExec_t capture(mb_cuda_device_t *d, mb_kernel_run_fn run,
                               void *kstate, const mb_kernel_call_t *call,
                               uint32_t batch, mb_status_t *status) {
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  *status = MB_OK;
  if (cudaStreamBeginCapture(d->stream, cudaStreamCaptureModeThreadLocal) !=
      cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  for (uint32_t i = 0; i < batch && *status == MB_OK; i++)
    *status = run(kstate, call);
  cudaError_t e = cudaStreamEndCapture(d->stream, &graph);
  if (*status == MB_OK && e == cudaSuccess)
    e = cudaGraphInstantiate(&exec, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  if (e != cudaSuccess) {
    cudaGetLastError(); /* not sticky: capture errors are recoverable */
    exec = NULL;
  }
  return exec;
}

/* Enqueues the runs between the events while the stream is blocked. */
static mb_status_t enqueue_runs(mb_cuda_device_t *d, cudaGraphExec_t exec,
                                mb_kernel_run_fn run, void *kstate,
                                const mb_kernel_call_t *call, uint32_t batch) {
  if (exec)
    return cudaGraphLaunch(exec, d->stream) == cudaSuccess ? MB_OK
                                                           : MB_ERR_BACKEND;
  for (uint32_t i = 0; i < batch; i++) {
    mb_status_t s = run(kstate, call);
    if (s != MB_OK) return s;
  }
  return MB_OK;
}

/* One timed region: blocking kernel, start, runs, stop, release. The flag
 * is released on every path, or the stream would stay blocked. */
static mb_status_t timed(mb_cuda_state_t *st, mb_cuda_device_t *d,
                         cudaGraphExec_t exec, mb_kernel_run_fn run,
                         void *kstate, const mb_kernel_call_t *call,
                         uint32_t batch, double *ms) {
  *d->flag_host = 0;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  mb_status_t s = mb__cuda_check(
      st,
      mb__cuda_launch_block(d->stream, d->flag_dev, MB_CUDA_BLOCK_TIMEOUT_S),
      "blocking kernel");
  if (s == MB_OK)
    s = mb__cuda_check(st, cudaEventRecord(d->start, d->stream), "event");
  if (s == MB_OK) s = enqueue_runs(d, exec, run, kstate, call, batch);
  if (s == MB_OK)
    s = mb__cuda_check(st, cudaEventRecord(d->stop, d->stream), "event");
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  *d->flag_host = 1;
  mb_status_t sync =
      mb__cuda_check(st, cudaStreamSynchronize(d->stream), "running the batch");
  if (s != MB_OK) return s;
  if (sync != MB_OK) return sync;
  float f = 0;
  s = mb__cuda_check(st, cudaEventElapsedTime(&f, d->start, d->stop),
                     "event time");
  *ms = f;
  return s;
}

mb_status_t mb__cuda_time_batch(mb_cuda_state_t *st, mb_cuda_device_t *d,
                                mb_kernel_run_fn run, void *kstate,
                                const mb_kernel_call_t *call, uint32_t batch,
                                double *elapsed_ns) {
  mb_status_t s = mb__cuda_check(st, cudaSetDevice(d->ordinal), "set device");
  if (s != MB_OK) return s;
  double ms = 0, total = 0;
  if (batch <= MB_CUDA_MAX_QUEUED) {
    s = timed(st, d, NULL, run, kstate, call, batch, &ms);
    *elapsed_ns = ms * 1e6;
    return s;
  }
  cudaGraphExec_t exec = capture(d, run, kstate, call, batch, &s);
  if (s != MB_OK) return s;
  if (exec) {
    s = timed(st, d, exec, run, kstate, call, batch, &ms);
    cudaGraphExecDestroy(exec);
    *elapsed_ns = ms * 1e6;
    return s;
  }
  /* Not capturable: chunks the queue can hold, each behind the blocking
   * kernel. The gaps between chunks are outside the events. */
  MB_CUDA_LOG(st, MB_LOG_DEBUG,
              "cuda: a run could not be captured into a graph; timing the "
              "batch of %u in chunks of %u launches",
              batch, MB_CUDA_MAX_QUEUED);
  for (uint32_t done = 0; done < batch && s == MB_OK;) {
    uint32_t n =
        batch - done < MB_CUDA_MAX_QUEUED ? batch - done : MB_CUDA_MAX_QUEUED;
    s = timed(st, d, NULL, run, kstate, call, n, &ms);
    total += ms;
    done += n;
  }
  *elapsed_ns = total * 1e6;
  return s;
}
