/* Shared GPU kernels: add (Z = X + Y), activation (Y = act(X)) and silu_mul
 * (Z = silu(X) Y) over M*N contiguous elements.
 *
 * One grid-stride kernel, templated on the dtypes, the function and the
 * vector width: each thread loads V elements of every operand at a time
 * (16 bytes of the widest operand) when every pointer is aligned to its
 * vector, computes in f32 and rounds once to the output (mb_gpu_store's
 * rounding); two vectors per iteration keep more loads in flight. Elements
 * past the last whole vector (n % V) are done one by one by the first
 * threads; misaligned operands take the scalar instance (V = 1). */
#include "gpu_eltwise.cuh"

namespace {

enum { UNROLL = 2 };

struct add_fn {
  __device__ float operator()(float x, float y) const { return x + y; }
};

template <int A>
struct act_fn {
  float alpha;
  __device__ float operator()(float x, float) const {
    return mb_gpu_act<A>(x, alpha);
  }
};

struct silu_mul_fn {
  __device__ float operator()(float x, float y) const {
    return x / (1.0f + expf(-x)) * y;
  }
};

/* z[i] = f(x[i], y[i]) (y unread when NIN == 1) for i < n. */
template <mb_dtype_t DX, mb_dtype_t DY, mb_dtype_t DZ, int NIN, int V, class F>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    eltwise_kernel(const void *__restrict__ x, const void *__restrict__ y,
                   void *__restrict__ z, size_t n, F f) {
  const size_t nv = n / V;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  const size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t v = gid;
  for (; v + (UNROLL - 1) * stride < nv; v += UNROLL * stride) {
    float a[UNROLL][V], b[UNROLL][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      mb_gpu_load_vec<DX, V>(x, (v + u * stride) * V, a[u]);
      if constexpr (NIN == 2)
        mb_gpu_load_vec<DY, V>(y, (v + u * stride) * V, b[u]);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < V; ++k)
        a[u][k] = f(a[u][k], NIN == 2 ? b[u][k] : 0.0f);
      mb_gpu_store_vec<DZ, V>(z, (v + u * stride) * V, a[u]);
    }
  }
  for (; v < nv; v += stride) {
    float a[V], b[V];
    mb_gpu_load_vec<DX, V>(x, v * V, a);
    if constexpr (NIN == 2) mb_gpu_load_vec<DY, V>(y, v * V, b);
#pragma unroll
    for (int k = 0; k < V; ++k) a[k] = f(a[k], NIN == 2 ? b[k] : 0.0f);
    mb_gpu_store_vec<DZ, V>(z, v * V, a);
  }
  /* The n % V last elements, one per thread. */
  const size_t i = nv * V + gid;
  if (V > 1 && i < n)
    mb_gpu_store(
        DZ, z, i,
        f(mb_gpu_load(DX, x, i), NIN == 2 ? mb_gpu_load(DY, y, i) : 0.0f));
}

constexpr int max_int(int a, int b) {
  return a > b ? a : b;
}

/* Enqueues z = f(x, y) over n elements, vectorised when every operand's
 * pointer is aligned to its vector. */
template <mb_dtype_t DX, mb_dtype_t DY, mb_dtype_t DZ, int NIN, class F>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call,
                   const char *what, F f) {
  constexpr int S = max_int(max_int(mb_gpu_dt_size(DX), mb_gpu_dt_size(DY)),
                            mb_gpu_dt_size(DZ));
  constexpr int V = 16 / S;
  const mb_op_params_t *p = call->params;
  const size_t n = (size_t)p->shape[0] * (size_t)p->shape[1];
  const void *x = call->in[0];
  const void *y = NIN == 2 ? call->in[1] : NULL;
  void *z = call->out[0];
  const mb_gpu_stream_t stream = (mb_gpu_stream_t)env->stream;
  const int vec =
      mb_gpu_aligned(x, (size_t)V * mb_gpu_dt_size(DX)) &&
      (NIN == 1 || mb_gpu_aligned(y, (size_t)V * mb_gpu_dt_size(DY))) &&
      mb_gpu_aligned(z, (size_t)V * mb_gpu_dt_size(DZ));
  /* One wave of what the device holds: every thread loops. */
  const size_t items =
      vec ? (n / V + UNROLL - 1) / UNROLL : (n + UNROLL - 1) / UNROLL;
  const size_t need = (items + MB_GPU_ELT_BLOCK - 1) / MB_GPU_ELT_BLOCK;
  auto go = [&](auto kernel) {
    unsigned grid = 0;
    const mb_status_t st =
        mb_gpu_grid(env, what, kernel, MB_GPU_ELT_BLOCK, 0, need, 1, &grid);
    if (st != MB_OK) return st;
    MB_GPU_LAUNCH(kernel, grid, MB_GPU_ELT_BLOCK, 0, stream, x, y, z, n, f);
    return mb__gpu_launched(env, what);
  };
  return vec ? go(eltwise_kernel<DX, DY, DZ, NIN, V, F>)
             : go(eltwise_kernel<DX, DY, DZ, NIN, 1, F>);
}

/* activation A on one dtype. */
template <mb_dtype_t D>
mb_status_t launch_activation(const mb_gpu_env_t *env,
                              const mb_kernel_call_t *call) {
  const mb_op_params_t *p = call->params;
  const float alpha = (float)p->act_alpha;
  switch (p->activation) {
#define MB__ACT(A) \
  case A:          \
    return launch<D, D, D, 1>(env, call, "activation", act_fn<A>{alpha});
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

}  // namespace

extern "C" mb_status_t mb__gpu_add_run(void *kstate,
                                       const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  if (!mb_gpu_is_float(p->dtype, 1) || p->dtype_b != p->dtype ||
      !mb_gpu_is_float(p->dtype_out, 0)) {
    env->host->set_error("%s: add %s + %s -> %s is not implemented",
                         env->backend, env->host->dtype_name(p->dtype),
                         env->host->dtype_name(p->dtype_b),
                         env->host->dtype_name(p->dtype_out));
    return MB_ERR_UNSUPPORTED;
  }
  return mb_gpu_dispatch_float(p->dtype, [&](auto in) {
    constexpr mb_dtype_t DI = decltype(in)::value;
    return mb_gpu_dispatch_f32_16(p->dtype_out, [&](auto out) {
      constexpr mb_dtype_t DO = decltype(out)::value;
      return launch<DI, DI, DO, 2>(env, call, "add", add_fn{});
    });
  });
}

extern "C" mb_status_t mb__gpu_activation_run(void *kstate,
                                              const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_dtype_t dt = call->params->dtype;
  if (!mb_gpu_is_float(dt, 0) || call->params->dtype_out != dt)
    return mb_gpu_unsupported_dtype(env, "activation", dt);
  return mb_gpu_dispatch_f32_16(dt, [&](auto d) {
    return launch_activation<decltype(d)::value>(env, call);
  });
}

extern "C" mb_status_t mb__gpu_silu_mul_run(void *kstate,
                                            const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  const mb_dtype_t dt = p->dtype;
  if (!mb_gpu_is_float(dt, 0) || p->dtype_b != dt || p->dtype_out != dt)
    return mb_gpu_unsupported_dtype(env, "silu_mul", dt);
  return mb_gpu_dispatch_f32_16(dt, [&](auto d) {
    constexpr mb_dtype_t D = decltype(d)::value;
    return launch<D, D, D, 2>(env, call, "silu_mul", silu_mul_fn{});
  });
}
