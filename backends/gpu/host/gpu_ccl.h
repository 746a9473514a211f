/* GPU host layer — the collective ops (all_reduce, all_gather,
 * reduce_scatter, all_to_all, broadcast, reduce, sendrecv) through the
 * vendor's collective library, loaded at run time by soname and never
 * linked: NCCL for CUDA (impl "nccl", libnccl.so.2), RCCL for HIP (impl
 * "rccl", librccl.so.1). One source, gpu_ccl.c, compiled into every GPU
 * module with its runtime; the emulated GPU of the tests drives
 * libnccl.so.2 too (there, the fake of tests/fixtures/fake_nccl.c).
 * docs/distributed.md "NCCL and RCCL". */
#ifndef MB_GPU_CCL_H
#define MB_GPU_CCL_H

#include "gpu_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library each runtime's module loads: its name in messages, the
 * kernels' implementation name (and the prefix of their notes), the
 * soname and the environment variable that names another file. */
#if defined(MB_GPU_HIP)
#define MB_CCL_NAME "RCCL"
#define MB_CCL_IMPL "rccl"
#define MB_CCL_SONAME "librccl.so.1"
#define MB_CCL_ENV "MB_RCCL_LIBRARY"
#else
#define MB_CCL_NAME "NCCL"
#define MB_CCL_IMPL "nccl"
#define MB_CCL_SONAME "libnccl.so.2"
#define MB_CCL_ENV "MB_NCCL_LIBRARY"
#endif

/* The kernel hooks, one supports/prepare pair per collective (the table's
 * hooks carry no op), and the shared run/notes/release. */
#define MB__CCL_DECLARE(E, name_)                                             \
  mb_status_t mb__gpuh_ccl_##E##_supports(                                    \
      void *bstate, uint32_t dev, const mb_op_params_t *p, const char **why); \
  mb_status_t mb__gpuh_ccl_##E##_prepare(                                     \
      void *bstate, const mb_kernel_call_t *call, void **kstate);
MB_COLL_MAP(MB__CCL_DECLARE)
#undef MB__CCL_DECLARE
mb_status_t mb__gpuh_ccl_run(void *kstate, const mb_kernel_call_t *call);
uint32_t mb__gpuh_ccl_notes(void *kstate, mb_kernel_note_t *out, uint32_t max);
void mb__gpuh_ccl_release(void *kstate);

/* For the timer (gpu_host_timer.c): why a run of `run` is timed by two
 * events around its batch alone (no graph, no blocking kernel), or NULL
 * for any other run. */
const char *mb__gpuh_ccl_direct(mb_kernel_run_fn run);

/* At the backend's fini, before its devices close: destroys the
 * communicators and unloads the library. */
void mb__gpuh_ccl_close(mb_gpuh_state_t *st);

#ifdef __cplusplus
}
#endif
#endif
