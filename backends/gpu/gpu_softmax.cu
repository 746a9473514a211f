/* Shared GPU kernel: softmax over the last dimension of X[M,N]
 * (lib/ops/softmax.c): Y = exp(X - max) / sum exp(X - max), in f32.
 *
 * A row belongs to a warp slice (short rows) or a block (long rows) and is
 * read once into registers and, for long rows, shared memory
 * (gpu_eltwise.cuh, mb_gpu_row). Three passes over the cached row, as
 * backends/cpu/cpu_softmax_c.c: the max; exp(x - max), kept in place of x,
 * and its sum; the output exp(x - max) * (1 / sum), rounded once. Rows of a
 * whole number of 16-byte vectors with aligned operands move in vectors,
 * others element by element. */
#include "gpu_eltwise.cuh"

namespace {

template <mb_dtype_t D, int V, bool BLOCK>
__global__ void __launch_bounds__(BLOCK ? 1024 : MB_GPU_ROW_BLOCK)
    softmax_kernel(const void *__restrict__ x, void *__restrict__ y, size_t m,
                   size_t n, unsigned g, size_t scap) {
  MB_GPU_DYN_SMEM(float, row_smem);
  __shared__ float scratch[32];
  const size_t nvec = n / V, rows_per_block = blockDim.x / g;
  const unsigned t = threadIdx.x % g;
  const size_t blocks = (m + rows_per_block - 1) / rows_per_block;
  for (size_t rb = blockIdx.x; rb < blocks; rb += gridDim.x) {
    const size_t row = rb * rows_per_block + threadIdx.x / g;
    /* Groups past the last row still take part in the reductions. */
    const size_t nv = row < m ? nvec : 0;
    const size_t base = row * n;
    mb_gpu_row<D, V> r;
    r.sm = row_smem;
    r.scap = BLOCK ? scap : 0;
    r.load(x, base, nv, t, g);
    float mx = -INFINITY;
    r.template each<false>(x, base, nv, t, g, [&](float(&v)[V], size_t, bool) {
#pragma unroll
      for (int e = 0; e < V; ++e) mx = fmaxf(mx, v[e]);
    });
    mx = mb_gpu_group_max<BLOCK>(mx, g, scratch);
    float sum = 0.0f;
    r.template each<true>(x, base, nv, t, g, [&](float(&v)[V], size_t, bool) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        v[e] = expf(v[e] - mx);
        sum += v[e];
      }
    });
    const float inv = 1.0f / mb_gpu_group_sum<BLOCK>(sum, g, scratch);
    r.template each<false>(x, base, nv, t, g,
                           [&](float(&v)[V], size_t k, bool cached) {
                             float o[V];
#pragma unroll
                             for (int e = 0; e < V; ++e)
                               o[e] = (cached ? v[e] : expf(v[e] - mx)) * inv;
                             mb_gpu_store_vec<D, V>(y, base + k * V, o);
                           });
  }
}

template <mb_dtype_t D>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call) {
  constexpr int VW = 16 / mb_gpu_dt_size(D);
  const mb_op_params_t *p = call->params;
  const size_t m = (size_t)p->shape[0], n = (size_t)p->shape[1];
  const void *x = call->in[0];
  void *y = call->out[0];
  const int vec = n % VW == 0 && mb_gpu_aligned(x, 16) && mb_gpu_aligned(y, 16);
  const mb_gpu_row_plan_t pl =
      mb_gpu_row_plan(env, m, n, vec ? VW : 1, 32 * sizeof(float));
  if (vec && pl.block_mode)
    return mb_gpu_row_launch(env, &pl, "softmax", softmax_kernel<D, VW, true>,
                             x, y, m, n, pl.group, pl.scap);
  if (vec)
    return mb_gpu_row_launch(env, &pl, "softmax", softmax_kernel<D, VW, false>,
                             x, y, m, n, pl.group, pl.scap);
  if (pl.block_mode)
    return mb_gpu_row_launch(env, &pl, "softmax", softmax_kernel<D, 1, true>, x,
                             y, m, n, pl.group, pl.scap);
  return mb_gpu_row_launch(env, &pl, "softmax", softmax_kernel<D, 1, false>, x,
                           y, m, n, pl.group, pl.scap);
}

}  // namespace

extern "C" mb_status_t mb__gpu_softmax_run(void *kstate,
                                           const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  if (!mb_gpu_is_float(p->dtype, 0) || p->dtype_out != p->dtype)
    return mb_gpu_unsupported_dtype(env, "softmax", p->dtype);
  return mb_gpu_dispatch_f32_16(
      p->dtype, [&](auto d) { return launch<decltype(d)::value>(env, call); });
}
