/* The backward ops of rmsnorm and silu_mul (the JAX accelerator-
 * microbenchmarks suite's rmsnorm_bwd and swiglu_bwd), so a training step's
 * backward pass can be measured op by op and composed into graphs.
 *
 * rmsnorm_bwd: the gradients of Y = X rstd W, rstd = 1/sqrt(mean(X^2) +
 * eps), over the last dimension of X[M,N], given dY[M,N]:
 *   g  = dY W,  c = rstd^2 mean(g X)               (per row)
 *   dX = rstd (g - X c)
 *   dW = sum over rows of dY X rstd                 ([N], f32 accumulation)
 * rstd is recomputed from X (the JAX suite's function takes X, W and dY, not
 * the forward's saved statistics), so the kernel reads X, W and dY only.
 * dX and dW are in the input dtype (JAX's gradient has its primal's dtype).
 * MB_PARAM_NO_WEIGHT: no W (g = dY); the fixed-arity dW is all zeros, as
 * the gradient of a weight the op does not have.
 *
 * swiglu_bwd: the gradients of Z = silu(A) B, given dY:
 *   dA = dY B silu'(A),  silu'(a) = s (1 + a (1 - s)),  s = sigmoid(a)
 *   dB = dY silu(A)
 *
 * FLOP per element (per-row work — sqrt, reciprocal, the mean's scaling —
 * not counted): rmsnorm_bwd 11: the recomputed sum of squares (square,
 * add), g (multiply), the sum of g X (multiply, add), dX (X c, subtract,
 * times rstd), dW (dY X, times rstd, add); without W 7 (no g, no dW).
 * swiglu_bwd 12: sigmoid 4 (negate, exp, add, divide), silu = a s, dB =
 * dY silu, silu' 4 (1 - s, times a, plus 1, times s), dA 2 (dY B, times
 * silu').
 * Bytes (compulsory): rmsnorm_bwd |X| + |dY| + |dX| + |W| + |dW| = (3 M N +
 * 2 N) size, 3 M N size without W; swiglu_bwd 5 M N size. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

enum { RB_X, RB_W, RB_DY, RB_DX, RB_DW };
enum { SB_A, SB_B, SB_DY, SB_DA, SB_DB };

static int affine(const mb_op_params_t *p) {
  return !(p->flags & MB_PARAM_NO_WEIGHT);
}

/* ---- rmsnorm_bwd ------------------------------------------------------- */

static mb_status_t rmsnorm_bwd_resolve(mb_op_params_t *p) {
  const mb_op_t *op = &mb__op_rmsnorm_bwd;
  mb_status_t st = mb__elt_resolve_dtypes(op, p, mb__elt_float,
                                          MB__ELT_COUNT(mb__elt_float));
  if (st == MB_OK) st = mb__elt_check_numel(op, "X", mb__elt_mn(p));
  if (st == MB_OK && !(p->eps > 0 && isfinite(p->eps)))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: eps must be positive and finite (got %g)", op->name,
                    p->eps);
  return st;
}

/* X, dY, dX: M x N; W, dW: [N]. */
static void rmsnorm_bwd_operand(const mb_op_params_t *p, uint32_t role,
                                mb_dtype_t *dtype, uint32_t *ndim,
                                int64_t *shape) {
  mb__elt_operand_mn(p, p->dtype, dtype, ndim, shape);
  if (role == RB_W || role == RB_DW) {
    *ndim = 1;
    shape[0] = p->shape[1];
  }
}

static double rmsnorm_bwd_flop(const mb_op_params_t *p) {
  return (affine(p) ? 11.0 : 7.0) * mb__elt_mn(p);
}

static double rmsnorm_bwd_bytes(const mb_op_params_t *p) {
  const double params = affine(p) ? 2.0 * (double)p->shape[1] : 0.0;
  return mb__bytes(p->dtype, 3.0 * mb__elt_mn(p) + params);
}

