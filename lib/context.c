/* The context: log settings, the host-function table handed to backends,
 * and lazy instantiation of backends into a device list. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const k_level_names[] = {"error", "warn", "info", "debug"};

static void log_emit(const mb_context_t *ctx, mb_log_level_t level,
                     const char *msg) {
  if (ctx->log_fn) {
    ctx->log_fn(ctx->log_user, level, msg);
  } else {
    fprintf(stderr, "microbench: %s: %s\n", k_level_names[level], msg);
  }
}

static void log_v(const mb_context_t *ctx, mb_log_level_t level,
                  const char *fmt, va_list ap) {
  char msg[1024];
  if (level > ctx->log_level) return;
  vsnprintf(msg, sizeof msg, fmt, ap);
  log_emit(ctx, level, msg);
}

void mb__log(const mb_context_t *ctx, mb_log_level_t level, const char *fmt,
             ...) {
  va_list ap;
  va_start(ap, fmt);
  log_v(ctx, level, fmt, ap);
  va_end(ap);
}

void mb__loader_say(const mb_context_t *ctx, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  if (!ctx->verbose_loader) return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* MB_BACKEND_VERBOSE asks for these lines whatever the log level. */
  log_emit(ctx, MB_LOG_INFO, msg);
}

/* Host-table trampolines: backends see only these function pointers. */
static void host_log(void *host, mb_log_level_t level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_v((const mb_context_t *)host, level, fmt, ap);
  va_end(ap);
}

static void host_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mb__error_setv(fmt, ap);
  va_end(ap);
}

/* A kernel's refusal, formatted into the context's buffer: the library
 * calls a backend from one thread at a time per context, and the kernel
 * selection copies the text as soon as supports() returns, so one buffer
 * per context is enough and no backend needs storage of its own. Formatted
 * aside first: an argument may be the buffer's previous text. */
static const char *host_reason(void *host, const char *fmt, ...) {
  mb_context_t *ctx = host;
  char text[sizeof ctx->reason];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  memcpy(ctx->reason, text, sizeof text);
  return ctx->reason;
}

/* The communicator's calls for backends (sys/backend.h): the context's
 * communicator with its own wait. */
static mb_status_t host_comm_info(void *host, mb_comm_info_t *out) {
  const mb_context_t *ctx = host;
  *out = (mb_comm_info_t)MB_COMM_INFO_INIT;
  if (!ctx->comm)
    return mb__fail(MB_ERR_UNSUPPORTED,
                    "no communicator: collectives run across the ranks of an "
                    "MPI job (mpirun -n N mbench ..., or "
                    "mb_context_set_comm); docs/distributed.md");
  return mb_comm_info(ctx->comm, out);
}

static mb_status_t host_comm_bcast(void *host, void *buf, size_t bytes,
                                   int root) {
  mb_context_t *ctx = host;
  return ctx->comm ? mb_comm_bcast(ctx->comm, buf, bytes, root,
                                   mb_comm_wait(ctx->comm))
                   : MB_OK;
}

static mb_status_t host_comm_collective(void *host, const mb_coll_t *c) {
  mb_context_t *ctx = host;
  if (!ctx->comm) {
    mb_comm_info_t info;
    return host_comm_info(host, &info);
  }
  return mb_comm_collective(ctx->comm, c, mb_comm_wait(ctx->comm));
}

static double host_comm_wait(void *host) {
  return mb_comm_wait(((mb_context_t *)host)->comm);
}

