/* The report's text buffer and the SVG pieces its charts share (svg.h). */
#include "report/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mb__sbuf_free(mb__sbuf_t *b) {
  free(b->p);
  *b = (mb__sbuf_t){0};
}

static int reserve(mb__sbuf_t *b, size_t more) {
  if (b->oom) return 0;
  if (b->len + more + 1 <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

void mb__sbuf_putn(mb__sbuf_t *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void mb__sbuf_put(mb__sbuf_t *b, const char *s) {
  mb__sbuf_putn(b, s, strlen(s));
}

void mb__sbuf_printf(mb__sbuf_t *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n >= 0 && reserve(b, (size_t)n)) {
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
  }
  va_end(ap2);
}

void mb__sbuf_esc(mb__sbuf_t *b, const char *s) {
  static const struct {
    char c;
    const char *entity;
  } k_entities[] = {{'&', "&amp;"},
                    {'<', "&lt;"},
                    {'>', "&gt;"},
                    {'"', "&quot;"},
                    {'\'', "&#39;"}};
  for (const char *p = s ? s : ""; *p; p++) {
    const char *e = NULL;
    for (size_t i = 0; i < sizeof k_entities / sizeof k_entities[0]; i++)
      if (*p == k_entities[i].c) e = k_entities[i].entity;
    if (e)
      mb__sbuf_put(b, e);
    else if ((unsigned char)*p >= 0x20 && *p != 0x7f)
      mb__sbuf_putn(b, p, 1);
    else if (*p == '\n' || *p == '\t')
      mb__sbuf_putn(b, " ", 1);
  }
}

mb__logaxis_t mb__logaxis(double min, double max, double p0, double p1) {
  if (!(min > 0) || !isfinite(min) || !(max > 0) || !isfinite(max)) {
    min = 1;
    max = 10;
  }
  double lo = floor(log10(min)), hi = ceil(log10(max));
  if (hi <= lo) hi = lo + 1;
  return (mb__logaxis_t){lo, hi, p0, p1};
}

double mb__logaxis_px(const mb__logaxis_t *a, double v) {
  double t = v > 0 ? (log10(v) - a->lo) / (a->hi - a->lo) : 0;
  return a->p0 + t * (a->p1 - a->p0);
}

void mb__si(double v, char *buf, size_t cap) {
  static const struct {
    double scale;
    const char *suffix;
  } k_si[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"},  {1e6, "M"},
              {1e3, "k"},  {1, ""},     {1e-3, "m"}, {1e-6, "µ"}};
  if (!isfinite(v) || v == 0) {
    snprintf(buf, cap, isfinite(v) ? "0" : "-");
    return;
  }
  size_t i = 0;
  while (i + 1 < sizeof k_si / sizeof k_si[0] && fabs(v) < k_si[i].scale) i++;
  snprintf(buf, cap, "%.3g%s", v / k_si[i].scale, k_si[i].suffix);
}

void mb__svg_open(mb__sbuf_t *b, const char *cls, double w, double h) {
  mb__sbuf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" "
                  "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"sans-serif\" font-size=\"11\"",
                  cls, w, h, w, h);
}

void mb__svg_text(mb__sbuf_t *b, double x, double y, const char *anchor,
                  const char *cls, const char *text) {
  mb__sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y,
                  anchor);
  if (cls) mb__sbuf_printf(b, " class=\"%s\"", cls);
  mb__sbuf_put(b, ">");
  mb__sbuf_esc(b, text);
  mb__sbuf_put(b, "</text>");
}

/* One axis's decade grid lines and labels. */
static void decades(mb__sbuf_t *b, const mb__frame_t *f, const mb__logaxis_t *a,
                    int vertical) {
  for (double d = a->lo; d <= a->hi + 1e-9; d++) {
    double px = mb__logaxis_px(a, pow(10, d));
    char label[32];
    mb__si(pow(10, d), label, sizeof label);
    if (vertical) {
      mb__sbuf_printf(b,
                      "<line class=\"mb-grid\" x1=\"%.1f\" x2=\"%.1f\" "
                      "y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>",
                      f->left, f->left + f->width, px, px);
      mb__svg_text(b, f->left - 4, px + 4, "end", NULL, label);
    } else {
      mb__sbuf_printf(b,
                      "<line class=\"mb-grid\" x1=\"%.1f\" x2=\"%.1f\" "
                      "y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>",
                      px, px, f->top, f->top + f->height);
      mb__svg_text(b, px, f->top + f->height + 14, "middle", NULL, label);
    }
  }
}

void mb__svg_axes(mb__sbuf_t *b, const mb__frame_t *f, const mb__logaxis_t *x,
                  const mb__logaxis_t *y, const char *xtitle,
                  const char *ytitle) {
  if (x) decades(b, f, x, 0);
  if (y) decades(b, f, y, 1);
  mb__sbuf_printf(b,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                  "fill=\"none\" stroke=\"#888\"/>",
                  f->left, f->top, f->width, f->height);
  if (xtitle)
    mb__svg_text(b, f->left + f->width / 2, f->top + f->height + 30, "middle",
                 NULL, xtitle);
  if (ytitle) {
    mb__sbuf_printf(b,
                    "<text transform=\"translate(12 %.1f) rotate(-90)\" "
                    "text-anchor=\"middle\">",
                    f->top + f->height / 2);
    mb__sbuf_esc(b, ytitle);
    mb__sbuf_put(b, "</text>");
  }
}

const char *mb__colour(size_t i) {
  /* Okabe and Ito's palette, black last. */
  static const char *const k_palette[] = {"#0072B2", "#E69F00", "#009E73",
                                          "#D55E00", "#CC79A7", "#56B4E9",
                                          "#F0E442", "#000000"};
  return k_palette[i % (sizeof k_palette / sizeof k_palette[0])];
}
