/* Shared GPU kernels: layernorm and rmsnorm over the last dimension of
 * X[M,N] (lib/ops/norm.c):
 *   layernorm: Y = (X - mean) rstd W + Bias, rstd = 1/sqrt(var + eps),
 *              var biased (/N), two-pass around the mean;
 *   rmsnorm:   Y = X rstd W, rstd = 1/sqrt(mean(X^2) + eps);
 * W and Bias ignored with MB_PARAM_NO_WEIGHT.
 *
 * A row belongs to a warp slice (short rows) or a block (long rows) and is
 * read once into registers, and for the longest rows shared memory
 * (gpu_rows.cuh): the mean, the sum of squared deviations around it and
 * the output are passes over what is kept, each a per-thread f32 sum and a
 * shuffle/block reduction; the same f32 steps as
 * backends/cpu/cpu_norm_c.c, one rounding to Y. Rows whose length is a
 * multiple of the 16-byte vector, with aligned operands, move in 16-byte
 * vectors; others element by element. */
#include "gpu_rows.cuh"

namespace {

/* The rows of rs as mb_gpu_rows_launch planned them (a warp slice or, with
 * BLOCK, the block a row); W and Bias unread unless affine. */
template <mb_dtype_t D, int V, bool BLOCK, bool RMS>
__global__ void __launch_bounds__(BLOCK ? 1024 : MB_GPU_ROW_BLOCK)
    norm_kernel(mb_gpu_rows_t rs, const void *__restrict__ x,
                const void *__restrict__ w, const void *__restrict__ b,
                void *__restrict__ y, int affine, float eps) {
  MB_GPU_DYN_SMEM(mb_gpu_raw<16>, row_smem);
  mb_gpu_rows_walk<D, V, BLOCK>(
      rs, x, y, row_smem,
      [&](const auto &r, const auto *xr, auto *yr, unsigned nv, unsigned t,
          unsigned g, float *scratch) {
        float mean = 0.0f;
        if (!RMS) {
          float sum = 0.0f;
          r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned) {
#pragma unroll
            for (int e = 0; e < V; ++e) sum += v[e];
          });
          mean = mb_gpu_group_sum<BLOCK>(sum, g, scratch) / (float)rs.n;
        }
        float sq = 0.0f;
        r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned) {
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const float d = v[e] - mean;
            sq += d * d;
          }
        });
        const float rstd =
            1.0f /
            sqrtf(mb_gpu_group_sum<BLOCK>(sq, g, scratch) / (float)rs.n + eps);
        r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned k) {
          float o[V];
          if (affine) {
            float wv[V], bv[V];
            mb_gpu_load_vec<D, V>(w, (size_t)k * V, wv);
            if (RMS) {
#pragma unroll
              for (int e = 0; e < V; ++e) o[e] = v[e] * rstd * wv[e];
            } else {
              mb_gpu_load_vec<D, V>(b, (size_t)k * V, bv);
#pragma unroll
              for (int e = 0; e < V; ++e)
                o[e] = (v[e] - mean) * rstd * wv[e] + bv[e];
            }
          } else {
#pragma unroll
            for (int e = 0; e < V; ++e) o[e] = (v[e] - mean) * rstd;
          }
          mb_gpu_st_once(yr + k, mb_gpu_pack<D, V>(o));
        });
      });
}

template <mb_dtype_t D, bool RMS>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call) {
  constexpr int VW = 16 / mb_gpu_dt_size(D);
  const char *what = RMS ? "rmsnorm" : "layernorm";
  const mb_op_params_t *p = call->params;
  const size_t m = (size_t)p->shape[0], n = (size_t)p->shape[1];
  const int affine = !(p->flags & MB_PARAM_NO_WEIGHT);
  const void *x = call->in[0];
  const void *w = affine ? call->in[1] : NULL;
  const void *b = affine && !RMS ? call->in[2] : NULL;
  void *y = call->out[0];
  const float eps = (float)p->eps;
  /* Every row starts on a vector when n is a multiple of it. */
  const int vec = n % VW == 0 && mb_gpu_aligned(x, 16) &&
                  mb_gpu_aligned(y, 16) && (!w || mb_gpu_aligned(w, 16)) &&
                  (!b || mb_gpu_aligned(b, 16));
  if (vec)
    return mb_gpu_rows_launch<D, VW>(
        env, what, m, n, norm_kernel<D, VW, false, RMS>,
        norm_kernel<D, VW, true, RMS>, x, w, b, y, affine, eps);
  return mb_gpu_rows_launch<D, 1>(
      env, what, m, n, norm_kernel<D, 1, false, RMS>,
      norm_kernel<D, 1, true, RMS>, x, w, b, y, affine, eps);
}

template <bool RMS>
mb_status_t run(void *kstate, const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  const char *what = RMS ? "rmsnorm" : "layernorm";
  if (!mb_gpu_is_float(p->dtype, 0) || p->dtype_out != p->dtype)
    return mb_gpu_unsupported_dtype(env, what, p->dtype);
  return mb_gpu_dispatch_f32_16(p->dtype, [&](auto d) {
    return launch<decltype(d)::value, RMS>(env, call);
  });
}

}  // namespace

extern "C" mb_status_t mb__gpu_layernorm_run(void *kstate,
                                             const mb_kernel_call_t *call) {
  return run<false>(kstate, call);
}

extern "C" mb_status_t mb__gpu_rmsnorm_run(void *kstate,
                                           const mb_kernel_call_t *call) {
  return run<true>(kstate, call);
}
