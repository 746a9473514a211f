/* libmicrobench — result files read back: load, merge, compare.
 *
 * A results file is the JSON document a report writes
 * (`microbench.results/1`) or the JSON-lines stream written beside it while
 * running (`<file>l`: a header line with schema, meta and devices, then one
 * result per line) — so a run that died can still be merged and compared.
 *
 * Threading: loaded sets and comparisons are independent objects; one
 * thread at a time per set (mb_results_json fills a cache in it). */
#ifndef MICROBENCH_RESULTS_H
#define MICROBENCH_RESULTS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mb_results mb_results_t;

/* Reads a results document or stream. Wrong schema, bad JSON or a result
 * without an id: MB_ERR_PARSE naming the file (and line, for streams). A
 * stream's last line cut short (no newline, not valid JSON: the run died
 * while writing it) is dropped without an error, and mb_results_note says
 * so. The caller owns *out. */
MB_API mb_status_t mb_results_load(const char *path, mb_results_t **out);
MB_API void mb_results_destroy(mb_results_t *set);
/* What reading the file dropped ("file:line: the last line is cut short
 * ..."), "" when nothing; owned by the set. */
MB_API const char *mb_results_note(const mb_results_t *set);
MB_API size_t mb_results_count(const mb_results_t *set);
/* Result i's id and its whole JSON object, unformatted (owned by the set,
 * valid until mb_results_destroy); NULL when index >= count. */
MB_API const char *mb_results_id(const mb_results_t *set, size_t index);
MB_API const char *mb_results_json(const mb_results_t *set, size_t index);

/* Combines result files (several hosts, devices or runs) into one document
 * at out_path: every result kept, in input order, each tagged with `source`
 * {file, host} (a result that has one, from a merged input, keeps it);
 * meta.merged_from lists the inputs' meta; devices are the union, each
 * tagged with its input's host. All inputs are read before anything is
 * written; the output is written to out_path.tmp and renamed. An output
 * that is one of the inputs, or an input given twice (the same file by
 * any path), is MB_ERR_INVALID_ARG before anything is read. */
MB_API mb_status_t mb_results_merge(const char *const *paths, size_t count,
                                    const char *out_path);
/* mb_results_merge with the results in the order of `names` (a plan's
 * entry names): each result goes where its "name" is in the list (results
 * of one name in input order), those whose name is not listed after them
 * all, in input order. How a sharded run's rank files are put back in the
 * plan's order. names NULL: input order, as mb_results_merge. */
MB_API mb_status_t mb_results_merge_ordered(const char *const *paths,
                                            size_t count,
                                            const char *const *names,
                                            size_t num_names,
                                            const char *out_path);

typedef enum mb_verdict {
  MB_VERDICT_SAME = 0,    /* the change is within the threshold */
  MB_VERDICT_FASTER = 1,  /* faster: significant (p < alpha) and beyond the
                             threshold */
  MB_VERDICT_SLOWER = 2,  /* slower, likewise: a regression */
  MB_VERDICT_NOISY = 3,   /* beyond the threshold, not significant: more
                             samples decide it */
  MB_VERDICT_FAILED = 4,  /* new is failed or wrong where base was ok: gates */
  MB_VERDICT_MISSING = 5, /* in base only */
  MB_VERDICT_NEW = 6,     /* in new only */
  MB_VERDICT_SKIPPED = 7  /* not ok in base (or skipped in both) */
} mb_verdict_t;

/* "SAME", "FASTER", ... Static. */
MB_API const char *mb_verdict_name(mb_verdict_t v);

typedef struct mb_compare_options {
  uint32_t struct_size;
  double threshold_pct; /* a change below this is SAME (5) */
  /* 0: match by id (op, shape, dtypes, variant, recipe, backend:device,
   * impl, cache); 1: by problem only (ignores backend, device, impl), to
   * compare two devices or backends. */
  int match_problem;
  /* Significance level of the Mann-Whitney U test on the two runs'
   * samples, in (0, 1] (0.05): a change beyond the threshold is FASTER or
   * SLOWER only when p < alpha, else NOISY. */
  double alpha;
} mb_compare_options_t;

