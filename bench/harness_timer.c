/* What the harness knows about its timer, beside what the raw clock says:
 * each device's mb_device_calibration (timer resolution and per-sample
 * overhead, the cache-flush check), then clock_getres and back-to-back
 * clock_gettime deltas measured directly, for comparison. Markdown on
 * stdout, for docs/results/harness.md.
 *
 *   harness_timer [pairs]      (default 1000000 back-to-back pairs)
 */
#include <microbench.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ticks.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void print_calibration(mb_device_t *dev) {
  mb_device_info_t di = MB_DEVICE_INFO_INIT;
  mb_calibration_t c = MB_CALIBRATION_INIT;
  if (mb_device_info(dev, &di) != MB_OK ||
      mb_device_calibration(dev, &c) != MB_OK) {
    fprintf(stderr, "calibration: %s\n", mb_error_last());
    exit(1);
  }
  printf(
      "| %s:%u %s | %.1f ns | %.1f ns | %u | %s | %.0f ns | %.0f ns | %.2f | "
      "%s | %s |\n",
      di.backend, di.index, di.name, c.timer_resolution_ns, c.timer_overhead_ns,
      c.timer_readings, c.flush_checked ? "yes" : "no", c.flush_hot_ns,
      c.flush_cold_ns, c.flush_ratio, c.flush_pass ? "pass" : "FAIL",
      c.flush_note);
}

/* `n` deltas between two back-to-back readings of `clock`, sorted. */
static double *deltas(clockid_t clock, size_t n) {
  double *d = malloc(n * sizeof *d);
  if (!d) return NULL;
  for (size_t i = 0; i < n; i++) {
    struct timespec a, b;
    clock_gettime(clock, &a);
    clock_gettime(clock, &b);
    d[i] =
        1e9 * (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec);
  }
  qsort(d, n, sizeof *d, cmp);
  return d;
}

static double at(const double *sorted, size_t n, double q) {
  return sorted[(size_t)(q * (double)(n - 1))];
}

/* The smallest nonzero step between distinct readings: the resolution the
 * deltas show (as lib/measure/timer.c judges it). */
static double step(const double *sorted, size_t n) {
  double s = 1e300;
  for (size_t i = 0; i < n; i++) {
    if (sorted[i] > 0 && sorted[i] < s) s = sorted[i];
    if (i && sorted[i] > sorted[i - 1] && sorted[i] - sorted[i - 1] < s)
      s = sorted[i] - sorted[i - 1];
  }
  return s;
}

/* The three most frequent values of a sorted array, "v (share %)", into
 * `out`: a clock derived from a coarser counter shows its step here even
 * when the ns conversion makes neighbouring values 1 ns apart. */
static void modes(const double *sorted, size_t n, char *out, size_t size) {
  double val[3] = {0, 0, 0};
  size_t cnt[3] = {0, 0, 0};
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i; j < n && sorted[j] == sorted[i]; j++) {
    }
    size_t c = j - i;
    for (int k = 0; k < 3; k++)
      if (c > cnt[k]) {
        for (int m = 2; m > k; m--) cnt[m] = cnt[m - 1], val[m] = val[m - 1];
        cnt[k] = c, val[k] = sorted[i];
        break;
      }
  }
  int len = 0;
  for (int k = 0; k < 3 && cnt[k]; k++)
    len += snprintf(out + len, size - (size_t)len, "%s%.0f (%.1f %%)",
                    k ? ", " : "", val[k], 100.0 * (double)cnt[k] / (double)n);
}

static void print_clock(const char *name, clockid_t clock, size_t n) {
  struct timespec res;
  clock_getres(clock, &res);
  double *d = deltas(clock, n);
  if (!d) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  size_t zeros = 0;
  while (zeros < n && d[zeros] == 0) zeros++;
  char top[160];
  modes(d, n, top, sizeof top);
  printf(
      "| %s | %ld ns | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f ns | %.2f %% | "
      "%s |\n",
      name, res.tv_nsec + 1000000000L * res.tv_sec, d[0], at(d, n, 0.5),
      at(d, n, 0.9), at(d, n, 0.99), d[n - 1], step(d, n),
      100.0 * (double)zeros / (double)n, top);
  free(d);
}

