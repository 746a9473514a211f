/* HIP backend — the vendor GEMM libraries, hipBLASLt (hip_blaslt.c) and
 * rocBLAS (hip_rocblas.c), loaded at run time.
 *
 * Neither is packaged by Debian, and a machine may have one, both or none:
 * each is dlopen'ed once per backend instance, only the entry points we
 * call are declared (no vendor header is needed to build), and its version
 * is checked against the oldest release whose API and enum values we
 * declare. A library that is missing or too old leaves its implementation
 * in the kernel table, where it declines every request with that reason, so
 * `--impl hipblaslt` on a machine without it is a skipped result saying
 * why, and the default falls through to the next implementation.
 *
 * Which library type each of our dtypes is handed as is decided in one
 * table per library (hip_gemm_plan.c) and tested (test_hip_vendor): bf16 is
 * bf16, never f16. */
#ifndef MB_HIP_VENDOR_H
#define MB_HIP_VENDOR_H

#include <stddef.h>

#include "gpu_host_dlopen.h" /* mb__gpuh_dlopen, shared with CUDA */
#include "hip_internal.h"

/* ---- loading ------------------------------------------------------------- */
/* `path` NULL: the file named by MB_HIPBLASLT_LIBRARY / MB_ROCBLAS_LIBRARY
 * if set, else the default soname search (the unversioned name, then the
 * versioned ones, newest first). NULL with the reason in why[cap] (not
 * found, entry point missing, version too old). */
mb_hip_blaslt_t *mb__hip_blaslt_open(const char *path, char *why, size_t cap);
void mb__hip_blaslt_close(mb_hip_blaslt_t *lib);
/* "hipBLASLt 0.8.0" */
const char *mb__hip_blaslt_version(const mb_hip_blaslt_t *lib);

mb_hip_rocblas_t *mb__hip_rocblas_open(const char *path, char *why, size_t cap);
void mb__hip_rocblas_close(mb_hip_rocblas_t *lib);
/* "rocBLAS 4.1.0.1234-abcdef" */
const char *mb__hip_rocblas_version(const mb_hip_rocblas_t *lib);

/* Releases the device's handle and workspace of that library (if made). */
void mb__hip_blaslt_device_fini(mb_hip_state_t *st, mb_hip_device_t *d);
void mb__hip_rocblas_device_fini(mb_hip_state_t *st, mb_hip_device_t *d);

/* ---- the kernel-table hooks (hip_kernels_gemm.def) ----------------------- */
mb_status_t mb__hip_blaslt_supports(void *bstate, uint32_t dev,
                                    const mb_op_params_t *params,
                                    const char **why);
mb_status_t mb__hip_blaslt_prepare(void *bstate, const mb_kernel_call_t *call,
                                   void **kstate);
mb_status_t mb__hip_blaslt_run(void *kstate, const mb_kernel_call_t *call);
void mb__hip_blaslt_release(void *kstate);
uint32_t mb__hip_blaslt_notes(void *kstate, mb_kernel_note_t *out,
                              uint32_t max);

mb_status_t mb__hip_rocblas_supports(void *bstate, uint32_t dev,
                                     const mb_op_params_t *params,
                                     const char **why);
mb_status_t mb__hip_rocblas_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate);
mb_status_t mb__hip_rocblas_run(void *kstate, const mb_kernel_call_t *call);
void mb__hip_rocblas_release(void *kstate);
uint32_t mb__hip_rocblas_notes(void *kstate, mb_kernel_note_t *out,
                               uint32_t max);

/* ---- below the hooks (hip_blaslt.c, hip_rocblas.c) ----------------------- */
/* What prepare does once the device's library handle exists (prepare makes
 * it on first use: hipSetDevice, hipblasLtCreate + the workspace,
 * rocblas_create_handle + rocblas_set_stream): plan, descriptors, the
 * heuristic query and, when it offers more than one algorithm, the timed
 * choice (HIP events on d->stream). Split out so that the tests drive the
 * real library calls through fake libraries with a synthetic state and
 * device, without a GPU. */
mb_status_t mb__hip_blaslt_prepare_on(mb_hip_state_t *st, mb_hip_device_t *d,
                                      const mb_kernel_call_t *call,
                                      void **kstate);
mb_status_t mb__hip_rocblas_prepare_on(mb_hip_state_t *st, mb_hip_device_t *d,
                                       const mb_kernel_call_t *call,
                                       void **kstate);
/* hipBLASLt's version as hipblasLtGetVersion encodes it (major * 100000 +
 * minor * 100 + patch); 0 for NULL. */
int mb__hip_blaslt_version_number(const mb_hip_blaslt_t *lib);

/* The workspace a device's hipBLASLt handle gets (the sizes AMD's own
 * hipBLASLt users pick: 64 MiB on gfx950, 32 MiB elsewhere). */
size_t mb__hip_blaslt_workspace_bytes(const mb_hip_device_t *d);

#endif
