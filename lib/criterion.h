/* Internal: when to stop sampling. A pure state machine fed one sample at a
 * time; the runner owns timing, timeouts and the wall clock. No heap, so a
 * criterion lives on the runner's stack and cannot fail. */
#ifndef MB_LIB_CRITERION_H
#define MB_LIB_CRITERION_H

#include <stdint.h>

#include "microbench/bench.h"

/* nvbench's numbers for stdrel. The noise is stdev/mean over all samples,
 * meaningless below FIRST_NOISE samples. The plateau test looks at the last
 * NOISE_RING noise values, needs more than PLATEAU_MIN of them, runs every
 * PLATEAU_EVERY samples and stops when their spread around the current noise
 * is under PLATEAU_REL of it. MAX_NONFINITE non-finite noise values give up. */
#define MB__CRIT_FIRST_NOISE 5
#define MB__CRIT_NOISE_RING 512
#define MB__CRIT_PLATEAU_MIN 64
#define MB__CRIT_PLATEAU_EVERY 16
#define MB__CRIT_PLATEAU_REL 0.05
#define MB__CRIT_MAX_NONFINITE 64

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
} mb__criterion_t;

void mb__criterion_init(mb__criterion_t *c, mb_criterion_t kind,
                        uint64_t min_samples, uint64_t fixed_samples,
                        double min_time_s, double max_noise);
/* value: the sample's time per run (ns); measured_ns: time inside the timer
 * for this sample (counts toward min_time). */
void mb__criterion_add(mb__criterion_t *c, double value, double measured_ns);
/* 1 when finished; *reason (static, may be NULL) is "converged", "plateau",
 * "fixed" or "unstable". Depends only on the state, so asking twice is
 * harmless. */
int mb__criterion_done(const mb__criterion_t *c, const char **reason);
/* Current relative stdev over all samples; NAN before 5 samples. */
double mb__criterion_noise(const mb__criterion_t *c);
uint64_t mb__criterion_count(const mb__criterion_t *c);

#endif
