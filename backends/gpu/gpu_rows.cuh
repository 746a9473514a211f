/* The row machinery of the per-row ops (layernorm, rmsnorm, softmax:
 * gpu_norm.cu, gpu_softmax.cu): a row of X read from memory once and kept
 * on chip for the op's passes over it, and the plan that sizes its launch.
 *
 * A row of n elements is nvec vectors of V elements: 16 bytes when every
 * row starts on one (n a multiple of V, the operands aligned), else V = 1.
 * A vector is kept as it was loaded — 16-bit data still two to a register
 * — and converted to f32 in each pass (a shift for bf16; mb_cvt.h's
 * converters), so a thread's registers hold twice the elements they would
 * in f32, and twice the rows of 16-bit data fit a multiprocessor.
 *
 * A group of g threads owns a row: a power-of-two slice of a warp (short
 * rows, several to a block: shuffle reductions, no barrier) or a whole
 * block (long rows). Thread t of the group keeps vectors t, t + g, ...,
 * t + (SLOTS - 1) g in registers; a block's row longer than that keeps the
 * next `scap` vectors in dynamic shared memory, and only a row past both
 * re-reads its rest from memory (L2) in each pass. A thread only reads
 * back what it stored itself, so keeping the row needs no barrier.
 *
 * Why not one row per block of 1024 threads: with 64 registers a thread
 * such a block fills an H100's register file, one row at a time per
 * multiprocessor, and the memory idles while that row is reduced. The
 * plan (mb_gpu_rows_launch) gives a long row about nvec / SLOTS threads
 * (a 16k row of bf16: 256, of f32: 512) or half that with the rest of the
 * row in shared memory, whichever lets a multiprocessor hold more rows
 * (the kernel's occupancy), so one row's reductions overlap others'
 * loads. */
#ifndef MB_GPU_ROWS_CUH
#define MB_GPU_ROWS_CUH

#include "gpu_eltwise.cuh"

/* Threads per block when a block holds several (short) rows. */
#define MB_GPU_ROW_BLOCK 256u
/* Waves of blocks in a row launch: a multiprocessor whose rows finish early
 * takes the next blocks. */
#define MB_GPU_ROW_WAVES 8u

/* Vectors a thread keeps in registers: a block's row 8 of 16 bytes (32
 * registers: with the rest, within the 64 of a 1024-thread block), or 16
 * single elements; a warp slice's half that, so that its short rows, which
 * need no more, leave room for more blocks. */
__host__ __device__ constexpr int mb_gpu_row_slots(int v, bool block) {
  return (v > 1 ? 8 : 16) / (block ? 1 : 2);
}

/* A row launch's geometry: the row kernels' first argument. */
typedef struct mb_gpu_rows {
  size_t m, n;   /* rows, elements a row (< 2^31) */
  unsigned g;    /* threads a row (the block's, for a block a row) */
  unsigned scap; /* a block's row: vectors kept in shared memory */
} mb_gpu_rows_t;

/* One thread's part of a row of D in vectors of V; BLOCK: the group is the
 * block (shared memory and re-reads past the registers). */
template <mb_dtype_t D, int V, bool BLOCK>
struct mb_gpu_row {
  typedef mb_gpu_vec_t<D, V> vec_t;
  static constexpr int SLOTS = mb_gpu_row_slots(V, BLOCK);
  vec_t v[SLOTS];
  vec_t *sm;     /* BLOCK: scap vectors, entry j the row's SLOTS g + j */
  unsigned scap; /* 0 unless BLOCK */

