/* CPU backend — the quantize kernel (dynamic or static, plain or transposed)
 * in C ("c"; the dequantize kernel: cpu_dequant.c).
 *
 * Dynamic quantization needs each block's absmax before any of its elements
 * can be divided, so it takes two passes over X. Where there are enough
 * block rows (row-wise, 1xG groups, 128x128 tiles on a tall X) a thread
 * takes whole block rows and does both passes on one block row while it is
 * still in cache ("fused"). Otherwise (tensor or column scales, few block
 * rows, and every transposed case) pass 1 splits X's rows among the threads,
 * each folding its partial block maxima into a shared grid with an atomic
 * max (max is exact and order-free, so the result is the reference's bit
 * for bit), and pass 2 runs after a barrier. A transposed Q is written in
 * tiles of 32 rows (a cache line of a bf16 row of X) by 64 columns, each
 * thread walking X's rows along their length (quant_transposed).
 *
 * i4 and e2m1 pack two elements per byte, so two threads must never write
 * halves of one byte: with an odd row length they own row pairs (a pair
 * starts on a byte), and a transposed Q is split by whole bands of 32 rows. */
#include "cpu_quant.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_simd_elt.h"
#include "mb_cvt.h"

enum { CHUNK = 1024, QT = 32, PANEL = 64 };
/* The transposed tiles ask for each X row's line T_AHEAD bands (of QT
 * elements) ahead, into L2 (the panel's rows share L1 sets): its PANEL row
 * streams are more than Zen 4's prefetcher follows, and the tile loop
 * waited on one load in 67 % of its samples (44 % with this). Tiles of 64
 * or 128 rows of Q were no faster. */
enum { T_AHEAD = 8 };

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* Which block scales apply to a row: srow(r) = grid + r / bm * gc, block
 * columns of width bn. A static scale is the one-block view of a single
 * float. */
typedef struct scale_view {
  const float *grid;
  int64_t gc, bm, bn;
} scale_view_t;

static const float *srow(const scale_view_t *v, int64_t r) {
  return v->grid + r / v->bm * v->gc;
}

/* Whether a block's absmax keeps NaN: the MX and NVFP4 rules' scales say
 * NaN for such a block; the f32 rule skips it. */
static int keep_nan(const mb_cpu_quant_t *q) {
  return q->mx_emax || q->nv_s > 0.0f;
}

/* Scale of block g from its absmax (lib/ops/quant.c's mb__quant_scale): an
 * all-zero or non-finite block gets 1. With e8m0 scales, the MX power of
 * two (mb__mx_scale's rule; the absmax kept its NaN). NVFP4
 * (quant_nvfp4.c's rule): the e4m3 byte of fl32(amax / 6) / S is kept in
 * nv_sb[g] and the block divides by fl32(s_b S), or by infinity when that
 * is 0 (the block's zeros keep their signs). */
static float scale_of(const mb_cpu_quant_t *q, uint32_t amax, float qmax,
                      int64_t g) {
  if (q->nv_s > 0.0f) {
    const uint8_t b =
        mb__cvt_f32_to_e4m3((mb__cvt_float(amax) / 6.0f) / q->nv_s);
    q->nv_sb[g] = b;
    const float s = mb__cvt_e4m3_to_f32(b) * q->nv_s;
    return s == 0.0f ? mb__cvt_float(0x7F800000u) : s;
  }
  if (q->mx_emax)
    return mb__cvt_e8m0_to_f32(mb__cvt_mx_scale_e8m0(amax, q->mx_emax));
  if (amax == 0 || amax >= 0x7F800000u) return 1.0f;
  return mb__cvt_float(amax) / qmax;
}

