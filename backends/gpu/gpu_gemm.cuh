/* Private to the GEMM's shared kernel (gpu_gemm.cu, gpu_gemm_qi.cu): the
 * tiled SIMT kernel, its operand loaders and its epilogue.
 *
 *   D = alpha * sum_k (a_ik sa(i,k)) (b_kj sb(k,j)) + beta * D
 *
 * Tiling. One block of 256 threads computes a 64 x 64 tile of D, walking K
 * 32 at a time; each thread holds a 4 x 4 register tile (rows ty*4.., cols
 * tx*4.., ty, tx in 0..15). Why these numbers: a 64 x 64 tile keeps the
 * work wasted on ragged edges and small GEMMs low and gives mid-size GEMMs
 * enough blocks to fill the device; 4 x 4 a thread is 64 FMAs for every
 * eight 16-byte shared-memory reads (4 of A, 4 of B) and keeps the kernel
 * near 80 registers, three blocks an SM (8 x 8 would halve the
 * shared-memory traffic but needs a 128 x 128 tile for 256 threads); K
 * steps of 32 need half the barriers of 16. Shared memory holds both tiles
 * as f32, twice (35 KiB, no opt-in needed): the next tile is loaded from
 * global memory into registers while the current one is multiplied, then
 * stored into the other buffer, one barrier per K step. Grids and blocks
 * are one-dimensional (block b is tile row b / tiles_n, column
 * b % tiles_n, so neighbouring blocks share rows of A), and nothing depends
 * on the warp size: no shuffles, only barriers.
 *
 * Shared-memory layouts: A as As[i][k] (rows of 32 + 4 floats), B as
 * Bs[k][j] (rows of 64 + 4), so a thread reads its 4 rows of A and its 4
 * columns of B as 16-byte vectors, without bank conflicts. Global loads are
 * one element per thread and step, lanes running along whichever dimension
 * is contiguous in memory (mb_gg_lanes). Elements past M, N or K load as 0.
 *
 * Numbers. Every operand is converted to f32 as it is loaded (exact for
 * f32, bf16, f16, fp8, fp4, i8, i4) and multiplied with f32 FMAs: no tensor
 * or matrix cores, so fp8 and fp4 are emulated like the CPU backend's. Scales
 * that do not vary along K (tensor, row, column) are applied in the epilogue;
 * scales that do (1 x 128 blocks, 2-D blocks, groups, 1 x 32) multiply each
 * element in f32 as it is loaded, so one sum runs over the whole of K.
 * i8 x i8 stays exact: products of i8 values are integers below 2^14 and up
 * to 1024 of them sum exactly in f32, so every 1024 steps (and at every
 * change of scale block) the f32 sums move into i32 sums; those are D for
 * i32 output, or are folded into the f32 result with their block's scales,
 * ((float)sum * sa) * sb, as the CPU backend does. The output is alpha
 * times the result plus beta times D (D is read only when beta != 0),
 * rounded once, to nearest even. */
#ifndef MB_GPU_GEMM_CUH
#define MB_GPU_GEMM_CUH

#include "gpu_quant.cuh"

/* ---- the launch ------------------------------------------------------- */

constexpr int MB_GG_BM = 64; /* tile rows (M) */
constexpr int MB_GG_BN = 64; /* tile columns (N) */
constexpr int MB_GG_BK = 32; /* K step */
constexpr int MB_GG_T = 4;   /* register tile: MB_GG_T x MB_GG_T */
constexpr int MB_GG_THREADS = 256;
constexpr int MB_GG_AS = MB_GG_BK + 4; /* row length of As (floats) */
constexpr int MB_GG_BS = MB_GG_BN + 4; /* row length of Bs */
/* i8: how many products sum exactly in f32 before they move to i32 */
constexpr int64_t MB_GG_I8_SPAN = 1024;

