/* HIP backend — state shared by its files (C, compiled by the host compiler
 * against the HIP runtime's C API; the kernels are the shared sources in
 * backends/gpu/, compiled by hipcc). The device skeleton and the timing
 * method are the GPU host layer's (backends/gpu/host/gpu_host.h).
 *
 * One mb_hip_device_t per visible GPU, created at init: the host layer's
 * record (stream, events, flags, flush buffers, the shared kernels' env),
 * then the vendor libraries' handles (made on first use) and the peaks. The
 * vendor GEMM libraries (hipBLASLt, rocBLAS) and rocm-smi are dlopen'ed once
 * per backend instance: the module loads and runs without any of them. */
#ifndef MB_HIP_INTERNAL_H
#define MB_HIP_INTERNAL_H

#include <hip/hip_runtime_api.h>
#include <stdint.h>

#include "gpu_host.h"

typedef struct mb_hip_smi mb_hip_smi_t;         /* hip_smi.c */
typedef struct mb_hip_blaslt mb_hip_blaslt_t;   /* hip_blaslt_kernel.h */
typedef struct mb_hip_rocblas mb_hip_rocblas_t; /* hip_rocblas.c */

typedef struct mb_hip_device {
  mb_gpuh_device_t base; /* first: the host layer's record */
  char arch[64]; /* gcnArchName as the runtime says: "gfx90a:sramecc+:xnack-" */
  char arch_base[16]; /* the processor alone: "gfx90a" */
  size_t l2_bytes;    /* the runtime's L2 size; base.llc_bytes is the last
                         level: L2, or the Infinity Cache (MI300X: 256 MiB)
                         from the peak table, what flush and rotate must
                         exceed */
  double mclk_hz;     /* peak memory clock */
  int bus_width_bits;
  double peak[MB_DTYPE_COUNT]; /* dense matrix-core peak by input dtype
                                  (peak[F32]: f32 MFMA) */
  double peak_vec_f32;         /* f32 on the vector ALUs (element-wise ops) */
  double peak_xf32; /* f32 inputs on matrix cores in xf32/tf32 (0: none) */
  int fp8_fnuz;     /* the matrix cores' fp8 is the FNUZ variant (gfx94x),
                       not the OCP e4m3/e5m2 our tensors hold */
  int estimated;    /* peaks are an estimate, not a datasheet row */
  char peak_source[200];
  uint32_t smi_index; /* rocm-smi's device index; UINT32_MAX: none */

  /* Vendor GEMM: handles and workspace, created on first use by the
   * library's file (hip_blaslt.c, hip_rocblas.c), released by its
   * *_device_fini. */
  void *blaslt_handle;
  void *blaslt_workspace;
  size_t blaslt_workspace_bytes;
  void *rocblas_handle;
} mb_hip_device_t;

typedef struct mb_hip_state {
  mb_gpuh_state_t base;      /* first: the host layer's state */
  mb_hip_smi_t *smi;         /* NULL: rocm-smi not loadable */
  mb_hip_blaslt_t *blaslt;   /* NULL: why in blaslt_why */
  mb_hip_rocblas_t *rocblas; /* NULL: why in rocblas_why */
  char blaslt_why[256];
  char rocblas_why[256];
} mb_hip_state_t;

#define MB_HIP_LOG(st, level, ...) MB_GPUH_LOG(&(st)->base, level, __VA_ARGS__)

/* "hip: <what>: <error string> (<name>)" through host set_error;
 * MB_ERR_BACKEND (MB_ERR_NO_MEMORY for hipErrorOutOfMemory). MB_OK for
 * success. Clears the runtime's last error. */
static inline mb_status_t mb__hip_check(mb_hip_state_t *st, hipError_t e,
                                        const char *what) {
  return mb__gpuh_check(&st->base, e, what);
}

/* The device of a call, or NULL after set_error. */
static inline mb_hip_device_t *mb__hip_device(mb_hip_state_t *st,
                                              uint32_t dev) {
  return (mb_hip_device_t *)(void *)mb__gpuh_device(&st->base, dev);
}

/* ---- peaks (hip_peaks.c) ------------------------------------------------- */
/* Fills peak[], peak_vec_f32, peak_xf32, base.mem_bw, base.llc_bytes,
 * fp8_fnuz, estimated and peak_source from base.name, arch_base,
 * base.sm_count (compute units), base.clock_hz (peak engine clock), mclk_hz,
 * bus_width_bits, base.memory_bytes and l2_bytes. Pure host code. */
void mb__hip_peaks(mb_hip_device_t *d);
/* The peak of the math `op` runs with `p` on this device. */
double mb__hip_peak_for(const mb_hip_device_t *d, const char *op,
                        const mb_op_params_t *p);

/* ---- rocm-smi, loaded at run time (hip_smi.c) ---------------------------- */
/* NULL when librocm_smi64 is missing or rsmi_init fails (logged at debug).
 * `path` NULL: the default soname search; tests pass a fake library. */
mb_hip_smi_t *mb__hip_smi_open(const mb_host_api_t *host, const char *path);
void mb__hip_smi_close(mb_hip_smi_t *s);
/* "rocm-smi 6.1.2" / "" */
const char *mb__hip_smi_version(const mb_hip_smi_t *s);
/* rocm-smi's index of the device with this PCI address (domain, bus,
 * device, function as hipDeviceGetPCIBusId prints them); UINT32_MAX when
 * none matches. */
uint32_t mb__hip_smi_index(const mb_hip_smi_t *s, uint32_t domain, uint32_t bus,
                           uint32_t device, uint32_t function);
/* Clocks, power, temperature, throttle of one device; NAN / 0 for what
 * cannot be read. */
void mb__hip_smi_read(const mb_hip_smi_t *s, uint32_t index,
                      mb_telemetry_t *out);
/* The device's PCIe link from its DPM levels: the fastest level's rate
 * (GT/s) and lanes, and the current level's (0 unreadable); 0, or -1 when
 * rocm-smi cannot say. */
typedef struct mb_hip_pcie {
  double max_gt_s;
  unsigned max_lanes;
  double gt_s;
  unsigned lanes;
} mb_hip_pcie_t;
int mb__hip_smi_pcie(const mb_hip_smi_t *s, uint32_t index, mb_hip_pcie_t *out);
/* 1: the devices (rocm-smi indices) are linked by xGMI, *max_mbs being
 * rocm-smi's maximum bandwidth of the link (MB/s); 0: by PCIe; -1 unknown.
 * *hops: rocm-smi's hop count. */
int mb__hip_smi_xgmi(const mb_hip_smi_t *s, uint32_t index, uint32_t peer,
                     double *max_mbs, unsigned *hops);
/* The link hook of the HIP vendor table (hip_link.c). */
double mb__hip_link(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                    mb_gpuh_device_t *peer, char *what, size_t cap);

#endif
