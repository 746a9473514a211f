/* Quantization through shared-memory tiles of Q: every transposed case,
 * and the untransposed blocks the register kernel (gpu_quant_rows.cu) does
 * not take: columns and other narrow tall blocks, small whole tensors, and
 * the absmax pass of two-pass cases.
 *
 * A block of 256 threads takes a tm x tn tile of Q at a time (grid-stride
 * over tiles) and
 *  1. loads the matching tile of X (of X^T's: X's rows are Q's columns)
 *     into stage[] as f32, Q-ordered with an odd row stride p: teams of 32
 *     threads read runs of 32 consecutive elements along X's rows (so the
 *     reads coalesce whichever way Q lies) and the transposed writes into
 *     stage[] hit 32 different banks; 8 loads a thread are issued before
 *     any is used;
 *  2. FUSED, AMAX: reduces the absmax of each block's part of the tile, a
 *     power-of-two group of threads per block (shuffles, then one shared
 *     atomic max per group or warp on the bit pattern). FUSED tiles hold
 *     whole blocks, so this is the block's absmax: its scale goes to the
 *     grid and to sscale[]. AMAX tiles may cut blocks: their partial
 *     maxima are folded into the grid (zeroed before) with global atomic
 *     max, and a later pass turns them into scales;
 *  3. FUSED, APPLY: writes Q along Q's rows (coalesced), each element
 *     divided by its block's scale, found through per-row and per-column
 *     block maps built once per tile (no integer division per element,
 *     and no look-up at all when the tile lies in one block column).
 * Shared memory is stage[] plus a few words per block and per row and
 * column; FUSED tiles are kept to 72 KiB (a 128x128 tile of X^T: 66 KiB),
 * so a GPU with less opt-in shared memory (64 KiB on AMD) takes two passes
 * for 128x128 X^T blocks.
 * i4 needs even tile widths and an even cols (whole bytes per tile row);
 * the caller sends an odd cols elsewhere. */
#include "gpu_quant.cuh"

