/* Quantization kernels that walk X as stored (never transposed; the
 * absmax passes of two-pass quantization: gpu_quant_amax.cu):
 *
 * blocks   dynamic, blocks of up to 32768 elements whose rows are whole
 *          vectors: row-wise, 1xG groups, 1x128, 128x128 (a block taller
 *          than one row needs rows of 64 bytes or more; columns go to the
 *          tiles). A group of L threads (a power of two; L <= warp:
 *          shuffles, else whole warps and a shared-memory step) loads its
 *          block once into registers (up to 32 elements a thread, in
 *          16-byte vectors, consecutive threads on consecutive vectors of a
 *          block row), reduces the absmax and quantizes from the registers:
 *          X is read once. Grid entry s is block s, row-major.
 * flat     one scale for the whole tensor (static, or tensor-wise dynamic
 *          after amax_all): a vectorised grid-stride element loop.
 * apply    scales from the grid (the second pass of two): rows of Q, a
 *          power-of-two number of threads per row, vectors along the row.
 * i4_pairs i4 with an odd row length, where a byte holds the end of one row
 *          and the start of the next (any layout, one byte per thread; a
 *          slow path for an odd case). */
#include "gpu_quant.cuh"

namespace {
/* ---- blocks -------------------------------------------------------------- */

/* Chunks of VEC elements a thread holds: 32 elements in 16-byte vectors,
 * 16 or 8 in narrower ones (the fallbacks, whose per-chunk addresses take
 * registers too); within the 64 registers of a 1024-thread block. */
__host__ __device__ constexpr int blocks_kmax(int vec) {
  return vec >= 4 ? 32 / vec : 8;
}

struct blocks_args {
  const void *x;
  void *q;
  float *grid;
  int64_t nseg;     /* blocks (grid entries), gr x gc */
  int64_t gc, cols; /* grid columns; elements a row */
  int bm, bn;       /* bm * bn <= 32768 */
  int nchunks;      /* bm * bn / VEC chunks a block */
  int cpr;          /* bn / VEC chunks a block row */
  mb_gq_divisor_t cpr_div;
  int lanes; /* L: threads a block, a power of two */
  int cpl;   /* chunks a thread, <= blocks_kmax(VEC) */
  float qmax;
};

template <mb_dtype_t DX, mb_dtype_t DQ, int VEC>
__global__ void __launch_bounds__(1024) blocks_kernel(blocks_args a) {
  constexpr int KMAX = blocks_kmax(VEC);
  __shared__ float red[1024 / MB_GPU_WARP];
  const int L = a.lanes, T = (int)blockDim.x;
  const int g = (int)threadIdx.x / L, gl = (int)threadIdx.x % L;
  const int groups = T / L;
  const int warp = (int)threadIdx.x / MB_GPU_WARP;
  /* CTA-uniform loop (the __syncthreads below): every group runs it the
   * same number of times, idle ones with valid == false. */
  for (int64_t s0 = (int64_t)blockIdx.x * groups; s0 < a.nseg;
       s0 += (int64_t)gridDim.x * groups) {
    const int64_t s = s0 + g;
    const bool valid = s < a.nseg;
    /* The block's first element. bm == 1: blocks are back to back. */
    int64_t base = s * a.bn;
    if (a.bm > 1) {
      const int64_t bi = s / a.gc;
      base = bi * a.bm * a.cols + (s - bi * a.gc) * a.bn;
    }
    float v[KMAX][VEC];
    float m = 0.0f;
#pragma unroll
    for (int k = 0; k < KMAX; ++k) {
      const int c = gl + k * L;
      if (valid && k < a.cpl && c < a.nchunks) {
        const int r = (int)mb_gq_quot(a.cpr_div, (uint32_t)c);
        mb_gq_load_x<DX, VEC>(a.x, base + r * a.cols + (c - r * a.cpr) * VEC,
                              v[k]);
#pragma unroll
        for (int e = 0; e < VEC; ++e) m = fmaxf(m, fabsf(v[k][e]));
      }
    }
    if (L <= MB_GPU_WARP) {
      /* Groups are aligned runs of L lanes: xor offsets < L stay inside. */
      for (int o = L / 2; o > 0; o >>= 1) m = fmaxf(m, mb_gpu_shfl_xor(m, o));
    } else {
      m = mb_gpu_warp_max(m);
      if ((int)threadIdx.x % MB_GPU_WARP == 0) red[warp] = m;
      __syncthreads();
      const int per = L / MB_GPU_WARP, w0 = g * per;
      m = 0.0f;
      for (int w = 0; w < per; ++w) m = fmaxf(m, red[w0 + w]);
      __syncthreads(); /* red[] is rewritten for the next block */
    }
    const float sc = mb_gq_scale(m, a.qmax);
    if (valid && gl == 0) a.grid[s] = sc;
#pragma unroll
    for (int k = 0; k < KMAX; ++k) {
      const int c = gl + k * L;
      if (valid && k < a.cpl && c < a.nchunks) {
        const int r = (int)mb_gq_quot(a.cpr_div, (uint32_t)c);
        float y[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) y[e] = mb_gq_div(v[k][e], sc);
        mb_gq_store_q<DQ, VEC>(a.q, base + r * a.cols + (c - r * a.cpr) * VEC,
                               y);
      }
    }
  }
}

/* How the blocks kernel would run a plan; vec == 0: it cannot. */
struct blocks_cfg {
  int vec, lanes, cpl, nchunks, threads;
};

blocks_cfg blocks_config(const mb_gq_plan_t *p) {
  blocks_cfg c = {0, 0, 0, 0, 0};
  const int sx = mb_gq_hp_size(p->xdt);
  const int i4 = p->qdt == MB_DTYPE_I4, vmax = 16 / sx;
  if (p->transpose || p->is_static || p->bm * p->bn > 32768) return c;
  /* Taller blocks are read a block row at a time: rows of 64 bytes at
   * least, or the tiles' coalescing serves better (columns). */
  if (p->bm > 1 && p->bn * sx < 64) return c;
  /* A chunk never crosses a block row (bn % vec == 0), so every row and
   * chunk starts on a vector (and an i4 byte). */
  if (p->bn % vmax == 0 && mb_gq_aligned(p->x, 16) &&
      mb_gq_aligned(p->q, (size_t)(i4 ? vmax / 2 : vmax)))
    c.vec = vmax;
  else if (!i4)
    c.vec = 1;
  else if (p->bn % 2 == 0 && mb_gq_aligned(p->x, (size_t)(2 * sx)))
    c.vec = 2; /* i4 stores whole bytes: two elements at least */
  else
    return c;
  c.nchunks = (int)(p->bm * p->bn / c.vec);
  /* About four chunks (64 bytes of bf16) a thread, so each has four loads
   * in flight (a 1x128 bf16 group: 4 threads; 1x4096: 128 threads). */
  c.lanes = mb_gq_pow2_ceil(mb_gq_ceil_div(c.nchunks, 4));
  if (c.lanes > 1024) c.lanes = 1024;
  c.cpl = (int)mb_gq_ceil_div(c.nchunks, c.lanes);
  if (c.cpl > blocks_kmax(c.vec)) {
    c.vec = 0;
    return c;
  }
  c.threads = c.lanes > MB_GQ_BLOCK ? c.lanes : MB_GQ_BLOCK;
  return c;
}

template <mb_dtype_t DX, mb_dtype_t DQ, int VEC>
mb_status_t launch_blocks_t(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                            const blocks_cfg &c) {
  blocks_args a;
  a.x = p->x;
  a.q = p->q;
  a.grid = p->grid;
  a.nseg = p->gr * p->gc;
  a.gc = p->gc;
  a.cols = p->cols;
  a.bm = (int)p->bm;
  a.bn = (int)p->bn;
  a.nchunks = c.nchunks;
  a.cpr = (int)(p->bn / VEC);
  a.cpr_div = mb_gq_divisor((uint32_t)a.cpr);
  a.lanes = c.lanes;
  a.cpl = c.cpl;
  a.qmax = p->qmax;
  return mb_gq_launch_n(env, "quantize (blocks)", blocks_kernel<DX, DQ, VEC>,
                        c.threads, mb_gq_ceil_div(a.nseg, c.threads / c.lanes),
                        4, a);
}

/* ---- flat ---------------------------------------------------------------- */

struct flat_args {
  const void *x;
  void *q;
  float *grid;
  int64_t n, ngrid; /* ngrid > 0: static, fill the grid with s */
  const float *sp;  /* the scale on the device, or NULL: s */
  float s;
};

enum { UNROLL = 2 };

template <mb_dtype_t DX, mb_dtype_t DQ, int VEC>
__global__ void __launch_bounds__(MB_GQ_BLOCK) flat_kernel(flat_args a) {
  const float s = a.sp ? *a.sp : a.s;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t g = gid; g < a.ngrid; g += stride) a.grid[g] = s;
  const int64_t nv = a.n / VEC;
  int64_t v = gid;
  for (; v + (UNROLL - 1) * stride < nv; v += UNROLL * stride) {
    float x[UNROLL][VEC];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      mb_gq_load_x<DX, VEC>(a.x, (v + u * stride) * VEC, x[u]);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) x[u][e] = mb_gq_div(x[u][e], s);
      mb_gq_store_q<DQ, VEC>(a.q, (v + u * stride) * VEC, x[u]);
    }
  }
  for (; v < nv; v += stride) {
    float x[VEC];
    mb_gq_load_x<DX, VEC>(a.x, v * VEC, x);
#pragma unroll
    for (int e = 0; e < VEC; ++e) x[e] = mb_gq_div(x[e], s);
    mb_gq_store_q<DQ, VEC>(a.q, v * VEC, x);
  }
  /* The n % VEC last elements (VEC is even for i4, so they start on a
   * byte), by one thread. */
  if (gid == 0) {
    for (int64_t e = nv * VEC; e < a.n; ++e) {
      float x[1];
      mb_gq_load_x<DX, 1>(a.x, e, x);
      const uint32_t b = mb_gq_q<DQ>::enc(mb_gq_div(x[0], s));
      uint8_t *q = (uint8_t *)a.q;
      if constexpr (mb_gq_q<DQ>::per_byte == 1) {
        q[e] = (uint8_t)b;
      } else if (e % 2 == 0) {
        /* Low nibble; an element past the end leaves the high one be. */
        q[e / 2] = (uint8_t)((q[e / 2] & 0xF0u) | b);
      } else {
        q[e / 2] = (uint8_t)((q[e / 2] & 0x0Fu) | (b << 4));
      }
    }
  }
}

