/* Private to the quantization family's shared kernels (gpu_quant.cu,
 * gpu_quant_rows.cu, gpu_quant_amax.cu, gpu_quant_tile.cu, gpu_dequant.cu):
 * the dtypes as compile-time traits, vector loads and stores, exact
 * division by a constant divisor, the scale rule, the launch helpers, and
 * the plan of one quantization that gpu_quant.cu makes and the launchers
 * of the other files carry out.
 *
 * Semantics (lib/quant.c, lib/ops/quantize.c), reproduced bit for bit:
 * Q is rows x cols (X, or X^T with MB_PARAM_TRANSPOSE), one f32 scale per
 * bm x bn block of Q; dynamic s = fl32(absmax / qmax) with an all-zero or
 * non-finite block giving 1 (absmax ignores NaN, as fmaxf does), static
 * s = (float)params.scale; q = RNE_saturate(fl32(x / s)) with a true IEEE
 * f32 division (__fdiv_rn: never a multiplication by 1/s, which is one ulp
 * off now and then). dequantize: x = round(fl32(q * s)). Element
 * conversions are mb_cvt.h's, exact and shared with the CPU backend; they
 * assume no flush-to-zero and no fast-math. */
#ifndef MB_GPU_QUANT_CUH
#define MB_GPU_QUANT_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpu_device.cuh"
#include "gpu_kernels.h"
#include "gpu_runtime.h"

/* ---- dtypes as types ------------------------------------------------------
 * mb_gq_dt<D> carries a run-time dtype into a template (see mb_gq_dispatch
 * below). mb_gq_x<D>: the f32, bf16, f16 tensors (X of quantize, the output
 * of dequantize) as raw integers and their exact conversions. mb_gq_q<D>:
 * the quantized formats; enc() is the saturating RNE conversion (a nibble
 * for i4), dec() the exact value of a byte (of a nibble for i4). */
template <mb_dtype_t D>
struct mb_gq_dt {
  static constexpr mb_dtype_t value = D;
};

template <mb_dtype_t D>
struct mb_gq_x;
template <>
struct mb_gq_x<MB_DTYPE_F32> {
  typedef uint32_t raw;
  static __device__ __forceinline__ float get(raw r) {
    return mb__cvt_float(r);
  }
  static __device__ __forceinline__ raw put(float v) { return mb__cvt_bits(v); }
};
template <>
struct mb_gq_x<MB_DTYPE_BF16> {
  typedef uint16_t raw;
  static __device__ __forceinline__ float get(raw r) {
    return mb__cvt_bf16_to_f32(r);
  }
  static __device__ __forceinline__ raw put(float v) {
    return mb__cvt_f32_to_bf16(v);
  }
};
template <>
struct mb_gq_x<MB_DTYPE_F16> {
  typedef uint16_t raw;
  static __device__ __forceinline__ float get(raw r) {
    return mb__cvt_f16_to_f32(r);
  }
  static __device__ __forceinline__ raw put(float v) {
    return mb__cvt_f32_to_f16(v);
  }
};

template <mb_dtype_t D>
struct mb_gq_q;
template <>
struct mb_gq_q<MB_DTYPE_F8E4M3> {
  static constexpr int per_byte = 1;
  static __device__ __forceinline__ uint32_t enc(float v) {
    return mb__cvt_f32_to_e4m3(v);
  }
  static __device__ __forceinline__ float dec(uint32_t b) {
    return mb__cvt_e4m3_to_f32((uint8_t)b);
  }
};
template <>
struct mb_gq_q<MB_DTYPE_F8E5M2> {
  static constexpr int per_byte = 1;
  static __device__ __forceinline__ uint32_t enc(float v) {
    return mb__cvt_f32_to_e5m2(v);
  }
  static __device__ __forceinline__ float dec(uint32_t b) {
    return mb__cvt_e5m2_to_f32((uint8_t)b);
  }
};
template <>
struct mb_gq_q<MB_DTYPE_I8> {
  static constexpr int per_byte = 1;
  static __device__ __forceinline__ uint32_t enc(float v) {
    return (uint8_t)mb__cvt_f32_to_i8(v);
  }
  static __device__ __forceinline__ float dec(uint32_t b) {
    return (float)(int8_t)(uint8_t)b;
  }
};
template <>
struct mb_gq_q<MB_DTYPE_I4> {
  static constexpr int per_byte = 2; /* low nibble first */
  static __device__ __forceinline__ uint32_t enc(float v) {
    return mb__cvt_f32_to_i4(v);
  }
  static __device__ __forceinline__ float dec(uint32_t nibble) {
    return (float)((int32_t)((nibble & 0xFu) ^ 8u) - 8);
  }
};