/* x[0, w) is columns [c0, c0 + w) of row e0 / cols of Q. */
static void quant_span(const mb_cpu_qrow_t *qo, void *q, size_t e0,
                       const float *x, const float *sr, int64_t c0, int64_t w,
                       int64_t bn) {
  if (bn == 1) {
    qo->quantv(q, e0, x, sr + c0, (size_t)w);
    return;
  }
  for (int64_t c = c0, end; c < c0 + w; c = end) {
    end = mb__cpu_block_end(c, bn, c0 + w);
    qo->quant1(q, e0 + (size_t)(c - c0), x + (c - c0), sr[c / bn],
               (size_t)(end - c));
  }
}

/* Blocks at least this wide run the vector loops one block at a time;
 * narrower ones (a column scale: bn = 1) keep the per-element loops. */
enum { VEC_MIN_BN = 8 };

static int use_vec(const mb_cpu_qvec_t *v, int64_t bn) {
  return v && bn >= VEC_MIN_BN;
}

/* Folds rows [i0, i1) (of a matrix with `cols` columns) into loc[c / bn]. */
static void amax_rows(const mb_cpu_qrow_t *xo, const mb_cpu_qvec_t *vx,
                      const void *x, int64_t i0, int64_t i1, int64_t cols,
                      int64_t bn, uint32_t *loc, int keep_nan) {
  if (vx && vx->amaxv && bn == 1) { /* a scale per column */
    vx->amaxv(loc, x, (size_t)(i0 * cols), (size_t)cols, (size_t)(i1 - i0),
              (size_t)cols, keep_nan);
    return;
  }
  for (int64_t i = i0; i < i1; ++i) {
    if (use_vec(vx, bn)) {
      vx->amaxg(loc, x, (size_t)(i * cols), (size_t)cols, (size_t)bn, keep_nan);
      continue;
    }
    float buf[CHUNK];
    for (int64_t c0 = 0; c0 < cols; c0 += CHUNK) {
      const int64_t w = min64(CHUNK, cols - c0);
      xo->load(buf, x, (size_t)(i * cols + c0), (size_t)w);
      if (bn == 1) {
        mb__cpu_amax_bits_v(loc + c0, buf, (size_t)w, keep_nan);
        continue;
      }
      for (int64_t c = c0, end; c < c0 + w; c = end) {
        end = mb__cpu_block_end(c, bn, c0 + w);
        const uint32_t m =
            mb__cpu_amax_bits(buf + (c - c0), (size_t)(end - c), keep_nan);
        loc[c / bn] = m > loc[c / bn] ? m : loc[c / bn];
      }
    }
  }
}

/* The vector loops take a row in pieces of PIECE elements, and after each
 * ask for the same piece of the next row (`next`, NULL: none): the next
 * pass over that row (its absmax in the fused mode with one-row blocks;
 * else its quantization) then reads the cache while this one computes,
 * instead of waiting on memory after it. */
enum { PIECE = 512 };

static void prefetch(const char *p, size_t bytes) {
  for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 0, 3);
}

/* The same into L2 only (prefetcht2): lines of rows a power of two apart
 * share an L1 set, where those asked for ahead would evict each other. */
static void prefetch_l2(const char *p, size_t bytes) {
  for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 0, 1);
}

/* Row i of a non-transposed Q. */
static void quant_row(const mb_cpu_quant_t *q, const mb_cpu_qrow_t *xo,
                      const mb_cpu_qrow_t *qo, const void *x, void *out,
                      const scale_view_t *v, int64_t i) {
  if (q->vx && (v->bn == 1 || use_vec(q->vx, v->bn))) {
    const size_t es = q->xdt == MB_DTYPE_F32 ? 4 : 2; /* X: f32, bf16, f16 */
    const char *next = i + 1 < q->rows
                           ? (const char *)x + (size_t)((i + 1) * q->cols) * es
                           : NULL;
    const float *sr = srow(v, i);
    for (int64_t c = 0; c < q->cols; c += PIECE) {
      const int64_t w = min64(PIECE, q->cols - c);
      const size_t e = (size_t)(i * q->cols + c);
      if (v->bn == 1) /* a scale per column */
        q->vx->quantv(out, e, x, e, sr + c, (size_t)w, q->stream);
      else /* the row straight from X, the piece's blocks in one call */
        q->vx->quantg(out, e, x, e, sr + c / v->bn, (size_t)v->bn,
                      (size_t)(c % v->bn), (size_t)w, q->stream);
      if (next) prefetch(next + (size_t)c * es, (size_t)w * es);
    }
    return;
  }
  float buf[CHUNK];
  for (int64_t c0 = 0; c0 < q->cols; c0 += CHUNK) {
    const int64_t w = min64(CHUNK, q->cols - c0);
    const size_t e0 = (size_t)(i * q->cols + c0);
    xo->load(buf, x, e0, (size_t)w);
    quant_span(qo, out, e0, buf, srow(v, i), c0, w, v->bn);
  }
}