/* Vector width for element loops: the widest 16-byte vector when both
 * pointers allow it, else 1 (2 for i4: whole bytes); 0: none. */
int flat_vec(const mb_gq_plan_t *p) {
  const int sx = mb_gq_hp_size(p->xdt), vmax = 16 / sx;
  const int i4 = p->qdt == MB_DTYPE_I4;
  if (mb_gq_aligned(p->x, 16) &&
      mb_gq_aligned(p->q, (size_t)(i4 ? vmax / 2 : vmax)))
    return vmax;
  if (!i4) return 1;
  return mb_gq_aligned(p->x, (size_t)(2 * sx)) ? 2 : 0;
}

template <mb_dtype_t DX, mb_dtype_t DQ, int VEC>
mb_status_t launch_flat_t(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                          const float *sp) {
  const int64_t n = p->rows * p->cols;
  flat_args a = {p->x, p->q,           p->grid, n, sp ? 0 : p->gr * p->gc,
                 sp,   p->static_scale};
  return mb_gq_launch_n(
      env, "quantize (flat)", flat_kernel<DX, DQ, VEC>, MB_GQ_BLOCK,
      mb_gq_ceil_div(mb_gq_ceil_div(n / VEC, UNROLL), MB_GQ_BLOCK), 2, a);
}

