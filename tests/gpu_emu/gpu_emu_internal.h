/* What the emulator's two halves share: the scheduler (gpu_emu.cc) and the
 * streams, events and graphs (gpu_emu_stream.cc). */
#ifndef MB_GPU_EMU_INTERNAL_H
#define MB_GPU_EMU_INTERNAL_H

#include "gpu_emu.h"

/* The emulated runtime's error codes (0 is mb_gpu_success). */
enum {
  MB_EMU_ERR_CONFIG = 1, /* a launch CUDA would refuse */
  MB_EMU_ERR_VALUE = 2,  /* an invalid argument */
  MB_EMU_ERR_FAULT = 3,  /* a kernel broke the execution model */
  /* MB_EMU_ERR_MEMORY = 4: gpu_emu_rt.h */
  MB_EMU_ERR_CAPTURE = 5,   /* not allowed while a stream captures, or a
                               capture that was invalidated */
  MB_EMU_ERR_NOT_READY = 6, /* an event that has not executed yet */
  MB_EMU_ERR_NOT_SUPPORTED = 7
  /* MB_EMU_ERR_PEER_ENABLED = 8, MB_EMU_ERR_PEER_NOT_ENABLED = 9:
   * gpu_emu_rt.h */
};

/* Sets this host thread's last error and its message. */
void mb_emu_set_error(mb_gpu_error_t e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether a launch is one CUDA would accept (1-D, 1..1024 threads, dynamic
 * shared memory within the kernel's limit); if not, sets the last error
 * and returns it. */
mb_gpu_error_t mb_emu_check_launch(const char *name, void (*kernel)(void),
                                   dim3 grid, dim3 block, size_t smem);

#endif
