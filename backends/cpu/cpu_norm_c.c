/* CPU backend — layernorm and rmsnorm in portable C.
 *
 * One row at a time, rows split contiguously across the pinned threads. A
 * row (in f32: as is, or converted into the thread's buffer) stays in cache
 * for its passes: layernorm's mean, then the variance around it (two-pass,
 * so a large mean does not cancel the variance away), then the output;
 * rmsnorm's sum of squares, then the output. Sums run in 64 lanes (see
 * sum64). W and Bias are converted to f32 once per call.
 * On f32 and bf16 with AVX-512 the rows run in cpu_simd_norm.c instead
 * (same bits, bf16 converted in registers), chosen at prepare time. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"
#include "cpu_simd_norm.h"

#include <math.h>
#include <stdlib.h>

typedef struct norm_c {
  int64_t m, n;
  unsigned threads;
  mb_dtype_t dtype;
  int rms, affine;
  float eps;
  float *w, *b;  /* f32 copies of W and Bias (n each) */
  float *rowbuf; /* threads x n: a row in f32 when the input is not (the
                    portable rows only; NULL beside simd) */
  mb_cpu_norm_args_t args;  /* n, rms, affine, eps, w, b for simd */
  mb_cpu_simd_rows_fn simd; /* NULL: the portable rows */
} norm_c_t;

/* The row sums run in 64 lanes, element j in lane j % 64, the lanes then
 * added 0..63: four vectors of 16 are four independent add chains (one
 * chain's latency bounded the loop), gcc vectorises them without
 * reassociation flags, and cpu_simd_norm.c's AVX-512 rows add in the same
 * order for the same bits. Blocked sums: ~sqrt(n) u typical error. */
enum { LANES = 64 };

static inline float lanes_total(const float *lane) {
  float s = 0;
  for (int l = 0; l < LANES; ++l) s += lane[l];
  return s;
}

static inline float sum64(const float *restrict x, size_t n) {
  float lane[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; ++l) lane[l] += x[i + (size_t)l];
  for (; i < n; ++i) lane[i % LANES] += x[i];
  return lanes_total(lane);
}

/* sum (x - mean)^2 in the same lanes. */
static inline float sum_sq_dev(const float *restrict x, size_t n, float mean) {
  float lane[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; ++l) {
      const float d = x[i + (size_t)l] - mean;
      lane[l] += d * d;
    }
  for (; i < n; ++i) lane[i % LANES] += (x[i] - mean) * (x[i] - mean);
  return lanes_total(lane);
}

MB_CPU_CLONES static void norm_rows(const void *kstate, void *y, const void *x,
                                    int64_t r0, int64_t r1, float *buf) {
  const norm_c_t *k = kstate;
  const size_t n = (size_t)k->n;
  for (int64_t r = r0; r < r1; ++r) {
    const size_t off = (size_t)r * n;
    const float *row = (const float *)x + off;
    if (k->dtype != MB_DTYPE_F32) {
      mb__cpu_load_f32(buf, x, k->dtype, off, n);
      row = buf;
    }
    const float mean = k->rms ? 0.0f : sum64(row, n) / (float)n;
    const float rstd =
        1.0f / sqrtf(sum_sq_dev(row, n, mean) / (float)n + k->eps);
    /* The output goes through the buffer too (row may be it: in place). */
    float *out = k->dtype == MB_DTYPE_F32 ? (float *)y + off : buf;
    if (!k->affine)
      for (size_t j = 0; j < n; ++j) out[j] = (row[j] - mean) * rstd;
    else if (k->rms)
      for (size_t j = 0; j < n; ++j) out[j] = row[j] * rstd * k->w[j];
    else
      for (size_t j = 0; j < n; ++j)
        out[j] = (row[j] - mean) * rstd * k->w[j] + k->b[j];
    if (k->dtype != MB_DTYPE_F32) mb__cpu_store_f32(y, k->dtype, off, buf, n);
  }
}

static void simd_rows(const void *kstate, void *y, const void *x, int64_t r0,
                      int64_t r1, float *buf) {
  const norm_c_t *k = kstate;
  k->simd(&k->args, y, x, r0, r1, buf);
}

static mb_status_t prepare(mb_cpu_state_t *st, const mb_kernel_call_t *call,
                           int rms, void **kstate) {
  const mb_op_params_t *p = call->params;
  const char *what = rms ? "rmsnorm" : "layernorm";
  const mb_status_t status = mb__cpu_float_dtype(st, what, p->dtype);
  if (status != MB_OK) return status;
  norm_c_t *k = calloc(1, sizeof *k);
  const size_t n = (size_t)p->shape[1];
  if (k) {
    k->m = p->shape[0];
    k->n = p->shape[1];
    k->threads = st->threads;
    k->dtype = p->dtype;
    k->rms = rms;
    k->affine = !(p->flags & MB_PARAM_NO_WEIGHT);
    k->eps = (float)p->eps;
    k->w = malloc(n * sizeof *k->w);
    k->b = malloc(n * sizeof *k->b);
    k->simd = mb__cpu_simd_norm(p->dtype);
    /* The portable rows stage a non-f32 row in f32; the AVX-512 ones
     * re-read X's row and take no buffer. */
    if (!k->simd)
      k->rowbuf = malloc((size_t)st->threads * n * sizeof *k->rowbuf);
    /* The copy kernel's rule: stream once X and Y outgrow the cache. */
    const int stream = mb__cpu_stream_stores(
        st->cache_bytes[2],
        2 * st->host.dtype_bytes(p->dtype, (size_t)k->m * n));
    k->args =
        (mb_cpu_norm_args_t){n, rms, k->affine, k->eps, k->w, k->b, stream};
  }
  if (!k || !k->w || !k->b || (!k->simd && !k->rowbuf)) {
    if (k) mb__cpu_layernorm_c_release(k);
    MB_CPU_ERROR(st, "cpu/c: %s: out of memory", what);
    return MB_ERR_NO_MEMORY;
  }
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_layernorm_c_prepare(void *bstate,
                                        const mb_kernel_call_t *call,
                                        void **kstate) {
  return prepare(bstate, call, 0, kstate);
}

mb_status_t mb__cpu_rmsnorm_c_prepare(void *bstate,
                                      const mb_kernel_call_t *call,
                                      void **kstate) {
  return prepare(bstate, call, 1, kstate);
}

mb_status_t mb__cpu_layernorm_c_run(void *kstate,
                                    const mb_kernel_call_t *call) {
  const norm_c_t *k = kstate;
  if (k->affine) {
    mb__cpu_load_f32(k->w, call->in[1], k->dtype, 0, (size_t)k->n);
    if (!k->rms) mb__cpu_load_f32(k->b, call->in[2], k->dtype, 0, (size_t)k->n);
  }
  mb__cpu_run_rows(k->simd ? simd_rows : norm_rows, k, k->threads, k->m, k->n,
                   k->rowbuf, call);
  return MB_OK;
}

mb_status_t mb__cpu_rmsnorm_c_run(void *kstate, const mb_kernel_call_t *call) {
  return mb__cpu_layernorm_c_run(kstate, call);
}

void mb__cpu_layernorm_c_release(void *kstate) {
  norm_c_t *k = kstate;
  if (!k) return;
  free(k->w);
  free(k->b);
  free(k->rowbuf);
  free(k);
}

void mb__cpu_rmsnorm_c_release(void *kstate) {
  mb__cpu_layernorm_c_release(kstate);
}
