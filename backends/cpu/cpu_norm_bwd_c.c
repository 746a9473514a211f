/* CPU backend — rmsnorm_bwd in portable C (lib/ops/backward.c):
 *   rstd = 1/sqrt(mean(x^2) + eps), g = dy w, c = rstd^2 mean(g x),
 *   dx = rstd (g - x c),  dw = sum over rows of dy x rstd.
 *
 * Rows split contiguously across the pinned threads, as the forward's
 * (cpu_norm_c.c). A row of X and dY, in f32 in the thread's buffers, stays
 * in cache for its passes: the sums of x^2 and g x (products into a buffer,
 * then mb__cpu_sum_f32's 16 lanes), then dX. Each thread adds its rows'
 * dy x rstd into a private f32 row of N; after a barrier the threads sum
 * those rows, each over its own slice of the columns, in thread order
 * (deterministic), and round dW once. Without W, dW is written as zeros. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct norm_bwd_c {
  int64_t m, n;
  unsigned threads;
  mb_dtype_t dtype;
  int affine;
  float eps;
  float *w;    /* f32 copy of W (n) */
  float *buf;  /* threads x 3n: a row of X, of dY, and a scratch row */
  float *part; /* threads x n: each thread's sum of dy x rstd */
} norm_bwd_c_t;

/* Rows [r0, r1) of dX, and their dW terms added into `part`. */
MB_CPU_CLONES static void bwd_rows(const norm_bwd_c_t *k,
                                   const mb_kernel_call_t *call, int64_t r0,
                                   int64_t r1, float *restrict buf,
                                   float *restrict part) {
  const size_t n = (size_t)k->n;
  float *restrict x = buf, *restrict dy = buf + n, *restrict t = buf + 2 * n;
  for (int64_t r = r0; r < r1; ++r) {
    const size_t off = (size_t)r * n;
    mb__cpu_load_f32(x, call->in[0], k->dtype, off, n);
    mb__cpu_load_f32(dy, call->in[2], k->dtype, off, n);
    for (size_t j = 0; j < n; ++j) t[j] = x[j] * x[j];
    const float rstd = 1.0f / sqrtf(mb__cpu_sum_f32(t, n) / (float)n + k->eps);
    if (k->affine)
      for (size_t j = 0; j < n; ++j) t[j] = dy[j] * k->w[j] * x[j];
    else
      for (size_t j = 0; j < n; ++j) t[j] = dy[j] * x[j];
    const float c = rstd * rstd * (mb__cpu_sum_f32(t, n) / (float)n);
    if (k->affine)
      for (size_t j = 0; j < n; ++j) t[j] = rstd * (dy[j] * k->w[j] - x[j] * c);
    else
      for (size_t j = 0; j < n; ++j) t[j] = rstd * (dy[j] - x[j] * c);
    mb__cpu_store_f32(call->out[0], k->dtype, off, t, n);
    if (k->affine)
      for (size_t j = 0; j < n; ++j) part[j] += dy[j] * x[j] * rstd;
  }
}

/* dW's columns [c0, c1): the threads' rows summed in thread order. */
static void sum_parts(const norm_bwd_c_t *k, const mb_kernel_call_t *call,
                      unsigned nt, size_t c0, size_t c1) {
  const size_t n = (size_t)k->n;
  float *acc = k->part; /* thread 0's row accumulates the others */
  for (unsigned t = 1; t < nt; ++t)
    for (size_t j = c0; j < c1; ++j) acc[j] += k->part[t * n + j];
  mb__cpu_store_f32(call->out[1], k->dtype, c0, acc + c0, c1 - c0);
}

mb_status_t mb__cpu_rmsnorm_bwd_c_prepare(void *bstate,
                                          const mb_kernel_call_t *call,
                                          void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const mb_status_t status = mb__cpu_float_dtype(st, "rmsnorm_bwd", p->dtype);
  if (status != MB_OK) return status;
  norm_bwd_c_t *k = calloc(1, sizeof *k);
  const size_t n = (size_t)p->shape[1];
  if (k) {
    *k = (norm_bwd_c_t){p->shape[0],
                        p->shape[1],
                        st->threads,
                        p->dtype,
                        !(p->flags & MB_PARAM_NO_WEIGHT),
                        (float)p->eps,
                        malloc(n * sizeof(float)),
                        malloc((size_t)st->threads * 3 * n * sizeof(float)),
                        malloc((size_t)st->threads * n * sizeof(float))};
  }
  if (!k || !k->w || !k->buf || !k->part) {
    mb__cpu_rmsnorm_bwd_c_release(k);
    MB_CPU_ERROR(st, "cpu/c: rmsnorm_bwd: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_rmsnorm_bwd_c_run(void *kstate,
                                      const mb_kernel_call_t *call) {
  const norm_bwd_c_t *k = kstate;
  const int64_t m = k->m, n = k->n;
  const size_t esize = k->dtype == MB_DTYPE_F32 ? 4 : 2;
  if (k->affine) mb__cpu_load_f32(k->w, call->in[1], k->dtype, 0, (size_t)n);
#pragma omp parallel num_threads(k->threads) if (m * n >= \
                                                 MB_CPU_ROWS_PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    float *part = k->part + (size_t)t * (size_t)n;
    if (k->affine) memset(part, 0, (size_t)n * sizeof *part);
    bwd_rows(k, call, m * t / nt, m * (t + 1) / nt,
             k->buf + (size_t)t * 3 * (size_t)n, part);
#pragma omp barrier
    const size_t c0 = (size_t)n * t / nt, c1 = (size_t)n * (t + 1) / nt;
    if (k->affine)
      sum_parts(k, call, nt, c0, c1);
    else /* f32, or 2 bytes for bf16 and f16 (mb__cpu_float_dtype) */
      memset((char *)call->out[1] + c0 * esize, 0, (c1 - c0) * esize);
  }
  return MB_OK;
}

void mb__cpu_rmsnorm_bwd_c_release(void *kstate) {
  norm_bwd_c_t *k = kstate;
  if (!k) return;
  free(k->w);
  free(k->buf);
  free(k->part);
  free(k);
}