  /* Reads this thread's vectors of row xr (nvec vectors; 0 for a group
   * past the last row). The shared-memory part first, staged through v[]
   * SLOTS vectors at a time so that a batch's loads are all in flight
   * before the first store waits for one; then the registers' own. */
  __device__ __forceinline__ void load(const vec_t *xr, unsigned nvec,
                                       unsigned t, unsigned g) {
    if constexpr (BLOCK) {
      const unsigned k0 = SLOTS * g;
      const unsigned rest = nvec > k0 ? nvec - k0 : 0;
      const unsigned ns = rest < scap ? rest : scap;
      for (unsigned j0 = 0; j0 < ns; j0 += SLOTS * g) {
#pragma unroll
        for (int s = 0; s < SLOTS; ++s) {
          const unsigned j = j0 + t + s * g;
          if (j < ns) v[s] = mb_gpu_ld_once(xr + k0 + j);
        }
#pragma unroll
        for (int s = 0; s < SLOTS; ++s) {
          const unsigned j = j0 + t + s * g;
          if (j < ns) sm[j] = v[s];
        }
      }
    }
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
      const unsigned k = t + s * g;
      if (k < nvec) v[s] = mb_gpu_ld_once(xr + k);
    }
  }

  /* f(e, k) for every vector k of the row the thread owns, e its V
   * elements in f32 (from registers, shared memory, or re-read). */
  template <class F>
  __device__ __forceinline__ void each(const vec_t *xr, unsigned nvec,
                                       unsigned t, unsigned g, F &&f) const {
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
      const unsigned k = t + s * g;
      if (k < nvec) {
        float e[V];
        mb_gpu_unpack<D, V>(v[s], e);
        f(e, k);
      }
    }
    if constexpr (BLOCK) {
      const unsigned k0 = SLOTS * g;
      /* k < 2^31 + 2^14: no wrap (n < 2^31, g <= 1024) */
      for (unsigned k = k0 + t; k < nvec; k += g) {
        const unsigned j = k - k0;
        const vec_t r = j < scap ? sm[j] : xr[k];
        float e[V];
        mb_gpu_unpack<D, V>(r, e);
        f(e, k);
      }
    }
  }
};

/* The row kernels' walk: each group of threads takes its rows of rs in
 * turn, loads its part (r.load), then f(r, xr, yr, nv, t, g, scratch) does
 * the op's passes — xr/yr the row in and out, nv its vectors (0 for a group
 * past the last row, which still takes part: the whole block loops in step,
 * so every lane reaches every shuffle and barrier), t the thread's index in
 * its group of g, scratch the group reductions' (mb_gpu_group_sum/_max).
 * smem is the launch's dynamic shared memory. */
template <mb_dtype_t D, int V, bool BLOCK, class F>
__device__ __forceinline__ void mb_gpu_rows_walk(const mb_gpu_rows_t &rs,
                                                 const void *x, void *y,
                                                 mb_gpu_raw<16> *smem, F &&f) {
  typedef mb_gpu_vec_t<D, V> vec_t;
  __shared__ float scratch[32];
  const unsigned g = BLOCK ? blockDim.x : rs.g;
  const unsigned t = BLOCK ? threadIdx.x : threadIdx.x % g;
  const unsigned nvec = (unsigned)(rs.n / V);
  const size_t per = blockDim.x / g, blocks = (rs.m + per - 1) / per;
  mb_gpu_row<D, V, BLOCK> r;
  r.sm = (vec_t *)smem;
  r.scap = BLOCK ? rs.scap : 0;
  for (size_t rb = blockIdx.x; rb < blocks; rb += gridDim.x) {
    const size_t row = rb * per + threadIdx.x / g;
    const unsigned nv = row < rs.m ? nvec : 0;
    const size_t at = (row < rs.m ? row : 0) * nvec;
    const vec_t *xr = (const vec_t *)x + at;
    vec_t *yr = (vec_t *)y + at;
    r.load(xr, nv, t, g);
    f(r, xr, yr, nv, t, g, scratch);
  }
}

/* Sum / max over a group of g threads: a warp slice of g lanes (BLOCK
 * false; g a power of two, the lanes consecutive) or the whole block. */
template <bool BLOCK>
__device__ __forceinline__ float mb_gpu_group_sum(float v, unsigned g,
                                                  float *scratch) {
  if constexpr (BLOCK) {
    (void)g;
    return mb_gpu_block_sum(v, scratch);
  } else {
    (void)scratch;
    for (unsigned m = g / 2; m > 0; m >>= 1) v += mb_gpu_shfl_xor(v, (int)m);
    return v;
  }
}

template <bool BLOCK>
__device__ __forceinline__ float mb_gpu_group_max(float v, unsigned g,
                                                  float *scratch) {
  if constexpr (BLOCK) {
    (void)g;
    return mb_gpu_block_max(v, scratch);
  } else {
    (void)scratch;
    for (unsigned m = g / 2; m > 0; m >>= 1)
      v = fmaxf(v, mb_gpu_shfl_xor(v, (int)m));
    return v;
  }
}

