/* Device helpers private to the element-wise family's shared kernels
 * (gpu_eltwise.cu, gpu_norm.cu, gpu_softmax.cu, gpu_copy.cu,
 * gpu_attention.cu): compile-time dtype tags and dispatch, 16-byte vector
 * loads and stores of float tensors through the exact converters of
 * mb_cvt.h, the activation functions in f32, and the row machinery of the
 * per-row ops (norms, softmax).
 *
 * Every value is computed in f32 and rounded once to its output dtype, the
 * way the CPU backend's portable kernels do (backends/cpu/cpu_act_c.c, ...);
 * the math is libdevice's accurate expf/erfcf (no fast-math intrinsics). */
#ifndef MB_GPU_ELTWISE_CUH
#define MB_GPU_ELTWISE_CUH

#include <stddef.h>
#include <stdint.h>

#include "gpu_device.cuh"
#include "gpu_kernels.h"
#include "gpu_runtime.h"

/* ---- dtypes at compile time ------------------------------------------- */

/* A dtype as a type, for dispatching a run-time dtype to a template. */
template <mb_dtype_t D>
struct mb_gpu_dt {
  static constexpr mb_dtype_t value = D;
};

/* Bytes per element of the float dtypes these kernels read and write. */
__host__ __device__ constexpr int mb_gpu_dt_size(mb_dtype_t d) {
  return d == MB_DTYPE_F32 || d == MB_DTYPE_I32    ? 4
         : d == MB_DTYPE_BF16 || d == MB_DTYPE_F16 ? 2
                                                   : 1;
}

/* Whether dt is one of f32, bf16, f16 (and, with fp8, f8e4m3, f8e5m2). */
static inline int mb_gpu_is_float(mb_dtype_t dt, int fp8) {
  return dt == MB_DTYPE_F32 || dt == MB_DTYPE_BF16 || dt == MB_DTYPE_F16 ||
         (fp8 && (dt == MB_DTYPE_F8E4M3 || dt == MB_DTYPE_F8E5M2));
}

/* Calls f(mb_gpu_dt<D>{}) for D = dt and returns its status; dt must pass
 * mb_gpu_is_float(dt, 1) (anything else: MB_ERR_UNSUPPORTED, f uncalled). */
template <class F>
static mb_status_t mb_gpu_dispatch_float(mb_dtype_t dt, F &&f) {
  switch (dt) {
    case MB_DTYPE_F32:
      return f(mb_gpu_dt<MB_DTYPE_F32>{});
    case MB_DTYPE_BF16:
      return f(mb_gpu_dt<MB_DTYPE_BF16>{});
    case MB_DTYPE_F16:
      return f(mb_gpu_dt<MB_DTYPE_F16>{});
    case MB_DTYPE_F8E4M3:
      return f(mb_gpu_dt<MB_DTYPE_F8E4M3>{});
    case MB_DTYPE_F8E5M2:
      return f(mb_gpu_dt<MB_DTYPE_F8E5M2>{});
    default:
      return MB_ERR_UNSUPPORTED;
  }
}

/* The same for f32, bf16 and f16 only. */
template <class F>
static mb_status_t mb_gpu_dispatch_f32_16(mb_dtype_t dt, F &&f) {
  switch (dt) {
    case MB_DTYPE_F32:
      return f(mb_gpu_dt<MB_DTYPE_F32>{});
    case MB_DTYPE_BF16:
      return f(mb_gpu_dt<MB_DTYPE_BF16>{});
    case MB_DTYPE_F16:
      return f(mb_gpu_dt<MB_DTYPE_F16>{});
    default:
      return MB_ERR_UNSUPPORTED;
  }
}

/* "<backend>: <op>: <dtype> is not implemented": MB_ERR_UNSUPPORTED. */
static inline mb_status_t mb_gpu_unsupported_dtype(const mb_gpu_env_t *env,
                                                   const char *op,
                                                   mb_dtype_t dt) {
  env->host->set_error("%s: %s: %s is not implemented by the native kernel",
                       env->backend, op, env->host->dtype_name(dt));
  return MB_ERR_UNSUPPORTED;
}

/* Whether p is aligned to `bytes` (a power of two). */
static inline int mb_gpu_aligned(const void *p, size_t bytes) {
  return ((uintptr_t)p & (uintptr_t)(bytes - 1)) == 0;
}

/* Threads per block of the grid-stride element-wise kernels. */
#define MB_GPU_ELT_BLOCK 256u

/* ---- vectors ------------------------------------------------------------ */

