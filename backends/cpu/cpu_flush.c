/* CPU backend — evicting the caches before a cold sample.
 *
 * By default we write (not read) a buffer twice the size of the last-level
 * cache: reads
 * can leave the operands' lines in place under non-LRU replacement, while
 * dirty lines of our own force them out, and the next run also pays for
 * writing our dirty lines back, as a real cold start would. The buffer is
 * split across the pinned threads, so each core also streams far more than
 * its private L1/L2 through them. The value written changes on every call so
 * no store can be skipped, and depends on the index so gcc cannot turn the
 * loop into memset(), whose non-temporal stores would bypass the caches.
 * MB_FLUSH_READ reads the same buffer instead, for a comparison with the
 * GPUs' read flush (the caveat above applies: its figures may be warmer). */
#include "cpu_internal.h"

#include <stdlib.h>

static const size_t fallback_bytes = (size_t)64 << 20; /* LLC unknown */

mb_status_t mb__cpu_flush(mb_cpu_state_t *st, mb_flush_t how) {
  if (!st->flush_buf) {
    const size_t bytes =
        st->cache_bytes[2] ? 2 * (size_t)st->cache_bytes[2] : fallback_bytes;
    void *p = NULL;
    const mb_status_t s = mb__cpu_alloc(st, bytes, &p);
    if (s != MB_OK) return s;
    st->flush_buf = p;
    st->flush_words = bytes / sizeof(uint64_t);
  }
  mb__cpu_pin_threads(st);
  uint64_t *const w = st->flush_buf;
  const size_t n = st->flush_words;
  if (how == MB_FLUSH_READ) {
    uint64_t acc = 0;
#pragma omp parallel for num_threads(st->threads) schedule(static) \
    reduction(^ : acc)
    for (size_t i = 0; i < n; ++i) acc ^= w[i];
    st->flush_sink = acc; /* kept, so no load can be dropped */
    return MB_OK;
  }
  const uint64_t seed = ++st->flush_epoch * 0x9e3779b97f4a7c15u;
#pragma omp parallel for num_threads(st->threads) schedule(static)
  for (size_t i = 0; i < n; ++i) w[i] = seed + i;
  return MB_OK;
}

void mb__cpu_flush_fini(mb_cpu_state_t *st) {
  free(st->flush_buf);
  st->flush_buf = NULL;
}
