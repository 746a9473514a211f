/* mb_report_html: the self-contained HTML report (CSS, charts as inline
 * SVG, a little script for hover, sort and filter; nothing fetched), or one
 * chart alone as a standalone SVG document (opts->plot). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "microbench.h"
#include "report/html.h"
#include "results/results_internal.h"

typedef size_t (*chart_fn)(mb__sbuf_t *, const mb__html_t *, double *,
                           double *);

/* The charts opts->plot may name, and the report's sections for them. */
static const struct {
  const char *name;
  chart_fn draw;
} k_plots[] = {{"roofline", mb__html_roofline},
               {"heatmap", mb__html_heatmap},
               {"shapes", mb__html_shapes},
               {"compare", mb__html_compare_chart}};
#define NUM_PLOTS (sizeof k_plots / sizeof k_plots[0])

static const char k_css[] =
    "body{font:14px sans-serif;margin:1em 2em;color:#222}"
    "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc}"
    "svg{margin:.3em;background:#fff}.mb-note{fill:#a00}"
    ".mb-title{font-weight:bold}.mb-point{stroke:#fff;cursor:pointer}"
    ".mb-point:hover,.mb-bar:hover,.mb-cell:hover{stroke:#000;stroke-width:2}"
    "table{border-collapse:collapse;font-size:12px}"
    "td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}"
    "th{background:#f3f3f3}"
    /* Only the sortable tables' headers stay in view and take clicks: a
     * sticky header in the metadata would float over the page. */
    ".mb-sortable th{cursor:pointer;position:sticky;top:0}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "#mb-tooltip{position:fixed;display:none;background:#ffe;"
    "border:1px solid #888;padding:4px 6px;font-size:12px;max-width:40em;"
    "pointer-events:none;z-index:9;white-space:pre-wrap}"
    ".mb-dists{display:flex;flex-wrap:wrap}"
    ".mb-dists figure{margin:.3em;font-size:11px;width:300px}"
    ".mb-dists figcaption{word-break:break-all}"
    ".mb-bad{color:#a00}#mb-filter{width:30em;margin:.5em 0}";

/* Hover: any element with data-tip fills the one tooltip; sort: a click on
 * a header orders the rows by that column (numbers by value, from
 * data-v when a cell has one); filter: rows whose text lacks every typed
 * word are hidden. */
static const char k_js[] =
    "(function(){'use strict';\n"
    "var tip=document.getElementById('mb-tooltip');\n"
    "function show(e){var t=e.target.closest?e.target.closest('[data-tip]')"
    ":null;\n"
    " if(!t){tip.style.display='none';return;}\n"
    " tip.textContent=t.getAttribute('data-tip').split(' | ').join('\\n');\n"
    " tip.style.display='block';\n"
    " tip.style.left=Math.min(e.clientX+12,window.innerWidth-320)+'px';\n"
    " tip.style.top=(e.clientY+12)+'px';}\n"
    "document.addEventListener('mouseover',show);\n"
    "document.addEventListener('mousemove',show);\n"
    "function key(td){var v=td.getAttribute('data-v');\n"
    " return v!==null?v:td.textContent;}\n"
    "document.querySelectorAll('table.mb-sortable').forEach(function(tb){\n"
    " var ths=tb.querySelectorAll('thead th');\n"
    " ths.forEach(function(th,col){th.addEventListener('click',function(){\n"
    "  var body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows);\n"
    "  var dir=th.getAttribute('data-dir')==='1'?-1:1;\n"
    "  ths.forEach(function(h){h.removeAttribute('data-dir');});\n"
    "  th.setAttribute('data-dir',dir===1?'1':'-1');\n"
    "  rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);\n"
    "   var nx=parseFloat(x),ny=parseFloat(y);\n"
    "   if(isFinite(nx)&&isFinite(ny))return dir*(nx-ny);\n"
    "   if(isFinite(nx)!==isFinite(ny))return isFinite(nx)?-1:1;\n"
    "   return dir*x.localeCompare(y);});\n"
    "  rows.forEach(function(r){body.appendChild(r);});});});});\n"
    "var f=document.getElementById('mb-filter');\n"
    "if(f)f.addEventListener('input',function(){\n"
    " var words=f.value.toLowerCase().split(/\\s+/).filter(Boolean);\n"
    " document.querySelectorAll('#mb-results tbody tr').forEach(function(r){\n"
    "  var t=r.textContent.toLowerCase();\n"
    "  r.style.display=words.every(function(w){return t.indexOf(w)>=0;})?"
    "'':'none';});});\n"
    "})();\n";

static void section(mb__sbuf_t *b, const char *id, const char *title) {
  mb__sbuf_printf(b, "<section id=\"%s\">\n<h2>%s</h2>\n", id, title);
}

static void note(mb__sbuf_t *b, const char *text) {
  mb__sbuf_put(b, "<p class=\"mb-none\">");
  mb__sbuf_esc(b, text);
  mb__sbuf_put(b, "</p>\n");
}

static void chart_section(mb__sbuf_t *b, const mb__html_t *m, const char *id,
                          const char *title, chart_fn draw, const char *none) {
  section(b, id, title);
  if (draw(b, m, NULL, NULL) == 0) note(b, none);
  mb__sbuf_put(b, "</section>\n");
}

