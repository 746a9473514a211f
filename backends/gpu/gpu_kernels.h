/* The kernels written once for every GPU backend (CUDA and HIP): their
 * C-callable entry points and the environment a backend hands them.
 *
 * Each kernel is a pair of functions with the backend ABI's signatures
 * (include/microbench/sys/backend.h):
 *   supports(bstate, dev, params, &why)  — bstate is the backend's and is
 *       not touched; the answer depends on params only (and, for kernels
 *       that need scratch, on whether the backend lends device memory);
 *   run(kstate, call)                    — kstate is a `const mb_gpu_env_t *`
 *       for call->device; the kernel is enqueued on env->stream and run()
 *       returns without synchronising.
 * A backend lists them in its kernel table through the X-macro files
 * gpu_kernels_quant.def, gpu_kernels_eltwise.def and gpu_kernels_gemm.def
 * (gpu_kernel_entries.inc turns them into table entries), each entry
 *   MB_GPU_KERNEL(op, impl, a, b, out, acc, supports, run)
 *   MB_GPU_KERNEL_FLAGS(op, impl, a, b, out, acc, supports, run, flags)
 *   MB_GPU_KERNEL_STATE(op, impl, a, b, out, acc, supports, prepare, run,
 *                       release, flags)
 *   MB_GPU_KERNEL_COLLECT(op, impl, supports, prepare, run, release,
 *                         notes, collect)  (any dtype; a STATE kernel with
 *                         notes and a collect hook: the transfers)
 * with the dtypes as MB_DTYPE_ suffixes (NONE matches any) and flags
 * MB_KERNEL_* (0 for MB_GPU_KERNEL). The first two kinds need no workspace
 * and keep no state between calls: all pointers come from the call, so any
 * copy of the operands (cache rotation) can be passed; their prepare is
 * mb__gpu_prepare. A STATE kernel has a prepare and release of its own,
 * which allocate and free device scratch (untimed) through the env's
 * scratch_alloc and scratch_free; its kstate is its own. */
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
  /* Device memory lent to STATE kernels for their scratch (the GEMM's
   * quantize-inputs): scratch_alloc sets *ptr to `bytes` of device memory,
   * 256-byte aligned, or returns MB_ERR_NO_MEMORY after host->set_error;
   * scratch_free returns it once nothing enqueued on `stream` uses it any
   * more. Both are called outside the timed region (prepare, release).
   * Every backend sets them: mb__gpu_scratch_alloc / _free (below), the
   * runtime's allocator, unless it has a reason to lend another. */
  mb_status_t (*scratch_alloc)(const struct mb_gpu_env *env, size_t bytes,
                               void **ptr);
  void (*scratch_free)(const struct mb_gpu_env *env, void *ptr);
} mb_gpu_env_t;

/* The launch environment of device `dev`: every backend that lists the
 * shared kernels defines it (cuda_backend.c, hip_backend.c, the test
 * emulator). It makes the device current and sets *env, or returns an error
 * after host->set_error: MB_ERR_NOT_FOUND for a device it does not have,
 * MB_ERR_UNSUPPORTED for one the shared kernels cannot run on (a HIP build
 * without code for the GPU). mb__gpu_prepare, the prepare hook of the
 * stateless kernels, hands *env on as their kstate; STATE kernels call it
 * from their own prepare. */
mb_status_t mb__gpu_device_env(void *bstate, uint32_t dev,
                               const mb_gpu_env_t **env);
/* The prepare hook of every stateless shared kernel (gpu_common.cu). */
mb_status_t mb__gpu_prepare(void *bstate, const mb_kernel_call_t *call,
                            void **kstate);

/* The second device of a copy between devices (d2d) on `dev`: device
 * (dev + 1) mod the backend's device count, with both runtime ordinals and
 * whether the runtime says dev can access its memory directly. Declines
 * (MB_ERR_UNSUPPORTED, *why in the host's reason storage) when the backend
 * has one device ("d2d needs 2 devices: ..."), and, when `flags` has
 * MB_PARAM_PEER, when peer access is not possible (gpu_host_link.c). */
typedef struct mb_gpu_peer {
  uint32_t index; /* the backend's device number */
  int ordinal;    /* the runtime's, for its peer calls */
  int self_ordinal;
  int can_access; /* the runtime's can-access-peer, dev to peer */
} mb_gpu_peer_t;
mb_status_t mb__gpu_peer_of(void *bstate, uint32_t dev, uint32_t flags,
                            mb_gpu_peer_t *out, const char **why);
/* The datasheet GB/s (one direction) of a link of device `dev`: peer < 0
 * its host link, else its direct link (NVLink, xGMI) to device `peer`.
 * > 0 the figure; 0 there is no such link (a direct link only); < 0
 * unknown. `what` gets what it is, or why it is unknown. */
double mb__gpu_link(void *bstate, uint32_t dev, int peer, char *what,
                    size_t cap);

/* The runtime's own device allocator as mb_gpu_env_t.scratch_alloc and
 * scratch_free (gpu_scratch.cu): cudaMalloc, hipMalloc (host memory on the
 * emulated GPU); free synchronises env->stream before it frees. */
mb_status_t mb__gpu_scratch_alloc(const mb_gpu_env_t *env, size_t bytes,
                                  void **ptr);
void mb__gpu_scratch_free(const mb_gpu_env_t *env, void *ptr);

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
#define MB_GPU_KERNEL_FLAGS(op, impl, a, b, out, acc, supports, run, flags) \
  MB_GPU_KERNEL(op, impl, a, b, out, acc, supports, run)
#define MB_GPU_KERNEL_STATE(op, impl, a, b, out, acc, supports, prepare, run, \
                            release, flags)                                   \
  MB_GPU_KERNEL(op, impl, a, b, out, acc, supports, run)                      \
  mb_status_t prepare(void *bstate, const mb_kernel_call_t *call,             \
                      void **kstate);                                         \
  void release(void *kstate);
#define MB_GPU_KERNEL_COLLECT(op, impl, supports, prepare, run, release,   \
                              notes, collect)                              \
  MB_GPU_KERNEL_STATE(op, impl, NONE, NONE, NONE, NONE, supports, prepare, \
                      run, release, 0u)                                    \
  uint32_t notes(void *kstate, mb_kernel_note_t *out, uint32_t max);       \
  mb_status_t collect(void *kstate, const mb_kernel_call_t *call);
#include "gpu_kernels_gemm.def"
#include "gpu_kernels_quant.def"
#include "gpu_kernels_eltwise.def"
#undef MB_GPU_KERNEL_COLLECT
#undef MB_GPU_KERNEL_STATE
#undef MB_GPU_KERNEL_FLAGS
#undef MB_GPU_KERNEL

#ifdef __cplusplus
}
#endif
#endif
