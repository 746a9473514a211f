/* Internal: when to stop sampling. A state machine fed one sample at a time;
 * the runner owns timing, timeouts and the wall clock. Only `entropy` uses
 * the heap (its histogram of exact values), so init and add can fail with
 * MB_ERR_NO_MEMORY there; fini frees it. */
#ifndef MB_LIB_CRITERION_H
#define MB_LIB_CRITERION_H

#include <stddef.h>
#include <stdint.h>

#include "microbench/bench.h"

/* nvbench's numbers for stdrel. The noise is stdev/mean over all samples,
 * meaningless below FIRST_NOISE samples. The plateau test looks at the last
 * NOISE_RING noise values, needs more than PLATEAU_MIN of them, runs every
 * PLATEAU_EVERY samples and stops when their spread around the current noise
 * is under PLATEAU_REL of it. MAX_NONFINITE non-finite noise values give up
 * (entropy: non-finite sample values). */
#define MB__CRIT_FIRST_NOISE 5
#define MB__CRIT_NOISE_RING 512
#define MB__CRIT_PLATEAU_MIN 64
#define MB__CRIT_PLATEAU_EVERY 16
#define MB__CRIT_PLATEAU_REL 0.05
#define MB__CRIT_MAX_NONFINITE 64

/* nvbench's numbers for entropy (nvbench/detail/entropy_criterion.cxx): the
 * entropy after each sample goes into a window of the last ENTROPY_WINDOW
 * values; stop when the line fitted through them rises at most
 * ENTROPY_MAX_ANGLE degrees per sample and explains at least ENTROPY_MIN_R2
 * of their variance. */
#define MB__CRIT_ENTROPY_WINDOW 299
#define MB__CRIT_ENTROPY_MAX_ANGLE 0.048
#define MB__CRIT_ENTROPY_MIN_R2 0.36

/* One distinct sample value and how often it was seen; count 0: empty slot. */
typedef struct mb__crit_bin {
  double value;
  uint64_t count;
} mb__crit_bin_t;

typedef struct mb__criterion {
  mb_criterion_t kind;
  uint64_t min_samples;
  uint64_t fixed_samples;
  double min_time_ns;
  double max_noise;

  uint64_t count;
  double mean, m2; /* Welford over every sample */
  double measured_ns;
  double noise; /* latest stdev/mean; NAN before MB__CRIT_FIRST_NOISE */
  uint64_t nonfinite;
  /* Finite noise values only; the oldest is overwritten. */
  double ring[MB__CRIT_NOISE_RING];
  uint32_t ring_next;
  uint32_t ring_len;

  /* entropy: open-addressing hash of exact values (power-of-two capacity,
   * at most half full), the finite samples in it, sum of c*log2(c) over its
   * counts, and the entropy after each of the last WINDOW finite samples. */
  mb__crit_bin_t *bins;
  size_t bins_cap;
  size_t bins_used;
  uint64_t hist_total;
  double sum_clogc;
  uint64_t nonfinite_values;
  double entropy_ring[MB__CRIT_ENTROPY_WINDOW];
  uint32_t entropy_next;
  uint32_t entropy_len;
} mb__criterion_t;

/* MB_ERR_INVALID_ARG for an unknown kind, MB_ERR_NO_MEMORY. Call fini after
 * either outcome. */
mb_status_t mb__criterion_init(mb__criterion_t *c, mb_criterion_t kind,
                               uint64_t min_samples, uint64_t fixed_samples,
                               double min_time_s, double max_noise);
/* Frees the histogram; safe after a failed init and twice. */
void mb__criterion_fini(mb__criterion_t *c);
/* value: the sample's time per run (ns); measured_ns: time inside the timer
 * for this sample (counts toward min_time). MB_ERR_NO_MEMORY (entropy's
 * histogram could not grow) leaves the state as it was. */
mb_status_t mb__criterion_add(mb__criterion_t *c, double value,
                              double measured_ns);
/* 1 when finished; *reason (static, may be NULL) is "converged", "plateau",
 * "fixed", "entropy" or "unstable". Depends only on the state, so asking
 * twice is harmless. */
int mb__criterion_done(const mb__criterion_t *c, const char **reason);
/* Current relative stdev over all samples; NAN before 5 samples. */
double mb__criterion_noise(const mb__criterion_t *c);
uint64_t mb__criterion_count(const mb__criterion_t *c);

/* entropy only, for tests and diagnostics: the Shannon entropy (bits) of the
 * exact-value histogram of the finite samples so far (0 with none), and the
 * least-squares line through the entropy window, oldest value at x = 0, as
 * its angle in degrees and its R^2. The fit returns 0 below two values. */
double mb__criterion_entropy(const mb__criterion_t *c);
int mb__criterion_entropy_fit(const mb__criterion_t *c, double *slope_deg,
                              double *r2);

#endif
