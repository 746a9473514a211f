/* CUDA backend — state shared by its files (C, compiled by the host
 * compiler against cudart and cuBLASLt's header). The device skeleton and the
 * timing method are the GPU host layer's (backends/gpu/host/gpu_host.h);
 * the kernels are the shared sources in backends/gpu/. What is CUDA's
 * alone lives here: the peak table, cuBLASLt, NVML, module loading.
 *
 * A device record is the host layer's (stream, events, flags, flush
 * buffers, the shared kernels' env) followed by a cuBLASLt handle and
 * workspace, the tune cache, the NVML handle and the peaks. */
#ifndef MB_CUDA_INTERNAL_H
#define MB_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_host.h"

/* cuBLASLt's workspace per device: what NVIDIA recommends for Hopper and
 * Blackwell (32 MiB); the chosen algorithm's need is recorded per result. */
#define MB_CUDA_WORKSPACE_BYTES (32u << 20)

/* An autotuned cuBLASLt choice, remembered per device so that preparing the
 * same GEMM again (once per rotated operand copy) does not re-tune. */
#define MB_CUDA_TUNE_CACHE 32
typedef struct mb_cuda_tuned {
  uint64_t key; /* hash of the params and impl; 0: empty slot */
  cublasLtMatmulAlgo_t algo;
  size_t workspace;
  int algo_id;
  int candidates;    /* algorithms the heuristic offered and we timed */
  double best_ms;    /* the chosen one's median */
  char timings[400]; /* every candidate's median, as the note shows it */
} mb_cuda_tuned_t;

typedef struct mb_cuda_nvml mb_cuda_nvml_t; /* cuda_nvml.c */
typedef struct mb_cuda_splt mb_cuda_splt_t; /* cuda_sparselt.c */

/* cuBLASLt's entry points, dlopen'ed when the backend has a device
 * (cuda_lt_load.c); the types are cublasLt.h's. */
typedef struct mb_cuda_lt {
  void *dl;
  size_t version; /* cublasLtGetVersion: major * 10000 + minor * 100 + patch */
  char version_text[48]; /* "cuBLASLt 13.0.2" */
  size_t (*get_version)(void);
  const char *(*status_string)(cublasStatus_t);
  cublasStatus_t (*create)(cublasLtHandle_t *);
  cublasStatus_t (*destroy)(cublasLtHandle_t);
  cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *, cublasComputeType_t,
                                cudaDataType_t);
  cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t,
                             cublasLtMatmulDescAttributes_t, const void *,
                             size_t);
  cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *, cudaDataType,
                                  uint64_t, uint64_t, int64_t);
  cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t);
  cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t *);
  cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t);
  cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t,
                             cublasLtMatmulPreferenceAttributes_t, const void *,
                             size_t);
  cublasStatus_t (*heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                              cublasLtMatmulPreference_t, int,
                              cublasLtMatmulHeuristicResult_t[], int *);
  cublasStatus_t (*algo_check)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                               cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                               cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                               const cublasLtMatmulAlgo_t *,
                               cublasLtMatmulHeuristicResult_t *);
  cublasStatus_t (*algo_config_get)(const cublasLtMatmulAlgo_t *,
                                    cublasLtMatmulAlgoConfigAttributes_t,
                                    void *, size_t, size_t *);
  cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                           const void *, cublasLtMatrixLayout_t, const void *,
                           cublasLtMatrixLayout_t, const void *, const void *,
                           cublasLtMatrixLayout_t, void *,
                           cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *,
                           void *, size_t, cudaStream_t);
} mb_cuda_lt_t;

/* NULL with the reason in why[cap] (not found, an entry point missing,
 * another major version). MB_CUBLASLT_LIBRARY names the file to load. */
mb_cuda_lt_t *mb__cuda_lt_open(char *why, size_t cap);
void mb__cuda_lt_close(mb_cuda_lt_t *lt);

