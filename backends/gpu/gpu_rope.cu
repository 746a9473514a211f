/* Shared GPU kernel: rope (rotary position embedding, lib/ops/rope.c):
 * Y[.., 2j] = x0 c - x1 s, Y[.., 2j+1] = x0 s + x1 c, (c, s) = F[pos,
 * 2j..2j+1] from the op's f32 table, in f32, rounded once to Y.
 *
 * One grid-stride kernel over X's elements, V at a time: a 16-byte vector
 * of X (4 f32, 8 bf16/f16) and the same V floats of F (whole 16-byte
 * words), when D is a multiple of V (a vector never crosses a row, so one
 * position serves it) and every pointer is 16-byte aligned; otherwise one
 * pair at a time, element by element. F is S x D, read once per (batch,
 * head) from L2 at most: it is B H times smaller than X. */
#include "gpu_eltwise.cuh"

namespace {

/* V elements of X from element i of row position `pos`, in accesses of W
 * elements (W = V: one vector; W = 1: one by one), and their V floats of
 * F in accesses of up to 4. */
template <mb_dtype_t D, int V, int W>
__device__ __forceinline__ void rope_step(const void *__restrict__ x,
                                          const float *__restrict__ f,
                                          void *__restrict__ y, size_t i,
                                          size_t d, size_t s_len) {
  constexpr int FW = W == 1 ? 1 : (V < 4 ? V : 4);
  const size_t col = i % d, pos = (i / d) % s_len;
  const float *fr = f + pos * d + col;
  float a[V], t[V], o[V];
#pragma unroll
  for (int k = 0; k < V; k += W)
    mb_gpu_load_vec<D, W>(x, i + k, *(float(*)[W])(a + k));
#pragma unroll
  for (int k = 0; k < V; k += FW)
    mb_gpu_load_vec<MB_DTYPE_F32, FW>(fr, (size_t)k, *(float(*)[FW])(t + k));
#pragma unroll
  for (int e = 0; e < V; e += 2) {
    o[e] = a[e] * t[e] - a[e + 1] * t[e + 1];
    o[e + 1] = a[e] * t[e + 1] + a[e + 1] * t[e];
  }
#pragma unroll
  for (int k = 0; k < V; k += W)
    mb_gpu_store_vec<D, W>(y, i + k, *(const float(*)[W])(o + k));
}

template <mb_dtype_t D, int V, int W>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    rope_kernel(const void *__restrict__ x, const float *__restrict__ f,
                void *__restrict__ y, size_t n, size_t d, size_t s_len) {
  const size_t nv = n / V;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x; v < nv;
       v += stride)
    rope_step<D, V, W>(x, f, y, v * V, d, s_len);
}

template <mb_dtype_t D>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call) {
  constexpr int VW = 16 / mb_gpu_dt_size(D);
  const mb_op_params_t *p = call->params;
  const size_t s_len = (size_t)p->shape[2], d = (size_t)p->shape[3];
  const size_t n = (size_t)p->shape[0] * (size_t)p->shape[1] * s_len * d;
  const void *x = call->in[0];
  const float *f = (const float *)call->in[1];
  void *y = call->out[0];
  const int vec = d % VW == 0 && mb_gpu_aligned(x, 16) &&
                  mb_gpu_aligned(f, 16) && mb_gpu_aligned(y, 16);
  const size_t items = n / (vec ? VW : 2);
  const size_t need = (items + MB_GPU_ELT_BLOCK - 1) / MB_GPU_ELT_BLOCK;
  const mb_gpu_stream_t stream = (mb_gpu_stream_t)env->stream;
  auto go = [&](auto kernel) {
    unsigned grid = 0;
    const mb_status_t st =
        mb_gpu_grid(env, "rope", kernel, MB_GPU_ELT_BLOCK, 0, need, 1, &grid);
    if (st != MB_OK) return st;
    MB_GPU_LAUNCH(kernel, grid, MB_GPU_ELT_BLOCK, 0, stream, x, f, y, n, d,
                  s_len);
    return mb__gpu_launched(env, "rope");
  };
  return vec ? go(rope_kernel<D, VW, VW>) : go(rope_kernel<D, 2, 1>);
}

}  // namespace

extern "C" mb_status_t mb__gpu_rope_run(void *kstate,
                                        const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  if (!mb_gpu_is_float(p->dtype, 0) || p->dtype_out != p->dtype)
    return mb_gpu_unsupported_dtype(env, "rope", p->dtype);
  return mb_gpu_dispatch_f32_16(
      p->dtype, [&](auto d) { return launch<decltype(d)::value>(env, call); });
}
