/* libmicrobench — tensors: dense row-major arrays in a device's memory.
 *
 * Threading: as the owning context (one thread at a time). */
#ifndef MICROBENCH_TENSOR_H
#define MICROBENCH_TENSOR_H

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MB_MAX_DIMS 8

typedef struct mb_tensor mb_tensor_t;

/* Allocates an uninitialised tensor on `dev`. The caller owns *out
 * (mb_tensor_destroy). `shape` is copied. Out of device memory gives
 * MB_ERR_NO_MEMORY with the size and device in the message. */
MB_API mb_status_t mb_tensor_create(mb_device_t *dev, mb_dtype_t dtype,
                                    uint32_t ndim, const int64_t *shape,
                                    mb_tensor_t **out);
/* NULL is a no-op. */
MB_API void mb_tensor_destroy(mb_tensor_t *t);

MB_API mb_dtype_t mb_tensor_dtype(const mb_tensor_t *t);
MB_API uint32_t mb_tensor_ndim(const mb_tensor_t *t);
/* Owned by the tensor; valid for its life. */
MB_API const int64_t *mb_tensor_shape(const mb_tensor_t *t);
MB_API size_t mb_tensor_numel(const mb_tensor_t *t);
MB_API size_t mb_tensor_nbytes(const mb_tensor_t *t);
MB_API mb_device_t *mb_tensor_device(const mb_tensor_t *t);
/* The device address (a host address on the CPU backend). Owned by the
 * tensor; valid for its life. */
MB_API void *mb_tensor_data(const mb_tensor_t *t);

typedef enum mb_fill_kind {
  MB_FILL_NORMAL = 0,  /* a = mean, b = standard deviation */
  MB_FILL_UNIFORM = 1, /* a = low, b = high */
  MB_FILL_CONSTANT = 2 /* a = value */
} mb_fill_kind_t;

typedef struct mb_fill {
  uint32_t struct_size;
  mb_fill_kind_t kind;
  uint64_t seed;
  double a, b;
} mb_fill_t;

#define MB_FILL_INIT \
  { sizeof(mb_fill_t), MB_FILL_NORMAL, 0u, 0.0, 1.0 }

/* Fills from a counter-based generator: element i depends only on (seed, i),
 * is drawn in double, then rounded to the dtype (nearest even, saturating).
 * So every backend gets the same bytes. `fill` NULL means MB_FILL_INIT. */
MB_API mb_status_t mb_tensor_fill(mb_tensor_t *t, const mb_fill_t *fill);
/* Same generator into host memory of `dtype` (what mb_tensor_fill uses). */
MB_API mb_status_t mb_fill_host(void *dst, mb_dtype_t dtype, size_t count,
                                const mb_fill_t *fill);
/* `bytes` must equal mb_tensor_nbytes(t). */
MB_API mb_status_t mb_tensor_copy_from_host(mb_tensor_t *t, const void *src,
                                            size_t bytes);
MB_API mb_status_t mb_tensor_copy_to_host(const mb_tensor_t *t, void *dst,
                                          size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
