/* The first pass of two-pass quantization, and the scales from it:
 *
 * amax_all the absmax of all of X (tensor-wise dynamic, X or X^T alike):
 *          per-thread, block and one atomic max per block on the f32 bit
 *          pattern (patterns of non-negative floats order as integers, and
 *          max is exact and order-free, so the result is the reference's).
 * strips   block absmax for blocks tall in X's layout (columns of X, rows
 *          of X^T), in registers down strips of X's rows.
 * grid     absmax patterns -> scales in place, or the static scale.
 *
 * (The second pass: apply in gpu_quant_rows.cu, the tiles in
 * gpu_quant_tile.cu.) */
#include "gpu_quant.cuh"

namespace {

/* ---- amax_all ------------------------------------------------------------ */

template <mb_dtype_t DX, int VEC>
__global__ void __launch_bounds__(MB_GQ_BLOCK)
    amax_all_kernel(const void *x, int64_t n, unsigned int *out) {
  __shared__ float scratch[MB_GQ_BLOCK / MB_GPU_WARP];
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t nv = n / VEC;
  float m = 0.0f;
  int64_t v = gid;
  for (; v + 3 * stride < nv; v += 4 * stride) {
    float t[4][VEC];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      mb_gq_load_x<DX, VEC>(x, (v + u * stride) * VEC, t[u]);
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int e = 0; e < VEC; ++e) m = fmaxf(m, fabsf(t[u][e]));
  }
  for (; v < nv; v += stride) {
    float t[VEC];
    mb_gq_load_x<DX, VEC>(x, v * VEC, t);
#pragma unroll
    for (int e = 0; e < VEC; ++e) m = fmaxf(m, fabsf(t[e]));
  }
  for (int64_t e = nv * VEC + gid; e < n; e += stride) {
    float t[1];
    mb_gq_load_x<DX, 1>(x, e, t);
    m = fmaxf(m, fabsf(t[0]));
  }
  m = mb_gpu_block_max(m, scratch);
  if (threadIdx.x == 0 && m > 0.0f) atomicMax(out, mb__cvt_bits(m));
}

template <mb_dtype_t DX, int VEC>
mb_status_t launch_amax_all_t(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  const int64_t n = p->rows * p->cols;
  /* One wave: a block's partial maximum costs an atomic. */
  auto kernel = amax_all_kernel<DX, VEC>;
  const char *what = "quantize (absmax)";
  unsigned grid = 0;
  const mb_status_t st = mb_gpu_grid(
      env, what, kernel, MB_GQ_BLOCK, 0,
      (size_t)mb_gq_ceil_div(mb_gq_ceil_div(n / VEC, 4) + 1, MB_GQ_BLOCK), 1,
      &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(kernel, grid, MB_GQ_BLOCK, 0, (mb_gpu_stream_t)env->stream,
                p->x, n, (unsigned int *)p->grid);
  return mb__gpu_launched(env, what);
}

/* ---- amax_strips ----------------------------------------------------------
 * Block absmax of X walked as stored, for blocks tall in X's layout (X's
 * columns, or X^T's rows: transpose_quantization): a thread takes VEC
 * adjacent columns of a strip of STRIP rows, keeps one maximum a column in
 * registers and folds them into the grid with atomic max whenever it
 * crosses a block row of X and at the strip's end (one atomic per column
 * and strip when the blocks are at least STRIP tall). Consecutive threads
 * take consecutive column vectors of the same rows: coalesced. */
enum { STRIP = 64 };

struct strips_args {
  const void *x;
  unsigned int *grid; /* absmax patterns of Q's blocks */
  int64_t xr, xc;     /* X */
  int64_t xbm, xbn;   /* blocks in X's layout */
  int64_t gc;         /* Q's grid columns */
  int transpose;
  int64_t ncv, items; /* column vectors a row; strips x ncv */
};

template <int VEC>
__device__ __forceinline__ void strips_flush(const strips_args &a, int64_t bi,
                                             int64_t b, float (&m)[VEC]) {
  /* X block (bi, xj) is Q block (bi, xj), or (xj, bi) transposed. */
  if (a.xbn % VEC == 0) { /* the vector lies in one block */
    float mm = m[0];
#pragma unroll
    for (int k = 1; k < VEC; ++k) mm = fmaxf(mm, m[k]);
    const int64_t xj = b / a.xbn;
    if (mm > 0.0f)
      atomicMax(a.grid + (a.transpose ? xj * a.gc + bi : bi * a.gc + xj),
                mb__cvt_bits(mm));
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      const int64_t xj = (b + k) / a.xbn;
      if (m[k] > 0.0f)
        atomicMax(a.grid + (a.transpose ? xj * a.gc + bi : bi * a.gc + xj),
                  mb__cvt_bits(m[k]));
    }
  }
#pragma unroll
  for (int k = 0; k < VEC; ++k) m[k] = 0.0f;
}

