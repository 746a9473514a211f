/* CUDA backend — state shared by its files (C, compiled by the host
 * compiler against cudart and cuBLASLt; the kernels themselves are the
 * shared sources in backends/gpu/).
 *
 * One mb_cuda_device_t per visible GPU, created at init: its stream (every
 * kernel and timer of the backend runs on it), events, the L2 flush buffer,
 * the blocking-kernel flag, a cuBLASLt handle and workspace, and the peaks. */
#ifndef MB_CUDA_INTERNAL_H
#define MB_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_kernels.h"
#include "microbench/sys/backend.h"

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
  int candidates; /* algorithms the heuristic offered and we timed */
  double best_ms; /* median of 5 runs of the chosen one */
} mb_cuda_tuned_t;

typedef struct mb_cuda_nvml mb_cuda_nvml_t; /* cuda_nvml.c */

typedef struct mb_cuda_device {
  int ordinal; /* CUDA device number */
  char name[256];
  int cc_major, cc_minor;
  int sm_count;
  size_t memory_bytes;
  size_t l2_bytes;
  double sm_clock_hz;  /* peak (device attribute) */
  double mem_clock_hz; /* peak */
  int bus_width_bits;
  double mem_bw;               /* bytes/s: table, else estimated */
  double peak[MB_DTYPE_COUNT]; /* dense tensor-core peak by input */
  double peak_tf32; /* f32 inputs on tensor cores (peak[F32]: CUDA cores) */
  char peak_source[160];
  char timer_info[256];

  cudaStream_t stream;
  cudaEvent_t start, stop;
  void *flush_buf;             /* l2_bytes, memset before each cold sample */
  volatile int32_t *flag_host; /* blocking kernel: host-mapped release flag */
  int32_t *flag_dev;
  cublasLtHandle_t lt;
  void *workspace; /* MB_CUDA_WORKSPACE_BYTES */
  mb_cuda_tuned_t tuned[MB_CUDA_TUNE_CACHE];
  void *nvml_dev;   /* nvmlDevice_t, NULL when NVML is not readable */
  mb_gpu_env_t env; /* kstate of the shared kernels */
} mb_cuda_device_t;

typedef struct mb_cuda_state {
  mb_host_api_t host;
  uint32_t num_devices;
  mb_cuda_device_t *devices;
  char why_none[256];
  char version[256];
  char *last_error; /* -> last_error_buf: the last mb__cuda_check* failure */
  char last_error_buf[256];
  mb_cuda_nvml_t *nvml; /* NULL: NVML not loadable */
} mb_cuda_state_t;

#define MB_CUDA_LOG(st, level, ...) \
  (st)->host.log((st)->host.host, level, __VA_ARGS__)

/* "cuda: <what>: <error string>" through host set_error; MB_ERR_BACKEND
 * (MB_ERR_NO_MEMORY for cudaErrorMemoryAllocation). MB_OK for success. */
mb_status_t mb__cuda_check(const mb_cuda_state_t *st, cudaError_t e,
                           const char *what);
/* The same for cuBLASLt statuses (CUBLAS_STATUS_NOT_SUPPORTED ->
 * MB_ERR_UNSUPPORTED, so the result is `skipped` with the reason). */
mb_status_t mb__cuda_check_lt(const mb_cuda_state_t *st, cublasStatus_t s,
                              const char *what);

/* The device of a call, or NULL after set_error. */
mb_cuda_device_t *mb__cuda_device(mb_cuda_state_t *st, uint32_t dev);

/* Peaks and memory bandwidth for the device (cuda_peaks.c). */
void mb__cuda_peaks(mb_cuda_device_t *d);
/* The peak of the math `op` runs with `p`: tf32, fp8, int8 tensor cores for
 * a gemm, the f32 vector units for everything else. */
double mb__cuda_peak_for(const mb_cuda_device_t *d, const char *op,
                         const mb_op_params_t *p);

/* NVML, loaded at run time (cuda_nvml.c). */
mb_cuda_nvml_t *mb__cuda_nvml_open(const mb_host_api_t *host);
void mb__cuda_nvml_close(mb_cuda_nvml_t *n);
const char *mb__cuda_nvml_driver(const mb_cuda_nvml_t *n); /* "" unknown */
void *mb__cuda_nvml_device(mb_cuda_nvml_t *n, const char *pci_bus_id);
void mb__cuda_nvml_read(mb_cuda_nvml_t *n, void *dev, mb_telemetry_t *out);

/* Timing (cuda_timer.c): events around a batch, behind a blocking kernel;
 * batches longer than the launch queue are captured as a graph. */
mb_status_t mb__cuda_timer_init(mb_cuda_state_t *st, mb_cuda_device_t *d);
void mb__cuda_timer_fini(mb_cuda_device_t *d);
mb_status_t mb__cuda_time_batch(mb_cuda_state_t *st, mb_cuda_device_t *d,
                                mb_kernel_run_fn run, void *kstate,
                                const mb_kernel_call_t *call, uint32_t batch,
                                double *elapsed_ns);
/* The blocking kernel (cuda_block.cu). */
cudaError_t mb__cuda_launch_block(cudaStream_t s, volatile int32_t *flag,
                                  double timeout_s);

#endif