/* ---- apply --------------------------------------------------------------- */

struct apply_args {
  mb_gq_rows_t r;
  const void *x;
  void *q;
};

/* q[row + j, + VEC) from the loaded x values v (divided in place). */
template <mb_dtype_t DQ, int VEC>
__device__ __forceinline__ void apply_store(const apply_args &a,
                                            const float *srow, int64_t row,
                                            int j, float (&v)[VEC]) {
  if (a.r.per_chunk) {
    const float s = mb_gq_row_scale(a.r, srow, j);
#pragma unroll
    for (int e = 0; e < VEC; ++e) v[e] = mb_gq_div(v[e], s);
  } else {
#pragma unroll
    for (int e = 0; e < VEC; ++e)
      v[e] = mb_gq_div(v[e], mb_gq_row_scale(a.r, srow, j + e));
  }
  mb_gq_store_q<DQ, VEC>(a.q, row + j, v);
}

template <mb_dtype_t DX, mb_dtype_t DQ, int VEC>
__global__ void __launch_bounds__(MB_GQ_BLOCK) apply_kernel(apply_args a) {
  mb_gq_walk_rows<VEC>(
      a.r, [&](int64_t e, float(&v)[VEC]) { mb_gq_load_x<DX, VEC>(a.x, e, v); },
      [&](const float *srow, int64_t row, int j, float(&v)[VEC]) {
        apply_store<DQ, VEC>(a, srow, row, j, v);
      });
}

