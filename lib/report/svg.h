/* Internal: the text the HTML report and its plots are written into, and
 * the few SVG pieces every chart draws (log axes, ticks, labels). The
 * charts are made here rather than by a vendored JavaScript library so the
 * report is one file that opens offline and the same code writes the
 * standalone plots (docs/report.md). */
#ifndef MB_LIB_REPORT_SVG_H
#define MB_LIB_REPORT_SVG_H

#include <stddef.h>

#include "internal.h"

/* A growable string; a failed allocation sticks (`oom`) and later appends
 * do nothing, so writers check once at the end. */
typedef struct mb__sbuf {
  char *p;
  size_t len, cap;
  int oom;
} mb__sbuf_t;

void mb__sbuf_free(mb__sbuf_t *b);
void mb__sbuf_put(mb__sbuf_t *b, const char *s);
void mb__sbuf_putn(mb__sbuf_t *b, const char *s, size_t n);
void mb__sbuf_printf(mb__sbuf_t *b, const char *fmt, ...) MB__FMT(2, 3);
/* Text from a file, safe inside an element or a quoted attribute: & < > "
 * ' as entities, control characters dropped (they are not XML). */
void mb__sbuf_esc(mb__sbuf_t *b, const char *s);

/* A log10 axis from lo to hi (whole decades) onto pixels [p0, p1]. */
typedef struct mb__logaxis {
  double lo, hi; /* decades: 10^lo .. 10^hi */
  double p0, p1;
} mb__logaxis_t;

/* The decades around [min, max] (positive, finite; else 1 .. 10). */
mb__logaxis_t mb__logaxis(double min, double max, double p0, double p1);
double mb__logaxis_px(const mb__logaxis_t *a, double v);

/* 1.5e9 as "1.5G", 0.01 as "10m": tick labels and tooltips. */
void mb__si(double v, char *buf, size_t cap);

/* The plot area of a chart and its decade grid, tick labels and axis
 * titles: x horizontal, y vertical (log both; x NULL: categorical, the
 * caller draws its labels). */
typedef struct mb__frame {
  double left, top, width, height; /* the plot area, px */
} mb__frame_t;
void mb__svg_open(mb__sbuf_t *b, const char *cls, double w, double h);
void mb__svg_axes(mb__sbuf_t *b, const mb__frame_t *f, const mb__logaxis_t *x,
                  const mb__logaxis_t *y, const char *xtitle,
                  const char *ytitle);
/* <text> at x, y with escaped content; anchor "start", "middle", "end". */
void mb__svg_text(mb__sbuf_t *b, double x, double y, const char *anchor,
                  const char *cls, const char *text);

/* A categorical palette (colour-blind safe), cycled. */
const char *mb__colour(size_t i);

#endif
