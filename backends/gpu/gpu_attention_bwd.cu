/* Shared GPU kernel: attention_bwd (lib/ops/attention_bwd.c), the
 * gradients of attention from the forward's O and row log-sum-exp L, as
 * FlashAttention-2 computes them, in f32 on the SIMT units:
 *   P = exp(Q K^T scale - L), delta = rowsum(dO o O), dP = dO V^T,
 *   dS = P (dP - delta), dV = P^T dO, dK = dS^T Q scale, dQ = dS K scale.
 * Layouts, mask and grouped-query heads as the forward's (gpu_attention.cu):
 * [B,H,S,D] or, MB_PARAM_BSHD, [B,S,H,D]; causal bottom-right aligned;
 * query head h reads K/V head h / (H / Hkv).
 *
 * A correct baseline, not a tuned one. Two launches, so that no output
 * needs atomics:
 * 1. dK, dV: one block of 256 threads per (batch, K/V head, tile of BT
 *    keys), K and V tiles in shared memory; for each query head of the
 *    group and each tile of BT queries that sees a key of the tile: Q and
 *    dO tiles (and delta of their rows, from O) into shared memory, the
 *    BT x BT tile of P and dS, then each thread's share of the BT x DMAX
 *    dK and dV accumulators (registers) takes the tile's P^T dO and
 *    dS^T Q;
 * 2. dQ: one block per (batch, query head, tile of BT queries), the Q and
 *    dO tiles (and delta) loaded once; for each key tile up to the last
 *    visible key, the tile of dS again and each thread's share of dQ takes
 *    dS K.
 * P and dS are recomputed in both (FA2 computes them once and adds dQ
 * atomically); each output is rounded once. Every load converts to f32.
 *
 * Tiles by head dim (DMAX: D rounded up to 32, 64, 128 or 256) and the
 * device's shared memory: BT = 32 where 4 DMAX-wide tiles and the two
 * score tiles fit the opt-in limit (DMAX 128: 73 KiB), else BT = 16.
 * D > 256 is declined. */
#include "gpu_attention.cuh"

