/* Where the spin's excess over its nominal duration comes from, without
 * libmicrobench: for each duration T of the harness,
 * - bare loop: runs in batches as the library sizes them (>= 200 us a
 *   sample), called through a function pointer and timed with the tick
 *   counter; the median excess per run over T;
 * - exit: how late the spin loop sees its deadline (first reading at or
 *   past it, minus the deadline);
 * - stop read: what one clock_gettime(CLOCK_MONOTONIC) costs right after a
 *   spin of T (the read that stops a sample's timer), bracketed by ticks.
 * Markdown on stdout (docs/results/harness.md, section b).
 *
 *   harness_spin [seconds-per-duration]     (default 0.5)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ticks.h"
#include "work.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double at(double *v, size_t n, double q) {
  qsort(v, n, sizeof *v, cmp);
  return v[(size_t)(q * (double)(n - 1))];
}

int main(int argc, char **argv) {
  const double budget_s = argc > 1 ? atof(argv[1]) : 0.5;
  if (!(budget_s > 0)) {
    fprintf(stderr, "seconds-per-duration: %s; give a positive number\n",
            argv[1]);
    return 2;
  }
  bench_ticks_t t;
  bench_ticks_calibrate(&t, 0.5);
  void (*volatile spin)(uint64_t) = bench_spin_ticks; /* a real call */
  printf(
      "Tick counter %s at %.6f GHz. Excess and costs in ns, medians unless "
      "marked.\n\n| T | batch | samples | bare loop: excess per run | min | "
      "exit: late by | stop read after the spin | its p90 |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      t.source, t.hz / 1e9);
  for (size_t d = 0; d < bench_num_durations; d++) {
    const double T = bench_durations_s[d];
    const uint64_t n = (uint64_t)(T * t.hz + 0.5);
    const unsigned batch = T >= 2e-4 ? 1u : (unsigned)ceil(2e-4 / T);
    size_t samples = (size_t)(budget_s / (batch * T) / 3);
    if (samples < 20) samples = 20;
    double *excess = malloc(samples * sizeof *excess),
           *late = malloc(samples * sizeof *late),
           *stop = malloc(samples * sizeof *stop);
    if (!excess || !late || !stop) {
      fprintf(stderr, "out of memory\n");
      return 1;
    }
    for (size_t s = 0; s < samples; s++) {
      uint64_t a = bench_ticks_now();
      for (unsigned i = 0; i < batch; i++) spin(n);
      uint64_t b = bench_ticks_now();
      excess[s] = ((double)(b - a) / t.hz / batch - T) * 1e9;
      uint64_t end = bench_ticks_now() + n;
      late[s] = (double)(bench_spin_until(end) - end) / t.hz * 1e9;
      struct timespec ts;
      uint64_t c = bench_ticks_now();
      clock_gettime(CLOCK_MONOTONIC, &ts);
      stop[s] = (double)(bench_ticks_now() - c) / t.hz * 1e9;
    }
    const double ex_med = at(excess, samples, 0.5), ex_min = excess[0];
    printf("| %.0f us | %u | %zu | %.1f | %.1f | %.1f | %.0f | %.0f |\n",
           T * 1e6, batch, samples, ex_med, ex_min, at(late, samples, 0.5),
           at(stop, samples, 0.5), at(stop, samples, 0.9));
    free(excess);
    free(late);
    free(stop);
  }
  return 0;
}