namespace {

enum { TEAM = 32, BATCH = 8, COALESCE = 32 };

int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

__device__ __forceinline__ int64_t dmin64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
__device__ __forceinline__ int64_t dmax64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

struct tile_args {
  const void *x;
  void *q;
  float *grid; /* scales; AMAX: absmax bit patterns */
  int64_t rows, cols, bm, bn, gc;
  int tm, tn, p, nslots;
  int64_t ntc, ntiles; /* tile columns, tiles */
  int transpose, mode;
  float qmax;
};

template <mb_dtype_t DX, mb_dtype_t DQ>
__global__ void __launch_bounds__(MB_GQ_BLOCK) tile_kernel(tile_args a) {
  typedef typename mb_gq_x<DX>::raw R;
  MB_GPU_DYN_SMEM(float, mb_gq_tile_smem);
  float *stage = mb_gq_tile_smem;                            /* tm x p */
  unsigned int *slot = (unsigned int *)(stage + a.tm * a.p); /* nslots */
  float *sscale = (float *)(slot + a.nslots);                /* nslots */
  int *rowslot = (int *)(sscale + a.nslots);                 /* tm */
  int *colslot = rowslot + a.tm;                             /* tn */
  const int tid = (int)threadIdx.x, T = (int)blockDim.x;
  const int tl = tid % TEAM, team = tid / TEAM, nteams = T / TEAM;
  const R *x = (const R *)a.x;

  for (int64_t t = blockIdx.x; t < a.ntiles; t += gridDim.x) {
    const int64_t tr = t / a.ntc, tc = t - tr * a.ntc;
    const int64_t r0 = tr * a.tm, c0 = tc * a.tn;
    const int h = (int)dmin64(a.tm, a.rows - r0);
    const int w = (int)dmin64(a.tn, a.cols - c0);
    /* The blocks the tile meets: nbr x nbc from block (fbr, fbc). */
    const int64_t fbr = r0 / a.bm, fbc = c0 / a.bn;
    const int nbr = (int)((r0 + h - 1) / a.bm - fbr + 1);
    const int nbc = (int)((c0 + w - 1) / a.bn - fbc + 1);
    const int nb = nbr * nbc;

    /* Before the first barrier: what phase 1 does not touch. */
    for (int b = tid; b < nb; b += T) {
      if (a.mode == MB_GQ_APPLY) {
        const int k = b / nbc, l = b - k * nbc;
        sscale[b] = a.grid[(fbr + k) * a.gc + fbc + l];
      } else {
        slot[b] = 0u;
      }
    }
    if (a.mode != MB_GQ_AMAX) {
      for (int i = tid; i < h; i += T)
        rowslot[i] = (int)((r0 + i) / a.bm - fbr) * nbc;
      for (int j = tid; j < w; j += T)
        colslot[j] = (int)((c0 + j) / a.bn - fbc);
    }

    /* 1. X's tile (xh x xw, row stride ldx) into stage[] in Q's order. */
    {
      const int xh = a.transpose ? w : h, xw = a.transpose ? h : w;
      const int64_t ldx = a.transpose ? a.rows : a.cols;
      const R *xt = x + (a.transpose ? c0 * a.rows + r0 : r0 * a.cols + c0);
      const int sa = a.transpose ? 1 : a.p, sb = a.transpose ? a.p : 1;
      int xa = tl < xw ? team : xh, xb = tl;
      while (xa < xh) {
        R r[BATCH];
        int si[BATCH];
        /* Straight-line loads (an idle slot re-reads the tile's first
         * element) so all BATCH are in flight together. */
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
          const bool ok = xa < xh;
          si[u] = ok ? xa * sa + xb * sb : -1;
          r[u] = xt[ok ? (int64_t)xa * ldx + xb : 0];
          xb += TEAM;
          const bool wrap = xb >= xw;
          xb = wrap ? tl : xb;
          xa = wrap ? xa + nteams : xa;
        }
#pragma unroll
        for (int u = 0; u < BATCH; ++u)
          if (si[u] >= 0) stage[si[u]] = mb_gq_x<DX>::get(r[u]);
      }
    }
    __syncthreads();

    /* 2. Block absmax. */
    if (a.mode != MB_GQ_APPLY) {
      int G = 1; /* threads a block: a power of two, G * nb <= T */
      while (2 * G * nb <= T) G *= 2;
      const int groups = T / G, g = tid / G, gl = tid % G;
      for (int bb = 0; bb < nb; bb += groups) { /* uniform trip count */
        const int b = bb + g;
        float m = 0.0f;
        if (b < nb) {
          const int k = b / nbc, l = b - k * nbc;
          const int64_t br0 = (fbr + k) * a.bm, bc0 = (fbc + l) * a.bn;
          const int i0 = (int)dmax64(br0 - r0, 0);
          const int i1 = (int)dmin64(br0 + a.bm - r0, h);
          const int j0 = (int)dmax64(bc0 - c0, 0);
          const int j1 = (int)dmin64(bc0 + a.bn - c0, w);
          const int rw = j1 - j0, n = (i1 - i0) * rw;
          /* Element e = ii * rw + jj of the part, e = gl, gl + G, ... */
          int ii = gl / rw, jj = gl - ii * rw;
          const int dq = G / rw, dr = G - dq * rw;
          for (int e = gl; e < n; e += G) {
            m = fmaxf(m, fabsf(stage[(i0 + ii) * a.p + j0 + jj]));
            ii += dq;
            jj += dr;
            if (jj >= rw) {
              jj -= rw;
              ++ii;
            }
          }
        }
        if (G <= MB_GPU_WARP) {
          for (int o = G / 2; o > 0; o >>= 1)
            m = fmaxf(m, mb_gpu_shfl_xor(m, o));
          if (gl == 0 && b < nb) atomicMax(&slot[b], mb__cvt_bits(m));
        } else {
          m = mb_gpu_warp_max(m);
          if (tid % MB_GPU_WARP == 0 && b < nb)
            atomicMax(&slot[b], mb__cvt_bits(m));
        }
      }
      __syncthreads();
      for (int b = tid; b < nb; b += T) {
        const int k = b / nbc, l = b - k * nbc;
        const int64_t gi = (fbr + k) * a.gc + fbc + l;
        if (a.mode == MB_GQ_AMAX) {
          if (slot[b]) atomicMax((unsigned int *)a.grid + gi, slot[b]);
        } else {
          const float s = mb_gq_scale(mb__cvt_float(slot[b]), a.qmax);
          sscale[b] = s;
          a.grid[gi] = s;
        }
      }
      __syncthreads();
      if (a.mode == MB_GQ_AMAX) continue;
    }

    /* 3. Q's tile, along Q's rows. A tile within one block column (row
     * scales, 128x128 tiles) needs no per-element scale look-up. */
    for (int i = team; i < h; i += nteams) {
      const float *xs = stage + i * a.p;
      const float *ss = sscale + rowslot[i];
      const float s0 = ss[0];
      const bool one = nbc == 1;
      uint8_t *qrow = (uint8_t *)a.q;
      if constexpr (mb_gq_q<DQ>::per_byte == 1) {
        qrow += (r0 + i) * a.cols + c0;
        for (int j = tl; j < w; j += TEAM)
          qrow[j] = (uint8_t)mb_gq_q<DQ>::enc(
              mb_gq_div(xs[j], one ? s0 : ss[colslot[j]]));
      } else { /* cols, c0 and w are even: the row starts on a byte */
        qrow += ((r0 + i) * a.cols + c0) / 2;
        for (int jb = tl; 2 * jb < w; jb += TEAM) {
          const int j = 2 * jb;
          const uint32_t lo =
              mb_gq_q<DQ>::enc(mb_gq_div(xs[j], one ? s0 : ss[colslot[j]]));
          const uint32_t hi = mb_gq_q<DQ>::enc(
              mb_gq_div(xs[j + 1], one ? s0 : ss[colslot[j + 1]]));
          qrow[jb] = (uint8_t)(lo | (hi << 4));
        }
      }
    }
    __syncthreads(); /* stage[] and the maps are refilled for the next tile */
  }
}

