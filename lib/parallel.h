/* Internal: host work split over threads, for the library's own large
 * loops (filling operands, transposing a reference's operand). The
 * backends have OpenMP; the core does not link it. */
#ifndef MB_LIB_PARALLEL_H
#define MB_LIB_PARALLEL_H

#include <stddef.h>

/* fn(arg, lo, hi) over [0, count), cut into one part per online core (at
 * most MB__PARALLEL_MAX_THREADS), each at least `min_part` items and
 * starting on a multiple of `align`; the caller runs the first part, and
 * any whose thread could not start, so the work completes either way.
 * Parts touch disjoint ranges: fn must not depend on which thread runs
 * it. */
#define MB__PARALLEL_MAX_THREADS 32u
void mb__parallel_for(size_t count, size_t min_part, size_t align,
                      void (*fn)(void *arg, size_t lo, size_t hi), void *arg);

#endif
