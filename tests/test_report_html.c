/* The HTML report and its plots (mb_report_html): a roofline point per ok
 * result with FLOPs, text from files escaped, the comparison of two runs
 * with its geometric mean, the heatmap's cells, the sample histograms with
 * interfered samples marked, standalone SVG plots, and errors that name
 * the file or value. Result files are written here, shaped as the JSON
 * writer writes them (docs/schema.md). */
#include <cjson/cJSON.h>
#include <math.h>
#include <unistd.h>

#include "microbench/results.h"
#include "test_util.h"

static char g_dir[256];

typedef struct res {
  const char *id, *op, *status, *recipe;
  double median, flop, bytes, speedup;
  int flagged; /* how many of its 20 samples are flagged as interfered */
} res_t;

static const char *path_of(const char *name) {
  static char buf[64][512]; /* each call its own, for a while */
  static int k;
  char *p = buf[k++ % 64];
  snprintf(p, 512, "%s/%s", g_dir, name);
  return p;
}

static cJSON *result(const res_t *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", r->id);
  cJSON_AddStringToObject(o, "op", r->op ? r->op : "gemm");
  cJSON *shape = cJSON_AddObjectToObject(o, "shape");
  cJSON_AddNumberToObject(shape, "M", 64);
  cJSON_AddNumberToObject(shape, "N", r->median / 10);
  cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "dtypes"), "a", "f32");
  cJSON_AddStringToObject(o, "backend", "cpu");
  cJSON_AddNumberToObject(o, "device_index", 0);
  cJSON_AddStringToObject(o, "impl", "onednn");
  cJSON_AddStringToObject(o, "status", r->status ? r->status : "ok");
  if (r->recipe) {
    cJSON_AddStringToObject(o, "recipe", r->recipe);
    cJSON_AddNumberToObject(o, "speedup_vs_baseline", r->speedup);
  }
  cJSON *c = cJSON_AddObjectToObject(o, "correctness");
  cJSON_AddBoolToObject(c, "checked", 1);
  cJSON_AddBoolToObject(c, "pass", 1);
  cJSON_AddNumberToObject(c, "max_abs_err", 1e-6);
  cJSON *st = cJSON_AddObjectToObject(o, "stats");
  cJSON_AddNumberToObject(st, "count", 20);
  cJSON_AddNumberToObject(st, "median_ns", r->median);
  cJSON_AddNumberToObject(st, "iqr_ns", r->median * 0.01);
  cJSON *s = cJSON_AddArrayToObject(o, "samples_ns");
  cJSON *fl = r->flagged ? cJSON_AddArrayToObject(o, "sample_flags") : NULL;
  for (int i = 0; i < 20; i++) {
    int bad = i < r->flagged;
    cJSON_AddItemToArray(
        s, cJSON_CreateNumber(r->median * (bad ? 4 : 0.99 + 0.001 * i)));
    if (fl) cJSON_AddItemToArray(fl, cJSON_CreateNumber(bad));
  }
  cJSON *d = cJSON_AddObjectToObject(o, "derived");
  cJSON_AddNumberToObject(d, "flop", r->flop);
  cJSON_AddNumberToObject(d, "bytes", r->bytes);
  if (r->bytes > 0) cJSON_AddNumberToObject(d, "intensity", r->flop / r->bytes);
  return o;
}

/* A results document of n results on one CPU device with known roofs. */
static const char *put_doc(const char *name, const res_t *rs, size_t n) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "schema", "microbench.results/1");
  cJSON *meta = cJSON_AddObjectToObject(doc, "meta");
  cJSON_AddStringToObject(meta, "version", "0.1.0");
  cJSON *dev = cJSON_CreateObject();
  cJSON_AddStringToObject(dev, "backend", "cpu");
  cJSON_AddNumberToObject(dev, "index", 0);
  cJSON_AddStringToObject(dev, "name", "test CPU");
  cJSON_AddNumberToObject(cJSON_AddObjectToObject(dev, "peak_flops"), "f32",
                          2e11);
  cJSON_AddNumberToObject(cJSON_AddObjectToObject(dev, "copy_bandwidth"),
                          "gbps", 20);
  cJSON_AddItemToArray(cJSON_AddArrayToObject(doc, "devices"), dev);
  cJSON *arr = cJSON_AddArrayToObject(doc, "results");
  for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(arr, result(&rs[i]));
  char *text = cJSON_Print(doc);
  const char *path = path_of(name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(text);
  cJSON_Delete(doc);
  return path;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc((size_t)n + 1, 1);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return s;
}

