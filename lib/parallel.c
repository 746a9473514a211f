/* mb__parallel_for (parallel.h): pthreads, one part per thread. */
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

typedef struct part {
  void (*fn)(void *arg, size_t lo, size_t hi);
  void *arg;
  size_t lo, hi;
} part_t;

static void *run(void *p) {
  const part_t *t = p;
  t->fn(t->arg, t->lo, t->hi);
  return NULL;
}

/* One thread per core, each with at least min_part items: a small job is
 * not worth a thread's start. */
static unsigned threads_for(size_t count, size_t min_part) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n = min_part ? count / min_part : count;
  if (cpus > 0 && n > (size_t)cpus) n = (size_t)cpus;
  if (n > MB__PARALLEL_MAX_THREADS) n = MB__PARALLEL_MAX_THREADS;
  return n ? (unsigned)n : 1u;
}

void mb__parallel_for(size_t count, size_t min_part, size_t align,
                      void (*fn)(void *arg, size_t lo, size_t hi), void *arg) {
  const unsigned n = threads_for(count, min_part);
  part_t parts[MB__PARALLEL_MAX_THREADS];
  pthread_t tid[MB__PARALLEL_MAX_THREADS];
  int started[MB__PARALLEL_MAX_THREADS] = {0};
  if (!align) align = 1;
  const size_t per = (count / n + align - 1) / align * align;
  for (unsigned t = 0; t < n; t++) {
    const size_t lo = (size_t)t * per < count ? (size_t)t * per : count;
    const size_t hi = lo + per < count && t + 1 < n ? lo + per : count;
    parts[t] = (part_t){fn, arg, lo, hi};
    started[t] = t > 0 && pthread_create(&tid[t], NULL, run, &parts[t]) == 0;
  }
  for (unsigned t = 0; t < n; t++)
    if (!started[t]) run(&parts[t]);
  for (unsigned t = 1; t < n; t++)
    if (started[t]) pthread_join(tid[t], NULL);
}
