/* Internal: the objects behind the public handles. */
#ifndef MB_LIB_INTERNAL_H
#define MB_LIB_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "microbench.h"
#include "microbench/sys/backend.h"
#include "error.h"

/* One backend module that was tried (loaded or not), or a search directory
 * that could not be read. */
typedef struct mb__backend {
  char *name; /* vtable name, or the file name when loading failed */
  char *path;
  char *reason; /* "" when fine */
  void *dl;     /* dlopen handle; NULL when not loaded */
  const mb_backend_vtable_t *vt;
  void *state;     /* from vt->init; NULL until instantiated */
  int initialized; /* init attempted */
  int usable;      /* loaded and init succeeded */
  uint32_t first_device, num_devices; /* slice of ctx->devices */
  /* The rows of vt->kernels that mb_kernel_info lists: each but a twin (a
   * later row with an earlier one's op, name and dtypes: a kernel listed
   * twice around another to order the choice, exactly one accepting). */
  size_t *listed, num_listed;
} mb__backend_t;

/* An optional vtable hook the module sets. b->vt is the loader's full-size
 * copy (versioned.c's rule), so a hook appended after the module's ABI
 * version reads NULL here and never past the module's table. */
#define MB__VT_HAS(vt, member) ((vt)->member != NULL)

/* Most facts a backend's environment hook may give (more are cut). */
#define MB__MAX_FACTS 64

struct mb_device {
  mb_context_t *ctx;
  mb__backend_t *backend;
  uint32_t index;        /* within the backend */
  mb_device_info_t info; /* strings owned by the backend state */
  /* calibrate.c, measured on first use: timer_readings != 0 once the timer
   * is, cal_flush_done once the flush check ran (or was found impossible). */
  mb_calibration_t cal;
  int cal_flush_done;
  char cal_note[1024];      /* the flush check, and its cache file */
  int cal_copy_done;        /* the bandwidth measurement ran (or could not) */
  char cal_copy_note[1024]; /* the measurement, and its cache file */
  /* The backend's environment facts, read once. */
  mb_kernel_note_t facts[MB__MAX_FACTS];
  uint32_t num_facts;
  int facts_ready;
  /* Bytes held by tensors on the device now, and the most since the last
   * reset (tensor.c; the runner's peak memory per benchmark). */
  double mem_live, mem_peak;
};

/* A user kernel registered through mb_kernel_register (strings copied). */
typedef struct mb__user_kernel {
  mb_kernel_desc_t desc;
  char *op, *name, *backend;
} mb__user_kernel_t;

struct mb_context {
  mb_log_level_t log_level;
  mb_log_fn log_fn;
  void *log_user;
  int verbose_loader;
  mb_host_api_t host;

  mb__backend_t *backends;
  size_t num_backends;
  mb_device_t *devices;
  size_t num_devices;
  int devices_ready;

  mb__user_kernel_t *user_kernels;
  size_t num_user_kernels;

  const volatile sig_atomic_t *interrupt; /* mb_context_set_interrupt */
  mb_comm_t *comm;                        /* mb_context_set_comm; borrowed */

  /* The host table's reason(): a backend's last formatted refusal. */
  char reason[512];
  /* Benchmarks run so far: part of a fresh check sample's seed. */
  uint64_t runs;
  struct mb__trace *trace; /* mb_context_trace_open; NULL: none */
};

/* 1 when the caller's interrupt flag is raised. */
static inline int mb__interrupted(const mb_context_t *ctx) {
  return ctx->interrupt && *ctx->interrupt;
}

struct mb_tensor {
  mb_device_t *dev;
  mb_dtype_t dtype;
  uint32_t ndim;
  int64_t shape[MB_MAX_DIMS];
  size_t numel, nbytes;
  void *data;
};

/* device.c: a spec's device when it names no backend: device `index` of
 * the backend of the first GPU device if any, else of the first device.
 * MB_ERR_NO_DEVICE (with the reason) when there is none or the backend
 * lacks that index. */
mb_status_t mb__device_default(mb_context_t *ctx, uint32_t index,
                               mb_device_t **out);
/* timer.c: the device's timer, measured once (cheap; every benchmark
 * needs it to size its batch). */
mb_status_t mb__device_timer(mb_device_t *dev);
/* calibrate.c: the device's copy bandwidth in GB/s, measured once (a
 * fraction of a second); 0 when it could not be (cal.copy_note says why).
 * The runner asks before a benchmark allocates its operands, so the copy's
 * buffers never count toward that benchmark's peak memory. */