/* The largest finite value of a quantized format (mb_dtype_max); 0 for any
 * other dtype. */
static inline float mb_gq_qmax(mb_dtype_t dt) {
  switch (dt) {
    case MB_DTYPE_F8E4M3:
      return 448.0f;
    case MB_DTYPE_F8E5M2:
      return 57344.0f;
    case MB_DTYPE_I8:
      return 127.0f;
    case MB_DTYPE_I4:
      return 7.0f;
    case MB_DTYPE_F4E2M1: /* gpu_quant_fp4.cu's alone */
      return 6.0f;
    default:
      return 0.0f;
  }
}

static inline int mb_gq_is_hp(mb_dtype_t dt) {
  return dt == MB_DTYPE_F32 || dt == MB_DTYPE_BF16 || dt == MB_DTYPE_F16;
}

/* Bytes per element of f32, bf16, f16. */
static inline int mb_gq_hp_size(mb_dtype_t dt) {
  return dt == MB_DTYPE_F32 ? 4 : 2;
}

/* Calls f(mb_gq_dt<H>{}, mb_gq_dt<Q>{}) for H = hp (f32, bf16, f16) and
 * Q = q (f8e4m3, f8e5m2, i8, i4); MB_ERR_UNSUPPORTED for anything else. */
template <mb_dtype_t H, class F>
static mb_status_t mb_gq_dispatch_q(mb_dtype_t q, F &&f) {
  switch (q) {
    case MB_DTYPE_F8E4M3:
      return f(mb_gq_dt<H>{}, mb_gq_dt<MB_DTYPE_F8E4M3>{});
    case MB_DTYPE_F8E5M2:
      return f(mb_gq_dt<H>{}, mb_gq_dt<MB_DTYPE_F8E5M2>{});
    case MB_DTYPE_I8:
      return f(mb_gq_dt<H>{}, mb_gq_dt<MB_DTYPE_I8>{});
    case MB_DTYPE_I4:
      return f(mb_gq_dt<H>{}, mb_gq_dt<MB_DTYPE_I4>{});
    default:
      return MB_ERR_UNSUPPORTED;
  }
}

template <class F>
static mb_status_t mb_gq_dispatch(mb_dtype_t hp, mb_dtype_t q, F &&f) {
  switch (hp) {
    case MB_DTYPE_F32:
      return mb_gq_dispatch_q<MB_DTYPE_F32>(q, f);
    case MB_DTYPE_BF16:
      return mb_gq_dispatch_q<MB_DTYPE_BF16>(q, f);
    case MB_DTYPE_F16:
      return mb_gq_dispatch_q<MB_DTYPE_F16>(q, f);
    default:
      return MB_ERR_UNSUPPORTED;
  }
}

/* ---- vector memory access --------------------------------------------------
 * N elements of T at p as one load or store of N * sizeof(T) bytes (1 to
 * 16); p must be aligned to that size. */
template <int B>
struct mb_gq_vec;
template <>
struct mb_gq_vec<1> {
  typedef uint8_t type;
};
template <>
struct mb_gq_vec<2> {
  typedef uint16_t type;
};
template <>
struct mb_gq_vec<4> {
  typedef uint32_t type;
};
template <>
struct mb_gq_vec<8> {
  typedef uint2 type;
};
template <>
struct mb_gq_vec<16> {
  typedef uint4 type;
};

template <class T, int N>
__device__ __forceinline__ void mb_gq_ld(const T *p, T (&v)[N]) {
  typedef typename mb_gq_vec<N *(int)sizeof(T)>::type V;
  const V w = *reinterpret_cast<const V *>(p);
  memcpy(v, &w, sizeof w);
}

template <class T, int N>
__device__ __forceinline__ void mb_gq_st(T *p, const T (&v)[N]) {
  typedef typename mb_gq_vec<N *(int)sizeof(T)>::type V;
  V w;
  memcpy(&w, v, sizeof w);
  *reinterpret_cast<V *>(p) = w;
}

