/* STREAM's scale and triad (McCalpin's kernels, the JAX suite's hbm.py
 * op_type scale and triad), on M x N operands in f32, bf16 or f16:
 *   scale: Y = q X           FLOP M N,   bytes 2 |X| (X read, Y written)
 *   triad: A = B + q C       FLOP 2 M N, bytes 3 |X| (B, C read, A written)
 * q = 3, STREAM's scalar (the suite draws one from [1.1, 10); the value does
 * not change what moves, and a fixed one keeps runs comparable). Computed in
 * f32 and rounded once to the output; copy and add are ops of their own
 * (copy.c, add.c). */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "mb_stream.h"
#include "ops/eltwise.h"

static double numel(const mb_op_params_t *p) {
  return mb__elt_mn(p);
}

static mb_status_t check(const mb_op_t *op, mb_op_params_t *p) {
  mb_status_t st = mb__elt_resolve_dtypes(op, p, mb__elt_float,
                                          MB__ELT_COUNT(mb__elt_float));
  return st == MB_OK ? mb__elt_check_numel(op, "X", numel(p)) : st;
}
static mb_status_t scale_resolve(mb_op_params_t *p) {
  return check(&mb__op_scale, p);
}
static mb_status_t triad_resolve(mb_op_params_t *p) {
  return check(&mb__op_triad, p);
}

/* Every operand M x N of the one dtype. */
static void stream_operand(const mb_op_params_t *p, uint32_t role,
                           mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  (void)role;
  mb__elt_operand_mn(p, p->dtype, dtype, ndim, shape);
}

static double scale_flop(const mb_op_params_t *p) {
  return numel(p);
}
static double scale_bytes(const mb_op_params_t *p) {
  return 2.0 * mb__bytes(p->dtype, numel(p));
}
static double triad_flop(const mb_op_params_t *p) {
  return 2.0 * numel(p);
}
static double triad_bytes(const mb_op_params_t *p) {
  return 3.0 * mb__bytes(p->dtype, numel(p));
}

typedef struct stream_ref {
  const void *x, *y;
  mb_dtype_t dt;
} stream_ref_t;

static mb_status_t stream_ref_prepare(const mb_op_params_t *p,
                                      const void *const *host, void **state) {
  stream_ref_t *r = malloc(sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "stream reference: out of memory");
  *r = (stream_ref_t){host[0], host[1], p->dtype};
  *state = r;
  return MB_OK;
}

static void scale_ref_element(const void *state, uint32_t out, size_t idx,
                              double *value, double *scale) {
  const stream_ref_t *r = state;
  (void)out;
  *value = MB_STREAM_Q * mb__load(r->x, r->dt, idx);
  *scale = fabs(*value);
}

static void triad_ref_element(const void *state, uint32_t out, size_t idx,
                              double *value, double *scale) {
  const stream_ref_t *r = state;
  const double b = mb__load(r->x, r->dt, idx), c = mb__load(r->y, r->dt, idx);
  (void)out;
  *value = b + MB_STREAM_Q * c;
  *scale = fabs(b) + fabs(MB_STREAM_Q * c);
}

static void stream_ref_release(void *state) {
  free(state);
}

/* 0.5 ulp: one rounding to the output; before it, f32's: scale's product
 * (u of |q x|), triad's product and sum (2u of |b| + |q c|, an FMA one). */
static mb__tolerance_t scale_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5, mb_dtype_unit_roundoff(p->dtype_acc)};
}
static mb__tolerance_t triad_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5, 2.0 * mb_dtype_unit_roundoff(p->dtype_acc)};
}

static const char *const k_triad_operands[] = {"B", "C", "A"};

const mb_op_t mb__op_scale = {
    .name = "scale",
    .summary = "STREAM scale: Y = 3 X, element-wise (X, Y: MxN)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "",
    .rank = 2,
    .num_inputs = 1,
    .num_outputs = 1,
    .operand_names = mb__operands_xy,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = scale_resolve,
    .operand = stream_operand,
    .flop = scale_flop,
    .bytes = scale_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = stream_ref_prepare,
    .ref_element = scale_ref_element,
    .ref_release = stream_ref_release,
    .tolerance = scale_tolerance,
};

const mb_op_t mb__op_triad = {
    .name = "triad",
    .summary = "STREAM triad: A = B + 3 C, element-wise (A, B, C: MxN)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "",
    .rank = 2,
    .num_inputs = 2,
    .num_outputs = 1,
    .operand_names = k_triad_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = triad_resolve,
    .operand = stream_operand,
    .flop = triad_flop,
    .bytes = triad_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = stream_ref_prepare,
    .ref_element = triad_ref_element,
    .ref_release = stream_ref_release,
    .tolerance = triad_tolerance,
};
