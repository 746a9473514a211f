/* The roofline, one per device: each ok result with FLOPs a point at its
 * arithmetic intensity (x, FLOP/byte) and achieved FLOP/s (y), under the
 * device's compute roof for each dtype that ran (devices[].peak_flops) and
 * its bandwidth roof (devices[].copy_bandwidth.gbps). A point's distance
 * below the roof over it is what is left to gain. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "microbench.h"
#include "report/html.h"
#include "results/results_internal.h"

static const double W = 700, H = 440;
static const mb__frame_t FRAME = {70, 28, 450, 360};

static int on_roofline(const mb__hres_t *r) {
  return mb__html_timed(r) && r->flop > 0 && r->intensity > 0 &&
         isfinite(r->intensity);
}

static double rate(const mb__hres_t *r) {
  return r->flop / r->median_ns * 1e9;
}

/* The peak of dtype on the device: its peak_flops entry, else what a
 * result of that dtype says its peak was (derived.peak_tflops). */
static double peak_of(const mb__html_t *m, const mb__hdev_t *d,
                      const char *dtype) {
  double p = mb__json_num(
      cJSON_GetObjectItemCaseSensitive(d->dev, "peak_flops"), dtype);
  if (p > 0) return p;
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    if (strcmp(r->device, d->key) || strcmp(r->dtype, dtype)) continue;
    double t = mb__json_num(cJSON_GetObjectItemCaseSensitive(r->r, "derived"),
                            "peak_tflops");
    if (t > 0) return t * 1e12;
  }
  return NAN;
}

typedef struct roofs {
  mb__names_t dtypes; /* each with its peak FLOP/s (value) */
  double bw;          /* bytes/s; NAN unknown */
} roofs_t;

static void draw_roofs(mb__sbuf_t *b, const roofs_t *rf, const mb__logaxis_t *x,
                       const mb__logaxis_t *y) {
  const double xmax = pow(10, x->hi), xmin = pow(10, x->lo);
  const double ymin = pow(10, y->lo);
  double top = 0;
  const mb__names_t *dt = &rf->dtypes;
  for (size_t i = 0; i < dt->n; i++)
    if (dt->value[i] > top) top = dt->value[i];
  if (rf->bw > 0) {
    double x0 = fmax(xmin, ymin / rf->bw);
    double x1 = top > 0 ? fmin(xmax, top / rf->bw) : xmax;
    mb__sbuf_printf(
        b,
        "<line class=\"mb-roof mb-roof-bw\" x1=\"%.1f\" y1=\"%.1f\" "
        "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
        "stroke-width=\"2\"/>",
        mb__logaxis_px(x, x0), mb__logaxis_px(y, x0 * rf->bw),
        mb__logaxis_px(x, x1),
        mb__logaxis_px(y, fmin(x1 * rf->bw, pow(10, y->hi))));
    char label[64], v[32];
    mb__si(rf->bw, v, sizeof v);
    snprintf(label, sizeof label, "copy %sB/s", v);
    mb__svg_text(b, mb__logaxis_px(x, x0) + 4,
                 mb__logaxis_px(y, x0 * rf->bw) - 6, "start", "mb-roof-label",
                 label);
  }
  for (size_t i = 0; i < dt->n; i++) {
    if (!(dt->value[i] > 0)) continue;
    double x0 = rf->bw > 0 ? fmax(xmin, dt->value[i] / rf->bw) : xmin;
    double py = mb__logaxis_px(y, dt->value[i]);
    mb__sbuf_printf(b,
                    "<line class=\"mb-roof mb-roof-peak\" x1=\"%.1f\" "
                    "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
                    "stroke-dasharray=\"%s\"/>",
                    mb__logaxis_px(x, x0), py, mb__logaxis_px(x, xmax), py,
                    i ? "6 3" : "none");
    char label[64], v[32];
    mb__si(dt->value[i], v, sizeof v);
    snprintf(label, sizeof label, "%s peak %sFLOP/s", dt->name[i], v);
    mb__svg_text(b, mb__logaxis_px(x, xmax) - 4, py - 4, "end", "mb-roof-label",
                 label);
  }
}

