/* Internal: the HTML report (mb_report_html) — the loaded inputs as one
 * flat model the charts read, and one writer per chart. Each writer puts
 * its <svg> elements (each with xmlns, so one alone is a valid SVG file)
 * into the buffer; `y`, when not NULL, stacks them inside one outer SVG
 * document (a standalone plot): each gets y="*y" and *y grows by its
 * height, *w by the widest. */
#ifndef MB_LIB_REPORT_HTML_H
#define MB_LIB_REPORT_HTML_H

#include <cjson/cJSON.h>

#include "report/svg.h"

/* One result, with what the charts need read out once. */
typedef struct mb__hres {
  const cJSON *r;
  size_t input; /* which file it came from */
  const char *id, *op, *dtype, *status, *recipe, *impl;
  char device[160]; /* the device key: backend:index[@host] */
  char shape[128];  /* "256x256x256", or the result's shape_name */
  char column[192]; /* the heatmap's column: [model/]shape */
  /* With several files, the file's name (else ""): a run's recipes and
   * shape series stay apart from another run's on the same device. */
  const char *run;
  char row[192]; /* the heatmap's row: recipe [file] */
  double size;   /* the product of the dims: the shapes' order */
  double median_ns, flop, bytes, intensity, speedup;
} mb__hres_t;

typedef struct mb__hdev {
  char key[160];
  const cJSON *dev; /* its devices[] entry; NULL when no input has it */
} mb__hdev_t;

typedef struct mb__html {
  const mb_report_html_options_t *opts;
  mb_compare_options_t compare; /* opts->compare, read and checked */
  const char *const *paths;
  mb_results_t **sets;
  size_t num_sets;
  mb__hres_t *res;
  size_t num_res;
  mb__hdev_t *devs; /* in order of first result */
  size_t num_devs;
  mb_comparison_t *cmp; /* two inputs: the second against the first */
  /* Why two inputs could not be compared (a key twice in one file): the
   * rest of the report is still written, this said in its place. */
  char cmp_error[512];
} mb__html_t;

/* html_model.c: reads the files into m (m->opts and paths set by the
 * caller); errors name the file. */
mb_status_t mb__html_load(mb__html_t *m, const char *const *paths,
                          size_t count);
void mb__html_free(mb__html_t *m);
/* A result's one-line summary for its tooltip (data-tip), escaped. */
void mb__html_tip(mb__sbuf_t *b, const mb__hres_t *r);
/* ok, timed: a result a chart can place. */
int mb__html_timed(const mb__hres_t *r);

/* The chart writers; each returns how many SVGs it wrote (0: nothing to
 * draw — the caller says so in words). */
size_t mb__html_roofline(mb__sbuf_t *b, const mb__html_t *m, double *y,
                         double *w);
size_t mb__html_heatmap(mb__sbuf_t *b, const mb__html_t *m, double *y,
                        double *w);
size_t mb__html_shapes(mb__sbuf_t *b, const mb__html_t *m, double *y,
                       double *w);
size_t mb__html_compare_chart(mb__sbuf_t *b, const mb__html_t *m, double *y,
                              double *w);
/* html_compare.c: the comparison's table and geometric mean (HTML). */
void mb__html_compare_table(mb__sbuf_t *b, const mb__html_t *m);
/* html_dist.c: each result's sample distribution and correctness. */
void mb__html_distributions(mb__sbuf_t *b, const mb__html_t *m);
/* html_table.c: the table of every result, and the run's metadata. */
void mb__html_results_table(mb__sbuf_t *b, const mb__html_t *m);
void mb__html_meta(mb__sbuf_t *b, const mb__html_t *m);

/* html_names.c: the distinct names (ops, dtypes, shapes, recipe rows) a
 * chart meets, in order of first appearance, each with a number (a shape's
 * size, a dtype's peak). A chart sizes it by its results (every name comes
 * from one), so no name is ever left out or merged with another. */
typedef struct mb__names {
  const char **name; /* borrowed from the results */
  double *value;
  size_t n, cap;
} mb__names_t;
/* Room for cap names; 0 when out of memory. */
int mb__names_init(mb__names_t *l, size_t cap);
void mb__names_free(mb__names_t *l);
/* name's index, added with `value` when new (cap when full: only a caller
 * that sized the list too small sees it). */
size_t mb__names_index(mb__names_t *l, const char *name, double value);
/* Orders the names by value, stable (shapes by size). */
void mb__names_sort(mb__names_t *l);

/* Opens a chart's <svg> (svg.h) and moves the stack (see above). */
void mb__html_svg_open(mb__sbuf_t *b, const char *cls, double width,
                       double height, double *y, double *w);

#endif
