/* Descriptive statistics. Quantiles follow numpy's default so numbers can be
 * checked against a one-line Python session. */
#include "measure/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* NaN sorts last so qsort sees a total order even on poisoned samples. */
static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  if (isnan(a)) return isnan(b) ? 0 : 1;
  if (isnan(b)) return -1;
  return (a > b) - (a < b);
}

/* numpy's _lerp: interpolating from the nearer end keeps the result monotone
 * in t and exact at both ends. */
static double lerp(double a, double b, double t) {
  if (a == b) return a; /* also keeps inf from turning into NaN */
  return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

double mb__quantile_sorted(const double *sorted, size_t n, double q) {
  if (n == 0 || isnan(q)) return NAN;
  if (q <= 0.0) return sorted[0];
  if (q >= 1.0) return sorted[n - 1];
  double h = (double)(n - 1) * q;
  double lo = floor(h);
  size_t i = (size_t)lo;
  if (i + 1 >= n) return sorted[n - 1];
  return lerp(sorted[i], sorted[i + 1], h - lo);
}

/* Corrected two-pass algorithm (Chan, Golub & LeVeque): the second pass
 * removes the rounding error of the first mean, and deviations are taken
 * from the mean rather than squared raw values, so 1e9 + small noise keeps
 * its variance. */
static void mean_stdev(const double *x, size_t n, double *mean, double *stdev) {
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) sum += x[i];
  double m = sum / (double)n;
  double dsum = 0.0, dsq = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = x[i] - m;
    dsum += d;
    dsq += d * d;
  }
  *mean = m + dsum / (double)n;
  if (n < 2) {
    *stdev = 0.0;
    return;
  }
  double var = (dsq - dsum * dsum / (double)n) / (double)(n - 1);
  *stdev = var > 0.0 ? sqrt(var) : 0.0;
}

static void clear_fields(mb_stats_t *out) {
  out->count = 0;
  out->min = out->max = out->mean = out->median = 0.0;
  out->stdev = out->rel_stdev = 0.0;
  out->p10 = out->p25 = out->p75 = out->p90 = out->p99 = out->iqr = 0.0;
}

static void fill_quantiles(const double *s, size_t n, mb_stats_t *out) {
  out->min = s[0];
  out->max = s[n - 1];
  out->median = mb__quantile_sorted(s, n, 0.50);
  out->p10 = mb__quantile_sorted(s, n, 0.10);
  out->p25 = mb__quantile_sorted(s, n, 0.25);
  out->p75 = mb__quantile_sorted(s, n, 0.75);
  out->p90 = mb__quantile_sorted(s, n, 0.90);
  out->p99 = mb__quantile_sorted(s, n, 0.99);
  out->iqr = out->p75 - out->p25;
}

static mb_status_t sorted_copy(const double *samples, size_t n, double **out) {
  if (n > SIZE_MAX / sizeof(double))
    return mb__fail(MB_ERR_NO_MEMORY, "stats: %zu samples do not fit", n);
  double *s = malloc(n * sizeof *s);
  if (!s)
    return mb__fail(MB_ERR_NO_MEMORY, "stats: no memory to sort %zu samples",
                    n);
  memcpy(s, samples, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_double);
  *out = s;
  return MB_OK;
}

mb_status_t mb__stats_compute(const double *samples, size_t n,
                              mb_stats_t *out) {
  clear_fields(out);
  if (n == 0) return MB_OK;
  double *s = NULL;
  mb_status_t st = sorted_copy(samples, n, &s);
  if (st != MB_OK) return st;
  out->count = (uint64_t)n;
  fill_quantiles(s, n, out);
  mean_stdev(s, n, &out->mean, &out->stdev);
  /* Times are positive; a zero mean means every sample was 0 (stdev 0 too),
   * and 0 reports that better than NaN, which JSON cannot carry. */
  out->rel_stdev = out->mean != 0.0 ? out->stdev / out->mean : 0.0;
  free(s);
  return MB_OK;
}

mb_status_t mb__median_ci(const double *samples, size_t n, double *lo,
                          double *hi) {
  *lo = *hi = NAN;
  if (n == 0) return MB_OK;
  double *s = NULL;
  mb_status_t st = sorted_copy(samples, n, &s);
  if (st != MB_OK) return st;
  /* 1-based ranks floor((n - z sqrt(n)) / 2) and ceil(1 + (n + z sqrt(n))
   * / 2): the number of samples below the median is binomial(n, 1/2). */
  const double z = 1.959964, half = z * sqrt((double)n) / 2.0;
  double j = floor(n / 2.0 - half), k = ceil(1.0 + n / 2.0 + half);
  if (j < 1) j = 1;
  if (k > (double)n) k = (double)n;
  *lo = s[(size_t)j - 1];
  *hi = s[(size_t)k - 1];
  free(s);
  return MB_OK;
}