static size_t count(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static char *report(const char *const *paths, size_t n, const char *plot) {
  mb_report_html_options_t o = MB_REPORT_HTML_OPTIONS_INIT;
  o.plot = plot;
  const char *out = path_of(plot ? "plot.svg" : "report.html");
  assert_int_equal(mb_report_html(paths, n, &o, out), MB_OK);
  return slurp(out);
}

static const res_t k_run[] = {
    {"gemm/64/f32/cpu:0", "gemm", "ok", NULL, 1000, 5e5, 5e4, NAN, 0},
    {"gemm/128/f32/cpu:0", "gemm", "ok", NULL, 4000, 4e6, 2e5, NAN, 3},
    {"add/64/f32/cpu:0", "add", "ok", NULL, 500, 0, 3e4, NAN, 0},
    {"gemm/256/f32/cpu:0", "gemm", "failed", NULL, 9000, 3e7, 8e5, NAN, 0},
};

static void test_roofline_points(void **state) {
  (void)state;
  const char *in = put_doc("run.json", k_run, 4);
  char *html = report(&in, 1, NULL);
  /* the two ok results with FLOPs; not the one without, nor the failed */
  assert_int_equal(count(html, "class=\"mb-point\""), 2);
  assert_int_equal(count(html,
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                         "class=\"mb-roofline\""),
                   1);
  assert_non_null(strstr(html, "data-device=\"cpu:0\""));
  assert_non_null(strstr(html, "data-id=\"gemm/128/f32/cpu:0\""));
  assert_non_null(strstr(html, "f32 peak 200GFLOP/s"));
  assert_non_null(strstr(html, "copy 20GB/s"));
  /* every section of the DOM contract; no comparison with one input */
  const char *sections[] = {"mb-meta",   "mb-roofline",      "mb-heatmap",
                            "mb-shapes", "mb-distributions", "mb-table"};
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
    char s[64];
    snprintf(s, sizeof s, "<section id=\"%s\">", sections[i]);
    assert_int_equal(count(html, s), 1);
  }
  assert_null(strstr(html, "id=\"mb-compare\""));
  assert_int_equal(count(html, "<div id=\"mb-tooltip\""), 1);
  assert_non_null(strstr(html, "no recipes ran"));
  /* one table row and one histogram per result; the interfered samples
   * of one result drawn apart */
  assert_int_equal(count(html, "<tr data-id="), 4);
  assert_int_equal(count(html, "class=\"mb-dist\""), 4);
  assert_int_equal(count(html, "#D55E00\" d=\"M"), 1);
  assert_non_null(strstr(html, "20 samples, 3 interfered"));
  /* a shapes chart per op: gemm in FLOP/s, add in bytes/s */
  assert_int_equal(count(html, "class=\"mb-shapes\""), 2);
  assert_non_null(strstr(html, "add: bytes/s by shape"));
  free(html);
}

static void test_hostile_text_escaped(void **state) {
  (void)state;
  const res_t hostile[] = {{"x<b>&\"q'</script><script>alert(1)</script>",
                            "gemm", "ok", "r<i>", 1000, 5e5, 5e4, 1.5, 0}};
  const char *in = put_doc("hostile.json", hostile, 1);
  mb_report_html_options_t o = MB_REPORT_HTML_OPTIONS_INIT;
  o.title = "T<&>";
  const char *out = path_of("hostile.html");
  assert_int_equal(mb_report_html(&in, 1, &o, out), MB_OK);
  char *html = slurp(out);
  assert_null(strstr(html, "x<b>"));
  assert_null(strstr(html, "alert(1)</script>"));
  assert_null(strstr(html, "r<i>"));
  assert_int_equal(count(html, "<script"), 1); /* the page's own */
  assert_non_null(strstr(html, "x&lt;b&gt;&amp;&quot;q&#39;&lt;/script&gt;"));
  assert_non_null(strstr(html, "<title>T&lt;&amp;&gt;</title>"));
  assert_non_null(strstr(html, "data-recipe=\"r&lt;i&gt;\""));
  free(html);
}

