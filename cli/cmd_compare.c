/* mbench compare BASE NEW: one row per result, a verdict for each, and an
 * exit status a CI job can gate on (1: something got slower or broke, or
 * is in a state --fail-on names). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define O(field) offsetof(cli_opts_t, field)

static const opt_def_t k_compare_opts[] = {
    {"threshold", 0, OPT_DOUBLE, O(threshold), "PCT",
     "a change below PCT percent is SAME (5)"},
    {"alpha", 0, OPT_DOUBLE, O(alpha), "P",
     "significance level of the Mann-Whitney U test (0.05): a change beyond "
     "the threshold with p >= P is NOISY"},
    {"fail-on", 0, OPT_STR, O(fail_on), "LIST",
     "also exit 1 when a result is in one of these states, comma-separated: "
     "missing, skipped, noisy"},
    {"by", 0, OPT_STR, O(by), "id|problem",
     "match results by id (default), or by problem to compare two devices, "
     "backends or implementations"},
    {"format", 'f', OPT_STR, O(format), "table|md|json",
     "output format (table; with -o: from the extension)"},
    {"output", 'o', OPT_STR, O(output), "FILE",
     "write the comparison to FILE (the summary still goes to stdout)"},
    {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"},
};
#define NUM_COMPARE_OPTS (sizeof k_compare_opts / sizeof k_compare_opts[0])

static const cli_command_t k_compare_command = {
    "compare", k_compare_opts, NUM_COMPARE_OPTS,
    "usage: mbench compare BASE NEW [options]\n\n"
    "Compares two result files (JSON documents or .jsonl streams) result\n"
    "by result: the ratio of the medians against the threshold, and a\n"
    "Mann-Whitney U test on the two runs' samples (p < alpha: the change\n"
    "is real; docs/measurement.md). Verdicts: SAME, FASTER, SLOWER, NOISY,\n"
    "FAILED, SKIPPED, MISSING (base only), NEW (new only). Then a summary\n"
    "and the geometric mean of the ratios.\n\n"
    "exit status: 0 no regression, 1 a result is SLOWER or FAILED (or in a\n"
    "--fail-on state), 2 usage or input error.\n\noptions:\n"};

typedef enum out_format { OUT_TABLE, OUT_MD, OUT_JSON } out_format_t;

static const struct {
  const char *name;
  out_format_t format;
} k_formats[] = {{"table", OUT_TABLE},
                 {"md", OUT_MD},
                 {"markdown", OUT_MD},
                 {"json", OUT_JSON}};

/* The verdicts --fail-on may add to SLOWER and FAILED. */
static const struct {
  const char *name;
  mb_verdict_t verdict;
} k_fail_on[] = {{"missing", MB_VERDICT_MISSING},
                 {"skipped", MB_VERDICT_SKIPPED},
                 {"noisy", MB_VERDICT_NOISY}};
#define NUM_FAIL_ON (sizeof k_fail_on / sizeof k_fail_on[0])

/* What was asked, checked. */
typedef struct request {
  const char *base, *new_path, *output;
  mb_compare_options_t opts;
  out_format_t format;
  unsigned fail_on; /* 1u << verdict for each verdict --fail-on named */
} request_t;

/* Everything the printers need, loaded. */
typedef struct comparison_view {
  const request_t *req;
  const mb_comparison_t *cmp;
  size_t counts[MB_VERDICT_SKIPPED + 1];
} view_t;

/* Both runs' noise as the verdict combines it; NAN unless both known. */
static double combined_noise(const mb_compare_row_t *r) {
  return sqrt(r->base_noise * r->base_noise + r->new_noise * r->new_noise);
}

/* ---- table and markdown ------------------------------------------------- */

typedef struct column {
  const char *title;
  int width; /* negative: left-aligned; the id column's is computed */
} column_t;

static const column_t k_columns[] = {{"id", 0},      {"base", 11}, {"new", 11},
                                     {"ratio", 7},   {"noise", 8}, {"p", 7},
                                     {"verdict", -7}};
#define NUM_COLUMNS (sizeof k_columns / sizeof k_columns[0])

/* Small p-values as a bound: their digits say nothing a CI log needs (the
 * JSON output has them all). */