/* Plans and enqueues a row op on m rows of n elements, in vectors of V:
 * kw(rows, args...) when a warp slice holds a row, else kb(rows,
 * args...), a block a row. */
template <mb_dtype_t D, int V, class KW, class KB, class... A>
static mb_status_t mb_gpu_rows_launch(const mb_gpu_env_t *env, const char *what,
                                      size_t m, size_t n, KW kw, KB kb,
                                      A... args) {
  constexpr unsigned WSLOTS = (unsigned)mb_gpu_row_slots(V, false);
  constexpr unsigned SLOTS = (unsigned)mb_gpu_row_slots(V, true);
  constexpr size_t VB = sizeof(mb_gpu_vec_t<D, V>);
  const mb_gpu_stream_t stream = (mb_gpu_stream_t)env->stream;
  /* The device's warp: this is host code (gpu_runtime.h). */
  const unsigned warp = (unsigned)env->warp_size;
  if (n >= (size_t)1 << 31) {
    env->host->set_error(
        "%s: %s: rows of 2^31 elements or more are not implemented by the "
        "native kernel",
        env->backend, what);
    return MB_ERR_UNSUPPORTED;
  }
  const size_t nvec = n / V;
  mb_gpu_rows_t rs = {m, n, 1, 0};
  unsigned grid = 0;
  mb_status_t st;
  if (nvec <= (size_t)warp * WSLOTS) {
    /* The smallest slice that holds the row in two vectors a lane, or a
     * warp (up to WSLOTS a lane). */
    while (rs.g < warp && (size_t)rs.g * 2 < nvec) rs.g *= 2;
    const size_t per = MB_GPU_ROW_BLOCK / rs.g;
    if ((st = mb_gpu_grid(env, what, kw, MB_GPU_ROW_BLOCK, 0,
                          (m + per - 1) / per, MB_GPU_ROW_WAVES, &grid)) !=
        MB_OK)
      return st;
    MB_GPU_LAUNCH(kw, grid, MB_GPU_ROW_BLOCK, 0, stream, rs, args...);
    return mb__gpu_launched(env, what);
  }
  /* A block a row: the whole row in registers, or half the threads with
   * the other half's share in shared memory; the one of which a
   * multiprocessor holds more rows, a tie to the first (one load in
   * series, not two). Shared memory up to the opt-in limit less 1 KiB (the
   * kernel's static reduction scratch); past it, re-reads. */
  const size_t optin =
      env->smem_optin > 48u * 1024u ? env->smem_optin : 48u * 1024u;
  const size_t fit = (optin - 1024u) / VB;
  size_t whole = (nvec + SLOTS - 1) / SLOTS;
  whole = (whole + warp - 1) / warp * warp;
  if (whole > 1024) whole = 1024;
  size_t half = (whole / 2 + warp - 1) / warp * warp;
  if (half < warp) half = warp;
  const size_t cand[2] = {whole, half};
  size_t smem[2];
  int per_sm[2]; /* rows a multiprocessor holds at once */
  for (int c = 0; c < 2; ++c) {
    const size_t in_regs = cand[c] * SLOTS;
    const size_t rest = nvec > in_regs ? nvec - in_regs : 0;
    smem[c] = (rest < fit ? rest : fit) * VB;
    if ((st = mb_gpu_allow_smem(env, what, kb, smem[c])) != MB_OK ||
        (st = mb_gpu_blocks_per_sm(env, what, kb, (unsigned)cand[c], smem[c],
                                   &per_sm[c])) != MB_OK)
      return st;
  }
  const int c = per_sm[1] > per_sm[0];
  rs.g = (unsigned)cand[c];
  rs.scap = (unsigned)(smem[c] / VB);
  grid = mb_gpu_grid_from(env, per_sm[c], m, MB_GPU_ROW_WAVES);
  MB_GPU_LAUNCH(kb, grid, rs.g, smem[c], stream, rs, args...);
  return mb__gpu_launched(env, what);
}

#endif
