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

extern "C" mb_gpu_error_t mb__gpu_flush_read(mb_gpu_stream_t s,
                                             const void *buf, size_t bytes,
                                             uint32_t *sink, int sm_count) {
  int per_sm = 0;
  mb_gpu_error_t e =
      mb_gpu_occupancy(&per_sm, flush_read_kernel, (int)FLUSH_THREADS, 0);
  if (e != mb_gpu_success) return e;
  const size_t n = bytes / sizeof(uint4);
  size_t blocks = (size_t)(sm_count > 0 ? sm_count : 1) *
                  (size_t)(per_sm > 0 ? per_sm : 1);
  const size_t need = (n + FLUSH_THREADS - 1) / FLUSH_THREADS;
  if (blocks > need) blocks = need ? need : 1;
  MB_GPU_LAUNCH(flush_read_kernel, (unsigned)blocks, FLUSH_THREADS, 0, s,
                (const uint4 *)buf, n, sink);
  return mb_gpu_get_last_error();
}
