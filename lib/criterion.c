/* Stopping criteria. STDREL follows nvbench's stdrel_criterion, numbers
 * included, so a stop here means what it means there. */
#include "criterion.h"

#include <math.h>
#include <string.h>

void mb__criterion_init(mb__criterion_t *c, mb_criterion_t kind,
                        uint64_t min_samples, uint64_t fixed_samples,
                        double min_time_s, double max_noise) {
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->min_samples = min_samples;
  c->fixed_samples = fixed_samples;
  c->min_time_ns = min_time_s * 1e9;
  c->max_noise = max_noise;
  c->noise = NAN;
}

static void push_noise(mb__criterion_t *c, double noise) {
  c->ring[c->ring_next] = noise;
  c->ring_next = (c->ring_next + 1) % MB__CRIT_NOISE_RING;
  if (c->ring_len < MB__CRIT_NOISE_RING) c->ring_len++;
}

/* Welford keeps the running variance exact enough for times near 1e9 ns,
 * where a sum of squares would cancel catastrophically. */
void mb__criterion_add(mb__criterion_t *c, double value, double measured_ns) {
  c->count++;
  c->measured_ns += measured_ns;
  double delta = value - c->mean;
  c->mean += delta / (double)c->count;
  c->m2 += delta * (value - c->mean);
  if (c->count < MB__CRIT_FIRST_NOISE) return;

  c->noise = sqrt(c->m2 / (double)(c->count - 1)) / c->mean;
  if (isfinite(c->noise))
    push_noise(c, c->noise);
  else
    c->nonfinite++;
}

/* Spread of the recent noise values around the current one, relative to it:
 * small means more samples will not make the estimate any better. */
static int plateaued(const mb__criterion_t *c) {
  if (c->ring_len <= MB__CRIT_PLATEAU_MIN) return 0;
  if (c->count % MB__CRIT_PLATEAU_EVERY != 0) return 0;
  if (!isfinite(c->noise)) return 0;
  double sq = 0.0;
  for (uint32_t i = 0; i < c->ring_len; i++) {
    double d = c->ring[i] - c->noise;
    sq += d * d;
  }
  double spread = sqrt(sq / (double)(c->ring_len - 1));
  return spread / c->noise < MB__CRIT_PLATEAU_REL;
}

static int stdrel_done(const mb__criterion_t *c, const char **reason) {
  if (c->nonfinite >= MB__CRIT_MAX_NONFINITE) {
    *reason = "unstable";
    return 1;
  }
  if (c->count < c->min_samples || !(c->measured_ns >= c->min_time_ns))
    return 0;
  if (c->noise < c->max_noise) {
    *reason = "converged";
    return 1;
  }
  if (plateaued(c)) {
    *reason = "plateau";
    return 1;
  }
  return 0;
}

int mb__criterion_done(const mb__criterion_t *c, const char **reason) {
  const char *unused;
  if (!reason) reason = &unused;
  if (c->kind == MB_CRITERION_FIXED) {
    if (c->count < c->fixed_samples) return 0;
    *reason = "fixed";
    return 1;
  }
  return stdrel_done(c, reason);
}

double mb__criterion_noise(const mb__criterion_t *c) {
  return c->noise;
}

uint64_t mb__criterion_count(const mb__criterion_t *c) {
  return c->count;
}
