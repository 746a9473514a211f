/* CPU backend — add in portable C: Z = X + Y over M*N contiguous elements.
 *
 * Memory-bound, so the loops are plain: split statically across the pinned
 * threads (the same split the allocator's first touch used) and left to the
 * vectoriser. bf16 is computed in f32 and rounded once, to nearest even.
 * Where the CPU has AVX-512, cpu_simd_elt.c's add runs instead (the same
 * bits: bf16 widened and rounded in registers, and non-temporal stores for
 * operands beyond the last-level cache). */
#include "mb_cvt.h"
#include "cpu_internal.h"
#include "cpu_simd_elt.h"

#include <stdlib.h>

/* Below this many elements a parallel region costs more than the work. */
enum { PARALLEL_MIN = 1 << 15 };

/* Adds elements [lo, hi) of the operands. */
typedef void (*add_slice_fn)(void *z, const void *x, const void *y, size_t lo,
                             size_t hi);

typedef struct add_c {
  size_t n;
  unsigned threads;
  add_slice_fn slice;
  mb_cpu_simd_bin_fn vec; /* AVX-512, or NULL */
  int stream;             /* vec's non-temporal stores */
} add_c_t;

MB_CPU_CLONES static void add_f32_range(float *restrict z,
                                        const float *restrict x,
                                        const float *restrict y, size_t n) {
  for (size_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}

MB_CPU_CLONES static void add_bf16_range(uint16_t *restrict z,
                                         const uint16_t *restrict x,
                                         const uint16_t *restrict y, size_t n) {
  for (size_t i = 0; i < n; ++i)
    z[i] = mb__cvt_f32_to_bf16(mb__cvt_bf16_to_f32(x[i]) +
                               mb__cvt_bf16_to_f32(y[i]));
}

static void add_f32(void *z, const void *x, const void *y, size_t lo,
                    size_t hi) {
  add_f32_range((float *)z + lo, (const float *)x + lo, (const float *)y + lo,
                hi - lo);
}

static void add_bf16(void *z, const void *x, const void *y, size_t lo,
                     size_t hi) {
  add_bf16_range((uint16_t *)z + lo, (const uint16_t *)x + lo,
                 (const uint16_t *)y + lo, hi - lo);
}

/* Signatures offered in the kernel table: all operands of one dtype. */
static const struct {
  mb_dtype_t dtype;
  add_slice_fn slice;
} add_fns[] = {
    {MB_DTYPE_F32, add_f32},
    {MB_DTYPE_BF16, add_bf16},
};

mb_status_t mb__cpu_add_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                  void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  add_slice_fn slice = NULL;
  for (size_t i = 0; i < sizeof add_fns / sizeof add_fns[0]; ++i)
    if (add_fns[i].dtype == p->dtype && p->dtype_b == p->dtype &&
        p->dtype_out == p->dtype)
      slice = add_fns[i].slice;
  if (!slice) {
    MB_CPU_ERROR(st, "cpu/c: add %s+%s->%s is not implemented",
                 st->host.dtype_name(p->dtype), st->host.dtype_name(p->dtype_b),
                 st->host.dtype_name(p->dtype_out));
    return MB_ERR_UNSUPPORTED;
  }
  add_c_t *k = malloc(sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/c: add: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  k->n = (size_t)p->shape[0] * (size_t)p->shape[1];
  k->threads = st->threads;
  k->slice = slice;
  k->vec = mb__cpu_simd_add(p->dtype, p->dtype_out);
  k->stream = mb__cpu_stream_stores(st->cache_bytes[2],
                                    3 * st->host.dtype_bytes(p->dtype, k->n));
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_add_c_run(void *kstate, const mb_kernel_call_t *call) {
  const add_c_t *k = kstate;
  const size_t n = k->n;
  void *z = call->out[0];
  const void *x = call->in[0], *y = call->in[1];
  /* One contiguous slice per thread keeps the inner loop simple enough to
   * vectorise and matches the allocator's first-touch split. */
#pragma omp parallel num_threads(k->threads) if (n >= PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    if (k->vec)
      k->vec(z, x, y, n * t / nt, n * (t + 1) / nt, k->stream);
    else
      k->slice(z, x, y, n * t / nt, n * (t + 1) / nt);
  }
  return MB_OK;
}

void mb__cpu_add_c_release(void *kstate) {
  free(kstate);
}