/* BYTES (4, 8 or 16) raw bytes, loaded and stored as one access. */
template <int BYTES>
struct alignas(BYTES) mb_gpu_raw {
  uint32_t w[BYTES / 4];
};

/* Element k of a raw vector of elements of S bytes, as bits. */
template <int S, int BYTES>
__device__ __forceinline__ uint32_t mb_gpu_raw_get(const mb_gpu_raw<BYTES> &r,
                                                   int k) {
  if constexpr (S == 4) return r.w[k];
  if constexpr (S == 2) return (r.w[k / 2] >> (16 * (k % 2))) & 0xFFFFu;
  return (r.w[k / 4] >> (8 * (k % 4))) & 0xFFu;
}

template <mb_dtype_t D>
__device__ __forceinline__ float mb_gpu_from_bits(uint32_t b) {
  if constexpr (D == MB_DTYPE_BF16) return mb__cvt_bf16_to_f32((uint16_t)b);
  if constexpr (D == MB_DTYPE_F16) return mb__cvt_f16_to_f32((uint16_t)b);
  if constexpr (D == MB_DTYPE_F8E4M3) return mb__cvt_e4m3_to_f32((uint8_t)b);
  if constexpr (D == MB_DTYPE_F8E5M2) return mb__cvt_e5m2_to_f32((uint8_t)b);
  return mb__cvt_float(b);
}

/* f32 -> D's bits, rounded to nearest even (mb_gpu_store's rounding). */
template <mb_dtype_t D>
__device__ __forceinline__ uint32_t mb_gpu_to_bits(float v) {
  if constexpr (D == MB_DTYPE_BF16) return mb__cvt_f32_to_bf16(v);
  if constexpr (D == MB_DTYPE_F16) return mb__cvt_f32_to_f16(v);
  if constexpr (D == MB_DTYPE_F8E4M3) return mb__cvt_f32_to_e4m3(v);
  if constexpr (D == MB_DTYPE_F8E5M2) return mb__cvt_f32_to_e5m2(v);
  return mb__cvt_bits(v);
}

/* Elements [i, i + V) of a D tensor as f32. V = 1: one scalar access; else
 * one access of V * size bytes (4, 8 or 16), which must be aligned to that
 * size (the caller checks the base pointer; i is a multiple of V). */
template <mb_dtype_t D, int V>
__device__ __forceinline__ void mb_gpu_load_vec(const void *p, size_t i,
                                                float (&out)[V]) {
  constexpr int S = mb_gpu_dt_size(D), BYTES = V * S;
  if constexpr (V == 1) {
    out[0] = mb_gpu_load(D, p, i);
  } else {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "vector size");
    const mb_gpu_raw<BYTES> r =
        *(const mb_gpu_raw<BYTES> *)((const char *)p + i * S);
#pragma unroll
    for (int k = 0; k < V; ++k)
      out[k] = mb_gpu_from_bits<D>(mb_gpu_raw_get<S>(r, k));
  }
}

/* Rounds V f32 values once each and stores them as elements [i, i + V). */
template <mb_dtype_t D, int V>
__device__ __forceinline__ void mb_gpu_store_vec(void *p, size_t i,
                                                 const float (&v)[V]) {
  constexpr int S = mb_gpu_dt_size(D), BYTES = V * S;
  if constexpr (V == 1) {
    mb_gpu_store(D, p, i, v[0]);
  } else {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "vector size");
    mb_gpu_raw<BYTES> r;
#pragma unroll
    for (int k = 0; k < BYTES / 4; ++k) r.w[k] = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const uint32_t b = mb_gpu_to_bits<D>(v[k]);
      if constexpr (S == 4) r.w[k] = b;
      if constexpr (S == 2) r.w[k / 2] |= b << (16 * (k % 2));
      if constexpr (S == 1) r.w[k / 4] |= b << (8 * (k % 4));
    }
    *(mb_gpu_raw<BYTES> *)((char *)p + i * S) = r;
  }
}

/* ---- activations in f32 (cpu_act_c.c's formulas) ------------------------ */

__device__ __forceinline__ float mb_gpu_relu6(float v) {
  return v < 0.0f ? 0.0f : v > 6.0f ? 6.0f : v;
}