static void compare_section(mb__sbuf_t *b, const mb__html_t *m) {
  section(b, "mb-compare", "Comparison");
  if (m->cmp)
    mb__html_compare_table(b, m);
  else
    note(b, m->cmp_error);
  mb__sbuf_put(b, "</section>\n");
}

static void document(mb__sbuf_t *b, const mb__html_t *m, const char *title) {
  mb__sbuf_put(b,
               "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
               "charset=\"utf-8\">\n<title>");
  mb__sbuf_esc(b, title);
  mb__sbuf_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>",
                  k_css);
  mb__sbuf_esc(b, title);
  mb__sbuf_put(b, "</h1>\n<div id=\"mb-tooltip\"></div>\n");
  mb__html_meta(b, m);
  chart_section(b, m, "mb-roofline", "Roofline", mb__html_roofline,
                "no results");
  chart_section(b, m, "mb-heatmap", "Speedup against the baseline",
                mb__html_heatmap,
                "no recipes ran: no result has a speedup_vs_baseline");
  chart_section(b, m, "mb-shapes", "Throughput by shape", mb__html_shapes,
                "no ok result with FLOPs or bytes");
  if (m->num_sets == 2)
    compare_section(b, m);
  else if (m->num_sets > 2)
    note(b, "No comparison: it needs exactly two input files.");
  section(b, "mb-distributions", "Sample distributions");
  mb__html_distributions(b, m);
  mb__sbuf_put(b, "</section>\n");
  section(b, "mb-table", "Results");
  mb__html_results_table(b, m);
  mb__sbuf_printf(b, "</section>\n<script>\n%s</script>\n</body>\n</html>",
                  k_js);
}

/* One chart alone; several SVGs (a roofline per device) stacked in one. */
static mb_status_t plot(mb__sbuf_t *b, const mb__html_t *m, size_t k) {
  mb__sbuf_t inner = {0};
  double y = 0, w = 0;
  size_t n = k_plots[k].draw(&inner, m, &y, &w);
  if (n == 0 && *m->cmp_error && k_plots[k].draw == mb__html_compare_chart) {
    mb__sbuf_free(&inner);
    return mb__fail(MB_ERR_INVALID_ARG, "%s", m->cmp_error);
  }
  if (n == 0 || inner.oom) {
    mb__sbuf_free(&inner);
    if (n == 0)
      return mb__fail(MB_ERR_INVALID_ARG,
                      "plot \"%s\": nothing to plot in %zu file%s (%s)",
                      k_plots[k].name, m->num_sets, m->num_sets == 1 ? "" : "s",
                      k == 3   ? "compare needs exactly two input files"
                      : k == 1 ? "no recipes ran: no result has a "
                                 "speedup_vs_baseline"
                               : "no ok result");
    return mb__fail(MB_ERR_NO_MEMORY, "report: out of memory");
  }
  mb__sbuf_printf(b,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "
                  "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                  "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n<rect "
                  "width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
                  w, y, w, y);
  mb__sbuf_put(b, inner.p);
  mb__sbuf_put(b, "</svg>");
  mb__sbuf_free(&inner);
  return MB_OK;
}

static mb_status_t find_plot(const char *name, size_t *k) {
  for (*k = 0; *k < NUM_PLOTS; ++*k)
    if (strcmp(k_plots[*k].name, name) == 0) return MB_OK;
  return mb__fail(MB_ERR_INVALID_ARG,
                  "plot \"%s\": valid: roofline, heatmap, shapes, "
                  "compare",
                  name);
}

mb_status_t mb_report_html(const char *const *paths, size_t count,
                           const mb_report_html_options_t *opts,
                           const char *out_path) {
  mb_report_html_options_t o = MB_REPORT_HTML_OPTIONS_INIT;
  mb__html_t m = {.opts = &o};
  if (!out_path || !paths || count == 0)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_report_html: needs result files and an output path");
  mb_status_t st = MB_OK;
  if (opts)
    st = mb__struct_in(MB__STRUCT_REPORT_HTML_OPTIONS, "mb_report_html", opts,
                       &o);
  /* Bad compare options are the caller's mistake even with one input. */
  if (st == MB_OK)
    st = mb__compare_options_in("mb_report_html", o.compare, &m.compare);
  if (st != MB_OK) return st;
  size_t k = NUM_PLOTS;
  const int plotting = o.plot && *o.plot;
  if (plotting && find_plot(o.plot, &k) != MB_OK) return MB_ERR_INVALID_ARG;
  st = mb_report_check_output(out_path, paths, count);
  if (st != MB_OK) return st;
  mb__sbuf_t b = {0};
  st = mb__html_load(&m, paths, count);
  if (st == MB_OK && plotting)
    st = plot(&b, &m, k);
  else if (st == MB_OK)
    document(&b, &m, o.title ? o.title : "libmicrobench report");
  if (st == MB_OK && b.oom)
    st = mb__fail(MB_ERR_NO_MEMORY, "report: out of memory");
  if (st == MB_OK) st = mb__write_file_atomic(out_path, b.p);
  mb__sbuf_free(&b);
  mb__html_free(&m);
  return st;
}