static void test_compare_two_runs(void **state) {
  (void)state;
  const res_t base[] = {
      {"a", "gemm", "ok", NULL, 1000, 5e5, 5e4, NAN, 0},
      {"b", "gemm", "ok", NULL, 1000, 5e5, 5e4, NAN, 0},
      {"c", "gemm", "ok", NULL, 1000, 5e5, 5e4, NAN, 0},
  };
  const res_t nw[] = {
      {"a", "gemm", "ok", NULL, 500, 5e5, 5e4, NAN, 0},
      {"b", "gemm", "ok", NULL, 800, 5e5, 5e4, NAN, 0},
      {"d", "gemm", "ok", NULL, 800, 5e5, 5e4, NAN, 0},
  };
  const char *in[3] = {put_doc("base.json", base, 3),
                       put_doc("new.json", nw, 3), NULL};
  char *html = report(in, 2, NULL);
  /* sqrt(0.5 x 0.8) over the two timed in both */
  assert_non_null(strstr(html, "<b id=\"mb-geomean\">0.632</b> over 2 "));
  assert_int_equal(count(html, "<section id=\"mb-compare\">"), 1);
  char *table = strstr(html, "<table id=\"mb-compare-table\"");
  assert_non_null(table);
  *strstr(table, "</table>") = '\0';
  /* a, b, c (base only), d (new only); sorted by ratio: a before b */
  assert_int_equal(count(table, "<tr data-id="), 4);
  assert_true(strstr(table, "data-id=\"a\"") < strstr(table, "data-id=\"b\""));
  assert_non_null(strstr(table, "MISSING"));
  assert_int_equal(count(html, "class=\"mb-bar\""), 2);
  free(html);
  /* the compare plot alone, and none for three inputs */
  html = report(in, 2, "compare");
  assert_int_equal(count(html, "class=\"mb-bar\""), 2);
  free(html);
  in[2] = in[0];
  in[2] = put_doc("third.json", nw, 3);
  html = report(in, 3, NULL);
  assert_null(strstr(html, "id=\"mb-compare\""));
  assert_non_null(strstr(html, "No comparison: it needs exactly two"));
  free(html);
  /* a key twice in one file: no comparison, said; the rest is written */
  const res_t twice[] = {base[0], base[0]};
  in[1] = put_doc("twice.json", twice, 2);
  html = report(in, 2, NULL);
  assert_int_equal(count(html, "<section id=\"mb-compare\">"), 1);
  assert_null(strstr(html, "mb-compare-table"));
  assert_non_null(strstr(html, "twice.json"));
  assert_int_equal(count(html, "class=\"mb-point\""), 5);
  free(html);
  mb_report_html_options_t o = MB_REPORT_HTML_OPTIONS_INIT;
  o.plot = "compare";
  assert_int_equal(mb_report_html(in, 3, &o, path_of("cmp3.svg")),
                   MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "exactly two"));
  assert_int_equal(access(path_of("cmp3.svg"), F_OK), -1);
}

static void test_heatmap_and_plots(void **state) {
  (void)state;
  const res_t recipes[] = {
      {"l/64/baseline", "linear", "ok", "baseline", 1000, 5e5, 5e4, 1, 0},
      {"l/64/int8wo", "linear", "ok", "int8wo", 500, 5e5, 5e4, 2, 0},
      {"l/128/int8wo", "linear", "ok", "int8wo", 1500, 5e5, 5e4, 0.8, 0},
  };
  const char *in = put_doc("recipes.json", recipes, 3);
  char *html = report(&in, 1, NULL);
  assert_int_equal(count(html, "class=\"mb-cell\""), 3);
  assert_non_null(strstr(html, "data-speedup=\"0.8\""));
  assert_non_null(strstr(html, "data-recipe=\"int8wo\""));
  assert_non_null(strstr(html, ">2.00x<"));
  assert_null(strstr(html, "no recipes ran"));
  free(html);
  /* two runs of the same recipes: a row for each recipe of each file,
   * none drawn over another, and a shapes line per recipe and file */
  const char *two[] = {in, put_doc("again.json", recipes, 3)};
  html = report(two, 2, NULL);
  assert_int_equal(count(html, "class=\"mb-cell\""), 6);
  assert_int_equal(count(html, ">int8wo [again.json]</text>"), 1);
  assert_int_equal(count(html, ">int8wo [recipes.json]</text>"), 1);
  assert_int_equal(count(html, "onednn cpu:0 again.json</text>"), 2);
  free(html);
  static const char *const plots[] = {"roofline", "heatmap", "shapes"};
  for (size_t i = 0; i < 3; i++) {
    char *svg = report(&in, 1, plots[i]);
    assert_int_equal(strncmp(svg, "<?xml", 5), 0);
    assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_null(strstr(svg, "<html"));
    assert_null(strstr(svg, "<section"));
    free(svg);
  }
}