/* W ~ normal(1, 0.1), as the forward's. */
static void rmsnorm_bwd_fill(const mb_op_params_t *p, uint32_t role,
                             mb_fill_t *f) {
  (void)p;
  if (role == RB_W) f->kind = MB_FILL_NORMAL, f->a = 1.0, f->b = 0.1;
}

/* Per row, in double: rstd, c = rstd^2 mean(g x) and mean |g x| (what the
 * f32 sum of g x errs relative to); per column, dW and its scale
 * sum |dy x rstd|. All O(M N) once, so every element costs O(1). */
typedef struct rms_bwd_ref {
  const void *x, *w, *dy;
  mb_dtype_t dt;
  int64_t n;
  int affine;
  double *rstd, *c, *mean_abs_gx, *dw, *dw_scale;
} rms_bwd_ref_t;

static void rms_bwd_release(void *state) {
  rms_bwd_ref_t *r = state;
  if (!r) return;
  free(r->rstd);
  free(r->c);
  free(r->mean_abs_gx);
  free(r->dw);
  free(r->dw_scale);
  free(r);
}

static double rms_bwd_g(const rms_bwd_ref_t *r, size_t idx, int64_t j) {
  const double dy = mb__load(r->dy, r->dt, idx);
  return r->affine ? dy * mb__load(r->w, r->dt, (size_t)j) : dy;
}

static void rms_bwd_row(rms_bwd_ref_t *r, int64_t i, double eps) {
  const double n = (double)r->n;
  double sq = 0, gx = 0, abs_gx = 0;
  for (int64_t j = 0; j < r->n; j++) {
    const size_t idx = (size_t)(i * r->n + j);
    const double x = mb__load(r->x, r->dt, idx), g = rms_bwd_g(r, idx, j);
    sq += x * x;
    gx += g * x;
    abs_gx += fabs(g * x);
  }
  const double rstd = 1.0 / sqrt(sq / n + eps);
  r->rstd[i] = rstd;
  r->c[i] = rstd * rstd * gx / n;
  r->mean_abs_gx[i] = abs_gx / n;
  for (int64_t j = 0; r->affine && j < r->n; j++) {
    const size_t idx = (size_t)(i * r->n + j);
    const double t = mb__load(r->dy, r->dt, idx) * mb__load(r->x, r->dt, idx);
    r->dw[j] += t * rstd;
    r->dw_scale[j] += fabs(t * rstd);
  }
}

static mb_status_t rms_bwd_prepare(const mb_op_params_t *p,
                                   const void *const *host, void **state) {
  const size_t m = (size_t)p->shape[0], n = (size_t)p->shape[1];
  rms_bwd_ref_t *r = calloc(1, sizeof *r);
  if (r) {
    r->rstd = malloc(m * sizeof *r->rstd);
    r->c = malloc(m * sizeof *r->c);
    r->mean_abs_gx = malloc(m * sizeof *r->mean_abs_gx);
    r->dw = calloc(n, sizeof *r->dw);
    r->dw_scale = calloc(n, sizeof *r->dw_scale);
  }
  if (!r || !r->rstd || !r->c || !r->mean_abs_gx || !r->dw || !r->dw_scale) {
    rms_bwd_release(r);
    return mb__fail(MB_ERR_NO_MEMORY, "rmsnorm_bwd reference: out of memory");
  }
  r->x = host[RB_X];
  r->w = host[RB_W];
  r->dy = host[RB_DY];
  r->dt = p->dtype;
  r->n = p->shape[1];
  r->affine = affine(p);
  for (int64_t i = 0; i < p->shape[0]; i++) rms_bwd_row(r, i, p->eps);
  *state = r;
  return MB_OK;
}

/* dX's scale: rstd (|g| + |x| rstd^2 mean|g x|), the magnitudes of its
 * two terms, which cancel where the gradient is small. dW's: sum |dy x
 * rstd|. */
