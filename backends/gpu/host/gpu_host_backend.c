/* The GPU backends' skeleton (gpu_host.h): devices, memory, copies, sync,
 * cache flushes and the vtable hooks no vendor needs to change. Written
 * against the runtime shim, so CUDA, HIP and the emulated GPU run the same
 * lines. On a machine without a GPU or driver a backend still loads,
 * reports 0 devices and says why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ccl.h"
#include "gpu_host.h"

/* ---- errors and devices -------------------------------------------------- */

mb_status_t mb__gpuh_check(mb_gpuh_state_t *st, mb_gpu_error_t e,
                           const char *what) {
  if (e == mb_gpu_success) return MB_OK;
  (void)mb_gpu_get_last_error(); /* no stale error for the next check */
  snprintf(st->last_error, sizeof st->last_error, "%s: %s: %s (%s)",
           st->vendor->name, what, mb_gpu_error_string(e),
           mb_gpu_error_name(e));
  st->host.set_error("%s", st->last_error);
  return e == mb_gpu_error_oom ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

static mb_gpuh_device_t *device_at(const mb_gpuh_state_t *st, uint32_t i) {
  return (mb_gpuh_device_t *)(void *)(st->devices +
                                      (size_t)i * st->vendor->device_size);
}

mb_gpuh_device_t *mb__gpuh_device(mb_gpuh_state_t *st, uint32_t dev) {
  if (dev < st->num_devices) return device_at(st, dev);
  if (st->num_devices)
    st->host.set_error("%s: no device %u (devices 0..%u)", st->vendor->name,
                       dev, st->num_devices - 1);
  else
    st->host.set_error("%s: %s", st->vendor->name, st->why_none);
  return NULL;
}

/* The current device for the calls that follow; NULL after set_error. */
static mb_gpuh_device_t *use_device(void *state, uint32_t dev) {
  mb_gpuh_device_t *d = mb__gpuh_device(state, dev);
  if (d && mb_gpu_set_device(d->ordinal) != mb_gpu_success)
    (void)mb_gpu_get_last_error();
  return d;
}

/* Whether our own kernels (the shared ones, the blocking kernel) have code
 * for this GPU: a build for other targets still runs the vendor's
 * libraries, which carry their own. */
static void probe_code(mb_gpuh_state_t *st, mb_gpuh_device_t *d) {
  const mb_gpu_error_t e = mb__gpu_probe_code();
  d->own_code = e == mb_gpu_success;
  if (!d->own_code)
    snprintf(d->why_no_code, sizeof d->why_no_code,
             "this build of the %s module has no code for %.200s (%s): rebuild "
             "it for this GPU's architecture",
             st->vendor->name, d->name, mb_gpu_error_name(e));
}

static mb_status_t device_init(mb_gpuh_state_t *st, mb_gpuh_device_t *d) {
  const mb_gpuh_vendor_t *v = st->vendor;
  mb_status_t s =
      mb__gpuh_check(st, mb_gpu_set_device(d->ordinal), "set device");
  if (s != MB_OK || (s = v->probe(st, d)) != MB_OK) return s;
  probe_code(st, d);
  if ((s = mb__gpuh_check(st, mb_gpu_stream_create(&d->stream), "stream")) !=
          MB_OK ||
      (s = mb__gpuh_timer_init(st, d)) != MB_OK)
    return s;
  d->env = (mb_gpu_env_t){
      .stream = (void *)d->stream,
      .host = &st->host,
      .backend = v->name,
      .sm_count = d->sm_count,
      .warp_size = d->warp_size,
      .smem_optin = d->smem_optin,
      .scratch_alloc = mb__gpu_scratch_alloc,
      .scratch_free = mb__gpu_scratch_free,
  };
  if (v->device_open && (s = v->device_open(st, d)) != MB_OK) return s;
  mb__gpuh_link_init(st, d);
  return MB_OK;
}

static void device_fini(mb_gpuh_state_t *st, mb_gpuh_device_t *d) {
  (void)mb_gpu_set_device(d->ordinal);
  if (st->vendor->device_close) st->vendor->device_close(st, d);
  mb__gpuh_timer_fini(d);
  mb_gpu_free(d->flush_write);
  mb_gpu_free(d->flush_read);
  mb_gpu_free(d->flush_sink);
  if (d->stream) mb_gpu_stream_destroy(d->stream);
  (void)mb_gpu_get_last_error();
}

/* ---- instance ------------------------------------------------------------ */

void mb__gpuh_fini(void *state) {
  mb_gpuh_state_t *st = state;
  if (!st) return;
  mb__gpuh_ccl_close(st); /* its communicators use the devices' streams */
  mb__gpuh_ranges_close(st);
  for (uint32_t i = 0; i < st->num_devices; i++)
    device_fini(st, device_at(st, i));
  free(st->devices);
  if (st->vendor->close) st->vendor->close(st);
  free(st);
}

static int count_devices(mb_gpuh_state_t *st) {
  const mb_gpuh_vendor_t *v = st->vendor;
  int n = 0;
  const mb_gpu_error_t e = mb_gpu_device_count(&n);
  if (e != mb_gpu_success) {
    char why[400];
    if (v->why_no_device)
      v->why_no_device(st, e, why, sizeof why);
    else
      snprintf(why, sizeof why, "%s (%s)", mb_gpu_error_string(e),
               mb_gpu_error_name(e));
    snprintf(st->why_none, sizeof st->why_none, "no %s device: %s",
             v->device_word, why);
    (void)mb_gpu_get_last_error();
    return 0;
  }
  if (n == 0)
    snprintf(st->why_none, sizeof st->why_none,
             "no %s device: the runtime reports none", v->device_word);
  return n;
}

/* A GPU that cannot be set up is left out with the reason logged; the
 * others stay usable. */
static void init_devices(mb_gpuh_state_t *st, int n) {
  const mb_gpuh_vendor_t *v = st->vendor;
  for (int i = 0; i < n; i++) {
    mb_gpuh_device_t *d = device_at(st, st->num_devices);
    d->ordinal = i;
    if (device_init(st, d) == MB_OK) {
      st->num_devices++;
      MB_GPUH_LOG(st, MB_LOG_DEBUG, "%s: device %d: %s, %d SMs, %s", v->name, i,
                  d->name, d->sm_count, d->peak_source);
      if (!d->own_code)
        MB_GPUH_LOG(st, MB_LOG_WARN, "%s: %s", v->name, d->why_no_code);
      continue;
    }
    MB_GPUH_LOG(st, MB_LOG_WARN, "%s: device %d left out: %s", v->name, i,
                st->last_error);
    snprintf(st->why_none, sizeof st->why_none,
             "no %s device: device %d could not be set up: %.400s",
             v->device_word, i, st->last_error);
    device_fini(st, d);
    memset(d, 0, v->device_size);
  }
}

mb_status_t mb__gpuh_init(const mb_gpuh_vendor_t *vendor,
                          const mb_host_api_t *host, void **state) {
  mb_gpuh_state_t *st = calloc(1, vendor->state_size);
  if (!st) {
    host->set_error("%s: cannot allocate the backend state", vendor->name);
    return MB_ERR_NO_MEMORY;
  }
  st->vendor = vendor;
  st->host = *host;
  st->host.struct_size = sizeof st->host;
  if (vendor->before_runtime) vendor->before_runtime(st);
  const int n = count_devices(st);
  if (vendor->open) vendor->open(st, n);
  if (n > 0 && !(st->devices = calloc((size_t)n, vendor->device_size))) {
    mb__gpuh_fini(st);
    host->set_error("%s: cannot allocate %d device records", vendor->name, n);
    return MB_ERR_NO_MEMORY;
  }
  init_devices(st, n);
  mb__gpuh_ranges_open(st);
  vendor->version(st, st->version, sizeof st->version);
  *state = st;
  return MB_OK;
}

/* ---- what the library asks of a device ----------------------------------- */

const char *mb__gpuh_version(void *state) {
  return ((const mb_gpuh_state_t *)state)->version;
}

uint32_t mb__gpuh_device_count(void *state, const char **why_none) {
  const mb_gpuh_state_t *st = state;
  if (why_none) *why_none = st->num_devices ? NULL : st->why_none;
  return st->num_devices;
}

mb_status_t mb__gpuh_device_info(void *state, uint32_t dev,
                                 mb_device_info_t *out) {
  mb_gpuh_state_t *st = state;
  mb_gpuh_device_t *d = mb__gpuh_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  info.backend = st->vendor->name;
  info.index = dev;
  info.name = d->name;
  info.kind = MB_DEVICE_GPU;
  info.memory_bytes = d->memory_bytes;
  info.mem_bw_bytes_per_s = d->mem_bw;
  info.compute_units = (uint32_t)d->sm_count;
  info.clock_hz = d->clock_hz;
  info.cache_bytes[2] = d->llc_bytes; /* what rotate and flush must exceed */
  info.peak_source = d->peak_source ? d->peak_source : "";
  const uint32_t caller_size = out->struct_size;
  memcpy(out, &info, caller_size < sizeof info ? caller_size : sizeof info);
  out->struct_size = caller_size;
  return MB_OK;
}

double mb__gpuh_peak_flops(void *state, uint32_t dev, mb_dtype_t dtype) {
  const mb_gpuh_state_t *st = state;
  if (dev >= st->num_devices || dtype <= MB_DTYPE_NONE ||
      dtype >= MB_DTYPE_COUNT || !st->vendor->peak_flops)
    return 0;
  return st->vendor->peak_flops(device_at(st, dev), dtype);
}

double mb__gpuh_peak_for(void *state, uint32_t dev, const char *op,
                         const mb_op_params_t *params) {
  const mb_gpuh_state_t *st = state;
  if (dev >= st->num_devices || !st->vendor->peak_for) return 0;
  return st->vendor->peak_for(device_at(st, dev), op, params);
}

mb_status_t mb__gpuh_telemetry(void *state, uint32_t dev, mb_telemetry_t *out) {
  mb_gpuh_state_t *st = state;
  mb_gpuh_device_t *d = mb__gpuh_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  if (st->vendor->telemetry) st->vendor->telemetry(st, d, out);
  return MB_OK;
}

const char *mb__gpuh_timer_info(void *state, uint32_t dev) {
  mb_gpuh_device_t *d = mb__gpuh_device(state, dev);
  return d ? d->timer_info : "";
}

uint32_t mb__gpuh_environment(void *state, uint32_t dev, mb_kernel_note_t *out,
                              uint32_t max) {
  mb_gpuh_state_t *st = state;
  mb_gpuh_device_t *d = mb__gpuh_device(st, dev);
  if (!d) return 0;
  const uint32_t n =
      st->vendor->environment ? st->vendor->environment(st, d, out, max) : 0;
  return mb__gpuh_link_facts(d, out, n, max);
}

/* ---- memory -------------------------------------------------------------- */

mb_status_t mb__gpuh_alloc(void *state, uint32_t dev, size_t bytes,
                           void **ptr) {
  mb_gpuh_state_t *st = state;
  mb_gpuh_device_t *d = use_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  const mb_gpu_error_t e = mb_gpu_malloc(ptr, bytes ? bytes : 1);
  if (e == mb_gpu_success) return MB_OK;
  (void)mb_gpu_get_last_error();
  size_t free_b = 0, total_b = 0;
  (void)mb_gpu_mem_info(&free_b, &total_b);
  (void)mb_gpu_get_last_error();
  st->host.set_error(
      "%s: out of device memory: %zu bytes on device %u (%s; %zu of %zu MiB "
      "free)",
      st->vendor->name, bytes, dev, mb_gpu_error_string(e), free_b >> 20,
      total_b >> 20);
  return MB_ERR_NO_MEMORY;
}

void mb__gpuh_free(void *state, uint32_t dev, void *ptr) {
  (void)use_device(state, dev);
  (void)mb_gpu_free(ptr);
  (void)mb_gpu_get_last_error();
}

/* On the benchmark stream, so it is ordered after every kernel. */
static mb_status_t copy(mb_gpuh_state_t *st, uint32_t dev, void *dst,
                        const void *src, size_t bytes) {
  mb_gpuh_device_t *d = use_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  if (!bytes) return MB_OK;
  mb_status_t s =
      mb__gpuh_check(st, mb_gpu_copy_async(dst, src, bytes, d->stream), "copy");
  return s == MB_OK ? mb__gpuh_check(st, mb_gpu_stream_sync(d->stream), "copy")
                    : s;
}

mb_status_t mb__gpuh_copy_to_device(void *state, uint32_t dev, void *dst,
                                    const void *src, size_t bytes) {
  return copy(state, dev, dst, src, bytes);
}

mb_status_t mb__gpuh_copy_to_host(void *state, uint32_t dev, void *dst,
                                  const void *src, size_t bytes) {
  return copy(state, dev, dst, src, bytes);
}

/* A kernel's execution error surfaces here (asynchronously). */
mb_status_t mb__gpuh_sync(void *state, uint32_t dev) {
  mb_gpuh_state_t *st = state;
  mb_gpuh_device_t *d = use_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  return mb__gpuh_check(st, mb_gpu_stream_sync(d->stream), "kernel");
}

/* ---- the cache flush -----------------------------------------------------
 * Before each cold sample, outside the timed region, then a wait, so the
 * sample starts with none of its operands in the last-level cache (L2, or
 * MI300's Infinity Cache). Write (nvbench's): memset a buffer the cache's
 * size; it leaves the cache full of dirty lines, whose write-back may land
 * in the sample. Read: a kernel reads twice the cache's size, leaving clean
 * lines. Buffers are made on first use: a run that never flushes a way
 * never pays for its buffer. */

static mb_status_t flush_buffer(mb_gpuh_state_t *st, void **buf, size_t bytes,
                                const char *what) {
  if (*buf) return MB_OK;
  return mb__gpuh_check(st, mb_gpu_malloc(buf, bytes), what);
}

mb_status_t mb__gpuh_flush(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                           mb_flush_t how) {
  if (!d->llc_bytes) return MB_OK; /* no cache size known: nothing to do */
  mb_status_t s;
  if (how == MB_FLUSH_READ) {
    if (!d->own_code) {
      st->host.set_error("%s: the read flush is a kernel of ours: %s",
                         st->vendor->name, d->why_no_code);
      return MB_ERR_UNSUPPORTED;
    }
    if ((s = flush_buffer(st, &d->flush_read, 2 * d->llc_bytes,
                          "read-flush buffer")) != MB_OK ||
        (s = flush_buffer(st, (void **)&d->flush_sink, sizeof(uint32_t),
                          "read-flush sink")) != MB_OK ||
        (s = mb__gpu_flush_read(&d->env, d->flush_read, 2 * d->llc_bytes,
                                d->flush_sink)) != MB_OK)
      return s;
  } else {
    if ((s = flush_buffer(st, &d->flush_write, d->llc_bytes, "flush buffer")) !=
            MB_OK ||
        (s = mb__gpuh_check(
             st,
             mb_gpu_memset_async(d->flush_write, 0, d->llc_bytes, d->stream),
             "flush")) != MB_OK)
      return s;
  }
  return mb__gpuh_check(st, mb_gpu_stream_sync(d->stream), "flush");
}

mb_status_t mb__gpuh_flush_cache_with(void *state, uint32_t dev,
                                      mb_flush_t how) {
  mb_gpuh_device_t *d = use_device(state, dev);
  return d ? mb__gpuh_flush(state, d, how) : MB_ERR_NOT_FOUND;
}

mb_status_t mb__gpuh_flush_cache(void *state, uint32_t dev) {
  return mb__gpuh_flush_cache_with(state, dev, MB_FLUSH_WRITE);
}

/* ---- the shared kernels -------------------------------------------------- */

/* Their way to the device's launch environment (gpu_kernels.h): none on a
 * device this build has no code for, so every shared kernel is skipped
 * with that reason instead of failing to launch. */
mb_status_t mb__gpu_device_env(void *bstate, uint32_t dev,
                               const mb_gpu_env_t **env) {
  mb_gpuh_state_t *st = bstate;
  mb_gpuh_device_t *d = use_device(st, dev);
  if (!d) return MB_ERR_NOT_FOUND;
  if (!d->own_code) {
    st->host.set_error("%s: %s", st->vendor->name, d->why_no_code);
    return MB_ERR_UNSUPPORTED;
  }
  *env = &d->env;
  return MB_OK;
}
