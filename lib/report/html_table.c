/* The report's table of every result (sortable, filterable by the page's
 * script) and the runs' metadata: files, versions, commits, command
 * lines, devices. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "microbench.h"
#include "report/html.h"
#include "results/results_internal.h"

/* A cell: its text, and a number to sort by (NAN: sort by the text). */
typedef void (*cell_fn)(const mb__html_t *m, const mb__hres_t *r, char *text,
                        size_t cap, double *v);

static void c_id(const mb__html_t *m, const mb__hres_t *r, char *t, size_t n,
                 double *v) {
  (void)m, (void)v;
  snprintf(t, n, "%s", r->id);
}
static void c_op(const mb__html_t *m, const mb__hres_t *r, char *t, size_t n,
                 double *v) {
  (void)m, (void)v;
  snprintf(t, n, "%s", r->op);
}
static void c_shape(const mb__html_t *m, const mb__hres_t *r, char *t, size_t n,
                    double *v) {
  (void)m;
  snprintf(t, n, "%s", r->shape);
  *v = r->size;
}
static void c_dtype(const mb__html_t *m, const mb__hres_t *r, char *t, size_t n,
                    double *v) {
  (void)m, (void)v;
  snprintf(t, n, "%s%s%s", r->dtype, r->recipe ? " " : "",
           r->recipe ? r->recipe : "");
}
static void c_device(const mb__html_t *m, const mb__hres_t *r, char *t,
                     size_t n, double *v) {
  (void)m, (void)v;
  snprintf(t, n, "%s %s", r->device, r->impl);
}
static void c_status(const mb__html_t *m, const mb__hres_t *r, char *t,
                     size_t n, double *v) {
  (void)m, (void)v;
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(r->r, "correctness");
  const cJSON *pass = cJSON_GetObjectItemCaseSensitive(c, "pass");
  snprintf(t, n, "%s%s", r->status,
           cJSON_IsFalse(pass)  ? " (wrong)"
           : cJSON_IsTrue(pass) ? " (checked)"
                                : "");
}
static void c_median(const mb__html_t *m, const mb__hres_t *r, char *t,
                     size_t n, double *v) {
  (void)m;
  mb_format_ns(r->median_ns, t, n);
  *v = r->median_ns;
}
static void c_gflops(const mb__html_t *m, const mb__hres_t *r, char *t,
                     size_t n, double *v) {
  (void)m;
  *v = r->flop > 0 && r->median_ns > 0 ? r->flop / r->median_ns : NAN;
  snprintf(t, n, isfinite(*v) ? "%.4g" : "-", *v);
}
static void c_gbps(const mb__html_t *m, const mb__hres_t *r, char *t, size_t n,
                   double *v) {
  (void)m;
  *v = r->bytes > 0 && r->median_ns > 0 ? r->bytes / r->median_ns : NAN;
  snprintf(t, n, isfinite(*v) ? "%.4g" : "-", *v);
}
static void c_pct(const mb__html_t *m, const mb__hres_t *r, char *t, size_t n,
                  double *v) {
  (void)m;
  *v = mb__json_num(cJSON_GetObjectItemCaseSensitive(r->r, "derived"),
                    "pct_roof");
  snprintf(t, n, isfinite(*v) ? "%.1f" : "-", *v);
}
static void c_speedup(const mb__html_t *m, const mb__hres_t *r, char *t,
                      size_t n, double *v) {
  (void)m;
  *v = r->speedup;
  snprintf(t, n, isfinite(*v) ? "%.3f" : "-", *v);
}
static void c_file(const mb__html_t *m, const mb__hres_t *r, char *t, size_t n,
                   double *v) {
  (void)v;
  snprintf(t, n, "%s", m->paths[r->input]);
}

static const struct {
  const char *title;
  cell_fn cell;
} k_columns[] = {{"id", c_id},
                 {"op", c_op},
                 {"shape", c_shape},
                 {"dtype / recipe", c_dtype},
                 {"device impl", c_device},
                 {"status", c_status},
                 {"median", c_median},
                 {"GFLOP/s", c_gflops},
                 {"GB/s", c_gbps},
                 {"% roof", c_pct},
                 {"speedup", c_speedup},
                 {"file", c_file}};
#define NUM_COLUMNS (sizeof k_columns / sizeof k_columns[0])

