/* Descriptive statistics and stopping criteria. Quantile expectations are
 * numpy.percentile(x, q) (default 'linear'), worked by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "measure/criterion.h"
#include "measure/stats.h"
#include "test_util.h"

#define EPS 1e-12

static void assert_near(double got, double want, double tol) {
  if (fabs(got - want) > tol) fail_msg("got %.17g, want %.17g", got, want);
}

static mb_stats_t compute(const double *x, size_t n) {
  mb_stats_t s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  assert_int_equal(mb__stats_compute(x, n, &s), MB_OK);
  return s;
}

/* ---- quantiles and descriptive stats ------------------------------------ */

static void test_quantiles_1_to_10(void **state) {
  (void)state;
  double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  mb_stats_t s = compute(x, 10);
  assert_int_equal(s.count, 10);
  assert_near(s.min, 1, EPS);
  assert_near(s.max, 10, EPS);
  assert_near(s.p10, 1.9, EPS);
  assert_near(s.p25, 3.25, EPS);
  assert_near(s.median, 5.5, EPS);
  assert_near(s.p75, 7.75, EPS);
  assert_near(s.p90, 9.1, EPS);
  assert_near(s.p99, 9.91, EPS);
  assert_near(s.iqr, 4.5, EPS);
  assert_near(s.mean, 5.5, EPS);
  assert_near(s.stdev, sqrt(55.0 / 6.0), EPS);
}

static void test_quantile_ends_and_empty(void **state) {
  (void)state;
  double x[] = {1, 2, 3, 4};
  assert_near(mb__quantile_sorted(x, 4, 0.0), 1, 0);
  assert_near(mb__quantile_sorted(x, 4, 1.0), 4, 0);
  assert_near(mb__quantile_sorted(x, 4, 1.0 / 3.0), 2, EPS);
  assert_true(isnan(mb__quantile_sorted(x, 0, 0.5)));
  assert_true(isnan(mb__quantile_sorted(x, 4, NAN)));
}

static void test_one_sample(void **state) {
  (void)state;
  double x[] = {42};
  mb_stats_t s = compute(x, 1);
  assert_int_equal(s.count, 1);
  assert_near(s.min, 42, 0);
  assert_near(s.max, 42, 0);
  assert_near(s.p10, 42, 0);
  assert_near(s.median, 42, 0);
  assert_near(s.p99, 42, 0);
  assert_near(s.iqr, 0, 0);
  assert_near(s.mean, 42, 0);
  assert_near(s.stdev, 0, 0);
  assert_near(s.rel_stdev, 0, 0);
}

static void test_two_samples(void **state) {
  (void)state;
  double x[] = {20, 10};
  mb_stats_t s = compute(x, 2);
  assert_near(s.p10, 11, EPS);
  assert_near(s.p25, 12.5, EPS);
  assert_near(s.median, 15, EPS);
  assert_near(s.p75, 17.5, EPS);
  assert_near(s.p90, 19, EPS);
  assert_near(s.p99, 19.9, EPS);
  assert_near(s.stdev, sqrt(50.0), EPS);
  assert_near(s.rel_stdev, sqrt(50.0) / 15.0, EPS);
}

static void test_unsorted_input_left_alone(void **state) {
  (void)state;
  double x[] = {3, 1, 4, 1, 5, 9, 2, 6};
  const double orig[] = {3, 1, 4, 1, 5, 9, 2, 6};
  mb_stats_t s = compute(x, 8);
  assert_memory_equal(x, orig, sizeof orig);
  assert_near(s.min, 1, 0);
  assert_near(s.max, 9, 0);
  assert_near(s.p10, 1.0, EPS);
  assert_near(s.p25, 1.75, EPS);
  assert_near(s.median, 3.5, EPS);
  assert_near(s.p75, 5.25, EPS);
  assert_near(s.p90, 6.9, EPS);
  assert_near(s.p99, 8.79, EPS);
  assert_near(s.mean, 3.875, EPS);
  assert_near(s.stdev, 2.748376143938713, 1e-12);
}

static void test_duplicates(void **state) {
  (void)state;
  double x[] = {5, 7, 5, 5, 5};
  mb_stats_t s = compute(x, 5);
  assert_near(s.median, 5, 0);
  assert_near(s.p25, 5, 0);
  assert_near(s.p75, 5, 0);
  assert_near(s.iqr, 0, 0);
  assert_near(s.p90, 6.2, EPS);
  assert_near(s.p99, 6.92, EPS);
}