/* Floats of one stage of shared memory (A tile, then B tile); two stages. */
constexpr int MB_GG_STAGE_FLOATS = MB_GG_BM * MB_GG_AS + MB_GG_BK * MB_GG_BS;
constexpr size_t MB_GG_SMEM_BYTES = 2 * MB_GG_STAGE_FLOATS * sizeof(float);

/* One operand as the kernel reads it: element (o, k) — o a row of A or a
 * column of B — at p[o so + k sk], its scale at grid[(o / bo) g_so +
 * (k / bk) g_sk]. */
typedef struct mb_gg_operand {
  const void *p;
  int64_t so, sk;
  int64_t n_o;      /* M for A, N for B */
  const void *grid; /* NULL: not scaled; f32, or e8m0 / e4m3 bytes */
  int e8m0;         /* params.dtype_scale e8m0 (MXFP8, MXFP4): byte scales */
  float nv_s;       /* NVFP4: e4m3 byte scales times this S; else 0 */
  int64_t g_so, g_sk;
  mb_gq_divisor_t bo, bk;
  int pre; /* the scale varies along K: applied to each element at load */
  int kc;  /* K is the contiguous dimension in memory (sk == 1) */
} mb_gg_operand_t;

typedef struct mb_gg_args {
  mb_gg_operand_t a, b;
  void *d;
  mb_dtype_t dout;
  int64_t m, n, k;
  int64_t tiles_n;
  float alpha, beta;
  /* i8 x i8: the K-blocks of the scales (K when none varies along K). */
  int64_t kq;
} mb_gg_args_t;

/* Enqueues the kernel for A of dtype da and B of dtype db on env->stream:
 * MB_OK or mb__gpu_launched's error; MB_ERR_UNSUPPORTED (with the error
 * set) for a pair it has no instance of. */
mb_status_t mb_gg_launch(const mb_gpu_env_t *env, mb_dtype_t da, mb_dtype_t db,
                         const mb_gg_args_t *args);

/* The kernel arguments for params p (A and B in p->dtype, p->dtype_b: the
 * quantized ones for quantize-inputs), operands a, b, their scale grids
 * (ignored for a side without scales) and D. */
void mb_gg_plan(const mb_op_params_t *p, const void *a, const void *b,
                const void *ga, const void *gb, void *d, mb_gg_args_t *g);

/* MB_OK when the kernel computes params p (quantize-inputs included, but
 * not whether the backend lends it scratch), else MB_ERR_UNSUPPORTED with
 * a static reason in *why. */
mb_status_t mb_gg_check(const mb_op_params_t *p, const char **why);

/* "<backend>: <why>" as the thread's error; returns st. */
mb_status_t mb_gg_fail(const mb_gpu_env_t *env, mb_status_t st,
                       const char *why);

/* ---- element access ----------------------------------------------------- */

/* Element i of a tensor of dtype D as f32 (exact). */
template <mb_dtype_t D>
struct mb_gg_elem {
  static __device__ __forceinline__ float get(const void *p, int64_t i) {
    if constexpr (D == MB_DTYPE_I4)
      return (float)mb__cvt_i4_at((const uint8_t *)p, (size_t)i);
    else if constexpr (D == MB_DTYPE_F4E2M1)
      return mb__cvt_e2m1_at((const uint8_t *)p, (size_t)i);
    else if constexpr (D == MB_DTYPE_F32 || D == MB_DTYPE_BF16 ||
                       D == MB_DTYPE_F16)
      return mb_gq_x<D>::get(((const typename mb_gq_x<D>::raw *)p)[i]);
    else
      return mb_gq_q<D>::dec(((const uint8_t *)p)[i]);
  }
};

/* The scale of element (o, k) of an operand: an f32, an e8m0 byte decoded
 * exactly, or NVFP4's e4m3 byte times S, fl32(s_b S) as dequantize's (the
 * branches are the same for every thread). */