/* Vector width for apply: rows must start on a vector (cols % VEC == 0);
 * 0 when it cannot (i4 with odd cols or misaligned X). */
int apply_vec(const mb_gq_plan_t *p) {
  const int sx = mb_gq_hp_size(p->xdt), vmax = 16 / sx;
  const int i4 = p->qdt == MB_DTYPE_I4;
  if (p->transpose) return 0;
  if (p->cols % vmax == 0 && mb_gq_aligned(p->x, 16) &&
      mb_gq_aligned(p->q, (size_t)(i4 ? vmax / 2 : vmax)))
    return vmax;
  if (!i4) return 1;
  return p->cols % 2 == 0 && mb_gq_aligned(p->x, (size_t)(2 * sx)) ? 2 : 0;
}

template <mb_dtype_t DX, mb_dtype_t DQ, int VEC>
mb_status_t launch_apply_t(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  apply_args a;
  a.x = p->x;
  a.q = p->q;
  a.r = mb_gq_rows_plan(p->grid, p->rows, p->cols, p->bm, p->bn, VEC);
  return mb_gq_launch_n(env, "quantize (apply scales)",
                        apply_kernel<DX, DQ, VEC>, MB_GQ_BLOCK, a.r.nrg, 4, a);
}

/* ---- i4_pairs ------------------------------------------------------------ */

struct pairs_args {
  const void *x;
  uint8_t *q;
  const float *grid;
  int64_t rows, cols, bm, bn, gc;
  int transpose;
};

template <mb_dtype_t DX>
__device__ __forceinline__ uint32_t pairs_one(const pairs_args &a, int64_t e) {
  const int64_t i = e / a.cols, j = e - i * a.cols;
  const int64_t xi = a.transpose ? j * a.rows + i : e;
  float v[1];
  mb_gq_load_x<DX, 1>(a.x, xi, v);
  const float s = a.grid[i / a.bm * a.gc + j / a.bn];
  return mb_gq_q<MB_DTYPE_I4>::enc(mb_gq_div(v[0], s));
}

template <mb_dtype_t DX>
__global__ void __launch_bounds__(MB_GQ_BLOCK) i4_pairs_kernel(pairs_args a) {
  const int64_t n = a.rows * a.cols, bytes = (n + 1) / 2;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < bytes;
       b += stride) {
    const uint32_t lo = pairs_one<DX>(a, 2 * b);
    if (2 * b + 1 < n)
      a.q[b] = (uint8_t)(lo | (pairs_one<DX>(a, 2 * b + 1) << 4));
    else /* the last element of an odd count: the high nibble is not ours */
      a.q[b] = (uint8_t)((a.q[b] & 0xF0u) | lo);
  }
}

}  // namespace

/* ---- launchers ----------------------------------------------------------- */

int mb_gq_blocks_ok(const mb_gq_plan_t *p) {
  return blocks_config(p).vec != 0;
}