/* A sweep of more shapes than a chart has ever held: every one gets its
 * column and point, none merged into another (the lists are sized by the
 * results). */
static void test_many_shapes(void **state) {
  (void)state;
  enum { N = 300 };
  static char ids[N][32];
  res_t rs[N];
  for (int i = 0; i < N; i++) {
    snprintf(ids[i], sizeof ids[i], "l/%d/int8wo", i);
    /* the shape's N dim is median / 10: a distinct shape each */
    rs[i] = (res_t){ids[i], "linear", "ok", "int8wo", 1000.0 + 10.0 * i,
                    5e5,    5e4,      1.25, 0};
  }
  const char *in = put_doc("sweep.json", rs, N);
  char *svg = report(&in, 1, "heatmap");
  assert_int_equal(count(svg, "class=\"mb-cell\""), N);
  assert_int_equal(count(svg, "rotate(-40)"), N); /* a label per column */
  free(svg);
  svg = report(&in, 1, "shapes");
  assert_int_equal(count(svg, "rotate(40)"), N);
  assert_int_equal(count(svg, "class=\"mb-spoint\""), N);
  free(svg);
}

static void test_errors_name_the_input(void **state) {
  (void)state;
  mb_report_html_options_t o = MB_REPORT_HTML_OPTIONS_INIT;
  const char *missing = path_of("missing.json");
  const char *out = path_of("err.html");
  assert_int_not_equal(mb_report_html(&missing, 1, NULL, out), MB_OK);
  assert_non_null(strstr(mb_error_last(), "missing.json"));
  const char *bad = path_of("bad.json");
  FILE *f = fopen(bad, "w");
  fputs("{\"schema\": \"microbench.results/1\", \"results\": [", f);
  fclose(f);
  assert_int_equal(mb_report_html(&bad, 1, NULL, out), MB_ERR_PARSE);
  assert_non_null(strstr(mb_error_last(), "bad.json"));
  const char *in = put_doc("ok.json", k_run, 2);
  o.plot = "pie";
  assert_int_equal(mb_report_html(&in, 1, &o, out), MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "\"pie\""));
  assert_non_null(strstr(mb_error_last(), "roofline, heatmap, shapes"));
  o.plot = "heatmap"; /* no recipes: nothing to draw, nothing written */
  assert_int_equal(mb_report_html(&in, 1, &o, out), MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "no recipes ran"));
  assert_int_equal(access(out, F_OK), -1);
  /* bad compare options are an error even with one input; a struct that
   * is not ours is refused */
  mb_compare_options_t cmp = MB_COMPARE_OPTIONS_INIT;
  cmp.alpha = 2;
  o.plot = NULL;
  o.compare = &cmp;
  assert_int_equal(mb_report_html(&in, 1, &o, out), MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "mb_report_html: alpha 2"));
  assert_int_equal(access(out, F_OK), -1);
  o.compare = NULL;
  o.struct_size = 4;
  assert_int_equal(mb_report_html(&in, 1, &o, out), MB_ERR_INVALID_ARG);
  assert_non_null(strstr(mb_error_last(), "mb_report_html_options_t"));
  /* the output is an input: refused, the input kept */
  char *before = slurp(in);
  assert_int_equal(mb_report_html(&in, 1, NULL, in), MB_ERR_INVALID_ARG);
  char *after = slurp(in);
  assert_string_equal(before, after);
  free(before);
  free(after);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/mb_test_report_html_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roofline_points),
      cmocka_unit_test(test_hostile_text_escaped),
      cmocka_unit_test(test_compare_two_runs),
      cmocka_unit_test(test_heatmap_and_plots),
      cmocka_unit_test(test_many_shapes),
      cmocka_unit_test(test_errors_name_the_input),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
