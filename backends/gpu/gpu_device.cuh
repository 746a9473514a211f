/* Device-side helpers every shared kernel uses: typed element access through
 * the exact converters of backends/common/mb_cvt.h (so every backend rounds
 * alike), block-wide reductions, and grid sizes from the kernels'
 * occupancy (host code beside the kernels). Include it from .cu files. */
#ifndef MB_GPU_DEVICE_CUH
#define MB_GPU_DEVICE_CUH

#include <stdint.h>

#include "gpu_kernels.h"
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

/* ---- launch sizes (host code) --------------------------------------------
 * Grids come from what the compiled kernel needs, not from a guess: the
 * runtime's occupancy calculator says how many blocks of a kernel one
 * multiprocessor holds at once (its registers, shared memory and block
 * size), and a grid-stride grid is that times the multiprocessors times a
 * few waves, or less when the work needs less. */

/* Raises kernel's dynamic shared memory limit to `bytes` when that is past
 * the default 48 KiB (launches and occupancy queries need it first). */
template <class K>
static mb_status_t mb_gpu_allow_smem(const mb_gpu_env_t *env, const char *what,
                                     K kernel, size_t bytes) {
  if (bytes <= 48u * 1024u) return MB_OK;
  const mb_gpu_error_t e = mb_gpu_func_set_max_smem(kernel, (int)bytes);
  if (e == mb_gpu_success) return MB_OK;
  (void)mb_gpu_get_last_error();
  env->host->set_error("%s: %s: raising shared memory to %zu bytes: %s",
                       env->backend, what, bytes, mb_gpu_error_string(e));
  return MB_ERR_BACKEND;
}

/* *blocks = the blocks of `kernel` (`threads` threads, `smem` bytes of
 * dynamic shared memory, within the kernel's limit: raise it first) one
 * multiprocessor holds at once, at least 1. Else MB_ERR_BACKEND after
 * set_error naming the backend and `what`: the runtime could not answer,
 * or such a block fits no multiprocessor (its launch would fail too). */
template <class K>
static mb_status_t mb_gpu_blocks_per_sm(const mb_gpu_env_t *env,
                                        const char *what, K kernel,
                                        unsigned threads, size_t smem,
                                        int *blocks) {
  int b = 0;
  const mb_gpu_error_t e = mb_gpu_occupancy(&b, kernel, (int)threads, smem);
  if (e != mb_gpu_success) {
    (void)mb_gpu_get_last_error(); /* not left for the next launch check */
    env->host->set_error(
        "%s: %s: occupancy of %u threads with %zu bytes of shared memory: %s",
        env->backend, what, threads, smem, mb_gpu_error_string(e));
    return MB_ERR_BACKEND;
  }
  if (b < 1) {
    env->host->set_error(
        "%s: %s: a block of %u threads with %zu bytes of shared memory fits "
        "no multiprocessor",
        env->backend, what, threads, smem);
    return MB_ERR_BACKEND;
  }
  *blocks = b;
  return MB_OK;
}

/* Blocks for a grid-stride loop over `need` blocks' worth of work when one
 * multiprocessor holds `per_sm` of them: `waves` times what the device
 * holds at once, never more than the work needs, never 0 (an empty launch
 * is still one block whose loop runs no time), within a grid's 2^31 - 1. */
static inline unsigned mb_gpu_grid_from(const mb_gpu_env_t *env, int per_sm,
                                        size_t need, unsigned waves) {
  const size_t sms = (size_t)(env->sm_count > 0 ? env->sm_count : 1);
  const size_t fill =
      sms * (size_t)(per_sm > 0 ? per_sm : 1) * (size_t)(waves > 0 ? waves : 1);
  size_t g = need < fill ? need : fill;
  if (g > 0x7FFFFFFFu) g = 0x7FFFFFFFu;
  return (unsigned)(g ? g : 1);
}

/* *grid for a grid-stride launch of `kernel` over `need` blocks' worth of
 * work: mb_gpu_grid_from with the kernel's occupancy (the errors of
 * mb_gpu_blocks_per_sm). Pass the kernel that is launched, with the block
 * size and dynamic shared memory it is launched with. */
template <class K>
static mb_status_t mb_gpu_grid(const mb_gpu_env_t *env, const char *what,
                               K kernel, unsigned threads, size_t smem,
                               size_t need, unsigned waves, unsigned *grid) {
  int per_sm = 0;
  const mb_status_t st =
      mb_gpu_blocks_per_sm(env, what, kernel, threads, smem, &per_sm);
  if (st == MB_OK) *grid = mb_gpu_grid_from(env, per_sm, need, waves);
  return st;
}

#endif
