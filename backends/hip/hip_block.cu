/* HIP backend — the blocking kernel (nvbench's method, as the CUDA
 * backend's cuda_block.cu) and the probe that tells whether this build has
 * code for the device at hand.
 *
 * One thread spins on a flag in host-mapped memory. While it spins, the
 * host enqueues the start event, the runs and the stop event behind it, so
 * the timed region starts with a full queue: the host's launch latency is
 * not in the measurement. The host then sets the flag. If it never does,
 * the kernel gives up after `timeout_s` of wall_clock64() (the constant
 * 100 MHz real-time counter of CDNA and RDNA; HIP 5.2 has no attribute for
 * its rate, and a wrong rate would only stretch the timeout) and says so,
 * instead of hanging the GPU. */
#include <stdint.h>
#include <stdio.h>

#include <hip/hip_runtime.h>

#define MB_HIP_WALL_CLOCK_HZ 100e6

/* HIP 5.2 declares wall_clock64() for the device pass only. It is -1 on a
 * target without the counter: the timeout then never fires. */
__device__ static long long mb_hip_wall_clock(void) {
#ifdef __HIP_DEVICE_COMPILE__
  return wall_clock64();
#else
  return 0;
#endif
}

__global__ void mb_hip_block_kernel(volatile int32_t *flag,
                                    long long timeout_ticks) {
  const long long start = mb_hip_wall_clock();
  while (*flag == 0) {
    if (mb_hip_wall_clock() - start > timeout_ticks) {
      printf(
          "libmicrobench: the blocking kernel timed out after %.0f s: the "
          "host never released it (more launches queued behind it than the "
          "queue holds?); timings of this sample are invalid\n",
          (double)timeout_ticks / MB_HIP_WALL_CLOCK_HZ);
      break;
    }
  }
}

extern "C" hipError_t mb__hip_launch_block(hipStream_t s,
                                           volatile int32_t *flag,
                                           double timeout_s) {
  mb_hip_block_kernel<<<1, 1, 0, s>>>(
      flag, (long long)(timeout_s * MB_HIP_WALL_CLOCK_HZ));
  return hipGetLastError();
}

/* The fat binary carries one code object per offload target; for any
 * other processor the runtime cannot find the kernel, and asking for its
 * attributes fails (hipErrorInvalidDeviceFunction / NoBinaryForGpu)
 * without launching anything. */
extern "C" hipError_t mb__hip_probe_code(void) {
  hipFuncAttributes attr;
  const hipError_t e =
      hipFuncGetAttributes(&attr, (const void *)mb_hip_block_kernel);
  if (e != hipSuccess) (void)hipGetLastError();
  return e;
}
