/* Throughput against shape, one chart per op: GFLOP/s for ops that do more
 * than a FLOP per byte, GB/s for the streaming ones (copies, element-wise,
 * norms) and those that count no FLOPs (collectives); the
 * shapes in order of size along x, a line per dtype/impl/device (and file, with
 * several). Where a line bends down, a shape fell out of a cache or off a
 * kernel's sweet spot. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/html.h"

enum { MAX_AXIS = 128 };

static const double H = 380;

typedef struct chart {
  const char *op;
  int flops; /* 1: GFLOP/s, 0: GB/s */
  const char *cols[MAX_AXIS];
  double sizes[MAX_AXIS];
  size_t nc;
  char series[MAX_AXIS][192];
  size_t ns;
} chart_t;

static double metric(const chart_t *c, const mb__hres_t *r) {
  double v = (c->flops ? r->flop : r->bytes) / r->median_ns * 1e9;
  return mb__html_timed(r) && v > 0 && isfinite(v) ? v : NAN;
}

static int in_chart(const chart_t *c, const mb__hres_t *r) {
  return strcmp(r->op, c->op) == 0 && isfinite(metric(c, r));
}

static void series_of(const mb__hres_t *r, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s %s %s%s%s", r->dtype, r->recipe ? "/" : "",
           r->recipe ? r->recipe : "", r->impl, r->device, *r->run ? " " : "",
           r->run);
}

static size_t col_of(chart_t *c, const mb__hres_t *r) {
  for (size_t i = 0; i < c->nc; i++)
    if (strcmp(c->cols[i], r->shape) == 0) return i;
  if (c->nc == MAX_AXIS) return MAX_AXIS - 1;
  c->cols[c->nc] = r->shape;
  c->sizes[c->nc] = r->size;
  return c->nc++;
}

static size_t series_index(chart_t *c, const mb__hres_t *r) {
  char s[192];
  series_of(r, s, sizeof s);
  for (size_t i = 0; i < c->ns; i++)
    if (strcmp(c->series[i], s) == 0) return i;
  if (c->ns == MAX_AXIS) return MAX_AXIS - 1;
  snprintf(c->series[c->ns], sizeof c->series[0], "%s", s);
  return c->ns++;
}

static void sort_columns(chart_t *c) {
  for (size_t i = 1; i < c->nc; i++)
    for (size_t j = i; j > 0 && c->sizes[j - 1] > c->sizes[j]; j--) {
      double s = c->sizes[j];
      const char *n = c->cols[j];
      c->sizes[j] = c->sizes[j - 1], c->cols[j] = c->cols[j - 1];
      c->sizes[j - 1] = s, c->cols[j - 1] = n;
    }
}

static void draw(mb__sbuf_t *b, const mb__html_t *m, chart_t *c, double *y,
                 double *w) {
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < m->num_res; i++)
    if (in_chart(c, &m->res[i])) {
      col_of(c, &m->res[i]);
      series_index(c, &m->res[i]);
      lo = fmin(lo, metric(c, &m->res[i]));
      hi = fmax(hi, metric(c, &m->res[i]));
    }
  sort_columns(c);
  const double step = 56, pw = fmax(300, step * (double)c->nc);
  const mb__frame_t f = {70, 28, pw, H - 110};
  mb__logaxis_t yax = mb__logaxis(lo, hi, f.top + f.height, f.top);
  mb__html_svg_open(b, "mb-shapes", f.left + pw + 280, H, y, w);
  mb__sbuf_put(b, " data-op=\"");
  mb__sbuf_esc(b, c->op);
  mb__sbuf_put(b, "\">");
  char title[160];
  snprintf(title, sizeof title, "%s: %s by shape", c->op,
           c->flops ? "FLOP/s" : "bytes/s");
  mb__svg_text(b, f.left, 16, "start", "mb-title", title);
  mb__svg_axes(b, &f, NULL, &yax, NULL, c->flops ? "FLOP/s" : "B/s");
  for (size_t k = 0; k < c->nc; k++) {
    mb__sbuf_printf(b, "<text transform=\"translate(%.1f %.1f) rotate(40)\">",
                    f.left + step * ((double)k + 0.5), f.top + f.height + 12);
    mb__sbuf_esc(b, c->cols[k]);
    mb__sbuf_put(b, "</text>");
  }
  for (size_t s = 0; s < c->ns; s++) {
    mb__sbuf_t pts = {0};
    mb__sbuf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" points=\"",
                    mb__colour(s));
    for (size_t k = 0; k < c->nc; k++)
      for (size_t i = 0; i < m->num_res; i++) {
        const mb__hres_t *r = &m->res[i];
        char name[192];
        series_of(r, name, sizeof name);
        if (!in_chart(c, r) || strcmp(r->shape, c->cols[k]) ||
            strcmp(name, c->series[s]))
          continue;
        double px = f.left + step * ((double)k + 0.5);
        double py = mb__logaxis_px(&yax, metric(c, r));
        mb__sbuf_printf(b, "%.1f,%.1f ", px, py);
        mb__sbuf_printf(&pts,
                        "<circle class=\"mb-spoint\" cx=\"%.1f\" cy=\"%.1f\" "
                        "r=\"3\" fill=\"%s\" data-tip=\"",
                        px, py, mb__colour(s));
        mb__html_tip(&pts, r);
        mb__sbuf_put(&pts, "\"/>");
        break;
      }
    mb__sbuf_put(b, "\"/>");
    if (pts.p) mb__sbuf_put(b, pts.p);
    b->oom |= pts.oom;
    mb__sbuf_free(&pts);
    mb__sbuf_printf(b,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" "
                    "height=\"10\" fill=\"%s\"/>",
                    f.left + pw + 12, f.top + 14.0 * (double)s, mb__colour(s));
    mb__svg_text(b, f.left + pw + 26, f.top + 14.0 * (double)s + 9, "start",
                 NULL, c->series[s]);
  }
  mb__sbuf_put(b, "</svg>\n");
}

/* Below one FLOP per byte moved no device is compute-bound (every ridge
 * point, CPU or GPU, lies well above it): such an op (add, copy, the norms
 * and activations) streams, and is read in bytes/s even though it counts
 * FLOPs. Judged by the op's most intense result, not by each machine's
 * ridge, so a small GEMM that fits no roof still reads in FLOP/s. */
static int streams(const mb__html_t *m, const char *op) {
  double most = 0;
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    if (strcmp(r->op, op) == 0 && isfinite(r->intensity) && r->intensity > most)
      most = r->intensity;
  }
  return most > 0 && most < 1;
}

size_t mb__html_shapes(mb__sbuf_t *b, const mb__html_t *m, double *y,
                       double *w) {
  const char *done[MAX_AXIS];
  size_t ndone = 0, n = 0;
  for (size_t i = 0; i < m->num_res && ndone < MAX_AXIS; i++) {
    const char *op = m->res[i].op;
    size_t k = 0;
    while (k < ndone && strcmp(done[k], op)) k++;
    if (k < ndone) continue;
    done[ndone++] = op;
    chart_t c = {.op = op, .flops = !streams(m, op)};
    int any = 0;
    for (size_t j = i; j < m->num_res && !any; j++)
      any = in_chart(&c, &m->res[j]);
    if (!any) { /* no FLOPs (or no bytes) counted: the other */
      c.flops = !c.flops;
      for (size_t j = i; j < m->num_res && !any; j++)
        any = in_chart(&c, &m->res[j]);
    }
    if (!any) continue;
    draw(b, m, &c, y, w);
    n++;
  }
  return n;
}
