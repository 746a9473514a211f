/* Comparing two result sets: match results by key, then judge each pair by
 * a Mann-Whitney U test on the two runs' samples (is the change real?) and
 * the threshold on the change in median (is it big enough to matter?).
 *
 * The noise of one run is reported beside the verdict, for the reader: a
 * robust relative spread, (IQR / 1.349) / median when the IQR is known from
 * at least 5 samples (IQR / 1.349 estimates the standard deviation of a
 * normal distribution, and unlike the stdev it is not inflated by a few
 * preempted samples), else stats.rel_stdev. The verdict does not use it:
 * a noise figure does not shrink with more samples, the test's p does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/results_internal.h"

struct mb_comparison {
  mb_compare_row_t *rows; /* row ids are owned (copied) */
  size_t count;
  size_t regressions;
  double log_ratio_sum; /* over the rows with a ratio: the geometric mean */
  size_t ratios;
};

static const char *const k_verdict_names[] = {
    [MB_VERDICT_SAME] = "SAME",     [MB_VERDICT_FASTER] = "FASTER",
    [MB_VERDICT_SLOWER] = "SLOWER", [MB_VERDICT_NOISY] = "NOISY",
    [MB_VERDICT_FAILED] = "FAILED", [MB_VERDICT_MISSING] = "MISSING",
    [MB_VERDICT_NEW] = "NEW",       [MB_VERDICT_SKIPPED] = "SKIPPED"};
#define NUM_VERDICTS (sizeof k_verdict_names / sizeof k_verdict_names[0])

const char *mb_verdict_name(mb_verdict_t v) {
  return (unsigned)v < NUM_VERDICTS ? k_verdict_names[v] : "?";
}

/* ---- the Mann-Whitney U test ---------------------------------------------
 *
 * Whether two runs' samples come from one distribution, from their ranks
 * alone: no normality assumed (timings are skewed), and a preempted sample
 * moves one rank by one, not the statistic by its size. Ranks are doubled
 * so that tied samples' midranks stay integers: the exact distribution of
 * base's rank sum can then be counted, ties and all. */

/* Up to here the exact distribution is counted (C(40, 20) ~ 1.4e11 ways,
 * exact in a double; at most ~5e6 steps); beyond, the normal approximation
 * is within a few percent of it (both sides >= 10 or so). */
#define EXACT_MAX_SAMPLES 40

typedef struct obs {
  double v;
  int from_new;
  long long rank2; /* doubled midrank (a rank sum reaches N^2) */
} obs_t;

static int by_value(const void *a, const void *b) {
  double x = ((const obs_t *)a)->v, y = ((const obs_t *)b)->v;
  return (x > y) - (x < y);
}

typedef struct utest {
  size_t nb, nn;
  long long base_rank2; /* base's sum of doubled ranks */
  double tie_term;      /* sum over tie groups of t^3 - t */
  double p;             /* two-sided; NAN when a side has no samples */
  int new_is_slower;    /* new's ranks above what H0 expects */
} utest_t;

/* Puts samples_ns's numbers (arr NULL: none) in o from index n on, marked
 * `from_new`, and returns the index past them; o NULL only counts them. */
static size_t take_samples(const cJSON *arr, int from_new, obs_t *o, size_t n) {
  const cJSON *v;
  cJSON_ArrayForEach(v, arr) {
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) continue;
    if (o) o[n] = (obs_t){v->valuedouble, from_new, 0};
    n++;
  }
  return n;
}

/* P(|S - E S| >= |s - E S|) for S the doubled rank sum of k of the N ranks
 * drawn at random: every choice equally likely under H0. */
static mb_status_t exact_p(const obs_t *o, size_t n, size_t k, long long s,
                           double *p) {
  const size_t smax = 2 * k * n; /* >= the largest doubled rank sum */
  double *ways = calloc((k + 1) * (smax + 1), sizeof *ways);
  if (!ways)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_compare: out of memory");
  ways[0] = 1; /* ways[j * (smax + 1) + t]: j ranks summing to t */
  for (size_t i = 0; i < n; i++) {
    size_t r = (size_t)o[i].rank2;
    for (size_t j = i + 1 < k ? i + 1 : k; j > 0; j--)
      for (size_t t = smax; t >= r; t--)
        ways[j * (smax + 1) + t] += ways[(j - 1) * (smax + 1) + t - r];
  }
  const double *last = ways + k * (smax + 1);
  long long mean = (long long)(k * (n + 1)), dev = llabs(s - mean);
  double all = 0, extreme = 0;
  for (size_t t = 0; t <= smax; t++) {
    all += last[t];
    if (llabs((long long)t - mean) >= dev) extreme += last[t];
  }
  free(ways);
  *p = extreme / all;
  return MB_OK;
}

