/* HIP backend — the module's entry point, its vtable and kernel table, and
 * what only HIP knows: device properties and peaks, the vendor libraries
 * (hipBLASLt, rocBLAS, rocm-smi), telemetry, environment facts, the
 * version line. Devices, memory, flushes and timing are the GPU host
 * layer's (backends/gpu/host/).
 *
 * The module links the HIP runtime (libamdhip64); hipBLASLt, rocBLAS and
 * rocm-smi are loaded at run time when present. On a machine without an
 * AMD GPU it still loads, reports 0 devices and says why ("no HIP device:
 * ..."). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_ccl.h"
#include "hip_internal.h"
#include "hip_vendor.h"
#include "mb_backend_entry.h"

/* The offload targets this module was compiled for (CMake sets it). */
#ifndef MB_HIP_ARCH_LIST
#define MB_HIP_ARCH_LIST "unknown"
#endif

static mb_hip_state_t *hip_of(mb_gpuh_state_t *st) {
  return (mb_hip_state_t *)(void *)st;
}

static mb_hip_device_t *hdev_of(mb_gpuh_device_t *d) {
  return (mb_hip_device_t *)(void *)d;
}

/* ---- devices ------------------------------------------------------------- */

/* "gfx90a:sramecc+:xnack-" -> "gfx90a": the processor, without the target
 * features (code objects are per processor). */
static void arch_base(const char *arch, char *out, size_t cap) {
  size_t n = strcspn(arch, ":");
  if (n >= cap) n = cap - 1;
  memcpy(out, arch, n);
  out[n] = '\0';
}

static mb_status_t hip_probe(mb_gpuh_state_t *st, mb_gpuh_device_t *base) {
  mb_hip_state_t *h = hip_of(st);
  mb_hip_device_t *d = hdev_of(base);
  d->smi_index = UINT32_MAX;
  hipDeviceProp_t prop;
  mb_status_t s = mb__hip_check(h, hipGetDeviceProperties(&prop, base->ordinal),
                                "device properties");
  if (s != MB_OK) return s;
  snprintf(d->arch, sizeof d->arch, "%.63s", prop.gcnArchName);
  arch_base(d->arch, d->arch_base, sizeof d->arch_base);
  /* Some ROCm releases leave the marketing name empty. */
  snprintf(base->name, sizeof base->name, "%.255s",
           prop.name[0] ? prop.name : d->arch_base);
  base->sm_count = prop.multiProcessorCount;
  /* 64 on GCN/CDNA, 32 on RDNA: the wavefront the device code was
   * compiled for on this target (gpu_runtime.h); host code sizes the
   * launches with it. */
  base->warp_size = prop.warpSize;
  base->memory_bytes = prop.totalGlobalMem;
  base->smem_optin = prop.sharedMemPerBlock;
  d->l2_bytes = prop.l2CacheSize > 0 ? (size_t)prop.l2CacheSize : 0;
  base->clock_hz = prop.clockRate * 1e3; /* peak engine clock */
  d->mclk_hz = prop.memoryClockRate * 1e3;
  d->bus_width_bits = prop.memoryBusWidth;
  mb__hip_peaks(d); /* base.llc_bytes, base.mem_bw too */
  base->peak_source = d->peak_source;
  d->smi_index =
      mb__hip_smi_index(h->smi, (uint32_t)prop.pciDomainID,
                        (uint32_t)prop.pciBusID, (uint32_t)prop.pciDeviceID, 0);
  return MB_OK;
}

/* The host layer found whether this build has code for the GPU; say what
 * to do about it in HIP's terms (a Debian hipcc cannot target MI300X). */
static mb_status_t hip_device_open(mb_gpuh_state_t *st,
                                   mb_gpuh_device_t *base) {
  (void)st;
  const mb_hip_device_t *d = hdev_of(base);
  if (!base->own_code)
    snprintf(base->why_no_code, sizeof base->why_no_code,
             "this build of the hip module has no code object for %s (its "
             "offload targets are the environment's offload_targets; "
             "rebuild with a hipcc that can target %s in "
             "MB_HIP_ARCHITECTURES)",
             d->arch_base, d->arch_base);
  return MB_OK;
}

