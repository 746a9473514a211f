/* CPU backend — copy: Y = X, any dtype, as bytes.
 *
 * The memory-bandwidth op, so it is one copy per pinned thread over a
 * contiguous slice (cut at cache lines so no two threads write one line).
 * Below the last-level cache that is libc's memcpy; above it, AVX-512
 * non-temporal stores (cpu_simd_elt.c), which skip the read for ownership
 * of each destination line: glibc's memcpy only streams above a threshold
 * derived from the cache size per thread, and measured slower here. */
#include "cpu_eltwise.h"
#include "cpu_simd_elt.h"

#include <stdlib.h>
#include <string.h>

/* Below this many bytes a parallel region costs more than the copy. */
enum { PARALLEL_MIN = 1 << 17, LINE = 64 };

typedef struct copy_c {
  size_t bytes;
  unsigned threads;
  mb_cpu_simd_copy_fn stream; /* NULL: memcpy */
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
  k->stream = mb__cpu_stream_stores(st->cache_bytes[2], 2 * k->bytes)
                  ? mb__cpu_simd_stream_copy()
                  : NULL;
  *kstate = k;
  return MB_OK;
}

/* dst = src by `fn` (memcpy's signature but for the return) per slice. */
static void parallel_copy(void *dst, const void *src, size_t bytes,
                          unsigned threads, mb_cpu_simd_copy_fn fn) {
  const size_t lines = (bytes + LINE - 1) / LINE;
#pragma omp parallel num_threads(threads) if (bytes >= PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    size_t lo = lines * t / nt * LINE, hi = lines * (t + 1) / nt * LINE;
    if (hi > bytes) hi = bytes;
    if (lo < hi) {
      if (fn)
        fn((char *)dst + lo, (const char *)src + lo, hi - lo);
      else
        memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
    }
  }
}

void mb__cpu_parallel_copy(void *dst, const void *src, size_t bytes,
                           unsigned threads) {
  parallel_copy(dst, src, bytes, threads, NULL);
}

mb_status_t mb__cpu_copy_c_run(void *kstate, const mb_kernel_call_t *call) {
  const copy_c_t *k = kstate;
  parallel_copy(call->out[0], call->in[0], k->bytes, k->threads, k->stream);
  return MB_OK;
}

void mb__cpu_copy_c_release(void *kstate) {
  free(kstate);
}
