/* Each result's sample distribution: a histogram of all its samples
 * (samples_ns, ns per run) with the interfered ones (sample_flags bit 1:
 * more than 3x the median of those before) drawn red over their bins, the
 * median as a line, over the fastest sample to the 99th percentile (the
 * slower ones in one bar apart at the right); beneath, the correctness check's
 * figures. Each histogram is one <path> so a thousand results stay small. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench.h"
#include "report/html.h"
#include "results/results_internal.h"

enum { BINS = 30, FLAG_INTERFERED = 1 };

static const double W = 300, H = 80, BASE = 62;

/* One path of bars: count[k] scaled to the tallest bin. */
static void bars(mb__sbuf_t *b, const unsigned *count, unsigned top,
                 const char *fill) {
  mb__sbuf_printf(b, "<path fill=\"%s\" d=\"", fill);
  const double bw = W / (BINS + 1.5);
  for (int k = 0; k <= BINS; k++) /* the last: the slowest 1 %, apart */
    if (count[k])
      mb__sbuf_printf(
          b, "M%.1f %.0fv-%.1fh%.1fv%.1fz", k < BINS ? bw * k : W - bw, BASE,
          (BASE - 4) * count[k] / top, bw - 0.5, (BASE - 4) * count[k] / top);
  mb__sbuf_put(b, "\"/>");
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The range the bins span: the fastest sample to the 99th percentile, so
 * one stall a thousand times the median does not crush the rest into one
 * bin (the samples beyond are counted, not drawn). */
static void range_of(const cJSON *samples, double *lo, double *hi) {
  size_t n = 0, cap = (size_t)cJSON_GetArraySize(samples);
  double *v = malloc((cap ? cap : 1) * sizeof *v);
  const cJSON *s;
  *lo = 0;
  *hi = 1;
  if (!v) return;
  cJSON_ArrayForEach(s, samples) {
    if (cJSON_IsNumber(s)) v[n++] = s->valuedouble;
  }
  if (n) {
    qsort(v, n, sizeof *v, by_value);
    *lo = v[0];
    *hi = v[(size_t)(0.99 * (double)(n - 1))];
    if (*hi <= *lo) *hi = v[n - 1];
  }
  free(v);
}

static void histogram(mb__sbuf_t *b, const mb__hres_t *r, const cJSON *samples,
                      const cJSON *flags, size_t *interfered) {
  double lo, hi;
  range_of(samples, &lo, &hi);
  unsigned all[BINS + 1] = {0}, bad[BINS + 1] = {0}, top = 1;
  const double span = hi > lo ? hi - lo : 1;
  const cJSON *f = flags ? flags->child : NULL;
  const cJSON *s;
  cJSON_ArrayForEach(s, samples) {
    int flagged =
        f && cJSON_IsNumber(f) && ((int)f->valuedouble & FLAG_INTERFERED);
    if (f) f = f->next;
    if (!cJSON_IsNumber(s)) continue;
    *interfered += flagged;
    int k = (int)((s->valuedouble - lo) / span * BINS);
    k = s->valuedouble > hi ? BINS : k < 0 ? 0 : k >= BINS ? BINS - 1 : k;
    all[k]++;
    bad[k] += flagged;
    if (all[k] > top) top = all[k];
  }
  mb__html_svg_open(b, "mb-dist", W, H, NULL, NULL);
  mb__sbuf_put(b, " data-id=\"");
  mb__sbuf_esc(b, r->id);
  mb__sbuf_put(b, "\">");
  bars(b, all, top, "#0072B2");
  if (*interfered) bars(b, bad, top, "#D55E00");
  if (r->median_ns > 0) {
    double mx = (r->median_ns - lo) / span * (W / (BINS + 1.5) * BINS);
    mb__sbuf_printf(b,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%.0f\" "
                    "stroke=\"#000\" stroke-dasharray=\"3 2\"/>",
                    mx, mx, BASE);
  }
  char a[32], z[32];
  mb_format_ns(lo, a, sizeof a);
  mb_format_ns(hi, z, sizeof z);
  mb__svg_text(b, 0, BASE + 14, "start", NULL, a);
  mb__svg_text(b, W / (BINS + 1.5) * BINS, BASE + 14, "end", NULL, z);
  if (all[BINS]) {
    char more[48];
    snprintf(more, sizeof more, "%u slower", all[BINS]);
    mb__svg_text(b, W, 10, "end", "mb-note", more);
  }
  mb__sbuf_put(b, "</svg>");
}

/* The correctness check in a line: checked or not, pass, the errors. */
static void correctness(mb__sbuf_t *b, const mb__hres_t *r) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(r->r, "correctness");
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "checked"))) {
    mb__sbuf_put(b, "not checked");
    return;
  }
  int pass = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "pass"));
  char line[192];
  const double sqnr = mb__json_num(c, "sqnr_db");
  const double abs_err = mb__json_num(c, "max_abs_err");
  /* The JSON writes an infinite SQNR (no error at all) and a NaN one (NaN
   * outputs) alike as null: "exact" only where the error is 0. */
  snprintf(line, sizeof line, "max abs err %.3g, max rel err %.3g, SQNR %s",
           abs_err, mb__json_num(c, "max_rel_err"),
           isfinite(sqnr)   ? ""
           : abs_err == 0.0 ? "exact"
                            : "unknown");
  if (isfinite(sqnr))
    snprintf(line + strlen(line), sizeof line - strlen(line), "%.1f dB", sqnr);
  mb__sbuf_printf(b, "<span class=\"%s\">%s</span>: ", pass ? "" : "mb-bad",
                  pass ? "correct" : "WRONG");
  mb__sbuf_esc(b, line);
}

void mb__html_distributions(mb__sbuf_t *b, const mb__html_t *m) {
  size_t shown = 0;
  mb__sbuf_put(b,
               "<p>Each result's samples (time per run), blue; interfered "
               "samples red; the dashed line is the median.</p>\n"
               "<div class=\"mb-dists\">\n");
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(r->r, "samples_ns");
    if (cJSON_GetArraySize(samples) == 0) continue;
    size_t interfered = 0;
    mb__sbuf_put(b, "<figure>");
    histogram(b, r, samples,
              cJSON_GetObjectItemCaseSensitive(r->r, "sample_flags"),
              &interfered);
    mb__sbuf_put(b, "<figcaption>");
    mb__sbuf_esc(b, r->id);
    mb__sbuf_printf(b, "<br>%d samples, %zu interfered; ",
                    cJSON_GetArraySize(samples), interfered);
    correctness(b, r);
    mb__sbuf_put(b, "</figcaption></figure>\n");
    shown++;
  }
  mb__sbuf_put(b, "</div>\n");
  if (!shown)
    mb__sbuf_put(b, "<p class=\"mb-none\">no result has samples</p>\n");
}
