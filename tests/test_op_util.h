/* Shared by the tests that reach into an op (its operands, fill and
 * reference): one operand's host buffer, drawn as the runner draws it. */
#ifndef MB_TEST_OP_UTIL_H
#define MB_TEST_OP_UTIL_H

#include "test_util.h"
#include "ops/op_internal.h"

/* Operand `role` of op at p (resolved): a zeroed buffer of its dtype and
 * element count, filled by the op's fill (its default where it has none)
 * from `seed` unless `fill` is 0 (an output the test writes itself). */
static inline void *test_op_operand(const mb_op_t *op, const mb_op_params_t *p,
                                    uint32_t role, uint64_t seed, int fill) {
  mb_dtype_t dt;
  uint32_t nd;
  int64_t shape[MB_MAX_DIMS];
  op->operand(p, role, &dt, &nd, shape);
  const size_t n = mb__operand_numel(op, p, role);
  void *host = calloc(1, mb_dtype_bytes(dt, n));
  assert_non_null(host);
  if (fill) {
    mb_fill_t f = MB_FILL_INIT;
    if (op->fill) op->fill(p, role, &f);
    f.seed = seed;
    assert_int_equal(mb_fill_host(host, dt, n, &f), MB_OK);
  }
  return host;
}

/* Operands [0, n) of op at p, role r from test_op_operand seeded seed + r
 * (the runner seeds each role apart); roles from `first_unfilled` on are
 * left zero. Freed by test_op_operands_free. */
static inline void **test_op_operands(const mb_op_t *op,
                                      const mb_op_params_t *p, uint32_t n,
                                      uint32_t first_unfilled, uint64_t seed) {
  void **host = calloc(n, sizeof *host);
  assert_non_null(host);
  for (uint32_t role = 0; role < n; role++)
    host[role] =
        test_op_operand(op, p, role, seed + role, role < first_unfilled);
  return host;
}

static inline void test_op_operands_free(void **host, uint32_t n) {
  for (uint32_t role = 0; role < n; role++) free(host[role]);
  free(host);
}

#endif
