/* mbench report FILE... -o OUT: the HTML report of result files
 * (mb_report_html), or with --plot one chart as SVG, or PNG through a
 * converter on PATH (report_png.c). */
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define O(field) offsetof(cli_opts_t, field)

static const opt_def_t k_report_opts[] = {
    {"output", 'o', OPT_STR, O(output), "FILE",
     "the report, .html (or with --plot .svg or .png); required, written "
     "whole or not at all"},
    {"title", 0, OPT_STR, O(title), "T",
     "the report's title (libmicrobench report)"},
    {"plot", 0, OPT_STR, O(plot), "roofline|heatmap|shapes|compare",
     "write that one chart alone, as SVG (or PNG, -o x.png, through "
     "rsvg-convert, chromium or ImageMagick's convert, the first on PATH)"},
    {"threshold", 0, OPT_DOUBLE, O(threshold), "PCT",
     "two inputs: a change below PCT percent is SAME (5), as mbench compare"},
    {"alpha", 0, OPT_DOUBLE, O(alpha), "P",
     "two inputs: significance level of the Mann-Whitney U test (0.05)"},
    {"by", 0, OPT_STR, O(by), "id|problem",
     "two inputs: match results by id (default) or by problem"},
    {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"},
};
#define NUM_REPORT_OPTS (sizeof k_report_opts / sizeof k_report_opts[0])

static const cli_command_t k_report_command = {
    "report", k_report_opts, NUM_REPORT_OPTS,
    "usage: mbench report FILE... -o OUT.html [--title T]\n"
    "       mbench report FILE... --plot CHART -o OUT.svg|OUT.png\n\n"
    "One self-contained HTML file from result files (JSON documents or\n"
    ".jsonl streams; nothing is fetched when it is opened): per device a\n"
    "roofline, the recipes' speedup heatmap, throughput by shape, each\n"
    "result's sample distribution and correctness, a sortable, filterable\n"
    "table of every result and the runs' metadata; given exactly two files,\n"
    "the second compared against the first as mbench compare judges it.\n"
    "docs/report.md says how to read each chart.\n\n"
    "exit status: 0 written, 2 usage or input error (nothing written).\n\n"
    "options:\n"};

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n >= t && strcmp(s + n - t, tail) == 0;
}

/* --plot ... -o x.png: the SVG and the converter's PNG in a directory of
 * our own beside the output (mkdtemp: no file of the user's is touched,
 * and two runs never share it), the PNG renamed into place (same file
 * system); the directory goes whatever happens. */
static int write_png(const char *const *paths, size_t count,
                     const mb_report_html_options_t *ho, const char *out) {
  if (mb_report_check_output(out, paths, count) != MB_OK)
    return cli_error("report", "%s", mb_error_last());
  int converter = cli_png_converter("report");
  if (converter < 0) return EXIT_USAGE;
  const char *slash = strrchr(out, '/');
  const int dir_len = slash ? (int)(slash - out) + 1 : 0;
  size_t n = strlen(out) + 64;
  char *dir = malloc(n), *svg = malloc(n), *png = malloc(n);
  int rc = dir && svg && png ? EXIT_OK : cli_error("report", "out of memory");
  if (rc == EXIT_OK) {
    snprintf(dir, n, "%.*s.mbench-report-XXXXXX", dir_len, out);
    if (!mkdtemp(dir))
      rc = cli_error("report",
                     "%s: cannot write beside it (its temporary directory): "
                     "%s",
                     out, strerror(errno));
  }
  if (rc == EXIT_OK) {
    snprintf(svg, n, "%s/plot.svg", dir);
    snprintf(png, n, "%s/plot.png", dir);
    if (mb_report_html(paths, count, ho, svg) != MB_OK)
      rc = cli_error("report", "%s", mb_error_last());
    else if ((rc = cli_svg_to_png("report", converter, svg, png)) == 0 &&
             rename(png, out) != 0)
      rc = cli_error("report", "cannot write %s: %s", out, strerror(errno));
    remove(svg);
    remove(png);
    rmdir(dir);
  }
  free(dir);
  free(svg);
  free(png);
  return rc;
}

static int parse(int argc, char **argv, cli_opts_t *o, const char **words,
                 size_t max_words, size_t *nwords, mb_report_html_options_t *ho,
                 mb_compare_options_t *cmp) {
  cli_init_opts(o);
  o->threshold = cmp->threshold_pct;
  o->alpha = cmp->alpha;
  o->by = NULL;
  const int parsed = cli_parse_command(&k_report_command, argc, argv, 2, o,
                                       words, max_words, nwords);
  if (parsed != 0) return parsed < 0 ? EXIT_USAGE : -1;
  if (*nwords == 0)
    return cli_error("report", "no input files; see mbench report --help");
  if (!o->output)
    return cli_error("report", "-o OUT is required (where the report goes)");
  if (ends_with(o->output, ".png") && !(o->plot && *o->plot))
    return cli_error("report",
                     "-o %s: a PNG is one chart: add --plot roofline|heatmap|"
                     "shapes|compare (the whole report is HTML)",
                     o->output);
  ho->title = o->title;
  ho->plot = o->plot;
  ho->compare = cmp;
  cmp->threshold_pct = o->threshold;
  cmp->alpha = o->alpha;
  if (o->by && strcmp(o->by, "problem") == 0)
    cmp->match_problem = 1;
  else if (o->by && strcmp(o->by, "id") != 0)
    return cli_error("report", "--by \"%s\": valid: id, problem", o->by);
  return 0;
}

int cmd_report(int argc, char **argv) {
  cli_opts_t o;
  size_t max_words = argc > 2 ? (size_t)argc - 2 : 1, nwords = 0;
  const char **words = calloc(max_words, sizeof *words);
  if (!words) return cli_error("report", "out of memory");
  mb_report_html_options_t ho = MB_REPORT_HTML_OPTIONS_INIT;
  mb_compare_options_t cmp = MB_COMPARE_OPTIONS_INIT;
  int rc = parse(argc, argv, &o, words, max_words, &nwords, &ho, &cmp);
  if (rc == 0 && ends_with(o.output, ".png"))
    rc = write_png(words, nwords, &ho, o.output);
  else if (rc == 0 && mb_report_html(words, nwords, &ho, o.output) != MB_OK)
    rc = cli_error("report", "%s", mb_error_last());
  if (rc == 0)
    printf("wrote %s from %zu file%s\n", o.output, nwords,
           nwords == 1 ? "" : "s");
  free(words);
  return rc < 0 ? EXIT_OK : rc;
}
