/* Public view of backends and devices. */
#include <string.h>

#include "internal.h"

size_t mb_backend_count(const mb_context_t *ctx) {
  return ctx ? ctx->num_backends : 0;
}

mb_status_t mb_backend_info(const mb_context_t *ctx, size_t index,
                            mb_backend_info_t *out) {
  if (!ctx || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_backend_info: NULL argument");
  if (index >= ctx->num_backends)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_backend_info: index %zu out of range (%zu entries)",
                    index, ctx->num_backends);
  /* Listing a backend means telling its devices: instantiate on first ask. */
  mb__devices_init((mb_context_t *)ctx);
  const mb__backend_t *b = &ctx->backends[index];
  mb_backend_info_t info = MB_BACKEND_INFO_INIT;
  info.name = b->name;
  info.path = b->path;
  info.version = (b->usable && b->vt->version) ? b->vt->version(b->state) : "";
  if (!info.version) info.version = "";
  info.loaded = b->vt != NULL && b->usable;
  info.reason = b->reason;
  info.device_count = b->usable ? b->num_devices : 0;
  return mb__struct_out(MB__STRUCT_BACKEND_INFO, "mb_backend_info", &info, out);
}

size_t mb_device_count(const mb_context_t *ctx) {
  if (!ctx) return 0;
  mb__devices_init((mb_context_t *)ctx);
  return ctx->num_devices;
}

mb_device_t *mb_device_at(const mb_context_t *ctx, size_t index) {
  if (!ctx) return NULL;
  mb__devices_init((mb_context_t *)ctx);
  return index < ctx->num_devices ? &ctx->devices[index] : NULL;
}

/* "valid backends: cpu (1 device); cuda: not loaded: <why>" */
static void describe_backends(const mb_context_t *ctx, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < ctx->num_backends && len < cap; i++) {
    const mb__backend_t *b = &ctx->backends[i];
    int n;
    if (b->usable && b->num_devices)
      n = snprintf(buf + len, cap - len, "%s%s (%u device%s)", len ? "; " : "",
                   b->name, b->num_devices, b->num_devices == 1 ? "" : "s");
    else
      n = snprintf(buf + len, cap - len, "%s%s: unavailable (%s)",
                   len ? "; " : "", b->name, b->reason);
    if (n < 0) break;
    len += (size_t)n;
  }
  if (!ctx->num_backends)
    snprintf(buf, cap,
             "no backend module found (set MB_BACKEND_PATH, or "
             "MB_BACKEND_VERBOSE=1 to see where it looked)");
}

mb_status_t mb_device_find(const mb_context_t *ctx, const char *backend,
                           uint32_t index, mb_device_t **out) {
  char list[1536];
  if (!ctx || !backend || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_device_find: NULL argument");
  *out = NULL;
  mb__devices_init((mb_context_t *)ctx);
  for (size_t i = 0; i < ctx->num_backends; i++) {
    const mb__backend_t *b = &ctx->backends[i];
    if (strcmp(b->name, backend) != 0) continue;
    if (!b->usable || b->num_devices == 0)
      return mb__fail(MB_ERR_NO_DEVICE, "backend \"%s\" has no device: %s",
                      backend, b->reason);
    if (index >= b->num_devices)
      return mb__fail(MB_ERR_NO_DEVICE,
                      "backend \"%s\" has %u device(s); device %u does not "
                      "exist",
                      backend, b->num_devices, index);
    *out = &ctx->devices[b->first_device + index];
    return MB_OK;
  }
  /* This project's own backends: a build or an install may lack a module
   * (no CUDA toolkit, -DMB_WITH_HIP=OFF), and a config written for it
   * should skip there, not be an input error. */
  static const char *const k_shipped[] = {"cpu", "cuda", "hip"};
  for (size_t i = 0; i < sizeof k_shipped / sizeof *k_shipped; i++)
    if (!strcmp(backend, k_shipped[i]))
      return mb__fail(MB_ERR_NO_DEVICE,
                      "backend \"%s\" is not available here: its module "
                      "(mb_backend_%s.so) was not found (a build without "
                      "it?); MB_BACKEND_VERBOSE=1 shows where it was looked "
                      "for",
                      backend, backend);
  describe_backends(ctx, list, sizeof list);
  return mb__fail(MB_ERR_NOT_FOUND, "unknown backend \"%s\"; backends: %s",
                  backend, list);
}

mb_status_t mb_device_info(const mb_device_t *dev, mb_device_info_t *out) {
  if (!dev || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_device_info: NULL argument");
  return mb__struct_out(MB__STRUCT_DEVICE_INFO, "mb_device_info", &dev->info,
                        out);
}

double mb_device_peak_flops(const mb_device_t *dev, mb_dtype_t dtype) {
  if (!dev || !dev->backend->vt->peak_flops) return 0.0;
  return dev->backend->vt->peak_flops(dev->backend->state, dev->index, dtype);
}

/* Without a backend: device `index` of the backend of the first GPU
 * device if any, else of the first device. Its device 0 is that device;
 * an index it does not have is MB_ERR_NO_DEVICE saying so (a skip), never
 * quietly another device. */
mb_status_t mb__device_default(mb_context_t *ctx, uint32_t index,
                               mb_device_t **out) {
  size_t n = mb_device_count(ctx);
  const mb_device_t *best = n ? &ctx->devices[0] : NULL;
  for (size_t i = 0; i < n; i++)
    if (ctx->devices[i].info.kind == MB_DEVICE_GPU) {
      best = &ctx->devices[i];
      break;
    }
  if (!best)
    return mb__fail(MB_ERR_NO_DEVICE, "no device: %s",
                    ctx->num_backends ? "no backend has a device"
                                      : "no backend module found");
  return mb_device_find(ctx, best->backend->name, index, out);
}