/* act(x) for activation A; alpha: the leakyrelu slope. */
template <int A>
__device__ __forceinline__ float mb_gpu_act(float x, float alpha) {
  if constexpr (A == MB_ACT_RELU) {
    return x > 0.0f ? x : 0.0f;
  } else if constexpr (A == MB_ACT_GELU_TANH) {
    /* 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)): no cancellation for x < 0 */
    const float k = 1.5957691216057308f; /* 2 sqrt(2/pi) */
    return x / (1.0f + expf(-k * x * (1.0f + 0.044715f * x * x)));
  } else if constexpr (A == MB_ACT_GELU_ERF) {
    /* 0.5 x (1 + erf(x/sqrt2)) = 0.5 x erfc(-x/sqrt2): no cancellation */
    return 0.5f * x * erfcf(-x * 0.70710678118654752f);
  } else if constexpr (A == MB_ACT_SILU) {
    return x / (1.0f + expf(-x));
  } else if constexpr (A == MB_ACT_SIGMOID) {
    return 1.0f / (1.0f + expf(-x));
  } else if constexpr (A == MB_ACT_LEAKYRELU) {
    return x > 0.0f ? x : alpha * x;
  } else if constexpr (A == MB_ACT_RELU6) {
    return mb_gpu_relu6(x);
  } else {
    static_assert(A == MB_ACT_HARDSWISH, "activation");
    return x * mb_gpu_relu6(x + 3.0f) * (1.0f / 6.0f);
  }
}

/* ---- rows (layernorm, rmsnorm, softmax) ----------------------------------
 * A row of n elements, read as nvec vectors of V, belongs to a group of g
 * threads: either a power-of-two slice of a warp (several rows per block;
 * short rows) or the whole block (long rows). The row is read from memory
 * once: thread t of the group keeps vectors t, t + g, ..., t + (SLOTS - 1) g
 * in registers (MB_GPU_ROW_CACHE floats), and a block's row longer than
 * that keeps the next `scap` vectors in dynamic shared memory (as f32, one
 * plane per vector element so that consecutive threads hit consecutive
 * banks); only a row beyond both re-reads its rest from memory (L2) in
 * each pass. A thread only ever reads back what it stored itself, so no
 * barrier is needed. Groups loop over rows with the whole block in step,
 * so every lane reaches every shuffle and barrier. */
#define MB_GPU_ROW_BLOCK 256u /* threads per block with several rows */
#define MB_GPU_ROW_CACHE 16   /* floats per thread in registers */

template <mb_dtype_t D, int V>
struct mb_gpu_row {
  static constexpr int SLOTS = MB_GPU_ROW_CACHE / V;
  float v[SLOTS][V];
  float *sm;   /* V planes of scap floats; NULL when scap is 0 */
  size_t scap; /* vectors past the registers kept in shared memory */

  /* Reads this thread's vectors of the row starting at element `base`
   * into registers and shared memory (vectors past nvec are never used). */
  __device__ __forceinline__ void load(const void *x, size_t base, size_t nvec,
                                       unsigned t, unsigned g) {
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
      const size_t k = t + (size_t)s * g;
      if (k < nvec) mb_gpu_load_vec<D, V>(x, base + k * V, v[s]);
    }
    const size_t k0 = (size_t)SLOTS * g;
    for (size_t j = t; j < scap && k0 + j < nvec; j += g) {
      float r[V];
      mb_gpu_load_vec<D, V>(x, base + (k0 + j) * V, r);
#pragma unroll
      for (int e = 0; e < V; ++e) sm[e * scap + j] = r[e];
    }
  }

  /* f(vec, k, cached) for every vector k the thread owns, vec holding its
   * V elements: the cached values (registers or shared memory; with MUT,
   * what f leaves in vec is stored back), else a fresh read from memory
   * into a temporary (cached false). */
  template <bool MUT, class F>
  __device__ __forceinline__ void each(const void *x, size_t base, size_t nvec,
                                       unsigned t, unsigned g, F f) {
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
      const size_t k = t + (size_t)s * g;
      if (k < nvec) f(v[s], k, true);
    }
    const size_t k0 = (size_t)SLOTS * g;
    for (size_t j = t; k0 + j < nvec; j += g) {
      float r[V];
      const bool cached = j < scap;
      if (cached) {
#pragma unroll
        for (int e = 0; e < V; ++e) r[e] = sm[e * scap + j];
      } else {
        mb_gpu_load_vec<D, V>(x, base + (k0 + j) * V, r);
      }
      f(r, k0 + j, cached);
      if (MUT && cached)
#pragma unroll
        for (int e = 0; e < V; ++e) sm[e * scap + j] = r[e];
    }
  }
};

/* Sum / max over a group of g threads: a warp slice of g lanes (BLOCK
 * false; g a power of two, the lanes consecutive) or the whole block. */
template <bool BLOCK>
__device__ __forceinline__ float mb_gpu_group_sum(float v, unsigned g,
                                                  float *scratch) {
  if constexpr (BLOCK) {
    (void)g;
    return mb_gpu_block_sum(v, scratch);
  } else {
    (void)scratch;
    for (unsigned m = g / 2; m > 0; m >>= 1) v += mb_gpu_shfl_xor(v, (int)m);
    return v;
  }
}

