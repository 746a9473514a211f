/* Shared GPU kernel: rmsnorm_bwd (lib/ops/backward.c):
 *   rstd = 1/sqrt(mean(x^2) + eps), g = dy w, c = rstd^2 mean(g x),
 *   dx = rstd (g - x c),  dw = sum over rows of dy x rstd.
 *
 * Three launches on the stream:
 * 1. rows: the forward's row machinery (gpu_rows.cuh: a warp slice or a
 *    block a row, X kept on chip) does the row's two sums (x^2 and g x)
 *    and dX, reading dY (and W) again in the second pass (from L1/L2), and
 *    saves each row's rstd;
 * 2. dW partials: the rows cut into S chunks, each thread one column of
 *    one chunk, summing dy x rstd down it in f32 (coalesced across the
 *    warp) — X and dY are read a second time here, which the op's byte
 *    model (compulsory traffic) does not count;
 * 3. dW: each column's S partials summed in order (deterministic) and
 *    rounded once; without W (MB_PARAM_NO_WEIGHT) S is 0 and dW is zeros.
 * The rstd of every row and the S x N partials live in device scratch the
 * entry allocates in prepare (untimed) and frees in release. */
#include <stdlib.h>

#include "gpu_rows.cuh"

namespace {

/* Phase 1: dX and rstd for the rows of rs (see norm_kernel, gpu_norm.cu). */
template <mb_dtype_t D, int V, bool BLOCK>
__global__ void __launch_bounds__(BLOCK ? 1024 : MB_GPU_ROW_BLOCK)
    rows_kernel(mb_gpu_rows_t rs, const void *__restrict__ x,
                const void *__restrict__ w, const void *__restrict__ dy,
                void *__restrict__ dx, float *__restrict__ rstd_out, int affine,
                float eps) {
  typedef mb_gpu_vec_t<D, V> vec_t;
  MB_GPU_DYN_SMEM(mb_gpu_raw<16>, row_smem);
  mb_gpu_rows_walk<D, V, BLOCK>(
      rs, x, dx, row_smem,
      [&](const auto &r, const auto *xr, auto *dxr, unsigned nv, unsigned t,
          unsigned g, float *scratch) {
        /* Element offset of the row (row 0 for a group past the last). */
        const size_t at = (size_t)(xr - (const vec_t *)x) * V;
        /* g = dy w for the V elements of vector k. */
        auto grad = [&](unsigned k, float(&gv)[V]) {
          mb_gpu_load_vec<D, V>(dy, at + (size_t)k * V, gv);
          if (affine) {
            float wv[V];
            mb_gpu_load_vec<D, V>(w, (size_t)k * V, wv);
#pragma unroll
            for (int e = 0; e < V; ++e) gv[e] *= wv[e];
          }
        };
        float sq = 0.0f, gx = 0.0f;
        r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned k) {
          float gv[V];
          grad(k, gv);
#pragma unroll
          for (int e = 0; e < V; ++e) {
            sq += v[e] * v[e];
            gx += gv[e] * v[e];
          }
        });
        const float n = (float)rs.n;
        const float rstd =
            1.0f / sqrtf(mb_gpu_group_sum<BLOCK>(sq, g, scratch) / n + eps);
        const float c =
            rstd * rstd * (mb_gpu_group_sum<BLOCK>(gx, g, scratch) / n);
        r.each(xr, nv, t, g, [&](const float(&v)[V], unsigned k) {
          float gv[V], o[V];
          grad(k, gv);
#pragma unroll
          for (int e = 0; e < V; ++e) o[e] = rstd * (gv[e] - v[e] * c);
          mb_gpu_st_once(dxr + k, mb_gpu_pack<D, V>(o));
        });
        if (nv && t == 0) rstd_out[at / rs.n] = rstd;
      });
}

/* Phase 2: partial[s][j] = sum of dy x rstd over chunk s of the rows, for
 * every column j. Block b takes strip b % strips of the columns in chunk
 * b / strips (a 1-D grid, strips x chunks blocks). */
template <mb_dtype_t D>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    dw_partial_kernel(const void *__restrict__ x, const void *__restrict__ dy,
                      const float *__restrict__ rstd,
                      float *__restrict__ partial, size_t m, size_t n,
                      size_t chunk, unsigned strips) {
  const size_t s = blockIdx.x / strips;
  const size_t j = (size_t)(blockIdx.x % strips) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const size_t r0 = s * chunk;
  const size_t r1 = r0 + chunk < m ? r0 + chunk : m;
  float acc = 0.0f;
  for (size_t r = r0; r < r1; ++r)
    acc +=
        mb_gpu_load(D, dy, r * n + j) * mb_gpu_load(D, x, r * n + j) * rstd[r];
  partial[s * n + j] = acc;
}

/* Phase 3: dw[j] = the chunks' partials of column j summed in order. */
template <mb_dtype_t D>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    dw_sum_kernel(const float *__restrict__ partial, void *__restrict__ dw,
                  size_t n, unsigned chunks) {
  const size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  float acc = 0.0f;
  for (unsigned s = 0; s < chunks; ++s) acc += partial[(size_t)s * n + j];
  mb_gpu_store(D, dw, j, acc);
}

typedef struct norm_bwd_kernel {
  const mb_gpu_env_t *env;
  unsigned chunks; /* S; 0 without W */
  size_t chunk;    /* rows a chunk */
  float *rstd;     /* m */
  float *partial;  /* chunks x n */
} norm_bwd_kernel_t;

