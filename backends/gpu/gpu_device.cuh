/* Device-side helpers every shared kernel uses: typed element access through
 * the exact converters of backends/common/mb_cvt.h (so every backend rounds
 * alike), block-wide reductions, and launch-size arithmetic. Device code
 * only: include it from .cu files after gpu_runtime.h. */
#ifndef MB_GPU_DEVICE_CUH
#define MB_GPU_DEVICE_CUH

#include <stdint.h>

#include "gpu_runtime.h"
#include "mb_cvt.h"
#include "microbench/dtype.h"

/* Element i of a float tensor of dtype dt (f32, bf16, f16, f8e4m3, f8e5m2)
 * as f32: exact. */
__device__ __forceinline__ float mb_gpu_load(mb_dtype_t dt, const void *p,
                                             size_t i) {
  switch (dt) {
    case MB_DTYPE_BF16:
      return mb__cvt_bf16_to_f32(((const uint16_t *)p)[i]);
    case MB_DTYPE_F16:
      return mb__cvt_f16_to_f32(((const uint16_t *)p)[i]);
    case MB_DTYPE_F8E4M3:
      return mb__cvt_e4m3_to_f32(((const uint8_t *)p)[i]);
    case MB_DTYPE_F8E5M2:
      return mb__cvt_e5m2_to_f32(((const uint8_t *)p)[i]);
    case MB_DTYPE_I8:
      return (float)((const int8_t *)p)[i];
    case MB_DTYPE_I32:
      return (float)((const int32_t *)p)[i];
    default:
      return ((const float *)p)[i];
  }
}

/* Stores f32 v as element i of a tensor of dtype dt, rounded to nearest
 * even; fp8/int targets saturate (quantize semantics), f16/bf16 overflow to
 * infinity. i4 packs two per byte and needs both nibbles: use
 * mb__cvt_f32_to_i4 directly. */
__device__ __forceinline__ void mb_gpu_store(mb_dtype_t dt, void *p, size_t i,
                                             float v) {
  switch (dt) {
    case MB_DTYPE_BF16:
      ((uint16_t *)p)[i] = mb__cvt_f32_to_bf16(v);
      break;
    case MB_DTYPE_F16:
      ((uint16_t *)p)[i] = mb__cvt_f32_to_f16(v);
      break;
    case MB_DTYPE_F8E4M3:
      ((uint8_t *)p)[i] = mb__cvt_f32_to_e4m3(v);
      break;
    case MB_DTYPE_F8E5M2:
      ((uint8_t *)p)[i] = mb__cvt_f32_to_e5m2(v);
      break;
    case MB_DTYPE_I8:
      ((int8_t *)p)[i] = mb__cvt_f32_to_i8(v);
      break;
    default:
      ((float *)p)[i] = v;
      break;
  }
}

/* Warp-level sum and max (every lane gets the result). */
__device__ __forceinline__ float mb_gpu_warp_sum(float v) {
  for (int m = MB_GPU_WARP / 2; m > 0; m >>= 1) v += mb_gpu_shfl_xor(v, m);
  return v;
}

__device__ __forceinline__ float mb_gpu_warp_max(float v) {
  for (int m = MB_GPU_WARP / 2; m > 0; m >>= 1)
    v = fmaxf(v, mb_gpu_shfl_xor(v, m));
  return v;
}

/* Block-wide sum / max; every thread of the block must call it and gets the
 * result. `scratch` holds one float per warp (blockDim.x / MB_GPU_WARP, at
 * most 32) and may be reused after the call returns. */
__device__ __forceinline__ float mb_gpu_block_sum(float v, float *scratch) {
  const int lane = threadIdx.x % MB_GPU_WARP, warp = threadIdx.x / MB_GPU_WARP;
  const int warps = (blockDim.x + MB_GPU_WARP - 1) / MB_GPU_WARP;
  v = mb_gpu_warp_sum(v);
  __syncthreads(); /* scratch may still be read by a previous call */
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  return mb_gpu_warp_sum(v);
}

__device__ __forceinline__ float mb_gpu_block_max(float v, float *scratch) {
  const int lane = threadIdx.x % MB_GPU_WARP, warp = threadIdx.x / MB_GPU_WARP;
  const int warps = (blockDim.x + MB_GPU_WARP - 1) / MB_GPU_WARP;
  v = mb_gpu_warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : -INFINITY;
  return mb_gpu_warp_max(v);
}

/* Blocks for a grid-stride loop over n items: enough to fill the device
 * (a few waves), never more than the work needs. */
static inline unsigned mb_gpu_grid(size_t n, unsigned block, int sm_count) {
  size_t need = (n + block - 1) / block;
  size_t fill = (size_t)(sm_count > 0 ? sm_count : 1) * 8u;
  size_t g = need < fill ? need : fill;
  return (unsigned)(g ? g : 1);
}

#endif
