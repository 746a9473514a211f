/* Shared GPU kernel: attention, O = softmax(Q K^T / sqrt(D) [+ causal]) V
 * per (batch, head) (lib/ops/attention.c; Q, O [B,H,Sq,D], K, V
 * [B,H,Skv,D]; causal bottom-right aligned: query i sees keys
 * j <= i + Skv - Sq). With MB_PARAM_BSHD the tensors are [B,S,H,D]
 * instead (Q, O [B,Sq,H,D], K, V [B,Skv,H,D]): a (batch, head)'s rows are
 * still D contiguous elements, H D apart rather than D, so only the rows'
 * addresses change (mb_gpu_att_row and ld below), not the tiles. Grouped-query
 * attention (params.kv_heads = Hkv < H): K and V have Hkv heads (BSHD rows
 * Hkv D apart) and query head h reads K/V head h / (H / Hkv): again only
 * the K/V rows' addresses (kvbase, kv_ld).
 *
 * A fused pass, FlashAttention's way, in f32 on the SIMT units (no tensor
 * cores: a plain kernel that is right for every dtype and D <= 256). One
 * block of 256 threads per (batch, head, tile of BQ queries); the Q tile
 * stays in shared memory, and for each tile of BK keys:
 *   1. K and V tiles are loaded into shared memory as f32 (zero past the
 *      last key and past D);
 *   2. the scores S = Q K^T * (1/sqrt(D)): each thread a (BQ/16) x (BK/16)
 *      register tile, a sequential f32 sum over D;
 *   3. the online softmax, 256/BQ threads per query row: the running max
 *      m and sum l (keys past the mask get p = 0), P = exp(S - m) in place
 *      of S, and alpha = exp(m_old - m_new) for what was summed before;
 *   4. O = alpha O + P V: each thread a (BQ/16) x (DMAX/16) register tile
 *      of the unnormalised output;
 * then O / l, rounded once to O's dtype. Nothing of size Sq x Skv is
 * materialised. The same f32 steps as backends/cpu/cpu_attention_c.c.
 * Causal tiles stop at the tile's last visible key, and the tiles with the
 * most keys are dealt first.
 *
 * Tile shapes by head dim (DMAX: D rounded up to 32, 64, 128 or 256) and
 * dynamic shared memory, the first that fits the device's opt-in limit:
 * DMAX 32 and 64: 64 x 32 (25 / 41 KiB); 128: 64 x 32 (73 KiB), else
 * 32 x 32 (53 KiB); 256: 32 x 32 (101 KiB), else 16 x 16 (49 KiB).
 * D > 256 is declined. */
/* mb_gpu_att_row: where a head's rows live, shared with the backward. */
#include "gpu_attention.cuh"

