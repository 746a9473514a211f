/* Stopping criteria (lib/measure/criterion.c) on synthetic streams whose stop
 * can be worked out by hand, on sample streams recorded from this repo's CPU
 * backend (tests/data/), and the criterion names. */
#include <math.h>

#include "measure/criterion.h"
#include "test_util.h"

/* ---- streams ------------------------------------------------------------- */

typedef struct stream {
  double (*next)(struct stream *s);
  uint64_t rng, i;
  double a, b; /* the generator's parameters */
} stream_t;

static uint64_t rng_next(stream_t *s) {
  return test_splitmix64(&s->rng);
}

static double rng_uniform(stream_t *s) { /* (0, 1] */
  return ((double)(rng_next(s) >> 11) + 1.0) * 0x1.0p-53;
}

static double rng_gauss(stream_t *s) {
  double u = rng_uniform(s), v = rng_uniform(s);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* a, relative gaussian noise b */
static double gen_gauss(stream_t *s) {
  return s->a * (1.0 + s->b * rng_gauss(s));
}

/* A quantized timer: 1000..1003 ns with probabilities .5 .3 .15 .05. */
static const double k_disc_p[] = {0.5, 0.3, 0.15, 0.05};
static double gen_discrete(stream_t *s) {
  double u = rng_uniform(s), acc = 0.0;
  for (int k = 0; k < 3; k++)
    if (u <= (acc += k_disc_p[k])) return 1000.0 + k;
  return 1003.0;
}

/* Every value new: a + b*i. */
static double gen_ramp(stream_t *s) {
  return s->a + s->b * (double)s->i;
}

/* A 1 ns timer over a level drifting by b ns a sample, 2 ns of noise. */
static double gen_drift(stream_t *s) {
  return round(s->a + s->b * (double)s->i + 2.0 * rng_gauss(s));
}

static double gen_const(stream_t *s) {
  return s->a;
}

/* Feeds `s` (measured_ns each) until the criterion is done; returns the
 * count at the stop, 0 when `limit` samples did not stop it. */
static uint64_t run(mb__criterion_t *c, stream_t *s, double measured_ns,
                    uint64_t limit, const char **reason) {
  *reason = NULL;
  for (;;) {
    if (mb__criterion_done(c, reason)) {
      assert_non_null(*reason);
      return mb__criterion_count(c);
    }
    if (mb__criterion_count(c) >= limit) return 0;
    assert_int_equal(mb__criterion_add(c, s->next(s), measured_ns), MB_OK);
    s->i++;
  }
}

static void init(mb__criterion_t *c, mb_criterion_t kind, uint64_t min_samples,
                 uint64_t fixed, double min_time_s, double max_noise) {
  if (mb__criterion_init(c, kind, min_samples, fixed, min_time_s, max_noise) !=
      MB_OK)
    fail_msg("init: %s", mb_error_last());
}

/* Runs `s` into `c` (see run) and checks where and why it stopped. */
static void expect_stop(mb__criterion_t *c, stream_t *s, double measured_ns,
                        uint64_t limit, uint64_t want,
                        const char *want_reason) {
  const char *reason;
  uint64_t got = run(c, s, measured_ns, limit, &reason);
  if (got != want || !reason || strcmp(reason, want_reason))
    fail_msg("stopped at %llu (%s), want %llu (%s)", (unsigned long long)got,
             reason ? reason : "not at all", (unsigned long long)want,
             want_reason);
}

static void assert_near(double got, double want, double tol) {
  if (!(fabs(got - want) <= tol))
    fail_msg("%.17g is not within %g of %.17g", got, tol, want);
}

/* ---- stdrel ----------------------------------------------------------------
 */

/* 0.1 % noise is under 0.5 % at once, so the minimums decide the stop:
 * 0.5 s at 1e7 ns a sample is 50 samples; at 1e8 ns, min_samples' 100. */
static void test_stdrel_converges_after_minimums(void **state) {
  (void)state;
  mb__criterion_t c;
  stream_t s = {gen_gauss, 1, 0, 1000.0, 0.001};
  init(&c, MB_CRITERION_STDREL, 10, 0, 0.5, 0.005);
  expect_stop(&c, &s, 1e7, 10000, 50, "converged");
  assert_true(mb__criterion_noise(&c) < 0.005);
  mb__criterion_fini(&c);

  stream_t s2 = {gen_gauss, 2, 0, 1000.0, 0.001};
  init(&c, MB_CRITERION_STDREL, 100, 0, 0.5, 0.005);
  expect_stop(&c, &s2, 1e8, 10000, 100, "converged");
  mb__criterion_fini(&c);
}

/* Time inside the timer is what counts: 1e6 ns a sample needs 500 samples,
 * and a stream that measures no time never has enough. */
static void test_stdrel_min_time(void **state) {
  (void)state;
  mb__criterion_t c;
  const char *reason;
  stream_t s = {gen_gauss, 3, 0, 1000.0, 0.001};
  init(&c, MB_CRITERION_STDREL, 10, 0, 0.5, 0.005);
  expect_stop(&c, &s, 1e6, 10000, 500, "converged");
  mb__criterion_fini(&c);

  init(&c, MB_CRITERION_STDREL, 10, 0, 0.5, 0.005);
  assert_int_equal(run(&c, &s, 0.0, 5000, &reason), 0);
  mb__criterion_fini(&c);
}

/* 5 % noise never gets under 0.5 %: only the plateau can stop it, at a
 * multiple of 16 once more than 64 noise values are in. */
static void test_stdrel_plateau(void **state) {
  (void)state;
  for (uint64_t seed = 10; seed < 15; seed++) {
    mb__criterion_t c;
    const char *reason;
    stream_t s = {gen_gauss, seed, 0, 1000.0, 0.05};
    init(&c, MB_CRITERION_STDREL, 10, 0, 0.5, 0.005);
    uint64_t n = run(&c, &s, 1e7, 20000, &reason);
    if (n == 0 || strcmp(reason, "plateau"))
      fail_msg("seed %llu: %s at %llu", (unsigned long long)seed,
               reason ? reason : "no stop", (unsigned long long)n);
    assert_int_equal(n % MB__CRIT_PLATEAU_EVERY, 0);
    assert_true(n >= 80); /* sample 69 is the 65th noise value */
    assert_true(n <= 5000);
    assert_true(mb__criterion_noise(&c) > 0.03);
    assert_true(mb__criterion_noise(&c) < 0.07);
    mb__criterion_fini(&c);
  }
}

/* Noise is NaN for a zero mean (0/0) and after a NaN value; the 64th such
 * noise value (sample 4 + 64) gives up, minimums or not. */
static void test_stdrel_nonfinite_gives_up(void **state) {
  (void)state;
  mb__criterion_t c;
  const char *reason;
  stream_t zero = {gen_const, 0, 0, 0.0, 0};
  init(&c, MB_CRITERION_STDREL, 1000, 0, 10.0, 0.005);
  expect_stop(&c, &zero, 1e6, 10000, 68, "unstable");
  assert_true(isnan(mb__criterion_noise(&c)));
  mb__criterion_fini(&c);

  stream_t nan = {gen_const, 0, 0, NAN, 0};
  init(&c, MB_CRITERION_STDREL, 10, 0, 0.0, 0.005);
  expect_stop(&c, &nan, 1e6, 10000, 68, "unstable");
  mb__criterion_fini(&c);

  /* 100 good samples (min_samples keeps them going), then NaN for good. */
  stream_t s = {gen_gauss, 4, 0, 1000.0, 0.05};
  init(&c, MB_CRITERION_STDREL, 100000, 0, 0.0, 0.005);
  assert_int_equal(run(&c, &s, 1e6, 100, &reason), 0);
  expect_stop(&c, &nan, 1e6, 10000, 164, "unstable");
  mb__criterion_fini(&c);
}

/* Exactly N, whatever the values, the time or the minimums. */
static void test_fixed_exact_count(void **state) {
  (void)state;
  static const uint64_t k_n[] = {1, 7, 1000};
  for (size_t k = 0; k < sizeof k_n / sizeof k_n[0]; k++) {
    mb__criterion_t c;
    stream_t nan = {gen_const, 0, 0, NAN, 0};
    init(&c, MB_CRITERION_FIXED, 5000, k_n[k], 100.0, 0.005);
    expect_stop(&c, &nan, 0.0, 10000, k_n[k], "fixed");
    assert_true(mb__criterion_done(&c, NULL)); /* reason is optional */
    mb__criterion_fini(&c);
  }
}

/* ---- entropy ----------------------------------------------------------------
 */

/* Least squares through y[0..n), x = 0..n-1: angle (deg) and R^2, written
 * out independently of the library. */
static void fit(const double *y, int n, double *deg, double *r2) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  for (int i = 0; i < n; i++) {
    sx += i, sy += y[i], sxx += (double)i * i, sxy += i * y[i];
    syy += y[i] * y[i];
  }
  double b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  double sst = syy - sy * sy / n, ssr = 0;
  for (int i = 0; i < n; i++) {
    double e = y[i] - (sy / n + b * (i - sx / n));
    ssr += e * e;
  }
  *deg = atan(b) * 180.0 / 3.14159265358979323846;
  *r2 = 1.0 - ssr / sst;
}

