#include "rng.h"

#include <math.h>
#include <stddef.h>

#include "dtype_internal.h"
#include "error.h"
#include "internal.h"
#include "parallel.h"

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

typedef struct fill_job {
  void *dst;
  mb_dtype_t dtype;
  const mb_fill_t *fill;
} fill_job_t;

static void fill_range(void *arg, size_t lo, size_t hi) {
  const fill_job_t *j = arg;
  for (size_t i = lo; i < hi; i++)
    mb__store(j->dst, j->dtype, i, mb__fill_value(j->fill, i),
              MB_CONVERT_SATURATE);
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
  fill_job_t job = {dst, dtype, fill};
  mb__parallel_for(count, MB__FILL_MIN_PART, 8, fill_range, &job);
  return MB_OK;
}
