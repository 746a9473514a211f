/* Comparing two result sets: match results by key, then judge each pair by
 * its change in median against the noise of both runs and the threshold.
 *
 * The noise of one run is a robust relative spread: (IQR / 1.349) / median
 * when the IQR is known from at least 5 samples (IQR / 1.349 estimates the
 * standard deviation of a normal distribution, and unlike the stdev it is
 * not inflated by a few preempted samples), else stats.rel_stdev. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/results_internal.h"

struct mb_comparison {
  mb_compare_row_t *rows; /* row ids are owned (copied) */
  size_t count;
  size_t regressions;
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

/* ---- one result, as the verdict sees it --------------------------------- */

typedef struct side {
  int ok;        /* status "ok" */
  int bad;       /* status "failed", or checked and wrong */
  int wrong;     /* checked and wrong */
  double median; /* NAN unless ok */
  double noise;  /* NAN when unknown */
} side_t;

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
  side_t s = {0, 0, 0, NAN, NAN};
  s.ok = status && strcmp(status, "ok") == 0;
  s.wrong = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(corr, "checked")) &&
            !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(corr, "pass"));
  s.bad = (status && strcmp(status, "failed") == 0) || s.wrong;
  if (s.ok) {
    s.median = mb__json_num(stats, "median_ns");
    s.noise = run_noise(stats, s.median);
  }
  return s;
}

/* The rule, in order (docs/measurement.md, "Comparing runs"). */
static mb_verdict_t judge(const side_t *b, const side_t *n, double t,
                          double *ratio) {
  *ratio = NAN;
  if (!b->ok) return MB_VERDICT_SKIPPED;
  /* Wrong in both is no new failure: the times are still compared. */
  if (n->bad && !(b->wrong && n->wrong)) return MB_VERDICT_FAILED;
  if (!n->ok || !(b->median > 0) || !(n->median > 0)) return MB_VERDICT_SKIPPED;
  *ratio = n->median / b->median;
  double d = *ratio - 1;
  /* Unknown noise (one sample) counts as none: the threshold still holds. */
  double nb = isfinite(b->noise) ? b->noise : 0;
  double nn = isfinite(n->noise) ? n->noise : 0;
  double noise = sqrt(nb * nb + nn * nn);
  /* Within the threshold is SAME whatever the noise (a run compared with
   * itself is SAME); beyond it, a change the noise could explain is NOISY:
   * reported, never gating. */
  if (fabs(d) <= t) return MB_VERDICT_SAME;
  if (fabs(d) <= noise) return MB_VERDICT_NOISY;
  return d < 0 ? MB_VERDICT_FASTER : MB_VERDICT_SLOWER;
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
                           const cJSON *n, double t) {
  mb_compare_row_t row = MB_COMPARE_ROW_INIT;
  side_t sb = b ? read_side(b) : (side_t){0, 0, 0, NAN, NAN};
  side_t sn = n ? read_side(n) : (side_t){0, 0, 0, NAN, NAN};
  row.base_ns = sb.median;
  row.new_ns = sn.median;
  row.base_noise = sb.noise;
  row.new_noise = sn.noise;
  row.ratio = NAN;
  row.verdict = !n   ? MB_VERDICT_MISSING
                : !b ? MB_VERDICT_NEW
                     : judge(&sb, &sn, t, &row.ratio);
  if (!(row.id = mb__strdup(key)))
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_compare: out of memory");
  c->rows[c->count++] = row;
  c->regressions +=
      row.verdict == MB_VERDICT_SLOWER || row.verdict == MB_VERDICT_FAILED;
  return MB_OK;
}

static mb_status_t build_rows(mb_comparison_t *c, const mb_results_t *base,
                              const mb_results_t *nw, const keyed_t *kn,
                              const char *field, double t) {
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
    st = add_row(c, key, b, hit ? mb__results_item(nw, hit->index) : NULL, t);
  }
  for (size_t i = 0; st == MB_OK && i < nn; i++)
    if (!matched[i]) {
      const cJSON *n = mb__results_item(nw, i);
      st = add_row(c, mb__json_str(n, field), NULL, n, t);
    }
  free(matched);
  return st;
}

static mb_status_t check_options(const mb_compare_options_t *o) {
  if (!isfinite(o->threshold_pct) || o->threshold_pct < 0)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_results_compare: threshold_pct %g; expected a "
                    "percentage >= 0",
                    o->threshold_pct);
  if (o->match_problem != 0 && o->match_problem != 1)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_results_compare: match_problem %d; valid: 0 (by id), "
                    "1 (by problem)",
                    o->match_problem);
  return MB_OK;
}

mb_status_t mb_results_compare(const mb_results_t *base,
                               const mb_results_t *new_set,
                               const mb_compare_options_t *opts,
                               mb_comparison_t **out) {
  if (!base || !new_set || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_results_compare: NULL argument");
  *out = NULL;
  mb_compare_options_t full = MB_COMPARE_OPTIONS_INIT;
  const mb_compare_options_t *o = &full;
  mb_status_t st = MB_OK;
  if (opts)
    st = mb__struct_in(MB__STRUCT_COMPARE_OPTIONS, "mb_results_compare", opts,
                       &full);
  if (st == MB_OK) st = check_options(o);
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
    st = build_rows(c, base, new_set, kn, field, o->threshold_pct / 100);
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
