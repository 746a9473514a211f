/* gemm: D[M,N] = alpha * A[M,K] . B[K,N] + beta * D, row-major.
 * FLOP = 2MNK (OPS.md); bytes = |A| + |B| + |D| (+ |D| again when beta != 0,
 * since D is then read as well as written). */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "op_internal.h"

enum { GEMM_M, GEMM_K, GEMM_N };

static const mb_dtype_t k_in_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16,
                                         MB_DTYPE_F16};
static const mb_dtype_t k_out_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16,
                                          MB_DTYPE_F16};
static const mb_dtype_t k_acc_dtypes[] = {MB_DTYPE_F32};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static mb_status_t gemm_resolve(mb_op_params_t *p) {
  if (p->dtype == MB_DTYPE_NONE) p->dtype = MB_DTYPE_F32;
  if (p->dtype_b == MB_DTYPE_NONE) p->dtype_b = p->dtype;
  if (p->dtype_out == MB_DTYPE_NONE) p->dtype_out = p->dtype;
  if (p->dtype_acc == MB_DTYPE_NONE) p->dtype_acc = MB_DTYPE_F32;
  mb_status_t st;
  if ((st = mb__check_dtype(&mb__op_gemm, "dtype", p->dtype, k_in_dtypes,
                            COUNT(k_in_dtypes))) != MB_OK ||
      (st = mb__check_dtype(&mb__op_gemm, "dtype_b", p->dtype_b, &p->dtype,
                            1)) != MB_OK ||
      (st = mb__check_dtype(&mb__op_gemm, "dtype_out", p->dtype_out,
                            k_out_dtypes, COUNT(k_out_dtypes))) != MB_OK ||
      (st = mb__check_dtype(&mb__op_gemm, "dtype_acc", p->dtype_acc,
                            k_acc_dtypes, COUNT(k_acc_dtypes))) != MB_OK)
    return st;
  if (!isfinite(p->alpha) || !isfinite(p->beta))
    return mb__fail(MB_ERR_INVALID_ARG, "gemm: alpha and beta must be finite");
  return MB_OK;
}

static void gemm_operand(const mb_op_params_t *p, uint32_t role,
                         mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  static const struct {
    int rows, cols;
  } k_dims[] = {{GEMM_M, GEMM_K}, {GEMM_K, GEMM_N}, {GEMM_M, GEMM_N}};
  const mb_dtype_t dtypes[] = {p->dtype, p->dtype_b, p->dtype_out};
  *dtype = dtypes[role];
  *ndim = 2;
  shape[0] = p->shape[k_dims[role].rows];
  shape[1] = p->shape[k_dims[role].cols];
}

static double gemm_flop(const mb_op_params_t *p) {
  return 2.0 * (double)p->shape[GEMM_M] * (double)p->shape[GEMM_N] *
         (double)p->shape[GEMM_K];
}

static int gemm_reads_output(const mb_op_params_t *p) {
  return p->beta != 0;
}

static double gemm_bytes(const mb_op_params_t *p) {
  double m = (double)p->shape[GEMM_M], k = (double)p->shape[GEMM_K],
         n = (double)p->shape[GEMM_N];
  double d = (double)mb_dtype_bytes(p->dtype_out, (size_t)(m * n));
  return (double)mb_dtype_bytes(p->dtype, (size_t)(m * k)) +
         (double)mb_dtype_bytes(p->dtype_b, (size_t)(k * n)) + d +
         (gemm_reads_output(p) ? d : 0.0);
}

static double gemm_ref_cost(const mb_op_params_t *p) {
  return (double)p->shape[GEMM_K];
}

/* A as f32 rows and B transposed to f32 rows, so each reference element is
 * one contiguous dot product; every input dtype is exact in f32. */
typedef struct gemm_ref {
  size_t m, k, n;
  double alpha, beta;
  float *a, *bt;
  double *d0; /* initial D when beta != 0 */
} gemm_ref_t;

static void gemm_ref_release(void *state) {
  gemm_ref_t *r = state;
  if (!r) return;
  free(r->a);
  free(r->bt);
  free(r->d0);
  free(r);
}