typedef struct mb_cuda_device {
  mb_gpuh_device_t base; /* first: the host layer's record */
  int cc_major, cc_minor;
  char arch[16];       /* "sm_90" */
  double mem_clock_hz; /* peak */
  int bus_width_bits;
  double peak[MB_DTYPE_COUNT]; /* dense tensor-core peak by input */
  double peak_tf32; /* f32 inputs on tensor cores (peak[F32]: CUDA cores) */
  char peak_source[200];

  cublasLtHandle_t lt; /* NULL when cuBLASLt is not loaded */
  void *workspace;     /* MB_CUDA_WORKSPACE_BYTES, with the handle */
  mb_cuda_tuned_t tuned[MB_CUDA_TUNE_CACHE];
  void *nvml_dev; /* nvmlDevice_t, NULL when NVML is not readable */
  /* The PCI address, which NVML's NVLink records name the far end by. */
  int pci_known;
  unsigned pci_domain, pci_bus, pci_device;
  void *splt; /* a cuSPARSELt handle, NULL without one */
} mb_cuda_device_t;

typedef struct mb_cuda_state {
  mb_gpuh_state_t base; /* first: the host layer's state */
  mb_cuda_nvml_t *nvml; /* NULL: no device, or NVML not loadable */
  mb_cuda_lt_t *ltlib;  /* NULL: why in lt_why */
  char lt_why[400];
  mb_cuda_splt_t *splt; /* cuSPARSELt; NULL: why in splt_why */
  char splt_why[400];
  /* How the runtime loads kernels, and who chose it (cuda_backend.c). */
  char module_loading[160];
} mb_cuda_state_t;

#define MB_CUDA_LOG(st, level, ...) MB_GPUH_LOG(&(st)->base, level, __VA_ARGS__)

/* "cuda: <what>: <error string>" through host set_error; MB_ERR_BACKEND
 * (MB_ERR_NO_MEMORY for cudaErrorMemoryAllocation). MB_OK for success. */
static inline mb_status_t mb__cuda_check(mb_cuda_state_t *st, cudaError_t e,
                                         const char *what) {
  return mb__gpuh_check(&st->base, e, what);
}
/* The same for cuBLASLt statuses (CUBLAS_STATUS_NOT_SUPPORTED ->
 * MB_ERR_UNSUPPORTED, so the result is `skipped` with the reason). */
mb_status_t mb__cuda_check_lt(mb_cuda_state_t *st, cublasStatus_t s,
                              const char *what);

/* The device of a call, or NULL after set_error. */
static inline mb_cuda_device_t *mb__cuda_device(mb_cuda_state_t *st,
                                                uint32_t dev) {
  return (mb_cuda_device_t *)(void *)mb__gpuh_device(&st->base, dev);
}

/* Peaks and memory bandwidth for the device (cuda_peaks.c). */
void mb__cuda_peaks(mb_cuda_device_t *d);
/* The peak of the math `op` runs with `p`: tf32, fp8, int8 tensor cores for
 * a gemm, the f32 vector units for everything else. */
double mb__cuda_peak_for(const mb_cuda_device_t *d, const char *op,
                         const mb_op_params_t *p);

/* NVML, loaded at run time (cuda_nvml.c) from `soname`
 * ("libnvidia-ml.so.1"; a fake library's path in the tests). */
mb_cuda_nvml_t *mb__cuda_nvml_open(const mb_host_api_t *host,
                                   const char *soname);
void mb__cuda_nvml_close(mb_cuda_nvml_t *n);
const char *mb__cuda_nvml_driver(const mb_cuda_nvml_t *n); /* "" unknown */
void *mb__cuda_nvml_device(mb_cuda_nvml_t *n, const char *pci_bus_id);
void mb__cuda_nvml_read(mb_cuda_nvml_t *n, void *dev, mb_telemetry_t *out);
/* The device's PCIe link: the maximum generation and width NVML says this
 * GPU and slot allow, and the current ones (0 unreadable); 0, or -1 when
 * NVML cannot say. */
typedef struct mb_cuda_pcie {
  unsigned max_gen, max_width, gen, width;
} mb_cuda_pcie_t;
int mb__cuda_nvml_pcie(const mb_cuda_nvml_t *n, void *dev, mb_cuda_pcie_t *out);
/* How many of dev's active NVLinks reach the GPU at PCI domain:bus:device
 * (directly, or through an NVSwitch: *via_switch); -1 unknown. */
int mb__cuda_nvml_nvlinks(const mb_cuda_nvml_t *n, void *dev, unsigned domain,
                          unsigned bus, unsigned device, int *via_switch);
/* The link hook of the CUDA vendor table (cuda_link.c). */
double mb__cuda_link(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                     mb_gpuh_device_t *peer, char *what, size_t cap);

#endif
