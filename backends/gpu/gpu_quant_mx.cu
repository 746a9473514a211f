/* quantize and dequantize with e8m0 scales (MXFP8, OCP MX v1.0) on the GPU.
 *
 * quantize: one warp per scale block (1x32 in MXFP8: a lane an element, the
 * warp's loads one coalesced line), blocks taken in a grid-stride loop.
 * The warp reduces |x| as f32 bit patterns with an integer maximum, which
 * keeps NaN (its patterns lie above infinity's) as the MX rule wants, turns
 * it into the block's e8m0 byte by the rule (mb__cvt_mx_scale_e8m0), and
 * every lane writes its elements RNE_sat(x / 2^X): the f32 division by a
 * power of two is exact (or below f32's normals, where no fp8 can tell), so
 * it is the reference's quotient. Larger blocks (32x32, rows) loop their
 * lanes over the block and read it twice, from cache. A transposed Q reads
 * X's columns: the same indices, swapped.
 *
 * dequantize: one element a thread, x = round(fl32(q 2^X)) with the byte
 * decoded exactly (mb__cvt_e8m0_to_f32).
 *
 * lib/ops/quant.c is the reference; gpu_quant.cu and gpu_dequant.cu hand
 * every e8m0 request here. */
#include "gpu_mx.h"
#include "gpu_quant.cuh"

namespace {

struct mx_args {
  const void *x;
  uint8_t *q, *grid;
  int64_t rows, cols; /* of Q */
  int64_t bm, bn, gc, nblocks;
  int transpose;
  int emax;            /* emax_elem of Q's format */
  int static_byte;     /* >= 0: every block's byte (a static scale) */
  int warps_per_block; /* of the launch */
};

/* The f32 pattern of |v|, NaN kept (no masking: a NaN's is the largest). */
__device__ __forceinline__ uint32_t abs_bits(float v) {
  return mb__cvt_bits(v) & 0x7FFFFFFFu;
}

__device__ __forceinline__ uint32_t warp_max_bits(uint32_t v) {
  for (int m = MB_GPU_WARP / 2; m > 0; m >>= 1) {
    const uint32_t o = mb__cvt_bits(mb_gpu_shfl_xor(mb__cvt_float(v), m));
    v = o > v ? o : v;
  }
  return v;
}

template <mb_dtype_t DX, mb_dtype_t DQ>
__global__ void __launch_bounds__(MB_GQ_BLOCK) mx_quantize_kernel(mx_args a) {
  typedef typename mb_gq_x<DX>::raw R;
  const R *x = (const R *)a.x;
  const int lane = (int)threadIdx.x % MB_GPU_WARP;
  const int64_t warp = (int64_t)blockIdx.x * a.warps_per_block +
                       (int64_t)threadIdx.x / MB_GPU_WARP;
  const int64_t warps = (int64_t)gridDim.x * a.warps_per_block;
  const int64_t size = a.bm * a.bn;
  for (int64_t b = warp; b < a.nblocks; b += warps) {
    const int64_t r0 = b / a.gc * a.bm, c0 = b % a.gc * a.bn;
    /* Element e of the block: Q's (r0 + e / bn, c0 + e % bn), read from X
     * as stored (X^T's when transposed: X is cols x rows). */
    auto at = [&](int64_t e) -> int64_t {
      const int64_t r = r0 + e / a.bn, c = c0 + e % a.bn;
      return a.transpose ? c * a.rows + r : r * a.cols + c;
    };
    uint32_t amax = 0;
    if (a.static_byte < 0) {
      for (int64_t e = lane; e < size; e += MB_GPU_WARP) {
        const uint32_t v = abs_bits(mb_gq_x<DX>::get(x[at(e)]));
        amax = v > amax ? v : amax;
      }
      amax = warp_max_bits(amax);
    }
    const uint8_t byte = a.static_byte >= 0
                             ? (uint8_t)a.static_byte
                             : mb__cvt_mx_scale_e8m0(amax, a.emax);
    const float s = mb__cvt_e8m0_to_f32(byte);
    if (lane == 0) a.grid[b] = byte;
    for (int64_t e = lane; e < size; e += MB_GPU_WARP) {
      const int64_t r = r0 + e / a.bn, c = c0 + e % a.bn;
      a.q[r * a.cols + c] =
          (uint8_t)mb_gq_q<DQ>::enc(mb_gq_x<DX>::get(x[at(e)]) / s);
    }
  }
}

struct mx_dq_args {
  const uint8_t *q, *grid;
  void *x;
  int64_t cols, n, bm, bn, gc;
};

template <mb_dtype_t DQ, mb_dtype_t DO>
__global__ void __launch_bounds__(MB_GQ_BLOCK)
    mx_dequantize_kernel(mx_dq_args a) {
  typedef typename mb_gq_x<DO>::raw R;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = i / a.cols, c = i % a.cols;
    const float s = mb__cvt_e8m0_to_f32(a.grid[r / a.bm * a.gc + c / a.bn]);
    ((R *)a.x)[i] = mb_gq_x<DO>::put(mb_gq_q<DQ>::dec(a.q[i]) * s);
  }
}