/* The normal approximation with the tie correction and the continuity
 * correction (scipy.stats.mannwhitneyu's asymptotic method). */
static double normal_p(const utest_t *u) {
  double nb = (double)u->nb, nn = (double)u->nn, n = nb + nn;
  double var = nb * nn / 12 * ((n + 1) - u->tie_term / (n * (n - 1)));
  if (!(var > 0)) return 1; /* every sample equal */
  double ustat = (double)u->base_rank2 / 2 - nb * (nb + 1) / 2;
  double z = (fabs(ustat - nb * nn / 2) - 0.5) / sqrt(var);
  double p = erfc((z > 0 ? z : 0) / sqrt(2.0));
  return p < 1 ? p : 1;
}

static mb_status_t mann_whitney(const cJSON *base, const cJSON *nw,
                                utest_t *u) {
  *u = (utest_t){0};
  u->nb = take_samples(base, 0, NULL, 0);
  u->nn = take_samples(nw, 1, NULL, 0);
  u->p = NAN;
  size_t n = u->nb + u->nn;
  if (!u->nb || !u->nn) return MB_OK;
  obs_t *o = malloc(n * sizeof *o);
  if (!o)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_compare: out of memory");
  take_samples(nw, 1, o, take_samples(base, 0, o, 0));
  qsort(o, n, sizeof *o, by_value);
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && o[j].v == o[i].v;) j++;
    double t = (double)(j - i);
    u->tie_term += t * t * t - t;
    for (size_t m = i; m < j; m++) {
      o[m].rank2 = (long long)(i + 1 + j); /* 2 x mean of ranks i+1 .. j */
      if (!o[m].from_new) u->base_rank2 += o[m].rank2;
    }
  }
  u->new_is_slower = u->base_rank2 < (long long)(u->nb * (n + 1));
  mb_status_t st = MB_OK;
  if (n <= EXACT_MAX_SAMPLES)
    st = exact_p(o, n, u->nb, u->base_rank2, &u->p);
  else
    u->p = normal_p(u);
  free(o);
  return st;
}

/* ---- one result, as the verdict sees it --------------------------------- */

typedef struct side {
  int ok;               /* status "ok" */
  int bad;              /* status "failed", or checked and wrong */
  int wrong;            /* checked and wrong */
  double median;        /* NAN unless ok */
  double noise;         /* NAN when unknown */
  const cJSON *samples; /* samples_ns; NULL when absent */
} side_t;

#define NO_SIDE ((side_t){0, 0, 0, NAN, NAN, NULL})

#define MIN_SAMPLES_FOR_IQR 5
#define IQR_TO_SIGMA 1.349 /* IQR of a normal distribution / its sigma */

static double run_noise(const cJSON *stats, double median) {
  double iqr = mb__json_num(stats, "iqr_ns");
  double count = mb__json_num(stats, "count");
  if (isfinite(iqr) && count >= MIN_SAMPLES_FOR_IQR && median > 0)
    return iqr / IQR_TO_SIGMA / median;
  return mb__json_num(stats, "rel_stdev");
}

static side_t read_side(const cJSON *r) {
  const char *status = mb__json_str(r, "status");
  const cJSON *corr = cJSON_GetObjectItemCaseSensitive(r, "correctness");
  const cJSON *stats = cJSON_GetObjectItemCaseSensitive(r, "stats");
  side_t s = NO_SIDE;
  s.ok = status && strcmp(status, "ok") == 0;
  s.wrong = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(corr, "checked")) &&
            !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(corr, "pass"));
  s.bad = (status && strcmp(status, "failed") == 0) || s.wrong;
  if (s.ok) {
    s.median = mb__json_num(stats, "median_ns");
    s.noise = run_noise(stats, s.median);
    s.samples = cJSON_GetObjectItemCaseSensitive(r, "samples_ns");
  }
  return s;
}

/* Rules 1-3 (docs/measurement.md, "Comparing runs"): a pair whose times
 * cannot be compared. 0 with *v set, or 1: the times decide. */
static int timed(const side_t *b, const side_t *n, mb_verdict_t *v) {
  *v = MB_VERDICT_SKIPPED;
  if (!b->ok) return 0;
  /* Wrong in both is no new failure: the times are still compared. */
  if (n->bad && !(b->wrong && n->wrong)) *v = MB_VERDICT_FAILED;
  return *v == MB_VERDICT_SKIPPED && n->ok && b->median > 0 && n->median > 0;
}