mb_status_t mb_context_create(mb_context_t **out,
                              const mb_context_options_t *opts) {
  mb_context_options_t defaults = MB_CONTEXT_OPTIONS_INIT;
  if (!out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_context_create: out is NULL");
  *out = NULL;
  mb_status_t st;
  if (opts &&
      (st = mb__struct_in(MB__STRUCT_CONTEXT_OPTIONS, "mb_context_create", opts,
                          &defaults)) != MB_OK)
    return st;
  if (defaults.log_level > MB_LOG_DEBUG)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_context_create: log_level %d; valid: 0 (error) .. 3 "
                    "(debug)",
                    (int)defaults.log_level);

  mb_context_t *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_context_create: out of memory");
  ctx->log_level = defaults.log_level;
  ctx->log_fn = defaults.log_fn;
  ctx->log_user = defaults.log_user;
  const char *verbose = getenv("MB_BACKEND_VERBOSE");
  ctx->verbose_loader = verbose && *verbose && strcmp(verbose, "0") != 0;
  ctx->host = (mb_host_api_t){
      .abi_version = MB_BACKEND_ABI_VERSION,
      .struct_size = sizeof(mb_host_api_t),
      .host = ctx,
      .log = host_log,
      .set_error = host_set_error,
      .convert = mb_convert,
      .dtype_bytes = mb_dtype_bytes,
      .dtype_name = mb_dtype_name,
      .reason = host_reason,
      .comm_info = host_comm_info,
      .comm_bcast = host_comm_bcast,
      .comm_collective = host_comm_collective,
      .comm_wait = host_comm_wait,
  };
  mb__loader_scan(ctx, defaults.backend_path, defaults.flags);
  *out = ctx;
  return MB_OK;
}

void mb_context_destroy(mb_context_t *ctx) {
  if (!ctx) return;
  mb_context_trace_close(ctx); /* a trace left open is ended properly */
  for (size_t i = 0; i < ctx->num_user_kernels; i++) {
    free(ctx->user_kernels[i].op);
    free(ctx->user_kernels[i].name);
    free(ctx->user_kernels[i].backend);
  }
  free(ctx->user_kernels);
  free(ctx->devices);
  mb__loader_unload(ctx);
  free(ctx);
}

static mb_status_t backend_instantiate(mb_context_t *ctx, mb__backend_t *b) {
  const char *why = NULL;
  b->initialized = 1;
  mb_error_clear();
  if (b->vt->init(&ctx->host, &b->state) != MB_OK) {
    free(b->reason);
    b->reason = mb__strdup(*mb_error_last() ? mb_error_last() : "init failed");
    b->state = NULL;
    return MB_ERR_BACKEND;
  }
  b->num_devices = b->vt->device_count(b->state, &why);
  if (b->num_devices == 0) {
    free(b->reason);
    b->reason = mb__strdup(why ? why : "no device");
  }
  b->usable = 1;
  mb__loader_say(ctx, "backend %s: %u device(s)%s%s", b->name, b->num_devices,
                 b->num_devices ? "" : ": ", b->num_devices ? "" : b->reason);
  return MB_OK;
}

mb_status_t mb__devices_init(mb_context_t *ctx) {
  if (ctx->devices_ready) return MB_OK;
  size_t total = 0;
  for (size_t i = 0; i < ctx->num_backends; i++) {
    mb__backend_t *b = &ctx->backends[i];
    if (!b->vt) continue;
    if (!b->initialized) backend_instantiate(ctx, b);
    if (b->usable) total += b->num_devices;
  }
  ctx->devices = total ? calloc(total, sizeof *ctx->devices) : NULL;
  if (total && !ctx->devices)
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory listing devices");
  size_t k = 0;
  for (size_t i = 0; i < ctx->num_backends; i++) {
    mb__backend_t *b = &ctx->backends[i];
    if (!b->usable) continue;
    b->first_device = (uint32_t)k;
    for (uint32_t d = 0; d < b->num_devices; d++) {
      mb_device_t *dev = &ctx->devices[k];
      dev->ctx = ctx;
      dev->backend = b;
      dev->index = d;
      dev->info = (mb_device_info_t)MB_DEVICE_INFO_INIT;
      if (b->vt->device_info(b->state, d, &dev->info) != MB_OK) continue;
      dev->info.struct_size = sizeof dev->info;
      dev->info.backend = b->name;
      dev->info.index = d;
      if (!dev->info.name) dev->info.name = "";
      if (!dev->info.peak_source) dev->info.peak_source = "";
      k++;
    }
    b->num_devices = (uint32_t)(k - b->first_device);
  }
  ctx->num_devices = k;
  ctx->devices_ready = 1;
  return MB_OK;
}

void mb_context_set_interrupt(mb_context_t *ctx,
                              const volatile sig_atomic_t *flag) {
  if (ctx) ctx->interrupt = flag;
}
