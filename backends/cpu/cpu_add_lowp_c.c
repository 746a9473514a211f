/* CPU backend — add on f16 and fp8 inputs in portable C (oneDNN 2.6 has no
 * fp8, and no f16 kernels for this CPU class): f16 + f16 -> f16, and fp8 +
 * fp8 (both e4m3 or both e5m2) -> the same fp8 (saturated), f32, bf16 or
 * f16.
 *
 * Inputs are decoded exactly to f32 in L1-sized chunks, added in f32 and
 * rounded once to the output (nearest even); one contiguous slice per
 * pinned thread, as the f32/bf16 add in cpu_add_c.c. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"

#include <stdlib.h>

enum { PARALLEL_MIN = 1 << 15, CHUNK = 1024 };

typedef struct add_lowp {
  size_t n;
  unsigned threads;
  mb_dtype_t in, out;
} add_lowp_t;

/* The signatures this file implements. */
static const struct {
  mb_dtype_t in, out;
} k_signatures[] = {
    {MB_DTYPE_F16, MB_DTYPE_F16},    {MB_DTYPE_F8E4M3, MB_DTYPE_F8E4M3},
    {MB_DTYPE_F8E4M3, MB_DTYPE_F32}, {MB_DTYPE_F8E4M3, MB_DTYPE_BF16},
    {MB_DTYPE_F8E4M3, MB_DTYPE_F16}, {MB_DTYPE_F8E5M2, MB_DTYPE_F8E5M2},
    {MB_DTYPE_F8E5M2, MB_DTYPE_F32}, {MB_DTYPE_F8E5M2, MB_DTYPE_BF16},
    {MB_DTYPE_F8E5M2, MB_DTYPE_F16},
};

MB_CPU_CLONES static void add_slice(const add_lowp_t *k, void *z, const void *x,
                                    const void *y, size_t lo, size_t hi) {
  float bx[CHUNK], by[CHUNK];
  for (size_t i = lo; i < hi; i += CHUNK) {
    const size_t n = hi - i < CHUNK ? hi - i : CHUNK;
    mb__cpu_load_f32(bx, x, k->in, i, n);
    mb__cpu_load_f32(by, y, k->in, i, n);
    for (size_t j = 0; j < n; ++j) bx[j] += by[j];
    mb__cpu_store_f32(z, k->out, i, bx, n);
  }
}

mb_status_t mb__cpu_add_lowp_c_prepare(void *bstate,
                                       const mb_kernel_call_t *call,
                                       void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  int found = 0;
  for (size_t i = 0; i < sizeof k_signatures / sizeof k_signatures[0]; ++i)
    found |= k_signatures[i].in == p->dtype && p->dtype_b == p->dtype &&
             k_signatures[i].out == p->dtype_out;
  if (!found) {
    MB_CPU_ERROR(st, "cpu/c: add %s+%s->%s is not implemented",
                 st->host.dtype_name(p->dtype), st->host.dtype_name(p->dtype_b),
                 st->host.dtype_name(p->dtype_out));
    return MB_ERR_UNSUPPORTED;
  }
  add_lowp_t *k = malloc(sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/c: add: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  *k = (add_lowp_t){(size_t)p->shape[0] * (size_t)p->shape[1], st->threads,
                    p->dtype, p->dtype_out};
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_add_lowp_c_run(void *kstate, const mb_kernel_call_t *call) {
  const add_lowp_t *k = kstate;
  const size_t n = k->n;
  void *z = call->out[0];
  const void *x = call->in[0], *y = call->in[1];
#pragma omp parallel num_threads(k->threads) if (n >= PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    add_slice(k, z, x, y, n * t / nt, n * (t + 1) / nt);
  }
  return MB_OK;
}

void mb__cpu_add_lowp_c_release(void *kstate) {
  free(kstate);
}