static void test_stdev_known(void **state) {
  (void)state;
  double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
  mb_stats_t s = compute(x, 8);
  assert_near(s.mean, 5, EPS);
  assert_near(s.stdev, sqrt(32.0 / 7.0), EPS);
  assert_near(s.rel_stdev, sqrt(32.0 / 7.0) / 5.0, EPS);
}

/* A sum of squares loses every digit here; the variance must stay 30. */
static void test_stability_large_offset(void **state) {
  (void)state;
  double x[] = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
  mb_stats_t s = compute(x, 4);
  assert_near(s.mean, 1e9 + 10, 0);
  assert_near(s.stdev, sqrt(30.0), 1e-6);
  assert_near(s.rel_stdev, sqrt(30.0) / (1e9 + 10), 1e-15);

  double y[1000];
  for (int i = 0; i < 1000; i++) y[i] = 1e9 + (i % 2 ? 0.5 : -0.5);
  s = compute(y, 1000);
  assert_near(s.mean, 1e9, 1e-6);
  assert_near(s.stdev, sqrt(250.0 / 999.0), 1e-6);
}

static void test_zero_samples(void **state) {
  (void)state;
  mb_stats_t s;
  memset(&s, 0x7f, sizeof s); /* garbage everywhere */
  s.struct_size = sizeof s;
  s.batch = 3;
  s.measured_ns = 123.0;
  s.wall_s = 4.5;
  s.warmup_runs = 6;
  s.stop_reason = "fixed";
  assert_int_equal(mb__stats_compute(NULL, 0, &s), MB_OK);
  assert_int_equal(s.count, 0);
  assert_near(s.min, 0, 0);
  assert_near(s.max, 0, 0);
  assert_near(s.mean, 0, 0);
  assert_near(s.median, 0, 0);
  assert_near(s.stdev, 0, 0);
  assert_near(s.rel_stdev, 0, 0);
  assert_near(s.p10, 0, 0);
  assert_near(s.p99, 0, 0);
  assert_near(s.iqr, 0, 0);
  /* The runner's fields are not ours to touch. */
  assert_int_equal(s.struct_size, sizeof s);
  assert_int_equal(s.batch, 3);
  assert_near(s.measured_ns, 123.0, 0);
  assert_near(s.wall_s, 4.5, 0);
  assert_int_equal(s.warmup_runs, 6);
  assert_string_equal(s.stop_reason, "fixed");
}

/* ---- criterion ----------------------------------------------------------- */

/* splitmix64 + Box-Muller: the same stream on every platform and libc. */
typedef struct rng {
  uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r) {
  return test_splitmix64(&r->s);
}