static void hip_device_close(mb_gpuh_state_t *st, mb_gpuh_device_t *base) {
  mb__hip_blaslt_device_fini(hip_of(st), hdev_of(base));
  mb__hip_rocblas_device_fini(hip_of(st), hdev_of(base));
}

/* ---- instance ------------------------------------------------------------ */

/* The vendor libraries, each optional; the reason one is absent is what
 * its implementation's supports hook answers. Without a device they are
 * not even looked for: rocBLAS is a large load, and rocm-smi prints its
 * own complaint when it finds no GPU — on every context a program makes. */
static void hip_open(mb_gpuh_state_t *st, int devices) {
  mb_hip_state_t *h = hip_of(st);
  if (devices <= 0) {
    snprintf(h->blaslt_why, sizeof h->blaslt_why,
             "not looked for: no HIP device");
    snprintf(h->rocblas_why, sizeof h->rocblas_why,
             "not looked for: no HIP device");
    return;
  }
  h->smi = mb__hip_smi_open(&st->host, NULL);
  h->blaslt = mb__hip_blaslt_open(NULL, h->blaslt_why, sizeof h->blaslt_why);
  h->rocblas =
      mb__hip_rocblas_open(NULL, h->rocblas_why, sizeof h->rocblas_why);
  if (!h->blaslt)
    MB_HIP_LOG(h, MB_LOG_DEBUG, "hip: hipBLASLt: %s", h->blaslt_why);
  if (!h->rocblas)
    MB_HIP_LOG(h, MB_LOG_DEBUG, "hip: rocBLAS: %s", h->rocblas_why);
}

static void hip_close(mb_gpuh_state_t *st) {
  mb_hip_state_t *h = hip_of(st);
  mb__hip_blaslt_close(h->blaslt);
  mb__hip_rocblas_close(h->rocblas);
  mb__hip_smi_close(h->smi);
}

/* HIP 5.2's error string for "no device" is only the enum's name; the
 * usual causes are told apart by the kernel driver's device file. */
static void hip_why_no_device(mb_gpuh_state_t *st, hipError_t e, char *buf,
                              size_t cap) {
  (void)st;
  const char *why = hipGetErrorString(e);
  if (e == hipErrorNoDevice) {
    if (access("/dev/kfd", F_OK) != 0)
      why =
          "no /dev/kfd: the amdgpu kernel driver is not loaded (no AMD "
          "GPU, or none passed to this container)";
    else if (access("/dev/kfd", R_OK | W_OK) != 0)
      why =
          "/dev/kfd is not readable and writable by this user (add it to "
          "the render and video groups)";
    else
      why = "the runtime sees no GPU it supports";
  }
  snprintf(buf, cap, "%s (%s)", why, hipGetErrorName(e));
}

/* "HIP runtime 5.2.21153, driver 6.1, hipBLASLt 0.8.0, rocBLAS not loaded
 * (...), rocm-smi 7.0.0": one line that says which libraries a result
 * was measured with and why the others are absent. */
static void hip_version(mb_gpuh_state_t *st, char *buf, size_t cap) {
  mb_hip_state_t *h = hip_of(st);
  int rt = 0, drv = 0;
  hipRuntimeGetVersion(&rt);
  if (hipDriverGetVersion(&drv) != hipSuccess) drv = 0;
  (void)hipGetLastError();
  /* HIP packs versions as major * 10^7 + minor * 10^5 + patch. */
  snprintf(
      buf, cap, "HIP runtime %d.%d.%d, driver %d.%d.%d, %.150s, %.150s, %.60s",
      rt / 10000000, (rt / 100000) % 100, rt % 100000, drv / 10000000,
      (drv / 100000) % 100, drv % 100000,
      h->blaslt ? mb__hip_blaslt_version(h->blaslt) : "hipBLASLt not loaded",
      h->rocblas ? mb__hip_rocblas_version(h->rocblas) : "rocBLAS not loaded",
      h->smi ? mb__hip_smi_version(h->smi) : "rocm-smi not loaded");
}

