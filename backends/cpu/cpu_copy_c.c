/* CPU backend — copy: Y = X, any dtype, as bytes.
 *
 * The memory-bandwidth op, so it is one memcpy per pinned thread over a
 * contiguous slice (cut at cache lines so no two threads write one line):
 * libc's memcpy already picks the widest moves and non-temporal stores for
 * large sizes. */
#include "cpu_eltwise.h"

#include <stdlib.h>
#include <string.h>

/* Below this many bytes a parallel region costs more than the copy. */
enum { PARALLEL_MIN = 1 << 17, LINE = 64 };

typedef struct copy_c {
  size_t bytes;
  unsigned threads;
} copy_c_t;

mb_status_t mb__cpu_copy_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                   void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  copy_c_t *k = malloc(sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/c: copy: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  k->bytes =
      st->host.dtype_bytes(p->dtype, (size_t)p->shape[0] * (size_t)p->shape[1]);
  k->threads = st->threads;
  *kstate = k;
  return MB_OK;
}

void mb__cpu_parallel_copy(void *dst, const void *src, size_t bytes,
                           unsigned threads) {
  const size_t lines = (bytes + LINE - 1) / LINE;
#pragma omp parallel num_threads(threads) if (bytes >= PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    size_t lo = lines * t / nt * LINE, hi = lines * (t + 1) / nt * LINE;
    if (hi > bytes) hi = bytes;
    if (lo < hi) memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
  }
}

mb_status_t mb__cpu_copy_c_run(void *kstate, const mb_kernel_call_t *call) {
  const copy_c_t *k = kstate;
  mb__cpu_parallel_copy(call->out[0], call->in[0], k->bytes, k->threads);
  return MB_OK;
}

void mb__cpu_copy_c_release(void *kstate) {
  free(kstate);
}
