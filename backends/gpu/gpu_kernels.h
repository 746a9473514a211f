/* The kernels written once for every GPU backend (CUDA and HIP): their
 * C-callable entry points and the environment a backend hands them.
 *
 * Each kernel is a pair of functions with the backend ABI's signatures
 * (include/microbench/sys/backend.h):
 *   supports(bstate, dev, params, &why)  — bstate is the backend's and is
 *       not touched; the answer depends on params only;
 *   run(kstate, call)                    — kstate is a `const mb_gpu_env_t *`
 *       for call->device; the kernel is enqueued on env->stream and run()
 *       returns without synchronising.
 * A backend lists them in its kernel table through the X-macro files
 * gpu_kernels_quant.def and gpu_kernels_eltwise.def, each entry
 *   MB_GPU_KERNEL(op, impl, a, b, out, acc, supports, run)
 * with the dtypes as MB_DTYPE_ suffixes (NONE matches any). Every kernel needs
 * no workspace and keeps no state between calls: all pointers come from the
 * call, so any copy of the operands (cache rotation) can be passed. */
#ifndef MB_GPU_KERNELS_H
#define MB_GPU_KERNELS_H

#include <stddef.h>

#include "microbench/sys/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mb_gpu_env {
  void *stream;              /* cudaStream_t / hipStream_t */
  const mb_host_api_t *host; /* set_error, log */
  const char *backend;       /* "cuda", "hip": prefixes messages */
  int sm_count;              /* multiprocessors / compute units */
  int warp_size;             /* 32 (NVIDIA), 64 (CDNA) */
  size_t smem_optin;         /* max dynamic shared memory per block */
} mb_gpu_env_t;

/* A supports hook for kernels that take any params their dtypes match. */
mb_status_t mb__gpu_supports_any(void *bstate, uint32_t dev,
                                 const mb_op_params_t *params,
                                 const char **why);

/* After enqueuing: MB_OK, or MB_ERR_BACKEND with "<backend>: <what>: <the
 * runtime's error>" set when the launch failed. */
mb_status_t mb__gpu_launched(const mb_gpu_env_t *env, const char *what);

#define MB_GPU_KERNEL(op, impl, a, b, out, acc, supports, run)          \
  mb_status_t supports(void *bstate, uint32_t dev,                      \
                       const mb_op_params_t *params, const char **why); \
  mb_status_t run(void *kstate, const mb_kernel_call_t *call);
#include "gpu_kernels_quant.def"
#include "gpu_kernels_eltwise.def"
#undef MB_GPU_KERNEL

#ifdef __cplusplus
}
#endif
#endif
