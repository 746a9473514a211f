/* The GPU backends' host layer: what the CUDA module, the HIP module and
 * the emulated GPU of the tests share on the host side, written once
 * against the runtime shim (gpu_runtime.h) and compiled into each module
 * with that module's runtime:
 *   gpu_host_backend.c  the backend skeleton: devices (stream, timer
 *                       flags, flush buffers, the shared kernels' env),
 *                       memory, copies, sync, cache flush, telemetry, and
 *                       every vtable hook that is not vendor-specific;
 *   gpu_host_timer.c    the timing method: events behind a blocking
 *                       kernel, launches counted per run, graphs captured,
 *                       uploaded and reused, chunks when capture fails,
 *                       samples dropped when the blocking kernel timed out;
 *   gpu_range.c         the profiler's named ranges (NVTX, roctx) the
 *                       library puts around benchmarks and samples.
 * A vendor (cuda/, hip/, tests/gpu_emu/) brings what only it knows through
 * mb_gpuh_vendor_t: device properties and peaks, its libraries (BLAS,
 * NVML, rocm-smi), telemetry, environment facts, its kernel table; and
 * fills its vtable with MB_GPUH_VTABLE_HOOKS.
 *
 * A vendor's state and device records begin with mb_gpuh_state_t and
 * mb_gpuh_device_t (the sizes are in the vendor table), so the vendor
 * converts the host layer's pointers to its own with a cast. */
#ifndef MB_GPU_HOST_H
#define MB_GPU_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_kernels.h"
#include "gpu_range.h"
#include "gpu_runtime.h"
#include "microbench/sys/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many launches wait behind the blocking kernel (nvbench's
 * figure); more would risk filling the stream's launch queue, and a host
 * stuck in a launch never releases the kernel. */
#define MB_GPUH_MAX_QUEUED 32u
/* The blocking kernel gives up after this long. */
#define MB_GPUH_BLOCK_TIMEOUT_S 30.0

typedef struct mb_gpuh_state mb_gpuh_state_t;

typedef struct mb_gpuh_device {
  /* ---- the vendor's probe fills these --------------------------------- */
  int ordinal; /* the runtime's device number (set before the probe) */
  char name[256];
  int sm_count;  /* multiprocessors / compute units */
  int warp_size; /* 32, or 64 on CDNA */
  size_t memory_bytes;
  size_t llc_bytes;  /* last-level cache: what a flush must evict */
  size_t smem_optin; /* dynamic shared memory a block may opt in to */
  double clock_hz;   /* peak core clock */
  double mem_bw;     /* bytes/s */
  const char *peak_source;

  /* ---- the host layer's ------------------------------------------------ */
  mb_gpu_stream_t stream; /* every kernel and timer of the device */
  mb_gpu_event_t start, stop;
  volatile int32_t *flags_host; /* host-mapped: [0] release, [1] timed out */
  int32_t *flags_dev;
  void *flush_write;    /* llc_bytes, memset by the write flush */
  void *flush_read;     /* 2 x llc_bytes, read by the read flush */
  uint32_t *flush_sink; /* the read flush's never-taken store */
  /* 1 when this build has code for the device (our kernels, the blocking
   * kernel); otherwise why_no_code says why, and only vendor libraries
   * run there. */
  int own_code;
  char why_no_code[512];
  char timer_info[400];
  mb_gpu_env_t env; /* kstate of the shared kernels */
  /* The host link as the vendor read it once the device opened (its link
   * hook, peer NULL): GB/s one way (< 0 unknown) and what it is. */
  double host_link_gbps;
  char host_link[256];
} mb_gpuh_device_t;