static mb_status_t gemm_ref_prepare(const mb_op_params_t *p,
                                    const void *const *host, void **state) {
  gemm_ref_t *r = calloc(1, sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "gemm reference: out of memory");
  r->m = (size_t)p->shape[GEMM_M];
  r->k = (size_t)p->shape[GEMM_K];
  r->n = (size_t)p->shape[GEMM_N];
  r->alpha = p->alpha;
  r->beta = p->beta;
  float *b = malloc(r->k * r->n * sizeof *b);
  r->a = malloc(r->m * r->k * sizeof *r->a);
  r->bt = malloc(r->k * r->n * sizeof *r->bt);
  if (p->beta != 0) r->d0 = malloc(r->m * r->n * sizeof *r->d0);
  if (!b || !r->a || !r->bt || (p->beta != 0 && !r->d0)) {
    free(b);
    gemm_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY,
                    "gemm reference: out of memory for %lldx%lldx%lld",
                    (long long)p->shape[GEMM_M], (long long)p->shape[GEMM_K],
                    (long long)p->shape[GEMM_N]);
  }
  mb_convert(r->a, MB_DTYPE_F32, host[0], p->dtype, r->m * r->k, 0);
  mb_convert(b, MB_DTYPE_F32, host[1], p->dtype_b, r->k * r->n, 0);
  /* Transpose in 64x64 tiles to stay in cache. */
  for (size_t k0 = 0; k0 < r->k; k0 += 64)
    for (size_t j0 = 0; j0 < r->n; j0 += 64)
      for (size_t kk = k0; kk < k0 + 64 && kk < r->k; kk++)
        for (size_t j = j0; j < j0 + 64 && j < r->n; j++)
          r->bt[j * r->k + kk] = b[kk * r->n + j];
  free(b);
  if (r->d0)
    for (size_t i = 0; i < r->m * r->n; i++)
      r->d0[i] = mb__load(host[2], p->dtype_out, i);
  *state = r;
  return MB_OK;
}

static void gemm_ref_element(const void *state, size_t idx, double *value,
                             double *scale) {
  const gemm_ref_t *r = state;
  const float *a = r->a + (idx / r->n) * r->k;
  const float *b = r->bt + (idx % r->n) * r->k;
  double acc = 0, mag = 0;
  for (size_t k = 0; k < r->k; k++) {
    double prod = (double)a[k] * (double)b[k];
    acc += prod;
    mag += fabs(prod);
  }
  *value = r->alpha * acc;
  *scale = fabs(r->alpha) * mag;
  if (r->d0) {
    *value += r->beta * r->d0[idx];
    *scale += fabs(r->beta * r->d0[idx]);
  }
}

/* Rounding the output costs u_out (twice, for headroom); accumulating K
 * products in the accumulator type costs about sqrt(K) * u_acc relative to
 * sum |a b| for a blocked or pairwise sum (the worst case, K * u_acc, is
 * never approached by a correct kernel, while any dropped or wrong term costs
 * ~1/K, far more for the shapes we check). */
static double gemm_tolerance(const mb_op_params_t *p) {
  double k = (double)p->shape[GEMM_K];
  return 2.0 * mb_dtype_unit_roundoff(p->dtype_out) +
         2.0 * sqrt(k) * mb_dtype_unit_roundoff(p->dtype_acc);
}

static const char *const k_gemm_aliases[] = {"matmul", NULL};

const mb_op_t mb__op_gemm = {
    .name = "gemm",
    .summary = "D = alpha * A.B + beta * D (A: MxK, B: KxN, row-major)",
    .shape_syntax = "MxKxN",
    .aliases = k_gemm_aliases,
    .rank = 3,
    .num_inputs = 2,
    .num_outputs = 1,
    .resolve = gemm_resolve,
    .operand = gemm_operand,
    .flop = gemm_flop,
    .bytes = gemm_bytes,
    .reads_output = gemm_reads_output,
    .ref_cost = gemm_ref_cost,
    .ref_prepare = gemm_ref_prepare,
    .ref_element = gemm_ref_element,
    .ref_release = gemm_ref_release,
    .tolerance = gemm_tolerance,
};
