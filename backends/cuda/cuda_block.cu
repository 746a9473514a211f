/* CUDA backend — the blocking kernel (nvbench's method).
 *
 * One thread spins on a flag in host-mapped memory. While it spins, the
 * host enqueues the start event, the runs and the stop event behind it, so
 * the timed region starts with a full queue: the host's launch latency is
 * not in the measurement. The host then sets the flag. If it never does (a
 * bug, or a run that blocks the host), the kernel gives up after
 * `timeout_s` of %globaltimer and says so, instead of hanging the GPU. */
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime.h>

__global__ void mb_cuda_block_kernel(volatile int32_t *flag,
                                     unsigned long long timeout_ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*flag == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      printf(
          "libmicrobench: the blocking kernel timed out after %.0f s: the "
          "host never released it (more launches queued behind it than the "
          "queue holds?); timings of this sample are invalid\n",
          (double)timeout_ns * 1e-9);
      break;
    }
  }
}

extern "C" cudaError_t mb__cuda_launch_block(cudaStream_t s,
                                             volatile int32_t *flag,
                                             double timeout_s) {
  mb_cuda_block_kernel<<<1, 1, 0, s>>>(flag,
                                       (unsigned long long)(timeout_s * 1e9));
  return cudaGetLastError();
}
