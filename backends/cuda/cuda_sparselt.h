/* CUDA backend — cuSPARSELt (cuda_sparselt.c): the library, loaded at run
 * time by soname when the backend has a device, a handle per device, and
 * the gemm_sparse24 kernel on it. */
#ifndef MB_CUDA_SPARSELT_H
#define MB_CUDA_SPARSELT_H

#include "cuda_internal.h"

/* The library (NULL with why[cap] when it does not load, or is older than
 * the 0.6 whose ABI the module declares). */
mb_cuda_splt_t *mb__cuda_splt_open(char *why, size_t cap);
void mb__cuda_splt_close(mb_cuda_splt_t *s);
/* "cuSPARSELt 0.8.1" */
const char *mb__cuda_splt_version(const mb_cuda_splt_t *s);
/* A handle on device d (none, logged, when it cannot be made: the kernel
 * then declines with the reason); MB_OK always. */
mb_status_t mb__cuda_splt_device_open(mb_cuda_state_t *st, mb_cuda_device_t *d);
void mb__cuda_splt_device_close(mb_cuda_state_t *st, mb_cuda_device_t *d);

/* The kernel's hooks (bf16, f16; cc 8.0; M, K, N multiples of 16). */
mb_status_t mb__cuda_splt_supports(void *bstate, uint32_t dev,
                                   const mb_op_params_t *p, const char **why);
mb_status_t mb__cuda_splt_prepare(void *bstate, const mb_kernel_call_t *call,
                                  void **kstate);
mb_status_t mb__cuda_splt_run(void *kstate, const mb_kernel_call_t *call);
void mb__cuda_splt_release(void *kstate);

#endif
