/* Shared GPU kernel: softmax over the last dimension of X[M,N]
 * (lib/ops/softmax.c): Y = exp(X - max) / sum exp(X - max), in f32.
 *
 * A row belongs to a warp slice (short rows) or a block (long rows) and is
 * read once into registers, and for the longest rows shared memory
 * (gpu_rows.cuh). Three passes over the kept row, as
 * backends/cpu/cpu_softmax_c.c: the max; the sum of exp(x - max); the
 * output exp(x - max) * (1 / sum), rounded once. The row is kept as it was
 * loaded (16-bit data packed), not as exp(x - max) in f32, so the last
 * pass computes the exponentials again: the same f32 values, for half the
 * registers. Rows of a whole number of 16-byte vectors with aligned
 * operands move in vectors, others element by element. */
#include "gpu_rows.cuh"

namespace {

/* The rows of rs as mb_gpu_rows_launch planned them (a warp slice or, with
 * BLOCK, the block a row). */
template <mb_dtype_t D, int V, bool BLOCK>
__global__ void __launch_bounds__(BLOCK ? 1024 : MB_GPU_ROW_BLOCK)
    softmax_kernel(mb_gpu_rows_t rs, const void *__restrict__ x,
                   void *__restrict__ y) {
  MB_GPU_DYN_SMEM(mb_gpu_raw<16>, row_smem);
  mb_gpu_rows_walk<D, V, BLOCK>(
      rs, x, y, row_smem,
      [&](const auto &r, const auto *xr, auto *yr, unsigned nv, unsigned t,
          unsigned g, float *scratch) {
        float mx = -INFINITY;
        r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned) {
#pragma unroll
          for (int e = 0; e < V; ++e) mx = fmaxf(mx, v[e]);
        });
        mx = mb_gpu_group_max<BLOCK>(mx, g, scratch);
        float sum = 0.0f;
        r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned) {
#pragma unroll
          for (int e = 0; e < V; ++e) sum += expf(v[e] - mx);
        });
        const float inv = 1.0f / mb_gpu_group_sum<BLOCK>(sum, g, scratch);
        r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned k) {
          float o[V];
#pragma unroll
          for (int e = 0; e < V; ++e) o[e] = expf(v[e] - mx) * inv;
          mb_gpu_st_once(yr + k, mb_gpu_pack<D, V>(o));
        });
      });
}

template <mb_dtype_t D>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call) {
  constexpr int VW = 16 / mb_gpu_dt_size(D);
  const mb_op_params_t *p = call->params;
  const size_t m = (size_t)p->shape[0], n = (size_t)p->shape[1];
  const void *x = call->in[0];
  void *y = call->out[0];
  const int vec = n % VW == 0 && mb_gpu_aligned(x, 16) && mb_gpu_aligned(y, 16);
  if (vec)
    return mb_gpu_rows_launch<D, VW>(env, "softmax", m, n,
                                     softmax_kernel<D, VW, false>,
                                     softmax_kernel<D, VW, true>, x, y);
  return mb_gpu_rows_launch<D, 1>(env, "softmax", m, n,
                                  softmax_kernel<D, 1, false>,
                                  softmax_kernel<D, 1, true>, x, y);
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