namespace {

constexpr int THREADS = 256, TY = 16, TX = 16;
constexpr int MAX_D = 256;

/* Floats of shared memory: Q (BQ rows), K (BK rows) padded to DMAX + 1
 * (conflict-free column reads), V (BK x DMAX), S (BQ x (BK + 1)), and the
 * per-row m, l, alpha. */
constexpr size_t smem_floats(int dmax, int bq, int bk) {
  return (size_t)bq * (dmax + 1) + (size_t)bk * (dmax + 1) + (size_t)bk * dmax +
         (size_t)bq * (bk + 1) + 3 * (size_t)bq;
}

template <mb_dtype_t DT, int DMAX, int BQ, int BK>
__global__ void __launch_bounds__(THREADS)
    attention_kernel(const void *__restrict__ q, const void *__restrict__ k,
                     const void *__restrict__ v, void *__restrict__ o,
                     size_t bh_count, size_t heads, size_t kv_heads, size_t sq,
                     size_t skv, int d, int causal, int bshd, float scale,
                     size_t tiles) {
  static_assert(BQ % TY == 0 && BK % TX == 0 && DMAX % TX == 0, "tiles");
  static_assert(THREADS % BQ == 0 && THREADS / BQ <= BK, "softmax step");
  constexpr int RQ = BQ / TY, RK = BK / TX, RC = DMAX / TX;
  constexpr int QS = DMAX + 1, KS = DMAX + 1, VS = DMAX, SS = BK + 1;
  constexpr int G = THREADS / BQ; /* threads per row in the softmax step */
  MB_GPU_DYN_SMEM(float, smem);
  float *const qs = smem;
  float *const ks = qs + BQ * QS;
  float *const vs = ks + BK * KS;
  float *const ss = vs + BK * VS;
  float *const row_m = ss + BQ * SS;
  float *const row_l = row_m + BQ;
  float *const row_a = row_l + BQ;
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const size_t off = skv - sq; /* causal: sq <= skv (the op checks) */
  const size_t ld = bshd ? heads * (size_t)d : (size_t)d;
  const size_t kv_ld = bshd ? kv_heads * (size_t)d : (size_t)d;
  const size_t group = heads / kv_heads; /* query heads per K/V head */
  const size_t tasks = bh_count * tiles;
  for (size_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    /* Every (b, h)'s last query tile first: the longest under causal. */
    const size_t bh = task % bh_count;
    const size_t qt = tiles - 1 - task / bh_count;
    const size_t i0 = qt * BQ;
    const int qn = sq - i0 < (size_t)BQ ? (int)(sq - i0) : BQ;
    /* Row r of the Q (and O) tile at qbase + r ld, key j at kvbase +
     * j kv_ld; (batch, K/V head) kvbh holds query head bh's keys. */
    const size_t kvbh = bh / heads * kv_heads + bh % heads / group;
    const size_t qbase = mb_gpu_att_row(bh, sq, i0, heads, d, bshd);
    const size_t kvbase = mb_gpu_att_row(kvbh, skv, 0, kv_heads, d, bshd);
    /* The last key any query of the tile sees. */
    const size_t last = causal ? i0 + (size_t)qn - 1 + off : skv - 1;

    __syncthreads(); /* the previous task is done with shared memory */
    for (int e = tid; e < BQ * DMAX; e += THREADS) {
      const int r = e / DMAX, c = e % DMAX;
      qs[r * QS + c] = r < qn && c < d
                           ? mb_gpu_load(DT, q, qbase + (size_t)r * ld + c)
                           : 0.0f;
    }
    for (int r = tid; r < BQ; r += THREADS) {
      row_m[r] = -INFINITY;
      row_l[r] = 0.0f;
    }
    float acc[RQ][RC];
#pragma unroll
    for (int a = 0; a < RQ; ++a)
#pragma unroll
      for (int c = 0; c < RC; ++c) acc[a][c] = 0.0f;

    for (size_t j0 = 0; j0 <= last; j0 += BK) {
      const int kn = last + 1 - j0 < (size_t)BK ? (int)(last + 1 - j0) : BK;
      __syncthreads(); /* the previous tile's readers of ks, vs, ss are done */
      /* 1. K and V tiles. */
      for (int e = tid; e < BK * DMAX; e += THREADS) {
        const int j = e / DMAX, c = e % DMAX;
        const bool in = j < kn && c < d;
        const size_t idx = kvbase + (j0 + (size_t)j) * kv_ld + c;
        ks[j * KS + c] = in ? mb_gpu_load(DT, k, idx) : 0.0f;
        vs[j * VS + c] = in ? mb_gpu_load(DT, v, idx) : 0.0f;
      }
      __syncthreads();
      /* 2. Scores: rows ty + TY a, keys tx + TX b. */
      {
        float s[RQ][RK];
#pragma unroll
        for (int a = 0; a < RQ; ++a)
#pragma unroll
          for (int b = 0; b < RK; ++b) s[a][b] = 0.0f;
#pragma unroll 4
        for (int c = 0; c < d; ++c) {
          float qv[RQ], kv[RK];
#pragma unroll
          for (int a = 0; a < RQ; ++a) qv[a] = qs[(ty + TY * a) * QS + c];
#pragma unroll
          for (int b = 0; b < RK; ++b) kv[b] = ks[(tx + TX * b) * KS + c];
#pragma unroll
          for (int a = 0; a < RQ; ++a)
#pragma unroll
            for (int b = 0; b < RK; ++b) s[a][b] += qv[a] * kv[b];
        }
#pragma unroll
        for (int a = 0; a < RQ; ++a)
#pragma unroll
          for (int b = 0; b < RK; ++b)
            ss[(ty + TY * a) * SS + tx + TX * b] = s[a][b] * scale;
      }
      __syncthreads();
      /* 3. Online softmax: G consecutive threads (one warp's lanes) per row;
       * keys [0, see) of the tile are visible to row r. */
      {
        const int r = tid / G, gl = tid % G;
        int see = kn;
        if (causal) {
          /* Query i0 + r sees keys up to i0 + r + off. */
          const size_t lim = i0 + (size_t)r + off + 1; /* > 0 */
          see = lim <= j0 ? 0 : lim - j0 < (size_t)kn ? (int)(lim - j0) : kn;
        }
        float mx = -INFINITY;
        for (int j = gl; j < BK; j += G)
          if (j < see) mx = fmaxf(mx, ss[r * SS + j]);
        for (int msk = G / 2; msk > 0; msk >>= 1)
          mx = fmaxf(mx, mb_gpu_shfl_xor(mx, msk));
        const float m_old = row_m[r];
        const float m_new = fmaxf(m_old, mx);
        /* A row that has seen no key yet keeps m = -inf (then every p and
         * alpha below is 0). */
        const float base = m_new == -INFINITY ? 0.0f : m_new;
        float sum = 0.0f;
        for (int j = gl; j < BK; j += G) {
          const float p = j < see ? expf(ss[r * SS + j] - base) : 0.0f;
          ss[r * SS + j] = p;
          sum += p;
        }
        for (int msk = G / 2; msk > 0; msk >>= 1)
          sum += mb_gpu_shfl_xor(sum, msk);
        /* Lane 0 alone writes the row's state. No lane can still be about
         * to read it: each lane's read of row_m feeds the sum it handed
         * to the shuffles above, which lane 0 has completed. */
        if (gl == 0) {
          const float alpha = expf(m_old - base);
          row_a[r] = alpha;
          row_l[r] = row_l[r] * alpha + sum;
          row_m[r] = m_new;
        }
      }
      __syncthreads();
      /* 4. O = alpha O + P V: rows ty + TY a, columns tx + TX c. P is 0 and
       * V zero past the tile's last key. */
#pragma unroll
      for (int a = 0; a < RQ; ++a) {
        const float al = row_a[ty + TY * a];
#pragma unroll
        for (int c = 0; c < RC; ++c) acc[a][c] *= al;
      }
#pragma unroll 4
      for (int j = 0; j < BK; ++j) {
        float pv[RQ], vv[RC];
#pragma unroll
        for (int a = 0; a < RQ; ++a) pv[a] = ss[(ty + TY * a) * SS + j];
#pragma unroll
        for (int c = 0; c < RC; ++c) vv[c] = vs[j * VS + tx + TX * c];
#pragma unroll
        for (int a = 0; a < RQ; ++a)
#pragma unroll
          for (int c = 0; c < RC; ++c) acc[a][c] += pv[a] * vv[c];
      }
    }
    /* O / l: row_l was last written before the barrier ahead of step 4. */
#pragma unroll
    for (int a = 0; a < RQ; ++a) {
      const int r = ty + TY * a;
      if (r >= qn) continue;
      const float l = row_l[r];
#pragma unroll
      for (int c = 0; c < RC; ++c) {
        const int col = tx + TX * c;
        if (col < d)
          mb_gpu_store(DT, o, qbase + (size_t)r * ld + col, acc[a][c] / l);
      }
    }
  }
}

/* Enqueues the <DMAX, BQ, BK> kernel if its shared memory fits the device;
 * *fits says whether it did. */
template <mb_dtype_t DT, int DMAX, int BQ, int BK>
mb_status_t try_launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call,
                       int *fits) {
  const size_t bytes = smem_floats(DMAX, BQ, BK) * sizeof(float);
  const size_t limit =
      env->smem_optin > 48u * 1024u ? env->smem_optin : 48u * 1024u;
  *fits = bytes <= limit;
  if (!*fits) return MB_OK;
  const mb_op_params_t *p = call->params;
  const size_t bh = (size_t)p->shape[0] * (size_t)p->shape[1];
  const size_t sq = (size_t)p->shape[2], skv = (size_t)p->shape[3];
  const int d = (int)p->shape[4];
  /* 0 (params not resolved) is the op's default, H. */
  const size_t kv_heads = (size_t)(p->kv_heads ? p->kv_heads : p->shape[1]);
  const size_t tiles = (sq + BQ - 1) / BQ, tasks = bh * tiles;
  auto kernel = attention_kernel<DT, DMAX, BQ, BK>;
  if (bytes > 48u * 1024u) {
    const mb_gpu_error_t e = mb_gpu_func_set_max_smem(kernel, (int)bytes);
    if (e != mb_gpu_success) {
      (void)mb_gpu_get_last_error();
      env->host->set_error(
          "%s: attention: raising shared memory to %zu bytes: %s", env->backend,
          bytes, mb_gpu_error_string(e));
      return MB_ERR_BACKEND;
    }
  }
  /* Several waves: causal tasks differ in length, and a multiprocessor
   * whose blocks finish early takes the next ones. */
  unsigned grid = 0;
  const mb_status_t st =
      mb_gpu_grid(env, "attention", kernel, THREADS, bytes, tasks, 8, &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(kernel, grid, THREADS, bytes, (mb_gpu_stream_t)env->stream,
                call->in[0], call->in[1], call->in[2], call->out[0], bh,
                (size_t)p->shape[1], kv_heads, sq, skv, d,
                (p->flags & MB_PARAM_CAUSAL) != 0,
                (p->flags & MB_PARAM_BSHD) != 0,
                (float)(1.0 / sqrt((double)p->shape[4])), tiles);
  return mb__gpu_launched(env, "attention");
}

template <mb_dtype_t DT>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call) {
  const int64_t d = call->params->shape[4];
  mb_status_t st = MB_OK;
  int fits = 0;
  if (d <= 32) {
    st = try_launch<DT, 32, 64, 32>(env, call, &fits);
  } else if (d <= 64) {
    st = try_launch<DT, 64, 64, 32>(env, call, &fits);
  } else if (d <= 128) {
    st = try_launch<DT, 128, 64, 32>(env, call, &fits);
    if (st == MB_OK && !fits)
      st = try_launch<DT, 128, 32, 32>(env, call, &fits);
  } else if (d <= MAX_D) {
    st = try_launch<DT, 256, 32, 32>(env, call, &fits);
    if (st == MB_OK && !fits)
      st = try_launch<DT, 256, 16, 16>(env, call, &fits);
  }
  if (st == MB_OK && !fits) {
    env->host->set_error(
        "%s: attention: head dim D = %lld needs more shared memory than the "
        "device's %zu bytes per block",
        env->backend, (long long)d, env->smem_optin);
    return MB_ERR_UNSUPPORTED;
  }
  return st;
}

}  // namespace

extern "C" mb_status_t mb__gpu_attention_supports(void *bstate, uint32_t dev,
                                                  const mb_op_params_t *params,
                                                  const char **why) {
  (void)bstate, (void)dev;
  if (params->shape[4] > MAX_D) {
    *why =
        "the native attention kernel keeps the head dim in shared-memory "
        "tiles of at most 256: D > 256 is not supported";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

extern "C" mb_status_t mb__gpu_attention_run(void *kstate,
                                             const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  if (!mb_gpu_is_float(p->dtype, 0) || p->dtype_out != p->dtype)
    return mb_gpu_unsupported_dtype(env, "attention", p->dtype);
  if (p->shape[4] > MAX_D) {
    env->host->set_error("%s: attention: head dim D = %lld > %d", env->backend,
                         (long long)p->shape[4], MAX_D);
    return MB_ERR_UNSUPPORTED;
  }
  return mb_gpu_dispatch_f32_16(p->dtype, [&](auto dt) {
    return launch<decltype(dt)::value>(env, call);
  });
}
