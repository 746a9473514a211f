/* CPU backend — gemm in portable C, cache-blocked.
 *
 * D[M,N] = alpha * A[M,K]·B[K,N] + beta * D, row-major, f32 accumulation.
 * With MB_PARAM_TRANS_A A is stored K x M, with MB_PARAM_TRANS_B B is
 * stored N x K; such an operand's blocks are gathered into the block
 * buffers already transposed, so the inner kernel is the same for all four
 * layouts.
 *
 * D is cut into tiles of TILE_M × TILE_N, shared statically among the pinned
 * threads. A thread computes a tile into its own f32 accumulator, walking K
 * in steps of TILE_K: the A block (TILE_M × TILE_K, 32 KiB) and the B panel
 * (TILE_K × TILE_N, 256 KiB) stay in L1/L2 while they are reused. bf16
 * blocks are converted to f32 as they are needed (f32 blocks are used in
 * place). Finally the tile is scaled, added to beta·D and rounded once into
 * D. The inner loop runs i-k-j: for two rows of A and four steps of k it
 * updates two contiguous rows of the accumulator, which gcc vectorises into
 * FMAs (6 loads and 2 stores per 8 FMAs). */
#include "mb_cvt.h"
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

enum { TILE_M = 64, TILE_K = 128, TILE_N = 512 };

/* Returns rows [r0, r0+rows) × columns [c0, c0+cols) of a matrix as f32
 * row-major, in place or converted into `buf`, and the row stride of what
 * it returns in *ld_out. `ld` is the stored row length: of the matrix
 * (row-major storage) or of its transpose (transposed storage). */
typedef const float *(*block_fn)(const void *m, size_t ld, size_t r0, size_t c0,
                                 size_t rows, size_t cols, float *buf,
                                 size_t *ld_out);

/* Writes rows × cols of D at (r0, c0) from the accumulator. */
typedef void (*store_fn)(void *d, size_t ld, size_t r0, size_t c0, size_t rows,
                         size_t cols, const float *acc, float alpha,
                         float beta);

typedef struct gemm_c {
  size_t m, k, n;
  float alpha, beta;
  unsigned threads;
  size_t lda, ldb; /* stored row lengths: K or M (trans_a), N or K (trans_b) */
  block_fn block_a, block_b;
  store_fn store;
  float *work;      /* per thread: accumulator, A block, B panel */
  size_t work_each; /* floats per thread */
} gemm_c_t;

static const size_t acc_floats = (size_t)TILE_M * TILE_N;
static const size_t a_floats = (size_t)TILE_M * TILE_K;
static const size_t b_floats = (size_t)TILE_K * TILE_N;

/* ---- operand access, one entry per dtype --------------------------------- */

static const float *block_f32(const void *m, size_t ld, size_t r0, size_t c0,
                              size_t rows, size_t cols, float *buf,
                              size_t *ld_out) {
  (void)rows, (void)cols, (void)buf;
  *ld_out = ld;
  return (const float *)m + r0 * ld + c0;
}

MB_CPU_CLONES static void bf16_row_to_f32(float *restrict dst,
                                          const uint16_t *restrict src,
                                          size_t n) {
  for (size_t j = 0; j < n; ++j) dst[j] = mb__cvt_bf16_to_f32(src[j]);
}

static const float *block_bf16(const void *m, size_t ld, size_t r0, size_t c0,
                               size_t rows, size_t cols, float *buf,
                               size_t *ld_out) {
  const uint16_t *src = (const uint16_t *)m + r0 * ld + c0;
  for (size_t i = 0; i < rows; ++i)
    bf16_row_to_f32(buf + i * cols, src + i * ld, cols);
  *ld_out = cols;
  return buf;
}

/* Element i of a stored operand, as f32: all that the transposed gathers
 * of the two dtypes do differently. */
typedef float (*load_fn)(const void *src, size_t i);

static inline float load_f32(const void *src, size_t i) {
  return ((const float *)src)[i];
}

static inline float load_bf16(const void *src, size_t i) {
  return mb__cvt_bf16_to_f32(((const uint16_t *)src)[i]);
}

/* Transposed storage: logical (r, c) is stored at [c * ld + r], `src`
 * points at (r0, c0). Eight stored rows at a time are read along their
 * length (contiguous) and written as eight adjacent columns of buf, so
 * neither side strides one element per cache line. Always inlined, before
 * the early optimisations, so each caller compiles with its `load` to the
 * same loop nest as when the two were written out (objdump-identical). */
__attribute__((always_inline)) static inline const float *gather_t(
    load_fn load, const void *src, size_t ld, size_t rows, size_t cols,
    float *buf, size_t *ld_out) {
  size_t j = 0;
  for (; j + 8 <= cols; j += 8)
    for (size_t i = 0; i < rows; ++i)
      for (size_t jj = 0; jj < 8; ++jj)
        buf[i * cols + j + jj] = load(src, (j + jj) * ld + i);
  for (; j < cols; ++j)
    for (size_t i = 0; i < rows; ++i) buf[i * cols + j] = load(src, j * ld + i);
  *ld_out = cols;
  return buf;
}

