/* gemm's reference (gemm.c's op): each checked element of D recomputed in
 * double from the f32-exact values of A and B and their f32 scale grids,
 * (e8m0 scale grids decoded to f32, exactly; NVFP4's e4m3 ones decoded
 * and multiplied by the per-tensor scale in f32), reading rows of K elements of
 * each side - in place when the host buffer
 * already has that layout, else from one transposed copy in the operand's
 * own dtype (lib/ops/transpose.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_internal.h"
#include "ops/gemm_internal.h"
#include "ops/transpose.h"

double mb__gemm_ref_cost(const mb_op_params_t *p) {
  return (double)p->shape[GK];
}

/* One side of the product as the dot products read it: `rows` rows of K
 * contiguous elements (A: M x K, B: N x K, its columns), in `dtype`, every
 * value exact in f32. The rows are the caller's host buffer when its
 * layout already is that (A not transposed, B with trans_b; like add's
 * and copy's references, it reads the host inputs, which outlive it), else
 * a transposed (or quantized) copy in `owned`. A large operand is not
 * converted ahead: a 16384^3 check reads 2 x 8194 rows, not all 2 x 2^28
 * elements, and f32 copies of A and B cost seconds of page faults alone. */
typedef struct ref_rows {
  const void *vals;
  mb_dtype_t dtype;
  void *owned;
  float lut[256]; /* 8-bit dtypes: byte -> f32, as mb_convert gives it */
} ref_rows_t;

/* The rows, the scale grids (f32), and D's initial values (read in place,
 * NULL for beta = 0). */
typedef struct gemm_ref {
  int64_t m, k, n;
  double alpha, beta;
  ref_rows_t a, bt;
  float *sa, *sb;
  mb_scaling_t scale_a, scale_b;
  int64_t sa_cols, sb_cols;
  const void *d0;
  mb_dtype_t d_dtype;
} gemm_ref_t;

void mb__gemm_ref_release(void *state) {
  gemm_ref_t *r = state;
  if (!r) return;
  free(r->a.owned);
  free(r->bt.owned);
  free(r->sa);
  free(r->sb);
  free(r);
}

/* Operands of at most this many elements are converted to f32 ahead (a
 * 2048^2 operand: 16 MB, a few milliseconds). */
#define REF_CONVERT_MAX ((size_t)1 << 22)

/* rr reads `vals` (dtype) as they are, or their transpose when `flip`
 * (stored rows x cols, read as cols rows of rows elements). `vals` is
 * freed when `take` (a quantized copy), whether kept as rr->owned or not. */
static mb_status_t rows_from(ref_rows_t *rr, const void *vals, mb_dtype_t dt,
                             int64_t rows, int64_t cols, int flip, int take) {
  rr->dtype = flip ? mb__transpose_dtype(dt) : dt;
  /* Packed nibbles (f4e2m1) read in place would start odd rows mid-byte:
   * they are read as e4m3 bytes (exact) instead, as a flip gives them. */
  if (!flip && dt == MB_DTYPE_F4E2M1) {
    const size_t n = (size_t)(rows * cols);
    void *t = malloc(n ? n : 1);
    if (t) mb_convert(t, MB_DTYPE_F8E4M3, vals, dt, n, 0);
    if (take) free((void *)vals);
    if (!t) return MB_ERR_NO_MEMORY;
    rr->vals = rr->owned = t;
    rr->dtype = MB_DTYPE_F8E4M3;
  } else if (flip) {
    void *t = malloc(mb_dtype_bytes(rr->dtype, (size_t)(rows * cols)));
    if (t) mb__transpose(vals, dt, t, rows, cols);
    if (take) free((void *)vals);
    if (!t) return MB_ERR_NO_MEMORY;
    rr->vals = rr->owned = t;
  } else {
    rr->vals = vals;
    if (take) rr->owned = (void *)vals;
  }
  /* A small operand is converted once, as every element of a small GEMM
   * is checked and would convert its rows again each time; a large one
   * is converted a row at a time, only where the samples read. */
  const size_t count = (size_t)(rows * cols);
  if (rr->dtype != MB_DTYPE_F32 && count <= REF_CONVERT_MAX) {
    float *f = malloc(count * sizeof *f);
    if (!f) return MB_ERR_NO_MEMORY;
    mb_convert(f, MB_DTYPE_F32, rr->vals, rr->dtype, count, 0);
    free(rr->owned);
    rr->vals = rr->owned = f;
    rr->dtype = MB_DTYPE_F32;
  }
  /* A table keeps the per-element cost of fp8 and integer rows low (each
   * row is converted again for every element that reads it); mb_convert
   * fills it, so the values are the ones a converted copy held. */
  if (mb_dtype_bits(rr->dtype) == 8) {
    unsigned char bytes[256];
    for (int i = 0; i < 256; i++) bytes[i] = (unsigned char)i;
    mb_convert(rr->lut, MB_DTYPE_F32, bytes, rr->dtype, 256, 0);
  }
  return MB_OK;
}

