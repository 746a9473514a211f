/* HIP backend — the module's entry point, its vtable and kernel table, and
 * the small hooks (devices, memory, copies, cache flush, telemetry,
 * environment facts).
 *
 * The module links the HIP runtime (libamdhip64); hipBLASLt, rocBLAS and
 * rocm-smi are loaded at run time when present. On a machine without an
 * AMD GPU it still loads, reports 0 devices and says why ("no HIP device:
 * ..."). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"
#include "hip_vendor.h"
#include "mb_backend_entry.h"

/* The offload targets this module was compiled for (CMake sets it). */
#ifndef MB_HIP_ARCH_LIST
#define MB_HIP_ARCH_LIST "unknown"
#endif

/* ---- errors -------------------------------------------------------------- */

mb_status_t mb__hip_check(const mb_hip_state_t *st, hipError_t e,
                          const char *what) {
  if (e == hipSuccess) return MB_OK;
  (void)hipGetLastError(); /* no stale error for the next launch check */
  snprintf(st->last_error, sizeof st->last_error_buf, "hip: %s: %s (%s)", what,
           hipGetErrorString(e), hipGetErrorName(e));
  st->host.set_error("%s", st->last_error);
  return e == hipErrorOutOfMemory ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

mb_hip_device_t *mb__hip_device(mb_hip_state_t *st, uint32_t dev) {
  if (dev < st->num_devices) return &st->devices[dev];
  if (st->num_devices)
    st->host.set_error("hip: no device %u (devices 0..%u)", dev,
                       st->num_devices - 1);
  else
    st->host.set_error("hip: %s", st->why_none);
  return NULL;
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

/* Whether this build can run its own kernels (the shared ones, the native
 * GEMM, the blocking kernel) on the current device. */
static void probe_code(mb_hip_device_t *d) {
  const hipError_t e = mb__hip_probe_code();
  d->own_code = e == hipSuccess;
  if (!d->own_code)
    snprintf(d->why_no_code, sizeof d->why_no_code,
             "this build of the hip module has no code object for %s (its "
             "offload targets are the environment's offload_targets; "
             "rebuild with a hipcc that can target %s in "
             "MB_HIP_ARCHITECTURES): %s",
             d->arch_base, d->arch_base, hipGetErrorName(e));
}

static mb_status_t device_init(mb_hip_state_t *st, mb_hip_device_t *d,
                               int ordinal) {
  d->ordinal = ordinal;
  d->smi_index = UINT32_MAX;
  hipDeviceProp_t prop;
  mb_status_t s;
  if ((s = mb__hip_check(st, hipSetDevice(ordinal), "set device")) != MB_OK ||
      (s = mb__hip_check(st, hipGetDeviceProperties(&prop, ordinal),
                         "device properties")) != MB_OK)
    return s;
  snprintf(d->arch, sizeof d->arch, "%.63s", prop.gcnArchName);
  arch_base(d->arch, d->arch_base, sizeof d->arch_base);
  /* Some ROCm releases leave the marketing name empty. */
  snprintf(d->name, sizeof d->name, "%.255s",
           prop.name[0] ? prop.name : d->arch_base);
  d->cu_count = prop.multiProcessorCount;
  d->warp_size = prop.warpSize;
  d->memory_bytes = prop.totalGlobalMem;
  d->l2_bytes = prop.l2CacheSize > 0 ? (size_t)prop.l2CacheSize : 0;
  d->sclk_hz = prop.clockRate * 1e3;
  d->mclk_hz = prop.memoryClockRate * 1e3;
  d->bus_width_bits = prop.memoryBusWidth;
  mb__hip_peaks(d);
  probe_code(d);

  if ((s = mb__hip_check(
           st, hipStreamCreateWithFlags(&d->stream, hipStreamNonBlocking),
           "stream")) != MB_OK ||
      (s = mb__hip_timer_init(st, d)) != MB_OK)
    return s;
  if (d->llc_bytes &&
      (s = mb__hip_check(st, hipMalloc(&d->flush_buf, d->llc_bytes),
                         "cache flush buffer")) != MB_OK)
    return s;
  d->smi_index =
      mb__hip_smi_index(st->smi, (uint32_t)prop.pciDomainID,
                        (uint32_t)prop.pciBusID, (uint32_t)prop.pciDeviceID, 0);
  d->env = (mb_gpu_env_t){
      .stream = d->stream,
      .host = &st->host,
      .backend = "hip",
      .sm_count = d->cu_count,
      /* 64 on GCN/CDNA, 32 on RDNA: the wavefront the device code was
       * compiled for on this target (gpu_runtime.h); host code sizes the
       * launches with it. */
      .warp_size = d->warp_size,
      .smem_optin = prop.sharedMemPerBlock,
      .scratch_alloc = mb__gpu_scratch_alloc,
      .scratch_free = mb__gpu_scratch_free,
  };
  return MB_OK;
}

static void device_fini(mb_hip_state_t *st, mb_hip_device_t *d) {
  hipSetDevice(d->ordinal);
  mb__hip_blaslt_device_fini(st, d);
  mb__hip_rocblas_device_fini(st, d);
  mb__hip_timer_fini(d);
  hipFree(d->flush_buf);
  if (d->stream) hipStreamDestroy(d->stream);
  (void)hipGetLastError();
}

/* ---- instance ------------------------------------------------------------ */

static void hip_fini(void *state) {
  mb_hip_state_t *st = state;
  if (!st) return;
  for (uint32_t i = 0; i < st->num_devices; i++)
    device_fini(st, &st->devices[i]);
  free(st->devices);
  mb__hip_blaslt_close(st->blaslt);
  mb__hip_rocblas_close(st->rocblas);
  mb__hip_smi_close(st->smi);
  free(st);
}

/* "HIP runtime 5.2.21153, driver 6.1, hipBLASLt 0.8.0, rocBLAS not loaded
 * (...), rocm-smi 7.0.0": one line that says which libraries a result
 * was measured with and why the others are absent. */
static void format_version(mb_hip_state_t *st) {
  int rt = 0, drv = 0;
  hipRuntimeGetVersion(&rt);
  if (hipDriverGetVersion(&drv) != hipSuccess) drv = 0;
  (void)hipGetLastError();
  /* HIP packs versions as major * 10^7 + minor * 10^5 + patch. */
  snprintf(
      st->version, sizeof st->version,
      "HIP runtime %d.%d.%d, driver %d.%d.%d, %.150s, %.150s, %.60s",
      rt / 10000000, (rt / 100000) % 100, rt % 100000, drv / 10000000,
      (drv / 100000) % 100, drv % 100000,
      st->blaslt ? mb__hip_blaslt_version(st->blaslt) : "hipBLASLt not loaded",
      st->rocblas ? mb__hip_rocblas_version(st->rocblas) : "rocBLAS not loaded",
      st->smi ? mb__hip_smi_version(st->smi) : "rocm-smi not loaded");
}

/* The vendor libraries: each optional; the reason it is absent is what
 * its implementation's supports hook answers. */
static void open_libraries(mb_hip_state_t *st) {
  st->smi = mb__hip_smi_open(&st->host, NULL);
  st->blaslt = mb__hip_blaslt_open(NULL, st->blaslt_why, sizeof st->blaslt_why);
  st->rocblas =
      mb__hip_rocblas_open(NULL, st->rocblas_why, sizeof st->rocblas_why);
  if (!st->blaslt)
    MB_HIP_LOG(st, MB_LOG_DEBUG, "hip: hipBLASLt: %s", st->blaslt_why);
  if (!st->rocblas)
    MB_HIP_LOG(st, MB_LOG_DEBUG, "hip: rocBLAS: %s", st->rocblas_why);
}

/* HIP 5.2's error string for "no device" is only the enum's name; the
 * usual causes are told apart by the kernel driver's device file. */
static void explain_no_device(mb_hip_state_t *st, hipError_t e) {
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
  snprintf(st->why_none, sizeof st->why_none, "no HIP device: %s (%s)", why,
           hipGetErrorName(e));
}

static mb_status_t hip_init(const mb_host_api_t *host, void **state) {
  mb_hip_state_t *st = calloc(1, sizeof *st);
  if (!st) {
    host->set_error("hip: cannot allocate the backend state");
    return MB_ERR_NO_MEMORY;
  }
  st->host = *host;
  st->host.struct_size = sizeof st->host;
  st->last_error = st->last_error_buf;
  int n = 0;
  const hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess) {
    explain_no_device(st, e);
    (void)hipGetLastError();
    n = 0;
  } else if (n == 0) {
    snprintf(st->why_none, sizeof st->why_none,
             "no HIP device: the runtime reports none");
  }
  /* Without a device the libraries are not even looked for: rocBLAS is a
   * large load, and rocm-smi prints its own complaint when it finds no
   * GPU — on every context a program creates. */
  if (n > 0) {
    open_libraries(st);
  } else {
    snprintf(st->blaslt_why, sizeof st->blaslt_why,
             "not looked for: no HIP device");
    snprintf(st->rocblas_why, sizeof st->rocblas_why,
             "not looked for: no HIP device");
  }
  if (n > 0 && !(st->devices = calloc((size_t)n, sizeof *st->devices))) {
    hip_fini(st);
    host->set_error("hip: cannot allocate %d device records", n);
    return MB_ERR_NO_MEMORY;
  }
  /* A GPU that cannot be set up is left out with the reason logged; the
   * others stay usable. */
  for (int i = 0; i < n; i++) {
    mb_hip_device_t *d = &st->devices[st->num_devices];
    if (device_init(st, d, i) == MB_OK) {
      st->num_devices++;
      MB_HIP_LOG(st, MB_LOG_DEBUG,
                 "hip: device %d: %s, %s, %d CUs, last-level cache %zu KiB "
                 "(%s)%s%s",
                 i, d->name, d->arch, d->cu_count, d->llc_bytes >> 10,
                 d->peak_source, d->own_code ? "" : "; ",
                 d->own_code ? "" : d->why_no_code);
      if (!d->own_code) MB_HIP_LOG(st, MB_LOG_WARN, "hip: %s", d->why_no_code);
    } else {
      MB_HIP_LOG(st, MB_LOG_WARN, "hip: device %d left out: %s", i,
                 st->last_error);
      snprintf(st->why_none, sizeof st->why_none,
               "no HIP device: device %d could not be set up: %s", i,
               st->last_error);
      device_fini(st, d);
      memset(d, 0, sizeof *d);
    }
  }
  format_version(st);
  *state = st;
  return MB_OK;
}

static const char *hip_version(void *state) {
  return ((const mb_hip_state_t *)state)->version;
}

static uint32_t hip_device_count(void *state, const char **why_none) {
  const mb_hip_state_t *st = state;
  if (why_none) *why_none = st->num_devices ? NULL : st->why_none;
  return st->num_devices;
}

static mb_status_t hip_device_info(void *state, uint32_t dev,
                                   mb_device_info_t *out) {
  mb_hip_device_t *d = mb__hip_device(state, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  info.backend = "hip";
  info.index = dev;
  info.name = d->name;
  info.kind = MB_DEVICE_GPU;
  info.memory_bytes = d->memory_bytes;
  info.mem_bw_bytes_per_s = d->mem_bw;
  info.compute_units = (uint32_t)d->cu_count;
  info.clock_hz = d->sclk_hz;
  /* The last level (L2, or MI300's Infinity Cache): what rotate and flush
   * must exceed. */
  info.cache_bytes[2] = d->llc_bytes;
  info.peak_source = d->peak_source;
  const uint32_t caller_size = out->struct_size;
  memcpy(out, &info, caller_size < sizeof info ? caller_size : sizeof info);
  out->struct_size = caller_size;
  return MB_OK;
}

static double hip_peak_flops(void *state, uint32_t dev, mb_dtype_t dtype) {
  const mb_hip_state_t *st = state;
  if (dev >= st->num_devices || dtype <= MB_DTYPE_NONE ||
      dtype >= MB_DTYPE_COUNT)
    return 0;
  return st->devices[dev].peak[dtype];
}

static double hip_peak_for(void *state, uint32_t dev, const char *op,
                           const mb_op_params_t *params) {
  const mb_hip_state_t *st = state;
  return dev < st->num_devices ? mb__hip_peak_for(&st->devices[dev], op, params)
                               : 0;
}

/* ---- memory -------------------------------------------------------------- */

static mb_status_t hip_alloc(void *state, uint32_t dev, size_t bytes,
                             void **ptr) {
  mb_hip_state_t *st = state;
  mb_hip_device_t *d = mb__hip_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  hipSetDevice(d->ordinal);
  const hipError_t e = hipMalloc(ptr, bytes ? bytes : 1);
  if (e == hipSuccess) return MB_OK;
  (void)hipGetLastError();
  size_t free_b = 0, total_b = 0;
  hipMemGetInfo(&free_b, &total_b);
  (void)hipGetLastError();
  st->host.set_error(
      "hip: out of device memory: %zu bytes on device %u (%s; %zu of %zu MiB "
      "free)",
      bytes, dev, hipGetErrorString(e), free_b >> 20, total_b >> 20);
  return MB_ERR_NO_MEMORY;
}

static void hip_free(void *state, uint32_t dev, void *ptr) {
  mb_hip_device_t *d = mb__hip_device(state, dev);
  if (d) hipSetDevice(d->ordinal);
  hipFree(ptr);
  (void)hipGetLastError();
}

static mb_status_t copy(mb_hip_state_t *st, uint32_t dev, void *dst,
                        const void *src, size_t bytes, hipMemcpyKind k) {
  mb_hip_device_t *d = mb__hip_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  hipSetDevice(d->ordinal);
  if (!bytes) return MB_OK;
  /* On the benchmark stream, so it is ordered after every kernel. */
  mb_status_t s =
      mb__hip_check(st, hipMemcpyAsync(dst, src, bytes, k, d->stream), "copy");
  if (s == MB_OK)
    s = mb__hip_check(st, hipStreamSynchronize(d->stream), "copy");
  return s;
}

static mb_status_t hip_copy_to_device(void *state, uint32_t dev, void *dst,
                                      const void *src, size_t bytes) {
  return copy(state, dev, dst, src, bytes, hipMemcpyHostToDevice);
}

static mb_status_t hip_copy_to_host(void *state, uint32_t dev, void *dst,
                                    const void *src, size_t bytes) {
  return copy(state, dev, dst, src, bytes, hipMemcpyDeviceToHost);
}

/* A kernel's execution error surfaces here (asynchronously). */
static mb_status_t hip_sync(void *state, uint32_t dev) {
  mb_hip_state_t *st = state;
  mb_hip_device_t *d = mb__hip_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  return mb__hip_check(st, hipStreamSynchronize(d->stream), "kernel");
}

/* Write a buffer the size of the last-level cache on the stream, then wait,
 * so the next sample starts with none of its operands cached (MI300's
 * Infinity Cache included: the buffer is its 256 MiB there). */
static mb_status_t hip_flush_cache(void *state, uint32_t dev) {
  mb_hip_state_t *st = state;
  mb_hip_device_t *d = mb__hip_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  if (!d->flush_buf) return MB_OK;
  mb_status_t s = mb__hip_check(
      st, hipMemsetAsync(d->flush_buf, 0, d->llc_bytes, d->stream), "flush");
  return s == MB_OK
             ? mb__hip_check(st, hipStreamSynchronize(d->stream), "flush")
             : s;
}

static mb_status_t hip_time_batch(void *state, uint32_t dev,
                                  mb_kernel_run_fn run, void *kstate,
                                  const mb_kernel_call_t *call, uint32_t batch,
                                  double *elapsed_ns) {
  mb_hip_device_t *d = mb__hip_device(state, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  return mb__hip_time_batch(state, d, run, kstate, call, batch, elapsed_ns);
}

static mb_status_t hip_telemetry(void *state, uint32_t dev,
                                 mb_telemetry_t *out) {
  mb_hip_state_t *st = state;
  mb_hip_device_t *d = mb__hip_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  mb__hip_smi_read(st->smi, d->smi_index, out);
  return MB_OK;
}

static const char *hip_timer_info(void *state, uint32_t dev) {
  mb_hip_device_t *d = mb__hip_device(state, dev);
  return d ? d->timer_info : "";
}

/* Facts a result carries about the device: what a reader needs to tell two
 * MI-series runs apart (processor and its features, whether our own
 * kernels had code for it, which vendor libraries were there). */
static uint32_t hip_environment(void *state, uint32_t dev,
                                mb_kernel_note_t *out, uint32_t max) {
  mb_hip_state_t *st = state;
  mb_hip_device_t *d = mb__hip_device(st, dev);
  if (!d) return 0;
  const mb_kernel_note_t facts[] = {
      {"gpu_arch", d->arch, 0},
      {"compute_units", NULL, d->cu_count},
      {"wavefront_size", NULL, d->warp_size},
      {"own_kernels", d->own_code ? "yes" : d->why_no_code, d->own_code},
      {"hipblaslt",
       st->blaslt ? mb__hip_blaslt_version(st->blaslt) : st->blaslt_why,
       st->blaslt != NULL},
      {"rocblas",
       st->rocblas ? mb__hip_rocblas_version(st->rocblas) : st->rocblas_why,
       st->rocblas != NULL},
      {"offload_targets", MB_HIP_ARCH_LIST, 0},
  };
  const uint32_t n = sizeof facts / sizeof facts[0];
  for (uint32_t i = 0; i < n && i < max; i++) out[i] = facts[i];
  return n;
}

/* ---- the shared kernels -------------------------------------------------- */

/* The shared kernels' way to the device's launch environment
 * (gpu_kernels.h): none on a device this build has no code for, so that
 * every shared kernel, the native GEMM's quantize-inputs included, is
 * skipped with that reason instead of failing to launch. */
mb_status_t mb__gpu_device_env(void *bstate, uint32_t dev,
                               const mb_gpu_env_t **env) {
  mb_hip_state_t *st = bstate;
  mb_hip_device_t *d = mb__hip_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  if (!d->own_code) {
    st->host.set_error("hip: %s", d->why_no_code);
    return MB_ERR_UNSUPPORTED;
  }
  hipSetDevice(d->ordinal);
  *env = &d->env;
  return MB_OK;
}

/* Vendor libraries first (hipBLASLt, then rocBLAS): the first kernel that
 * supports a request is its default, and one whose library is missing
 * declines, so the default falls through to our own. */
static const mb_backend_kernel_t hip_kernels[] = {
#include "hip_kernels_gemm.def"
#include "gpu_kernel_entries.inc"
};

static const mb_backend_vtable_t hip_vtable = {
    .abi_version = MB_BACKEND_ABI_VERSION,
    .struct_size = sizeof(mb_backend_vtable_t),
    .name = "hip",
    .description =
        "AMD GPUs: hipBLASLt and rocBLAS GEMM (loaded at run "
        "time), our own tiled GEMM and the shared GPU kernels, "
        "timed with HIP events",
    .init = hip_init,
    .fini = hip_fini,
    .version = hip_version,
    .device_count = hip_device_count,
    .device_info = hip_device_info,
    .peak_flops = hip_peak_flops,
    .alloc = hip_alloc,
    .free = hip_free,
    .copy_to_device = hip_copy_to_device,
    .copy_to_host = hip_copy_to_host,
    .sync = hip_sync,
    .flush_cache = hip_flush_cache,
    .time_batch = hip_time_batch,
    .kernels = hip_kernels,
    .num_kernels = sizeof hip_kernels / sizeof hip_kernels[0],
    .telemetry = hip_telemetry,
    .peak_for = hip_peak_for,
    .timer_info = hip_timer_info,
    .environment = hip_environment,
};

/* ---- entry --------------------------------------------------------------- */

MB_BACKEND_EXPORT const mb_backend_vtable_t *mb_backend_entry(
    const mb_host_api_t *host) {
  return mb__backend_host_ok(host, "hip") ? &hip_vtable : NULL;
}
