/* A tick counter the harness does not use, to build workloads of known
 * duration: the TSC on x86-64 (rdtsc), calibrated against
 * CLOCK_MONOTONIC_RAW; elsewhere CLOCK_MONOTONIC_RAW itself, in ns.
 * libmicrobench's CPU backend times with CLOCK_MONOTONIC, so the truth and
 * the measurement come from different clocks. */
#ifndef BENCH_TICKS_H
#define BENCH_TICKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_ticks {
  double hz;          /* ticks per second */
  double calib_s;     /* how long the calibration ran (CLOCK_MONOTONIC_RAW) */
  const char *source; /* "rdtsc" or "CLOCK_MONOTONIC_RAW" */
} bench_ticks_t;

/* Counts ticks over at least `seconds` of CLOCK_MONOTONIC_RAW. */
void bench_ticks_calibrate(bench_ticks_t *t, double seconds);
uint64_t bench_ticks_now(void);
/* Busy-waits until `ticks` ticks have passed since its first reading. */
void bench_spin_ticks(uint64_t ticks);
/* Busy-waits until the counter reads `end` or later; returns that reading. */
uint64_t bench_spin_until(uint64_t end);
/* CLOCK_MONOTONIC_RAW in seconds. */
double bench_raw_s(void);

#ifdef __cplusplus
}
#endif
#endif