/* Whether p is aligned to `bytes` (a power of two). */
static inline int mb_gq_aligned(const void *p, size_t bytes) {
  return ((uintptr_t)p & (bytes - 1)) == 0;
}

/* N elements of X (dtype DX) from element e as f32. */
template <mb_dtype_t DX, int N>
__device__ __forceinline__ void mb_gq_load_x(const void *x, int64_t e,
                                             float (&v)[N]) {
  typedef typename mb_gq_x<DX>::raw R;
  R r[N];
  mb_gq_ld<R, N>((const R *)x + e, r);
#pragma unroll
  for (int k = 0; k < N; ++k) v[k] = mb_gq_x<DX>::get(r[k]);
}

/* Stores y[0, N), already divided by their scales, quantized to DQ as
 * elements [e, e + N) of Q. i4: e and N even (whole bytes). */
template <mb_dtype_t DQ, int N>
__device__ __forceinline__ void mb_gq_store_q(void *q, int64_t e,
                                              const float (&y)[N]) {
  if constexpr (mb_gq_q<DQ>::per_byte == 1) {
    uint8_t b[N];
#pragma unroll
    for (int k = 0; k < N; ++k) b[k] = (uint8_t)mb_gq_q<DQ>::enc(y[k]);
    mb_gq_st<uint8_t, N>((uint8_t *)q + e, b);
  } else {
    static_assert(N % 2 == 0, "i4 is stored in whole bytes");
    uint8_t b[N / 2];
#pragma unroll
    for (int k = 0; k < N / 2; ++k)
      b[k] = (uint8_t)(mb_gq_q<DQ>::enc(y[2 * k]) |
                       (mb_gq_q<DQ>::enc(y[2 * k + 1]) << 4));
    mb_gq_st<uint8_t, N / 2>((uint8_t *)q + e / 2, b);
  }
}

/* ---- arithmetic -------------------------------------------------------- */

/* The IEEE f32 quotient (round to nearest even), whatever the division
 * flags of the build. */
__device__ __forceinline__ float mb_gq_div(float x, float s) {
  return __fdiv_rn(x, s);
}

/* The scale of a block from its absmax (mb__quant_scale): 1 for an
 * all-zero or non-finite block. amax is never NaN here (fmaxf drops NaN). */
__device__ __forceinline__ float mb_gq_scale(float amax, float qmax) {
  return amax > 0.0f && amax <= 3.40282347e38f ? mb_gq_div(amax, qmax) : 1.0f;
}

/* n / d for 0 <= n, d < 2^31 by a multiply-high and a shift (the divisor
 * is a run-time constant: tile and block sizes): Granlund and Montgomery's
 * round-up method, as PyTorch's IntDivider. */
typedef struct mb_gq_divisor {
  uint32_t mul, shift;
} mb_gq_divisor_t;

static inline mb_gq_divisor_t mb_gq_divisor(uint32_t d) {
  uint32_t shift = 0;
  while (shift < 31 && (1u << shift) < d) ++shift;
  const uint64_t one = 1;
  const uint64_t mul = ((one << 32) * ((one << shift) - d)) / d + 1;
  mb_gq_divisor_t r = {(uint32_t)mul, shift};
  return r;
}

__device__ __forceinline__ uint32_t mb_gq_quot(mb_gq_divisor_t d, uint32_t n) {
  return (__umulhi(n, d.mul) + n) >> d.shift;
}

/* ---- the plan ---------------------------------------------------------- */

/* One quantization: Q (rows x cols) of X (rows x cols, or cols x rows when
 * transposed), bm x bn blocks, gr x gc scales. */
typedef struct mb_gq_plan {
  const void *x;
  void *q;
  float *grid;
  mb_dtype_t xdt, qdt;
  int64_t rows, cols, bm, bn, gr, gc;
  int transpose;
  int is_static;      /* MB_PARAM_STATIC: every scale is static_scale */
  float static_scale; /* (float)params.scale */
  float qmax;
  int mx;         /* e8m0 scales (MXFP8): grid holds bytes; gpu_quant_mx.cu */
  mb_dtype_t sdt; /* params.dtype_scale: f32 (NONE), e8m0, f8e4m3 (NVFP4) */
} mb_gq_plan_t;

/* Threads of the 256-thread kernels. */
enum { MB_GQ_BLOCK = 256 };