#define MB_COMPARE_OPTIONS_INIT \
  { sizeof(mb_compare_options_t), 5.0, 0, 0.05 }

typedef struct mb_compare_row {
  uint32_t struct_size;
  const char *id;         /* the matching key */
  double base_ns, new_ns; /* medians; NAN when absent or not ok */
  /* Relative noise of each run, for the reader (the test on the samples
   * decides the verdict): (stats.iqr_ns / 1.349) / median with at least 5
   * samples, else stats.rel_stdev; NAN when unknown. */
  double base_noise, new_noise;
  double ratio; /* new / base (< 1: faster); NAN unless both timed */
  mb_verdict_t verdict;
  /* Two-sided p-value of the Mann-Whitney U test of base's samples against
   * new's (exact up to 40 samples in all, else the normal approximation
   * with tie correction); NAN unless both timed with samples. */
  double p_value;
} mb_compare_row_t;

#define MB_COMPARE_ROW_INIT \
  { sizeof(mb_compare_row_t), 0, 0.0, 0.0, 0.0, 0.0, 0.0, MB_VERDICT_SAME, 0.0 }

typedef struct mb_comparison mb_comparison_t;

/* Matches the two sets' results by key and judges each pair: a Mann-Whitney
 * U test on their samples for significance, the threshold for size (the
 * rule: docs/measurement.md). opts NULL: MB_COMPARE_OPTIONS_INIT. A key that
 * occurs twice in one set makes the match ambiguous: MB_ERR_INVALID_ARG
 * naming the key and the file. The caller owns *out; it does not refer to
 * the sets, which may be destroyed first. */
MB_API mb_status_t mb_results_compare(const mb_results_t *base,
                                      const mb_results_t *new_set,
                                      const mb_compare_options_t *opts,
                                      mb_comparison_t **out);
MB_API void mb_comparison_destroy(mb_comparison_t *cmp);
MB_API size_t mb_comparison_count(const mb_comparison_t *cmp);
/* Rows: base's results in its order, then those only in new. The row's id
 * is owned by the comparison. */
MB_API mb_status_t mb_comparison_row(const mb_comparison_t *cmp, size_t index,
                                     mb_compare_row_t *out);
/* Rows that gate: SLOWER or FAILED. Non-zero means "regressed". */
MB_API size_t mb_comparison_regressions(const mb_comparison_t *cmp);
/* The geometric mean of new / base over the rows that have a ratio (both
 * timed), the one-number summary of a whole run; *count (optional) gets
 * how many rows that is. NAN when none has. */
MB_API double mb_comparison_geomean(const mb_comparison_t *cmp, size_t *count);

typedef struct mb_report_html_options {
  uint32_t struct_size;
  const char *title; /* NULL: "libmicrobench report" */
  /* NULL or "": the whole HTML report; "roofline", "heatmap", "shapes",
   * "compare": that one chart alone as a standalone SVG document */
  const char *plot;
  /* Two inputs: how they are compared (NULL: MB_COMPARE_OPTIONS_INIT).
   * A pointer, not the struct, so that either can grow by appending. Bad
   * options are an error whatever the number of inputs. */
  const mb_compare_options_t *compare;
} mb_report_html_options_t;
#define MB_REPORT_HTML_OPTIONS_INIT \
  { sizeof(mb_report_html_options_t), NULL, NULL, NULL }
/* Reads the result files (documents or JSON-lines streams), writes out_path
 * atomically (tmp + rename). opts NULL: defaults. Errors name file/field.
 * The report is one self-contained HTML file (inline SVG charts, nothing
 * fetched; docs/report.md); with opts->plot one chart as an SVG file. An
 * output that is one of the inputs is MB_ERR_INVALID_ARG; so is a plot
 * with nothing to draw (compare without exactly two inputs, heatmap
 * without recipe results). */
MB_API mb_status_t mb_report_html(const char *const *paths, size_t count,
                                  const mb_report_html_options_t *opts,
                                  const char *out_path);

#ifdef __cplusplus
}
#endif
#endif