static const float *block_f32_t(const void *m, size_t ld, size_t r0, size_t c0,
                                size_t rows, size_t cols, float *buf,
                                size_t *ld_out) {
  return gather_t(load_f32, (const float *)m + c0 * ld + r0, ld, rows, cols,
                  buf, ld_out);
}

static const float *block_bf16_t(const void *m, size_t ld, size_t r0, size_t c0,
                                 size_t rows, size_t cols, float *buf,
                                 size_t *ld_out) {
  return gather_t(load_bf16, (const uint16_t *)m + c0 * ld + r0, ld, rows, cols,
                  buf, ld_out);
}

/* beta == 0 must not read D: it may hold anything, NaN included (BLAS). */
MB_CPU_CLONES static void store_f32_row(float *restrict d,
                                        const float *restrict acc, size_t n,
                                        float alpha, float beta) {
  if (beta == 0.0f)
    for (size_t j = 0; j < n; ++j) d[j] = alpha * acc[j];
  else
    for (size_t j = 0; j < n; ++j) d[j] = alpha * acc[j] + beta * d[j];
}

MB_CPU_CLONES static void store_bf16_row(uint16_t *restrict d,
                                         const float *restrict acc, size_t n,
                                         float alpha, float beta) {
  if (beta == 0.0f)
    for (size_t j = 0; j < n; ++j) d[j] = mb__cvt_f32_to_bf16(alpha * acc[j]);
  else
    for (size_t j = 0; j < n; ++j)
      d[j] = mb__cvt_f32_to_bf16(alpha * acc[j] +
                                 beta * mb__cvt_bf16_to_f32(d[j]));
}

static void store_f32(void *d, size_t ld, size_t r0, size_t c0, size_t rows,
                      size_t cols, const float *acc, float alpha, float beta) {
  for (size_t i = 0; i < rows; ++i)
    store_f32_row((float *)d + (r0 + i) * ld + c0, acc + i * cols, cols, alpha,
                  beta);
}

static void store_bf16(void *d, size_t ld, size_t r0, size_t c0, size_t rows,
                       size_t cols, const float *acc, float alpha, float beta) {
  for (size_t i = 0; i < rows; ++i)
    store_bf16_row((uint16_t *)d + (r0 + i) * ld + c0, acc + i * cols, cols,
                   alpha, beta);
}

static const struct {
  mb_dtype_t dtype;
  block_fn block, block_t; /* row-major / transposed storage */
  store_fn store;
} dtype_ops[] = {
    {MB_DTYPE_F32, block_f32, block_f32_t, store_f32},
    {MB_DTYPE_BF16, block_bf16, block_bf16_t, store_bf16},
};

/* ---- the inner kernel ---------------------------------------------------- */

/* c[rows × cols] += a[rows × depth] · b[depth × cols]; c has `cols` per row.
 * Two rows at a time share every load of b; four k steps at a time share
 * every load and store of c. */
MB_CPU_CLONES void mb__cpu_block_multiply(size_t rows, size_t cols,
                                          size_t depth, const float *a,
                                          size_t lda, const float *b,
                                          size_t ldb, float *restrict c) {
  size_t i = 0;
  for (; i + 2 <= rows; i += 2) {
    float *restrict c0 = c + i * cols, *restrict c1 = c0 + cols;
    const float *a0 = a + i * lda, *a1 = a0 + lda;
    size_t p = 0;
    for (; p + 4 <= depth; p += 4) {
      const float *restrict b0 = b + p * ldb, *restrict b1 = b0 + ldb,
                            *restrict b2 = b1 + ldb, *restrict b3 = b2 + ldb;
      const float x0 = a0[p], x1 = a0[p + 1], x2 = a0[p + 2], x3 = a0[p + 3];
      const float y0 = a1[p], y1 = a1[p + 1], y2 = a1[p + 2], y3 = a1[p + 3];
      for (size_t j = 0; j < cols; ++j) {
        float s = c0[j], t = c1[j];
        s += x0 * b0[j];
        t += y0 * b0[j];
        s += x1 * b1[j];
        t += y1 * b1[j];
        s += x2 * b2[j];
        t += y2 * b2[j];
        s += x3 * b3[j];
        t += y3 * b3[j];
        c0[j] = s;
        c1[j] = t;
      }
    }
    for (; p < depth; ++p) {
      const float *restrict bp = b + p * ldb;
      const float x = a0[p], y = a1[p];
      for (size_t j = 0; j < cols; ++j) {
        c0[j] += x * bp[j];
        c1[j] += y * bp[j];
      }
    }
  }
  for (; i < rows; ++i) {
    float *restrict ci = c + i * cols;
    const float *ai = a + i * lda;
    for (size_t p = 0; p < depth; ++p) {
      const float *restrict bp = b + p * ldb;
      const float x = ai[p];
      for (size_t j = 0; j < cols; ++j) ci[j] += x * bp[j];
    }
  }
}

