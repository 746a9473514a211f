/* CUDA backend — the module's entry point, its vtable and kernel table, and
 * the small hooks (devices, memory, copies, cache flush, telemetry).
 *
 * The module links cudart statically and cuBLASLt dynamically; NVML is
 * loaded at run time. On a machine without a driver or GPU it still loads,
 * reports 0 devices and says why ("no CUDA device: ..."). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mb_backend_entry.h"
#include "cuda_gemm_lt.h"
#include "cuda_internal.h"

/* ---- errors -------------------------------------------------------------- */

mb_status_t mb__cuda_check(const mb_cuda_state_t *st, cudaError_t e,
                           const char *what) {
  if (e == cudaSuccess) return MB_OK;
  snprintf(st->last_error, sizeof st->last_error_buf, "cuda: %s: %s (%s)", what,
           cudaGetErrorString(e), cudaGetErrorName(e));
  st->host.set_error("%s", st->last_error);
  return e == cudaErrorMemoryAllocation ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

mb_status_t mb__cuda_check_lt(const mb_cuda_state_t *st, cublasStatus_t s,
                              const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS) return MB_OK;
  snprintf(st->last_error, sizeof st->last_error_buf, "cuda: cuBLASLt: %s: %s",
           what, cublasLtGetStatusString(s));
  st->host.set_error("%s", st->last_error);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) return MB_ERR_UNSUPPORTED;
  return s == CUBLAS_STATUS_ALLOC_FAILED ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

mb_cuda_device_t *mb__cuda_device(mb_cuda_state_t *st, uint32_t dev) {
  if (dev < st->num_devices) return &st->devices[dev];
  if (st->num_devices)
    st->host.set_error("cuda: no device %u (devices 0..%u)", dev,
                       st->num_devices - 1);
  else
    st->host.set_error("cuda: %s", st->why_none);
  return NULL;
}

/* ---- devices ------------------------------------------------------------- */

static int attr(enum cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    cudaGetLastError();
    v = 0;
  }
  return v;
}

static mb_status_t device_init(mb_cuda_state_t *st, mb_cuda_device_t *d,
                               int ordinal) {
  d->ordinal = ordinal;
  struct cudaDeviceProp prop;
  mb_status_t s;
  if ((s = mb__cuda_check(st, cudaSetDevice(ordinal), "set device")) != MB_OK ||
      (s = mb__cuda_check(st, cudaGetDeviceProperties(&prop, ordinal),
                          "device properties")) != MB_OK)
    return s;
  snprintf(d->name, sizeof d->name, "%s", prop.name);
  d->cc_major = prop.major;
  d->cc_minor = prop.minor;
  d->sm_count = prop.multiProcessorCount;
  d->memory_bytes = prop.totalGlobalMem;
  d->l2_bytes = (size_t)attr(cudaDevAttrL2CacheSize, ordinal);
  d->sm_clock_hz = attr(cudaDevAttrClockRate, ordinal) * 1e3;
  d->mem_clock_hz = attr(cudaDevAttrMemoryClockRate, ordinal) * 1e3;
  d->bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  mb__cuda_peaks(d);

  if ((s = mb__cuda_check(
           st, cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking),
           "stream")) != MB_OK ||
      (s = mb__cuda_timer_init(st, d)) != MB_OK)
    return s;
  if (d->l2_bytes &&
      (s = mb__cuda_check(st, cudaMalloc(&d->flush_buf, d->l2_bytes),
                          "L2 flush buffer")) != MB_OK)
    return s;
  if ((s = mb__cuda_check_lt(st, cublasLtCreate(&d->lt), "create handle")) !=
          MB_OK ||
      (s = mb__cuda_check(st,
                          cudaMalloc(&d->workspace, MB_CUDA_WORKSPACE_BYTES),
                          "cuBLASLt workspace")) != MB_OK)
    return s;

  char bus[32] = "";
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal) == cudaSuccess)
    d->nvml_dev = mb__cuda_nvml_device(st->nvml, bus);
  else
    cudaGetLastError();

  d->env = (mb_gpu_env_t){
      .stream = d->stream,
      .host = &st->host,
      .backend = "cuda",
      .sm_count = d->sm_count,
      .warp_size = prop.warpSize,
      .smem_optin =
          (size_t)attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal),
      .scratch_alloc = mb__gpu_scratch_alloc,
      .scratch_free = mb__gpu_scratch_free,
  };
  return MB_OK;
}