mb_status_t mb_gq_launch_blocks(const mb_gpu_env_t *env,
                                const mb_gq_plan_t *p) {
  const blocks_cfg c = blocks_config(p);
  return mb_gq_dispatch(p->xdt, p->qdt, [&](auto dx, auto dq) -> mb_status_t {
    constexpr mb_dtype_t DX = decltype(dx)::value, DQ = decltype(dq)::value;
    constexpr int VMAX = 16 / (int)sizeof(typename mb_gq_x<DX>::raw);
    if (c.vec == VMAX) return launch_blocks_t<DX, DQ, VMAX>(env, p, c);
    if constexpr (DQ == MB_DTYPE_I4) {
      if (c.vec == 2) return launch_blocks_t<DX, DQ, 2>(env, p, c);
    } else {
      if (c.vec == 1) return launch_blocks_t<DX, DQ, 1>(env, p, c);
    }
    return MB_ERR_UNSUPPORTED;
  });
}

int mb_gq_flat_ok(const mb_gq_plan_t *p) {
  return !p->transpose && flat_vec(p);
}

mb_status_t mb_gq_launch_flat(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                              const float *sp) {
  const int vec = flat_vec(p);
  return mb_gq_dispatch(p->xdt, p->qdt, [&](auto dx, auto dq) -> mb_status_t {
    constexpr mb_dtype_t DX = decltype(dx)::value, DQ = decltype(dq)::value;
    constexpr int VMAX = 16 / (int)sizeof(typename mb_gq_x<DX>::raw);
    if (vec == VMAX) return launch_flat_t<DX, DQ, VMAX>(env, p, sp);
    if constexpr (DQ == MB_DTYPE_I4) {
      if (vec == 2) return launch_flat_t<DX, DQ, 2>(env, p, sp);
    } else {
      if (vec == 1) return launch_flat_t<DX, DQ, 1>(env, p, sp);
    }
    return MB_ERR_UNSUPPORTED;
  });
}

int mb_gq_apply_ok(const mb_gq_plan_t *p) {
  return apply_vec(p) != 0;
}

mb_status_t mb_gq_launch_apply(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  const int vec = apply_vec(p);
  return mb_gq_dispatch(p->xdt, p->qdt, [&](auto dx, auto dq) -> mb_status_t {
    constexpr mb_dtype_t DX = decltype(dx)::value, DQ = decltype(dq)::value;
    constexpr int VMAX = 16 / (int)sizeof(typename mb_gq_x<DX>::raw);
    if (vec == VMAX) return launch_apply_t<DX, DQ, VMAX>(env, p);
    if constexpr (DQ == MB_DTYPE_I4) {
      if (vec == 2) return launch_apply_t<DX, DQ, 2>(env, p);
    } else {
      if (vec == 1) return launch_apply_t<DX, DQ, 1>(env, p);
    }
    return MB_ERR_UNSUPPORTED;
  });
}

mb_status_t mb_gq_launch_i4_pairs(const mb_gpu_env_t *env,
                                  const mb_gq_plan_t *p) {
  const pairs_args a = {p->x,  (uint8_t *)p->q, p->grid, p->rows,     p->cols,
                        p->bm, p->bn,           p->gc,   p->transpose};
  const int64_t items =
      mb_gq_ceil_div((p->rows * p->cols + 1) / 2, MB_GQ_BLOCK);
  const char *what = "quantize (i4 pairs)";
  switch (p->xdt) {
    case MB_DTYPE_F32:
      return mb_gq_launch_n(env, what, i4_pairs_kernel<MB_DTYPE_F32>,
                            MB_GQ_BLOCK, items, 4, a);
    case MB_DTYPE_BF16:
      return mb_gq_launch_n(env, what, i4_pairs_kernel<MB_DTYPE_BF16>,
                            MB_GQ_BLOCK, items, 4, a);
    case MB_DTYPE_F16:
      return mb_gq_launch_n(env, what, i4_pairs_kernel<MB_DTYPE_F16>,
                            MB_GQ_BLOCK, items, 4, a);
    default:
      return MB_ERR_UNSUPPORTED;
  }
}
