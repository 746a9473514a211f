/* Throughput against shape, one chart per op: GFLOP/s for ops that do more
 * than a FLOP per byte, GB/s for the streaming ones (copies, element-wise,
 * norms) and those that count no FLOPs (collectives); the
 * shapes in order of size along x, a line per dtype/impl/device (and file, with
 * several). Where a line bends down, a shape fell out of a cache or off a
 * kernel's sweet spot. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"

enum { SERIES_LEN = 512 };

static const double H = 380;

typedef struct chart {
  const char *op;
  int flops;                 /* 1: GFLOP/s, 0: GB/s */
  mb__names_t cols;          /* shapes, ordered by size */
  mb__names_t series;        /* "dtype[/recipe] impl device [file]" */
  char (*label)[SERIES_LEN]; /* result i's series name, for i in the chart */
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

static void draw(mb__sbuf_t *b, const mb__html_t *m, chart_t *c, double *y,
                 double *w) {
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < m->num_res; i++)
    if (in_chart(c, &m->res[i])) {
      const mb__hres_t *r = &m->res[i];
      series_of(r, c->label[i], sizeof c->label[i]);
      mb__names_index(&c->cols, r->shape, r->size);
      mb__names_index(&c->series, c->label[i], 0);
      lo = fmin(lo, metric(c, r));
      hi = fmax(hi, metric(c, r));
    }
  mb__names_sort(&c->cols);
  const size_t nc = c->cols.n;
  const double step = 56, pw = fmax(300, step * (double)nc);
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
  for (size_t k = 0; k < nc; k++) {
    mb__sbuf_printf(b, "<text transform=\"translate(%.1f %.1f) rotate(40)\">",
                    f.left + step * ((double)k + 0.5), f.top + f.height + 12);
    mb__sbuf_esc(b, c->cols.name[k]);
    mb__sbuf_put(b, "</text>");
  }
  for (size_t s = 0; s < c->series.n; s++) {
    mb__sbuf_t pts = {0};
    mb__sbuf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" points=\"",
                    mb__colour(s));
    for (size_t k = 0; k < nc; k++)
      for (size_t i = 0; i < m->num_res; i++) {
        const mb__hres_t *r = &m->res[i];
        if (!in_chart(c, r) || strcmp(r->shape, c->cols.name[k]) ||
            strcmp(c->label[i], c->series.name[s]))
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
                 NULL, c->series.name[s]);
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

/* One chart, with its lists sized by the results. */
static void chart(mb__sbuf_t *b, const mb__html_t *m, chart_t *c, double *y,
                  double *w) {
  c->label = calloc(m->num_res ? m->num_res : 1, sizeof *c->label);
  if (c->label && mb__names_init(&c->cols, m->num_res) &&
      mb__names_init(&c->series, m->num_res))
    draw(b, m, c, y, w);
  else
    b->oom = 1;
  mb__names_free(&c->cols);
  mb__names_free(&c->series);
  free(c->label);
}

size_t mb__html_shapes(mb__sbuf_t *b, const mb__html_t *m, double *y,
                       double *w) {
  mb__names_t done; /* the ops charted */
  if (!mb__names_init(&done, m->num_res)) {
    b->oom = 1;
    return 0;
  }
  size_t n = 0;
  for (size_t i = 0; i < m->num_res; i++) {
    const char *op = m->res[i].op;
    const size_t before = done.n;
    mb__names_index(&done, op, 0);
    if (done.n == before) continue;
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
    chart(b, m, &c, y, w);
    n++;
  }
  mb__names_free(&done);
  return n;
}