/* 5, 5, 7, 9: the entropies are 0, 0, H(2/3, 1/3), H(1/2, 1/4, 1/4). */
static void test_entropy_by_hand(void **state) {
  (void)state;
  mb__criterion_t c;
  init(&c, MB_CRITERION_ENTROPY, 0, 0, 0.0, 0.005);
  assert_true(mb__criterion_entropy(&c) == 0.0);
  double slope, r2;
  assert_false(mb__criterion_entropy_fit(&c, &slope, &r2));
  const double v[] = {5, 5, 7, 9};
  const double want[] = {0.0, 0.0, log2(3.0) - 2.0 / 3.0, 1.5};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(mb__criterion_add(&c, v[i], 1.0), MB_OK);
    assert_near(mb__criterion_entropy(&c), want[i], 1e-12);
  }
  double want_deg, want_r2;
  fit(want, 4, &want_deg, &want_r2);
  assert_true(mb__criterion_entropy_fit(&c, &slope, &r2));
  assert_near(slope, want_deg, 1e-9);
  assert_near(r2, want_r2, 1e-9);
  assert_true(slope > 10.0); /* rising fast: not done */
  assert_false(mb__criterion_done(&c, NULL));

  /* -0 is 0; NaN and inf take no bin; both leave the entropy alone. */
  assert_int_equal(mb__criterion_add(&c, NAN, 1.0), MB_OK);
  assert_int_equal(mb__criterion_add(&c, -INFINITY, 1.0), MB_OK);
  assert_near(mb__criterion_entropy(&c), 1.5, 1e-12);
  mb__criterion_fini(&c);

  init(&c, MB_CRITERION_ENTROPY, 0, 0, 0.0, 0.005);
  assert_int_equal(mb__criterion_add(&c, 0.0, 1.0), MB_OK);
  assert_int_equal(mb__criterion_add(&c, -0.0, 1.0), MB_OK);
  assert_true(mb__criterion_entropy(&c) == 0.0);
  assert_int_equal(mb__criterion_add(&c, 3.0, 1.0), MB_OK);
  assert_near(mb__criterion_entropy(&c), log2(3.0) - 2.0 / 3.0, 1e-12);
  mb__criterion_fini(&c);

  init(&c, MB_CRITERION_STDREL, 0, 0, 0.0, 0.005);
  assert_true(isnan(mb__criterion_entropy(&c))); /* no histogram */
  mb__criterion_fini(&c);
}