__device__ __forceinline__ float mb_gg_scale(const mb_gg_operand_t &x,
                                             int64_t o, int64_t k) {
  const int64_t i = (int64_t)mb_gq_quot(x.bo, (uint32_t)o) * x.g_so +
                    (int64_t)mb_gq_quot(x.bk, (uint32_t)k) * x.g_sk;
  if (x.nv_s > 0.0f)
    return mb__cvt_e4m3_to_f32(((const uint8_t *)x.grid)[i]) * x.nv_s;
  return x.e8m0 ? mb__cvt_e8m0_to_f32(((const uint8_t *)x.grid)[i])
                : ((const float *)x.grid)[i];
}

/* ---- the tile loop ------------------------------------------------------ */

/* How the 256 threads load an operand's tile from global memory, one
 * element each per step, lanes along the dimension contiguous in memory:
 * K (KC: A, or B with trans_b), M (A with trans_a) or N (B). 2^LG lanes
 * along it, 2^LQ groups of them to cover it: along K 8 lanes, 4 groups
 * (32 contiguous bytes of f32 a row and instruction), along M 8 lanes, 8
 * groups, along N 64 lanes. Groups of 8 lanes keep the transposing stores
 * into shared memory free of bank conflicts (2-way for A untransposed),
 * and few rows a thread keep its addresses in few registers. LG and LQ are
 * compile-time: with run-time shifts the compiler keeps every element's
 * offsets in registers (over 200 of them). */
template <bool IS_B, bool KC>
struct mb_gg_lanes {
  static constexpr int LG = KC ? 3 : IS_B ? 6 : 3;
  static constexpr int LQ = KC ? 2 : IS_B ? 0 : 3;
  /* Element e of thread t: c along the contiguous dimension, r along the
   * other; (o, k) is (r, c) when KC, else (c, r). */
  static __device__ __forceinline__ int c(int e) {
    return ((int)threadIdx.x & ((1 << LG) - 1)) + ((e & ((1 << LQ) - 1)) << LG);
  }
  static __device__ __forceinline__ int r(int e) {
    return ((int)threadIdx.x >> LG) + ((e >> LQ) << (8 - LG));
  }
};

/* Loads this thread's elements of an operand's tile at (o0, k0) into v, 0
 * past the operand's edges; scaled by their scales when those vary along
 * K. Element (c, r) is at the tile's address plus r ld + c. */
template <mb_dtype_t D, bool IS_B, bool KC>
__device__ __forceinline__ void mb_gg_load(const mb_gg_operand_t &x, int64_t o0,
                                           int64_t k0, int64_t kdim,
                                           float (&v)[8]) {
  typedef mb_gg_lanes<IS_B, KC> L;
  const int64_t ld = KC ? x.so : x.sk;
  const int64_t base = o0 * x.so + k0 * x.sk;
  const int64_t c_lim = KC ? kdim - k0 : x.n_o - o0;
  const int64_t r_lim = KC ? x.n_o - o0 : kdim - k0;
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const int c = L::c(e), r = L::r(e);
    float f = 0.0f;
    if (c < c_lim && r < r_lim) {
      f = mb_gg_elem<D>::get(x.p, base + r * ld + c);
      if (x.pre) f *= mb_gg_scale(x, o0 + (KC ? r : c), k0 + (KC ? c : r));
    }
    v[e] = f;
  }
}

/* Stores what mb_gg_load loaded: element (o, k) at s[o SO + k SK]. */
template <bool IS_B, bool KC, int SO, int SK>
__device__ __forceinline__ void mb_gg_store(float *s, const float (&v)[8]) {
  typedef mb_gg_lanes<IS_B, KC> L;
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const int c = L::c(e), r = L::r(e);
    s[(KC ? r : c) * SO + (KC ? c : r) * SK] = v[e];
  }
}

typedef float mb_gg_tile_t[MB_GG_T][MB_GG_T];

/* acc += the tile's K steps [0, MB_GG_BK): four at a time, A's 4 rows and
 * B's 4 columns read as 16-byte vectors. */