/* Shared memory of a tm x tn tile with nslots block slots. */
size_t tile_smem(int64_t tm, int64_t tn, int64_t nslots) {
  return 4u * (size_t)(tm * (tn | 1) + 2 * nslots + tm + tn);
}

/* Block rows a window of tm rows can meet (blocks of bm, gr of them). */
int64_t blocks_met(int64_t tm, int64_t bm, int64_t gr) {
  return min64(min64(tm, (tm + bm - 2) / bm + 1), gr);
}

size_t smem_budget(const mb_gpu_env_t *env) {
  return env->smem_optin >= 48 * 1024 ? env->smem_optin : 48 * 1024;
}

/* FUSED: tm = km * bm, tn = kn * bn. */
int plan_fused(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
               mb_gq_tile_t *t) {
  /* Up to 72 KiB: a 128x128 f32 tile (66 KiB), three blocks a
   * multiprocessor on an H100. */
  size_t cap = smem_budget(env);
  if (cap > 72 * 1024) cap = 72 * 1024;
  const int i4 = p->qdt == MB_DTYPE_I4;
  if (i4 && (p->cols & 1)) return 0;
  /* i4 tiles are an even number of elements wide. */
  const int64_t step = i4 && (p->bn & 1) ? 2 : 1;
  if (p->gc % step) return 0;
  /* Keep the kernel's int arithmetic far from overflowing. */
  if (p->bm * p->bn > (int64_t)1 << 24) return 0;
  int64_t km = 1, kn = step;
  auto fits = [&](int64_t m, int64_t n) {
    return tile_smem(m * p->bm, n * p->bn, m * n) <= cap;
  };
  if (!fits(km, kn)) return 0;
  while (kn * p->bn < 2 * COALESCE && kn + step <= p->gc && fits(km, kn + step))
    kn += step;
  if (p->transpose)
    while (km * p->bm < 2 * COALESCE && km < p->gr && fits(km + 1, kn)) ++km;
  /* Runs of at least COALESCE elements (or whole rows) along Q's rows, and
   * along X's rows when transposed; else two passes serve better. */
  if (kn * p->bn < COALESCE && kn < p->gc) return 0;
  if (p->transpose && km * p->bm < COALESCE && km < p->gr) return 0;
  /* About 8192 elements a tile: fewer tiles, more loads in flight. */
  while (km * p->bm * kn * p->bn < 8192) {
    const int64_t m2 = min64(2 * km, p->gr), n2 = min64(2 * kn, p->gc);
    if (m2 > km && fits(m2, kn))
      km = m2;
    else if (n2 > kn && fits(km, n2))
      kn = n2;
    else
      break;
  }
  t->tm = (int)(km * p->bm);
  t->tn = (int)(kn * p->bn);
  t->smem = tile_smem(t->tm, t->tn, km * kn);
  return 1;
}

