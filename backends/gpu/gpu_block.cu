/* The blocking kernel (nvbench's method) and the probe that tells whether
 * this build has code for the device at hand: device code of the host
 * layer (backends/gpu/host/gpu_host_timer.c says how they are used).
 *
 * One thread spins on a flag in host-mapped memory. While it spins, the
 * host enqueues the start event, the runs and the stop event behind it, so
 * the timed region starts with a full queue: the host's launch latency is
 * not in the measurement. The host then sets the flag. If it never does (a
 * bug, or more work queued behind the kernel than the stream's launch
 * queue holds, so the host itself is stuck in a launch), the kernel gives
 * up after `timeout_s` and sets *timed_out: the host reads it after the
 * sample and drops the sample, whose events then timed the wait. */
#include <stdint.h>

#include "gpu_host.h"
#include "gpu_runtime.h"

#if defined(MB_GPU_EMU)
/* The emulator cannot run a kernel that waits for the host (one thread
 * runs both): its runtime emulates this one (gpu_emu_rt.h). */
extern "C" mb_gpu_error_t mb__gpu_launch_block(mb_gpu_stream_t s,
                                               volatile int32_t *flag,
                                               volatile int32_t *timed_out,
                                               double timeout_s) {
  return mb_emu_block(s, flag, timed_out, timeout_s);
}

extern "C" mb_gpu_error_t mb__gpu_probe_code(void) {
  return mb_gpu_success;
}
#else
/* A clock in nanoseconds that runs while the SM waits: %globaltimer on
 * NVIDIA; wall_clock64() on AMD, the constant 100 MHz real-time counter of
 * CDNA and RDNA (HIP 5.2 has no attribute for its rate, and a wrong rate
 * would only stretch the timeout; it reads -1 on a target without the
 * counter, and the timeout then never fires). HIP declares wall_clock64()
 * for the device pass only. */
__device__ static uint64_t mb_gpu_clock_ns(void) {
#if defined(MB_GPU_HIP)
#if defined(__HIP_DEVICE_COMPILE__)
  return (uint64_t)wall_clock64() * 10u;
#else
  return 0;
#endif
#else
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

__global__ void mb_gpu_block_kernel(volatile int32_t *flag,
                                    volatile int32_t *timed_out,
                                    uint64_t timeout_ns) {
  const uint64_t start = mb_gpu_clock_ns();
  while (*flag == 0) {
    if (mb_gpu_clock_ns() - start > timeout_ns) {
      *timed_out = 1;
      break;
    }
  }
}

extern "C" mb_gpu_error_t mb__gpu_launch_block(mb_gpu_stream_t s,
                                               volatile int32_t *flag,
                                               volatile int32_t *timed_out,
                                               double timeout_s) {
  MB_GPU_LAUNCH(mb_gpu_block_kernel, 1, 1, 0, s, flag, timed_out,
                (uint64_t)(timeout_s * 1e9));
  return mb_gpu_get_last_error();
}

/* The fat binary carries code per target; for any other GPU the runtime
 * cannot find the kernel, and asking for its attributes fails
 * (cudaErrorNoKernelImageForDevice, hipErrorNoBinaryForGpu) without
 * launching anything. */
extern "C" mb_gpu_error_t mb__gpu_probe_code(void) {
#if defined(MB_GPU_HIP)
  hipFuncAttributes attr;
  const mb_gpu_error_t e =
      hipFuncGetAttributes(&attr, (const void *)mb_gpu_block_kernel);
#else
  cudaFuncAttributes attr;
  const mb_gpu_error_t e = cudaFuncGetAttributes(&attr, mb_gpu_block_kernel);
#endif
  if (e != mb_gpu_success) (void)mb_gpu_get_last_error();
  return e;
}
#endif
