/* The read-only cache flush: a kernel that reads a buffer of twice the
 * last-level cache, so the next sample finds none of its operands cached
 * and, unlike the memset flush, leaves no dirty lines whose write-back
 * would land inside the sample (backends/gpu/host/gpu_host_backend.c
 * chooses between them; docs/measurement.md). */
#include <stdint.h>

#include "gpu_device.cuh"
#include "gpu_host.h"

namespace {

constexpr unsigned FLUSH_THREADS = 256;

/* Reads every 16-byte word; the xor of them all decides a store that never
 * happens in practice but that the compiler cannot rule out, so no load is
 * dropped. */
__global__ void flush_read_kernel(const uint4 *__restrict__ buf, size_t n,
                                  uint32_t *sink) {
  uint32_t acc = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const uint4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u && n == 1) *sink = acc;
}

}  // namespace

extern "C" mb_status_t mb__gpu_flush_read(const mb_gpu_env_t *env,
                                          const void *buf, size_t bytes,
                                          uint32_t *sink) {
  const size_t n = bytes / sizeof(uint4);
  unsigned grid = 1;
  const mb_status_t st =
      mb_gpu_grid(env, "read flush", flush_read_kernel, FLUSH_THREADS, 0,
                  (n + FLUSH_THREADS - 1) / FLUSH_THREADS, 1, &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(flush_read_kernel, grid, FLUSH_THREADS, 0,
                (mb_gpu_stream_t)env->stream, (const uint4 *)buf, n, sink);
  return mb__gpu_launched(env, "read flush");
}
