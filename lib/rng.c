#include "rng.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

#include "dtype_internal.h"
#include "error.h"
#include "internal.h"

uint64_t mb__rng_u64(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter * 0xD1B54A32D192ED03ull +
               0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double mb__rng_uniform(uint64_t seed, uint64_t counter) {
  return (double)(mb__rng_u64(seed, counter) >> 11) * 0x1.0p-53;
}

double mb__fill_value(const mb_fill_t *fill, uint64_t i) {
  switch (fill->kind) {
    case MB_FILL_UNIFORM:
      return fill->a + (fill->b - fill->a) * mb__rng_uniform(fill->seed, i);
    case MB_FILL_CONSTANT:
      return fill->a;
    case MB_FILL_NORMAL:
    default: {
      /* Box-Muller on two independent counters; 1 - u keeps log() finite. */
      double u1 = 1.0 - mb__rng_uniform(fill->seed, 2 * i);
      double u2 = mb__rng_uniform(fill->seed, 2 * i + 1);
      double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
      return fill->a + fill->b * z;
    }
  }
}

/* ---- filling ------------------------------------------------------------
 * Element i depends on (seed, i) alone, so a large fill is split over
 * threads and still writes the same bytes: a GPU benchmark at 16384^2 fills
 * half a billion elements on the host, which takes tens of seconds on one
 * core. Parts start on a multiple of 8 elements so that no two threads
 * share a byte of a packed (i4) tensor. */

#define MB__FILL_MIN_PART ((size_t)1 << 20) /* elements a thread at least */
#define MB__FILL_MAX_THREADS 32u

typedef struct fill_part {
  void *dst;
  mb_dtype_t dtype;
  const mb_fill_t *fill;
  size_t lo, hi;
} fill_part_t;

static void *fill_range(void *arg) {
  const fill_part_t *p = arg;
  for (size_t i = p->lo; i < p->hi; i++)
    mb__store(p->dst, p->dtype, i, mb__fill_value(p->fill, i),
              MB_CONVERT_SATURATE);
  return NULL;
}

static unsigned fill_threads(size_t count) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n = count / MB__FILL_MIN_PART;
  if (cpus > 0 && n > (size_t)cpus) n = (size_t)cpus;
  if (n > MB__FILL_MAX_THREADS) n = MB__FILL_MAX_THREADS;
  return n ? (unsigned)n : 1u;
}

/* Parts [lo, hi) of `count`; a part whose thread cannot be started is
 * filled by the caller, so the fill completes either way. */
static void fill_parallel(void *dst, mb_dtype_t dtype, size_t count,
                          const mb_fill_t *fill) {
  const unsigned n = fill_threads(count);
  fill_part_t parts[MB__FILL_MAX_THREADS];
  pthread_t tid[MB__FILL_MAX_THREADS];
  int started[MB__FILL_MAX_THREADS] = {0};
  const size_t per = (count / n + 7) / 8 * 8;
  for (unsigned t = 0; t < n; t++) {
    const size_t lo = (size_t)t * per < count ? (size_t)t * per : count;
    const size_t hi = lo + per < count && t + 1 < n ? lo + per : count;
    parts[t] = (fill_part_t){dst, dtype, fill, lo, hi};
    started[t] =
        t > 0 && pthread_create(&tid[t], NULL, fill_range, &parts[t]) == 0;
  }
  for (unsigned t = 0; t < n; t++)
    if (!started[t]) fill_range(&parts[t]);
  for (unsigned t = 1; t < n; t++)
    if (started[t]) pthread_join(tid[t], NULL);
}

mb_status_t mb_fill_host(void *dst, mb_dtype_t dtype, size_t count,
                         const mb_fill_t *fill) {
  mb_fill_t full = MB_FILL_INIT;
  if (fill &&
      mb__struct_in(MB__STRUCT_FILL, "mb_fill_host", fill, &full) != MB_OK)
    return MB_ERR_INVALID_ARG;
  fill = &full;
  if (!dst && count)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_fill_host: dst is NULL");
  if (mb_dtype_bits(dtype) == 0)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_fill_host: invalid dtype %d",
                    (int)dtype);
  if ((unsigned)fill->kind > MB_FILL_CONSTANT)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_fill_host: unknown fill kind %d; valid: normal, "
                    "uniform, constant",
                    (int)fill->kind);
  fill_parallel(dst, dtype, count, fill);
  return MB_OK;
}