/* A quantized timer over 4 values: the entropy settles at H(.5 .3 .15 .05)
 * and the criterion stops there, after the window has seen the early climb
 * leave it (a few hundred samples), long before a stream of new values. */
static void test_entropy_discrete_stops(void **state) {
  (void)state;
  double h = 0.0;
  for (int k = 0; k < 4; k++) h -= k_disc_p[k] * log2(k_disc_p[k]);
  for (uint64_t seed = 20; seed < 26; seed++) {
    mb__criterion_t c;
    const char *reason;
    stream_t s = {gen_discrete, seed, 0, 0, 0};
    init(&c, MB_CRITERION_ENTROPY, 10, 0, 0.0, 0.005);
    uint64_t n = run(&c, &s, 1e6, 20000, &reason);
    if (n < 200 || n > 1500 || strcmp(reason, "entropy"))
      fail_msg("seed %llu: %s at %llu", (unsigned long long)seed,
               reason ? reason : "no stop", (unsigned long long)n);
    assert_int_equal(n % 2, 0);
    assert_near(mb__criterion_entropy(&c), h, 0.15); /* ~3 sigma at n=300 */
    double deg, r2;
    assert_true(mb__criterion_entropy_fit(&c, &deg, &r2));
    assert_true(deg <= MB__CRIT_ENTROPY_MAX_ANGLE);
    assert_true(r2 >= MB__CRIT_ENTROPY_MIN_R2);
    mb__criterion_fini(&c);
  }
}

