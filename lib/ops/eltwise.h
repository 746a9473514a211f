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

/* What add, activation and silu_mul read: the float formats and fp8. */
static const mb_dtype_t mb__elt_float_fp8[] = {MB_DTYPE_F32, MB_DTYPE_BF16,
                                               MB_DTYPE_F16, MB_DTYPE_F8E4M3,
                                               MB_DTYPE_F8E5M2};

static inline int mb__elt_is_fp8(mb_dtype_t dt) {
  return dt == MB_DTYPE_F8E4M3 || dt == MB_DTYPE_F8E5M2;
}

/* The dtypes of the ops that read fp8 (add, activation, silu_mul): dtype
 * one of mb__elt_float_fp8, dtype_b equal to it, dtype_acc f32, and the
 * output rule: by default the input's dtype, fp8 included (the JAX suite's
 * jnp ops keep their inputs' dtype: sigmoid, silu(x) * y and x + y of
 * float8_e4m3fn are float8_e4m3fn); an fp8 input may instead be written as
 * f32, bf16 or f16 (which it converts to exactly), and with any_float_out
 * (add) every input may. */
static inline mb_status_t mb__elt_resolve_fp8_dtypes(const mb_op_t *op,
                                                     mb_op_params_t *p,
                                                     int any_float_out) {
  mb__default_dtypes(p, MB_DTYPE_F32);
  const int fp8 = mb__elt_is_fp8(p->dtype);
  const mb_dtype_t wide[] = {p->dtype, MB_DTYPE_F32, MB_DTYPE_BF16,
                             MB_DTYPE_F16};
  /* The input's own dtype leads only where it is not among the others. */
  const mb_dtype_t *outs = fp8 || !any_float_out ? wide : wide + 1;
  const size_t num_outs = fp8 ? 4 : any_float_out ? 3 : 1;
  mb_status_t st;
  if ((st = mb__check_dtype(op, "dtype", p->dtype, mb__elt_float_fp8,
                            MB__ELT_COUNT(mb__elt_float_fp8))) != MB_OK ||
      (st = mb__check_dtype(op, "dtype_b", p->dtype_b, &p->dtype, 1)) !=
          MB_OK ||
      (st = mb__check_dtype(op, "dtype_out", p->dtype_out, outs, num_outs)) !=
          MB_OK ||
      (st = mb__check_dtype(op, "dtype_acc", p->dtype_acc, mb__elt_acc, 1)) !=
          MB_OK)
    return st;
  return MB_OK;
}

/* A reference value as an fp8 output holds it: saturated to the finite
 * range (the conversions' satfinite, as quantize's); other outputs as is. */
static inline double mb__elt_ref_sat(mb_dtype_t out, double v) {
  if (!mb__elt_is_fp8(out)) return v;
  const double max = mb_dtype_max(out);
  return v > max ? max : v < -max ? -max : v;
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