/* NVFP4: a block's scale is fl32(s_b S), one f32 rounding, as dequantize
 * applies it (S: the static scale); other scale dtypes are left as they
 * are. */
static void nvfp4_scales(const mb_op_params_t *p, float *grid, size_t n) {
  if (p->dtype_scale != MB_DTYPE_F8E4M3) return;
  for (size_t i = 0; i < n; i++) grid[i] *= (float)p->scale;
}

/* One side of the product (stored rows x cols, flipped when `flip`) + its
 * f32 scale grid: given, or quantized here exactly as the op's semantics
 * say (scales and quantization never go with the trans flags, so their
 * rows x cols is the stored shape too). Quantizing needs the whole operand
 * in f32 at once, so that path still converts everything. */
static mb_status_t ref_side(const mb_op_params_t *p, const void *const *host,
                            uint32_t role, int flip, ref_rows_t *rr,
                            float **grid) {
  const mb_scaling_t *s = role == ROLE_A ? &p->scale_a : &p->scale_b;
  const int64_t rows = role == ROLE_A
                           ? (trans_a(p) ? p->shape[GK] : p->shape[GM])
                           : (trans_b(p) ? p->shape[GN] : p->shape[GK]);
  const int64_t cols = role == ROLE_A
                           ? (trans_a(p) ? p->shape[GM] : p->shape[GK])
                           : (trans_b(p) ? p->shape[GK] : p->shape[GN]);
  const size_t count = (size_t)(rows * cols);
  int64_t gr, gc;
  mb__scaling_grid(s, rows, cols, &gr, &gc);
  *grid = malloc((size_t)(gr * gc) * sizeof **grid);
  if (!*grid) return MB_ERR_NO_MEMORY;
  mb_dtype_t dt = role == ROLE_A ? p->dtype : p->dtype_b;
  const int nv = p->dtype_scale == MB_DTYPE_F8E4M3;
  if (!(p->flags & MB_PARAM_QUANTIZE_INPUTS)) {
    const void *given = host[role == ROLE_A ? ROLE_SA : ROLE_SB];
    if (s->mode == MB_SCALE_NONE)
      (*grid)[0] = 1.0f;
    else /* f32 as given, or e8m0 / e4m3 decoded (exactly) */
      mb_convert(
          *grid, MB_DTYPE_F32, given,
          p->dtype_scale == MB_DTYPE_E8M0 || nv ? p->dtype_scale : MB_DTYPE_F32,
          (size_t)(gr * gc), 0);
    nvfp4_scales(p, *grid, (size_t)(gr * gc));
    return rows_from(rr, host[role], dt, rows, cols, flip, 0);
  }
  mb_dtype_t qd = role == ROLE_A ? qa_dtype(p) : qb_dtype(p);
  float *x = malloc(count * sizeof *x);
  void *q = malloc(mb_dtype_bytes(qd, count));
  uint8_t *g8 = nv ? malloc((size_t)(gr * gc)) : NULL;
  if (!x || !q || (nv && !g8)) {
    free(x);
    free(q);
    free(g8);
    return MB_ERR_NO_MEMORY;
  }
  mb_convert(x, MB_DTYPE_F32, host[role], dt, count, 0);
  if (nv) { /* the static scale is S; the block scales are computed */
    mb__nvfp4_quantize_ref(x, rows, cols, s, (float)p->scale, q, g8);
    mb_convert(*grid, MB_DTYPE_F32, g8, MB_DTYPE_F8E4M3, (size_t)(gr * gc), 0);
    nvfp4_scales(p, *grid, (size_t)(gr * gc));
  } else {
    mb__quantize_ref_sd(x, rows, cols, s, qd, p->dtype_scale,
                        (p->flags & MB_PARAM_STATIC) ? p->scale : 0.0, q,
                        *grid);
  }
  free(x);
  free(g8);
  return rows_from(rr, q, qd, rows, cols, flip, 1);
}

