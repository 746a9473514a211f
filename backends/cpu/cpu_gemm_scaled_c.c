/* CPU backend — every scaled-GEMM variant in portable C ("c").
 *
 * A and B are first widened to f32 inside the timed run (exact for fp8, i8,
 * i4, bf16, f16; skipped for f32). D is then cut into TM x TN tiles shared
 * among the pinned threads; a tile walks K one scale block at a time (the
 * whole of K when no scale varies along it), multiplying TK-deep slices in
 * f32 into a block sum and folding it into the tile's accumulator with that
 * block's scales: acc += (block sum * sa(i)) * sb(j). So scales that vary
 * along K multiply inside the sum, as the semantics say, while the products
 * stay exact.
 *
 * i8 x i8 is integer arithmetic: up to 1024 products of i8 values
 * (|a b| <= 2^14) sum exactly in f32 (1024 * 2^14 = 2^24), so every 1024
 * steps the f32 sums move into an i32 block sum, and the result is exact
 * like VNNI's: i32 out directly, or rescaled once per scale block in f32. */
#include "cpu_gemm_scaled.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_quant.h"

/* Tiles as cpu_gemm_c.c's: A block 32 KiB, B panel 256 KiB, accumulators
 * 128 KiB each. I8_SPAN: how many i8 products an f32 sum holds exactly
 * (1024 * 2^14 = 2^24). */
enum { TM = 64, TN = 512, TK = 128, I8_SPAN = 1024 };

typedef struct sgemm_c {
  mb_cpu_sgemm_plan_t pl;
  unsigned threads;
  int int8;         /* i8 x i8: integer block sums */
  float *a32, *b32; /* widened A and B; NULL when they are f32 already */
  const mb_cpu_dqvec_t *va, *vb; /* their vector loops, or NULL */
  float *bt32; /* trans_b: B widened as stored (N x K), then turned */
  float *work; /* per thread: work_each floats, see tile() */
  size_t work_each;
  float *grids; /* e8m0 or e4m3 scales decoded (mb__cpu_sgemm_grids) */
} sgemm_c_t;

/* Exact: f holds integers below 2^24. */
MB_CPU_CLONES static void add_to_i32(int32_t *restrict acc,
                                     const float *restrict f, size_t n) {
  for (size_t j = 0; j < n; ++j) acc[j] += (int32_t)f[j];
}

MB_CPU_CLONES static void fold_f32(float *restrict acc, const float *restrict v,
                                   float r, const float *restrict cs,
                                   size_t n) {
  for (size_t j = 0; j < n; ++j) acc[j] += v[j] * r * cs[j];
}

MB_CPU_CLONES static void fold_i32(float *restrict acc,
                                   const int32_t *restrict v, float r,
                                   const float *restrict cs, size_t n) {
  for (size_t j = 0; j < n; ++j) acc[j] += (float)v[j] * r * cs[j];
}

static size_t min_size(size_t a, size_t b) {
  return a < b ? a : b;
}

/* D[i0.., j0..] = round(alpha acc + beta D). */
static void store_tile(const sgemm_c_t *g, void *d, size_t i0, size_t j0,
                       size_t rows, size_t cols, const float *acc) {
  const mb_cpu_qrow_t *o = mb__cpu_qrow(g->pl.tout);
  float buf[TN], old[TN];
  for (size_t i = 0; i < rows; ++i) {
    const size_t e0 = (i0 + i) * (size_t)g->pl.n + j0;
    memcpy(buf, acc + i * cols, cols * sizeof *buf);
    mb__cpu_scale1(buf, g->pl.alpha, cols);
    if (g->pl.beta != 0.0f) { /* beta == 0 must not read D */
      o->load(old, d, e0, cols);
      for (size_t j = 0; j < cols; ++j) buf[j] += g->pl.beta * old[j];
    }
    o->store(d, e0, buf, cols);
  }
}

