/* Device memory for the shared kernels that need scratch of their own (the
 * GEMM's quantize-inputs): the default mb_gpu_env_t.alloc and .free, on the
 * runtime's allocator (cudaMalloc, hipMalloc; host memory on the emulated
 * GPU), for a backend with no reason to lend another. Both run outside the
 * timed region: alloc in a kernel's prepare, free in its release. */
#include "gpu_kernels.h"
#include "gpu_runtime.h"

extern "C" mb_status_t mb__gpu_scratch_alloc(const mb_gpu_env_t *env,
                                             size_t bytes, void **ptr) {
  *ptr = NULL;
  const mb_gpu_error_t e = mb_gpu_malloc(ptr, bytes ? bytes : 1);
  if (e == mb_gpu_success) return MB_OK;
  (void)mb_gpu_get_last_error();
  *ptr = NULL;
  env->host->set_error(
      "%s: out of device memory: %zu bytes of scratch for a shared kernel "
      "(%s)",
      env->backend, bytes, mb_gpu_error_string(e));
  return MB_ERR_NO_MEMORY;
}

/* Nothing queued on the stream may still use it (cudaFree may not wait). */
extern "C" void mb__gpu_scratch_free(const mb_gpu_env_t *env, void *ptr) {
  if (!ptr) return;
  (void)mb_gpu_stream_sync((mb_gpu_stream_t)env->stream);
  (void)mb_gpu_free(ptr);
  (void)mb_gpu_get_last_error();
}