template <bool BLOCK>
__device__ __forceinline__ float mb_gpu_group_max(float v, unsigned g,
                                                  float *scratch) {
  if constexpr (BLOCK) {
    (void)g;
    return mb_gpu_block_max(v, scratch);
  } else {
    (void)scratch;
    for (unsigned m = g / 2; m > 0; m >>= 1)
      v = fmaxf(v, mb_gpu_shfl_xor(v, (int)m));
    return v;
  }
}

/* How a row op is laid out for m rows of n elements (host side). */
typedef struct mb_gpu_row_plan {
  int block_mode;   /* 1: one row per block; 0: a warp slice per row */
  unsigned group;   /* threads per row */
  unsigned threads; /* per block */
  size_t rows_per_block;
  unsigned grid; /* blocks (they loop when there are more rows) */
  size_t scap;   /* block mode: vectors per row in shared memory */
  size_t smem;   /* dynamic shared memory bytes: scap V floats */
} mb_gpu_row_plan_t;

/* Short rows (n <= warp x MB_GPU_ROW_CACHE: every lane's part fits its
 * registers) take the smallest power-of-two slice of a warp that holds the
 * row in about two vectors a lane. Longer rows take a block of about
 * n / MB_GPU_ROW_CACHE threads (a multiple of the warp, at most 1024);
 * what its registers cannot hold goes to shared memory, up to the
 * device's opt-in limit less `static_smem`. */
static inline mb_gpu_row_plan_t mb_gpu_row_plan(const mb_gpu_env_t *env,
                                                size_t m, size_t n, int vec,
                                                size_t static_smem) {
  mb_gpu_row_plan_t p;
  /* The device's warp: this is host code (gpu_runtime.h). */
  const size_t warp = (size_t)env->warp_size;
  const size_t nvec = n / (size_t)vec;
  p.scap = 0;
  p.smem = 0;
  if (n <= warp * MB_GPU_ROW_CACHE) {
    unsigned g = 1;
    while (g < (unsigned)warp && (size_t)g * 2 < nvec) g *= 2;
    p.block_mode = 0;
    p.group = g;
    p.threads = MB_GPU_ROW_BLOCK;
    p.rows_per_block = MB_GPU_ROW_BLOCK / g;
  } else {
    size_t t = (n + MB_GPU_ROW_CACHE - 1) / MB_GPU_ROW_CACHE;
    t = (t + warp - 1) / warp * warp;
    if (t < 2 * warp) t = 2 * warp;
    if (t > 1024) t = 1024;
    p.block_mode = 1;
    p.group = (unsigned)t;
    p.threads = (unsigned)t;
    p.rows_per_block = 1;
    const size_t in_regs = t * (size_t)(MB_GPU_ROW_CACHE / vec);
    if (nvec > in_regs) {
      size_t limit =
          env->smem_optin > 48u * 1024u ? env->smem_optin : 48u * 1024u;
      limit = limit > static_smem + 1024u ? limit - static_smem - 1024u : 0;
      const size_t fit = limit / ((size_t)vec * sizeof(float));
      p.scap = nvec - in_regs < fit ? nvec - in_regs : fit;
      p.smem = p.scap * (size_t)vec * sizeof(float);
    }
  }
  const size_t blocks = (m + p.rows_per_block - 1) / p.rows_per_block;
  const size_t cap = (size_t)1 << 30;
  p.grid = (unsigned)(blocks < cap ? blocks : cap);
  return p;
}

/* Enqueues a row kernel with plan p: raises the kernel's dynamic shared
 * memory limit first when the plan needs more than the default 48 KiB. */
template <class K, class... A>
static mb_status_t mb_gpu_row_launch(const mb_gpu_env_t *env,
                                     const mb_gpu_row_plan_t *p,
                                     const char *what, K kernel, A... args) {
  if (p->smem > 48u * 1024u) {
    const mb_gpu_error_t e = mb_gpu_func_set_max_smem(kernel, (int)p->smem);
    if (e != mb_gpu_success) {
      (void)mb_gpu_get_last_error();
      env->host->set_error("%s: %s: raising shared memory to %zu bytes: %s",
                           env->backend, what, p->smem, mb_gpu_error_string(e));
      return MB_ERR_BACKEND;
    }
  }
  MB_GPU_LAUNCH(kernel, p->grid, p->threads, p->smem,
                (mb_gpu_stream_t)env->stream, args...);
  return mb__gpu_launched(env, what);
}

#endif
