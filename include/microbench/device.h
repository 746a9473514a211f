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

/* What the library measured about a device's timing, once per device and
 * context, on first use:
 * - the timer: the smallest step it resolves and the cost of one empty
 *   sample (the backend's time_batch around nothing), from many readings;
 * - the cache flush: a memory-bound op (copy) whose operands fit in the
 *   last-level cache, timed hot and right after a flush (31 single-run
 *   samples each). The flush works when the flushed re-read is measurably
 *   slower: its p25 above the hot median (a p75 would let the host's
 *   occasional 30-100 us stalls of a ~50 us hot sample fail a working
 *   flush);
 * - the memory bandwidth: a copy whose operands are each twice the
 *   last-level cache (64 MiB at least; 256 MiB when the cache size is
 *   unknown), 10 single-run samples after 3 warm-up runs; the copy's
 *   bytes (read + write) over its fastest sample (STREAM's best rate).
 *   It is the bandwidth roof of every result's % of roof
 *   (mb_derived_t.pct_roof), measured before the first benchmark that
 *   needs it, once per machine: later processes read it from a cache file
 *   ($MB_CACHE_DIR, else $XDG_CACHE_HOME/microbench, else
 *   ~/.cache/microbench; MB_REMEASURE_PEAK=1 measures again), and
 *   copy_note says which, with the file and its age. */
typedef struct mb_calibration {
  uint32_t struct_size;
  double timer_resolution_ns;
  double timer_overhead_ns; /* median of the empty samples */
  uint32_t timer_readings;
  int flush_checked;      /* 0: not run (see flush_note) */
  int flush_pass;         /* the flushed re-read is measurably slower */
  double flush_hot_ns;    /* median of the hot re-reads */
  double flush_cold_ns;   /* median of the re-reads right after a flush */
  double flush_ratio;     /* cold / hot */
  double flush_bytes;     /* bytes the op touches per run */
  const char *flush_note; /* how it was checked, or why it was not */
  /* ---- appended ---- */
  double copy_gbps;      /* measured bandwidth, GB/s (1e9); 0: not measured */
  double copy_bytes;     /* bytes one copy of the measurement moves */
  const char *copy_note; /* how it was measured, or why it was not */
} mb_calibration_t;

#define MB_CALIBRATION_INIT                                                   \
  {                                                                           \
    sizeof(mb_calibration_t), 0.0, 0.0, 0u, 0, 0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, \
        0.0, 0                                                                \
  }

/* Measures on first call (the flush check takes a fraction of a second),
 * then returns the same figures. Strings are owned by the context. */
MB_API mb_status_t mb_device_calibration(mb_device_t *dev,
                                         mb_calibration_t *out);
/* Facts the backend records about the device and how the benchmark runs on
 * it (topology, thread binding, clock source, driver): fact i's key and its
 * text or, when *text is NULL, its number. Owned by the backend. */
MB_API size_t mb_device_fact_count(mb_device_t *dev);
MB_API mb_status_t mb_device_fact(mb_device_t *dev, size_t i, const char **key,
                                  const char **text, double *value);

#ifdef __cplusplus
}
#endif
#endif
