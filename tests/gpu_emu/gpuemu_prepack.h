/* gpuemu64's pre-packing fp8 GEMM (gpuemu_prepack.c): its table entries. */
#ifndef MB_GPUEMU_PREPACK_H
#define MB_GPUEMU_PREPACK_H

#include "microbench/sys/backend.h"

mb_status_t mb__emu_prepack_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate);
mb_status_t mb__emu_prepack_run(void *kstate, const mb_kernel_call_t *call);
void mb__emu_prepack_release(void *kstate);

/* fp8 A (e4m3 or e5m2) x fp8 B, every scaling the native kernel takes. */
#define MB_EMU_PREPACK_ENTRY(a) \
  {sizeof(mb_backend_kernel_t), \
   "gemm",                      \
   "prepack",                   \
   MB_DTYPE_##a,                \
   MB_DTYPE_NONE,               \
   MB_DTYPE_NONE,               \
   MB_DTYPE_F32,                \
   mb__gpu_gemm_supports,       \
   mb__emu_prepack_prepare,     \
   mb__emu_prepack_run,         \
   mb__emu_prepack_release,     \
   MB_KERNEL_EMULATED,          \
   NULL,                        \
   NULL},

#endif