typedef struct mb_gpuh_vendor {
  const char *name;        /* backend name and message prefix: "cuda" */
  const char *device_word; /* as in "no CUDA device: ..." */
  const char *timer_note;  /* Optional: what else a reader of the timer's
                              description must know */
  size_t state_size;       /* the vendor's state, mb_gpuh_state_t first */
  size_t device_size;      /* its device record, mb_gpuh_device_t first */
  /* Optional: before the runtime's first call (CUDA: module loading). */
  void (*before_runtime)(mb_gpuh_state_t *st);
  /* Optional: the vendor's libraries, once per backend instance, knowing
   * how many devices the runtime reports; close may see a partial open. */
  void (*open)(mb_gpuh_state_t *st, int devices);
  void (*close)(mb_gpuh_state_t *st);
  /* The device's properties and peaks into d (current device: d->ordinal).
   * Fills the fields above "the host layer's" and its own. */
  mb_status_t (*probe)(mb_gpuh_state_t *st, mb_gpuh_device_t *d);
  /* Optional: once the device's stream exists (handles, workspaces). */
  mb_status_t (*device_open)(mb_gpuh_state_t *st, mb_gpuh_device_t *d);
  void (*device_close)(mb_gpuh_state_t *st, mb_gpuh_device_t *d);
  /* Optional: "no CUDA device: <why>" when counting devices failed;
   * default: the runtime's error string. */
  void (*why_no_device)(mb_gpuh_state_t *st, mb_gpu_error_t e, char *buf,
                        size_t cap);
  /* The runtime's and libraries' versions, one line. */
  void (*version)(mb_gpuh_state_t *st, char *buf, size_t cap);
  /* Optional hooks, as the vtable's. */
  void (*telemetry)(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                    mb_telemetry_t *out);
  uint32_t (*environment)(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                          mb_kernel_note_t *out, uint32_t max);
  double (*peak_flops)(const mb_gpuh_device_t *d, mb_dtype_t dtype);
  double (*peak_for)(const mb_gpuh_device_t *d, const char *op,
                     const mb_op_params_t *params);
  /* Optional: the datasheet GB/s (one direction) of a link of device d:
   * peer NULL, its host link (PCIe); else its direct link to `peer`
   * (NVLink, xGMI). > 0 the figure, 0 no direct link, < 0 unknown. Writes
   * what the link is, or why it is unknown, into what (gpu_link_rates.h
   * has the tables). Without it every link is unknown. */
  double (*link)(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                 mb_gpuh_device_t *peer, char *what, size_t cap);
  /* Optional: the profiler's named ranges (gpu_range.h: NVTX for CUDA,
   * roctx for HIP); without it range_push and range_pop do nothing. */
  const mb_gpuh_range_api_t *ranges;
} mb_gpuh_vendor_t;

struct mb_gpuh_state {
  const mb_gpuh_vendor_t *vendor;
  mb_host_api_t host;
  uint32_t num_devices;
  char *devices; /* num_devices records of vendor->device_size bytes */
  char why_none[512];
  char version[512];
  char last_error[512]; /* the last mb__gpuh_check failure */
  /* The collective library and its communicators (gpu_ccl.c), from the
   * first collective on; NULL before. */
  struct mb_gpuh_ccl *ccl;
  /* The vendor's range provider once opened (gpu_range.c); NULL: none. */
  void *ranges;
};

#define MB_GPUH_LOG(st, level, ...) \
  (st)->host.log((st)->host.host, level, __VA_ARGS__)

/* ---- gpu_host_backend.c --------------------------------------------------
 */

/* "<vendor>: <what>: <error string> (<error name>)" through set_error and
 * into st->last_error; MB_ERR_NO_MEMORY for the runtime's out-of-memory
 * code, else MB_ERR_BACKEND; MB_OK for success. Clears the runtime's last
 * error. */
mb_status_t mb__gpuh_check(mb_gpuh_state_t *st, mb_gpu_error_t e,
                           const char *what);
/* Device `dev` of the backend, or NULL after set_error. */
mb_gpuh_device_t *mb__gpuh_device(mb_gpuh_state_t *st, uint32_t dev);
/* The vtable's init for `vendor`. */
mb_status_t mb__gpuh_init(const mb_gpuh_vendor_t *vendor,
                          const mb_host_api_t *host, void **state);