/* Rules 4-6: size first, then significance. */
static mb_verdict_t decide(double d, const utest_t *u,
                           const mb_compare_options_t *o) {
  /* Within the threshold is SAME, significant or not: too small to matter
   * (and a run compared with itself is SAME). */
  if (fabs(d) <= o->threshold_pct / 100) return MB_VERDICT_SAME;
  /* Beyond it, a change the test cannot tell from chance at these sample
   * sizes (p NAN, or >= alpha), or whose ranks moved against its medians,
   * is NOISY: reported, never gating; more samples decide it. */
  if (!(u->p < o->alpha) || u->new_is_slower != (d > 0))
    return MB_VERDICT_NOISY;
  return d < 0 ? MB_VERDICT_FASTER : MB_VERDICT_SLOWER;
}

static mb_status_t judge(const side_t *b, const side_t *n,
                         const mb_compare_options_t *o, mb_compare_row_t *row) {
  if (!timed(b, n, &row->verdict)) return MB_OK;
  utest_t u;
  mb_status_t st = mann_whitney(b->samples, n->samples, &u);
  if (st != MB_OK) return st;
  row->ratio = n->median / b->median;
  row->p_value = u.p;
  row->verdict = decide(row->ratio - 1, &u, o);
  return MB_OK;
}

/* ---- matching ----------------------------------------------------------- */

typedef struct keyed {
  const char *key;
  size_t index;
} keyed_t;

static int by_key(const void *a, const void *b) {
  return strcmp(((const keyed_t *)a)->key, ((const keyed_t *)b)->key);
}

/* The set's results sorted by key; a key twice is an error (which of the
 * two would the other file's result be compared with?). */
static mb_status_t key_index(const mb_results_t *set, const char *field,
                             keyed_t **out) {
  size_t n = mb_results_count(set);
  keyed_t *k = calloc(n ? n : 1, sizeof *k);
  if (!k)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_compare: out of memory");
  for (size_t i = 0; i < n; i++) {
    k[i] = (keyed_t){mb__json_str(mb__results_item(set, i), field), i};
    if (!k[i].key) {
      free(k);
      return mb__fail(MB_ERR_PARSE,
                      "%s: result \"%s\" (results[%zu]) has no \"%s\"; files "
                      "written before problem ids existed can only be "
                      "compared by id",
                      mb__results_path(set), mb_results_id(set, i), i, field);
    }
  }
  qsort(k, n, sizeof *k, by_key);
  for (size_t i = 1; i < n; i++)
    if (strcmp(k[i - 1].key, k[i].key) == 0) {
      size_t a = k[i - 1].index < k[i].index ? k[i - 1].index : k[i].index;
      size_t b = k[i - 1].index ^ k[i].index ^ a;
      mb__fail(MB_ERR_INVALID_ARG,
               "%s: %s \"%s\" occurs more than once (results[%zu] and "
               "results[%zu]), so the match is ambiguous; compare files with "
               "one result per %s (a merged file of several runs or hosts "
               "repeats them: compare the runs' own files)%s",
               mb__results_path(set), field, k[i].key, a, b, field,
               strcmp(field, "problem") == 0
                   ? ", or match by id to tell backends and devices apart"
                   : "");
      free(k);
      return MB_ERR_INVALID_ARG;
    }
  *out = k;
  return MB_OK;
}

static const keyed_t *find_key(const keyed_t *k, size_t n, const char *key) {
  keyed_t probe = {key, 0};
  return bsearch(&probe, k, n, sizeof *k, by_key);
}

/* ---- building the rows -------------------------------------------------- */

static mb_status_t add_row(mb_comparison_t *c, const char *key, const cJSON *b,
                           const cJSON *n, const mb_compare_options_t *o) {
  mb_compare_row_t row = MB_COMPARE_ROW_INIT;
  side_t sb = b ? read_side(b) : NO_SIDE;
  side_t sn = n ? read_side(n) : NO_SIDE;
  row.base_ns = sb.median;
  row.new_ns = sn.median;
  row.base_noise = sb.noise;
  row.new_noise = sn.noise;
  row.ratio = row.p_value = NAN;
  row.verdict = !n ? MB_VERDICT_MISSING : MB_VERDICT_NEW;
  mb_status_t st = b && n ? judge(&sb, &sn, o, &row) : MB_OK;
  if (st != MB_OK) return st;
  if (!(row.id = mb__strdup(key)))
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_compare: out of memory");
  c->rows[c->count++] = row;
  c->regressions +=
      row.verdict == MB_VERDICT_SLOWER || row.verdict == MB_VERDICT_FAILED;
  if (isfinite(row.ratio)) {
    c->log_ratio_sum += log(row.ratio);
    c->ratios++;
  }
  return MB_OK;
}

