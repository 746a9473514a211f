/* The speedup heatmap (torchao's view): a row per recipe, a column per
 * shape (model/shape), each cell the result's speedup_vs_baseline — blue
 * faster than the baseline, red slower, white the same (the colour is
 * log2 of the speedup, full at 2x either way) — with its value written in
 * it. With several files, a row per recipe and file. One per device with recipe
 * results. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/html.h"

static const double LEFT = 170, TOP = 110, CW = 64, CH = 24;

static int in_heatmap(const mb__hres_t *r, const char *device) {
  return r->recipe && isfinite(r->speedup) && strcmp(r->device, device) == 0;
}

static void colour(double speedup, char *buf, size_t cap) {
  double t = fmax(-1, fmin(1, log2(speedup)));
  /* white to #2166ac (faster) or #b2182b (slower) */
  const int to[2][3] = {{0x21, 0x66, 0xac}, {0xb2, 0x18, 0x2b}};
  const int *c = to[t < 0];
  double a = fabs(t);
  snprintf(buf, cap, "#%02x%02x%02x", (int)(255 + a * (c[0] - 255)),
           (int)(255 + a * (c[1] - 255)), (int)(255 + a * (c[2] - 255)));
}

/* Columns (in the order of their shapes' sizes, then of first appearance)
 * and rows (recipes, in order of appearance). */
static void axes(const mb__html_t *m, const char *device, mb__names_t *cols,
                 mb__names_t *rows) {
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    if (!in_heatmap(r, device)) continue;
    mb__names_index(cols, r->column, r->size);
    mb__names_index(rows, r->row, 0);
  }
  mb__names_sort(cols);
}

static void one_device(mb__sbuf_t *b, const mb__html_t *m, const char *device,
                       double *y, double *w) {
  mb__names_t rows, cols;
  const int ok =
      mb__names_init(&rows, m->num_res) && mb__names_init(&cols, m->num_res);
  if (!ok) {
    b->oom = 1;
    mb__names_free(&rows);
    return;
  }
  axes(m, device, &cols, &rows);
  const size_t nr = rows.n, nc = cols.n;
  /* The last column's label is rotated up and to the right: room for it
   * (the top margin's height, the label's run at 40 degrees). */
  mb__html_svg_open(b, "mb-heatmap", LEFT + CW * (double)nc + TOP * 1.2,
                    TOP + CH * (double)nr + 20, y, w);
  mb__sbuf_put(b, " data-device=\"");
  mb__sbuf_esc(b, device);
  mb__sbuf_put(b, "\">");
  char title[256];
  snprintf(title, sizeof title, "Speedup vs baseline, %s", device);
  mb__svg_text(b, 8, 16, "start", "mb-title", title);
  for (size_t c = 0; c < nc; c++) {
    mb__sbuf_printf(b, "<text transform=\"translate(%.1f %.1f) rotate(-40)\">",
                    LEFT + CW * ((double)c + 0.5), TOP - 6);
    mb__sbuf_esc(b, cols.name[c]);
    mb__sbuf_put(b, "</text>");
  }
  for (size_t r = 0; r < nr; r++)
    mb__svg_text(b, LEFT - 6, TOP + CH * ((double)r + 0.5) + 4, "end", NULL,
                 rows.name[r]);
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    if (!in_heatmap(r, device)) continue;
    double x = LEFT + CW * (double)mb__names_index(&cols, r->column, 0);
    double top = TOP + CH * (double)mb__names_index(&rows, r->row, 0);
    char fill[16], value[32];
    colour(r->speedup, fill, sizeof fill);
    snprintf(value, sizeof value, "%.2fx", r->speedup);
    mb__sbuf_printf(b,
                    "<rect class=\"mb-cell\" x=\"%.1f\" y=\"%.1f\" "
                    "width=\"%.0f\" height=\"%.0f\" fill=\"%s\" "
                    "data-speedup=\"%.6g\" data-recipe=\"",
                    x, top, CW - 1, CH - 1, fill, r->speedup);
    mb__sbuf_esc(b, r->recipe);
    mb__sbuf_put(b, "\" data-shape=\"");
    mb__sbuf_esc(b, r->column);
    mb__sbuf_put(b, "\" data-tip=\"");
    mb__html_tip(b, r);
    mb__sbuf_put(b, "\"/>");
    mb__sbuf_printf(b,
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                    "pointer-events=\"none\">%s</text>",
                    x + CW / 2, top + CH / 2 + 4, value);
  }
  mb__sbuf_put(b, "</svg>\n");
  mb__names_free(&rows);
  mb__names_free(&cols);
}

size_t mb__html_heatmap(mb__sbuf_t *b, const mb__html_t *m, double *y,
                        double *w) {
  size_t n = 0;
  for (size_t d = 0; d < m->num_devs; d++) {
    size_t i = 0;
    while (i < m->num_res && !in_heatmap(&m->res[i], m->devs[d].key)) i++;
    if (i == m->num_res) continue;
    one_device(b, m, m->devs[d].key, y, w);
    n++;
  }
  return n;
}