static void hip_telemetry(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                          mb_telemetry_t *out) {
  mb__hip_smi_read(hip_of(st)->smi, hdev_of(d)->smi_index, out);
}

/* Facts a result carries about the device: what a reader needs to tell two
 * MI-series runs apart (processor and its features, whether our own
 * kernels had code for it, which vendor libraries were there). */
static uint32_t hip_environment(mb_gpuh_state_t *st, mb_gpuh_device_t *base,
                                mb_kernel_note_t *out, uint32_t max) {
  mb_hip_state_t *h = hip_of(st);
  const mb_hip_device_t *d = hdev_of(base);
  const mb_kernel_note_t facts[] = {
      {"gpu_arch", d->arch, 0},
      {"compute_units", NULL, base->sm_count},
      {"wavefront_size", NULL, base->warp_size},
      {"own_kernels", base->own_code ? "yes" : base->why_no_code,
       base->own_code},
      {"hipblaslt",
       h->blaslt ? mb__hip_blaslt_version(h->blaslt) : h->blaslt_why,
       h->blaslt != NULL},
      {"rocblas",
       h->rocblas ? mb__hip_rocblas_version(h->rocblas) : h->rocblas_why,
       h->rocblas != NULL},
      {"offload_targets", MB_HIP_ARCH_LIST, 0},
  };
  const uint32_t n = sizeof facts / sizeof facts[0];
  for (uint32_t i = 0; i < n && i < max; i++) out[i] = facts[i];
  return n;
}

static double hip_peak_flops(const mb_gpuh_device_t *d, mb_dtype_t dtype) {
  return ((const mb_hip_device_t *)(const void *)d)->peak[dtype];
}

static double hip_peak_for(const mb_gpuh_device_t *d, const char *op,
                           const mb_op_params_t *params) {
  return mb__hip_peak_for((const mb_hip_device_t *)(const void *)d, op, params);
}

static const mb_gpuh_vendor_t hip_vendor = {
    .name = "hip",
    .device_word = "HIP",
    .state_size = sizeof(mb_hip_state_t),
    .device_size = sizeof(mb_hip_device_t),
    .open = hip_open,
    .close = hip_close,
    .probe = hip_probe,
    .device_open = hip_device_open,
    .device_close = hip_device_close,
    .why_no_device = hip_why_no_device,
    .version = hip_version,
    .telemetry = hip_telemetry,
    .environment = hip_environment,
    .peak_flops = hip_peak_flops,
    .peak_for = hip_peak_for,
    .link = mb__hip_link,
    /* roctx ranges, for rocprof, when libroctx64 loads (gpu_range.h). */
    .ranges = &mb__gpuh_roctx_ranges,
};

static mb_status_t hip_init(const mb_host_api_t *host, void **state) {
  return mb__gpuh_init(&hip_vendor, host, state);
}

/* Vendor libraries first (hipBLASLt, then rocBLAS): the first kernel that
 * supports a request is its default, and one whose library is missing
 * declines, so the default falls through to our own. */
static const mb_backend_kernel_t hip_kernels[] = {
#include "hip_kernels_gemm.def"
#include "gpu_kernel_entries.inc"
/* The collectives through NCCL / RCCL, loaded at run time (gpu_ccl.c). */
#include "gpu_ccl_entries.inc"
};

static const mb_backend_vtable_t hip_vtable = {
    MB_GPUH_VTABLE_HOOKS,
    .name = "hip",
    .description =
        "AMD GPUs: hipBLASLt and rocBLAS GEMM (loaded at run "
        "time), our own tiled GEMM and the shared GPU kernels, "
        "timed with HIP events",
    .init = hip_init,
    .kernels = hip_kernels,
    .num_kernels = sizeof hip_kernels / sizeof hip_kernels[0],
};

MB_BACKEND_EXPORT const mb_backend_vtable_t *mb_backend_entry(
    const mb_host_api_t *host) {
  return mb__backend_host_ok(host, "hip") ? &hip_vtable : NULL;
}