static double rng_uniform(rng_t *r) { /* (0, 1] */
  return ((double)(rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

static double rng_gauss(rng_t *r) {
  double u = rng_uniform(r), v = rng_uniform(r);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static void assert_not_done(const mb__criterion_t *c) {
  const char *reason = NULL;
  if (mb__criterion_done(c, &reason))
    fail_msg("done (%s) after %llu samples", reason,
             (unsigned long long)mb__criterion_count(c));
}

static void assert_done(const mb__criterion_t *c, const char *want) {
  const char *reason = NULL;
  assert_true(mb__criterion_done(c, &reason));
  assert_non_null(reason);
  assert_string_equal(reason, want);
}

/* Feeds `value` with `ns` measured per sample until `n` samples are in,
 * checking it is not done before. */
static void feed_until(mb__criterion_t *c, uint64_t n, double value,
                       double ns) {
  while (mb__criterion_count(c) < n) {
    assert_not_done(c);
    mb__criterion_add(c, value, ns);
  }
}

static void test_crit_noise_nan_before_5(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 1, 0, 0.0, 0.005);
  assert_true(isnan(mb__criterion_noise(&c)));
  double v[] = {100, 101, 99, 100, 102};
  for (int i = 0; i < 4; i++) {
    mb__criterion_add(&c, v[i], 1e6);
    assert_true(isnan(mb__criterion_noise(&c)));
    assert_not_done(&c); /* no noise yet, so nothing to converge on */
  }
  mb__criterion_add(&c, v[4], 1e6);
  double want = sqrt(5.2 / 4.0) / 100.4; /* deviations -.4 .6 -1.4 -.4 1.6 */
  assert_near(mb__criterion_noise(&c), want, 1e-12);
  assert_int_equal(mb__criterion_count(&c), 5);
}

/* 0.5 s of measured time at 1e7 ns a sample needs 50 samples; 10 are asked. */
static void test_crit_constant_time_binds(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 10, 0, 0.5, 0.005);
  feed_until(&c, 50, 1000.0, 1e7);
  assert_near(mb__criterion_noise(&c), 0, 0);
  assert_done(&c, "converged");
}

/* 0.5 s is in after 5 samples of 1e8 ns; 100 samples are asked. */
static void test_crit_constant_samples_bind(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 100, 0, 0.5, 0.005);
  feed_until(&c, 100, 1000.0, 1e8);
  assert_done(&c, "converged");
}

/* ~5 % noise never gets under 0.5 %, so only the plateau can stop it. */
static void test_crit_noisy_plateau(void **state) {
  (void)state;
  rng_t r = {12345};
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 10, 0, 0.5, 0.005);
  const char *reason = NULL;
  while (!mb__criterion_done(&c, &reason)) {
    assert_true(mb__criterion_count(&c) < 100000);
    mb__criterion_add(&c, 1000.0 * (1.0 + 0.05 * rng_gauss(&r)), 1e7);
  }
  uint64_t n = mb__criterion_count(&c);
  assert_string_equal(reason, "plateau");
  assert_int_equal(n % 16, 0);
  assert_true(n - 4 > 64); /* noise values are recorded from sample 5 on */
  assert_true(mb__criterion_noise(&c) > 0.03);
  assert_true(mb__criterion_noise(&c) < 0.07);
}

/* The plateau needs more than 64 noise values: sample 69 is the 65th, so the
 * first multiple of 16 allowed is 80 even for a perfectly steady noise. */
static void test_crit_plateau_not_before_65_values(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 1, 0, 0.0, 0.005);
  const double v[] = {90, 110};
  const char *reason = NULL;
  uint64_t i = 0;
  while (!mb__criterion_done(&c, &reason)) {
    assert_true(i < 100000);
    mb__criterion_add(&c, v[i++ % 2], 1e6);
  }
  assert_string_equal(reason, "plateau");
  assert_true(mb__criterion_count(&c) >= 80);
  assert_int_equal(mb__criterion_count(&c) % 16, 0);
}

/* Ten samples of +-1 % then a steady 100: the noise over all samples falls
 * as 1/sqrt(n) and crosses 0.5 % near sample 41, well before any plateau. */
static void test_crit_noise_drops_converges(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 10, 0, 0.0, 0.005);
  const char *reason = NULL;
  uint64_t i = 0;
  while (!mb__criterion_done(&c, &reason)) {
    assert_true(i < 1000);
    double noise = mb__criterion_noise(&c);
    if (i >= 10) assert_false(noise < 0.005);
    mb__criterion_add(&c, i < 10 ? (i % 2 ? 99.0 : 101.0) : 100.0, 1e6);
    i++;
  }
  assert_string_equal(reason, "converged");
  assert_true(mb__criterion_noise(&c) < 0.005);
  assert_true(mb__criterion_count(&c) > 30);
  assert_true(mb__criterion_count(&c) < 64);
}

static void test_crit_fixed(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_FIXED, 10, 7, 0.5, 0.005);
  /* Noise, missing time and NaN are all irrelevant to a fixed count. */
  const double v[] = {100, NAN, 300, 1, 5000, INFINITY, 42};
  for (int i = 0; i < 7; i++) {
    assert_not_done(&c);
    mb__criterion_add(&c, v[i], 0.0);
  }
  assert_done(&c, "fixed");
  assert_int_equal(mb__criterion_count(&c), 7);
  assert_true(mb__criterion_done(&c, NULL)); /* reason is optional */
}

static void test_crit_fixed_long_run_no_plateau(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_FIXED, 10, 1000, 0.0, 0.005);
  feed_until(&c, 1000, 100.0, 1e6); /* would converge under STDREL */
  assert_done(&c, "fixed");
}