template <mb_dtype_t D>
mb_status_t launch(const norm_bwd_kernel_t *k, const mb_kernel_call_t *call) {
  constexpr int VW = 16 / mb_gpu_dt_size(D);
  const char *what = "rmsnorm_bwd";
  const mb_gpu_env_t *env = k->env;
  const mb_op_params_t *p = call->params;
  const size_t m = (size_t)p->shape[0], n = (size_t)p->shape[1];
  const int affine = !(p->flags & MB_PARAM_NO_WEIGHT);
  const void *x = call->in[0], *dy = call->in[2];
  const void *w = affine ? call->in[1] : NULL;
  void *dx = call->out[0], *dw = call->out[1];
  const float eps = (float)p->eps;
  const mb_gpu_stream_t stream = (mb_gpu_stream_t)env->stream;
  const int vec = n % VW == 0 && mb_gpu_aligned(x, 16) &&
                  mb_gpu_aligned(dy, 16) && mb_gpu_aligned(dx, 16) &&
                  (!w || mb_gpu_aligned(w, 16));
  mb_status_t st =
      vec ? mb_gpu_rows_launch<D, VW>(
                env, what, m, n, rows_kernel<D, VW, false>,
                rows_kernel<D, VW, true>, x, w, dy, dx, k->rstd, affine, eps)
          : mb_gpu_rows_launch<D, 1>(env, what, m, n, rows_kernel<D, 1, false>,
                                     rows_kernel<D, 1, true>, x, w, dy, dx,
                                     k->rstd, affine, eps);
  if (st != MB_OK) return st;
  const unsigned strips =
      (unsigned)((n + MB_GPU_ELT_BLOCK - 1) / MB_GPU_ELT_BLOCK);
  if (k->chunks) {
    MB_GPU_LAUNCH(dw_partial_kernel<D>, strips * k->chunks, MB_GPU_ELT_BLOCK, 0,
                  stream, x, dy, k->rstd, k->partial, m, n, k->chunk, strips);
    if ((st = mb__gpu_launched(env, what)) != MB_OK) return st;
  }
  MB_GPU_LAUNCH(dw_sum_kernel<D>, strips, MB_GPU_ELT_BLOCK, 0, stream,
                k->partial, dw, n, k->chunks);
  return mb__gpu_launched(env, what);
}

}  // namespace

extern "C" void mb__gpu_rmsnorm_bwd_release(void *kstate) {
  norm_bwd_kernel_t *k = (norm_bwd_kernel_t *)kstate;
  if (!k) return;
  if (k->rstd) k->env->scratch_free(k->env, k->rstd);
  if (k->partial) k->env->scratch_free(k->env, k->partial);
  free(k);
}

/* Chunks of rows for dW: enough (strip, chunk) blocks to fill the device
 * 8 times over, each chunk at least 16 rows (fewer would spend more on the
 * partials than on the rows). */
extern "C" mb_status_t mb__gpu_rmsnorm_bwd_prepare(void *bstate,
                                                   const mb_kernel_call_t *call,
                                                   void **kstate) {
  *kstate = NULL;
  const mb_gpu_env_t *env = NULL;
  mb_status_t st = mb__gpu_device_env(bstate, call->device, &env);
  if (st != MB_OK) return st; /* the backend said why */
  const mb_op_params_t *p = call->params;
  if (!mb_gpu_is_float(p->dtype, 0) || p->dtype_out != p->dtype)
    return mb_gpu_unsupported_dtype(env, "rmsnorm_bwd", p->dtype);
  const size_t m = (size_t)p->shape[0], n = (size_t)p->shape[1];
  norm_bwd_kernel_t *k = (norm_bwd_kernel_t *)calloc(1, sizeof *k);
  if (!k) {
    env->host->set_error("%s: rmsnorm_bwd: out of host memory", env->backend);
    return MB_ERR_NO_MEMORY;
  }
  k->env = env;
  if (!(p->flags & MB_PARAM_NO_WEIGHT)) {
    const size_t strips = (n + MB_GPU_ELT_BLOCK - 1) / MB_GPU_ELT_BLOCK;
    const size_t want = (size_t)(env->sm_count > 0 ? env->sm_count : 1) * 8;
    size_t chunks = (want + strips - 1) / strips;
    const size_t most = (m + 15) / 16;
    if (chunks > most) chunks = most;
    if (chunks * strips > 0x7FFFFFFFu) chunks = 0x7FFFFFFFu / strips;
    k->chunk = (m + chunks - 1) / chunks;
    k->chunks = (unsigned)((m + k->chunk - 1) / k->chunk);
  }
  void *rstd = NULL, *partial = NULL;
  st = env->scratch_alloc(env, m * sizeof(float), &rstd);
  k->rstd = (float *)rstd;
  if (st == MB_OK && k->chunks)
    st = env->scratch_alloc(env, (size_t)k->chunks * n * sizeof(float),
                            &partial);
  k->partial = (float *)partial;
  if (st != MB_OK) {
    mb__gpu_rmsnorm_bwd_release(k);
    return st;
  }
  *kstate = k;
  return MB_OK;
}

extern "C" mb_status_t mb__gpu_rmsnorm_bwd_run(void *kstate,
                                               const mb_kernel_call_t *call) {
  const norm_bwd_kernel_t *k = (const norm_bwd_kernel_t *)kstate;
  return mb_gpu_dispatch_f32_16(call->params->dtype, [&](auto d) {
    return launch<decltype(d)::value>(k, call);
  });
}