__device__ __forceinline__ void mb_gg_mma_full(const float *as, const float *bs,
                                               int ty, int tx,
                                               mb_gg_tile_t &acc) {
#pragma unroll 2
  for (int k = 0; k < MB_GG_BK; k += 4) {
    float a[MB_GG_T][4], b[4][MB_GG_T];
#pragma unroll
    for (int r = 0; r < MB_GG_T; ++r)
      mb_gq_ld<float, 4>(as + (ty * MB_GG_T + r) * MB_GG_AS + k, a[r]);
#pragma unroll
    for (int q = 0; q < 4; ++q)
      mb_gq_ld<float, MB_GG_T>(bs + (k + q) * MB_GG_BS + tx * MB_GG_T, b[q]);
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int r = 0; r < MB_GG_T; ++r)
#pragma unroll
        for (int c = 0; c < MB_GG_T; ++c) acc[r][c] += a[r][q] * b[q][c];
  }
}

/* acc += K steps [kb, ke) of the tile, one at a time (i8's partial spans). */
__device__ __forceinline__ void mb_gg_mma_range(const float *as,
                                                const float *bs, int ty, int tx,
                                                int kb, int ke,
                                                mb_gg_tile_t &acc) {
  for (int k = kb; k < ke; ++k) {
    float a[MB_GG_T], b[MB_GG_T];
#pragma unroll
    for (int r = 0; r < MB_GG_T; ++r)
      a[r] = as[(ty * MB_GG_T + r) * MB_GG_AS + k];
    mb_gq_ld<float, MB_GG_T>(bs + k * MB_GG_BS + tx * MB_GG_T, b);
#pragma unroll
    for (int r = 0; r < MB_GG_T; ++r)
#pragma unroll
      for (int c = 0; c < MB_GG_T; ++c) acc[r][c] += a[r] * b[c];
  }
}

/* i8 x i8: the exact f32 span sums f, the i32 sums of the current scale
 * block, the f32 result, and the K positions of the next event. */
struct mb_gg_i8_state {
  mb_gg_tile_t f, res;
  int32_t sum[MB_GG_T][MB_GG_T];
  int64_t next_fold, next_event;
};

/* At a K position where a span or a scale block ends: f moves into sum
 * (exact: integers below 2^24); at a block's end, sum is folded into res
 * with that block's scales unless the output is i32 (unscaled: sum is D). */
__device__ __forceinline__ void mb_gg_i8_event(const mb_gg_args_t &g,
                                               int64_t i0, int64_t j0,
                                               mb_gg_i8_state &s) {
#pragma unroll
  for (int r = 0; r < MB_GG_T; ++r)
#pragma unroll
    for (int c = 0; c < MB_GG_T; ++c) {
      s.sum[r][c] += (int32_t)s.f[r][c];
      s.f[r][c] = 0.0f;
    }
  if (s.next_event == s.next_fold && g.dout != MB_DTYPE_I32) {
    const int64_t kb = s.next_fold - g.kq; /* the block's first K */
    float sa[MB_GG_T], sb[MB_GG_T];
#pragma unroll
    for (int r = 0; r < MB_GG_T; ++r) {
      const int64_t i = i0 + r < g.m ? i0 + r : g.m - 1;
      sa[r] = g.a.grid ? mb_gg_scale(g.a, i, kb) : 1.0f;
    }
#pragma unroll
    for (int c = 0; c < MB_GG_T; ++c) {
      const int64_t j = j0 + c < g.n ? j0 + c : g.n - 1;
      sb[c] = g.b.grid ? mb_gg_scale(g.b, j, kb) : 1.0f;
    }
#pragma unroll
    for (int r = 0; r < MB_GG_T; ++r)
#pragma unroll
      for (int c = 0; c < MB_GG_T; ++c) {
        s.res[r][c] += (float)s.sum[r][c] * sa[r] * sb[c];
        s.sum[r][c] = 0;
      }
  }
  if (s.next_event == s.next_fold) s.next_fold += g.kq;
  const int64_t span = s.next_event + MB_GG_I8_SPAN;
  s.next_event = span < s.next_fold ? span : s.next_fold;
}