static inline int64_t mb_gq_ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/* The smallest power of two >= v. */
static inline int mb_gq_pow2_ceil(int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

/* Enqueues kernel(a), `threads` a block, on a grid-stride grid over `items`
 * blocks' worth of work (mb_gpu_grid: `waves` waves of what the device
 * holds), on env->stream; `what` names it in errors. */
template <class K, class A>
inline mb_status_t mb_gq_launch_n(const mb_gpu_env_t *env, const char *what,
                                  K kernel, int threads, int64_t items,
                                  unsigned waves, const A &a) {
  unsigned grid = 0;
  const mb_status_t st =
      mb_gpu_grid(env, what, kernel, (unsigned)threads, 0,
                  (size_t)(items > 0 ? items : 0), waves, &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(kernel, grid, threads, 0, (mb_gpu_stream_t)env->stream, a);
  return mb__gpu_launched(env, what);
}

/* The same with MB_GQ_BLOCK threads and 4 waves over `need` blocks. */
template <class K, class A>
inline mb_status_t mb_gq_launch(const mb_gpu_env_t *env, const char *what,
                                K kernel, size_t need, const A &a) {
  return mb_gq_launch_n(env, what, kernel, MB_GQ_BLOCK, (int64_t)need, 4, a);
}

/* ---- row passes: quantize's apply pass and dequantize --------------------
 * A rows x cols tensor read and written row by row, one scale per bm x bn
 * block (the grid, gc scales a row of blocks): tx threads a row (a power of
 * two), rows_per rows a 256-thread block, VEC elements a vector. */
typedef struct mb_gq_rows {
  const float *grid;
  int64_t rows;
  int cols, nch;     /* nch = cols / VEC vectors a row */
  int tx, rows_per;  /* threads a row, rows a block */
  int64_t nrg;       /* row groups */
  int gc, per_chunk; /* per_chunk: bn % VEC == 0, one scale a vector */
  mb_gq_divisor_t bm, bn;
} mb_gq_rows_t;

static inline mb_gq_rows_t mb_gq_rows_plan(const float *grid, int64_t rows,
                                           int64_t cols, int64_t bm, int64_t bn,
                                           int vec) {
  mb_gq_rows_t r;
  r.grid = grid;
  r.rows = rows;
  r.cols = (int)cols;
  r.nch = (int)(cols / vec);
  r.tx = 1;
  while (r.tx < r.nch && r.tx < MB_GQ_BLOCK) r.tx *= 2;
  r.rows_per = MB_GQ_BLOCK / r.tx;
  r.nrg = (rows + r.rows_per - 1) / r.rows_per;
  r.gc = (int)(cols / bn);
  r.per_chunk = bn % vec == 0;
  r.bm = mb_gq_divisor((uint32_t)bm);
  r.bn = mb_gq_divisor((uint32_t)bn);
  return r;
}

/* The scale of element j of a row whose scales start at srow. */
__device__ __forceinline__ float mb_gq_row_scale(const mb_gq_rows_t &a,
                                                 const float *srow, int j) {
  return srow[mb_gq_quot(a.bn, (uint32_t)j)];
}

/* Walks the rows: load(e, v) reads VEC values from element e; store(srow,
 * e, j, v) writes them at element e = row + j, whose scales start at srow.
 * Two vectors a step, both loaded before either is stored (the compiler may
 * not move a load past a store that might alias it). */
template <int VEC, class Load, class Store>
__device__ __forceinline__ void mb_gq_walk_rows(const mb_gq_rows_t &a,
                                                Load load, Store store) {
  const int ty = (int)threadIdx.x / a.tx, tx = (int)threadIdx.x % a.tx;
  for (int64_t rg = blockIdx.x; rg < a.nrg; rg += gridDim.x) {
    const int64_t i = rg * a.rows_per + ty;
    if (i >= a.rows) break; /* the last row group; later ones are larger */
    const float *srow = a.grid + (int64_t)mb_gq_quot(a.bm, (uint32_t)i) * a.gc;
    const int64_t row = i * a.cols;
    for (int c = tx; c < a.nch; c += 2 * a.tx) {
      const bool two = c + a.tx < a.nch;
      float v0[VEC], v1[VEC];
      load(row + c * VEC, v0);
      if (two) load(row + (c + a.tx) * VEC, v1);
      store(srow, row, c * VEC, v0);
      if (two) store(srow, row, (c + a.tx) * VEC, v1);
    }
  }
}

/* Launchers (each enqueues on env->stream and returns mb__gpu_launched's
 * status, or MB_ERR_UNSUPPORTED for dtypes it has no instance of). */

/* gpu_quant_rows.cu. Dynamic, not transposed: one group of threads per
 * block, held in registers. Whether it can (block size and shape,
 * alignment, i4 nibbles): */
int mb_gq_blocks_ok(const mb_gq_plan_t *p);
mb_status_t mb_gq_launch_blocks(const mb_gpu_env_t *env, const mb_gq_plan_t *p);
/* Not transposed, one scale for the whole tensor: *sp (device) when sp is
 * not NULL, else the static scale, which is also written to every entry of
 * the grid. */
int mb_gq_flat_ok(const mb_gq_plan_t *p);
mb_status_t mb_gq_launch_flat(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                              const float *sp);
/* Not transposed, scales from the grid. Not for i4 with odd cols. */
int mb_gq_apply_ok(const mb_gq_plan_t *p);
mb_status_t mb_gq_launch_apply(const mb_gpu_env_t *env, const mb_gq_plan_t *p);
/* gpu_quant_amax.cu. The absmax of all of X into grid[0] as an f32 bit
 * pattern (atomic max; grid[0] zeroed before). */
mb_status_t mb_gq_launch_amax_all(const mb_gpu_env_t *env,
                                  const mb_gq_plan_t *p);
/* The blocks' absmax patterns into the (zeroed) grid, walking X as stored,
 * for blocks at least 64 rows (or all rows) tall in X's layout. */
int mb_gq_strips_ok(const mb_gq_plan_t *p);
mb_status_t mb_gq_launch_strips(const mb_gpu_env_t *env, const mb_gq_plan_t *p);
/* Grid entries: absmax patterns -> scales (dynamic), or the static scale. */
mb_status_t mb_gq_launch_grid(const mb_gpu_env_t *env, const mb_gq_plan_t *p);
/* gpu_quant_rows.cu. i4 by bytes, any layout, scales from the grid (odd
 * cols). */
mb_status_t mb_gq_launch_i4_pairs(const mb_gpu_env_t *env,
                                  const mb_gq_plan_t *p);

/* gpu_quant_mx.cu: e8m0 scales by the OCP MX rule, any block, plain or
 * transposed, dynamic or static (a power of two); and dequantize with e8m0
 * scales. fp8 Q only. */
mb_status_t mb_gq_launch_mx(const mb_gpu_env_t *env, const mb_gq_plan_t *p);
mb_status_t mb_gq_launch_mx_dequant(const mb_gpu_env_t *env,
                                    const mb_op_params_t *p,
                                    const mb_kernel_call_t *call);

/* gpu_quant_fp4.cu: f4e2m1 Q (packed two per byte) with f32 scales, e8m0
 * (MXFP4) or NVFP4's e4m3 block scales and per-tensor scale (the static
 * scale), any block, plain or transposed; and its dequantize. */
mb_status_t mb_gq_launch_fp4(const mb_gpu_env_t *env, const mb_gq_plan_t *p);
mb_status_t mb_gq_launch_fp4_dequant(const mb_gpu_env_t *env,
                                     const mb_op_params_t *p,
                                     const mb_kernel_call_t *call);

/* gpu_quant_tile.cu: tiles of Q staged through shared memory. */
typedef enum mb_gq_tile_mode {
  MB_GQ_FUSED = 0, /* tiles of whole blocks: absmax, scales, Q */
  MB_GQ_AMAX = 1,  /* any tiles: atomic max of block absmax into the grid */
  MB_GQ_APPLY = 2  /* any tiles: Q with the grid's scales */
} mb_gq_tile_mode_t;

typedef struct mb_gq_tile {
  int tm, tn;  /* tile of Q */
  size_t smem; /* dynamic shared memory */
} mb_gq_tile_t;

/* Sizes a tile for `mode`; 0 when none fits (FUSED: a whole block must fit
 * and be read and written in runs of at least 32 elements). */
int mb_gq_tile_plan(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                    mb_gq_tile_mode_t mode, mb_gq_tile_t *t);
mb_status_t mb_gq_launch_tile(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                              mb_gq_tile_mode_t mode, const mb_gq_tile_t *t);

#endif
