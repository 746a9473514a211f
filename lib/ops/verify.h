/* Internal: checking a kernel's output against the op's reference. */
#ifndef MB_LIB_VERIFY_H
#define MB_LIB_VERIFY_H

#include "ops/op_internal.h"

/* Checks every element when the reference costs at most MB__VERIFY_FULL_WORK,
 * else a seeded sample of MB__VERIFY_SAMPLES elements (plus the first and
 * last), each recomputed exactly: O(samples x K) for a GEMM. The sample is
 * stratified: the output, viewed as rows x cols (cols its last dimension),
 * is cut into square tiles of MB__VERIFY_TILE elements a side, doubled
 * until at most MB__VERIFY_SAMPLES / 2 tiles remain, and every tile gets
 * one element at a seeded place in it; the rest of the budget goes to
 * elements anywhere. So a wrong tile is never missed (a 4096 x 4096 output
 * has 4096 tiles of 64 x 64), where uniform sampling alone missed a given
 * 64 x 64 tile of it about one time in seven. */
#define MB__VERIFY_FULL_WORK (1u << 25)
#define MB__VERIFY_SAMPLES 8192u
#define MB__VERIFY_TILE 64u

/* Where a sampled check looks in one output of `total` elements whose last
 * dimension is `cols`: sample s (< MB__VERIFY_SAMPLES) of the stream
 * `seed`. The first `tiles` samples take one element of each tile in
 * turn, the others anywhere. */
typedef struct mb__sampler {
  size_t total;
  uint64_t cols, rows, tile, tiles_r, tiles_c, tiles;
  uint64_t seed;
} mb__sampler_t;
void mb__sampler_init(mb__sampler_t *s, size_t total, uint64_t cols,
                      uint64_t seed);
size_t mb__sampler_index(const mb__sampler_t *s, uint32_t i);

/* host: inputs then initial outputs (op operand order, own dtypes);
 * outs: every output as the kernel left it; seed: the sample's (output o
 * samples the stream seed + o). Each output is checked against
 * |got - ref| <= ulps * ulp(ref) + rel * scale (see op_internal.h). */
mb_status_t mb__verify(const mb_op_t *op, const mb_op_params_t *p,
                       const void *const *host, const void *const *outs,
                       uint64_t seed, mb_correctness_t *c);
/* The same against a reference the caller prepared (op->ref_prepare on
 * the same host): several checks of one run's outputs pay for it once. */
void mb__verify_with(const mb_op_t *op, const mb_op_params_t *p,
                     const void *ref, const void *const *outs, uint64_t seed,
                     mb_correctness_t *c);
/* Spacing of dtype's values at |x| (1 for integers). */
double mb__ulp(mb_dtype_t dtype, double x);

#endif