/* i8: the tile's K steps at k0 up to K, cut at the events (the last of
 * them at K: K blocks divide K). Steps past K are zeros, and no event may
 * fall there (it would read scales past the grid). */
__device__ __forceinline__ void mb_gg_i8_tile(const mb_gg_args_t &g,
                                              const float *as, const float *bs,
                                              int ty, int tx, int64_t k0,
                                              int64_t i0, int64_t j0,
                                              mb_gg_i8_state &s) {
  const int kt = g.k - k0 < MB_GG_BK ? (int)(g.k - k0) : MB_GG_BK;
  int kk = 0;
  while (kk < kt) {
    const int64_t to_event = s.next_event - k0;
    const int end = to_event < kt ? (int)to_event : kt;
    if (kk == 0 && end == MB_GG_BK)
      mb_gg_mma_full(as, bs, ty, tx, s.f);
    else
      mb_gg_mma_range(as, bs, ty, tx, kk, end, s.f);
    kk = end;
    if (k0 + kk == s.next_event) mb_gg_i8_event(g, i0, j0, s);
  }
}

/* D's elements of this thread's register tile: v = alpha (v sa) sb +
 * beta D, rounded once. With `scales`, the scales constant along K are
 * applied here (the i8 path has applied every scale already). */
__device__ __forceinline__ void mb_gg_epilogue(const mb_gg_args_t &g,
                                               int64_t i0, int64_t j0,
                                               const mb_gg_tile_t &acc,
                                               bool scales) {
  const bool sa_here = scales && g.a.grid && !g.a.pre;
  const bool sb_here = scales && g.b.grid && !g.b.pre;
#pragma unroll
  for (int r = 0; r < MB_GG_T; ++r) {
    const int64_t i = i0 + r;
    if (i >= g.m) break;
    const float sa = sa_here ? mb_gg_scale(g.a, i, 0) : 1.0f;
#pragma unroll
    for (int c = 0; c < MB_GG_T; ++c) {
      const int64_t j = j0 + c;
      if (j >= g.n) break;
      float v = acc[r][c];
      if (sa_here) v *= sa;
      if (sb_here) v *= mb_gg_scale(g.b, j, 0);
      v *= g.alpha;
      const int64_t e = i * g.n + j;
      if (g.beta != 0.0f) v += g.beta * mb_gpu_load(g.dout, g.d, (size_t)e);
      mb_gpu_store(g.dout, g.d, (size_t)e, v);
    }
  }
}

/* i32 output of i8 x i8: the exact sums as they are. */
__device__ __forceinline__ void mb_gg_store_i32(
    const mb_gg_args_t &g, int64_t i0, int64_t j0,
    const int32_t (&sum)[MB_GG_T][MB_GG_T]) {
#pragma unroll
  for (int r = 0; r < MB_GG_T; ++r) {
    if (i0 + r >= g.m) break;
#pragma unroll
    for (int c = 0; c < MB_GG_T; ++c)
      if (j0 + c < g.n) ((int32_t *)g.d)[(i0 + r) * g.n + j0 + c] = sum[r][c];
  }
}

/* The K loop of the block's tile at (m0, n0): loads the first K step into
 * shared memory, then for each step multiplies it (mma(as, bs, k0)) while
 * the next one is on its way from global memory into registers. TA, TB:
 * trans_a, trans_b. */
