/* Stopping criteria, after NVIDIA/nvbench so a stop here means what it
 * means there:
 *  - stdrel: nvbench/detail/stdrel_criterion.cxx (max-noise, the plateau of
 *    the noise over its last 512 values checked every 16 samples past 64).
 *  - entropy: nvbench/detail/entropy_criterion.{cuh,cxx} with
 *    statistics.cuh: the Shannon entropy (bits) of the histogram of exact
 *    sample values after every sample, a ring of the last 299 of them, a
 *    least-squares line through it checked on even sample counts only, done
 *    when slope2deg(slope) <= 0.048 ("max-angle") and R^2 >= 0.36
 *    ("min-r2"). The entropy is updated in O(1) per sample from
 *    sum(c*log2 c), as nvbench's later update_entropy_sum does.
 *  - min_samples gates every adaptive criterion, as nvbench's
 *    measure_cold::is_finished does around any criterion. */
#include "measure/criterion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define LN2 0.69314718055994530942
#define PI 3.14159265358979323846

/* ---- names ----------------------------------------------------------------
 */

/* Indexed by mb_criterion_t. */
static const char *const k_criterion_names[] = {"stdrel", "fixed", "entropy"};
#define NUM_KINDS (sizeof k_criterion_names / sizeof k_criterion_names[0])

const char *mb_criterion_name(mb_criterion_t c) {
  return (unsigned)c < NUM_KINDS ? k_criterion_names[c] : "?";
}

mb_status_t mb_criterion_from_name(const char *name, mb_criterion_t *out) {
  for (unsigned i = 0; i < NUM_KINDS; i++)
    if (name && !strcmp(name, k_criterion_names[i])) {
      *out = (mb_criterion_t)i;
      return MB_OK;
    }
  return mb__fail(MB_ERR_INVALID_ARG,
                  "criterion \"%s\"; valid: stdrel, fixed, entropy",
                  name ? name : "(null)");
}

/* ---- exact-value histogram (entropy) --------------------------------------
 */

/* nvbench keeps a sorted vector; inserting a new value there moves half of
 * it, which is quadratic when (as with a CPU's ns clock) nearly every value
 * is new. A hash of the value's bits is O(1) and counts the same thing. */
#define BINS_INITIAL 1024 /* power of two; nvbench reserves 2 x 299 */

