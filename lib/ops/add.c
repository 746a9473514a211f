/* add: Z[M,N] = X + Y, element-wise, computed in f32 and rounded once to Z.
 * Z is X's dtype unless chosen (f32, bf16, f16; fp8 inputs keep fp8 as the
 * JAX suite's x + y does: eltwise.h's rule). FLOP = MN; bytes = |X| + |Y| +
 * |Z|, an fp8 element one byte. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

static mb_status_t add_resolve(mb_op_params_t *p) {
  return mb__elt_resolve_fp8_dtypes(&mb__op_add, p, 1);
}

static void add_operand(const mb_op_params_t *p, uint32_t role,
                        mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  const mb_dtype_t dtypes[] = {p->dtype, p->dtype_b, p->dtype_out};
  *dtype = dtypes[role];
  *ndim = 2;
  shape[0] = p->shape[0];
  shape[1] = p->shape[1];
}

static double add_numel(const mb_op_params_t *p) {
  return (double)p->shape[0] * (double)p->shape[1];
}

static double add_flop(const mb_op_params_t *p) {
  return add_numel(p);
}

static double add_bytes(const mb_op_params_t *p) {
  double n = add_numel(p);
  return mb__bytes(p->dtype, n) + mb__bytes(p->dtype_b, n) +
         mb__bytes(p->dtype_out, n);
}

static int add_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

static double add_ref_cost(const mb_op_params_t *p) {
  (void)p;
  return 1.0;
}

typedef struct add_ref {
  const void *x, *y;
  mb_dtype_t dx, dy, dz;
} add_ref_t;

static mb_status_t add_ref_prepare(const mb_op_params_t *p,
                                   const void *const *host, void **state) {
  add_ref_t *r = malloc(sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "add reference: out of memory");
  *r = (add_ref_t){host[0], host[1], p->dtype, p->dtype_b, p->dtype_out};
  *state = r;
  return MB_OK;
}

static void add_ref_element(const void *state, uint32_t out, size_t idx,
                            double *value, double *scale) {
  const add_ref_t *r = state;
  double x = mb__load(r->x, r->dx, idx), y = mb__load(r->y, r->dy, idx);
  (void)out;
  *value = mb__elt_ref_sat(r->dz, x + y);
  *scale = fabs(x) + fabs(y);
}

static void add_ref_release(void *state) {
  free(state);
}

/* One rounding to the output (0.5 ulp); the f32 sum before it can add one
 * f32 rounding of |x| + |y|. */
static mb__tolerance_t add_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5, mb_dtype_unit_roundoff(p->dtype_acc)};
}

static const char *const k_operands[] = {"X", "Y", "Z"};

const mb_op_t mb__op_add = {
    .name = "add",
    .summary =
        "Z = X + Y, element-wise (X, Y, Z: MxN); Z in X's dtype unless "
        "chosen",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "out: f32|bf16|f16, or an fp8 input's own (the default)",
    .rank = 2,
    .num_inputs = 2,
    .num_outputs = 1,
    .operand_names = k_operands,
    .dtypes = mb__elt_float_fp8,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float_fp8),
    .resolve = add_resolve,
    .operand = add_operand,
    .flop = add_flop,
    .bytes = add_bytes,
    .reads_output = add_reads_output,
    .ref_cost = add_ref_cost,
    .ref_prepare = add_ref_prepare,
    .ref_element = add_ref_element,
    .ref_release = add_ref_release,
    .tolerance = add_tolerance,
};
