/* Internal: what gemm's op (gemm.c) and its reference (gemm_ref.c)
 * share: the dimension and operand indices, the layout and quantization
 * questions both ask, and the reference's entry points. */
#ifndef MB_LIB_OPS_GEMM_INTERNAL_H
#define MB_LIB_OPS_GEMM_INTERNAL_H

#include "ops/op_internal.h"

enum { GM, GK, GN };
enum { ROLE_A, ROLE_B, ROLE_SA, ROLE_SB, ROLE_D };

/* The dtype A and B hold inside the product: dtype_q when quantized in the
 * op, else their own. */
static inline mb_dtype_t qa_dtype(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_QUANTIZE_INPUTS) ? p->dtype_q : p->dtype;
}
static inline mb_dtype_t qb_dtype(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_QUANTIZE_INPUTS) ? p->dtype_q : p->dtype_b;
}
static inline int trans_a(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_TRANS_A) != 0;
}
static inline int trans_b(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_TRANS_B) != 0;
}

/* gemm_ref.c: the op's ref_cost, ref_prepare, ref_element, ref_release. */
double mb__gemm_ref_cost(const mb_op_params_t *p);
mb_status_t mb__gemm_ref_prepare(const mb_op_params_t *p,
                                 const void *const *host, void **state);
void mb__gemm_ref_element(const void *state, uint32_t out, size_t idx,
                          double *value, double *scale);
void mb__gemm_ref_release(void *state);

#endif