int emax_of(mb_dtype_t q) {
  return q == MB_DTYPE_F8E4M3   ? MB_CVT_MX_EMAX_E4M3
         : q == MB_DTYPE_F8E5M2 ? MB_CVT_MX_EMAX_E5M2
                                : 0;
}

}  // namespace

mb_status_t mb_gq_launch_mx(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  mx_args a;
  a.x = p->x;
  a.q = (uint8_t *)p->q;
  a.grid = (uint8_t *)p->grid;
  a.rows = p->rows, a.cols = p->cols, a.bm = p->bm, a.bn = p->bn;
  a.gc = p->gc, a.nblocks = p->gr * p->gc;
  a.transpose = p->transpose;
  a.emax = emax_of(p->qdt);
  /* resolve() admitted only powers of two: the byte is the exponent. */
  a.static_byte =
      p->is_static ? (int)mb__cvt_pow2_to_e8m0(p->static_scale) : -1;
  a.warps_per_block = MB_GQ_BLOCK / env->warp_size;
  if (!a.emax || a.warps_per_block < 1) {
    env->host->set_error("%s: quantize: e8m0 scales go with fp8 Q",
                         env->backend);
    return MB_ERR_UNSUPPORTED;
  }
  return mb_gq_dispatch(p->xdt, p->qdt, [&](auto dx, auto dq) -> mb_status_t {
    constexpr mb_dtype_t DX = decltype(dx)::value;
    constexpr mb_dtype_t DQ = decltype(dq)::value;
    if constexpr (DQ != MB_DTYPE_F8E4M3 && DQ != MB_DTYPE_F8E5M2) {
      return MB_ERR_UNSUPPORTED;
    } else {
      return mb_gq_launch(
          env, "quantize (MX)", mx_quantize_kernel<DX, DQ>,
          (size_t)((a.nblocks + a.warps_per_block - 1) / a.warps_per_block), a);
    }
  });
}

mb_status_t mb_gq_launch_mx_dequant(const mb_gpu_env_t *env,
                                    const mb_op_params_t *p,
                                    const mb_kernel_call_t *call) {
  mx_dq_args a;
  a.q = (const uint8_t *)call->in[0];
  a.grid = (const uint8_t *)call->in[1];
  a.x = call->out[0];
  a.cols = p->shape[1];
  a.n = p->shape[0] * p->shape[1];
  a.bm = p->scale_a.block[0], a.bn = p->scale_a.block[1];
  a.gc = p->shape[1] / a.bn;
  return mb_gq_dispatch(
      p->dtype_out, p->dtype, [&](auto dout, auto dq) -> mb_status_t {
        constexpr mb_dtype_t DO = decltype(dout)::value;
        constexpr mb_dtype_t DQ = decltype(dq)::value;
        if constexpr (DQ != MB_DTYPE_F8E4M3 && DQ != MB_DTYPE_F8E5M2) {
          return MB_ERR_UNSUPPORTED;
        } else {
          return mb_gq_launch(
              env, "dequantize (MX)", mx_dequantize_kernel<DQ, DO>,
              (size_t)((a.n + MB_GQ_BLOCK - 1) / MB_GQ_BLOCK), a);
        }
      });
}

/* ---- cuBLASLt's layout of VEC32_UE8M0 scales -------------------------------
 * (cuBLAS docs, "1D Block Scaling Factors Layout"; torchao's to_blocked):
 * the outer x kblocks scales, padded to multiples of 128 x 4, in tiles of
 * 128 rows x 4 scale columns, tiles row-major; inside a tile, row r and
 * column c at (r % 32) 16 + (r / 32) 4 + c. One thread a destination byte
 * (padding written as 0), so dst needs no clearing. */
namespace {

struct tile_args {
  const uint8_t *src;
  uint8_t *dst;
  int64_t so, sk, outer, kblocks, col_tiles, n;
};

__global__ void __launch_bounds__(MB_GQ_BLOCK) mx_tile_kernel(tile_args a) {
  for (int64_t d = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; d < a.n;
       d += (int64_t)gridDim.x * blockDim.x) {
    const int64_t tile = d / 512, w = d % 512;
    const int64_t o = tile / a.col_tiles * 128 + (w % 16) / 4 * 32 + w / 16;
    const int64_t kb = tile % a.col_tiles * 4 + w % 4;
    a.dst[d] = o < a.outer && kb < a.kblocks ? a.src[o * a.so + kb * a.sk] : 0;
  }
}

}  // namespace

size_t mb__gpu_mx_tiled_bytes(int64_t outer, int64_t kblocks) {
  return (size_t)((outer + 127) / 128 * 128) * (size_t)((kblocks + 3) / 4 * 4);
}

mb_status_t mb__gpu_mx_tile_scales(const mb_gpu_env_t *env, const uint8_t *src,
                                   int64_t so, int64_t sk, int64_t outer,
                                   int64_t kblocks, uint8_t *dst) {
  tile_args a = {src,
                 dst,
                 so,
                 sk,
                 outer,
                 kblocks,
                 (kblocks + 3) / 4,
                 (int64_t)mb__gpu_mx_tiled_bytes(outer, kblocks)};
  return mb_gq_launch(env, "MX scale tiles", mx_tile_kernel,
                      (size_t)((a.n + MB_GQ_BLOCK - 1) / MB_GQ_BLOCK), a);
}
