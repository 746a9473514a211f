/* CPU backend — rope (rotary position embedding, lib/ops/rope.c) in
 * portable C: Y[.., 2j] = x0 c - x1 s, Y[.., 2j+1] = x0 s + x1 c, with
 * (c, s) = F[pos, 2j..2j+1], the op's f32 table, read in place.
 *
 * Element-wise and memory-bound, as the activation kernels: the B*H*S*D
 * elements are split in whole pairs into one contiguous slice per pinned
 * thread (the allocator's first-touch split), and each slice is walked in
 * pieces that stay within one row of D (one position) and in L1: X and F
 * side by side in the same interleaved layout, so the loop is one
 * straight-line body over pairs that the compiler vectorises; X and Y not
 * f32 go through an f32 chunk, rounded once to Y. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"

#include <stdlib.h>

/* Below this many elements a parallel region costs more than the work. */
enum { PARALLEL_MIN = 1 << 15, CHUNK = 1024 /* even: whole pairs */ };

typedef struct rope_c {
  size_t n;        /* B H S D */
  size_t s_len, d; /* S, D */
  unsigned threads;
  mb_dtype_t dtype;
} rope_c_t;

/* y = x turned by f, n (even) f32 values; y may be x. */
MB_CPU_CLONES static void rope_pairs(float *y, const float *x, const float *f,
                                     size_t n) {
  for (size_t i = 0; i < n; i += 2) {
    const float x0 = x[i], x1 = x[i + 1], c = f[i], s = f[i + 1];
    y[i] = x0 * c - x1 * s;
    y[i + 1] = x0 * s + x1 * c;
  }
}

/* Elements [lo, hi) (both even): row by row, CHUNK at a time. */
MB_CPU_CLONES static void rope_slice(const rope_c_t *k,
                                     const mb_kernel_call_t *call, size_t lo,
                                     size_t hi) {
  float buf[CHUNK];
  const void *x = call->in[0];
  const float *table = call->in[1];
  void *y = call->out[0];
  for (size_t i = lo; i < hi;) {
    const size_t col = i % k->d, pos = (i / k->d) % k->s_len;
    size_t n = k->d - col;
    if (n > hi - i) n = hi - i;
    if (n > CHUNK) n = CHUNK;
    const float *f = table + pos * k->d + col;
    if (k->dtype == MB_DTYPE_F32) {
      rope_pairs((float *)y + i, (const float *)x + i, f, n);
    } else {
      mb__cpu_load_f32(buf, x, k->dtype, i, n);
      rope_pairs(buf, buf, f, n);
      mb__cpu_store_f32(y, k->dtype, i, buf, n);
    }
    i += n;
  }
}

mb_status_t mb__cpu_rope_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                   void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const mb_status_t status = mb__cpu_float_dtype(st, "rope", p->dtype);
  if (status != MB_OK) return status;
  rope_c_t *k = malloc(sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/c: rope: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  *k = (rope_c_t){(size_t)p->shape[0] * (size_t)p->shape[1] *
                      (size_t)p->shape[2] * (size_t)p->shape[3],
                  (size_t)p->shape[2], (size_t)p->shape[3], st->threads,
                  p->dtype};
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_rope_c_run(void *kstate, const mb_kernel_call_t *call) {
  const rope_c_t *k = kstate;
  const size_t pairs = k->n / 2;
#pragma omp parallel num_threads(k->threads) if (k->n >= PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    rope_slice(k, call, 2 * (pairs * t / nt), 2 * (pairs * (t + 1) / nt));
  }
  return MB_OK;
}

void mb__cpu_rope_c_release(void *kstate) {
  free(kstate);
}