static size_t min_size(size_t a, size_t b) {
  return a < b ? a : b;
}

/* One tile of D: rows [i0, i0+TILE_M) × columns [j0, j0+TILE_N). */
static void gemm_tile(const gemm_c_t *g, const void *a, const void *b, void *d,
                      size_t i0, size_t j0, float *work) {
  const size_t rows = min_size(TILE_M, g->m - i0);
  const size_t cols = min_size(TILE_N, g->n - j0);
  float *acc = work, *a_buf = acc + acc_floats, *b_buf = a_buf + a_floats;
  memset(acc, 0, rows * cols * sizeof *acc);
  for (size_t p0 = 0; p0 < g->k; p0 += TILE_K) {
    const size_t depth = min_size(TILE_K, g->k - p0);
    size_t lda, ldb;
    const float *ab = g->block_a(a, g->lda, i0, p0, rows, depth, a_buf, &lda);
    const float *bb = g->block_b(b, g->ldb, p0, j0, depth, cols, b_buf, &ldb);
    mb__cpu_block_multiply(rows, cols, depth, ab, lda, bb, ldb, acc);
  }
  g->store(d, g->n, i0, j0, rows, cols, acc, g->alpha, g->beta);
}

mb_status_t mb__cpu_gemm_c_run(void *kstate, const mb_kernel_call_t *call) {
  const gemm_c_t *g = kstate;
  const void *a = call->in[0], *b = call->in[1];
  void *d = call->out[0];
  const size_t tiles_n = (g->n + TILE_N - 1) / TILE_N;
  const size_t tiles = (g->m + TILE_M - 1) / TILE_M * tiles_n;
#pragma omp parallel num_threads(g->threads)
  {
    float *work = g->work + mb__cpu_thread_id() * g->work_each;
    /* Row-major tile order: a thread's consecutive tiles share A rows. */
#pragma omp for schedule(static)
    for (size_t t = 0; t < tiles; ++t)
      gemm_tile(g, a, b, d, t / tiles_n * TILE_M, t % tiles_n * TILE_N, work);
  }
  return MB_OK;
}

static int find_ops(mb_dtype_t dtype, int transposed, block_fn *block,
                    store_fn *store) {
  for (size_t i = 0; i < sizeof dtype_ops / sizeof dtype_ops[0]; ++i) {
    if (dtype_ops[i].dtype != dtype) continue;
    if (block) *block = transposed ? dtype_ops[i].block_t : dtype_ops[i].block;
    if (store) *store = dtype_ops[i].store;
    return 1;
  }
  return 0;
}

mb_status_t mb__cpu_gemm_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                   void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const int ta = (p->flags & MB_PARAM_TRANS_A) != 0;
  const int tb = (p->flags & MB_PARAM_TRANS_B) != 0;
  gemm_c_t g = {
      .m = (size_t)p->shape[0],
      .k = (size_t)p->shape[1],
      .n = (size_t)p->shape[2],
      .lda = (size_t)(ta ? p->shape[0] : p->shape[1]),
      .ldb = (size_t)(tb ? p->shape[1] : p->shape[2]),
      .alpha = (float)p->alpha,
      .beta = (float)p->beta,
      .threads = st->threads,
      .work_each = acc_floats + a_floats + b_floats,
  };
  if (p->dtype_acc != MB_DTYPE_F32 ||
      !find_ops(p->dtype, ta, &g.block_a, NULL) ||
      !find_ops(p->dtype_b, tb, &g.block_b, NULL) ||
      !find_ops(p->dtype_out, 0, NULL, &g.store)) {
    MB_CPU_ERROR(st, "cpu/c: gemm %s x %s -> %s (acc %s) is not implemented",
                 st->host.dtype_name(p->dtype), st->host.dtype_name(p->dtype_b),
                 st->host.dtype_name(p->dtype_out),
                 st->host.dtype_name(p->dtype_acc));
    return MB_ERR_UNSUPPORTED;
  }
  gemm_c_t *k = malloc(sizeof *k);
  void *work = NULL;
  mb_status_t status =
      k ? mb__cpu_alloc(st, g.threads * g.work_each * sizeof(float), &work)
        : MB_ERR_NO_MEMORY;
  if (status != MB_OK) {
    if (!k) MB_CPU_ERROR(st, "cpu/c: gemm: out of memory");
    free(k);
    return status;
  }
  g.work = work;
  *k = g;
  *kstate = k;
  return MB_OK;
}

void mb__cpu_gemm_c_release(void *kstate) {
  gemm_c_t *k = kstate;
  if (!k) return;
  free(k->work);
  free(k);
}
