/* libmicrobench — backends and their devices.
 *
 * A backend is a module (mb_backend_<name>.so) loaded by the context. Each
 * backend exposes zero or more devices. Strings returned here are owned by
 * the context and live until mb_context_destroy().
 *
 * Threading: as the owning context (one thread at a time). */
#ifndef MICROBENCH_DEVICE_H
#define MICROBENCH_DEVICE_H

#include "context.h"
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mb_backend_info {
  uint32_t struct_size;
  const char *name;    /* "cpu"; the file name when the module failed to load */
  const char *path;    /* the module file */
  const char *version; /* backend and its libraries, e.g. "oneDNN 2.6.3"; "" if
                          unknown */
  int loaded;          /* 1: usable (may still have 0 devices) */
  const char
      *reason; /* why not loaded, or why it has no device; "" otherwise */
  uint32_t device_count;
} mb_backend_info_t;

#define MB_BACKEND_INFO_INIT \
  { sizeof(mb_backend_info_t), 0, 0, 0, 0, 0, 0 }

/* Entries for every module tried (loaded or not) and every search directory
 * that could not be read, in search order. */
MB_API size_t mb_backend_count(const mb_context_t *ctx);
MB_API mb_status_t mb_backend_info(const mb_context_t *ctx, size_t index,
                                   mb_backend_info_t *out);

typedef enum mb_device_kind {
  MB_DEVICE_CPU = 0,
  MB_DEVICE_GPU = 1
} mb_device_kind_t;

/* A device handle; owned by the context. */
typedef struct mb_device mb_device_t;

typedef struct mb_device_info {
  uint32_t struct_size;
  const char *backend; /* "cpu" */
  uint32_t index;      /* within its backend */
  const char *name;    /* "AMD EPYC 9654" */
  mb_device_kind_t kind;
  uint64_t memory_bytes;     /* 0: unknown */
  double mem_bw_bytes_per_s; /* 0: unknown */
  uint32_t compute_units;    /* cores, SMs, CUs */
  double clock_hz;           /* 0: unknown */
  uint64_t cache_bytes[3]; /* L1d (per unit), L2 (per unit), last level (total);
                              0 unknown */
  const char *peak_source; /* how peaks were obtained: "measured: FMA loop",
                              "table", "" */
} mb_device_info_t;

#define MB_DEVICE_INFO_INIT \
  { sizeof(mb_device_info_t), 0, 0, 0, MB_DEVICE_CPU, 0, 0, 0, 0, {0, 0, 0}, 0 }

/* All devices of all loaded backends, in backend order. */
MB_API size_t mb_device_count(const mb_context_t *ctx);
MB_API mb_device_t *mb_device_at(const mb_context_t *ctx, size_t index);
/* Finds device `index` of backend `backend`; an error message names the valid
 * backends (and why the missing ones did not load) when there is none. */
MB_API mb_status_t mb_device_find(const mb_context_t *ctx, const char *backend,
                                  uint32_t index, mb_device_t **out);
MB_API mb_status_t mb_device_info(const mb_device_t *dev,
                                  mb_device_info_t *out);
/* Dense peak FLOP/s for math whose inputs are `dtype`; 0 when unknown. */
MB_API double mb_device_peak_flops(const mb_device_t *dev, mb_dtype_t dtype);

#ifdef __cplusplus
}
#endif
#endif
