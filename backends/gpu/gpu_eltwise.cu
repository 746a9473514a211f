/* Shared GPU kernels: add (Z = X + Y), activation (Y = act(X)), silu_mul
 * (Z = silu(X) Y), swiglu_bwd (silu_mul's gradients dA, dB from A, B
 * and dY) and STREAM's scale (Y = q X) and triad (A = B + q C) over M*N
 * contiguous elements. add, activation and silu_mul also read fp8
 * (decoded exactly) into the op's output dtype (dispatch_io).
 *
 * One grid-stride kernel, templated on the dtypes, the operand counts (up
 * to three inputs, two outputs), the function and the vector width: each
 * thread loads V elements of every input at a time (16 bytes of the widest
 * operand) when every pointer is aligned to its vector, computes in f32 and
 * rounds once to each output (mb_gpu_store's rounding); two vectors per
 * iteration keep more loads in flight. Elements past the last whole vector
 * (n % V) are done one by one by the first threads; misaligned operands
 * take the scalar instance (V = 1). */
#include "gpu_eltwise.cuh"
#include "mb_stream.h"

namespace {

enum { UNROLL = 2, MAX_IN = 3, MAX_OUT = 2 };

/* A launch's operands: inputs then outputs, NULL past the op's counts. */
struct elt_ptrs {
  const void *in[MAX_IN];
  void *out[MAX_OUT];
};

/* The functions: out[0 .. NOUT) from in[0 .. NIN), one element, f32. */
struct add_fn {
  __device__ void operator()(const float (&in)[MAX_IN],
                             float (&out)[MAX_OUT]) const {
    out[0] = in[0] + in[1];
  }
};

template <int A>
struct act_fn {
  float alpha;
  __device__ void operator()(const float (&in)[MAX_IN],
                             float (&out)[MAX_OUT]) const {
    out[0] = mb_gpu_act<A>(in[0], alpha);
  }
};

struct silu_mul_fn {
  __device__ void operator()(const float (&in)[MAX_IN],
                             float (&out)[MAX_OUT]) const {
    out[0] = in[0] / (1.0f + expf(-in[0])) * in[1];
  }
};

/* dA = dY B s (1 + a (1 - s)), dB = dY a s, s = sigmoid(a) once for both
 * (backends/cpu/cpu_act_c.c's steps). */
struct swiglu_bwd_fn {
  __device__ void operator()(const float (&in)[MAX_IN],
                             float (&out)[MAX_OUT]) const {
    const float a = in[0], dy = in[2];
    const float s = 1.0f / (1.0f + expf(-a));
    out[0] = dy * in[1] * (s * (1.0f + a * (1.0f - s)));
    out[1] = dy * (a * s);
  }
};

/* STREAM's scale and triad, q = MB_STREAM_Q (lib/ops/stream.c). */
struct scale_fn {
  __device__ void operator()(const float (&in)[MAX_IN],
                             float (&out)[MAX_OUT]) const {
    out[0] = (float)MB_STREAM_Q * in[0];
  }
};

struct triad_fn {
  __device__ void operator()(const float (&in)[MAX_IN],
                             float (&out)[MAX_OUT]) const {
    out[0] = in[0] + (float)MB_STREAM_Q * in[1];
  }
};

/* Elements [i, i + V) of every input as f32: input 0 of DX, the others of
 * DY. */
template <mb_dtype_t DX, mb_dtype_t DY, int NIN, int V>
__device__ __forceinline__ void load_in(const elt_ptrs &p, size_t i,
                                        float (&a)[NIN][V]) {
  mb_gpu_load_vec<DX, V>(p.in[0], i, a[0]);
#pragma unroll
  for (int k = 1; k < NIN; ++k) mb_gpu_load_vec<DY, V>(p.in[k], i, a[k]);
}

/* f on each of the V elements, each output rounded once to DZ and stored
 * as elements [i, i + V). */
template <mb_dtype_t DZ, int NIN, int NOUT, int V, class F>
__device__ __forceinline__ void compute_store(const elt_ptrs &p, size_t i,
                                              const float (&a)[NIN][V],
                                              const F &f) {
  float o[NOUT][V];
#pragma unroll
  for (int e = 0; e < V; ++e) {
    float in[MAX_IN] = {0.0f, 0.0f, 0.0f}, out[MAX_OUT];
#pragma unroll
    for (int k = 0; k < NIN; ++k) in[k] = a[k][e];
    f(in, out);
#pragma unroll
    for (int q = 0; q < NOUT; ++q) o[q][e] = out[q];
  }
#pragma unroll
  for (int q = 0; q < NOUT; ++q) mb_gpu_store_vec<DZ, V>(p.out[q], i, o[q]);
}

/* out[q][i] = f(in[0][i], ...) for i < n. */
template <mb_dtype_t DX, mb_dtype_t DY, mb_dtype_t DZ, int NIN, int NOUT, int V,
          class F>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    eltwise_kernel(elt_ptrs p, size_t n, F f) {
  const size_t nv = n / V;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  const size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t v = gid;
  for (; v + (UNROLL - 1) * stride < nv; v += UNROLL * stride) {
    float a[UNROLL][NIN][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      load_in<DX, DY, NIN, V>(p, (v + u * stride) * V, a[u]);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      compute_store<DZ, NIN, NOUT, V>(p, (v + u * stride) * V, a[u], f);
  }
  for (; v < nv; v += stride) {
    float a[NIN][V];
    load_in<DX, DY, NIN, V>(p, v * V, a);
    compute_store<DZ, NIN, NOUT, V>(p, v * V, a, f);
  }
  /* The n % V last elements, one per thread. */
  const size_t i = nv * V + gid;
  if (V > 1 && i < n) {
    float a[NIN][1];
    load_in<DX, DY, NIN, 1>(p, i, a);
    compute_store<DZ, NIN, NOUT, 1>(p, i, a, f);
  }
}

constexpr int max_int(int a, int b) {
  return a > b ? a : b;
}

/* Enqueues out = f(in) over n elements, the operands in[0 .. NIN) and
 * out[0 .. NOUT) of the call, vectorised when every operand's pointer is
 * aligned to its vector. */
template <mb_dtype_t DX, mb_dtype_t DY, mb_dtype_t DZ, int NIN, int NOUT,
          class F>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call,
                   const char *what, F f) {
  constexpr int S = max_int(max_int(mb_gpu_dt_size(DX), mb_gpu_dt_size(DY)),
                            mb_gpu_dt_size(DZ));
  constexpr int V = 16 / S;
  const mb_op_params_t *p = call->params;
  const size_t n = (size_t)p->shape[0] * (size_t)p->shape[1];
  elt_ptrs ptrs = {{NULL, NULL, NULL}, {NULL, NULL}};
  int vec = 1;
  for (int k = 0; k < NIN; ++k) {
    ptrs.in[k] = call->in[k];
    vec &= mb_gpu_aligned(ptrs.in[k], (size_t)V * mb_gpu_dt_size(k ? DY : DX));
  }
  for (int q = 0; q < NOUT; ++q) {
    ptrs.out[q] = call->out[q];
    vec &= mb_gpu_aligned(ptrs.out[q], (size_t)V * mb_gpu_dt_size(DZ));
  }
  const mb_gpu_stream_t stream = (mb_gpu_stream_t)env->stream;
  /* One wave of what the device holds: every thread loops. */
  const size_t items =
      vec ? (n / V + UNROLL - 1) / UNROLL : (n + UNROLL - 1) / UNROLL;
  const size_t need = (items + MB_GPU_ELT_BLOCK - 1) / MB_GPU_ELT_BLOCK;
  auto go = [&](auto kernel) {
    unsigned grid = 0;
    const mb_status_t st =
        mb_gpu_grid(env, what, kernel, MB_GPU_ELT_BLOCK, 0, need, 1, &grid);
    if (st != MB_OK) return st;
    MB_GPU_LAUNCH(kernel, grid, MB_GPU_ELT_BLOCK, 0, stream, ptrs, n, f);
    return mb__gpu_launched(env, what);
  };
  return vec ? go(eltwise_kernel<DX, DY, DZ, NIN, NOUT, V, F>)
             : go(eltwise_kernel<DX, DY, DZ, NIN, NOUT, 1, F>);
}

/* activation A from DI into DO. */
template <mb_dtype_t DI, mb_dtype_t DO>
mb_status_t launch_activation(const mb_gpu_env_t *env,
                              const mb_kernel_call_t *call) {
  const mb_op_params_t *p = call->params;
  const float alpha = (float)p->act_alpha;
  switch (p->activation) {
#define MB__ACT(A) \
  case A:          \
    return launch<DI, DI, DO, 1, 1>(env, call, "activation", act_fn<A>{alpha});
    MB__ACT(MB_ACT_RELU)
    MB__ACT(MB_ACT_GELU_TANH)
    MB__ACT(MB_ACT_GELU_ERF)
    MB__ACT(MB_ACT_SILU)
    MB__ACT(MB_ACT_SIGMOID)
    MB__ACT(MB_ACT_LEAKYRELU)
    MB__ACT(MB_ACT_RELU6)
    MB__ACT(MB_ACT_HARDSWISH)
#undef MB__ACT
    default:
      break;
  }
  env->host->set_error("%s: activation %d is not implemented", env->backend,
                       (int)p->activation);
  return MB_ERR_UNSUPPORTED;
}

/* Calls f(mb_gpu_dt<DI>{}, mb_gpu_dt<DO>{}) for an op reading `in` and
 * writing `out`, the ops' output rule (lib/ops/eltwise.h): an fp8 DI into
 * itself, f32, bf16 or f16; a float DI into itself, or with WIDEN (add)
 * into any of f32, bf16, f16. Only these pairs are instantiated. */
template <bool WIDEN, class F>
mb_status_t dispatch_io(mb_dtype_t in, mb_dtype_t out, F &&f) {
  return mb_gpu_dispatch_float(in, [&](auto i) {
    constexpr mb_dtype_t DI = decltype(i)::value;
    if constexpr (DI == MB_DTYPE_F8E4M3 || DI == MB_DTYPE_F8E5M2) {
      if (out == DI) return f(i, i);
      return mb_gpu_dispatch_f32_16(out, [&](auto o) { return f(i, o); });
    } else if constexpr (WIDEN) {
      return mb_gpu_dispatch_f32_16(out, [&](auto o) { return f(i, o); });
    } else {
      return out == DI ? f(i, i) : MB_ERR_UNSUPPORTED;
    }
  });
}

/* Whether dispatch_io takes in -> out (and the second input is in too). */
static int io_ok(bool widen, const mb_op_params_t *p) {
  const mb_dtype_t in = p->dtype, out = p->dtype_out;
  const int fp8 = mb_gpu_is_float(in, 1) && !mb_gpu_is_float(in, 0);
  return p->dtype_b == in && mb_gpu_is_float(in, 1) &&
         (out == in || ((fp8 || widen) && mb_gpu_is_float(out, 0)));
}

/* An op reading fp8 (add with WIDEN, activation, silu_mul) on in -> out,
 * f(DI, DO) launching it; a pair outside dispatch_io's is reported. */
template <bool WIDEN, class F>
mb_status_t run_io(const mb_gpu_env_t *env, const mb_kernel_call_t *call,
                   const char *what, F &&f) {
  const mb_op_params_t *p = call->params;
  if (io_ok(WIDEN, p)) return dispatch_io<WIDEN>(p->dtype, p->dtype_out, f);
  env->host->set_error("%s: %s %s -> %s is not implemented", env->backend, what,
                       env->host->dtype_name(p->dtype),
                       env->host->dtype_name(p->dtype_out));
  return MB_ERR_UNSUPPORTED;
}

/* An op with every operand in one dtype, f32, bf16 or f16. */
template <int NIN, int NOUT, class F>
mb_status_t run_same_dtype(void *kstate, const mb_kernel_call_t *call,
                           const char *what, F f) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  const mb_dtype_t dt = p->dtype;
  if (!mb_gpu_is_float(dt, 0) || p->dtype_b != dt || p->dtype_out != dt)
    return mb_gpu_unsupported_dtype(env, what, dt);
  return mb_gpu_dispatch_f32_16(dt, [&](auto d) {
    constexpr mb_dtype_t D = decltype(d)::value;
    return launch<D, D, D, NIN, NOUT>(env, call, what, f);
  });
}

}  // namespace

