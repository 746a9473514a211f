/* CPU backend — softmax over the last dimension in portable C.
 *
 * Rows split contiguously across the pinned threads; per row, in f32: the
 * max, exp(x - max) written to the output (or the thread's buffer), their
 * sum in 16 lanes, then one multiply by the reciprocal. On f32 and bf16
 * with AVX-512 the rows run in cpu_simd_norm.c instead (same steps, a
 * vector exp), chosen at prepare time. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"
#include "cpu_simd_norm.h"

#include <math.h>
#include <stdlib.h>

typedef struct softmax_c {
  int64_t m, n;
  unsigned threads;
  mb_dtype_t dtype;
  float *rowbuf;            /* threads x n */
  mb_cpu_norm_args_t args;  /* n for simd */
  mb_cpu_simd_rows_fn simd; /* NULL: the portable rows */
} softmax_c_t;

static inline float row_max(const float *restrict x, size_t n) {
  float lane[16];
  for (int l = 0; l < 16; ++l) lane[l] = -INFINITY;
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; ++l)
      lane[l] = mb__cpu_maxf(x[i + (size_t)l], lane[l]);
  for (; i < n; ++i) lane[i % 16] = mb__cpu_maxf(x[i], lane[i % 16]);
  float m = lane[0];
  for (int l = 1; l < 16; ++l) m = mb__cpu_maxf(lane[l], m);
  return m;
}

MB_CPU_CLONES static void softmax_rows(const void *kstate, void *y,
                                       const void *x, int64_t r0, int64_t r1,
                                       float *buf) {
  const softmax_c_t *k = kstate;
  const size_t n = (size_t)k->n;
  for (int64_t r = r0; r < r1; ++r) {
    const size_t off = (size_t)r * n;
    const float *row = (const float *)x + off;
    float *out = (float *)y + off;
    if (k->dtype != MB_DTYPE_F32) {
      mb__cpu_load_f32(buf, x, k->dtype, off, n);
      row = out = buf;
    }
    const float mx = row_max(row, n);
    for (size_t j = 0; j < n; ++j) out[j] = mb__cpu_expf(row[j] - mx);
    const float inv = 1.0f / mb__cpu_sum_f32(out, n);
    for (size_t j = 0; j < n; ++j) out[j] *= inv;
    if (k->dtype != MB_DTYPE_F32) mb__cpu_store_f32(y, k->dtype, off, buf, n);
  }
}

static void simd_rows(const void *kstate, void *y, const void *x, int64_t r0,
                      int64_t r1, float *buf) {
  const softmax_c_t *k = kstate;
  k->simd(&k->args, y, x, r0, r1, buf);
}

mb_status_t mb__cpu_softmax_c_prepare(void *bstate,
                                      const mb_kernel_call_t *call,
                                      void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const mb_status_t status = mb__cpu_float_dtype(st, "softmax", p->dtype);
  if (status != MB_OK) return status;
  softmax_c_t *k = malloc(sizeof *k);
  float *buf = malloc((size_t)st->threads * (size_t)p->shape[1] * sizeof *buf);
  if (!k || !buf) {
    free(k);
    free(buf);
    MB_CPU_ERROR(st, "cpu/c: softmax: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  *k = (softmax_c_t){
      p->shape[0],
      p->shape[1],
      st->threads,
      p->dtype,
      buf,
      {.n = (size_t)p->shape[1],
       .stream = mb__cpu_stream_stores(
           st->cache_bytes[2],
           2 * st->host.dtype_bytes(p->dtype,
                                    (size_t)(p->shape[0] * p->shape[1])))},
      mb__cpu_simd_softmax(p->dtype)};
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_softmax_c_run(void *kstate, const mb_kernel_call_t *call) {
  const softmax_c_t *k = kstate;
  mb__cpu_run_rows(k->simd ? simd_rows : softmax_rows, k, k->threads, k->m,
                   k->n, k->rowbuf, call);
  return MB_OK;
}

void mb__cpu_softmax_c_release(void *kstate) {
  softmax_c_t *k = kstate;
  if (!k) return;
  free(k->rowbuf);
  free(k);
}