template <mb_dtype_t DX, int VEC>
__global__ void __launch_bounds__(MB_GQ_BLOCK) strips_kernel(strips_args a) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t it = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
       it < a.items; it += stride) {
    const int64_t st = it / a.ncv, b = (it - st * a.ncv) * VEC;
    const int64_t a1 = st * STRIP + STRIP < a.xr ? st * STRIP + STRIP : a.xr;
    float m[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) m[k] = 0.0f;
    for (int64_t r = st * STRIP; r < a1;) {
      const int64_t bi = r / a.xbm;
      const int64_t end = (bi + 1) * a.xbm < a1 ? (bi + 1) * a.xbm : a1;
      /* Rows [r, end) of block row bi: no branch in the loop, so the
       * unrolled loads are all in flight together. */
#pragma unroll 4
      for (; r < end; ++r) {
        float v[VEC];
        mb_gq_load_x<DX, VEC>(a.x, r * a.xc + b, v);
#pragma unroll
        for (int k = 0; k < VEC; ++k) m[k] = fmaxf(m[k], fabsf(v[k]));
      }
      strips_flush<VEC>(a, bi, b, m);
    }
  }
}

template <mb_dtype_t DX, int VEC>
mb_status_t launch_strips_t(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  strips_args a;
  a.x = p->x;
  a.grid = (unsigned int *)p->grid;
  a.xr = p->transpose ? p->cols : p->rows;
  a.xc = p->transpose ? p->rows : p->cols;
  a.xbm = p->transpose ? p->bn : p->bm;
  a.xbn = p->transpose ? p->bm : p->bn;
  a.gc = p->gc;
  a.transpose = p->transpose;
  a.ncv = a.xc / VEC;
  a.items = mb_gq_ceil_div(a.xr, STRIP) * a.ncv;
  return mb_gq_launch_n(env, "quantize (absmax strips)", strips_kernel<DX, VEC>,
                        MB_GQ_BLOCK, mb_gq_ceil_div(a.items, MB_GQ_BLOCK), 4,
                        a);
}

/* ---- grid ---------------------------------------------------------------- */

__global__ void __launch_bounds__(MB_GQ_BLOCK)
    grid_kernel(float *grid, int64_t n, float qmax, int is_static, float s) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < n;
       g += stride)
    grid[g] = is_static ? s : mb_gq_scale(grid[g], qmax); /* grid[g]: absmax */
}

}  // namespace

/* ---- launchers ----------------------------------------------------------- */

mb_status_t mb_gq_launch_amax_all(const mb_gpu_env_t *env,
                                  const mb_gq_plan_t *p) {
  const int vec = mb_gq_aligned(p->x, 16);
  return mb_gq_dispatch(p->xdt, p->qdt, [&](auto dx, auto) -> mb_status_t {
    constexpr mb_dtype_t DX = decltype(dx)::value;
    constexpr int VMAX = 16 / (int)sizeof(typename mb_gq_x<DX>::raw);
    return vec ? launch_amax_all_t<DX, VMAX>(env, p)
               : launch_amax_all_t<DX, 1>(env, p);
  });
}

int mb_gq_strips_ok(const mb_gq_plan_t *p) {
  /* Blocks at least a strip tall in X's layout (or whole columns). */
  const int64_t xbm = p->transpose ? p->bn : p->bm;
  const int64_t xr = p->transpose ? p->cols : p->rows;
  return xbm >= STRIP || xbm == xr;
}

mb_status_t mb_gq_launch_strips(const mb_gpu_env_t *env,
                                const mb_gq_plan_t *p) {
  const int64_t xc = p->transpose ? p->rows : p->cols;
  const int vec =
      xc % (16 / mb_gq_hp_size(p->xdt)) == 0 && mb_gq_aligned(p->x, 16);
  return mb_gq_dispatch(p->xdt, p->qdt, [&](auto dx, auto) -> mb_status_t {
    constexpr mb_dtype_t DX = decltype(dx)::value;
    constexpr int VMAX = 16 / (int)sizeof(typename mb_gq_x<DX>::raw);
    return vec ? launch_strips_t<DX, VMAX>(env, p)
               : launch_strips_t<DX, 1>(env, p);
  });
}

mb_status_t mb_gq_launch_grid(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  const int64_t n = p->gr * p->gc;
  const char *what = "quantize (scales)";
  unsigned grid = 0;
  const mb_status_t st =
      mb_gpu_grid(env, what, grid_kernel, MB_GQ_BLOCK, 0,
                  (size_t)mb_gq_ceil_div(n, MB_GQ_BLOCK), 1, &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(grid_kernel, grid, MB_GQ_BLOCK, 0, (mb_gpu_stream_t)env->stream,
                p->grid, n, p->qmax, p->is_static, p->static_scale);
  return mb__gpu_launched(env, what);
}