extern "C" mb_status_t mb__gpu_add_run(void *kstate,
                                       const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  return run_io<true>(env, call, "add", [&](auto i, auto o) {
    constexpr mb_dtype_t DI = decltype(i)::value;
    return launch<DI, DI, decltype(o)::value, 2, 1>(env, call, "add", add_fn{});
  });
}

extern "C" mb_status_t mb__gpu_activation_run(void *kstate,
                                              const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  return run_io<false>(env, call, "activation", [&](auto i, auto o) {
    return launch_activation<decltype(i)::value, decltype(o)::value>(env, call);
  });
}

extern "C" mb_status_t mb__gpu_silu_mul_run(void *kstate,
                                            const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  return run_io<false>(env, call, "silu_mul", [&](auto i, auto o) {
    constexpr mb_dtype_t DI = decltype(i)::value;
    return launch<DI, DI, decltype(o)::value, 2, 1>(env, call, "silu_mul",
                                                    silu_mul_fn{});
  });
}

extern "C" mb_status_t mb__gpu_swiglu_bwd_run(void *kstate,
                                              const mb_kernel_call_t *call) {
  return run_same_dtype<3, 2>(kstate, call, "swiglu_bwd", swiglu_bwd_fn{});
}

extern "C" mb_status_t mb__gpu_scale_run(void *kstate,
                                         const mb_kernel_call_t *call) {
  return run_same_dtype<1, 1>(kstate, call, "scale", scale_fn{});
}

extern "C" mb_status_t mb__gpu_triad_run(void *kstate,
                                         const mb_kernel_call_t *call) {
  return run_same_dtype<2, 1>(kstate, call, "triad", triad_fn{});
}
