/* FP4 (f4e2m1, packed two per byte, low nibble first) quantize and
 * dequantize on the GPU, with each of the three scale rules FP4 has:
 *
 *   f32     s = fl32(absmax / 6) (NaN skipped; 1 for an all-zero or
 *           non-finite block) or the static scale; grid of f32
 *   MXFP4   e8m0 s = 2^(floor(log2 absmax) - 2) by the OCP rule (NaN kept),
 *           or the static power of two; grid of bytes
 *   NVFP4   e4m3 s_b = e4m3(fl32(fl32(absmax / 6) / S)) (NaN kept), S the
 *           per-tensor scale (the static scale); each element divided by
 *           fl32(s_b S), by infinity where that is 0; grid of bytes
 *
 * and q = e2m1_RNE_sat(fl32(x / s)) (lib/ops/quant.c, quant_nvfp4.c: the
 * references, reproduced bit for bit).
 *
 * quantize is two launches on the stream: the scales (a warp per block, as
 * gpu_quant_mx.cu: an integer maximum of |x|'s f32 patterns, which keeps
 * NaN above infinity, lane 0 writing the block's scale), then the elements
 * (a thread per byte of Q, decoding its two elements' scales from the grid
 * again), so that no two threads write one byte: two elements of a byte
 * may lie in different blocks, rows (odd widths) or warps. A transposed Q
 * reads X's columns. dequantize is a thread per element. Neither uses
 * tensor cores or FP4 hardware: this is the emulated baseline (FP4's
 * arithmetic is the GEMM's, gpu_gemm.cuh). */
#include "gpu_quant.cuh"

namespace {

enum fp4_rule { FP4_F32 = 0, FP4_MX = 1, FP4_NV = 2 };

struct fp4_args {
  const void *x;
  uint8_t *q;
  void *grid; /* f32 (FP4_F32) or bytes (MX, NV) */
  int64_t rows, cols, bm, bn, gc, nblocks, nbytes;
  int transpose, rule, is_static;
  float scale;     /* f32: the static scale; NV: the per-tensor S */
  int static_byte; /* MX, static: every block's e8m0 byte */
  int warps_per_block;
};

__device__ __forceinline__ uint32_t fp4_warp_max(uint32_t v) {
  for (int m = MB_GPU_WARP / 2; m > 0; m >>= 1) {
    const uint32_t o = mb__cvt_bits(mb_gpu_shfl_xor(mb__cvt_float(v), m));
    v = o > v ? o : v;
  }
  return v;
}

/* What block g's elements are divided by (or, dequantizing, multiplied
 * by): the f32 scale, the e8m0 power of two, or NVFP4's fl32(s_b S). */
__device__ __forceinline__ float fp4_scale(const void *grid, int rule, float s,
                                           int64_t g) {
  if (rule == FP4_F32) return ((const float *)grid)[g];
  const uint8_t b = ((const uint8_t *)grid)[g];
  if (rule == FP4_MX) return mb__cvt_e8m0_to_f32(b);
  return mb__cvt_e4m3_to_f32(b) * s;
}

template <mb_dtype_t DX>
__global__ void __launch_bounds__(MB_GQ_BLOCK) fp4_scales_kernel(fp4_args a) {
  typedef typename mb_gq_x<DX>::raw R;
  const R *x = (const R *)a.x;
  const int lane = (int)threadIdx.x % MB_GPU_WARP;
  const int64_t warp = (int64_t)blockIdx.x * a.warps_per_block +
                       (int64_t)threadIdx.x / MB_GPU_WARP;
  const int64_t warps = (int64_t)gridDim.x * a.warps_per_block;
  const int64_t size = a.bm * a.bn;
  /* The f32 rule skips NaN (fmaxf's), the MX and NV rules keep it. */
  const uint32_t skip_above = a.rule == FP4_F32 ? 0x7F800000u : 0xFFFFFFFFu;
  for (int64_t b = warp; b < a.nblocks; b += warps) {
    const int64_t r0 = b / a.gc * a.bm, c0 = b % a.gc * a.bn;
    uint32_t amax = 0;
    if (!a.is_static || a.rule == FP4_NV) {
      for (int64_t e = lane; e < size; e += MB_GPU_WARP) {
        const int64_t r = r0 + e / a.bn, c = c0 + e % a.bn;
        const int64_t i = a.transpose ? c * a.rows + r : r * a.cols + c;
        const uint32_t v = mb__cvt_bits(mb_gq_x<DX>::get(x[i])) & 0x7FFFFFFFu;
        amax = v > amax && v <= skip_above ? v : amax;
      }
      amax = fp4_warp_max(amax);
    }
    if (lane != 0) continue;
    const float am = mb__cvt_float(amax);
    if (a.rule == FP4_F32)
      ((float *)a.grid)[b] = a.is_static ? a.scale : mb_gq_scale(am, 6.0f);
    else if (a.rule == FP4_MX)
      ((uint8_t *)a.grid)[b] =
          a.is_static ? (uint8_t)a.static_byte
                      : mb__cvt_mx_scale_e8m0(amax, MB_CVT_MX_EMAX_E2M1);
    else /* RNE, saturating to 448; NaN stays NaN */
      ((uint8_t *)a.grid)[b] =
          mb__cvt_f32_to_e4m3(mb_gq_div(mb_gq_div(am, 6.0f), a.scale));
  }
}

template <mb_dtype_t DX>
__global__ void __launch_bounds__(MB_GQ_BLOCK) fp4_elements_kernel(fp4_args a) {
  typedef typename mb_gq_x<DX>::raw R;
  const R *x = (const R *)a.x;
  const int64_t n = a.rows * a.cols;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < a.nbytes;
       t += (int64_t)gridDim.x * blockDim.x) {
    uint8_t byte = 0;
    for (int h = 0; h < 2 && 2 * t + h < n; ++h) {
      const int64_t e = 2 * t + h, r = e / a.cols, c = e % a.cols;
      const int64_t g = r / a.bm * a.gc + c / a.bn;
      float s = fp4_scale(a.grid, a.rule, a.scale, g);
      /* NVFP4: a zero-scale block holds signed zeros, never x / 0 */
      if (a.rule == FP4_NV && s == 0.0f) s = mb__cvt_float(0x7F800000u);
      const float v =
          mb_gq_x<DX>::get(x[a.transpose ? c * a.rows + r : r * a.cols + c]);
      byte |= (uint8_t)(mb__cvt_f32_to_e2m1(mb_gq_div(v, s)) << (4 * h));
    }
    a.q[t] = byte;
  }
}