/* Rows [r0, r0 + QT) by columns [c0, c0 + w) of a transposed Q, turned
 * through tile[][] in L1. Each piece of X's row (QT elements, a line or
 * two) is read once, into lines[][]: rows a power of two apart share an
 * L1 set, and a line read half at a time was gone before its second half.
 * Byte codes whose row piece has one scale (rows, tensor, static, blocks
 * as wide as the panel) are quantized as each 16 x 16 turns, in registers,
 * into codes[][], and written a line a row: no f32 tile stored and read
 * back, no call a row. */
static void quant_tile(const mb_cpu_quant_t *q, const mb_cpu_qrow_t *xo,
                       const mb_cpu_qrow_t *qo, const void *x, void *out,
                       const scale_view_t *v, int64_t r0, int64_t c0,
                       int64_t w) {
  float tile[QT][PANEL], line[QT];
  const int64_t h = min64(QT, q->rows - r0);
  if (q->vx && h == QT && w % 16 == 0) {              /* 16 x 16 in registers */
    const size_t es = q->xdt == MB_DTYPE_F32 ? 4 : 2; /* f32, bf16, f16 */
    const int direct = q->vx->tileq16 && c0 / v->bn == (c0 + w - 1) / v->bn;
    unsigned char lines[16][QT * 4];
    uint8_t codes[QT][PANEL];
    float s[QT];
    for (int64_t r = 0; direct && r < QT; ++r)
      s[r] = srow(v, r0 + r)[c0 / v->bn];
    for (int64_t c = 0; c < w; c += 16) {
      const unsigned char *xr =
          (const unsigned char *)x + (size_t)((c0 + c) * q->rows + r0) * es;
      for (int64_t j = 0; j < 16; ++j, xr += (size_t)q->rows * es) {
        if (es == 2) /* constant sizes: moves, not a call or rep movs */
          memcpy(lines[j], xr, QT * 2);
        else
          memcpy(lines[j], xr, QT * 4);
        prefetch_l2((const char *)xr + (size_t)(T_AHEAD * QT) * es,
                    (size_t)QT * es);
      }
      for (int64_t r = 0; r < QT; r += 16)
        if (direct)
          q->vx->tileq16(&codes[r][c], PANEL, lines, (size_t)r,
                         sizeof lines[0] / es, s + r);
        else
          q->vx->tile16(&tile[r][c], PANEL, lines, (size_t)r,
                        sizeof lines[0] / es);
    }
    if (direct) {
      q->vx->put_rows(out, (size_t)(r0 * q->cols + c0), (size_t)q->cols,
                      &codes[0][0], PANEL, QT, (size_t)w, q->stream);
      return;
    }
  } else {
    for (int64_t c = 0; c < w; ++c) { /* X row c0 + c has rows cols of Q */
      xo->load(line, x, (size_t)((c0 + c) * q->rows + r0), (size_t)h);
      for (int64_t r = 0; r < h; ++r) tile[r][c] = line[r];
    }
  }
  /* With q->stream the vector loop writes each row's piece (PANEL bytes,
   * a line) with a non-temporal store: plain stores read each line of Q
   * from memory first (in a stand-alone loop, half the time of the whole). */
  for (int64_t r = 0; r < h; ++r) {
    const size_t eq = (size_t)((r0 + r) * q->cols + c0);
    const float *sr = srow(v, r0 + r);
    if (!use_vec(q->vt, v->bn))
      quant_span(qo, out, eq, tile[r], sr, c0, w, v->bn);
    else
      q->vt->quantg(out, eq, tile[r], 0, sr + c0 / v->bn, (size_t)v->bn,
                    (size_t)(c0 % v->bn), (size_t)w, q->stream);
  }
}