mb_status_t mb__gemm_ref_prepare(const mb_op_params_t *p,
                                 const void *const *host, void **state) {
  gemm_ref_t *r = calloc(1, sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "gemm reference: out of memory");
  r->m = p->shape[GM], r->k = p->shape[GK], r->n = p->shape[GN];
  r->alpha = p->alpha, r->beta = p->beta;
  r->scale_a = p->scale_a, r->scale_b = p->scale_b;
  int64_t rows;
  mb__scaling_grid(&p->scale_a, r->m, r->k, &rows, &r->sa_cols);
  mb__scaling_grid(&p->scale_b, r->k, r->n, &rows, &r->sb_cols);
  /* Stored K x M (trans_a) -> M x K; stored K x N (no trans_b) -> N x K. */
  mb_status_t st = ref_side(p, host, ROLE_A, trans_a(p), &r->a, &r->sa);
  if (st == MB_OK) st = ref_side(p, host, ROLE_B, !trans_b(p), &r->bt, &r->sb);
  if (st != MB_OK) {
    mb__gemm_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY,
                    "gemm reference: out of memory for %lldx%lldx%lld",
                    (long long)p->shape[GM], (long long)p->shape[GK],
                    (long long)p->shape[GN]);
  }
  if (p->beta != 0) r->d0 = host[ROLE_D], r->d_dtype = p->dtype_out;
  *state = r;
  return MB_OK;
}

/* Elements [k0, k0 + len) of row `row` as f32: in place for f32, else
 * converted into buf (len <= REF_CHUNK). */
enum { REF_CHUNK = 256 };
static const float *row_f32(const ref_rows_t *rr, int64_t k, int64_t row,
                            int64_t k0, int64_t len, float *buf) {
  const size_t at = (size_t)(row * k + k0);
  if (rr->dtype == MB_DTYPE_F32) return (const float *)rr->vals + at;
  if (mb_dtype_bits(rr->dtype) == 8) {
    const unsigned char *b = (const unsigned char *)rr->vals + at;
    for (int64_t t = 0; t < len; t++) buf[t] = rr->lut[b[t]];
  } else { /* bf16, f16: mb_convert's fast paths */
    mb_convert(buf, MB_DTYPE_F32,
               (const char *)rr->vals + mb_dtype_bytes(rr->dtype, at),
               rr->dtype, (size_t)len, 0);
  }
  return buf;
}

/* The scales of K positions [k0, k0 + len) along one side: grid[(k / blk)
 * * stride] (the same grid entries mb__scale_at picks), without a division
 * per position; 1 when the side is not scaled. */
static void scale_run(double *out, const float *grid, const mb_scaling_t *s,
                      int64_t stride, int64_t blk, int64_t k0, int64_t len) {
  if (s->mode == MB_SCALE_NONE) {
    for (int64_t t = 0; t < len; t++) out[t] = 1.0;
    return;
  }
  int64_t q = k0 / blk, rem = k0 % blk;
  for (int64_t t = 0; t < len; t++) {
    out[t] = (double)grid[q * stride];
    if (++rem == blk) rem = 0, q++;
  }
}

void mb__gemm_ref_element(const void *state, uint32_t out, size_t idx,
                          double *value, double *scale) {
  const gemm_ref_t *r = state;
  const int64_t i = (int64_t)idx / r->n, j = (int64_t)idx % r->n;
  /* Unscaled, each scale is 1 and multiplying by it is exact, so the
   * products are the same without it. */
  const int unscaled =
      r->scale_a.mode == MB_SCALE_NONE && r->scale_b.mode == MB_SCALE_NONE;
  float abuf[REF_CHUNK], bbuf[REF_CHUNK];
  double sa[REF_CHUNK], sb[REF_CHUNK];
  /* Where row i's scales start in A's grid, column j's in B's. */
  const int64_t a_row = r->scale_a.mode == MB_SCALE_NONE
                            ? 0
                            : i / r->scale_a.block[0] * r->sa_cols;
  const int64_t b_col =
      r->scale_b.mode == MB_SCALE_NONE ? 0 : j / r->scale_b.block[1];
  double acc = 0, mag = 0;
  (void)out;
  for (int64_t k0 = 0; k0 < r->k; k0 += REF_CHUNK) {
    const int64_t len = r->k - k0 < REF_CHUNK ? r->k - k0 : REF_CHUNK;
    const float *a = row_f32(&r->a, r->k, i, k0, len, abuf);
    const float *b = row_f32(&r->bt, r->k, j, k0, len, bbuf);
    if (!unscaled) {
      scale_run(sa, r->sa + a_row, &r->scale_a, 1, r->scale_a.block[1], k0,
                len);
      scale_run(sb, r->sb + b_col, &r->scale_b, r->sb_cols, r->scale_b.block[0],
                k0, len);
    }
    for (int64_t t = 0; t < len; t++) {
      double prod;
      if (unscaled) {
        prod = (double)a[t] * (double)b[t];
      } else {
        prod = (double)a[t] * sa[t] * (double)b[t] * sb[t];
      }
      acc += prod;
      mag += fabs(prod);
    }
  }
  *value = r->alpha * acc;
  *scale = fabs(r->alpha) * mag;
  if (r->d0) {
    const double d0 = mb__load(r->d0, r->d_dtype, idx);
    *value += r->beta * d0;
    *scale += fabs(r->beta * d0);
  }
}