void mb__html_results_table(mb__sbuf_t *b, const mb__html_t *m) {
  mb__sbuf_printf(
      b,
      "<input id=\"mb-filter\" type=\"search\" placeholder=\"filter "
      "(words all present)\">\n<table id=\"mb-results\" "
      "class=\"mb-sortable\">\n<thead><tr>");
  for (size_t c = 0; c < NUM_COLUMNS; c++)
    mb__sbuf_printf(b, "<th>%s</th>", k_columns[c].title);
  mb__sbuf_put(b, "</tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < m->num_res; i++) {
    const mb__hres_t *r = &m->res[i];
    mb__sbuf_put(b, "<tr data-id=\"");
    mb__sbuf_esc(b, r->id);
    mb__sbuf_put(b, "\">");
    for (size_t c = 0; c < NUM_COLUMNS; c++) {
      char text[512];
      double v = NAN;
      k_columns[c].cell(m, r, text, sizeof text, &v);
      if (isfinite(v))
        mb__sbuf_printf(b, "<td class=\"n\" data-v=\"%.6g\">", v);
      else
        mb__sbuf_put(b, "<td>");
      mb__sbuf_esc(b, text);
      mb__sbuf_put(b, "</td>");
    }
    mb__sbuf_put(b, "</tr>\n");
  }
  mb__sbuf_put(b, "</tbody></table>\n");
}

static void row(mb__sbuf_t *b, const char *key, const char *value) {
  mb__sbuf_printf(b, "<tr><th>%s</th><td>", key);
  mb__sbuf_esc(b, value ? value : "-");
  mb__sbuf_put(b, "</td></tr>");
}

static void argv_row(mb__sbuf_t *b, const cJSON *meta) {
  mb__sbuf_put(b, "<tr><th>command</th><td><code>");
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(meta, "argv")) {
    if (!cJSON_IsString(a)) continue;
    mb__sbuf_esc(b, a->valuestring);
    mb__sbuf_put(b, " ");
  }
  mb__sbuf_put(b, "</code></td></tr>");
}

/* One run's facts: library version, commit, time, host, command. */
static void run_rows(mb__sbuf_t *b, const cJSON *meta) {
  const cJSON *host = cJSON_GetObjectItemCaseSensitive(meta, "host");
  row(b, "version", mb__json_str(meta, "version"));
  row(b, "commit", mb__json_str(meta, "git_commit"));
  if (!cJSON_HasObjectItem(meta, "timestamp")) return; /* merged: below */
  row(b, "time", mb__json_str(meta, "timestamp"));
  row(b, "host", mb__json_str(host, "hostname"));
  argv_row(b, meta);
}

static void device_row(mb__sbuf_t *b, const mb__hdev_t *d) {
  mb__sbuf_put(b, "<tr><td>");
  mb__sbuf_esc(b, d->key);
  mb__sbuf_put(b, "</td><td>");
  mb__sbuf_esc(b, mb__json_str(d->dev, "name"));
  mb__sbuf_put(b, "</td><td>");
  const cJSON *p;
  cJSON_ArrayForEach(p,
                     cJSON_GetObjectItemCaseSensitive(d->dev, "peak_flops")) {
    char v[32];
    mb__si(cJSON_IsNumber(p) ? p->valuedouble : NAN, v, sizeof v);
    mb__sbuf_esc(b, p->string);
    mb__sbuf_printf(b, " %sFLOP/s ", v);
  }
  char bw[32] = "-";
  double gbps = mb__json_num(
      cJSON_GetObjectItemCaseSensitive(d->dev, "copy_bandwidth"), "gbps");
  if (gbps > 0) snprintf(bw, sizeof bw, "%.1f GB/s", gbps);
  mb__sbuf_printf(b, "</td><td>%s</td></tr>\n", bw);
}

void mb__html_meta(mb__sbuf_t *b, const mb__html_t *m) {
  mb__sbuf_put(b, "<section id=\"mb-meta\">\n<h2>Runs</h2>\n");
  for (size_t i = 0; i < m->num_sets; i++) {
    const cJSON *meta = mb__results_meta(m->sets[i]);
    char count[32];
    snprintf(count, sizeof count, "%zu", mb_results_count(m->sets[i]));
    mb__sbuf_put(b, "<table class=\"mb-run\">");
    row(b, "file", m->paths[i]);
    row(b, "results", count);
    run_rows(b, meta);
    /* A merged document (mbench merge) keeps each input's own meta: the
     * times, hosts and commands are theirs. */
    const cJSON *from;
    cJSON_ArrayForEach(from,
                       cJSON_GetObjectItemCaseSensitive(meta, "merged_from")) {
      row(b, "merged from", mb__json_str(from, "file"));
      run_rows(b, cJSON_GetObjectItemCaseSensitive(from, "meta"));
    }
    mb__sbuf_put(b, "</table>\n");
  }
  mb__sbuf_put(b,
               "<table class=\"mb-devices\"><thead><tr><th>device</th>"
               "<th>name</th><th>peak</th><th>copy bandwidth</th></tr>"
               "</thead><tbody>\n");
  for (size_t i = 0; i < m->num_devs; i++) device_row(b, &m->devs[i]);
  mb__sbuf_put(b, "</tbody></table>\n</section>\n");
}
