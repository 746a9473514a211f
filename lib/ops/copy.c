/* copy: Y[M,N] = X, any dtype: the memory-bandwidth op. FLOP 0; bytes
 * |X| + |Y| = 2 MN size. The result must be bit-exact. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

static const mb_dtype_t k_dtypes[] = {
    MB_DTYPE_F32,    MB_DTYPE_BF16, MB_DTYPE_F16, MB_DTYPE_F8E4M3,
    MB_DTYPE_F8E5M2, MB_DTYPE_I8,   MB_DTYPE_I4,  MB_DTYPE_I32};

static mb_status_t copy_resolve(mb_op_params_t *p) {
  mb_status_t st = mb__elt_resolve_dtypes(&mb__op_copy, p, k_dtypes,
                                          MB__ELT_COUNT(k_dtypes));
  if (st == MB_OK) st = mb__elt_check_numel(&mb__op_copy, "X", mb__elt_mn(p));
  return st;
}

static void copy_operand(const mb_op_params_t *p, uint32_t role,
                         mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  (void)role;
  mb__elt_operand_mn(p, p->dtype, dtype, ndim, shape);
}

static double copy_flop(const mb_op_params_t *p) {
  (void)p;
  return 0.0;
}
static double copy_bytes(const mb_op_params_t *p) {
  return 2.0 * mb__bytes(p->dtype, mb__elt_mn(p));
}

typedef struct copy_ref {
  const void *x;
  mb_dtype_t dt;
} copy_ref_t;

static mb_status_t copy_ref_prepare(const mb_op_params_t *p,
                                    const void *const *host, void **state) {
  copy_ref_t *r = malloc(sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "copy reference: out of memory");
  *r = (copy_ref_t){host[0], p->dtype};
  *state = r;
  return MB_OK;
}

static void copy_ref_element(const void *state, uint32_t out, size_t idx,
                             double *value, double *scale) {
  const copy_ref_t *r = state;
  (void)out;
  *value = mb__load(r->x, r->dt, idx);
  *scale = fabs(*value);
}

static void copy_ref_release(void *state) {
  free(state);
}

/* Nothing is computed: a zero allowance demands the exact value. */
static mb__tolerance_t copy_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)p;
  (void)out;
  return (mb__tolerance_t){0.0, 0.0};
}

const mb_op_t mb__op_copy = {
    .name = "copy",
    .summary = "Y = X (MxN, any dtype): memory bandwidth",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "",
    .rank = 2,
    .num_inputs = 1,
    .num_outputs = 1,
    .operand_names = mb__operands_xy,
    .dtypes = k_dtypes,
    .num_dtypes = MB__ELT_COUNT(k_dtypes),
    .resolve = copy_resolve,
    .operand = copy_operand,
    .flop = copy_flop,
    .bytes = copy_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = copy_ref_prepare,
    .ref_element = copy_ref_element,
    .ref_release = copy_ref_release,
    .tolerance = copy_tolerance,
};