static uint64_t value_key(double v) {
  uint64_t bits;
  if (v == 0.0) v = 0.0; /* -0.0 == 0.0, as nvbench's comparison has it */
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

static size_t bin_slot(uint64_t key, size_t mask) {
  key ^= key >> 33; /* murmur3's finaliser: nearby doubles spread out */
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ull;
  key ^= key >> 33;
  return (size_t)key & mask;
}

/* The bin holding `v`, or the empty slot where it belongs. */
static mb__crit_bin_t *bin_find(mb__crit_bin_t *bins, size_t cap, double v) {
  uint64_t key = value_key(v);
  size_t mask = cap - 1;
  for (size_t i = bin_slot(key, mask);; i = (i + 1) & mask)
    if (bins[i].count == 0 || value_key(bins[i].value) == key) return &bins[i];
}

static mb_status_t bins_alloc(mb__crit_bin_t **out, size_t cap) {
  *out = calloc(cap, sizeof **out);
  if (!*out)
    return mb__fail(MB_ERR_NO_MEMORY,
                    "entropy criterion: %zu histogram bins (%zu bytes)", cap,
                    cap * sizeof **out);
  return MB_OK;
}

/* Room for one more distinct value, keeping the table at most half full. */
static mb_status_t bins_reserve(mb__criterion_t *c) {
  if ((c->bins_used + 1) * 2 <= c->bins_cap) return MB_OK;
  if (c->bins_cap > SIZE_MAX / 2 / sizeof(mb__crit_bin_t))
    return mb__fail(MB_ERR_NO_MEMORY, "entropy criterion: %zu distinct values",
                    c->bins_used);
  size_t cap = c->bins_cap * 2;
  mb__crit_bin_t *bins;
  mb_status_t st = bins_alloc(&bins, cap);
  if (st != MB_OK) return st;
  for (size_t i = 0; i < c->bins_cap; i++)
    if (c->bins[i].count) *bin_find(bins, cap, c->bins[i].value) = c->bins[i];
  free(c->bins);
  c->bins = bins;
  c->bins_cap = cap;
  return MB_OK;
}

/* (n+1)·log2(n+1) - n·log2(n), written so it does not cancel for large n. */
static double clogc_step(uint64_t n) {
  if (n == 0) return 0.0;
  double d = (double)n;
  return log2(d + 1.0) + d * log1p(1.0 / d) / LN2;
}

/* H = -sum p·log2 p with p = c/N is log2 N - (sum c·log2 c)/N, so one new
 * sample changes one term: O(1) instead of nvbench's pass over every bin. */
static double entropy_now(const mb__criterion_t *c) {
  if (c->bins_used <= 1) return 0.0; /* exactly, not a rounding residue */
  double n = (double)c->hist_total;
  double h = log2(n) - c->sum_clogc / n;
  return h > 0.0 ? h : 0.0;
}

static mb_status_t entropy_add(mb__criterion_t *c, double value) {
  if (!isfinite(value)) { /* no bin for NaN; counted toward giving up */
    c->nonfinite_values++;
    return MB_OK;
  }
  mb_status_t st = bins_reserve(c);
  if (st != MB_OK) return st;
  mb__crit_bin_t *b = bin_find(c->bins, c->bins_cap, value);
  if (b->count == 0) {
    b->value = value;
    c->bins_used++;
  }
  c->sum_clogc += clogc_step(b->count);
  b->count++;
  c->hist_total++;
  c->entropy_ring[c->entropy_next] = entropy_now(c);
  c->entropy_next = (c->entropy_next + 1) % MB__CRIT_ENTROPY_WINDOW;
  if (c->entropy_len < MB__CRIT_ENTROPY_WINDOW) c->entropy_len++;
  return MB_OK;
}

double mb__criterion_entropy(const mb__criterion_t *c) {
  return c->kind == MB_CRITERION_ENTROPY ? entropy_now(c) : NAN;
}

/* Least squares through the window in time order, as nvbench's
 * statistics::compute_linear_regression and compute_r2 do it (two passes,
 * x = 0 .. n-1, R^2 = 1 for a flat window). One deliberate difference:
 * nvbench fits its ring_buffer in storage order, so once the ring has
 * wrapped the newest values sit at x = 0 and a still-rising entropy looks
 * partly like a fall (a stream of only new values stops at 1218 samples
 * there, 1874 here). "The last 299 values" in time order is the fit it
 * means, and the one done here. */
int mb__criterion_entropy_fit(const mb__criterion_t *c, double *slope_deg,
                              double *r2) {
  uint32_t n = c->entropy_len;
  if (n < 2) return 0;
  uint32_t first = n < MB__CRIT_ENTROPY_WINDOW ? 0 : c->entropy_next;
#define Y(i) c->entropy_ring[(first + (i)) % MB__CRIT_ENTROPY_WINDOW]
  double mean_y = 0.0;
  for (uint32_t i = 0; i < n; i++) mean_y += Y(i);
  mean_y /= n;
  double mean_x = (n - 1) / 2.0, num = 0.0, den = 0.0;
  for (uint32_t i = 0; i < n; i++) {
    double dx = i - mean_x;
    num += dx * (Y(i) - mean_y);
    den += dx * dx;
  }
  double slope = num / den, intercept = mean_y - slope * mean_x;
  double ss_tot = 0.0, ss_res = 0.0;
  for (uint32_t i = 0; i < n; i++) {
    double y = Y(i), fit = slope * i + intercept;
    ss_tot += (y - mean_y) * (y - mean_y);
    ss_res += (y - fit) * (y - fit);
  }
#undef Y
  *slope_deg = atan2(slope, 1.0) * 180.0 / PI; /* nvbench's slope2deg */
  *r2 = ss_tot == 0.0 ? 1.0 : 1.0 - ss_res / ss_tot;
  return 1;
}

/* ---- the state machine ------------------------------------------------------
 */

mb_status_t mb__criterion_init(mb__criterion_t *c, mb_criterion_t kind,
                               uint64_t min_samples, uint64_t fixed_samples,
                               double min_time_s, double max_noise) {
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->min_samples = min_samples;
  c->fixed_samples = fixed_samples;
  c->min_time_ns = min_time_s * 1e9;
  c->max_noise = max_noise;
  c->noise = NAN;
  if ((unsigned)kind >= NUM_KINDS)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "criterion %d; valid: stdrel, fixed, entropy", (int)kind);
  if (kind != MB_CRITERION_ENTROPY) return MB_OK;
  mb_status_t st = bins_alloc(&c->bins, BINS_INITIAL);
  if (st == MB_OK) c->bins_cap = BINS_INITIAL;
  return st;
}