static mb_status_t build_rows(mb_comparison_t *c, const mb_results_t *base,
                              const mb_results_t *nw, const keyed_t *kn,
                              const char *field,
                              const mb_compare_options_t *o) {
  size_t nb = mb_results_count(base), nn = mb_results_count(nw);
  char *matched = calloc(nn ? nn : 1, 1);
  if (!matched)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_compare: out of memory");
  mb_status_t st = MB_OK;
  for (size_t i = 0; st == MB_OK && i < nb; i++) {
    const cJSON *b = mb__results_item(base, i);
    const char *key = mb__json_str(b, field);
    const keyed_t *hit = find_key(kn, nn, key);
    if (hit) matched[hit->index] = 1;
    st = add_row(c, key, b, hit ? mb__results_item(nw, hit->index) : NULL, o);
  }
  for (size_t i = 0; st == MB_OK && i < nn; i++)
    if (!matched[i]) {
      const cJSON *n = mb__results_item(nw, i);
      st = add_row(c, mb__json_str(n, field), NULL, n, o);
    }
  free(matched);
  return st;
}

mb_status_t mb__compare_options_in(const char *fn,
                                   const mb_compare_options_t *given,
                                   mb_compare_options_t *out) {
  *out = (mb_compare_options_t)MB_COMPARE_OPTIONS_INIT;
  mb_status_t st = MB_OK;
  if (given) st = mb__struct_in(MB__STRUCT_COMPARE_OPTIONS, fn, given, out);
  if (st != MB_OK) return st;
  if (!isfinite(out->threshold_pct) || out->threshold_pct < 0)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: threshold_pct %g; expected a percentage >= 0", fn,
                    out->threshold_pct);
  if (!(out->alpha > 0 && out->alpha <= 1))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: alpha %g; expected a significance level in (0, 1], "
                    "e.g. 0.05",
                    fn, out->alpha);
  if (out->match_problem != 0 && out->match_problem != 1)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: match_problem %d; valid: 0 (by id), 1 (by problem)",
                    fn, out->match_problem);
  return MB_OK;
}

mb_status_t mb_results_compare(const mb_results_t *base,
                               const mb_results_t *new_set,
                               const mb_compare_options_t *opts,
                               mb_comparison_t **out) {
  if (!base || !new_set || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_results_compare: NULL argument");
  *out = NULL;
  mb_compare_options_t full;
  const mb_compare_options_t *o = &full;
  mb_status_t st = mb__compare_options_in("mb_results_compare", opts, &full);
  if (st != MB_OK) return st;
  const char *field = o->match_problem ? "problem" : "id";
  keyed_t *kb = NULL, *kn = NULL;
  if ((st = key_index(base, field, &kb)) != MB_OK) return st;
  if ((st = key_index(new_set, field, &kn)) != MB_OK) {
    free(kb);
    return st;
  }
  mb_comparison_t *c = calloc(1, sizeof *c);
  size_t cap = mb_results_count(base) + mb_results_count(new_set);
  if (c) c->rows = calloc(cap ? cap : 1, sizeof *c->rows);
  if (!c || !c->rows)
    st = mb__fail(MB_ERR_NO_MEMORY, "mb_results_compare: out of memory");
  else
    st = build_rows(c, base, new_set, kn, field, o);
  free(kb);
  free(kn);
  if (st != MB_OK) {
    mb_comparison_destroy(c);
    return st;
  }
  *out = c;
  return MB_OK;
}

void mb_comparison_destroy(mb_comparison_t *cmp) {
  if (!cmp) return;
  for (size_t i = 0; cmp->rows && i < cmp->count; i++)
    free((char *)cmp->rows[i].id);
  free(cmp->rows);
  free(cmp);
}

size_t mb_comparison_count(const mb_comparison_t *cmp) {
  return cmp ? cmp->count : 0;
}

mb_status_t mb_comparison_row(const mb_comparison_t *cmp, size_t index,
                              mb_compare_row_t *out) {
  if (!cmp || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_comparison_row: NULL argument");
  if (index >= cmp->count)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_comparison_row: index %zu, the comparison has %zu rows",
                    index, cmp->count);
  return mb__struct_out(MB__STRUCT_COMPARE_ROW, "mb_comparison_row",
                        &cmp->rows[index], out);
}

size_t mb_comparison_regressions(const mb_comparison_t *cmp) {
  return cmp ? cmp->regressions : 0;
}

double mb_comparison_geomean(const mb_comparison_t *cmp, size_t *count) {
  if (count) *count = cmp ? cmp->ratios : 0;
  return cmp && cmp->ratios ? exp(cmp->log_ratio_sum / (double)cmp->ratios)
                            : NAN;
}