static void format_p(double p, char *buf, size_t cap) {
  if (!isfinite(p))
    snprintf(buf, cap, "-");
  else if (p < 0.001)
    snprintf(buf, cap, "<0.001");
  else
    snprintf(buf, cap, "%.3f", p);
}

/* Characters on screen, not bytes: "±" is two bytes of UTF-8. */
static int display_width(const char *s) {
  int n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static void put_row(FILE *f, out_format_t fmt, int id_width,
                    const char *const *cells) {
  for (size_t i = 0; i < NUM_COLUMNS; i++) {
    if (fmt == OUT_MD) {
      fprintf(f, "| %s ", cells[i]);
      continue;
    }
    int w = i == 0 ? -id_width : k_columns[i].width;
    int pad = (w < 0 ? -w : w) - display_width(cells[i]);
    if (pad < 0) pad = 0;
    fprintf(f, "%s%*s%s%*s", i ? "  " : "", w > 0 ? pad : 0, "", cells[i],
            w < 0 && i + 1 < NUM_COLUMNS ? pad : 0, "");
  }
  fputs(fmt == OUT_MD ? "|\n" : "\n", f);
}

static void put_text(FILE *f, const view_t *v) {
  out_format_t fmt = v->req->format;
  size_t n = mb_comparison_count(v->cmp);
  int id_width = 2;
  for (size_t i = 0; i < n; i++) {
    mb_compare_row_t r = MB_COMPARE_ROW_INIT;
    mb_comparison_row(v->cmp, i, &r);
    if ((int)strlen(r.id) > id_width) id_width = (int)strlen(r.id);
  }
  const char *titles[NUM_COLUMNS];
  for (size_t i = 0; i < NUM_COLUMNS; i++) titles[i] = k_columns[i].title;
  put_row(f, fmt, id_width, titles);
  if (fmt == OUT_MD) {
    for (size_t i = 0; i < NUM_COLUMNS; i++)
      fputs(k_columns[i].width <= 0 ? "|:---" : "|---:", f);
    fputs("|\n", f);
  }
  for (size_t i = 0; i < n; i++) {
    mb_compare_row_t r = MB_COMPARE_ROW_INIT;
    mb_comparison_row(v->cmp, i, &r);
    char base[32], nw[32], ratio[32], noise[32], p[32];
    mb_format_ns(r.base_ns, base, sizeof base);
    mb_format_ns(r.new_ns, nw, sizeof nw);
    snprintf(ratio, sizeof ratio, isfinite(r.ratio) ? "%.3f" : "-", r.ratio);
    double cn = combined_noise(&r);
    snprintf(noise, sizeof noise, isfinite(cn) ? "±%.1f%%" : "-", 100 * cn);
    format_p(r.p_value, p, sizeof p);
    const char *cells[NUM_COLUMNS] = {
        r.id, base, nw, ratio, noise, p, mb_verdict_name(r.verdict)};
    put_row(f, fmt, id_width, cells);
  }
}

/* ---- json --------------------------------------------------------------- */

static void put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* JSON has no NaN: unknown figures are null. */
static void put_json_number(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.15g", v);
  else
    fputs("null", f);
}

static void put_json(FILE *f, const view_t *v) {
  fputs("{\n  \"base\": ", f);
  put_json_string(f, v->req->base);
  fputs(",\n  \"new\": ", f);
  put_json_string(f, v->req->new_path);
  fputs(",\n  \"threshold_pct\": ", f);
  put_json_number(f, v->req->opts.threshold_pct);
  fputs(",\n  \"alpha\": ", f);
  put_json_number(f, v->req->opts.alpha);
  fprintf(f, ",\n  \"by\": \"%s\",\n  \"rows\": [",
          v->req->opts.match_problem ? "problem" : "id");
  static const struct {
    const char *key;
    size_t offset;
  } k_numbers[] = {
      {"base_ns", offsetof(mb_compare_row_t, base_ns)},
      {"new_ns", offsetof(mb_compare_row_t, new_ns)},
      {"ratio", offsetof(mb_compare_row_t, ratio)},
      {"base_noise", offsetof(mb_compare_row_t, base_noise)},
      {"new_noise", offsetof(mb_compare_row_t, new_noise)},
      {"p_value", offsetof(mb_compare_row_t, p_value)},
  };
  for (size_t i = 0; i < mb_comparison_count(v->cmp); i++) {
    mb_compare_row_t r = MB_COMPARE_ROW_INIT;
    mb_comparison_row(v->cmp, i, &r);
    fputs(i ? ",\n    {\"id\": " : "\n    {\"id\": ", f);
    put_json_string(f, r.id);
    for (size_t k = 0; k < sizeof k_numbers / sizeof k_numbers[0]; k++) {
      fprintf(f, ", \"%s\": ", k_numbers[k].key);
      put_json_number(
          f, *(const double *)((const char *)&r + k_numbers[k].offset));
    }
    fprintf(f, ", \"verdict\": \"%s\"}", mb_verdict_name(r.verdict));
  }
  fputs("\n  ],\n  \"counts\": {", f);
  for (int k = 0; k <= MB_VERDICT_SKIPPED; k++)
    fprintf(f, "%s\"%s\": %zu", k ? ", " : "", mb_verdict_name(k),
            v->counts[k]);
  size_t timed;
  double geomean = mb_comparison_geomean(v->cmp, &timed);
  fputs("},\n  \"geomean_ratio\": ", f);
  put_json_number(f, geomean);
  fprintf(f, ",\n  \"geomean_count\": %zu,\n  \"regressions\": %zu\n}\n", timed,
          mb_comparison_regressions(v->cmp));
}

/* ---- the command -------------------------------------------------------- */

static void print_summary(FILE *f, const view_t *v) {
  const size_t *c = v->counts;
  size_t both = c[MB_VERDICT_SAME] + c[MB_VERDICT_FASTER] +
                c[MB_VERDICT_SLOWER] + c[MB_VERDICT_NOISY] +
                c[MB_VERDICT_FAILED] + c[MB_VERDICT_SKIPPED];
  fprintf(f,
          "%zu compared: %zu faster, %zu slower, %zu same, %zu noisy, "
          "%zu failed, %zu skipped; %zu only in base, %zu only in new\n",
          both, c[MB_VERDICT_FASTER], c[MB_VERDICT_SLOWER], c[MB_VERDICT_SAME],
          c[MB_VERDICT_NOISY], c[MB_VERDICT_FAILED], c[MB_VERDICT_SKIPPED],
          c[MB_VERDICT_MISSING], c[MB_VERDICT_NEW]);
  size_t timed;
  double geomean = mb_comparison_geomean(v->cmp, &timed);
  if (timed)
    fprintf(f, "geomean ratio new/base: %.3f over %zu result%s timed in both\n",
            geomean, timed, timed == 1 ? "" : "s");
  else
    fputs("geomean ratio new/base: - (no result timed in both)\n", f);
}

/* --fail-on's comma list into req->fail_on. */
static int parse_fail_on(const char *list, request_t *req) {
  for (const char *p = list;; p++) {
    size_t len = strcspn(p, ","), i = 0;
    while (i < NUM_FAIL_ON && !(strlen(k_fail_on[i].name) == len &&
                                strncmp(k_fail_on[i].name, p, len) == 0))
      i++;
    if (i == NUM_FAIL_ON) {
      char valid[128] = "";
      for (size_t k = 0; k < NUM_FAIL_ON; k++)
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s",
                 k ? ", " : "", k_fail_on[k].name);
      return cli_error("compare",
                       "--fail-on \"%.*s\": valid: %s (a comma list)", (int)len,
                       p, valid);
    }
    req->fail_on |= 1u << k_fail_on[i].verdict;
    p += len;
    if (!*p) return 0;
  }
}