double mb__device_bandwidth(mb_device_t *dev);
/* calibration_cache.c: 1 when this machine's cache file holds the
 * device's copy bandwidth (dev->cal.copy_gbps and copy_bytes set, note the
 * cached measurement's description and age); 0 to measure it. */
int mb__bandwidth_cache_load(mb_device_t *dev, char *note, size_t cap);
/* Saves the freshly measured dev->cal.copy_gbps and copy_bytes with note,
 * then appends to note where they were saved or why not (never fails). */
void mb__bandwidth_cache_store(mb_device_t *dev, char *note, size_t cap);
/* The same for a flush check that passed (dev->cal.flush_*): load sets
 * them and the note; store saves only a check that ran and passed. */
int mb__flush_cache_load(mb_device_t *dev, char *note, size_t cap);
void mb__flush_cache_store(mb_device_t *dev, char *note, size_t cap);

/* context.c */
void mb__log(const mb_context_t *ctx, mb_log_level_t level, const char *fmt,
             ...) MB__FMT(3, 4);
/* Loader diagnostics, shown only under MB_BACKEND_VERBOSE=1. */
void mb__loader_say(const mb_context_t *ctx, const char *fmt, ...)
    MB__FMT(2, 3);
/* Instantiates every loaded backend and builds the device list (idempotent). */
mb_status_t mb__devices_init(mb_context_t *ctx);

/* versioned.c: the one rule for every struct that carries struct_size
 * (docs/architecture.md, "Public API conventions"). A struct's first
 * version ends with the member named here; members were only appended
 * since. X(id, type, the struct_size member, last member of the first
 * version, what to tell a caller whose struct is not one of ours). */
#define MB__VERSIONED_STRUCTS(X)                                               \
  /* inputs: read with mb__struct_in */                                        \
  X(CONTEXT_OPTIONS, mb_context_options_t, struct_size, flags,                 \
    "use MB_CONTEXT_OPTIONS_INIT")                                             \
  X(OP_PARAMS, mb_op_params_t, struct_size, flags, "use MB_OP_PARAMS_INIT")    \
  X(KERNEL_DESC, mb_kernel_desc_t, struct_size, user,                          \
    "use MB_KERNEL_DESC_INIT")                                                 \
  X(PRESET_PARAMS, mb_preset_params_t, struct_size, num_m_values,              \
    "use MB_PRESET_PARAMS_INIT")                                               \
  X(REPORT_OPTIONS, mb_report_options_t, struct_size, argv,                    \
    "use MB_REPORT_OPTIONS_INIT")                                              \
  X(PLAN_OPTIONS, mb_plan_options_t, struct_size, max_flop,                    \
    "use MB_PLAN_OPTIONS_INIT")                                                \
  X(COMPARE_OPTIONS, mb_compare_options_t, struct_size, match_problem,         \
    "use MB_COMPARE_OPTIONS_INIT")                                             \
  X(REPORT_HTML_OPTIONS, mb_report_html_options_t, struct_size, compare,       \
    "use MB_REPORT_HTML_OPTIONS_INIT")                                         \
  X(BENCH_SPEC, mb_bench_spec_t, struct_size, flags, "use MB_BENCH_SPEC_INIT") \
  X(FILL, mb_fill_t, struct_size, b, "use MB_FILL_INIT")                       \
  X(PLACEMENT, mb_placement_t, struct_size, host, "use MB_PLACEMENT_INIT")     \
  /* outputs: written with mb__struct_out */                                   \
  X(BACKEND_INFO, mb_backend_info_t, struct_size, device_count,                \
    "use MB_BACKEND_INFO_INIT")                                                \
  X(DEVICE_INFO, mb_device_info_t, struct_size, peak_source,                   \
    "use MB_DEVICE_INFO_INIT")                                                 \
  X(CALIBRATION, mb_calibration_t, struct_size, flush_note,                    \
    "use MB_CALIBRATION_INIT")                                                 \
  X(KERNEL_INFO, mb_kernel_info_t, struct_size, user,                          \
    "use MB_KERNEL_INFO_INIT")                                                 \
  X(RESULT_INFO, mb_result_info_t, struct_size, seed,                          \
    "use MB_RESULT_INFO_INIT")                                                 \
  X(CORRECTNESS, mb_correctness_t, struct_size, elements_total,                \
    "use MB_CORRECTNESS_INIT")                                                 \
  X(STATS, mb_stats_t, struct_size, stop_reason, "use MB_STATS_INIT")          \
  X(DERIVED, mb_derived_t, struct_size, pct_peak, "use MB_DERIVED_INIT")       \
  X(AGGREGATE, mb_aggregate_t, struct_size, max, "use MB_AGGREGATE_INIT")      \
  X(STEP_TIME, mb_step_time_t, struct_size, bytes, "use MB_STEP_TIME_INIT")    \
  X(PARTS_CHECK, mb_parts_check_t, struct_size, whole_ci_high_ns,              \
    "use MB_PARTS_CHECK_INIT")                                                 \
  X(ACCURACY, mb_accuracy_t, struct_size, elements_checked,                    \
    "use MB_ACCURACY_INIT")                                                    \
  X(COMM_INFO, mb_comm_info_t, struct_size, impl, "use MB_COMM_INFO_INIT")     \
  X(COMPARE_ROW, mb_compare_row_t, struct_size, verdict,                       \
    "use MB_COMPARE_ROW_INIT")                                                 \
  X(PLAN_ENTRY, mb_plan_entry_t, struct_size, baseline,                        \
    "use MB_PLAN_ENTRY_INIT")                                                  \
  /* a backend module's tables (ABI version 1), read with mb__struct_in */     \
  X(BACKEND_VTABLE, mb_backend_vtable_t, struct_size, num_kernels,             \
    "see microbench/sys/backend.h")                                            \
  X(BACKEND_KERNEL, mb_backend_kernel_t, struct_size, release,                 \
    "see microbench/sys/backend.h")

