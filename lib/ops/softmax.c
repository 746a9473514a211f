/* softmax over the last dimension of X[M,N]:
 *   Y[i,j] = exp(X[i,j] - max_k X[i,k]) / sum_k exp(X[i,k] - max_k X[i,k])
 * (the max is subtracted so no exponent overflows). f32, bf16, f16, output
 * = input, f32 compute.
 * FLOP: 5 per element (max, subtract, exp, sum, scale).
 * Bytes: |X| + |Y| = 2 MN size. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

static mb_status_t softmax_resolve(mb_op_params_t *p) {
  mb_status_t st = mb__elt_resolve_dtypes(&mb__op_softmax, p, mb__elt_float,
                                          MB__ELT_COUNT(mb__elt_float));
  if (st == MB_OK)
    st = mb__elt_check_numel(&mb__op_softmax, "X", mb__elt_mn(p));
  return st;
}

static void softmax_operand(const mb_op_params_t *p, uint32_t role,
                            mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  (void)role;
  mb__elt_operand_mn(p, p->dtype, dtype, ndim, shape);
}

static double softmax_flop(const mb_op_params_t *p) {
  return 5.0 * mb__elt_mn(p);
}
static double softmax_bytes(const mb_op_params_t *p) {
  return 2.0 * mb__bytes(p->dtype, mb__elt_mn(p));
}

/* The relative error budget of one probability, in u(f32), without the
 * element's own |x_j - max| term (see softmax_ref_element): exp 4, its
 * rounded argument's error reaching the sum weighted by the probabilities
 * (E_p[max - x] <= ln N) plus exp's 4 there, the sum of N positive terms
 * 2 sqrt(N), the division (or reciprocal and product) 2. */
static double error_units(double n) {
  return 2.0 * sqrt(n) + log(n) + 10.0;
}

/* Per row, in double: the max and the sum of exp(x - max). */
typedef struct softmax_ref {
  const void *x;
  mb_dtype_t dt;
  int64_t n;
  double units;
  double *max, *sum;
} softmax_ref_t;

static void softmax_ref_release(void *state) {
  softmax_ref_t *r = state;
  if (!r) return;
  free(r->max);
  free(r->sum);
  free(r);
}

static mb_status_t softmax_ref_prepare(const mb_op_params_t *p,
                                       const void *const *host, void **state) {
  softmax_ref_t *r = calloc(1, sizeof *r);
  const int64_t m = p->shape[0], n = p->shape[1];
  if (r) {
    r->max = malloc((size_t)m * sizeof *r->max);
    r->sum = malloc((size_t)m * sizeof *r->sum);
  }
  if (!r || !r->max || !r->sum) {
    softmax_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY, "softmax reference: out of memory");
  }
  *r = (softmax_ref_t){host[0], p->dtype, n, error_units((double)n),
                       r->max,  r->sum};
  for (int64_t i = 0; i < m; i++) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++)
      mx = fmax(mx, mb__load(r->x, r->dt, (size_t)(i * n + j)));
    for (int64_t j = 0; j < n; j++)
      sum += exp(mb__load(r->x, r->dt, (size_t)(i * n + j)) - mx);
    r->max[i] = mx;
    r->sum[i] = sum;
  }
  *state = r;
  return MB_OK;
}

/* Scale: p (1 + |x - max| / units). The f32 argument x - max is rounded to
 * u |x - max|, which exp turns into that relative error of p: small
 * probabilities (far below the max) get the larger share, as they should. */
static void softmax_ref_element(const void *state, uint32_t out, size_t idx,
                                double *value, double *scale) {
  const softmax_ref_t *r = state;
  const int64_t i = (int64_t)idx / r->n;
  double d = mb__load(r->x, r->dt, idx) - r->max[i];
  (void)out;
  *value = exp(d) / r->sum[i];
  *scale = *value * (1.0 + fabs(d) / r->units);
}

/* 0.5 ulp to the output plus (2 sqrt(N) + ln N + 10) u(f32) of the scale
 * (error_units). Truncating to bf16/f16 is off by up to 1 ulp and fails. */
static mb__tolerance_t softmax_tolerance(const mb_op_params_t *p,
                                         uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5, error_units((double)p->shape[1]) *
                                    mb_dtype_unit_roundoff(p->dtype_acc)};
}

const mb_op_t mb__op_softmax = {
    .name = "softmax",
    .summary = "Y = softmax(X) over the last dim, max-subtracted (X, Y: MxN)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "",
    .rank = 2,
    .num_inputs = 1,
    .num_outputs = 1,
    .operand_names = mb__operands_xy,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = softmax_resolve,
    .operand = softmax_operand,
    .flop = softmax_flop,
    .bytes = softmax_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = softmax_ref_prepare,
    .ref_element = softmax_ref_element,
    .ref_release = softmax_ref_release,
    .tolerance = softmax_tolerance,
};