static void tile(const sgemm_c_t *g, const float *a, const float *b,
                 const float *ga, const float *gb, void *d, size_t i0,
                 size_t j0, float *work) {
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const size_t k = (size_t)pl->k, n = (size_t)pl->n;
  const size_t rows = min_size(TM, (size_t)pl->m - i0);
  const size_t cols = min_size(TN, n - j0);
  float *f = work, *acc = f + TM * TN, *cs = acc + TM * TN;
  int32_t *ip = (int32_t *)(cs + TN);
  const int i32_out = pl->tout == MB_DTYPE_I32;
  memset(acc, 0, rows * cols * sizeof *acc);
  for (size_t kb = 0; kb < k; kb += (size_t)pl->kq) {
    const size_t kend = kb + (size_t)pl->kq;
    memset(g->int8 ? (void *)ip : (void *)f, 0, rows * cols * sizeof *f);
    for (size_t p0 = kb; p0 < kend; p0 += TK) {
      const size_t depth = min_size(TK, kend - p0);
      if (g->int8 && (p0 - kb) % I8_SPAN == 0)
        memset(f, 0, rows * cols * sizeof *f);
      mb__cpu_block_multiply(rows, cols, depth, a + i0 * k + p0, k,
                             b + p0 * n + j0, n, f);
      if (g->int8 && ((p0 + depth - kb) % I8_SPAN == 0 || p0 + depth == kend))
        add_to_i32(ip, f, rows * cols);
    }
    if (i32_out) break; /* unscaled, so kq = k: ip is D */
    for (size_t j = 0; j < cols; ++j)
      cs[j] = pl->b_scaled ? gb[(int64_t)kb / pl->bkb * pl->gcb +
                                (int64_t)(j0 + j) / pl->bnb]
                           : 1.0f;
    for (size_t i = 0; i < rows; ++i) {
      const float r = pl->a_scaled ? ga[(int64_t)(i0 + i) / pl->bma * pl->gca +
                                        (int64_t)kb / pl->bka]
                                   : 1.0f;
      if (g->int8)
        fold_i32(acc + i * cols, ip + i * cols, r, cs, cols);
      else
        fold_f32(acc + i * cols, f + i * cols, r, cs, cols);
    }
  }
  if (!i32_out) {
    store_tile(g, d, i0, j0, rows, cols, acc);
    return;
  }
  for (size_t i = 0; i < rows; ++i)
    memcpy((int32_t *)d + (i0 + i) * n + j0, ip + i * cols, cols * sizeof *ip);
}

/* dst (cols x rows) = src (rows x cols)^T in 32 x 32 tiles, rows of tiles
 * split across the threads: part of the timed run, as reading B packed
 * along K costs an FP4 kernel without FP4 hardware. */
static void turn(unsigned threads, const float *restrict src,
                 float *restrict dst, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t r0 = 0; r0 < rows; r0 += 32)
    for (int64_t c0 = 0; c0 < cols; c0 += 32)
      for (int64_t r = r0; r < r0 + 32 && r < rows; ++r)
        for (int64_t c = c0; c < c0 + 32 && c < cols; ++c)
          dst[c * rows + r] = src[r * cols + c];
}

mb_status_t mb__cpu_sgemm_c_run(void *kstate, const mb_kernel_call_t *call) {
  const sgemm_c_t *g = kstate;
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const float *a = call->in[0], *b = call->in[1];
  if (g->a32) {
    mb__cpu_dequant(g->threads, g->va, 0, a, pl->ta, NULL, 1, 1, g->a32,
                    MB_DTYPE_F32, pl->m, pl->k);
    a = g->a32;
  }
  if (g->bt32) { /* B stored N x K: widened, then turned to K x N */
    mb__cpu_dequant(g->threads, g->vb, 0, b, pl->tb, NULL, 1, 1, g->bt32,
                    MB_DTYPE_F32, pl->n, pl->k);
    turn(g->threads, g->bt32, g->b32, pl->n, pl->k);
    b = g->b32;
  } else if (g->b32) {
    mb__cpu_dequant(g->threads, g->vb, 0, b, pl->tb, NULL, 1, 1, g->b32,
                    MB_DTYPE_F32, pl->k, pl->n);
    b = g->b32;
  }
  const float *ga, *gb;
  mb__cpu_sgemm_grids(pl, call, g->grids, &ga, &gb);
  const size_t tiles_n = ((size_t)pl->n + TN - 1) / TN;
  const size_t tiles = ((size_t)pl->m + TM - 1) / TM * tiles_n;
#pragma omp parallel num_threads(g->threads)
  {
    float *work = g->work + mb__cpu_thread_id() * g->work_each;
#pragma omp for schedule(static)
    for (size_t t = 0; t < tiles; ++t)
      tile(g, a, b, ga, gb, call->out[0], t / tiles_n * TM, t % tiles_n * TN,
           work);
  }
  return MB_OK;
}

