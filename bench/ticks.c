/* The TSC (constant and non-stop on every x86-64 CPU this harness targets;
 * lscpu's constant_tsc/nonstop_tsc say so) or, elsewhere, the raw monotonic
 * clock. */
#include "ticks.h"

#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#endif

double bench_raw_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

uint64_t bench_ticks_now(void) {
#ifdef BENCH_HAVE_TSC
  return __rdtsc();
#else
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

uint64_t bench_spin_until(uint64_t end) {
  uint64_t now;
  while ((now = bench_ticks_now()) < end) {
  }
  return now;
}

void bench_spin_ticks(uint64_t ticks) {
  bench_spin_until(bench_ticks_now() + ticks);
}

/* Ticks between two raw-clock readings `seconds` apart. Each end reads the
 * raw clock on both sides of the tick counter and keeps the midpoint, so a
 * preemption between the two readings shows as a wide bracket; the
 * narrowest of a few brackets wins. */
static void bracket(double *raw_s, uint64_t *ticks) {
  double best = 1e9;
  *raw_s = 0;
  *ticks = 0;
  for (int i = 0; i < 16; i++) {
    double a = bench_raw_s();
    uint64_t t = bench_ticks_now();
    double b = bench_raw_s();
    if (b - a < best) best = b - a, *raw_s = 0.5 * (a + b), *ticks = t;
  }
}

void bench_ticks_calibrate(bench_ticks_t *t, double seconds) {
#ifdef BENCH_HAVE_TSC
  t->source = "rdtsc";
#else
  t->source = "CLOCK_MONOTONIC_RAW";
#endif
  double s0, s1;
  uint64_t k0, k1;
  bracket(&s0, &k0);
  do bracket(&s1, &k1);
  while (s1 - s0 < seconds);
  t->hz = (double)(k1 - k0) / (s1 - s0);
  t->calib_s = s1 - s0;
}
