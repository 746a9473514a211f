/* Tensors: a device allocation plus dtype and shape. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static mb_status_t shape_numel(uint32_t ndim, const int64_t *shape,
                               size_t *numel) {
  size_t n = 1;
  for (uint32_t i = 0; i < ndim; i++) {
    if (shape[i] <= 0)
      return mb__fail(MB_ERR_INVALID_ARG,
                      "tensor shape[%u] = %lld; dimensions must be positive", i,
                      (long long)shape[i]);
    if (n > SIZE_MAX / (size_t)shape[i])
      return mb__fail(MB_ERR_INVALID_ARG, "tensor shape overflows size_t");
    n *= (size_t)shape[i];
  }
  *numel = n;
  return MB_OK;
}

mb_status_t mb_tensor_create(mb_device_t *dev, mb_dtype_t dtype, uint32_t ndim,
                             const int64_t *shape, mb_tensor_t **out) {
  if (!dev || !out || (ndim && !shape))
    return mb__fail(MB_ERR_INVALID_ARG, "mb_tensor_create: NULL argument");
  *out = NULL;
  if (ndim > MB_MAX_DIMS)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_tensor_create: %u dims; max %d",
                    ndim, MB_MAX_DIMS);
  if (mb_dtype_bits(dtype) == 0)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_tensor_create: invalid dtype %d",
                    (int)dtype);
  size_t numel = 0;
  mb_status_t st = shape_numel(ndim, shape, &numel);
  if (st != MB_OK) return st;
  mb_tensor_t *t = calloc(1, sizeof *t);
  if (!t) return mb__fail(MB_ERR_NO_MEMORY, "out of host memory");
  t->dev = dev;
  t->dtype = dtype;
  t->ndim = ndim;
  memcpy(t->shape, shape, ndim * sizeof *shape);
  t->numel = numel;
  t->nbytes = mb_dtype_bytes(dtype, numel);
  const mb__backend_t *b = dev->backend;
  mb_error_clear();
  st = b->vt->alloc(b->state, dev->index, t->nbytes ? t->nbytes : 1, &t->data);
  if (st != MB_OK) {
    free(t);
    /* Out of memory: ours first, then the backend's own words (how much
     * is free). */
    if (st == MB_ERR_NO_MEMORY)
      mb__error_prefix("out of memory: cannot allocate %zu bytes on %s:%u (%s)",
                       mb_dtype_bytes(dtype, numel), b->name, dev->index,
                       dev->info.name);
    else
      mb__error_prefix("%s:%u: allocating %zu bytes", b->name, dev->index,
                       mb_dtype_bytes(dtype, numel));
    return st;
  }
  /* What tensors on this device hold now and at most (a benchmark's peak
   * memory: the runner resets the peak to the live bytes first). */
  dev->mem_live += (double)t->nbytes;
  if (dev->mem_live > dev->mem_peak) dev->mem_peak = dev->mem_live;
  *out = t;
  return MB_OK;
}

void mb_tensor_destroy(mb_tensor_t *t) {
  if (!t) return;
  const mb__backend_t *b = t->dev->backend;
  b->vt->free(b->state, t->dev->index, t->data);
  t->dev->mem_live -= (double)t->nbytes;
  free(t);
}

mb_dtype_t mb_tensor_dtype(const mb_tensor_t *t) {
  return t ? t->dtype : MB_DTYPE_NONE;
}
uint32_t mb_tensor_ndim(const mb_tensor_t *t) {
  return t ? t->ndim : 0;
}
const int64_t *mb_tensor_shape(const mb_tensor_t *t) {
  return t ? t->shape : NULL;
}
size_t mb_tensor_numel(const mb_tensor_t *t) {
  return t ? t->numel : 0;
}
size_t mb_tensor_nbytes(const mb_tensor_t *t) {
  return t ? t->nbytes : 0;
}
mb_device_t *mb_tensor_device(const mb_tensor_t *t) {
  return t ? t->dev : NULL;
}
void *mb_tensor_data(const mb_tensor_t *t) {
  return t ? t->data : NULL;
}

static mb_status_t check_bytes(const mb_tensor_t *t, const void *p,
                               size_t bytes, const char *fn) {
  if (!t || !p) return mb__fail(MB_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (bytes != t->nbytes)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: %zu bytes given, tensor has %zu",
                    fn, bytes, t->nbytes);
  return MB_OK;
}

mb_status_t mb_tensor_copy_from_host(mb_tensor_t *t, const void *src,
                                     size_t bytes) {
  mb_status_t st = check_bytes(t, src, bytes, "mb_tensor_copy_from_host");
  if (st != MB_OK) return st;
  const mb__backend_t *b = t->dev->backend;
  st = b->vt->copy_to_device(b->state, t->dev->index, t->data, src, bytes);
  if (st == MB_OK) st = b->vt->sync(b->state, t->dev->index);
  return st;
}

mb_status_t mb_tensor_copy_to_host(const mb_tensor_t *t, void *dst,
                                   size_t bytes) {
  mb_status_t st = check_bytes(t, dst, bytes, "mb_tensor_copy_to_host");
  if (st != MB_OK) return st;
  const mb__backend_t *b = t->dev->backend;
  st = b->vt->sync(b->state, t->dev->index);
  if (st == MB_OK)
    st = b->vt->copy_to_host(b->state, t->dev->index, dst, t->data, bytes);
  return st;
}

mb_status_t mb_tensor_fill(mb_tensor_t *t, const mb_fill_t *fill) {
  if (!t) return mb__fail(MB_ERR_INVALID_ARG, "mb_tensor_fill: NULL tensor");
  /* calloc: i4 stores one nibble at a time, so the last byte starts zeroed. */
  void *host = calloc(1, t->nbytes ? t->nbytes : 1);
  if (!host)
    return mb__fail(MB_ERR_NO_MEMORY,
                    "out of host memory: %zu bytes to stage a fill", t->nbytes);
  mb_status_t st = mb_fill_host(host, t->dtype, t->numel, fill);
  if (st == MB_OK) st = mb_tensor_copy_from_host(t, host, t->nbytes);
  free(host);
  return st;
}
