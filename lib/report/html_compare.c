/* The comparison of two runs (mb_results_compare, as `mbench compare`
 * judges them): per matched result the ratio new/base with its verdict and
 * the Mann-Whitney p-value, sorted by ratio, as a table and as bars on a
 * log scale around 1 (left of the line: faster), and the geometric mean. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench.h"
#include "report/html.h"

/* A ratio a log scale can place (a median of 0 makes one 0 or inf). */
static int placeable(double ratio) {
  return isfinite(ratio) && ratio > 0;
}

static int by_ratio(const void *a, const void *b) {
  const mb_compare_row_t *x = a, *y = b;
  int fx = placeable(x->ratio), fy = placeable(y->ratio);
  if (fx != fy) return fx ? -1 : 1;
  if (!fx) return 0;
  return (x->ratio > y->ratio) - (x->ratio < y->ratio);
}

/* The comparison's rows sorted by ratio (those without one last); the
 * caller frees. NULL when none, or out of memory (b->oom set). */
static mb_compare_row_t *sorted_rows(mb__sbuf_t *b, const mb__html_t *m,
                                     size_t *n) {
  *n = m->cmp ? mb_comparison_count(m->cmp) : 0;
  mb_compare_row_t *rows = *n ? calloc(*n, sizeof *rows) : NULL;
  if (!rows) {
    b->oom |= *n > 0; /* the report fails as out of memory */
    *n = 0;
    return NULL;
  }
  for (size_t i = 0; i < *n; i++) {
    rows[i] = (mb_compare_row_t)MB_COMPARE_ROW_INIT;
    mb_comparison_row(m->cmp, i, &rows[i]);
  }
  qsort(rows, *n, sizeof *rows, by_ratio);
  return rows;
}

static void tip(mb__sbuf_t *b, const mb_compare_row_t *r) {
  char base[32], nw[32], line[160];
  mb_format_ns(r->base_ns, base, sizeof base);
  mb_format_ns(r->new_ns, nw, sizeof nw);
  mb__sbuf_esc(b, r->id);
  snprintf(line, sizeof line, " | base %s | new %s | ratio %.3f | %s | p %.3g",
           base, nw, r->ratio, mb_verdict_name(r->verdict), r->p_value);
  mb__sbuf_esc(b, line);
}

void mb__html_compare_table(mb__sbuf_t *b, const mb__html_t *m) {
  size_t n, timed;
  mb_compare_row_t *rows = sorted_rows(b, m, &n);
  double g = mb_comparison_geomean(m->cmp, &timed);
  mb__sbuf_put(b, "<p>Base ");
  mb__sbuf_esc(b, m->paths[0]);
  mb__sbuf_put(b, ", new ");
  mb__sbuf_esc(b, m->paths[1]);
  char gm[32]; /* the digits `mbench compare` prints */
  snprintf(gm, sizeof gm, isfinite(g) ? "%.3f" : "-", g);
  mb__sbuf_printf(b,
                  ". Geometric mean of new/base: <b id=\"mb-geomean\">%s"
                  "</b> over %zu result%s timed in both (below 1: new is "
                  "faster).</p>\n",
                  gm, timed, timed == 1 ? "" : "s");
  mb__html_compare_chart(b, m, NULL, NULL);
  mb__sbuf_put(b,
               "<table id=\"mb-compare-table\" class=\"mb-sortable\"><thead>"
               "<tr><th>id</th><th>base</th><th>new</th><th>ratio</th>"
               "<th>p</th><th>verdict</th></tr></thead><tbody>\n");
  for (size_t i = 0; i < n; i++) {
    const mb_compare_row_t *r = &rows[i];
    char base[32], nw[32];
    mb_format_ns(r->base_ns, base, sizeof base);
    mb_format_ns(r->new_ns, nw, sizeof nw);
    mb__sbuf_put(b, "<tr data-id=\"");
    mb__sbuf_esc(b, r->id);
    mb__sbuf_put(b, "\"><td>");
    mb__sbuf_esc(b, r->id);
    mb__sbuf_printf(b,
                    "</td><td class=\"n\" data-v=\"%.6g\">%s</td><td "
                    "class=\"n\" data-v=\"%.6g\">%s</td>",
                    r->base_ns, base, r->new_ns, nw);
    mb__sbuf_printf(
        b, isfinite(r->ratio) ? "<td class=\"n\">%.3f</td>" : "<td>-</td>",
        r->ratio);
    mb__sbuf_printf(
        b, isfinite(r->p_value) ? "<td class=\"n\">%.3g</td>" : "<td>-</td>",
        r->p_value);
    mb__sbuf_printf(b, "<td class=\"mb-verdict\">%s</td></tr>\n",
                    mb_verdict_name(r->verdict));
  }
  mb__sbuf_put(b, "</tbody></table>\n");
  free(rows);
}

size_t mb__html_compare_chart(mb__sbuf_t *b, const mb__html_t *m, double *y,
                              double *w) {
  size_t n, bars = 0;
  mb_compare_row_t *rows = sorted_rows(b, m, &n);
  double lo = 1, hi = 1;
  while (bars < n && placeable(rows[bars].ratio)) {
    lo = fmin(lo, rows[bars].ratio);
    hi = fmax(hi, rows[bars].ratio);
    bars++;
  }
  if (!bars) {
    free(rows);
    return 0;
  }
  const double bh = 12;
  const mb__frame_t f = {20, 40, 560, bh * (double)bars};
  mb__logaxis_t x = mb__logaxis(lo, hi, f.left, f.left + f.width);
  mb__html_svg_open(b, "mb-compare", f.left + f.width + 20,
                    f.top + f.height + 40, y, w);
  mb__sbuf_put(b, ">");
  size_t timed;
  char title[96];
  snprintf(title, sizeof title,
           "new/base, %zu results (left of 1: faster); geomean %.3f", bars,
           mb_comparison_geomean(m->cmp, &timed));
  mb__svg_text(b, f.left, 16, "start", "mb-title", title);
  mb__svg_axes(b, &f, &x, NULL, NULL, NULL);
  const double one = mb__logaxis_px(&x, 1);
  for (size_t i = 0; i < bars; i++) {
    const mb_compare_row_t *r = &rows[i];
    double px = mb__logaxis_px(&x, r->ratio);
    const char *fill = r->verdict == MB_VERDICT_FASTER   ? "#2166ac"
                       : r->verdict == MB_VERDICT_SLOWER ? "#b2182b"
                                                         : "#999";
    mb__sbuf_printf(b,
                    "<rect class=\"mb-bar\" x=\"%.1f\" y=\"%.1f\" "
                    "width=\"%.1f\" height=\"%.0f\" fill=\"%s\" data-id=\"",
                    fmin(px, one), f.top + bh * (double)i,
                    fmax(fabs(px - one), 1), bh - 2, fill);
    mb__sbuf_esc(b, r->id);
    mb__sbuf_put(b, "\" data-tip=\"");
    tip(b, r);
    mb__sbuf_put(b, "\"/>");
  }
  mb__sbuf_printf(b,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#000\"/></svg>\n",
                  one, one, f.top, f.top + f.height);
  free(rows);
  return 1;
}
