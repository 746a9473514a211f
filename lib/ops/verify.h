/* Internal: checking a kernel's output against the op's reference. */
#ifndef MB_LIB_VERIFY_H
#define MB_LIB_VERIFY_H

#include "ops/op_internal.h"

/* Checks every element when the reference costs at most MB__VERIFY_FULL_WORK,
 * else a seeded sample of MB__VERIFY_SAMPLES elements (plus the first and
 * last), each recomputed exactly: O(samples x K) for a GEMM. */
#define MB__VERIFY_FULL_WORK (1u << 25)
#define MB__VERIFY_SAMPLES 8192u

/* host: inputs then initial outputs (op operand order, own dtypes);
 * outs: every output as the kernel left it. Each output is checked against
 * |got - ref| <= ulps * ulp(ref) + rel * scale (see op_internal.h). */
mb_status_t mb__verify(const mb_op_t *op, const mb_op_params_t *p,
                       const void *const *host, const void *const *outs,
                       uint64_t seed, mb_correctness_t *c);
/* Spacing of dtype's values at |x| (1 for integers). */
double mb__ulp(mb_dtype_t dtype, double x);

#endif
