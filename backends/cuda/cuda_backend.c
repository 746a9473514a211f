/* CUDA backend — the module's entry point, its vtable and kernel table, and
 * what only CUDA knows: device properties and peaks, cuBLASLt handles and
 * workspaces, NVML telemetry, the driver's module loading, the version
 * line. Devices, memory, flushes and timing are the GPU host layer's
 * (backends/gpu/host/).
 *
 * The module links cudart statically; cuBLASLt and NVML are loaded at run
 * time, and only when there is a device (cuda_open): a process on a machine
 * without a GPU maps neither. There the module still loads, reports 0
 * devices and says why ("no CUDA device: ..."). */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_gemm_lt.h"
#include "gpu_ccl.h"
#include "cuda_sparselt.h"
#include "cuda_internal.h"
#include "mb_backend_entry.h"

mb_status_t mb__cuda_check_lt(mb_cuda_state_t *st, cublasStatus_t s,
                              const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS) return MB_OK;
  snprintf(st->base.last_error, sizeof st->base.last_error,
           "cuda: cuBLASLt: %s: %s", what, st->ltlib->status_string(s));
  st->base.host.set_error("%s", st->base.last_error);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) return MB_ERR_UNSUPPORTED;
  return s == CUBLAS_STATUS_ALLOC_FAILED ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

static mb_cuda_state_t *cuda_of(mb_gpuh_state_t *st) {
  return (mb_cuda_state_t *)(void *)st;
}

static mb_cuda_device_t *cdev_of(mb_gpuh_device_t *d) {
  return (mb_cuda_device_t *)(void *)d;
}

/* ---- module loading -------------------------------------------------------
 * CUDA 12.2+ loads a kernel's code on its first launch (lazy loading); a
 * first launch inside a timed region, or while capturing a graph, or behind
 * the blocking kernel (where the loader's own work can deadlock, as nvbench
 * found twice), then pays for it. Like nvbench, the module asks for eager
 * loading before the runtime starts, unless the user chose a mode. The
 * variable is process-wide: a runtime that started before this module (a
 * program that had used CUDA already) keeps its mode, and the environment
 * fact says which mode is in force. */

static void cuda_before_runtime(mb_gpuh_state_t *st) {
  mb_cuda_state_t *c = cuda_of(st);
  const char *set = getenv("CUDA_MODULE_LOADING");
  if (set && *set) {
    snprintf(c->module_loading, sizeof c->module_loading,
             "CUDA_MODULE_LOADING=%.60s (the environment's)", set);
    return;
  }
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  snprintf(c->module_loading, sizeof c->module_loading,
           "CUDA_MODULE_LOADING=EAGER (set by the module, as nvbench does)");
}

/* The mode the driver reports, once the runtime has started. */
static void read_loading_mode(mb_cuda_state_t *c) {
  CUresult (*get_mode)(CUmoduleLoadingMode *) = NULL;
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", &fn, 12000,
                                       cudaEnableDefault, &q) != cudaSuccess ||
      !fn) {
    (void)cudaGetLastError();
    return;
  }
  memcpy(&get_mode, &fn, sizeof fn);
  CUmoduleLoadingMode mode;
  if (get_mode(&mode) != CUDA_SUCCESS) return;
  const size_t n = strlen(c->module_loading);
  snprintf(c->module_loading + n, sizeof c->module_loading - n,
           "; the driver loads %s",
           mode == CU_MODULE_EAGER_LOADING ? "eagerly"
                                           : "lazily (the runtime started "
                                             "before the module could ask)");
}

/* ---- devices ------------------------------------------------------------- */

static int attr(enum cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    v = 0;
  }
  return v;
}

static mb_status_t cuda_probe(mb_gpuh_state_t *st, mb_gpuh_device_t *base) {
  mb_cuda_device_t *d = cdev_of(base);
  const int ordinal = base->ordinal;
  struct cudaDeviceProp prop;
  mb_status_t s =
      mb__cuda_check(cuda_of(st), cudaGetDeviceProperties(&prop, ordinal),
                     "device properties");
  if (s != MB_OK) return s;
  snprintf(base->name, sizeof base->name, "%s", prop.name);
  d->cc_major = prop.major;
  d->cc_minor = prop.minor;
  snprintf(d->arch, sizeof d->arch, "sm_%d%d", prop.major, prop.minor);
  base->sm_count = prop.multiProcessorCount;
  base->warp_size = prop.warpSize;
  base->memory_bytes = prop.totalGlobalMem;
  base->smem_optin =
      (size_t)attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
  base->llc_bytes = (size_t)attr(cudaDevAttrL2CacheSize, ordinal); /* L2 */
  base->clock_hz = attr(cudaDevAttrClockRate, ordinal) * 1e3;      /* peak */
  d->mem_clock_hz = attr(cudaDevAttrMemoryClockRate, ordinal) * 1e3;
  d->bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  mb__cuda_peaks(d);
  base->peak_source = d->peak_source;
  return MB_OK;
}