/* One NaN poisons the running mean, so every noise value from sample 5 on is
 * non-finite; the 64th of them, at sample 68, gives up, even though neither
 * min_samples nor min_time has been reached. */
static void test_crit_nan_unstable(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 1000, 0, 1e6, 0.005);
  mb__criterion_add(&c, NAN, 1e6);
  feed_until(&c, 68, 100.0, 1e6);
  assert_done(&c, "unstable");
  assert_true(isnan(mb__criterion_noise(&c)));
}

static void test_crit_inf_unstable(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 10, 0, 0.0, 0.005);
  feed_until(&c, 10, 100.0, 1e6);
  assert_done(&c, "converged"); /* the same stream without the inf */

  mb__criterion_init(&c, MB_CRITERION_STDREL, 1000, 0, 0.0, 0.005);
  feed_until(&c, 10, 100.0, 1e6);
  mb__criterion_add(&c, INFINITY, 1e6); /* non-finite noise no. 1 */
  feed_until(&c, 10 + 64, 100.0, 1e6);
  assert_done(&c, "unstable");
}

/* All-zero times have no defined relative stdev; give up rather than spin. */
static void test_crit_zero_times_unstable(void **state) {
  (void)state;
  mb__criterion_t c;
  mb__criterion_init(&c, MB_CRITERION_STDREL, 1, 0, 0.0, 0.005);
  feed_until(&c, 68, 0.0, 0.0);
  assert_done(&c, "unstable");
}

/* The median's interval: ranks floor((n - 1.96 sqrt(n)) / 2) and
 * ceil(1 + (n + 1.96 sqrt(n)) / 2) of the sorted samples; for 1..100
 * (given in reverse) that is 40 and 61. Its coverage: over 2000 draws of
 * 50 uniform samples, the true median 0.5 falls inside about 95 % of the
 * time (binomial sd 0.5 %: 93 % is far out). */
static void test_median_ci(void **state) {
  (void)state;
  double x[100], lo, hi;
  for (int i = 0; i < 100; i++) x[i] = 100 - i;
  assert_int_equal(mb__median_ci(x, 100, &lo, &hi), MB_OK);
  assert_true(lo == 40 && hi == 61);
  assert_true(x[0] == 100); /* the caller's order is kept */
  assert_int_equal(mb__median_ci(x, 3, &lo, &hi), MB_OK);
  assert_true(lo == 98 && hi == 100); /* few samples: min and max */
  assert_int_equal(mb__median_ci(x, 0, &lo, &hi), MB_OK);
  assert_true(isnan(lo) && isnan(hi));
  uint64_t seed = 12345, inside = 0;
  for (int t = 0; t < 2000; t++) {
    for (int i = 0; i < 50; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = (double)(seed >> 11) / 9007199254740992.0;
    }
    assert_int_equal(mb__median_ci(x, 50, &lo, &hi), MB_OK);
    inside += lo <= 0.5 && 0.5 <= hi;
  }
  assert_true(inside >= 1860 && inside <= 1980); /* 93 % .. 99 % */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quantiles_1_to_10),
      cmocka_unit_test(test_quantile_ends_and_empty),
      cmocka_unit_test(test_one_sample),
      cmocka_unit_test(test_two_samples),
      cmocka_unit_test(test_unsorted_input_left_alone),
      cmocka_unit_test(test_duplicates),
      cmocka_unit_test(test_stdev_known),
      cmocka_unit_test(test_stability_large_offset),
      cmocka_unit_test(test_zero_samples),
      cmocka_unit_test(test_median_ci),
      cmocka_unit_test(test_crit_noise_nan_before_5),
      cmocka_unit_test(test_crit_constant_time_binds),
      cmocka_unit_test(test_crit_constant_samples_bind),
      cmocka_unit_test(test_crit_noisy_plateau),
      cmocka_unit_test(test_crit_plateau_not_before_65_values),
      cmocka_unit_test(test_crit_noise_drops_converges),
      cmocka_unit_test(test_crit_fixed),
      cmocka_unit_test(test_crit_fixed_long_run_no_plateau),
      cmocka_unit_test(test_crit_nan_unstable),
      cmocka_unit_test(test_crit_inf_unstable),
      cmocka_unit_test(test_crit_zero_times_unstable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
