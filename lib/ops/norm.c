/* layernorm and rmsnorm over the last dimension of X[M,N]:
 *   layernorm: Y = (X - mean) / sqrt(var + eps) * W + Bias, var biased (/N)
 *   rmsnorm:   Y = X / sqrt(mean(X^2) + eps) * W
 * W, Bias: [N] in the input dtype. With MB_PARAM_NO_WEIGHT there is no
 * affine part; the operands stay (fixed arity) and the kernel ignores them.
 * FLOP per element: layernorm 8 (mean: add; variance: subtract, square,
 * add; normalise: subtract, multiply; affine: multiply, add), 6 without the
 * affine part; rmsnorm 4 (square, add, multiply by 1/rms, by W), 3 without
 * W. Per-row work (sqrt, reciprocal) is not counted.
 * Bytes: |X| + |Y| + |W| (+ |Bias|) — the parameters only when used. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

enum { ROLE_X, ROLE_W, ROLE_BIAS };

static int affine(const mb_op_params_t *p) {
  return !(p->flags & MB_PARAM_NO_WEIGHT);
}

static mb_status_t norm_resolve(const mb_op_t *op, mb_op_params_t *p) {
  mb_status_t st = mb__elt_resolve_dtypes(op, p, mb__elt_float,
                                          MB__ELT_COUNT(mb__elt_float));
  if (st == MB_OK) st = mb__elt_check_numel(op, "X", mb__elt_mn(p));
  if (st == MB_OK && !(p->eps > 0 && isfinite(p->eps)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: eps must be positive and finite (got %g)", op->name,
                    p->eps);
  return st;
}

static mb_status_t layernorm_resolve(mb_op_params_t *p) {
  return norm_resolve(&mb__op_layernorm, p);
}
static mb_status_t rmsnorm_resolve(mb_op_params_t *p) {
  return norm_resolve(&mb__op_rmsnorm, p);
}

/* X and Y are M x N; W and Bias are [N]. The output is the last role. */
static void layernorm_operand(const mb_op_params_t *p, uint32_t role,
                              mb_dtype_t *dtype, uint32_t *ndim,
                              int64_t *shape) {
  mb__elt_operand_mn(p, p->dtype, dtype, ndim, shape);
  if (role == ROLE_W || role == ROLE_BIAS) {
    *ndim = 1;
    shape[0] = p->shape[1];
  }
}
static void rmsnorm_operand(const mb_op_params_t *p, uint32_t role,
                            mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  layernorm_operand(p, role == ROLE_W ? ROLE_W : ROLE_X, dtype, ndim, shape);
}

static double layernorm_flop(const mb_op_params_t *p) {
  return (affine(p) ? 8.0 : 6.0) * mb__elt_mn(p);
}
static double rmsnorm_flop(const mb_op_params_t *p) {
  return (affine(p) ? 4.0 : 3.0) * mb__elt_mn(p);
}

static double norm_bytes(const mb_op_params_t *p, double num_params) {
  double params = affine(p) ? num_params * (double)p->shape[1] : 0.0;
  return mb__bytes(p->dtype, 2.0 * mb__elt_mn(p) + params);
}
static double layernorm_bytes(const mb_op_params_t *p) {
  return norm_bytes(p, 2.0);
}
static double rmsnorm_bytes(const mb_op_params_t *p) {
  return norm_bytes(p, 1.0);
}

/* W ~ 1, Bias ~ 0 as trained norms are, with enough spread that a kernel
 * ignoring or misplacing them fails. */
static void layernorm_fill(const mb_op_params_t *p, uint32_t role,
                           mb_fill_t *f) {
  (void)p;
  if (role == ROLE_W) f->kind = MB_FILL_NORMAL, f->a = 1.0, f->b = 0.1;
  if (role == ROLE_BIAS) f->kind = MB_FILL_NORMAL, f->a = 0.0, f->b = 0.1;
}
static void rmsnorm_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  if (role == ROLE_W) layernorm_fill(p, role, f);
}

/* Row statistics in double, exact to ~1e-16: the mean (layernorm), the
 * reciprocal of the root (1/sqrt(var + eps) or 1/sqrt(mean x^2 + eps)) and
 * the mean |x| (what the f32 mean's error is relative to). */
typedef struct norm_ref {
  const void *x, *w, *b;
  mb_dtype_t dt;
  int64_t n;
  int affine, rms;
  double *mean, *rstd, *mean_abs;
} norm_ref_t;

static void norm_ref_release(void *state) {
  norm_ref_t *r = state;
  if (!r) return;
  free(r->mean);
  free(r->rstd);
  free(r->mean_abs);
  free(r);
}

static void row_stats(norm_ref_t *r, int64_t i, double eps) {
  const double n = (double)r->n;
  double sum = 0, sum_abs = 0, sq = 0;
  for (int64_t j = 0; j < r->n; j++) {
    double x = mb__load(r->x, r->dt, (size_t)(i * r->n + j));
    sum += x;
    sum_abs += fabs(x);
  }
  double mean = r->rms ? 0.0 : sum / n;
  for (int64_t j = 0; j < r->n; j++) {
    double d = mb__load(r->x, r->dt, (size_t)(i * r->n + j)) - mean;
    sq += d * d;
  }
  r->mean[i] = mean;
  r->rstd[i] = 1.0 / sqrt(sq / n + eps);
  r->mean_abs[i] = sum_abs / n;
}