static mb_status_t cuda_device_open(mb_gpuh_state_t *st,
                                    mb_gpuh_device_t *base) {
  mb_cuda_state_t *c = cuda_of(st);
  mb_cuda_device_t *d = cdev_of(base);
  mb_status_t s;
  /* Without cuBLASLt the device still runs our own kernels; its GEMM
   * entries decline with the reason (mb__cuda_lt_supports). */
  if (c->ltlib && ((s = mb__cuda_check_lt(c, c->ltlib->create(&d->lt),
                                          "create handle")) != MB_OK ||
                   (s = mb__cuda_check(
                        c, cudaMalloc(&d->workspace, MB_CUDA_WORKSPACE_BYTES),
                        "cuBLASLt workspace")) != MB_OK))
    return s;
  mb__cuda_splt_device_open(c, d);
  char bus[32] = "";
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, base->ordinal) == cudaSuccess)
    d->nvml_dev = mb__cuda_nvml_device(c->nvml, bus);
  else
    (void)cudaGetLastError();
  int dom = 0, b = 0, dv = 0;
  d->pci_known = cudaDeviceGetAttribute(&dom, cudaDevAttrPciDomainId,
                                        base->ordinal) == cudaSuccess &&
                 cudaDeviceGetAttribute(&b, cudaDevAttrPciBusId,
                                        base->ordinal) == cudaSuccess &&
                 cudaDeviceGetAttribute(&dv, cudaDevAttrPciDeviceId,
                                        base->ordinal) == cudaSuccess;
  (void)cudaGetLastError();
  d->pci_domain = (unsigned)dom;
  d->pci_bus = (unsigned)b;
  d->pci_device = (unsigned)dv;
  return MB_OK;
}

static void cuda_device_close(mb_gpuh_state_t *st, mb_gpuh_device_t *base) {
  mb_cuda_device_t *d = cdev_of(base);
  mb__cuda_splt_device_close(cuda_of(st), d);
  if (d->lt) cuda_of(st)->ltlib->destroy(d->lt);
  cudaFree(d->workspace);
  d->lt = NULL;
  d->workspace = NULL;
}

/* ---- instance ------------------------------------------------------------ */

/* The vendor libraries are looked for only when there is a device to use
 * them on: cuBLASLt is a large load (hundreds of MB mapped), and NVML
 * without a driver has nothing to say. */
static void cuda_open(mb_gpuh_state_t *st, int devices) {
  mb_cuda_state_t *c = cuda_of(st);
  if (devices <= 0) {
    snprintf(c->lt_why, sizeof c->lt_why, "no device");
    snprintf(c->splt_why, sizeof c->splt_why, "no device");
    return;
  }
  c->nvml = mb__cuda_nvml_open(&st->host, "libnvidia-ml.so.1");
  c->ltlib = mb__cuda_lt_open(c->lt_why, sizeof c->lt_why);
  if (!c->ltlib) MB_CUDA_LOG(c, MB_LOG_WARN, "cuda: cuBLASLt: %s", c->lt_why);
  /* Optional (a separate download): its absence is the kernel's reason. */
  c->splt = mb__cuda_splt_open(c->splt_why, sizeof c->splt_why);
  read_loading_mode(c);
}

static void cuda_close(mb_gpuh_state_t *st) {
  mb__cuda_nvml_close(cuda_of(st)->nvml);
  mb__cuda_lt_close(cuda_of(st)->ltlib);
  mb__cuda_splt_close(cuda_of(st)->splt);
}

static void cuda_version(mb_gpuh_state_t *st, char *buf, size_t cap) {
  const mb_cuda_state_t *c = cuda_of(st);
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
  (void)cudaGetLastError();
  const char *nvml = mb__cuda_nvml_driver(c->nvml);
  char driver[96] = "no driver";
  if (drv)
    snprintf(driver, sizeof driver, "driver API %d.%d%s%.40s", drv / 1000,
             (drv % 1000) / 10, *nvml ? ", NVIDIA driver " : "", nvml);
  char lt[200], splt[200];
  if (c->ltlib)
    snprintf(lt, sizeof lt, "%s", c->ltlib->version_text);
  else
    snprintf(lt, sizeof lt, "cuBLASLt not loaded (%.160s)", c->lt_why);
  if (c->splt)
    snprintf(splt, sizeof splt, "%s", mb__cuda_splt_version(c->splt));
  else
    snprintf(splt, sizeof splt, "cuSPARSELt not loaded (%.160s)", c->splt_why);
  snprintf(buf, cap, "CUDA runtime %d.%d, %s, %s, %s%s", rt / 1000,
           (rt % 1000) / 10, driver, lt, splt,
           c->nvml           ? ""
           : st->num_devices ? ", NVML not loaded"
                             : ", NVML not loaded (no device)");
}