typedef enum mb__struct_id {
#define MB__STRUCT_ID(id, type, size_member, v1_last, hint) MB__STRUCT_##id,
  MB__VERSIONED_STRUCTS(MB__STRUCT_ID)
#undef MB__STRUCT_ID
      MB__STRUCT_COUNT
} mb__struct_id_t;

/* An input struct from a caller (or a module): `given`, of the caller's
 * struct_size, is read into *full, which holds this library's defaults
 * (the *_INIT) and is sizeof the current struct. An older, smaller struct
 * is accepted: what it lacks keeps the defaults. Smaller than the first
 * version, or larger than this library's struct (a newer header: fields it
 * cannot honour), is MB_ERR_INVALID_ARG naming `fn`, the struct, the size
 * and the sizes this library reads. full->struct_size becomes sizeof. */
mb_status_t mb__struct_in(mb__struct_id_t id, const char *fn, const void *given,
                          void *full);
/* An output struct: copies at most the caller's struct_size bytes of
 * `ours` (sizeof the current struct) to `out` and sets out->struct_size to
 * the bytes written. A caller's struct newer than ours gets ours and keeps
 * its tail; smaller than the first version is MB_ERR_INVALID_ARG. */
mb_status_t mb__struct_out(mb__struct_id_t id, const char *fn, const void *ours,
                           void *out);
/* The bytes of struct `id`'s first version (tests, the loader's reasons). */
size_t mb__struct_first_size(mb__struct_id_t id);

/* loader.c */
void mb__loader_scan(mb_context_t *ctx, const char *option_path,
                     uint32_t flags);
void mb__loader_unload(mb_context_t *ctx);

/* util.c */
char *mb__strdup(const char *s);
/* A whole regular file of at most MB__MAX_READ_BYTES, NUL-terminated (*len
 * excludes the NUL); the caller frees *out. MB_ERR_IO / MB_ERR_NO_MEMORY
 * name the path. */
#define MB__MAX_READ_BYTES (1 << 30)
mb_status_t mb__read_file(const char *path, char **out, size_t *len);
/* Writes text + "\n" to path.tmp and renames it over path, so path is
 * never half-written; MB_ERR_IO names path and the system's reason. */
mb_status_t mb__write_file_atomic(const char *path, const char *text);
/* Where a result file may go: a new path, or an existing regular file this
 * process can write (*mode, when given: its permission bits, 0 for a new
 * file). A device, FIFO, socket or directory is MB_ERR_INVALID_ARG (a
 * rename over /dev/full replaced the device with a file), a read-only
 * file MB_ERR_IO. */
mb_status_t mb__output_path_ok(const char *path, mode_t *mode);
/* 1 when a and b name one file: the same device and inode when both exist
 * (a link or another spelling of the path counts), the same path with its
 * directory resolved when neither does (two outputs yet to be written). */
int mb__same_file(const char *a, const char *b);
/* MB_ERR_INVALID_ARG when `path` is one of the `count` inputs: writing it
 * would destroy what is being read. */
mb_status_t mb__output_not_input(const char *path, const char *const *inputs,
                                 size_t count);
double mb__now_s(void); /* CLOCK_MONOTONIC seconds */
/* Batched samples run long enough to last at least this (ns): every
 * sample the runner takes, a composite's parts included (runner_parts.c
 * measures them through the runner). */
#define MB__TARGET_SAMPLE_NS 2e5

#endif