template <mb_dtype_t DA, mb_dtype_t DB, bool TA, bool TB, class Mma>
__device__ __forceinline__ void mb_gg_k_loop(const mb_gg_args_t &g, float *smem,
                                             int64_t m0, int64_t n0, Mma mma) {
  constexpr bool KA = !TA, KB = TB; /* K contiguous in memory */
  const int64_t tiles_k = (g.k + MB_GG_BK - 1) / MB_GG_BK;
  float va[8], vb[8];
  mb_gg_load<DA, false, KA>(g.a, m0, 0, g.k, va);
  mb_gg_load<DB, true, KB>(g.b, n0, 0, g.k, vb);
  mb_gg_store<false, KA, MB_GG_AS, 1>(smem, va);
  mb_gg_store<true, KB, 1, MB_GG_BS>(smem + MB_GG_BM * MB_GG_AS, vb);
  __syncthreads();
  for (int64_t t = 0; t < tiles_k; ++t) {
    float *const cur = smem + (t & 1) * MB_GG_STAGE_FLOATS;
    float *const nxt = smem + ((t + 1) & 1) * MB_GG_STAGE_FLOATS;
    const bool more = t + 1 < tiles_k;
    if (more) {
      mb_gg_load<DA, false, KA>(g.a, m0, (t + 1) * MB_GG_BK, g.k, va);
      mb_gg_load<DB, true, KB>(g.b, n0, (t + 1) * MB_GG_BK, g.k, vb);
    }
    mma(cur, cur + MB_GG_BM * MB_GG_AS, t * MB_GG_BK);
    if (more) { /* the other buffer: its last readers passed the barrier */
      mb_gg_store<false, KA, MB_GG_AS, 1>(nxt, va);
      mb_gg_store<true, KB, 1, MB_GG_BS>(nxt + MB_GG_BM * MB_GG_AS, vb);
    }
    __syncthreads();
  }
}

/* The kernel: A of dtype DA (stored K x M when TA), B of dtype DB (N x K
 * when TB); I8 for i8 x i8. */
template <mb_dtype_t DA, mb_dtype_t DB, bool I8, bool TA, bool TB>
__global__ void __launch_bounds__(MB_GG_THREADS) mb_gg_kernel(mb_gg_args_t g) {
  MB_GPU_DYN_SMEM(float, mb_gg_smem);
  const int tx = (int)threadIdx.x % 16, ty = (int)threadIdx.x / 16;
  const int64_t m0 = (int64_t)blockIdx.x / g.tiles_n * MB_GG_BM;
  const int64_t n0 = (int64_t)blockIdx.x % g.tiles_n * MB_GG_BN;
  const int64_t i0 = m0 + ty * MB_GG_T, j0 = n0 + tx * MB_GG_T;
  if constexpr (I8) {
    mb_gg_i8_state s;
#pragma unroll
    for (int r = 0; r < MB_GG_T; ++r)
#pragma unroll
      for (int c = 0; c < MB_GG_T; ++c) {
        s.f[r][c] = s.res[r][c] = 0.0f;
        s.sum[r][c] = 0;
      }
    s.next_fold = g.kq;
    s.next_event = g.kq < MB_GG_I8_SPAN ? g.kq : MB_GG_I8_SPAN;
    mb_gg_k_loop<DA, DB, TA, TB>(
        g, mb_gg_smem, m0, n0,
        [&](const float *as, const float *bs, int64_t k0) {
          mb_gg_i8_tile(g, as, bs, ty, tx, k0, i0, j0, s);
        });
    if (g.dout == MB_DTYPE_I32)
      mb_gg_store_i32(g, i0, j0, s.sum);
    else
      mb_gg_epilogue(g, i0, j0, s.res, false);
  } else {
    mb_gg_tile_t acc;
#pragma unroll
    for (int r = 0; r < MB_GG_T; ++r)
#pragma unroll
      for (int c = 0; c < MB_GG_T; ++c) acc[r][c] = 0.0f;
    mb_gg_k_loop<DA, DB, TA, TB>(
        g, mb_gg_smem, m0, n0,
        [&](const float *as, const float *bs, int64_t k0) {
          (void)k0;
          mb_gg_mma_full(as, bs, ty, tx, acc);
        });
    mb_gg_epilogue(g, i0, j0, acc, true);
  }
}

#endif
