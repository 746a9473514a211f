/* Internal: descriptive statistics over a run's samples. */
#ifndef MB_LIB_STATS_H
#define MB_LIB_STATS_H

#include <stddef.h>

#include "microbench/bench.h"

/* Fills count, min, max, mean, median, stdev (sample, n-1; 0 when n < 2),
 * rel_stdev (stdev/mean; 0 when mean is 0), p10, p25, p75, p90, p99 and iqr
 * (p75 - p25). Leaves struct_size, batch, measured_ns, wall_s, warmup_runs
 * and stop_reason alone: the runner owns those. Sorts a private copy, so the
 * caller's samples keep the order they were taken in. n == 0 zeroes the
 * fields and succeeds. MB_ERR_NO_MEMORY when the copy cannot be made. */
mb_status_t mb__stats_compute(const double *samples, size_t n, mb_stats_t *out);

/* A 95 % confidence interval of the median, distribution-free: the order
 * statistics whose ranks bracket the median with probability 0.95 under
 * the binomial(n, 1/2) count of samples below it (normal approximation;
 * below 6 samples the interval is [min, max], which covers less). NAN for
 * n == 0. Sorts a private copy. */
mb_status_t mb__median_ci(const double *samples, size_t n, double *lo,
                          double *hi);

/* q in [0, 1] over ascending data, linear between the closest ranks
 * (numpy's default, Hyndman-Fan type 7): h = (n - 1) q. NAN when n == 0. */
double mb__quantile_sorted(const double *sorted, size_t n, double q);

#endif