/* Rows in a verdict --fail-on named. */
static size_t fail_on_count(const view_t *v) {
  size_t n = 0;
  for (size_t i = 0; i < NUM_FAIL_ON; i++)
    if (v->req->fail_on & (1u << k_fail_on[i].verdict))
      n += v->counts[k_fail_on[i].verdict];
  return n;
}

static int parse_request(int argc, char **argv, request_t *req) {
  cli_opts_t o;
  const char *words[2];
  size_t nwords;
  cli_init_opts(&o);
  /* The library's defaults, so they are written once. */
  const mb_compare_options_t defaults = MB_COMPARE_OPTIONS_INIT;
  o.threshold = defaults.threshold_pct;
  o.alpha = defaults.alpha;
  o.by = NULL;
  const int parsed = cli_parse_command(&k_compare_command, argc, argv, 2, &o,
                                       words, 2, &nwords);
  if (parsed != 0) return parsed < 0 ? EXIT_USAGE : -1;
  if (nwords != 2)
    return cli_error("compare",
                     "needs two result files, BASE and NEW (got %zu); see "
                     "mbench compare --help",
                     nwords);
  *req = (request_t){words[0], words[1], o.output, defaults, OUT_TABLE, 0};
  req->opts.threshold_pct = o.threshold;
  req->opts.alpha = o.alpha; /* checked by mb_results_compare */
  if (o.fail_on && parse_fail_on(o.fail_on, req) != 0) return EXIT_USAGE;
  if (o.by && strcmp(o.by, "problem") == 0)
    req->opts.match_problem = 1;
  else if (o.by && strcmp(o.by, "id") != 0)
    return cli_error("compare", "--by \"%s\": valid: id, problem", o.by);
  const char *fname = o.format   ? o.format
                      : o.output ? cli_format_from_extension(o.output)
                                 : "table";
  size_t i = 0;
  while (i < sizeof k_formats / sizeof k_formats[0] &&
         strcmp(k_formats[i].name, fname) != 0)
    i++;
  if (i == sizeof k_formats / sizeof k_formats[0])
    return cli_error("compare", "--format \"%s\": valid: table, md, json",
                     fname);
  req->format = k_formats[i].format;
  return 0;
}