static void device_fini(mb_cuda_device_t *d) {
  cudaSetDevice(d->ordinal);
  mb__cuda_timer_fini(d);
  if (d->lt) cublasLtDestroy(d->lt);
  cudaFree(d->workspace);
  cudaFree(d->flush_buf);
  if (d->stream) cudaStreamDestroy(d->stream);
  cudaGetLastError();
}

/* ---- instance ------------------------------------------------------------ */

static void cuda_fini(void *state) {
  mb_cuda_state_t *st = state;
  if (!st) return;
  for (uint32_t i = 0; i < st->num_devices; i++) device_fini(&st->devices[i]);
  free(st->devices);
  mb__cuda_nvml_close(st->nvml);
  free(st);
}

static void format_version(mb_cuda_state_t *st) {
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
  cudaGetLastError();
  const size_t lt = cublasLtGetVersion();
  const char *nvml = mb__cuda_nvml_driver(st->nvml);
  char driver[64] = "no driver";
  if (drv)
    snprintf(driver, sizeof driver, "driver API %d.%d%s%s", drv / 1000,
             (drv % 1000) / 10, *nvml ? ", NVIDIA driver " : "", nvml);
  snprintf(st->version, sizeof st->version,
           "CUDA runtime %d.%d, %s, cuBLASLt %zu.%zu.%zu%s", rt / 1000,
           (rt % 1000) / 10, driver, lt / 10000, (lt / 100) % 100, lt % 100,
           st->nvml ? "" : ", NVML not loaded");
}

static mb_status_t cuda_init(const mb_host_api_t *host, void **state) {
  mb_cuda_state_t *st = calloc(1, sizeof *st);
  if (!st) {
    host->set_error("cuda: cannot allocate the backend state");
    return MB_ERR_NO_MEMORY;
  }
  st->host = *host;
  st->host.struct_size = sizeof st->host;
  st->last_error = st->last_error_buf;
  st->nvml = mb__cuda_nvml_open(host);
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(st->why_none, sizeof st->why_none, "no CUDA device: %s (%s)",
             cudaGetErrorString(e), cudaGetErrorName(e));
    cudaGetLastError();
    n = 0;
  } else if (n == 0) {
    snprintf(st->why_none, sizeof st->why_none,
             "no CUDA device: the driver reports none");
  }
  if (n > 0 && !(st->devices = calloc((size_t)n, sizeof *st->devices))) {
    cuda_fini(st);
    host->set_error("cuda: cannot allocate %d device records", n);
    return MB_ERR_NO_MEMORY;
  }
  /* A GPU that cannot be set up is left out with the reason logged; the
   * others stay usable. */
  for (int i = 0; i < n; i++) {
    mb_cuda_device_t *d = &st->devices[st->num_devices];
    if (device_init(st, d, i) == MB_OK) {
      st->num_devices++;
      MB_CUDA_LOG(st, MB_LOG_DEBUG,
                  "cuda: device %d: %s, sm_%d%d, %d SMs, L2 %zu KiB (%s)", i,
                  d->name, d->cc_major, d->cc_minor, d->sm_count,
                  d->l2_bytes >> 10, d->peak_source);
    } else {
      MB_CUDA_LOG(st, MB_LOG_WARN, "cuda: device %d left out: %s", i,
                  st->last_error);
      snprintf(st->why_none, sizeof st->why_none,
               "no CUDA device: device %d could not be set up: %s", i,
               st->last_error);
      device_fini(d);
      memset(d, 0, sizeof *d);
    }
  }
  format_version(st);
  *state = st;
  return MB_OK;
}

