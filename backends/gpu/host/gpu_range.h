/* GPU host layer — named ranges on the profiler timeline of the vendor's
 * tools (gpu_range.c): NVTX for CUDA (Nsight Systems), roctx for HIP
 * (rocprof), pushed by the library around each benchmark and sample (the
 * vtable's range_push / range_pop). A provider is a table the vendor names
 * in mb_gpuh_vendor_t.ranges; each lives in its own file and needs no GPU
 * runtime (gpu_range_nvtx.c: NVTX 3's headers only; gpu_range_roctx.c: the
 * dynamic loader only), so the tests compile them alone. */
#ifndef MB_GPU_RANGE_H
#define MB_GPU_RANGE_H

#include <stddef.h>

typedef struct mb_gpuh_range_api {
  const char *name; /* "NVTX", "roctx": in messages */
  /* The provider's handle, or NULL with why[cap] saying why there are no
   * ranges (never an error: the benchmarks run without them). On success
   * why[cap] says what the ranges go to. */
  void *(*open)(char *why, size_t cap);
  /* Both cheap when no tool listens; `name` is ASCII, the caller's. */
  void (*push)(void *ranges, const char *name);
  void (*pop)(void *ranges);
  void (*close)(void *ranges);
} mb_gpuh_range_api_t;

/* NVTX 3: the domain MB_GPUH_NVTX_DOMAIN, created by open, destroyed by
 * close; ranges by nvtxDomainRangePushEx (ASCII message) and
 * nvtxDomainRangePop. Without NVTX's headers in the build, open says so. */
#define MB_GPUH_NVTX_DOMAIN "libmicrobench"
extern const mb_gpuh_range_api_t mb__gpuh_nvtx_ranges;

/* roctx, loaded at open: the file MB_ROCTX_LIBRARY names, else
 * libroctx64.so.4, else libroctx64.so; roctxRangePushA / roctxRangePop. */
#define MB_GPUH_ROCTX_ENV "MB_ROCTX_LIBRARY"
extern const mb_gpuh_range_api_t mb__gpuh_roctx_ranges;

#endif