/* What takes the CPU away from the timed thread: a loop reads the tick
 * counter for `seconds` and sorts every gap of 100 ns or more between two
 * reads by length. A gap is time the thread did not run (an interrupt, the
 * hypervisor, another task); a median of many samples skips the long ones,
 * a mean (Google Benchmark's) includes them all. */
static void print_gaps(const bench_ticks_t *t, double seconds) {
  static const double k_edges_ns[] = {100, 300, 1e3, 3e3, 1e4, 3e4, 1e5, 1e6};
  enum { N = sizeof k_edges_ns / sizeof k_edges_ns[0] };
  unsigned long count[N] = {0};
  double total_ns[N] = {0};
  const uint64_t start = bench_ticks_now();
  const uint64_t end = start + (uint64_t)(seconds * t->hz);
  uint64_t prev = start, now;
  while ((now = bench_ticks_now()) < end) {
    double g = (double)(now - prev) / t->hz * 1e9;
    prev = now;
    int k = N - 1;
    while (k >= 0 && g < k_edges_ns[k]) k--;
    if (k >= 0) count[k]++, total_ns[k] += g;
  }
  printf(
      "\nGaps in a %.1f s loop reading the tick counter on this thread:\n\n"
      "| gap length | count | per second | time lost | share of the loop "
      "|\n|---|---:|---:|---:|---:|\n",
      seconds);
  double lost = 0;
  for (int k = 0; k < N; k++) {
    lost += total_ns[k];
    char range[48];
    if (k + 1 < N)
      snprintf(range, sizeof range, "%.0f – %.0f ns", k_edges_ns[k],
               k_edges_ns[k + 1]);
    else
      snprintf(range, sizeof range, ">= %.0f ns", k_edges_ns[k]);
    printf("| %s | %lu | %.0f | %.1f us | %.3f %% |\n", range, count[k],
           (double)count[k] / seconds, total_ns[k] / 1e3,
           100.0 * total_ns[k] / (seconds * 1e9));
  }
  printf("| all | | | %.1f us | %.3f %% |\n", lost / 1e3,
         100.0 * lost / (seconds * 1e9));
}

int main(int argc, char **argv) {
  size_t pairs = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000u;
  if (pairs < 2) {
    fprintf(stderr, "pairs: %zu; give at least 2\n", pairs);
    return 2;
  }
  mb_context_t *ctx;
  if (mb_context_create(&ctx, NULL) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  printf("libmicrobench %s (commit %s)\n\n", mb_version(), mb_git_commit());
  printf(
      "| device | timer resolution | timer overhead (median empty sample) | "
      "readings | flush checked | flush hot median | flush cold median | "
      "cold/hot | flush | note |\n|---|---:|---:|---:|---|---:|---:|---:|---|"
      "---|\n");
  for (size_t i = 0; i < mb_device_count(ctx); i++)
    print_calibration(mb_device_at(ctx, i));

  printf(
      "\nBack-to-back clock_gettime pairs (%zu each), delta in ns:\n\n"
      "| clock | clock_getres | min | median | p90 | p99 | max | smallest step "
      "| zero deltas | most frequent |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
      pairs);
  print_clock("CLOCK_MONOTONIC (the CPU backend's timer)", CLOCK_MONOTONIC,
              pairs);
  print_clock("CLOCK_MONOTONIC_RAW", CLOCK_MONOTONIC_RAW, pairs);

  bench_ticks_t t;
  bench_ticks_calibrate(&t, 0.2);
  double *inc = malloc(pairs * sizeof *inc);
  if (!inc) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  /* Increments seen by a loop that reads the counter as fast as it can:
   * the counter's own step. */
  uint64_t prev = bench_ticks_now();
  for (size_t i = 0; i < pairs; i++) {
    uint64_t now = bench_ticks_now();
    inc[i] = (double)(now - prev);
    prev = now;
  }
  qsort(inc, pairs, sizeof *inc, cmp);
  char top[160];
  modes(inc, pairs, top, sizeof top);
  printf(
      "\nTick counter (%s): %.6f GHz against CLOCK_MONOTONIC_RAW over %.3f "
      "s. Increments between back-to-back reads, in ticks: median %.0f "
      "(%.2f ns), most frequent %s.\n",
      t.source, t.hz / 1e9, t.calib_s, at(inc, pairs, 0.5),
      at(inc, pairs, 0.5) / t.hz * 1e9, top);
  free(inc);
  print_gaps(&t, 2.0);
  mb_context_destroy(ctx);
  return 0;
}
