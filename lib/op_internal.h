/* Internal: what an op descriptor holds. An op is defined once, here in the
 * core — meaning, parameters, FLOP/byte model, reference, tolerance — and
 * backends only supply kernels, so every backend is measured on the same
 * inputs, formulas and checks. */
#ifndef MB_LIB_OP_INTERNAL_H
#define MB_LIB_OP_INTERNAL_H

#include "internal.h"

struct mb_op {
  const char *name;
  const char *summary;
  const char *shape_syntax;   /* "MxKxN" */
  const char *const *aliases; /* NULL-terminated, may be NULL */
  uint32_t rank, num_inputs, num_outputs;

  /* Fill default dtypes and validate; errors name field, value, choices. */
  mb_status_t (*resolve)(mb_op_params_t *p);
  /* dtype and shape of operand `role` (inputs, then outputs). */
  void (*operand)(const mb_op_params_t *p, uint32_t role, mb_dtype_t *dtype,
                  uint32_t *ndim, int64_t *shape);
  double (*flop)(const mb_op_params_t *p);
  double (*bytes)(const mb_op_params_t *p);
  /* 1: the kernel reads the output before writing it (gemm with beta). */
  int (*reads_output)(const mb_op_params_t *p);

  /* Reference, element by element, in double. `host` holds the inputs then
   * the outputs' initial contents, in their own dtypes. */
  double (*ref_cost)(const mb_op_params_t *p); /* work per output element */
  mb_status_t (*ref_prepare)(const mb_op_params_t *p, const void *const *host,
                             void **state);
  /* value: the exact result of output element idx; scale: the magnitude
   * the error is judged against (e.g. sum |a_ik b_kj| for a dot product). */
  void (*ref_element)(const void *state, size_t idx, double *value,
                      double *scale);
  void (*ref_release)(void *state);
  /* Allowed |error| / scale; derived from the formats (docs/ops.md). */
  double (*tolerance)(const mb_op_params_t *p);
};

extern const mb_op_t mb__op_add;
extern const mb_op_t mb__op_gemm;

/* Shared by op definitions. */
mb_status_t mb__check_shape(const mb_op_t *op, const mb_op_params_t *p);
mb_status_t mb__check_dtype(const mb_op_t *op, const char *field,
                            mb_dtype_t dtype, const mb_dtype_t *valid,
                            size_t num_valid);
size_t mb__operand_numel(const mb_op_t *op, const mb_op_params_t *p,
                         uint32_t role);

#endif