static const char *cuda_version(void *state) {
  return ((const mb_cuda_state_t *)state)->version;
}

static uint32_t cuda_device_count(void *state, const char **why_none) {
  const mb_cuda_state_t *st = state;
  if (why_none) *why_none = st->num_devices ? NULL : st->why_none;
  return st->num_devices;
}

static mb_status_t cuda_device_info(void *state, uint32_t dev,
                                    mb_device_info_t *out) {
  mb_cuda_device_t *d = mb__cuda_device(state, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  info.backend = "cuda";
  info.index = dev;
  info.name = d->name;
  info.kind = MB_DEVICE_GPU;
  info.memory_bytes = d->memory_bytes;
  info.mem_bw_bytes_per_s = d->mem_bw;
  info.compute_units = (uint32_t)d->sm_count;
  info.clock_hz = d->sm_clock_hz;
  info.cache_bytes[2] = d->l2_bytes; /* L2 is the last level */
  info.peak_source = d->peak_source;
  const uint32_t caller_size = out->struct_size;
  memcpy(out, &info, caller_size < sizeof info ? caller_size : sizeof info);
  out->struct_size = caller_size;
  return MB_OK;
}

static double cuda_peak_flops(void *state, uint32_t dev, mb_dtype_t dtype) {
  const mb_cuda_state_t *st = state;
  if (dev >= st->num_devices || dtype <= MB_DTYPE_NONE ||
      dtype >= MB_DTYPE_COUNT)
    return 0;
  return st->devices[dev].peak[dtype];
}

static double cuda_peak_for(void *state, uint32_t dev, const char *op,
                            const mb_op_params_t *params) {
  const mb_cuda_state_t *st = state;
  return dev < st->num_devices
             ? mb__cuda_peak_for(&st->devices[dev], op, params)
             : 0;
}

/* ---- memory -------------------------------------------------------------- */

static mb_status_t cuda_alloc(void *state, uint32_t dev, size_t bytes,
                              void **ptr) {
  mb_cuda_state_t *st = state;
  mb_cuda_device_t *d = mb__cuda_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  cudaSetDevice(d->ordinal);
  const cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
  if (e == cudaSuccess) return MB_OK;
  cudaGetLastError();
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  st->host.set_error(
      "cuda: out of device memory: %zu bytes on device %u (%s; %zu of %zu "
      "MiB free)",
      bytes, dev, cudaGetErrorString(e), free_b >> 20, total_b >> 20);
  return MB_ERR_NO_MEMORY;
}

static void cuda_free(void *state, uint32_t dev, void *ptr) {
  mb_cuda_device_t *d = mb__cuda_device(state, dev);
  if (d) cudaSetDevice(d->ordinal);
  cudaFree(ptr);
}

static mb_status_t copy(mb_cuda_state_t *st, uint32_t dev, void *dst,
                        const void *src, size_t bytes, enum cudaMemcpyKind k) {
  mb_cuda_device_t *d = mb__cuda_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  cudaSetDevice(d->ordinal);
  if (!bytes) return MB_OK;
  /* On the benchmark stream, so it is ordered after every kernel. */
  mb_status_t s = mb__cuda_check(
      st, cudaMemcpyAsync(dst, src, bytes, k, d->stream), "copy");
  if (s == MB_OK)
    s = mb__cuda_check(st, cudaStreamSynchronize(d->stream), "copy");
  return s;
}

static mb_status_t cuda_copy_to_device(void *state, uint32_t dev, void *dst,
                                       const void *src, size_t bytes) {
  return copy(state, dev, dst, src, bytes, cudaMemcpyHostToDevice);
}

static mb_status_t cuda_copy_to_host(void *state, uint32_t dev, void *dst,
                                     const void *src, size_t bytes) {
  return copy(state, dev, dst, src, bytes, cudaMemcpyDeviceToHost);
}

/* A kernel's execution error surfaces here (asynchronously). */
static mb_status_t cuda_sync(void *state, uint32_t dev) {
  mb_cuda_state_t *st = state;
  mb_cuda_device_t *d = mb__cuda_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  return mb__cuda_check(st, cudaStreamSynchronize(d->stream), "kernel");
}

/* nvbench's flush: write a buffer the size of L2 on the stream, then wait,
 * so the next sample starts with none of its operands in L2. */
static mb_status_t cuda_flush_cache(void *state, uint32_t dev) {
  mb_cuda_state_t *st = state;
  mb_cuda_device_t *d = mb__cuda_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  if (!d->flush_buf) return MB_OK;
  mb_status_t s = mb__cuda_check(
      st, cudaMemsetAsync(d->flush_buf, 0, d->l2_bytes, d->stream), "flush");
  return s == MB_OK
             ? mb__cuda_check(st, cudaStreamSynchronize(d->stream), "flush")
             : s;
}

static mb_status_t cuda_time_batch(void *state, uint32_t dev,
                                   mb_kernel_run_fn run, void *kstate,
                                   const mb_kernel_call_t *call, uint32_t batch,
                                   double *elapsed_ns) {
  mb_cuda_device_t *d = mb__cuda_device(state, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  return mb__cuda_time_batch(state, d, run, kstate, call, batch, elapsed_ns);
}

static mb_status_t cuda_telemetry(void *state, uint32_t dev,
                                  mb_telemetry_t *out) {
  mb_cuda_state_t *st = state;
  mb_cuda_device_t *d = mb__cuda_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  mb__cuda_nvml_read(st->nvml, d->nvml_dev, out);
  return MB_OK;
}

static const char *cuda_timer_info(void *state, uint32_t dev) {
  mb_cuda_device_t *d = mb__cuda_device(state, dev);
  return d ? d->timer_info : "";
}

/* ---- the shared kernels -------------------------------------------------- */

/* The shared kernels' way to the device's launch environment
 * (gpu_kernels.h). */
mb_status_t mb__gpu_device_env(void *bstate, uint32_t dev,
                               const mb_gpu_env_t **env) {
  mb_cuda_device_t *d = mb__cuda_device(bstate, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  cudaSetDevice(d->ordinal);
  *env = &d->env;
  return MB_OK;
}

/* cuBLASLt first: the first match is a request's default. */
static const mb_backend_kernel_t cuda_kernels[] = {
#include "cuda_kernels_gemm.def"
#include "gpu_kernel_entries.inc"
};

static const mb_backend_vtable_t cuda_vtable = {
    .abi_version = MB_BACKEND_ABI_VERSION,
    .struct_size = sizeof(mb_backend_vtable_t),
    .name = "cuda",
    .description =
        "NVIDIA GPUs: cuBLASLt GEMM (autotuned) and the shared "
        "GPU kernels, timed with CUDA events",
    .init = cuda_init,
    .fini = cuda_fini,
    .version = cuda_version,
    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .peak_flops = cuda_peak_flops,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_to_device = cuda_copy_to_device,
    .copy_to_host = cuda_copy_to_host,
    .sync = cuda_sync,
    .flush_cache = cuda_flush_cache,
    .time_batch = cuda_time_batch,
    .kernels = cuda_kernels,
    .num_kernels = sizeof cuda_kernels / sizeof cuda_kernels[0],
    .telemetry = cuda_telemetry,
    .peak_for = cuda_peak_for,
    .timer_info = cuda_timer_info,
};

/* ---- entry --------------------------------------------------------------- */

MB_BACKEND_EXPORT const mb_backend_vtable_t *mb_backend_entry(
    const mb_host_api_t *host) {
  return mb__backend_host_ok(host, "cuda") ? &cuda_vtable : NULL;
}