mb_status_t mb__gpuh_flush(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                           mb_flush_t how);

/* ---- gpu_range.c --------------------------------------------------------- */

/* Opens the vendor's range provider when the backend has a device, saying
 * in the debug log where the ranges go or why there are none. */
void mb__gpuh_ranges_open(mb_gpuh_state_t *st);
void mb__gpuh_ranges_close(mb_gpuh_state_t *st);

/* ---- gpu_host_link.c ----------------------------------------------------- */

/* Reads d's host link through the vendor (d->host_link, host_link_gbps). */
void mb__gpuh_link_init(mb_gpuh_state_t *st, mb_gpuh_device_t *d);
/* The host link's environment facts after the vendor's n of max. */
uint32_t mb__gpuh_link_facts(const mb_gpuh_device_t *d, mb_kernel_note_t *out,
                             uint32_t n, uint32_t max);

/* ---- gpu_host_timer.c ---------------------------------------------------- */

/* Sets up the device's events and blocking-kernel flags; timer_info. */
mb_status_t mb__gpuh_timer_init(mb_gpuh_state_t *st, mb_gpuh_device_t *d);
void mb__gpuh_timer_fini(mb_gpuh_device_t *d);

/* A timing: one run(kstate, call) on one device, timed batch after batch
 * (a benchmark's warm-up and samples). What it learns (the launches a run
 * makes) and builds (a graph of a batch, instantiated and uploaded once)
 * lasts until mb__gpuh_timing_end. */
typedef struct mb_gpuh_timing mb_gpuh_timing_t;
mb_status_t mb__gpuh_timing_begin(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                                  mb_kernel_run_fn run, void *kstate,
                                  const mb_kernel_call_t *call,
                                  mb_gpuh_timing_t **out);
/* The device time of `batch` runs, ns; NAN (with set_error saying why)
 * when the sample is invalid: the blocking kernel timed out. */
mb_status_t mb__gpuh_timing_batch(mb_gpuh_timing_t *t, uint32_t batch,
                                  double *elapsed_ns);
/* How the timing went: launches a run, the method, graphs built, samples
 * dropped. Strings owned by t. */
uint32_t mb__gpuh_timing_notes(mb_gpuh_timing_t *t, mb_kernel_note_t *out,
                               uint32_t max);
void mb__gpuh_timing_end(mb_gpuh_timing_t *t);

/* Median device time (ns) of one run over `samples` batches of at least
 * min_ns of work each (a batch sized from one run's time), behind the
 * blocking kernel: how a vendor times its autotuning candidates. A run
 * slower than slow_ns is sampled once. */
mb_status_t mb__gpuh_time_median(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                                 mb_kernel_run_fn run, void *kstate,
                                 const mb_kernel_call_t *call, uint32_t samples,
                                 double min_ns, double slow_ns,
                                 double *median_ns);

/* ---- device code the host layer launches (in backends/gpu/) ------------
 */

/* The blocking kernel (gpu_block.cu): flags are device pointers of the
 * host-mapped pair. */
mb_gpu_error_t mb__gpu_launch_block(mb_gpu_stream_t s, volatile int32_t *flag,
                                    volatile int32_t *timed_out,
                                    double timeout_s);
/* mb_gpu_success when this build has code for the current device. */
mb_gpu_error_t mb__gpu_probe_code(void);
/* Reads `bytes` of buf on the env's stream (gpu_flush.cu); an error is
 * set through the env's host. */
mb_status_t mb__gpu_flush_read(const mb_gpu_env_t *env, const void *buf,
                               size_t bytes, uint32_t *sink);

/* ---- the vtable ----------------------------------------------------------
 * Every hook a GPU backend's vtable takes from the host layer; the vendor
 * adds name, description, init (calling mb__gpuh_init with its vendor
 * table) and kernels. */
