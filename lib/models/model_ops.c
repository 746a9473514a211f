/* Shared by the composite ops (model_ops.h). */
#include "models/model_ops.h"
#include "ops/recipe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

mb_status_t mb__model_resolve(const mb_op_t *op, mb_op_params_t *p,
                              int training) {
  static const mb_dtype_t hp[] = {MB_DTYPE_BF16, MB_DTYPE_F32, MB_DTYPE_F16};
  if (p->dtype == MB_DTYPE_NONE) p->dtype = MB_DTYPE_BF16;
  mb__default_dtypes(p, MB_DTYPE_BF16);
  mb_status_t st = mb__check_dtype(op, "dtype", p->dtype, hp, 3);
  if (st == MB_OK)
    st = mb__check_dtype(op, "dtype_b", p->dtype_b, &p->dtype, 1);
  if (st == MB_OK)
    st = mb__check_dtype(op, "dtype_out", p->dtype_out, &p->dtype, 1);
  if (st != MB_OK) return st;
  if (p->dtype_acc != MB_DTYPE_F32)
    return mb__fail(MB_ERR_INVALID_ARG, "%s: dtype_acc must be f32, not %s",
                    op->name, mb_dtype_name(p->dtype_acc));
  if (p->recipe >= MB_RECIPE_COUNT)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: recipe %u is out of range (0 .. %d; mbench list "
                    "recipes)",
                    op->name, p->recipe, MB_RECIPE_COUNT - 1);
  if (training && !mb_recipe_trains((mb_recipe_t)p->recipe))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: recipe \"%s\" is weight-only (frozen weights) and "
                    "has no training step; training takes baseline, int8dq, "
                    "float8dq-tensor, float8dq-row, float8-block",
                    op->name, mb_recipe_name((mb_recipe_t)p->recipe));
  /* The accuracy reference of a sparse recipe is the pruned layer, which
   * linear.c builds; the other models' references are dense. */
  if (mb__recipe_row((mb_recipe_t)p->recipe)->sparsity != MB__SPARSE_NONE &&
      op != &mb__op_linear)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: sparsity recipe \"%s\" runs on the linear model "
                    "only (its reference, the pruned layer, is built there)",
                    op->name, mb_recipe_name((mb_recipe_t)p->recipe));
  mb__graph_t *g = malloc(sizeof *g);
  if (!g) return mb__fail(MB_ERR_NO_MEMORY, "%s: out of memory", op->name);
  op->compose(p, g);
  st = g->status;
  free(g);
  return st;
}

static double graph_total(const mb_op_t *op, const mb_op_params_t *p,
                          int baseline, int bytes) {
  mb_op_params_t q = *p;
  if (baseline) q.recipe = MB_RECIPE_BASELINE;
  mb__graph_t *g = malloc(sizeof *g);
  if (!g) return 0.0;
  op->compose(&q, g);
  double v = g->status != MB_OK ? 0.0
             : bytes            ? mb__graph_bytes(g)
                                : mb__graph_flop(g);
  free(g);
  return v;
}

double mb__model_flop(const mb_op_t *op, const mb_op_params_t *p) {
  return graph_total(op, p, 1, 0);
}

double mb__model_bytes(const mb_op_t *op, const mb_op_params_t *p) {
  return graph_total(op, p, 0, 1);
}

void mb__model_fill_weight(int64_t fan_in, mb_fill_t *f) {
  f->kind = MB_FILL_NORMAL;
  f->a = 0.0;
  f->b = 1.0 / sqrt((double)fan_in);
}

void mb__model_fill_norm(int is_bias, mb_fill_t *f) {
  f->kind = MB_FILL_NORMAL;
  f->a = is_bias ? 0.0 : 1.0;
  f->b = 0.1;
}

mb__tolerance_t mb__model_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5, 8.0 * mb_dtype_unit_roundoff(p->dtype)};
}

float *mb__model_load(const void *src, mb_dtype_t dtype, size_t count) {
  float *x = malloc((count ? count : 1) * sizeof *x);
  if (x) mb_convert(x, MB_DTYPE_F32, src, dtype, count, 0);
  return x;
}

float *mb__model_load_t(const void *src, mb_dtype_t dtype, int64_t rows,
                        int64_t cols) {
  float *x = mb__model_load(src, dtype, (size_t)(rows * cols));
  float *t = malloc((size_t)(rows * cols) * sizeof *t);
  if (x && t)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) t[j * rows + i] = x[i * cols + j];
  free(x);
  if (!x) {
    free(t);
    return NULL;
  }
  return t;
}

double mb__model_dot(const float *a, const float *b, int64_t n, double *mag) {
  double acc = 0, m = 0;
  for (int64_t i = 0; i < n; i++) {
    double prod = (double)a[i] * (double)b[i];
    acc += prod;
    m += fabs(prod);
  }
  if (mag) *mag = m;
  return acc;
}

void mb__model_load_at(float *dst, const void *src, mb_dtype_t dt, size_t first,
                       size_t count) {
  const size_t offset = first * mb_dtype_bits(dt) / 8;
  mb_convert(dst, MB_DTYPE_F32, (const char *)src + offset, dt, count, 0);
}

void mb__model_matmul_rows(const double *in, int64_t rows, int64_t kin,
                           const void *w, mb_dtype_t dt, int64_t n, float *wrow,
                           double *out, double *mag) {
  memset(out, 0, (size_t)(rows * n) * sizeof *out);
  if (mag) memset(mag, 0, (size_t)(rows * n) * sizeof *mag);
  for (int64_t c = 0; c < kin; c++) {
    mb__model_load_at(wrow, w, dt, (size_t)(c * n), (size_t)n);
    for (int64_t s = 0; s < rows; s++) {
      const double a = in[s * kin + c];
      double *o = out + s * n;
      for (int64_t j = 0; j < n; j++) o[j] += a * wrow[j];
      if (!mag) continue;
      double *mg = mag + s * n;
      for (int64_t j = 0; j < n; j++) mg[j] += fabs(a * wrow[j]);
    }
  }
}