static void rms_bwd_element(const void *state, uint32_t out, size_t idx,
                            double *value, double *scale) {
  const rms_bwd_ref_t *r = state;
  if (out == 1) {
    *value = r->affine ? r->dw[idx] : 0.0;
    *scale = r->affine ? r->dw_scale[idx] : 0.0;
    return;
  }
  const int64_t i = (int64_t)idx / r->n, j = (int64_t)idx % r->n;
  const double x = mb__load(r->x, r->dt, idx), g = rms_bwd_g(r, idx, j);
  const double rstd = r->rstd[i];
  *value = rstd * (g - x * r->c[i]);
  *scale = rstd * (fabs(g) + fabs(x) * rstd * rstd * r->mean_abs_gx[i]);
}

/* 0.5 ulp to the output, plus the f32 computation's error relative to the
 * scale, with an f32 sum of K terms erring by 2 sqrt(K) u of the sum of
 * their magnitudes (the GEMM's and the norms' convention):
 * - rstd: the sum of N squares (2 sqrt(N) u), half of it through the root,
 *   and the eps add, root and reciprocal: (sqrt(N) + 3) u.
 * - dX = rstd (g - x c): the g term carries rstd's error and two roundings
 *   (g, the product): sqrt(N) + 5; the x c term rstd^3's three times
 *   rstd's, the sum of g x (2 sqrt(N)) and five roundings (g x, rstd^2,
 *   the mean, x c, the outer product): 5 sqrt(N) + 14; one more for the
 *   subtraction: (5 sqrt(N) + 15) u of the scale.
 * - dW = sum over M rows of dy x rstd: each term rstd's error and two
 *   roundings, then the f32 sum of M terms (however the kernel splits it):
 *   (2 sqrt(M) + sqrt(N) + 5) u. */
static mb__tolerance_t rms_bwd_tolerance(const mb_op_params_t *p,
                                         uint32_t out) {
  const double u = mb_dtype_unit_roundoff(p->dtype_acc);
  const double sn = sqrt((double)p->shape[1]), sm = sqrt((double)p->shape[0]);
  if (out == 1) return (mb__tolerance_t){0.5, (2.0 * sm + sn + 5.0) * u};
  return (mb__tolerance_t){0.5, (5.0 * sn + 15.0) * u};
}

/* ---- swiglu_bwd -------------------------------------------------------- */

static mb_status_t swiglu_bwd_resolve(mb_op_params_t *p) {
  const mb_op_t *op = &mb__op_swiglu_bwd;
  mb_status_t st = mb__elt_resolve_dtypes(op, p, mb__elt_float,
                                          MB__ELT_COUNT(mb__elt_float));
  if (st == MB_OK) st = mb__elt_check_numel(op, "A", mb__elt_mn(p));
  return st;
}

static void swiglu_bwd_operand(const mb_op_params_t *p, uint32_t role,
                               mb_dtype_t *dtype, uint32_t *ndim,
                               int64_t *shape) {
  (void)role;
  mb__elt_operand_mn(p, p->dtype, dtype, ndim, shape);
}

static double swiglu_bwd_flop(const mb_op_params_t *p) {
  return 12.0 * mb__elt_mn(p);
}

static double swiglu_bwd_bytes(const mb_op_params_t *p) {
  return 5.0 * mb__bytes(p->dtype, mb__elt_mn(p));
}

typedef struct swiglu_bwd_ref {
  const void *a, *b, *dy;
  mb_dtype_t dt;
} swiglu_bwd_ref_t;

static mb_status_t swiglu_bwd_prepare(const mb_op_params_t *p,
                                      const void *const *host, void **state) {
  swiglu_bwd_ref_t *r = malloc(sizeof *r);
  if (!r)
    return mb__fail(MB_ERR_NO_MEMORY, "swiglu_bwd reference: out of memory");
  *r = (swiglu_bwd_ref_t){host[SB_A], host[SB_B], host[SB_DY], p->dtype};
  *state = r;
  return MB_OK;
}