/* A transposed Q, inside a parallel region: each thread owns a contiguous
 * run of QT-row bands of Q (X's columns; QT is even, so no byte of i4
 * pairs is shared) and walks X in panels of PANEL rows, each row read
 * along its length: PANEL sequential streams the hardware prefetcher
 * follows (128 were too many on the Xeon VM). Walking down X's columns
 * instead (a line from every row, 16 KiB apart at 8192 bf16 columns) left
 * every line to a demand miss: in a stand-alone loop over 8192^2 bf16 the
 * reads and turns alone took 3x as long. */
static void quant_transposed(const mb_cpu_quant_t *q, const mb_cpu_qrow_t *xo,
                             const mb_cpu_qrow_t *qo, const void *x, void *out,
                             const scale_view_t *v) {
  const int64_t nb = (q->rows + QT - 1) / QT;
  const int64_t nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
  const int64_t b0 = nb * t / nt, b1 = nb * (t + 1) / nt;
  for (int64_t c0 = 0; c0 < q->cols; c0 += PANEL)
    for (int64_t b = b0; b < b1; ++b)
      quant_tile(q, xo, qo, x, out, v, b * QT, c0, min64(PANEL, q->cols - c0));
  if (q->stream) mb__cpu_simd_sfence(); /* before another thread reads Q */
}

/* Pass 2 (and the whole of static quantization), inside a parallel region. */
static void quant_all(const mb_cpu_quant_t *q, const mb_cpu_qrow_t *xo,
                      const mb_cpu_qrow_t *qo, const void *x, void *out,
                      const scale_view_t *v) {
  if (q->transpose) {
    quant_transposed(q, xo, qo, x, out, v);
    return;
  }
  const int64_t unit = mb__cpu_is_nibble(q->qdt) && (q->cols & 1) ? 2 : 1;
#pragma omp for schedule(static)
  for (int64_t u = 0; u < (q->rows + unit - 1) / unit; ++u)
    for (int64_t i = u * unit; i < min64(q->rows, (u + 1) * unit); ++i)
      quant_row(q, xo, qo, x, out, v, i);
  if (q->stream) mb__cpu_simd_sfence(); /* before another thread reads Q */
}