/* All values new: the entropy is exactly log2(n) and keeps rising; the fit
 * over the last 299 of them falls to 0.048 degrees only near n = 1870
 * (slope 1/((n - 149) ln 2)). The stop is the first even n where the fit of
 * log2 over the window, done here independently, allows it. */
static void test_entropy_ramp_keeps_going(void **state) {
  (void)state;
  enum { W = MB__CRIT_ENTROPY_WINDOW };
  uint64_t want = 0;
  for (uint64_t n = W + 1; !want; n += 2) { /* even counts */
    double y[W], deg, r2;
    for (int i = 0; i < W; i++) y[i] = log2((double)(n - W + 1 + i));
    fit(y, W, &deg, &r2);
    if (deg <= MB__CRIT_ENTROPY_MAX_ANGLE) {
      assert_true(r2 > 0.99); /* the slope, not R^2, is what waits */
      want = n;
    }
  }
  assert_true(want > 1800 && want < 1950);

  mb__criterion_t c;
  stream_t s = {gen_ramp, 0, 0, 1000.0, 0.25};
  init(&c, MB_CRITERION_ENTROPY, 0, 0, 0.0, 0.005);
  expect_stop(&c, &s, 1e6, 10000, want, "entropy");
  assert_near(mb__criterion_entropy(&c), log2((double)want), 1e-9);
  mb__criterion_fini(&c);
}

/* A drifting level keeps bringing new values: no stop in 1500 samples,
 * where a steady one of the same noise stops in a few hundred. */
static void test_entropy_drift_keeps_going(void **state) {
  (void)state;
  for (uint64_t seed = 30; seed < 34; seed++) {
    mb__criterion_t c;
    const char *reason;
    stream_t drift = {gen_drift, seed, 0, 1000.0, 0.05};
    init(&c, MB_CRITERION_ENTROPY, 10, 0, 0.0, 0.005);
    uint64_t n = run(&c, &drift, 1e6, 1500, &reason);
    if (n)
      fail_msg("seed %llu: %s at %llu", (unsigned long long)seed, reason,
               (unsigned long long)n);
    mb__criterion_fini(&c);

    stream_t steady = {gen_drift, seed, 0, 1000.0, 0.0};
    init(&c, MB_CRITERION_ENTROPY, 10, 0, 0.0, 0.005);
    n = run(&c, &steady, 1e6, 1500, &reason);
    assert_true(n > 0 && n < 1000);
    assert_string_equal(reason, "entropy");
    mb__criterion_fini(&c);
  }
}

/* A constant stream is done as soon as allowed (entropy flat at 0, R^2 1):
 * min_samples, min_time and the even-count rule are what stop it. */
static void test_entropy_minimums(void **state) {
  (void)state;
  static const struct {
    uint64_t min_samples;
    double min_time_s;
    uint64_t want;
  } k_case[] = {
      {0, 0.0, 2},      /* the fit needs two values */
      {100, 0.0, 100},  /* min_samples */
      {101, 0.0, 102},  /* ... on an even count only */
      {10, 0.5, 500},   /* 0.5 s at 1e6 ns a sample */
      {10, 0.5001, 502} /* 501 samples are enough time but odd */
  };
  for (size_t k = 0; k < sizeof k_case / sizeof k_case[0]; k++) {
    mb__criterion_t c;
    stream_t s = {gen_const, 0, 0, 1234.5, 0};
    init(&c, MB_CRITERION_ENTROPY, k_case[k].min_samples, 0,
         k_case[k].min_time_s, 0.005);
    expect_stop(&c, &s, 1e6, 10000, k_case[k].want, "entropy");
    mb__criterion_fini(&c);
  }
  /* A stream that would stop in a few hundred waits for the minimums. */
  for (uint64_t seed = 40; seed < 43; seed++) {
    mb__criterion_t c;
    const char *reason;
    stream_t s = {gen_discrete, seed, 0, 0, 0};
    init(&c, MB_CRITERION_ENTROPY, 3000, 0, 0.0, 0.005);
    uint64_t n = run(&c, &s, 1e6, 20000, &reason);
    assert_true(n >= 3000 && n < 8000);
    assert_string_equal(reason, "entropy");
    mb__criterion_fini(&c);

    stream_t s2 = {gen_discrete, seed, 0, 0, 0};
    init(&c, MB_CRITERION_ENTROPY, 10, 0, 4.0, 0.005);
    n = run(&c, &s2, 1e6, 20000, &reason);
    assert_true(n >= 4000 && n < 9000);
    assert_string_equal(reason, "entropy");
    mb__criterion_fini(&c);
  }
}