static mb_status_t norm_ref_prepare(const mb_op_params_t *p,
                                    const void *const *host, int rms,
                                    void **state) {
  norm_ref_t *r = calloc(1, sizeof *r);
  const int64_t m = p->shape[0];
  if (r) {
    r->mean = malloc((size_t)m * sizeof *r->mean);
    r->rstd = malloc((size_t)m * sizeof *r->rstd);
    r->mean_abs = malloc((size_t)m * sizeof *r->mean_abs);
  }
  if (!r || !r->mean || !r->rstd || !r->mean_abs) {
    norm_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY, "%s reference: out of memory",
                    rms ? "rmsnorm" : "layernorm");
  }
  r->x = host[ROLE_X];
  r->w = host[ROLE_W];
  r->b = rms ? NULL : host[ROLE_BIAS];
  r->dt = p->dtype;
  r->n = p->shape[1];
  r->affine = affine(p);
  r->rms = rms;
  for (int64_t i = 0; i < m; i++) row_stats(r, i, p->eps);
  *state = r;
  return MB_OK;
}

static mb_status_t layernorm_ref_prepare(const mb_op_params_t *p,
                                         const void *const *host,
                                         void **state) {
  return norm_ref_prepare(p, host, 0, state);
}
static mb_status_t rmsnorm_ref_prepare(const mb_op_params_t *p,
                                       const void *const *host, void **state) {
  return norm_ref_prepare(p, host, 1, state);
}

/* Scale (layernorm): |w| (|xhat| + rstd mean|x|) + |b|. The first term is
 * what the normalised value's own roundings are relative to; the second is
 * the f32 mean's error (~sqrt(N) u mean|x|) amplified by 1/stddev, which
 * dominates where the row's mean is large against its spread; |b| for the
 * final add. rmsnorm has no subtraction: its scale is |y|. */
static void norm_ref_element(const void *state, uint32_t out, size_t idx,
                             double *value, double *scale) {
  const norm_ref_t *r = state;
  const int64_t i = (int64_t)idx / r->n, j = (int64_t)idx % r->n;
  double xhat = (mb__load(r->x, r->dt, idx) - r->mean[i]) * r->rstd[i];
  double w = r->affine ? mb__load(r->w, r->dt, (size_t)j) : 1.0;
  double b = r->affine && r->b ? mb__load(r->b, r->dt, (size_t)j) : 0.0;
  (void)out;
  *value = xhat * w + b;
  *scale = r->rms
               ? fabs(*value)
               : fabs(w) * (fabs(xhat) + r->rstd[i] * r->mean_abs[i]) + fabs(b);
}

/* 0.5 ulp to the output, plus (2 sqrt(N) + 8) u(f32) of the scale: the row
 * sums (mean, variance or mean square) are f32 reductions of N terms, ~2
 * sqrt(N) u as for a GEMM's K (half of the variance's error reaches
 * 1/sqrt); 8 more roundings: the subtraction, eps, sqrt, reciprocal, the
 * product with it, W and Bias. A kernel that truncates to bf16/f16 is off
 * by up to 1 ulp and fails. */
static mb__tolerance_t norm_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5, (2.0 * sqrt((double)p->shape[1]) + 8.0) *
                                    mb_dtype_unit_roundoff(p->dtype_acc)};
}

static const char *const k_ln_operands[] = {"X", "W", "Bias", "Y"};
static const char *const k_rms_operands[] = {"X", "W", "Y"};

const mb_op_t mb__op_layernorm = {
    .name = "layernorm",
    .summary =
        "Y = (X - mean) / sqrt(var + eps) * W + Bias over the last "
        "dim (X, Y: MxN; W, Bias: N)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "eps (1e-5); no_affine: no W, Bias",
    .param_mask = MB__P_EPS,
    .rank = 2,
    .num_inputs = 3,
    .num_outputs = 1,
    .operand_names = k_ln_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = layernorm_resolve,
    .operand = layernorm_operand,
    .flop = layernorm_flop,
    .bytes = layernorm_bytes,
    .reads_output = mb__elt_never_reads_output,
    .fill = layernorm_fill,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = layernorm_ref_prepare,
    .ref_element = norm_ref_element,
    .ref_release = norm_ref_release,
    .tolerance = norm_tolerance,
};

const mb_op_t mb__op_rmsnorm = {
    .name = "rmsnorm",
    .summary =
        "Y = X / sqrt(mean(X^2) + eps) * W over the last dim (X, Y: "
        "MxN; W: N)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "eps (1e-5); no_affine: no W",
    .param_mask = MB__P_EPS,
    .rank = 2,
    .num_inputs = 2,
    .num_outputs = 1,
    .operand_names = k_rms_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = rmsnorm_resolve,
    .operand = rmsnorm_operand,
    .flop = rmsnorm_flop,
    .bytes = rmsnorm_bytes,
    .reads_output = mb__elt_never_reads_output,
    .fill = rmsnorm_fill,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = rmsnorm_ref_prepare,
    .ref_element = norm_ref_element,
    .ref_release = norm_ref_release,
    .tolerance = norm_tolerance,
};