namespace {

constexpr int THREADS = 256;
constexpr int MAX_D = 256;

/* Floats of shared memory: Q, dO, K, V tiles (BT rows of DMAX + 1: the
 * score loops read along rows without bank conflicts), P and dS (BT x
 * (BT + 1)), and the query rows' L and delta. */
constexpr size_t smem_floats(int dmax, int bt) {
  return 4 * (size_t)bt * (dmax + 1) + 2 * (size_t)bt * (bt + 1) +
         2 * (size_t)bt;
}

/* The kernels' shared state and parameters. */
struct bwd_args {
  const void *q, *k, *v, *o, *dout;
  const float *l;
  void *dq, *dk, *dv;
  size_t batch, heads, kv_heads, sq, skv;
  int d, causal, bshd;
  float scale;
};

template <int DMAX, int BT>
struct tiles {
  static constexpr int RS = DMAX + 1, PS = BT + 1;
  float *qs, *ds_o, *ks, *vs, *ps, *dss, *ls, *dls;
  __device__ explicit tiles(float *smem) {
    qs = smem;
    ds_o = qs + BT * RS; /* dO */
    ks = ds_o + BT * RS;
    vs = ks + BT * RS;
    ps = vs + BT * RS;
    dss = ps + BT * PS;
    ls = dss + BT * PS;
    dls = ls + BT;
  }
};

/* BT rows of a [.., D] tensor from element `base`, rows `ld` apart, as f32
 * into dst (rows RS apart), zero past n rows and past d. */
template <mb_dtype_t DT, int DMAX, int BT>
__device__ void load_tile(float *dst, const void *src, size_t base, size_t ld,
                          int n, int d) {
  for (int e = threadIdx.x; e < BT * DMAX; e += THREADS) {
    const int r = e / DMAX, c = e % DMAX;
    dst[r * (DMAX + 1) + c] =
        r < n && c < d ? mb_gpu_load(DT, src, base + (size_t)r * ld + c) : 0.0f;
  }
}

/* Q, dO of query rows [i0, i0 + qn) of (batch, head) bh, their L and
 * delta = rowsum(dO o O) (f32). */
template <mb_dtype_t DT, int DMAX, int BT>
__device__ void load_queries(const bwd_args &a, const tiles<DMAX, BT> &t,
                             size_t bh, size_t i0, int qn) {
  const size_t ld = a.bshd ? a.heads * (size_t)a.d : (size_t)a.d;
  const size_t base = mb_gpu_att_row(bh, a.sq, i0, a.heads, a.d, a.bshd);
  load_tile<DT, DMAX, BT>(t.qs, a.q, base, ld, qn, a.d);
  load_tile<DT, DMAX, BT>(t.ds_o, a.dout, base, ld, qn, a.d);
  __syncthreads();
  for (int r = threadIdx.x; r < BT; r += THREADS) {
    float s = 0.0f;
    for (int c = 0; r < qn && c < a.d; ++c)
      s += t.ds_o[r * (DMAX + 1) + c] *
           mb_gpu_load(DT, a.o, base + (size_t)r * ld + c);
    t.dls[r] = s;
    t.ls[r] = r < qn ? a.l[bh * a.sq + i0 + (size_t)r] : 0.0f;
  }
}

/* P and dS of the query tile at i0 against the key tile at j0 (kn keys),
 * zero where masked or padded. */
template <int DMAX, int BT>
__device__ void score_tile(const bwd_args &a, const tiles<DMAX, BT> &t,
                           size_t i0, int qn, size_t j0, int kn) {
  constexpr int RS = DMAX + 1, PS = BT + 1;
  const size_t off = a.skv - a.sq; /* causal: sq <= skv (the op checks) */
  for (int e = threadIdx.x; e < BT * BT; e += THREADS) {
    const int r = e / BT, j = e % BT;
    bool in = r < qn && j < kn;
    if (a.causal) in = in && j0 + (size_t)j <= i0 + (size_t)r + off;
    float s = 0.0f, dp = 0.0f;
    for (int c = 0; in && c < a.d; ++c) {
      s += t.qs[r * RS + c] * t.ks[j * RS + c];
      dp += t.ds_o[r * RS + c] * t.vs[j * RS + c];
    }
    const float p = in ? expf(s * a.scale - t.ls[r]) : 0.0f;
    t.ps[r * PS + j] = p;
    t.dss[r * PS + j] = p * (dp - t.dls[r]);
  }
}

/* 1. dK, dV of (batch, K/V head, key tile) tasks. */
template <mb_dtype_t DT, int DMAX, int BT>
__global__ void __launch_bounds__(THREADS)
    dkv_kernel(bwd_args a, size_t ktiles, size_t tasks) {
  constexpr int RS = DMAX + 1, PS = BT + 1, E = BT * DMAX / THREADS;
  static_assert(BT * DMAX % THREADS == 0, "accumulator share");
  MB_GPU_DYN_SMEM(float, smem);
  const tiles<DMAX, BT> t(smem);
  const size_t group = a.heads / a.kv_heads, off = a.skv - a.sq;
  const size_t kv_ld = a.bshd ? a.kv_heads * (size_t)a.d : (size_t)a.d;
  for (size_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    const size_t kvbh = task / ktiles, j0 = task % ktiles * BT;
    const size_t b = kvbh / a.kv_heads, g = kvbh % a.kv_heads;
    const int kn = a.skv - j0 < (size_t)BT ? (int)(a.skv - j0) : BT;
    const size_t kbase =
        mb_gpu_att_row(kvbh, a.skv, j0, a.kv_heads, a.d, a.bshd);
    __syncthreads(); /* the previous task is done with shared memory */
    load_tile<DT, DMAX, BT>(t.ks, a.k, kbase, kv_ld, kn, a.d);
    load_tile<DT, DMAX, BT>(t.vs, a.v, kbase, kv_ld, kn, a.d);
    float dk[E], dv[E];
    for (int x = 0; x < E; ++x) dk[x] = dv[x] = 0.0f;
    /* The first query that sees key j0. */
    const size_t first = a.causal && j0 > off ? j0 - off : 0;
    for (size_t h = g * group; h < (g + 1) * group; ++h)
      for (size_t i0 = first / BT * BT; i0 < a.sq; i0 += BT) {
        const int qn = a.sq - i0 < (size_t)BT ? (int)(a.sq - i0) : BT;
        __syncthreads(); /* readers of the previous query tile are done */
        load_queries<DT, DMAX, BT>(a, t, b * a.heads + h, i0, qn);
        __syncthreads();
        score_tile<DMAX, BT>(a, t, i0, qn, j0, kn);
        __syncthreads();
        for (int x = 0; x < E; ++x) {
          const int e = threadIdx.x + THREADS * x, j = e / DMAX, c = e % DMAX;
          float sv = 0.0f, sk = 0.0f;
          for (int r = 0; r < BT; ++r) {
            sv += t.ps[r * PS + j] * t.ds_o[r * RS + c];
            sk += t.dss[r * PS + j] * t.qs[r * RS + c];
          }
          dv[x] += sv;
          dk[x] += sk;
        }
      }
    for (int x = 0; x < E; ++x) {
      const int e = threadIdx.x + THREADS * x, j = e / DMAX, c = e % DMAX;
      if (j < kn && c < a.d) {
        const size_t idx = kbase + (size_t)j * kv_ld + c;
        mb_gpu_store(DT, a.dk, idx, dk[x] * a.scale);
        mb_gpu_store(DT, a.dv, idx, dv[x]);
      }
    }
  }
}

/* 2. dQ of (batch, query head, query tile) tasks. */
template <mb_dtype_t DT, int DMAX, int BT>
__global__ void __launch_bounds__(THREADS)
    dq_kernel(bwd_args a, size_t qtiles, size_t tasks) {
  constexpr int RS = DMAX + 1, PS = BT + 1, E = BT * DMAX / THREADS;
  MB_GPU_DYN_SMEM(float, smem);
  const tiles<DMAX, BT> t(smem);
  const size_t group = a.heads / a.kv_heads, off = a.skv - a.sq;
  const size_t ld = a.bshd ? a.heads * (size_t)a.d : (size_t)a.d;
  const size_t kv_ld = a.bshd ? a.kv_heads * (size_t)a.d : (size_t)a.d;
  for (size_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    const size_t bh = task / qtiles, i0 = task % qtiles * BT;
    const size_t kvbh = bh / a.heads * a.kv_heads + bh % a.heads / group;
    const int qn = a.sq - i0 < (size_t)BT ? (int)(a.sq - i0) : BT;
    const size_t last = a.causal ? i0 + (size_t)qn - 1 + off : a.skv - 1;
    __syncthreads(); /* the previous task is done with shared memory */
    load_queries<DT, DMAX, BT>(a, t, bh, i0, qn);
    float dq[E];
    for (int x = 0; x < E; ++x) dq[x] = 0.0f;
    for (size_t j0 = 0; j0 <= last; j0 += BT) {
      const int kn = a.skv - j0 < (size_t)BT ? (int)(a.skv - j0) : BT;
      const size_t kbase =
          mb_gpu_att_row(kvbh, a.skv, j0, a.kv_heads, a.d, a.bshd);
      __syncthreads(); /* readers of the previous key tile are done */
      load_tile<DT, DMAX, BT>(t.ks, a.k, kbase, kv_ld, kn, a.d);
      load_tile<DT, DMAX, BT>(t.vs, a.v, kbase, kv_ld, kn, a.d);
      __syncthreads();
      score_tile<DMAX, BT>(a, t, i0, qn, j0, kn);
      __syncthreads();
      for (int x = 0; x < E; ++x) {
        const int e = threadIdx.x + THREADS * x, r = e / DMAX, c = e % DMAX;
        float s = 0.0f;
        for (int j = 0; j < BT; ++j) s += t.dss[r * PS + j] * t.ks[j * RS + c];
        dq[x] += s;
      }
    }
    const size_t base = mb_gpu_att_row(bh, a.sq, i0, a.heads, a.d, a.bshd);
    for (int x = 0; x < E; ++x) {
      const int e = threadIdx.x + THREADS * x, r = e / DMAX, c = e % DMAX;
      if (r < qn && c < a.d)
        mb_gpu_store(DT, a.dq, base + (size_t)r * ld + c, dq[x] * a.scale);
    }
  }
}

/* Raises a kernel's dynamic shared memory past 48 KiB where it needs to. */
template <typename K>
mb_status_t raise_smem(const mb_gpu_env_t *env, K kernel, size_t bytes) {
  if (bytes <= 48u * 1024u) return MB_OK;
  const mb_gpu_error_t e = mb_gpu_func_set_max_smem(kernel, (int)bytes);
  if (e == mb_gpu_success) return MB_OK;
  (void)mb_gpu_get_last_error();
  env->host->set_error(
      "%s: attention_bwd: raising shared memory to %zu bytes: %s", env->backend,
      bytes, mb_gpu_error_string(e));
  return MB_ERR_BACKEND;
}

/* Enqueues both kernels at <DMAX, BT> if their shared memory fits the
 * device; *fits says whether it did. */
template <mb_dtype_t DT, int DMAX, int BT>
mb_status_t try_launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call,
                       int *fits) {
  const size_t bytes = smem_floats(DMAX, BT) * sizeof(float);
  const size_t limit =
      env->smem_optin > 48u * 1024u ? env->smem_optin : 48u * 1024u;
  *fits = bytes <= limit;
  if (!*fits) return MB_OK;
  const mb_op_params_t *p = call->params;
  bwd_args a;
  a.q = call->in[0], a.k = call->in[1], a.v = call->in[2];
  a.o = call->in[3], a.dout = call->in[4];
  a.l = (const float *)call->in[5];
  a.dq = call->out[0], a.dk = call->out[1], a.dv = call->out[2];
  a.batch = (size_t)p->shape[0];
  a.heads = (size_t)p->shape[1];
  /* 0 (params not resolved) is the op's default, H. */
  a.kv_heads = (size_t)(p->kv_heads ? p->kv_heads : p->shape[1]);
  a.sq = (size_t)p->shape[2];
  a.skv = (size_t)p->shape[3];
  a.d = (int)p->shape[4];
  a.causal = (p->flags & MB_PARAM_CAUSAL) != 0;
  a.bshd = (p->flags & MB_PARAM_BSHD) != 0;
  a.scale = (float)(1.0 / sqrt((double)p->shape[4]));
  auto dkv = dkv_kernel<DT, DMAX, BT>;
  auto dq = dq_kernel<DT, DMAX, BT>;
  mb_status_t st = raise_smem(env, dkv, bytes);
  if (st == MB_OK) st = raise_smem(env, dq, bytes);
  if (st != MB_OK) return st;
  const size_t ktiles = (a.skv + BT - 1) / BT, qtiles = (a.sq + BT - 1) / BT;
  const size_t kv_tasks = a.batch * a.kv_heads * ktiles;
  const size_t q_tasks = a.batch * a.heads * qtiles;
  /* Several waves: causal tasks differ in length. */
  unsigned grid = 0;
  st = mb_gpu_grid(env, "attention_bwd", dkv, THREADS, bytes, kv_tasks, 8,
                   &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(dkv, grid, THREADS, bytes, (mb_gpu_stream_t)env->stream, a,
                ktiles, kv_tasks);
  st = mb__gpu_launched(env, "attention_bwd dK, dV");
  if (st == MB_OK)
    st = mb_gpu_grid(env, "attention_bwd", dq, THREADS, bytes, q_tasks, 8,
                     &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(dq, grid, THREADS, bytes, (mb_gpu_stream_t)env->stream, a,
                qtiles, q_tasks);
  return mb__gpu_launched(env, "attention_bwd dQ");
}

template <mb_dtype_t DT>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call) {
  const int64_t d = call->params->shape[4];
  mb_status_t st = MB_OK;
  int fits = 0;
  if (d <= 32) {
    st = try_launch<DT, 32, 32>(env, call, &fits);
  } else if (d <= 64) {
    st = try_launch<DT, 64, 32>(env, call, &fits);
  } else if (d <= 128) {
    st = try_launch<DT, 128, 32>(env, call, &fits);
    if (st == MB_OK && !fits) st = try_launch<DT, 128, 16>(env, call, &fits);
  } else if (d <= MAX_D) {
    st = try_launch<DT, 256, 16>(env, call, &fits);
  }
  if (st == MB_OK && !fits) {
    env->host->set_error(
        "%s: attention_bwd: head dim D = %lld needs more shared memory than "
        "the device's %zu bytes per block",
        env->backend, (long long)d, env->smem_optin);
    return MB_ERR_UNSUPPORTED;
  }
  return st;
}

}  // namespace

extern "C" mb_status_t mb__gpu_attention_bwd_supports(
    void *bstate, uint32_t dev, const mb_op_params_t *params,
    const char **why) {
  (void)bstate, (void)dev;
  if (params->shape[4] > MAX_D) {
    *why =
        "the native attention_bwd kernel keeps the head dim in shared-memory "
        "tiles of at most 256: D > 256 is not supported";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

extern "C" mb_status_t mb__gpu_attention_bwd_run(void *kstate,
                                                 const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  if (!mb_gpu_is_float(p->dtype, 0) || p->dtype_out != p->dtype)
    return mb_gpu_unsupported_dtype(env, "attention_bwd", p->dtype);
  if (p->shape[4] > MAX_D) {
    env->host->set_error("%s: attention_bwd: head dim D = %lld > %d",
                         env->backend, (long long)p->shape[4], MAX_D);
    return MB_ERR_UNSUPPORTED;
  }
  return mb_gpu_dispatch_f32_16(p->dtype, [&](auto dt) {
    return launch<decltype(dt)::value>(env, call);
  });
}
