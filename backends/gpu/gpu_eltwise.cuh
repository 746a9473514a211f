/* Device helpers private to the element-wise family's shared kernels
 * (gpu_eltwise.cu, gpu_norm.cu, gpu_softmax.cu, gpu_copy.cu,
 * gpu_attention.cu): compile-time dtype tags and dispatch, 16-byte vector
 * loads and stores of float tensors through the exact converters of
 * mb_cvt.h, and the activation functions in f32. The row machinery of the
 * per-row ops (norms, softmax) is gpu_rows.cuh.
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

/* The bits of one access of B bytes: an unsigned integer up to 4 bytes,
 * else a raw vector. */
template <int B>
struct mb_gpu_bits {
  typedef mb_gpu_raw<B> type;
};
template <>
struct mb_gpu_bits<1> {
  typedef uint8_t type;
};
template <>
struct mb_gpu_bits<2> {
  typedef uint16_t type;
};
template <>
struct mb_gpu_bits<4> {
  typedef uint32_t type;
};

/* V elements of a D tensor as they lie in memory: one access of V * size
 * bytes (1, 2, 4, 8 or 16), aligned to that size. */
template <mb_dtype_t D, int V>
using mb_gpu_vec_t = typename mb_gpu_bits<V * mb_gpu_dt_size(D)>::type;

/* Element k of a vector of elements of S bytes, as bits. */
template <int S, class R>
__device__ __forceinline__ uint32_t mb_gpu_vec_get(const R &r, int k) {
  if constexpr (sizeof(R) <= 4 && S == 4) {
    return (uint32_t)r;
  } else if constexpr (sizeof(R) <= 4) {
    return ((uint32_t)r >> (8 * S * k)) & ((1u << (8 * S)) - 1u);
  } else if constexpr (S == 4) {
    return r.w[k];
  } else if constexpr (S == 2) {
    return (r.w[k / 2] >> (16 * (k % 2))) & 0xFFFFu;
  } else {
    return (r.w[k / 4] >> (8 * (k % 4))) & 0xFFu;
  }
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

/* The V elements of vector r as f32: exact. */
template <mb_dtype_t D, int V>
__device__ __forceinline__ void mb_gpu_unpack(const mb_gpu_vec_t<D, V> &r,
                                              float (&out)[V]) {
#pragma unroll
  for (int k = 0; k < V; ++k)
    out[k] = mb_gpu_from_bits<D>(mb_gpu_vec_get<mb_gpu_dt_size(D)>(r, k));
}

/* Two f32 values as D's bits, `lo` in the low half: one conversion for
 * both where the target has a pair instruction (mb_cvt.h). Not for f32. */
template <mb_dtype_t D>
__device__ __forceinline__ uint32_t mb_gpu_to_bits2(float lo, float hi) {
  if constexpr (D == MB_DTYPE_BF16) return mb__cvt_f32x2_to_bf16x2(lo, hi);
  if constexpr (D == MB_DTYPE_F16) return mb__cvt_f32x2_to_f16x2(lo, hi);
  if constexpr (D == MB_DTYPE_F8E4M3) return mb__cvt_f32x2_to_e4m3x2(lo, hi);
  static_assert(D == MB_DTYPE_BF16 || D == MB_DTYPE_F16 ||
                    D == MB_DTYPE_F8E4M3 || D == MB_DTYPE_F8E5M2,
                "pairs of 8- and 16-bit elements");
  return mb__cvt_f32x2_to_e5m2x2(lo, hi);
}

/* V f32 values as a vector of D, each rounded once to nearest even;
 * narrow elements converted in pairs. */
template <mb_dtype_t D, int V>
__device__ __forceinline__ mb_gpu_vec_t<D, V> mb_gpu_pack(const float (&v)[V]) {
  constexpr int S = mb_gpu_dt_size(D), W = V * S < 4 ? 1 : V * S / 4;
  typedef mb_gpu_vec_t<D, V> R;
  uint32_t w[W];
#pragma unroll
  for (int k = 0; k < W; ++k) w[k] = 0;
  if constexpr (S == 4 || V == 1) {
#pragma unroll
    for (int k = 0; k < V; ++k)
      w[k * S / 4] |= mb_gpu_to_bits<D>(v[k]) << (8 * S * k % 32);
  } else {
#pragma unroll
    for (int k = 0; k < V; k += 2)
      w[k * S / 4] |= mb_gpu_to_bits2<D>(v[k], v[k + 1]) << (8 * S * k % 32);
  }
  if constexpr (sizeof(R) <= 4) {
    return (R)w[0];
  } else {
    R r;
#pragma unroll
    for (int k = 0; k < W; ++k) r.w[k] = w[k];
    return r;
  }
}

/* Elements [i, i + V) of a D tensor as f32: one access, aligned to its size
 * (the caller checks the base pointer; i is a multiple of V). */
template <mb_dtype_t D, int V>
__device__ __forceinline__ void mb_gpu_load_vec(const void *p, size_t i,
                                                float (&out)[V]) {
  typedef mb_gpu_vec_t<D, V> R;
  /* A copy first: unpacking through a reference, nvcc loads the words one
   * by one. */
  const R r = *((const R *)p + i / V);
  mb_gpu_unpack<D, V>(r, out);
}

/* Rounds V f32 values once each and stores them as elements [i, i + V). */
template <mb_dtype_t D, int V>
__device__ __forceinline__ void mb_gpu_store_vec(void *p, size_t i,
                                                 const float (&v)[V]) {
  typedef mb_gpu_vec_t<D, V> R;
  *((R *)p + i / V) = mb_gpu_pack<D, V>(v);
}

/* A load of what is read once (a row of X) and a store of what is not read
 * again (Y): evict-first in the caches on CUDA (ld/st.global.cs), so that
 * what is read again (W, Bias, by every row) keeps its place in L1; plain
 * accesses elsewhere. */
template <class R>
__device__ __forceinline__ R mb_gpu_ld_once(const R *p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(R) == 16) {
    const uint4 u = __ldcs((const uint4 *)p);
    R r;
    r.w[0] = u.x, r.w[1] = u.y, r.w[2] = u.z, r.w[3] = u.w;
    return r;
  }
#endif
  return *p;
}

template <class R>
__device__ __forceinline__ void mb_gpu_st_once(R *p, const R &r) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(R) == 16) {
    __stcs((uint4 *)p, make_uint4(r.w[0], r.w[1], r.w[2], r.w[3]));
    return;
  }
#endif
  *p = r;
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

#endif