/* NaN and inf values take no bin; the 64th of them gives up, minimums or
 * not, however many finite values came between. */
static void test_entropy_nonfinite_gives_up(void **state) {
  (void)state;
  mb__criterion_t c;
  const char *reason;
  stream_t nan = {gen_const, 0, 0, NAN, 0};
  init(&c, MB_CRITERION_ENTROPY, 1000, 0, 10.0, 0.005);
  expect_stop(&c, &nan, 1e6, 10000, 64, "unstable");
  assert_true(mb__criterion_entropy(&c) == 0.0);
  mb__criterion_fini(&c);

  init(&c, MB_CRITERION_ENTROPY, 100000, 0, 0.0, 0.005);
  uint64_t i = 0;
  while (!mb__criterion_done(&c, &reason)) {
    assert_true(i < 1000);
    double v = i % 2 ? (i % 4 == 1 ? INFINITY : NAN) : 100.0 + (double)i;
    assert_int_equal(mb__criterion_add(&c, v, 1e6), MB_OK);
    i++;
  }
  assert_string_equal(reason, "unstable");
  assert_int_equal(mb__criterion_count(&c), 128);
  assert_near(mb__criterion_entropy(&c), 6.0, 1e-12); /* 64 values */
  mb__criterion_fini(&c);
}

/* 10^5 distinct values (a long run on a fine clock): the histogram keeps up
 * and the entropy is log2(10^5), with no stop before min_samples. */
static void test_entropy_many_values(void **state) {
  (void)state;
  mb__criterion_t c;
  stream_t s = {gen_ramp, 0, 0, 5e4, 0.5};
  init(&c, MB_CRITERION_ENTROPY, 100000, 0, 0.0, 0.005);
  expect_stop(&c, &s, 1e6, 200000, 100000, "entropy");
  assert_near(mb__criterion_entropy(&c), log2(1e5), 1e-9);
  mb__criterion_fini(&c);
}

/* ---- init, fini, names -----------------------------------------------------
 */

static void test_init_unknown_kind(void **state) {
  (void)state;
  mb__criterion_t c;
  assert_int_equal(mb__criterion_init(&c, (mb_criterion_t)7, 10, 0, 0.5, 0.005),
                   MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "criterion 7");
  assert_contains(mb_error_last(), "stdrel, fixed, entropy");
  mb__criterion_fini(&c);
  mb__criterion_fini(&c);

  init(&c, MB_CRITERION_ENTROPY, 10, 0, 0.5, 0.005);
  assert_int_equal(mb__criterion_add(&c, 1.0, 1.0), MB_OK);
  mb__criterion_fini(&c);
  mb__criterion_fini(&c); /* twice is harmless */
}

static void test_names(void **state) {
  (void)state;
  static const char *const k_names[] = {"stdrel", "fixed", "entropy"};
  for (int k = 0; k < 3; k++) {
    assert_string_equal(mb_criterion_name((mb_criterion_t)k), k_names[k]);
    mb_criterion_t got = (mb_criterion_t)99;
    assert_int_equal(mb_criterion_from_name(k_names[k], &got), MB_OK);
    assert_int_equal(got, k);
  }
  assert_int_equal(MB_CRITERION_ENTROPY, 2);
  assert_string_equal(mb_criterion_name((mb_criterion_t)3), "?");
  assert_string_equal(mb_criterion_name((mb_criterion_t)-1), "?");

  mb_criterion_t got = MB_CRITERION_FIXED;
  assert_int_equal(mb_criterion_from_name("Entropy", &got), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "\"Entropy\"");
  assert_contains(mb_error_last(), "valid: stdrel, fixed, entropy");
  assert_int_equal(got, MB_CRITERION_FIXED); /* untouched */
  assert_int_equal(mb_criterion_from_name("", &got), MB_ERR_INVALID_ARG);
  assert_int_equal(mb_criterion_from_name(NULL, &got), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "stdrel, fixed, entropy");
}

/* ---- recorded streams
 * -------------------------------------------------------- */

typedef struct recorded {
  double *v;
  size_t n;
  unsigned batch; /* runs per sample: the time measured is v * batch */
} recorded_t;