static int write_output(const view_t *v) {
  FILE *f = v->req->output ? fopen(v->req->output, "w") : stdout;
  if (!f)
    return cli_error("compare", "cannot write %s: %s", v->req->output,
                     strerror(errno));
  if (v->req->format == OUT_JSON)
    put_json(f, v);
  else
    put_text(f, v);
  if (v->req->format != OUT_JSON && !v->req->output) print_summary(f, v);
  int bad = ferror(f);
  if (v->req->output) bad |= fclose(f) != 0;
  if (bad)
    return cli_error("compare", "cannot write %s",
                     v->req->output ? v->req->output : "to stdout");
  /* The verdict in words wherever the report itself went elsewhere. */
  if (v->req->output) print_summary(stdout, v);
  return 0;
}

int cmd_compare(int argc, char **argv) {
  request_t req;
  int rc = parse_request(argc, argv, &req);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  mb_results_t *base = NULL, *nw = NULL;
  mb_comparison_t *cmp = NULL;
  if (mb_results_load(req.base, &base) != MB_OK ||
      mb_results_load(req.new_path, &nw) != MB_OK ||
      mb_results_compare(base, nw, &req.opts, &cmp) != MB_OK) {
    rc = cli_error("compare", "%s", mb_error_last());
  } else {
    cli_results_note("compare", base);
    cli_results_note("compare", nw);
    view_t v = {&req, cmp, {0}};
    for (size_t i = 0; i < mb_comparison_count(cmp); i++) {
      mb_compare_row_t r = MB_COMPARE_ROW_INIT;
      if (mb_comparison_row(cmp, i, &r) == MB_OK) v.counts[r.verdict]++;
    }
    /* A gate that compared nothing (an empty NEW, ids that never match)
     * must not pass. */
    const size_t only = v.counts[MB_VERDICT_MISSING] + v.counts[MB_VERDICT_NEW];
    rc = mb_comparison_count(cmp) > only
             ? write_output(&v)
             : cli_error("compare",
                         "nothing to compare: %s has %zu result%s, %s %zu, "
                         "none under the same id%s",
                         req.base, mb_results_count(base),
                         mb_results_count(base) == 1 ? "" : "s", req.new_path,
                         mb_results_count(nw),
                         req.opts.match_problem ? ""
                                                : " (--by problem "
                                                  "matches across "
                                                  "devices)");
    size_t flagged = fail_on_count(&v);
    /* Say why a run with nothing SLOWER or FAILED fails the job. */
    if (rc == 0 && flagged)
      fprintf(stderr,
              "mbench compare: --fail-on: %zu result%s in a listed "
              "state\n",
              flagged, flagged == 1 ? "" : "s");
    if (rc == 0 && mb_comparison_regressions(cmp) + flagged > 0)
      rc = EXIT_BENCH_FAILED;
  }
  mb_comparison_destroy(cmp);
  mb_results_destroy(nw);
  mb_results_destroy(base);
  return rc;
}
