/* Internal: the objects behind the public handles. */
#ifndef MB_LIB_INTERNAL_H
#define MB_LIB_INTERNAL_H

#include <stddef.h>

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
} mb__backend_t;

/* An optional vtable member the module knows of and sets (modules built
 * against an older, shorter vtable do not have the appended ones). */
#define MB__VT_HAS(vt, member)                                         \
  ((vt)->struct_size >=                                                \
       offsetof(mb_backend_vtable_t, member) + sizeof((vt)->member) && \
   (vt)->member != NULL)

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
  char cal_note[256];
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

/* calibrate.c: the device's timer, measured once (cheap; every benchmark
 * needs it to size its batch). */
mb_status_t mb__device_timer(mb_device_t *dev);

/* context.c */
void mb__log(const mb_context_t *ctx, mb_log_level_t level, const char *fmt,
             ...) MB__FMT(3, 4);
/* Loader diagnostics, shown only under MB_BACKEND_VERBOSE=1. */
void mb__loader_say(const mb_context_t *ctx, const char *fmt, ...)
    MB__FMT(2, 3);
/* Instantiates every loaded backend and builds the device list (idempotent). */
mb_status_t mb__devices_init(mb_context_t *ctx);

/* loader.c */
void mb__loader_scan(mb_context_t *ctx, const char *option_path,
                     uint32_t flags);
void mb__loader_unload(mb_context_t *ctx);

/* util.c */
char *mb__strdup(const char *s);
/* A whole file, NUL-terminated (*len excludes the NUL); the caller frees
 * *out. MB_ERR_IO / MB_ERR_NO_MEMORY name the path. */
mb_status_t mb__read_file(const char *path, char **out, size_t *len);
/* Writes text + "\n" to path.tmp and renames it over path, so path is
 * never half-written; MB_ERR_IO names path and the system's reason. */
mb_status_t mb__write_file_atomic(const char *path, const char *text);
double mb__now_s(void); /* CLOCK_MONOTONIC seconds */
/* Batched samples run long enough to last at least this (ns): the runner's
 * and a composite's per-step samples alike. */
#define MB__TARGET_SAMPLE_NS 2e5

#endif
