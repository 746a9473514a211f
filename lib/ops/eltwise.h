/* Internal: what the element-wise family's descriptors share (activation,
 * silu_mul, layernorm, rmsnorm, softmax, attention, copy): dtype and flag
 * validation with messages that list the choices, and the 2-D operand
 * plumbing. Small static inline helpers, so each op file stays one idea. */
#ifndef MB_LIB_OPS_ELTWISE_H
#define MB_LIB_OPS_ELTWISE_H

#include <math.h>
#include <stdio.h>

#include "ops/op_internal.h"

#define MB__ELT_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The float formats these ops compute on (f32 inside, see the tolerances). */
static const mb_dtype_t mb__elt_float[] = {MB_DTYPE_F32, MB_DTYPE_BF16,
                                           MB_DTYPE_F16};
static const mb_dtype_t mb__elt_acc[] = {MB_DTYPE_F32};

/* Defaults (f32; every operand in the input dtype; f32 compute) and the
 * checks: dtype one of `valid`, dtype_b and dtype_out equal to dtype (these
 * ops do not convert), dtype_acc f32. */
static inline mb_status_t mb__elt_resolve_dtypes(const mb_op_t *op,
                                                 mb_op_params_t *p,
                                                 const mb_dtype_t *valid,
                                                 size_t num_valid) {
  mb__default_dtypes(p, MB_DTYPE_F32);
  mb_status_t st;
  if ((st = mb__check_dtype(op, "dtype", p->dtype, valid, num_valid)) !=
          MB_OK ||
      (st = mb__check_dtype(op, "dtype_b", p->dtype_b, &p->dtype, 1)) !=
          MB_OK ||
      (st = mb__check_dtype(op, "dtype_out", p->dtype_out, &p->dtype, 1)) !=
          MB_OK ||
      (st = mb__check_dtype(op, "dtype_acc", p->dtype_acc, mb__elt_acc, 1)) !=
          MB_OK)
    return st;
  return MB_OK;
}

/* Operand sizes are products of dimensions each up to 2^40: keep every
 * operand's element count where size_t arithmetic and doubles are exact. */
static inline mb_status_t mb__elt_check_numel(const mb_op_t *op,
                                              const char *operand,
                                              double numel) {
  if (numel <= 0x1p48) return MB_OK;
  return mb__fail(MB_ERR_INVALID_ARG,
                  "%s: operand %s would have %.3g elements; at most 2^48",
                  op->name, operand, numel);
}

static inline double mb__elt_mn(const mb_op_params_t *p) {
  return (double)p->shape[0] * (double)p->shape[1];
}

/* An M x N operand of `dtype`. */
static inline void mb__elt_operand_mn(const mb_op_params_t *p, mb_dtype_t dtype,
                                      mb_dtype_t *out_dtype, uint32_t *ndim,
                                      int64_t *shape) {
  *out_dtype = dtype;
  *ndim = 2;
  shape[0] = p->shape[0];
  shape[1] = p->shape[1];
}

static inline int mb__elt_never_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

static inline double mb__elt_ref_cost_one(const mb_op_params_t *p) {
  (void)p;
  return 1.0;
}

#endif