void mb__cpu_sgemm_c_release(void *kstate) {
  sgemm_c_t *g = kstate;
  if (!g) return;
  free(g->a32);
  free(g->b32);
  free(g->bt32);
  free(g->work);
  free(g->grids);
  free(g);
}

static int widens(mb_dtype_t t) {
  const mb_cpu_qrow_t *r = mb__cpu_qrow(t);
  return r != NULL;
}

uint32_t mb__cpu_sgemm_c_notes(void *kstate, mb_kernel_note_t *out,
                               uint32_t max) {
  (void)kstate;
  if (max >= 1) out[0] = (mb_kernel_note_t){MB_KERNEL_NOTE_MATH, "f32", 0};
  return 1;
}

mb_status_t mb__cpu_sgemm_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const mb_cpu_qrow_t *out = mb__cpu_qrow(p->dtype_out);
  const int int8 = p->dtype == MB_DTYPE_I8 && p->dtype_b == MB_DTYPE_I8;
  if (!widens(p->dtype) || !widens(p->dtype_b) ||
      !((out && out->store) || (int8 && p->dtype_out == MB_DTYPE_I32))) {
    MB_CPU_ERROR(st, "cpu/c: gemm %s x %s -> %s is not implemented",
                 st->host.dtype_name(p->dtype), st->host.dtype_name(p->dtype_b),
                 st->host.dtype_name(p->dtype_out));
    return MB_ERR_UNSUPPORTED;
  }
  sgemm_c_t *g = calloc(1, sizeof *g);
  if (!g) {
    MB_CPU_ERROR(st, "cpu/c: gemm: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  mb__cpu_sgemm_plan(p, &g->pl);
  g->threads = st->threads;
  g->int8 = int8;
  g->va = mb__cpu_dqvec(p->dtype, MB_DTYPE_F32);
  g->vb = mb__cpu_dqvec(p->dtype_b, MB_DTYPE_F32);
  /* f32 slice and accumulator, column scales, i32 block sum. */
  g->work_each = 2 * TM * TN + TN + TM * TN;
  const size_t mk = (size_t)(g->pl.m * g->pl.k),
               kn = (size_t)(g->pl.k * g->pl.n);
  void *a = NULL, *b = NULL, *w = NULL;
  mb_status_t s = MB_OK;
  if (p->dtype != MB_DTYPE_F32) s = mb__cpu_alloc(st, mk * sizeof(float), &a);
  if (s == MB_OK && p->dtype_b != MB_DTYPE_F32)
    s = mb__cpu_alloc(st, kn * sizeof(float), &b);
  void *bt = NULL;
  if (s == MB_OK && g->pl.trans_b) {
    s = mb__cpu_alloc(st, kn * sizeof(float), &bt);
    g->bt32 = bt;
  }
  if (s == MB_OK)
    s = mb__cpu_alloc(st, g->threads * g->work_each * sizeof(float), &w);
  g->a32 = a, g->b32 = b, g->work = w;
  if (s == MB_OK) s = mb__cpu_sgemm_grids_alloc(st, &g->pl, &g->grids);
  if (s != MB_OK) {
    mb__cpu_sgemm_c_release(g);
    return s;
  }
  *kstate = g;
  return MB_OK;
}
