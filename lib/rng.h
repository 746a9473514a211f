/* Internal: the counter-based generator behind mb_tensor_fill. Element i of
 * a stream depends only on (seed, i), so fills are reproducible, identical
 * on every backend, and could be computed in any order. */
#ifndef MB_LIB_RNG_H
#define MB_LIB_RNG_H

#include <stdint.h>

#include "microbench/tensor.h"

/* A 64-bit hash of (seed, counter): splitmix64's finaliser over a mix. */
uint64_t mb__rng_u64(uint64_t seed, uint64_t counter);
/* Uniform in [0, 1) with 53 random bits. */
double mb__rng_uniform(uint64_t seed, uint64_t counter);
/* Element i of a fill, in double. */
double mb__fill_value(const mb_fill_t *fill, uint64_t i);

#endif
