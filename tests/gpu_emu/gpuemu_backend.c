/* A test-only backend: the shared GPU kernels of backends/gpu/, compiled
 * by g++ against the emulated runtime (gpu_emu.h, gpu_emu_rt.h), behind the
 * same host layer as the CUDA and HIP modules (backends/gpu/host/), on one
 * emulated device whose memory is host memory. The conformance suite runs
 * on it (conformance_gpuemu, conformance_gpuemu64) so every shared kernel is
 * checked against the core's references, and every benchmark on it goes
 * through the GPU timing method (blocking kernel, launch counting, graphs,
 * chunks, dropped samples, cache flushes), on machines without a GPU. Its
 * timings measure the emulator, nothing else. Never installed. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_ccl.h"
#include "gpu_host.h"
#include "gpu_link_rates.h"
#include "gpu_kernels.h"
#include "mb_backend_entry.h"
#ifdef MB_EMU_PREPACK
#include "gpuemu_prepack.h"
#endif

#ifndef MB_EMU_NAME
#error "MB_EMU_NAME: the backend's name (the build defines it)"
#endif

/* From the emulated runtime (tests/gpu_emu/gpu_emu.cc). */
int mb_emu_warp_size(void);
size_t mb_emu_smem_optin(void);
void mb_emu_describe(char *buf, size_t cap);

/* The launch environment's "multiprocessors": they only size grids, and a
 * few keep the grid-stride loops going round. */
enum { EMU_SM_COUNT = 4 };
/* An emulated last-level cache: small, so a flush is cheap on fibers, but
 * there, so cold samples and rotate run their real code paths. */
#define EMU_LLC_BYTES (256u * 1024u)

static mb_status_t emu_probe(mb_gpuh_state_t *st, mb_gpuh_device_t *d) {
  (void)st;
  char how[128];
  mb_emu_describe(how, sizeof how);
  snprintf(d->name, sizeof d->name, "emulated GPU (CPU fibers, warp %d%s)",
           mb_emu_warp_size(), how);
  d->sm_count = EMU_SM_COUNT;
  d->warp_size = mb_emu_warp_size();
  d->smem_optin = mb_emu_smem_optin();
  d->llc_bytes = EMU_LLC_BYTES;
  d->peak_source = "";
  return MB_OK;
}

/* MB_GPUEMU_PCIE=<gen>x<width> ("4x16"): the host link the emulated
 * device claims, so that the link figures' way to a transfer's roof runs
 * here; unset, its links are unknown, as a GPU's are without NVML or
 * rocm-smi. The devices have no direct link to each other (0). */
static double emu_link(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                       mb_gpuh_device_t *peer, char *what, size_t cap) {
  (void)st, (void)d;
  if (peer) {
    snprintf(what, cap, "none: the emulated devices have no direct link");
    return 0;
  }
  const char *v = getenv("MB_GPUEMU_PCIE");
  unsigned gen = 0, width = 0;
  if (!v || sscanf(v, "%ux%u", &gen, &width) != 2 ||
      !(mb__pcie_gbps(gen, width) > 0)) {
    snprintf(what, cap, "unknown: the emulated GPU has no link%s",
             v ? " (MB_GPUEMU_PCIE is not <gen>x<width>)" : "");
    return -1;
  }
  char link[128];
  mb__pcie_describe(gen, width, link, sizeof link);
  snprintf(what, cap, "%s (emulated: MB_GPUEMU_PCIE)", link);
  return mb__pcie_gbps(gen, width);
}

static void emu_version(mb_gpuh_state_t *st, char *buf, size_t cap) {
  (void)st;
  snprintf(buf, cap, "emulated GPU runtime (tests/gpu_emu)");
}

static const mb_gpuh_vendor_t emu_vendor = {
    .name = MB_EMU_NAME,
    .device_word = "emulated GPU",
    .timer_note =
        "the emulator's device clock advances by its own "
        "execution time: its speed, not a GPU's",
    .state_size = sizeof(mb_gpuh_state_t),
    .device_size = sizeof(mb_gpuh_device_t),
    .probe = emu_probe,
    .version = emu_version,
    .link = emu_link,
/* The profiler's ranges: NVTX as CUDA's (warp 32) or roctx as HIP's
 * (warp 64), so both providers run behind a backend here (the build
 * defines MB_EMU_RANGES_ROCTX for gpuemu64). */
#ifdef MB_EMU_RANGES_ROCTX
    .ranges = &mb__gpuh_roctx_ranges,
#else
    .ranges = &mb__gpuh_nvtx_ranges,
#endif
};

static mb_status_t emu_init(const mb_host_api_t *host, void **state) {
  return mb__gpuh_init(&emu_vendor, host, state);
}

/* With MB_EMU_PREPACK (gpuemu64), a vendor-like fp8 GEMM that pre-packs B
 * comes first, as cuBLASLt's entries come before the shared ones. */
static const mb_backend_kernel_t emu_kernels[] = {
#ifdef MB_EMU_PREPACK
    MB_EMU_PREPACK_ENTRY(F8E4M3) MB_EMU_PREPACK_ENTRY(F8E5M2)
#endif
#include "gpu_kernel_entries.inc"
/* The collectives through NCCL / RCCL, loaded at run time (gpu_ccl.c). */
#include "gpu_ccl_entries.inc"
};

static const mb_backend_vtable_t emu_vtable = {
    MB_GPUH_VTABLE_HOOKS,
    .name = MB_EMU_NAME,
    .description =
        "test only: the shared GPU kernels on an emulated GPU (CPU fibers)",
    .init = emu_init,
    .kernels = emu_kernels,
    .num_kernels = sizeof emu_kernels / sizeof emu_kernels[0],
};

MB_BACKEND_EXPORT const mb_backend_vtable_t *mb_backend_entry(
    const mb_host_api_t *host) {
  return mb__backend_host_ok(host, MB_EMU_NAME) ? &emu_vtable : NULL;
}