/* dA's scale |dy b| s (1 + |a|) bounds both terms of s (1 + a (1 - s));
 * dB's |dy a| is silu_mul's (|silu(a)| <= |a|). */
static void swiglu_bwd_element(const void *state, uint32_t out, size_t idx,
                               double *value, double *scale) {
  const swiglu_bwd_ref_t *r = state;
  const double a = mb__load(r->a, r->dt, idx), dy = mb__load(r->dy, r->dt, idx);
  if (out == 1) {
    *value = dy * mb__act_eval(MB_ACT_SILU, a, 0.0);
    *scale = fabs(dy * a);
    return;
  }
  const double b = mb__load(r->b, r->dt, idx);
  const double s = mb__act_eval(MB_ACT_SIGMOID, a, 0.0);
  *value = dy * b * s * (1.0 + a * (1.0 - s));
  *scale = fabs(dy * b) * s * (1.0 + fabs(a));
}

static void swiglu_bwd_release(void *state) {
  free(state);
}

/* 0.5 ulp to the output, plus, relative to the scale:
 * - dA: s = sigmoid(a) 7 u of s (the activation table's sigmoid); 1 - s
 *   then errs by 8 u absolute (s <= 1), a (1 - s) by 9 u |a|, 1 + a (1 -
 *   s) by 10 u (1 + |a|), times s by 18 u s (1 + |a|); dY B and the last
 *   product two more: 20 u.
 * - dB: silu_mul's 8 u (silu's 7 relative to |a|, the product). */
static mb__tolerance_t swiglu_bwd_tolerance(const mb_op_params_t *p,
                                            uint32_t out) {
  const double u = mb_dtype_unit_roundoff(p->dtype_acc);
  return (mb__tolerance_t){0.5, (out == 1 ? 8.0 : 20.0) * u};
}

static const char *const k_rms_bwd_operands[] = {"X", "W", "dY", "dX", "dW"};
static const char *const k_swiglu_bwd_operands[] = {"A", "B", "dY", "dA", "dB"};

const mb_op_t mb__op_rmsnorm_bwd = {
    .name = "rmsnorm_bwd",
    .summary =
        "dX, dW of rmsnorm's Y = X rstd W given dY; rstd recomputed from X "
        "(X, dY, dX: MxN; W, dW: N)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "eps (1e-5); no_affine: no W (dW all zeros)",
    .param_mask = MB__P_EPS,
    .rank = 2,
    .num_inputs = 3,
    .num_outputs = 2,
    .operand_names = k_rms_bwd_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = rmsnorm_bwd_resolve,
    .operand = rmsnorm_bwd_operand,
    .flop = rmsnorm_bwd_flop,
    .bytes = rmsnorm_bwd_bytes,
    .reads_output = mb__elt_never_reads_output,
    .fill = rmsnorm_bwd_fill,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = rms_bwd_prepare,
    .ref_element = rms_bwd_element,
    .ref_release = rms_bwd_release,
    .tolerance = rms_bwd_tolerance,
};

const mb_op_t mb__op_swiglu_bwd = {
    .name = "swiglu_bwd",
    .summary =
        "dA = dY B silu'(A), dB = dY silu(A): the gradients of silu_mul "
        "(A, B, dY, dA, dB: MxN)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "",
    .rank = 2,
    .num_inputs = 3,
    .num_outputs = 2,
    .operand_names = k_swiglu_bwd_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = swiglu_bwd_resolve,
    .operand = swiglu_bwd_operand,
    .flop = swiglu_bwd_flop,
    .bytes = swiglu_bwd_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = swiglu_bwd_prepare,
    .ref_element = swiglu_bwd_element,
    .ref_release = swiglu_bwd_release,
    .tolerance = swiglu_bwd_tolerance,
};