/* The runtime says "driver version is insufficient" both when the driver
 * is too old and when there is none at all; the second is the usual case
 * (a machine or container without a GPU) and is said as such, as is a
 * driver without its device files. */
static void cuda_why_no_device(mb_gpuh_state_t *st, cudaError_t e, char *buf,
                               size_t cap) {
  (void)st;
  const char *why = cudaGetErrorString(e);
  void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver)
    why =
        "no NVIDIA driver: libcuda.so.1 is not installed (no NVIDIA GPU, or "
        "none passed to this container)";
  else if (e == cudaErrorNoDevice && access("/dev/nvidiactl", F_OK) != 0)
    why =
        "the NVIDIA driver is installed but /dev/nvidiactl is missing (no "
        "GPU passed to this container?)";
  if (driver) dlclose(driver);
  snprintf(buf, cap, "%s (%s)", why, cudaGetErrorName(e));
}

static void cuda_telemetry(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                           mb_telemetry_t *out) {
  mb__cuda_nvml_read(cuda_of(st)->nvml, cdev_of(d)->nvml_dev, out);
}

/* Facts a result carries about the device: what tells two NVIDIA runs
 * apart beyond the name (architecture, whether our kernels had code for
 * it, how kernels were loaded). */
static uint32_t cuda_environment(mb_gpuh_state_t *st, mb_gpuh_device_t *base,
                                 mb_kernel_note_t *out, uint32_t max) {
  const mb_cuda_device_t *d = cdev_of(base);
  const mb_kernel_note_t facts[] = {
      {"gpu_arch", d->arch, 0},
      {"multiprocessors", NULL, base->sm_count},
      {"own_kernels", base->own_code ? "yes" : base->why_no_code,
       base->own_code},
      {"module_loading", cuda_of(st)->module_loading, 0},
  };
  const uint32_t n = sizeof facts / sizeof facts[0];
  for (uint32_t i = 0; i < n && i < max; i++) out[i] = facts[i];
  return n;
}

static double cuda_peak_flops(const mb_gpuh_device_t *d, mb_dtype_t dtype) {
  return ((const mb_cuda_device_t *)(const void *)d)->peak[dtype];
}

static double cuda_peak_for(const mb_gpuh_device_t *d, const char *op,
                            const mb_op_params_t *params) {
  return mb__cuda_peak_for((const mb_cuda_device_t *)(const void *)d, op,
                           params);
}

static const mb_gpuh_vendor_t cuda_vendor = {
    .name = "cuda",
    .device_word = "CUDA",
    .state_size = sizeof(mb_cuda_state_t),
    .device_size = sizeof(mb_cuda_device_t),
    .before_runtime = cuda_before_runtime,
    .open = cuda_open,
    .close = cuda_close,
    .probe = cuda_probe,
    .device_open = cuda_device_open,
    .device_close = cuda_device_close,
    .why_no_device = cuda_why_no_device,
    .version = cuda_version,
    .telemetry = cuda_telemetry,
    .environment = cuda_environment,
    .peak_flops = cuda_peak_flops,
    .peak_for = cuda_peak_for,
    .link = mb__cuda_link,
    /* NVTX ranges in our own domain, for Nsight Systems (gpu_range.h). */
    .ranges = &mb__gpuh_nvtx_ranges,
};

static mb_status_t cuda_init(const mb_host_api_t *host, void **state) {
  return mb__gpuh_init(&cuda_vendor, host, state);
}

/* cuBLASLt first: the first match is a request's default. */
static const mb_backend_kernel_t cuda_kernels[] = {
#include "cuda_kernels_gemm.def"
    /* 2:4 sparse tensor cores, before the shared kernel (cuda_sparselt.c). */
    {sizeof(mb_backend_kernel_t), "gemm_sparse24", "cusparselt", MB_DTYPE_NONE,
     MB_DTYPE_NONE, MB_DTYPE_NONE, MB_DTYPE_F32, mb__cuda_splt_supports,
     mb__cuda_splt_prepare, mb__cuda_splt_run, mb__cuda_splt_release, 0u, NULL,
     NULL},
#include "gpu_kernel_entries.inc"
/* The collectives through NCCL / RCCL, loaded at run time (gpu_ccl.c). */
#include "gpu_ccl_entries.inc"
};

static const mb_backend_vtable_t cuda_vtable = {
    MB_GPUH_VTABLE_HOOKS,
    .name = "cuda",
    .description =
        "NVIDIA GPUs: cuBLASLt GEMM (autotuned) and the shared "
        "GPU kernels, timed with CUDA events",
    .init = cuda_init,
    .kernels = cuda_kernels,
    .num_kernels = sizeof cuda_kernels / sizeof cuda_kernels[0],
};

MB_BACKEND_EXPORT const mb_backend_vtable_t *mb_backend_entry(
    const mb_host_api_t *host) {
  return mb__backend_host_ok(host, "cuda") ? &cuda_vtable : NULL;
}
