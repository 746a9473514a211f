/* CPU backend — STREAM's scale (Y = q X) and triad (A = B + q C), q =
 * MB_STREAM_Q (lib/ops/stream.c), in portable C.
 *
 * Memory-bound, as add and copy: the M*N elements are split into one
 * contiguous slice per pinned thread (the allocator's first-touch split);
 * f32 runs straight through a loop the compiler vectorises, bf16 and f16
 * through an f32 chunk that stays in L1, rounded once to the output. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"
#include "mb_stream.h"

#include <stdlib.h>

/* Below this many elements a parallel region costs more than the work. */
enum { PARALLEL_MIN = 1 << 15, CHUNK = 1024 };

typedef struct stream_c {
  size_t n;
  unsigned threads;
  mb_dtype_t dtype;
  int triad; /* 0: scale */
} stream_c_t;

/* y = q x (b NULL) or y = b + q x, n f32 values; y may alias either. */
MB_CPU_CLONES static void stream_f32(float *y, const float *b, const float *x,
                                     size_t n) {
  const float q = (float)MB_STREAM_Q;
  if (!b)
    for (size_t i = 0; i < n; ++i) y[i] = q * x[i];
  else
    for (size_t i = 0; i < n; ++i) y[i] = b[i] + q * x[i];
}

/* Elements [lo, hi): scale's X is in[0]; triad's B, C are in[0], in[1]. */
MB_CPU_CLONES static void stream_slice(const stream_c_t *k,
                                       const mb_kernel_call_t *call, size_t lo,
                                       size_t hi) {
  float bb[CHUNK], bx[CHUNK];
  const void *b = k->triad ? call->in[0] : NULL;
  const void *x = call->in[k->triad ? 1 : 0];
  void *y = call->out[0];
  for (size_t i = lo; i < hi; i += CHUNK) {
    const size_t n = hi - i < CHUNK ? hi - i : CHUNK;
    if (k->dtype == MB_DTYPE_F32) {
      stream_f32((float *)y + i, b ? (const float *)b + i : NULL,
                 (const float *)x + i, n);
      continue;
    }
    mb__cpu_load_f32(bx, x, k->dtype, i, n);
    if (b) mb__cpu_load_f32(bb, b, k->dtype, i, n);
    stream_f32(bx, b ? bb : NULL, bx, n);
    mb__cpu_store_f32(y, k->dtype, i, bx, n);
  }
}

static mb_status_t prepare(mb_cpu_state_t *st, const mb_kernel_call_t *call,
                           int triad, void **kstate) {
  const mb_op_params_t *p = call->params;
  const char *what = triad ? "triad" : "scale";
  const mb_status_t status = mb__cpu_float_dtype(st, what, p->dtype);
  if (status != MB_OK) return status;
  stream_c_t *k = malloc(sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/c: %s: out of memory", what);
    return MB_ERR_NO_MEMORY;
  }
  *k = (stream_c_t){(size_t)p->shape[0] * (size_t)p->shape[1], st->threads,
                    p->dtype, triad};
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_scale_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate) {
  return prepare(bstate, call, 0, kstate);
}

mb_status_t mb__cpu_triad_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate) {
  return prepare(bstate, call, 1, kstate);
}

static mb_status_t run(const stream_c_t *k, const mb_kernel_call_t *call) {
  const size_t n = k->n;
#pragma omp parallel num_threads(k->threads) if (n >= PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    stream_slice(k, call, n * t / nt, n * (t + 1) / nt);
  }
  return MB_OK;
}

mb_status_t mb__cpu_scale_c_run(void *kstate, const mb_kernel_call_t *call) {
  return run(kstate, call);
}
mb_status_t mb__cpu_triad_c_run(void *kstate, const mb_kernel_call_t *call) {
  return run(kstate, call);
}

void mb__cpu_scale_c_release(void *kstate) {
  free(kstate);
}
void mb__cpu_triad_c_release(void *kstate) {
  free(kstate);
}