static void atomic_max(atomic_uint *p, uint32_t v) {
  unsigned cur = atomic_load_explicit(p, memory_order_relaxed);
  while (v > cur &&
         !atomic_compare_exchange_weak_explicit(
             p, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
  }
}

/* Dynamic, fused: whole block rows per thread (pairs of them for i4 when a
 * block row has an odd number of odd-length rows). */
static void run_fused(const mb_cpu_quant_t *q, const mb_cpu_qrow_t *xo,
                      const mb_cpu_qrow_t *qo, const void *x, void *out,
                      float *grid) {
  const int64_t unit =
      mb__cpu_is_nibble(q->qdt) && (q->cols & 1) && (q->bm & 1) ? 2 : 1;
  const scale_view_t v = {grid, q->gc, q->bm, q->bn};
#pragma omp parallel num_threads(q->threads)
  {
    uint32_t *loc = q->local + mb__cpu_thread_id() * q->local_each;
#pragma omp for schedule(static)
    for (int64_t u = 0; u < (q->gr + unit - 1) / unit; ++u)
      for (int64_t bi = u * unit; bi < min64(q->gr, (u + 1) * unit); ++bi) {
        memset(loc, 0, (size_t)q->gc * sizeof *loc);
        amax_rows(xo, q->vx, x, bi * q->bm, (bi + 1) * q->bm, q->cols, q->bn,
                  loc, keep_nan(q));
        for (int64_t bj = 0; bj < q->gc; ++bj)
          grid[bi * q->gc + bj] =
              scale_of(q, loc[bj], qo->qmax, bi * q->gc + bj);
        for (int64_t i = bi * q->bm; i < (bi + 1) * q->bm; ++i)
          quant_row(q, xo, qo, x, out, &v, i);
      }
    if (q->stream) mb__cpu_simd_sfence();
  }
}

/* Dynamic, two passes. Pass 1 walks X as stored (rows of X^T's blocks when
 * transposed: X blocks are bn x bm, and X block (i, j) is Q block (j, i)). */
static void run_two_pass(const mb_cpu_quant_t *q, const mb_cpu_qrow_t *xo,
                         const mb_cpu_qrow_t *qo, const void *x, void *out,
                         float *grid) {
  const int64_t xrows = q->transpose ? q->cols : q->rows;
  const int64_t xcols = q->transpose ? q->rows : q->cols;
  const int64_t xbm = q->transpose ? q->bn : q->bm;
  const int64_t xbn = q->transpose ? q->bm : q->bn;
  const int64_t xgc = xcols / xbn;
  const int64_t stride_i = q->transpose ? 1 : q->gc;
  const int64_t stride_j = q->transpose ? q->gc : 1;
  const scale_view_t v = {grid, q->gc, q->bm, q->bn};
#pragma omp parallel num_threads(q->threads)
  {
#pragma omp for schedule(static)
    for (int64_t g = 0; g < q->gr * q->gc; ++g)
      atomic_store_explicit(&q->amax[g], 0u, memory_order_relaxed);
    /* A contiguous share of X's rows: few block-row changes, few flushes. */
    const int64_t nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    const int64_t r0 = xrows * t / nt, r1 = xrows * (t + 1) / nt;
    uint32_t *loc = q->local + (size_t)t * q->local_each;
    for (int64_t i = r0; i < r1;) {
      const int64_t bi = i / xbm, end = min64(r1, (bi + 1) * xbm);
      memset(loc, 0, (size_t)xgc * sizeof *loc);
      amax_rows(xo, q->vx, x, i, end, xcols, xbn, loc, keep_nan(q));
      i = end;
      for (int64_t bj = 0; bj < xgc; ++bj)
        atomic_max(&q->amax[bi * stride_i + bj * stride_j], loc[bj]);
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (int64_t g = 0; g < q->gr * q->gc; ++g)
      grid[g] =
          scale_of(q, atomic_load_explicit(&q->amax[g], memory_order_relaxed),
                   qo->qmax, g);
    quant_all(q, xo, qo, x, out, &v);
  }
}

static void run_static(const mb_cpu_quant_t *q, const mb_cpu_qrow_t *xo,
                       const mb_cpu_qrow_t *qo, const void *x, void *out,
                       float *grid) {
  for (int64_t g = 0; g < q->gr * q->gc; ++g) grid[g] = q->static_scale;
  const scale_view_t v = {&q->static_scale, 1, q->rows, q->cols};
#pragma omp parallel num_threads(q->threads)
  quant_all(q, xo, qo, x, out, &v);
}

void mb__cpu_quant_run(const mb_cpu_quant_t *q, const void *x, void *out,
                       void *grid) {
  const mb_cpu_qrow_t *xo = mb__cpu_qrow(q->xdt), *qo = mb__cpu_qrow(q->qdt);
  /* e8m0: the scales are computed in f32 (powers of two, exact) and
   * stored as bytes after; the grid is 1/32 of X or less for MX. */
  float *g = q->grid32 ? q->grid32 : grid;
  if (q->static_scale > 0.0f)
    run_static(q, xo, qo, x, out, g);
  else if (q->fused)
    run_fused(q, xo, qo, x, out, g);
  else
    run_two_pass(q, xo, qo, x, out, g);
  if (q->nv_sb)
    memcpy(grid, q->nv_sb, (size_t)(q->gr * q->gc));
  else if (q->grid32)
    mb__cpu_e8m0_store(grid, g, (size_t)(q->gr * q->gc));
}

mb_status_t mb__cpu_quant_scales(mb_cpu_state_t *st, mb_cpu_quant_t *q,
                                 mb_dtype_t sdtype) {
  if (sdtype == MB_DTYPE_F8E4M3 && q->nv_s > 0.0f &&
      q->qdt == MB_DTYPE_F4E2M1) { /* NVFP4 */
    q->grid32 = malloc((size_t)(q->gr * q->gc) * sizeof *q->grid32);
    q->nv_sb = malloc((size_t)(q->gr * q->gc));
    if (q->grid32 && q->nv_sb) return MB_OK;
    MB_CPU_ERROR(st, "cpu/c: quantize: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  if (sdtype == MB_DTYPE_F8E4M3) {
    MB_CPU_ERROR(st,
                 "cpu/c: f8e4m3 scales are NVFP4's: f4e2m1 elements "
                 "and a per-tensor scale");
    return MB_ERR_UNSUPPORTED;
  }
  if (sdtype != MB_DTYPE_E8M0) return MB_OK;
  static const struct {
    mb_dtype_t dt;
    int emax;
  } k_emax[] = {{MB_DTYPE_F8E4M3, MB_CVT_MX_EMAX_E4M3},
                {MB_DTYPE_F8E5M2, MB_CVT_MX_EMAX_E5M2},
                {MB_DTYPE_F4E2M1, MB_CVT_MX_EMAX_E2M1}};
  for (size_t i = 0; i < sizeof k_emax / sizeof k_emax[0]; ++i)
    if (k_emax[i].dt == q->qdt) q->mx_emax = k_emax[i].emax;
  if (!q->mx_emax) {
    MB_CPU_ERROR(st, "cpu/c: e8m0 scales go with fp8 or fp4 elements, not %s",
                 st->host.dtype_name(q->qdt));
    return MB_ERR_UNSUPPORTED;
  }
  q->grid32 = malloc((size_t)(q->gr * q->gc) * sizeof *q->grid32);
  if (!q->grid32) {
    MB_CPU_ERROR(st, "cpu/c: quantize: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  return MB_OK;
}

mb_status_t mb__cpu_quant_init(mb_cpu_state_t *st, mb_cpu_quant_t *q,
                               mb_dtype_t xdt, mb_dtype_t qdt, int64_t rows,
                               int64_t cols, const mb_scaling_t *s,
                               int transpose, double static_scale) {
  const mb_cpu_qrow_t *xo = mb__cpu_qrow(xdt), *qo = mb__cpu_qrow(qdt);
  memset(q, 0, sizeof *q);
  if (!xo || !xo->store || !qo || !qo->quant1) {
    MB_CPU_ERROR(st, "cpu/c: quantize %s -> %s is not implemented",
                 st->host.dtype_name(xdt), st->host.dtype_name(qdt));
    return MB_ERR_UNSUPPORTED;
  }
  *q = (mb_cpu_quant_t){
      .xdt = xdt,
      .qdt = qdt,
      .rows = rows,
      .cols = cols,
      .bm = s->block[0],
      .bn = s->block[1],
      .gr = rows / s->block[0],
      .gc = cols / s->block[1],
      .transpose = transpose,
      .static_scale = (float)static_scale,
      .threads = st->threads,
      .vx = mb__cpu_qvec(xdt, qdt),
      .vt = mb__cpu_qvec(MB_DTYPE_F32, qdt),
  };
  /* The copy kernel's rule: stream once X and Q outgrow the cache. A
   * transposed Q of byte codes always streams: its tiles' rows are whole
   * lines (PANEL bytes), written once and not read again in the run. */
  q->stream =
      transpose
          ? q->vt && !mb__cpu_is_nibble(qdt)
          : q->vx && mb__cpu_stream_stores(
                         st->cache_bytes[2],
                         st->host.dtype_bytes(xdt, (size_t)(rows * cols)) +
                             st->host.dtype_bytes(qdt, (size_t)(rows * cols)));
  if (q->static_scale > 0.0f) return MB_OK;
  q->fused = !transpose && q->gr >= 2 * (int64_t)st->threads;
  /* Block maxima per thread: Q's block columns (fused), or X's (two-pass);
   * rounded up to a cache line so threads do not share one. */
  const int64_t xgc = transpose ? rows / s->block[0] : q->gc;
  q->local_each = ((size_t)(xgc > q->gc ? xgc : q->gc) + 15) & ~(size_t)15;
  q->local = malloc(st->threads * q->local_each * sizeof *q->local);
  q->amax = malloc((size_t)(q->gr * q->gc) * sizeof *q->amax);
  if (!q->local || !q->amax) {
    mb__cpu_quant_fini(q);
    MB_CPU_ERROR(st, "cpu/c: quantize: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  return MB_OK;
}

void mb__cpu_quant_fini(mb_cpu_quant_t *q) {
  if (!q) return;
  free(q->local);
  free((void *)q->amax);
  free(q->grid32);
  free(q->nv_sb);
  q->local = NULL;
  q->amax = NULL;
  q->grid32 = NULL;
  q->nv_sb = NULL;
}

/* ---- the kernels --------------------------------------------------------- */

mb_status_t mb__cpu_quantize_c_prepare(void *bstate,
                                       const mb_kernel_call_t *call,
                                       void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const int t = (p->flags & MB_PARAM_TRANSPOSE) != 0;
  mb_cpu_quant_t *q = malloc(sizeof *q);
  if (!q) {
    MB_CPU_ERROR(st, "cpu/c: quantize: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  /* NVFP4's static scale is the per-tensor S: its blocks are dynamic. */
  const int nv = p->dtype_scale == MB_DTYPE_F8E4M3;
  const mb_status_t status = mb__cpu_quant_init(
      st, q, p->dtype, p->dtype_out, t ? p->shape[1] : p->shape[0],
      t ? p->shape[0] : p->shape[1], &p->scale_a, t,
      (p->flags & MB_PARAM_STATIC) && !nv ? p->scale : 0.0);
  if (status == MB_OK && nv) q->nv_s = (float)p->scale;
  const mb_status_t scales =
      status == MB_OK ? mb__cpu_quant_scales(st, q, p->dtype_scale) : status;
  if (scales != MB_OK) {
    if (status == MB_OK) mb__cpu_quant_fini(q);
    free(q);
    return scales;
  }
  *kstate = q;
  return MB_OK;
}

/* "portable": the same kernel on the portable loops only, so the vector
 * loops can be checked against them (and timed beside them). */
mb_status_t mb__cpu_quantize_portable_prepare(void *bstate,
                                              const mb_kernel_call_t *call,
                                              void **kstate) {
  const mb_status_t st = mb__cpu_quantize_c_prepare(bstate, call, kstate);
  if (st == MB_OK) {
    mb_cpu_quant_t *q = *kstate;
    q->vx = q->vt = NULL;
    q->stream = 0;
  }
  return st;
}

mb_status_t mb__cpu_quantize_portable_run(void *kstate,
                                          const mb_kernel_call_t *call) {
  return mb__cpu_quantize_c_run(kstate, call);
}

void mb__cpu_quantize_portable_release(void *kstate) {
  mb__cpu_quantize_c_release(kstate);
}

mb_status_t mb__cpu_quantize_c_run(void *kstate, const mb_kernel_call_t *call) {
  mb__cpu_quant_run(kstate, call->in[0], call->out[0], call->out[1]);
  return MB_OK;
}

void mb__cpu_quantize_c_release(void *kstate) {
  mb__cpu_quant_fini(kstate);
  free(kstate);
}