struct fp4_dq_args {
  const uint8_t *q;
  const void *grid;
  void *x;
  int64_t cols, n, bm, bn, gc;
  int rule;
  float scale; /* NV: S */
};

template <mb_dtype_t DO>
__global__ void __launch_bounds__(MB_GQ_BLOCK)
    fp4_dequantize_kernel(fp4_dq_args a) {
  typedef typename mb_gq_x<DO>::raw R;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = i / a.cols, c = i % a.cols;
    const float s =
        fp4_scale(a.grid, a.rule, a.scale, r / a.bm * a.gc + c / a.bn);
    ((R *)a.x)[i] = mb_gq_x<DO>::put(mb__cvt_e2m1_at(a.q, (size_t)i) * s);
  }
}

/* f(mb_gq_dt<H>{}) for the high-precision dtype hp. */
template <class F>
mb_status_t dispatch_hp(mb_dtype_t hp, F &&f) {
  switch (hp) {
    case MB_DTYPE_F32:
      return f(mb_gq_dt<MB_DTYPE_F32>{});
    case MB_DTYPE_BF16:
      return f(mb_gq_dt<MB_DTYPE_BF16>{});
    case MB_DTYPE_F16:
      return f(mb_gq_dt<MB_DTYPE_F16>{});
    default:
      return MB_ERR_UNSUPPORTED;
  }
}

int rule_of(mb_dtype_t sdt) {
  return sdt == MB_DTYPE_E8M0     ? FP4_MX
         : sdt == MB_DTYPE_F8E4M3 ? FP4_NV
                                  : FP4_F32;
}

}  // namespace

mb_status_t mb_gq_launch_fp4(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  fp4_args a;
  a.x = p->x;
  a.q = (uint8_t *)p->q;
  a.grid = p->grid;
  a.rows = p->rows, a.cols = p->cols, a.bm = p->bm, a.bn = p->bn;
  a.gc = p->gc, a.nblocks = p->gr * p->gc;
  a.nbytes = (p->rows * p->cols + 1) / 2;
  a.transpose = p->transpose;
  a.rule = rule_of(p->sdt);
  a.is_static = p->is_static;
  a.scale = p->static_scale;
  /* resolve() admitted only powers of two for MX's static scale. */
  a.static_byte = a.rule == FP4_MX && p->is_static
                      ? (int)mb__cvt_pow2_to_e8m0(p->static_scale)
                      : -1;
  a.warps_per_block = MB_GQ_BLOCK / env->warp_size;
  if (a.warps_per_block < 1 || (a.rule == FP4_NV && !(a.scale > 0.0f))) {
    env->host->set_error(
        "%s: quantize: FP4 needs a warp that fits the block (and NVFP4 its "
        "per-tensor scale as the static scale)",
        env->backend);
    return MB_ERR_UNSUPPORTED;
  }
  return dispatch_hp(p->xdt, [&](auto dx) -> mb_status_t {
    constexpr mb_dtype_t DX = decltype(dx)::value;
    mb_status_t st = mb_gq_launch(
        env, "quantize (FP4 scales)", fp4_scales_kernel<DX>,
        (size_t)((a.nblocks + a.warps_per_block - 1) / a.warps_per_block), a);
    if (st != MB_OK) return st;
    return mb_gq_launch(env, "quantize (FP4)", fp4_elements_kernel<DX>,
                        (size_t)((a.nbytes + MB_GQ_BLOCK - 1) / MB_GQ_BLOCK),
                        a);
  });
}

mb_status_t mb_gq_launch_fp4_dequant(const mb_gpu_env_t *env,
                                     const mb_op_params_t *p,
                                     const mb_kernel_call_t *call) {
  fp4_dq_args a;
  a.q = (const uint8_t *)call->in[0];
  a.grid = call->in[1];
  a.x = call->out[0];
  a.cols = p->shape[1];
  a.n = p->shape[0] * p->shape[1];
  a.bm = p->scale_a.block[0], a.bn = p->scale_a.block[1];
  a.gc = p->shape[1] / a.bn;
  a.rule = rule_of(p->dtype_scale);
  a.scale = (float)p->scale;
  return dispatch_hp(p->dtype_out, [&](auto dout) -> mb_status_t {
    constexpr mb_dtype_t DO = decltype(dout)::value;
    return mb_gq_launch(env, "dequantize (FP4)", fp4_dequantize_kernel<DO>,
                        (size_t)((a.n + MB_GQ_BLOCK - 1) / MB_GQ_BLOCK), a);
  });
}