void mb__gpuh_fini(void *state);
const char *mb__gpuh_version(void *state);
uint32_t mb__gpuh_device_count(void *state, const char **why_none);
mb_status_t mb__gpuh_device_info(void *state, uint32_t dev,
                                 mb_device_info_t *out);
double mb__gpuh_peak_flops(void *state, uint32_t dev, mb_dtype_t dtype);
mb_status_t mb__gpuh_alloc(void *state, uint32_t dev, size_t bytes, void **ptr);
void mb__gpuh_free(void *state, uint32_t dev, void *ptr);
mb_status_t mb__gpuh_copy_to_device(void *state, uint32_t dev, void *dst,
                                    const void *src, size_t bytes);
mb_status_t mb__gpuh_copy_to_host(void *state, uint32_t dev, void *dst,
                                  const void *src, size_t bytes);
mb_status_t mb__gpuh_sync(void *state, uint32_t dev);
mb_status_t mb__gpuh_flush_cache(void *state, uint32_t dev);
mb_status_t mb__gpuh_flush_cache_with(void *state, uint32_t dev,
                                      mb_flush_t how);
mb_status_t mb__gpuh_time_batch(void *state, uint32_t dev, mb_kernel_run_fn run,
                                void *kstate, const mb_kernel_call_t *call,
                                uint32_t batch, double *elapsed_ns);
mb_status_t mb__gpuh_telemetry(void *state, uint32_t dev, mb_telemetry_t *out);
double mb__gpuh_peak_for(void *state, uint32_t dev, const char *op,
                         const mb_op_params_t *params);
const char *mb__gpuh_timer_info(void *state, uint32_t dev);
uint32_t mb__gpuh_environment(void *state, uint32_t dev, mb_kernel_note_t *out,
                              uint32_t max);
mb_status_t mb__gpuh_vt_timing_begin(void *state, uint32_t dev,
                                     mb_kernel_run_fn run, void *kstate,
                                     const mb_kernel_call_t *call,
                                     void **timing);
mb_status_t mb__gpuh_vt_timing_batch(void *timing, uint32_t batch,
                                     double *elapsed_ns);
uint32_t mb__gpuh_vt_timing_notes(void *timing, mb_kernel_note_t *out,
                                  uint32_t max);
void mb__gpuh_vt_timing_end(void *timing);
void mb__gpuh_range_push(void *state, uint32_t dev, const char *name);
void mb__gpuh_range_pop(void *state, uint32_t dev);

#define MB_GPUH_VTABLE_HOOKS                                              \
  .abi_version = MB_BACKEND_ABI_VERSION,                                  \
  .struct_size = sizeof(mb_backend_vtable_t), .fini = mb__gpuh_fini,      \
  .version = mb__gpuh_version, .device_count = mb__gpuh_device_count,     \
  .device_info = mb__gpuh_device_info, .peak_flops = mb__gpuh_peak_flops, \
  .alloc = mb__gpuh_alloc, .free = mb__gpuh_free,                         \
  .copy_to_device = mb__gpuh_copy_to_device,                              \
  .copy_to_host = mb__gpuh_copy_to_host, .sync = mb__gpuh_sync,           \
  .flush_cache = mb__gpuh_flush_cache, .time_batch = mb__gpuh_time_batch, \
  .telemetry = mb__gpuh_telemetry, .peak_for = mb__gpuh_peak_for,         \
  .timer_info = mb__gpuh_timer_info, .environment = mb__gpuh_environment, \
  .timing_begin = mb__gpuh_vt_timing_begin,                               \
  .timing_batch = mb__gpuh_vt_timing_batch,                               \
  .timing_notes = mb__gpuh_vt_timing_notes,                               \
  .timing_end = mb__gpuh_vt_timing_end,                                   \
  .flush_cache_with = mb__gpuh_flush_cache_with,                          \
  .range_push = mb__gpuh_range_push, .range_pop = mb__gpuh_range_pop

#ifdef __cplusplus
}
#endif
#endif
