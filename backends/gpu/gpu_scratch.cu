/* Device memory for the shared kernels that need scratch of their own (the
 * GEMM's quantize-inputs): the default mb_gpu_env_t.alloc and .free, on the
 * runtime's allocator (cudaMalloc, hipMalloc; host memory on the emulated
 * GPU), for a backend with no reason to lend another. Both run outside the
 * timed region: alloc in a kernel's prepare, free in its release. */
#include "gpu_kernels.h"
#include "gpu_runtime.h"

#if defined(MB_GPU_EMU)
#include <stdlib.h>
/* Exactly the size asked for, so AddressSanitizer sees an overrun; aligned
 * as cudaMalloc's (256). Launches are synchronous: nothing to wait for. */
static const char *dev_malloc(void **p, size_t bytes) {
  return posix_memalign(p, 256, bytes) ? "out of host memory" : NULL;
}
static void dev_free(const mb_gpu_env_t *env, void *p) {
  (void)env;
  free(p);
}
#elif defined(MB_GPU_HIP)
static const char *dev_malloc(void **p, size_t bytes) {
  const hipError_t e = hipMalloc(p, bytes);
  if (e == hipSuccess) return NULL;
  (void)hipGetLastError();
  return hipGetErrorString(e);
}
static void dev_free(const mb_gpu_env_t *env, void *p) {
  (void)hipStreamSynchronize((hipStream_t)env->stream);
  (void)hipFree(p);
  (void)hipGetLastError();
}
#else
static const char *dev_malloc(void **p, size_t bytes) {
  const cudaError_t e = cudaMalloc(p, bytes);
  if (e == cudaSuccess) return NULL;
  (void)cudaGetLastError();
  return cudaGetErrorString(e);
}
/* Nothing queued on the stream may still use it (cudaFree may not wait). */
static void dev_free(const mb_gpu_env_t *env, void *p) {
  (void)cudaStreamSynchronize((cudaStream_t)env->stream);
  (void)cudaFree(p);
  (void)cudaGetLastError();
}
#endif

extern "C" mb_status_t mb__gpu_scratch_alloc(const mb_gpu_env_t *env,
                                             size_t bytes, void **ptr) {
  *ptr = NULL;
  const char *err = dev_malloc(ptr, bytes ? bytes : 1);
  if (!err) return MB_OK;
  *ptr = NULL;
  env->host->set_error(
      "%s: out of device memory: %zu bytes of scratch for a shared kernel "
      "(%s)",
      env->backend, bytes, err);
  return MB_ERR_NO_MEMORY;
}

extern "C" void mb__gpu_scratch_free(const mb_gpu_env_t *env, void *ptr) {
  if (ptr) dev_free(env, ptr);
}