static recorded_t load(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", MB_TEST_DATA_DIR, name);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  recorded_t r = {NULL, 0, 0};
  size_t cap = 0;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') {
      sscanf(line, "# batch %u", &r.batch);
      continue;
    }
    if (r.n == cap) {
      cap = cap ? cap * 2 : 1024;
      r.v = realloc(r.v, cap * sizeof *r.v);
      assert_non_null(r.v);
    }
    char *end;
    r.v[r.n] = strtod(line, &end);
    if (end == line || !(r.v[r.n] > 0)) fail_msg("%s: bad line %s", path, line);
    r.n++;
  }
  fclose(f);
  if (r.batch == 0) fail_msg("%s: no \"# batch N\" line", path);
  return r;
}

/* Feeds a recorded stream; returns the count at the stop (0: none). */
static uint64_t replay(mb__criterion_t *c, const recorded_t *r,
                       const char **reason, double *measured_s) {
  *measured_s = 0.0;
  for (size_t i = 0; i < r->n; i++) {
    if (mb__criterion_done(c, reason)) return mb__criterion_count(c);
    assert_int_equal(mb__criterion_add(c, r->v[i], r->v[i] * r->batch), MB_OK);
    *measured_s += r->v[i] * r->batch * 1e-9;
  }
  return mb__criterion_done(c, reason) ? mb__criterion_count(c) : 0;
}

/* 3000 samples each from a 2-CPU shared VM: noise of 8 % to 170 % with
 * outliers, so stdrel ends on a plateau, not under 0.5 %, after its 0.5 s;
 * and most values are distinct, so entropy ends near where a stream of only
 * new values would (about 1870) or earlier. Defaults: min_samples 10,
 * min_time 0.5 s, max_noise 0.005. */
static void test_recorded_streams(void **state) {
  (void)state;
  static const char *const k_files[] = {"cpu_gemm_256_hot.txt",
                                        "cpu_add_2048_cold.txt",
                                        "cpu_softmax_1024_hot.txt"};
  for (size_t k = 0; k < sizeof k_files / sizeof k_files[0]; k++) {
    recorded_t r = load(k_files[k]);
    assert_true(r.n >= 2000);
    mb__criterion_t c;
    const char *reason = NULL;
    double measured_s;

    init(&c, MB_CRITERION_STDREL, 10, 0, 0.5, 0.005);
    uint64_t n = replay(&c, &r, &reason, &measured_s);
    print_message("%s: stdrel %s at %llu (%.2f s, noise %.3f)\n", k_files[k],
                  reason ? reason : "no stop", (unsigned long long)n,
                  measured_s, mb__criterion_noise(&c));
    if (n < 200 || n > r.n - 100 || strcmp(reason, "plateau"))
      fail_msg("%s: stdrel %s at %llu", k_files[k], reason ? reason : "-",
               (unsigned long long)n);
    assert_true(measured_s >= 0.5);
    assert_true(mb__criterion_noise(&c) > 0.02);
    mb__criterion_fini(&c);

    init(&c, MB_CRITERION_ENTROPY, 10, 0, 0.5, 0.005);
    n = replay(&c, &r, &reason, &measured_s);
    double h = mb__criterion_entropy(&c);
    print_message("%s: entropy %s at %llu (%.2f s, %.2f bits)\n", k_files[k],
                  reason ? reason : "no stop", (unsigned long long)n,
                  measured_s, h);
    if (n < 1000 || n > r.n - 100 || strcmp(reason, "entropy"))
      fail_msg("%s: entropy %s at %llu", k_files[k], reason ? reason : "-",
               (unsigned long long)n);
    assert_int_equal(n % 2, 0);
    assert_true(measured_s >= 0.5);
    assert_true(h > 8.0 && h <= log2((double)n)); /* mostly distinct values */
    mb__criterion_fini(&c);
    free(r.v);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stdrel_converges_after_minimums),
      cmocka_unit_test(test_stdrel_min_time),
      cmocka_unit_test(test_stdrel_plateau),
      cmocka_unit_test(test_stdrel_nonfinite_gives_up),
      cmocka_unit_test(test_fixed_exact_count),
      cmocka_unit_test(test_entropy_by_hand),
      cmocka_unit_test(test_entropy_discrete_stops),
      cmocka_unit_test(test_entropy_ramp_keeps_going),
      cmocka_unit_test(test_entropy_drift_keeps_going),
      cmocka_unit_test(test_entropy_minimums),
      cmocka_unit_test(test_entropy_nonfinite_gives_up),
      cmocka_unit_test(test_entropy_many_values),
      cmocka_unit_test(test_init_unknown_kind),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_recorded_streams),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