/* AMAX, APPLY: 16 x 256 tiles (64 x 64 transposed), smaller until they
 * fit. */
int plan_any(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
             mb_gq_tile_mode_t mode, mb_gq_tile_t *t) {
  const size_t cap = smem_budget(env);
  const int i4 = p->qdt == MB_DTYPE_I4 && mode == MB_GQ_APPLY;
  if (i4 && (p->cols & 1)) return 0;
  int64_t tm = min64(p->transpose ? 64 : 16, p->rows);
  int64_t tn = min64(p->transpose ? 64 : 256, p->cols);
  for (;;) {
    const int64_t slots =
        blocks_met(tm, p->bm, p->gr) * blocks_met(tn, p->bn, p->gc);
    if (tile_smem(tm, tn, slots) <= cap) break;
    if (tm == 1 && tn <= 2) return 0;
    if (tm >= tn || tn <= 2)
      tm = (tm + 1) / 2;
    else
      tn = (tn + 1) / 2;
  }
  if (i4 && (tn & 1)) ++tn; /* cols is even, so tn <= cols still */
  t->tm = (int)tm;
  t->tn = (int)tn;
  t->smem = tile_smem(
      tm, tn, blocks_met(tm, p->bm, p->gr) * blocks_met(tn, p->bn, p->gc));
  return t->smem <= cap;
}

template <mb_dtype_t DX, mb_dtype_t DQ>
mb_status_t launch_t(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                     mb_gq_tile_mode_t mode, const mb_gq_tile_t *t) {
  tile_args a;
  a.x = p->x;
  a.q = p->q;
  a.grid = p->grid;
  a.rows = p->rows;
  a.cols = p->cols;
  a.bm = p->bm;
  a.bn = p->bn;
  a.gc = p->gc;
  a.tm = t->tm;
  a.tn = t->tn;
  a.p = t->tn | 1;
  a.nslots = mode == MB_GQ_FUSED ? (int)((t->tm / p->bm) * (t->tn / p->bn))
                                 : (int)(blocks_met(t->tm, p->bm, p->gr) *
                                         blocks_met(t->tn, p->bn, p->gc));
  a.ntc = (p->cols + t->tn - 1) / t->tn;
  a.ntiles = (p->rows + t->tm - 1) / t->tm * a.ntc;
  a.transpose = p->transpose;
  a.mode = (int)mode;
  a.qmax = p->qmax;
  void (*const kernel)(tile_args) = tile_kernel<DX, DQ>;
  const char *what = "quantize (tile)";
  /* Two waves of what the device holds (its shared memory, mostly). */
  unsigned grid = 0;
  mb_status_t st;
  if ((st = mb_gpu_allow_smem(env, what, kernel, t->smem)) != MB_OK ||
      (st = mb_gpu_grid(env, what, kernel, MB_GQ_BLOCK, t->smem,
                        (size_t)a.ntiles, 2, &grid)) != MB_OK)
    return st;
  MB_GPU_LAUNCH(kernel, grid, MB_GQ_BLOCK, t->smem,
                (mb_gpu_stream_t)env->stream, a);
  return mb__gpu_launched(env, what);
}

}  // namespace

int mb_gq_tile_plan(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                    mb_gq_tile_mode_t mode, mb_gq_tile_t *t) {
  return mode == MB_GQ_FUSED ? plan_fused(env, p, t)
                             : plan_any(env, p, mode, t);
}

mb_status_t mb_gq_launch_tile(const mb_gpu_env_t *env, const mb_gq_plan_t *p,
                              mb_gq_tile_mode_t mode, const mb_gq_tile_t *t) {
  return mb_gq_dispatch(p->xdt, p->qdt, [&](auto dx, auto dq) -> mb_status_t {
    return launch_t<decltype(dx)::value, decltype(dq)::value>(env, p, mode, t);
  });
}