static void one_device(mb__sbuf_t *b, const mb__html_t *m, const mb__hdev_t *d,
                       double *y, double *w) {
  roofs_t rf = {.bw = NAN};
  mb__names_t ops;
  size_t points = 0;
  if (!mb__names_init(&ops, m->num_res) ||
      !mb__names_init(&rf.dtypes, m->num_res)) {
    b->oom = 1;
    mb__names_free(&ops);
    return;
  }
  double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    if (strcmp(r->device, d->key) || !on_roofline(r)) continue;
    points++;
    mb__names_index(&ops, r->op, 0);
    const size_t before = rf.dtypes.n;
    const size_t k = mb__names_index(&rf.dtypes, r->dtype, 0);
    if (rf.dtypes.n > before) rf.dtypes.value[k] = peak_of(m, d, r->dtype);
    xlo = fmin(xlo, r->intensity);
    xhi = fmax(xhi, r->intensity);
    ylo = fmin(ylo, rate(r));
    yhi = fmax(yhi, rate(r));
  }
  double gbps = mb__json_num(
      cJSON_GetObjectItemCaseSensitive(d->dev, "copy_bandwidth"), "gbps");
  if (gbps > 0) rf.bw = gbps * 1e9;
  int known = rf.bw > 0;
  const double *peaks = rf.dtypes.value;
  for (size_t i = 0; i < rf.dtypes.n; i++)
    if (peaks[i] > 0) {
      known = 1;
      yhi = fmax(yhi, peaks[i]);
      if (rf.bw > 0) {
        xlo = fmin(xlo, peaks[i] / rf.bw);
        xhi = fmax(xhi, peaks[i] / rf.bw);
      }
    }
  mb__logaxis_t x = mb__logaxis(xlo, xhi, FRAME.left, FRAME.left + FRAME.width);
  mb__logaxis_t yax =
      mb__logaxis(ylo, yhi, FRAME.top + FRAME.height, FRAME.top);
  mb__html_svg_open(b, "mb-roofline", W, H, y, w);
  mb__sbuf_put(b, " data-device=\"");
  mb__sbuf_esc(b, d->key);
  mb__sbuf_put(b, "\">");
  char title[256];
  const char *name = mb__json_str(d->dev, "name");
  snprintf(title, sizeof title, "Roofline %s%s%s (%zu result%s)", d->key,
           name ? ": " : "", name ? name : "", points, points == 1 ? "" : "s");
  mb__svg_text(b, FRAME.left, 16, "start", "mb-title", title);
  mb__svg_axes(b, &FRAME, &x, &yax, "arithmetic intensity (FLOP/byte)",
               "FLOP/s");
  draw_roofs(b, &rf, &x, &yax);
  if (!known)
    mb__svg_text(b, FRAME.left + FRAME.width / 2, FRAME.top + 16, "middle",
                 "mb-note",
                 "roof unknown: no peak FLOP/s or copy bandwidth for this "
                 "device in the file");
  if (!points)
    mb__svg_text(b, FRAME.left + FRAME.width / 2, FRAME.top + FRAME.height / 2,
                 "middle", "mb-note", "no ok result with FLOPs");
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    if (strcmp(r->device, d->key) || !on_roofline(r)) continue;
    mb__sbuf_printf(
        b,
        "<circle class=\"mb-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
        "fill=\"%s\" data-id=\"",
        mb__logaxis_px(&x, r->intensity), mb__logaxis_px(&yax, rate(r)),
        mb__colour(mb__names_index(&ops, r->op, 0)));
    mb__sbuf_esc(b, r->id);
    mb__sbuf_put(b, "\" data-tip=\"");
    mb__html_tip(b, r);
    mb__sbuf_put(b, "\"/>");
  }
  for (size_t i = 0; i < ops.n; i++) {
    double ly = FRAME.top + 10 + 16.0 * (double)i;
    mb__sbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>",
                    FRAME.left + FRAME.width + 16, ly - 4, mb__colour(i));
    mb__svg_text(b, FRAME.left + FRAME.width + 26, ly, "start", NULL,
                 ops.name[i]);
  }
  mb__sbuf_put(b, "</svg>\n");
  mb__names_free(&ops);
  mb__names_free(&rf.dtypes);
}

size_t mb__html_roofline(mb__sbuf_t *b, const mb__html_t *m, double *y,
                         double *w) {
  for (size_t i = 0; i < m->num_devs; i++) one_device(b, m, &m->devs[i], y, w);
  return m->num_devs;
}
