/* A test-only backend: the shared GPU kernels of backends/gpu/, compiled
 * by g++ against the emulated runtime (gpu_emu.h), on one emulated device
 * whose memory is host memory. The conformance suite runs on it
 * (conformance_gpuemu, conformance_gpuemu64) so every shared kernel is
 * checked against the core's references on machines without a GPU. Its
 * timings measure the emulation, nothing else. Never installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mb_backend_entry.h"
#include "gpu_kernels.h"
#include "microbench/sys/backend.h"

#ifndef MB_EMU_NAME
#error "MB_EMU_NAME: the backend's name (the build defines it)"
#endif

/* From the emulated runtime (tests/gpu_emu/gpu_emu.cc). */
int mb_emu_warp_size(void);
size_t mb_emu_smem_optin(void);

typedef struct emu_state {
  mb_host_api_t host;
  mb_gpu_env_t env;
  char name[64];
} emu_state_t;

/* The launch environment's "multiprocessors": they only size grids, and a
 * few keep the grid-stride loops going round. */
enum { EMU_SM_COUNT = 4 };

static mb_status_t emu_init(const mb_host_api_t *host, void **state) {
  emu_state_t *st = calloc(1, sizeof *st);
  if (!st) {
    host->set_error("%s: cannot allocate the backend state", MB_EMU_NAME);
    return MB_ERR_NO_MEMORY;
  }
  st->host = *host;
  st->host.struct_size = sizeof st->host;
  snprintf(st->name, sizeof st->name, "emulated GPU (CPU fibers, warp %d)",
           mb_emu_warp_size());
  st->env.stream = NULL;
  st->env.host = &st->host;
  st->env.backend = MB_EMU_NAME;
  st->env.sm_count = EMU_SM_COUNT;
  st->env.warp_size = mb_emu_warp_size();
  st->env.smem_optin = mb_emu_smem_optin();
  st->env.scratch_alloc = mb__gpu_scratch_alloc;
  st->env.scratch_free = mb__gpu_scratch_free;
  *state = st;
  return MB_OK;
}

static void emu_fini(void *state) {
  free(state);
}

static const char *emu_version(void *state) {
  (void)state;
  return "emulated GPU runtime (tests/gpu_emu)";
}

static uint32_t emu_device_count(void *state, const char **why_none) {
  (void)state;
  if (why_none) *why_none = NULL;
  return 1;
}

static mb_status_t check_dev(const emu_state_t *st, uint32_t dev) {
  if (dev == 0) return MB_OK;
  st->host.set_error("%s: no device %u (device 0 only)", MB_EMU_NAME, dev);
  return MB_ERR_NOT_FOUND;
}

static mb_status_t emu_device_info(void *state, uint32_t dev,
                                   mb_device_info_t *out) {
  emu_state_t *st = state;
  mb_status_t s = check_dev(st, dev);
  if (s != MB_OK) return s;
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  info.backend = MB_EMU_NAME;
  info.index = dev;
  info.name = st->name;
  info.kind = MB_DEVICE_GPU;
  info.compute_units = EMU_SM_COUNT;
  info.peak_source = "";
  const uint32_t caller_size = out->struct_size;
  memcpy(out, &info, caller_size < sizeof info ? caller_size : sizeof info);
  out->struct_size = caller_size;
  return MB_OK;
}

static double emu_peak_flops(void *state, uint32_t dev, mb_dtype_t dtype) {
  (void)state, (void)dev, (void)dtype;
  return 0; /* unknown: the emulation has no meaningful peak */
}

/* Host memory aligned as cudaMalloc's (256 bytes), of exactly the size
 * asked for, so AddressSanitizer catches a kernel reading past it. */
static mb_status_t emu_alloc(void *state, uint32_t dev, size_t bytes,
                             void **ptr) {
  emu_state_t *st = state;
  mb_status_t s = check_dev(st, dev);
  if (s != MB_OK) return s;
  if (posix_memalign(ptr, 256, bytes ? bytes : 1)) {
    st->host.set_error("%s: out of host memory: %zu bytes", MB_EMU_NAME, bytes);
    return MB_ERR_NO_MEMORY;
  }
  return MB_OK;
}

static void emu_free(void *state, uint32_t dev, void *ptr) {
  (void)state, (void)dev;
  free(ptr);
}

static mb_status_t emu_copy(void *state, uint32_t dev, void *dst,
                            const void *src, size_t bytes) {
  mb_status_t s = check_dev(state, dev);
  if (s == MB_OK && bytes) memcpy(dst, src, bytes);
  return s;
}

/* Launches run to completion before they return: nothing to wait for, and
 * no cache of the device's own to flush. */
static mb_status_t emu_sync(void *state, uint32_t dev) {
  return check_dev(state, dev);
}

static mb_status_t emu_flush_cache(void *state, uint32_t dev) {
  return check_dev(state, dev);
}

static mb_status_t emu_time_batch(void *state, uint32_t dev,
                                  mb_kernel_run_fn run, void *kstate,
                                  const mb_kernel_call_t *call, uint32_t batch,
                                  double *elapsed_ns) {
  mb_status_t s = check_dev(state, dev);
  if (s != MB_OK) return s;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint32_t i = 0; i < batch; ++i)
    if ((s = run(kstate, call)) != MB_OK) return s;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  *elapsed_ns =
      1e9 * (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec);
  return MB_OK;
}

static const char *emu_timer_info(void *state, uint32_t dev) {
  (void)state, (void)dev;
  return "CLOCK_MONOTONIC around synchronous emulated launches on CPU fibers: "
         "the emulator's speed, not a GPU's";
}

/* ---- the shared kernels, listed as backends/cuda/cuda_backend.c does ---- */

/* The shared kernels' way to the env (gpu_kernels.h). */
mb_status_t mb__gpu_device_env(void *bstate, uint32_t dev,
                               const mb_gpu_env_t **env) {
  emu_state_t *st = bstate;
  mb_status_t s = check_dev(st, dev);
  if (s == MB_OK) *env = &st->env;
  return s;
}

static const mb_backend_kernel_t emu_kernels[] = {
#include "gpu_kernel_entries.inc"
};

static const mb_backend_vtable_t emu_vtable = {
    .abi_version = MB_BACKEND_ABI_VERSION,
    .struct_size = sizeof(mb_backend_vtable_t),
    .name = MB_EMU_NAME,
    .description =
        "test only: the shared GPU kernels on an emulated GPU (CPU fibers)",
    .init = emu_init,
    .fini = emu_fini,
    .version = emu_version,
    .device_count = emu_device_count,
    .device_info = emu_device_info,
    .peak_flops = emu_peak_flops,
    .alloc = emu_alloc,
    .free = emu_free,
    .copy_to_device = emu_copy,
    .copy_to_host = emu_copy,
    .sync = emu_sync,
    .flush_cache = emu_flush_cache,
    .time_batch = emu_time_batch,
    .kernels = emu_kernels,
    .num_kernels = sizeof emu_kernels / sizeof emu_kernels[0],
    .timer_info = emu_timer_info,
};

MB_BACKEND_EXPORT const mb_backend_vtable_t *mb_backend_entry(
    const mb_host_api_t *host) {
  return mb__backend_host_ok(host, MB_EMU_NAME) ? &emu_vtable : NULL;
}