void mb__criterion_fini(mb__criterion_t *c) {
  free(c->bins);
  c->bins = NULL;
  c->bins_cap = c->bins_used = 0;
}

static void push_noise(mb__criterion_t *c, double noise) {
  c->ring[c->ring_next] = noise;
  c->ring_next = (c->ring_next + 1) % MB__CRIT_NOISE_RING;
  if (c->ring_len < MB__CRIT_NOISE_RING) c->ring_len++;
}

/* Welford keeps the running variance exact enough for times near 1e9 ns,
 * where a sum of squares would cancel catastrophically. The noise is kept
 * for every kind: the runner reports it whatever stopped the sampling. */
mb_status_t mb__criterion_add(mb__criterion_t *c, double value,
                              double measured_ns) {
  if (c->kind == MB_CRITERION_ENTROPY) {
    mb_status_t st = entropy_add(c, value); /* the only step that can fail */
    if (st != MB_OK) return st;
  }
  c->count++;
  c->measured_ns += measured_ns;
  double delta = value - c->mean;
  c->mean += delta / (double)c->count;
  c->m2 += delta * (value - c->mean);
  if (c->count < MB__CRIT_FIRST_NOISE) return MB_OK;

  c->noise = sqrt(c->m2 / (double)(c->count - 1)) / c->mean;
  if (isfinite(c->noise))
    push_noise(c, c->noise);
  else
    c->nonfinite++;
  return MB_OK;
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

/* nvbench checks min_samples in the measurement loop around any criterion,
 * and min_time inside stdrel only; here both gate every adaptive criterion,
 * so `entropy` also honours the spec's min_time_s. */
static int minimums_met(const mb__criterion_t *c) {
  return c->count >= c->min_samples && c->measured_ns >= c->min_time_ns;
}

static int stdrel_done(const mb__criterion_t *c, const char **reason) {
  if (c->nonfinite >= MB__CRIT_MAX_NONFINITE) {
    *reason = "unstable";
    return 1;
  }
  if (!minimums_met(c)) return 0;
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

/* The entropy of exact values grows while new values keep turning up and
 * levels off once the distribution is known, whatever its shape or noise.
 * Like nvbench, it looks only at even sample counts (halving the fits). */
static int entropy_done(const mb__criterion_t *c, const char **reason) {
  if (c->nonfinite_values >= MB__CRIT_MAX_NONFINITE) {
    *reason = "unstable";
    return 1;
  }
  if (!minimums_met(c) || c->count % 2 != 0) return 0;
  double slope_deg, r2;
  if (!mb__criterion_entropy_fit(c, &slope_deg, &r2)) return 0;
  if (!(slope_deg <= MB__CRIT_ENTROPY_MAX_ANGLE)) return 0;
  if (!(r2 >= MB__CRIT_ENTROPY_MIN_R2)) return 0;
  *reason = "entropy";
  return 1;
}

int mb__criterion_done(const mb__criterion_t *c, const char **reason) {
  const char *unused;
  if (!reason) reason = &unused;
  switch (c->kind) {
    case MB_CRITERION_FIXED:
      if (c->count < c->fixed_samples) return 0;
      *reason = "fixed";
      return 1;
    case MB_CRITERION_ENTROPY:
      return entropy_done(c, reason);
    case MB_CRITERION_STDREL:
      break;
  }
  return stdrel_done(c, reason);
}

double mb__criterion_noise(const mb__criterion_t *c) {
  return c->noise;
}

uint64_t mb__criterion_count(const mb__criterion_t *c) {
  return c->count;
}
