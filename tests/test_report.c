/* Writers: JSON and CSV are read back; files are complete after every row. */
#include <cjson/cJSON.h>

#include "test_util.h"

static mb_context_t *g_ctx;
static mb_result_t *g_results[2];
static char g_dir[256];

static mb_result_t *bench(const char *op, int64_t m, int64_t k, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = n ? 3 : 2;
  p.shape[0] = m;
  p.shape[1] = k;
  p.shape[2] = n;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = "cpu";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 4;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_OK);
  return r;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  g_results[0] = bench("gemm", 32, 48, 40);
  g_results[1] = bench("add", 30, 20, 0);
  snprintf(g_dir, sizeof g_dir, "/tmp/mb_test_report_XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_result_destroy(g_results[0]);
  mb_result_destroy(g_results[1]);
  mb_context_destroy(g_ctx);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = calloc(1, (size_t)n + 1);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return buf;
}

static cJSON *read_json(const char *path) {
  char *text = slurp(path);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  assert_non_null(doc);
  return doc;
}

static mb_report_t *open_report(mb_format_t fmt, const char *path) {
  static const char *const argv[] = {"test_report", "--flag"};
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  o.format = fmt;
  o.path = path;
  o.argc = 2;
  o.argv = argv;
  mb_report_t *rep = NULL;
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_OK);
  return rep;
}

static void test_json_round_trip(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/r.json", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_JSON, path);
  assert_int_equal(mb_report_add(rep, g_results[0]), MB_OK);
  /* Streamed: a whole, valid document is on disk after each result. */
  cJSON *doc = read_json(path);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "results")), 1);
  cJSON_Delete(doc);
  assert_int_equal(mb_report_add(rep, g_results[1]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);

  doc = read_json(path);
  assert_string_equal(cJSON_GetObjectItem(doc, "schema")->valuestring,
                      "microbench.results/1");
  cJSON *meta = cJSON_GetObjectItem(doc, "meta");
  assert_string_equal(cJSON_GetObjectItem(meta, "version")->valuestring,
                      mb_version());
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(meta, "argv")), 2);
  assert_non_null(cJSON_GetObjectItem(meta, "host"));
  cJSON *devices = cJSON_GetObjectItem(doc, "devices");
  assert_true(cJSON_GetArraySize(devices) >= 1);
  cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "results"), 0);
  assert_string_equal(cJSON_GetObjectItem(r, "op")->valuestring, "gemm");
  assert_string_equal(cJSON_GetObjectItem(r, "status")->valuestring, "ok");
  assert_string_equal(cJSON_GetObjectItem(r, "backend")->valuestring, "cpu");
  cJSON *shape = cJSON_GetObjectItem(r, "shape");
  assert_int_equal(cJSON_GetObjectItem(shape, "M")->valueint, 32);
  assert_int_equal(cJSON_GetObjectItem(shape, "K")->valueint, 48);
  assert_int_equal(cJSON_GetObjectItem(shape, "N")->valueint, 40);
  assert_string_equal(
      cJSON_GetObjectItem(cJSON_GetObjectItem(r, "dtypes"), "a")->valuestring,
      "f32");
  cJSON *corr = cJSON_GetObjectItem(r, "correctness");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(corr, "pass")));
  cJSON *stats = cJSON_GetObjectItem(r, "stats");
  cJSON *samples = cJSON_GetObjectItem(r, "samples_ns");
  assert_int_equal(cJSON_GetArraySize(samples), 4);
  assert_int_equal(cJSON_GetObjectItem(stats, "count")->valueint, 4);
  size_t n;
  const double *mine = mb_result_samples(g_results[0], &n);
  for (int i = 0; i < 4; i++)
    assert_true(cJSON_GetArrayItem(samples, i)->valuedouble == mine[i]);
  cJSON *derived = cJSON_GetObjectItem(r, "derived");
  assert_true(cJSON_GetObjectItem(derived, "flop")->valuedouble ==
              2.0 * 32 * 48 * 40);
  cJSON_Delete(doc);

  /* The per-result JSON is the same object. */
  cJSON *one = cJSON_Parse(mb_result_json(g_results[1]));
  assert_non_null(one);
  assert_string_equal(cJSON_GetObjectItem(one, "op")->valuestring, "add");
  cJSON_Delete(one);
}

/* Splits one CSV line (RFC 4180 quoting) in place; returns the field count. */
static int split_csv(char *line, char **fields, int max) {
  int n = 0;
  char *w = line, *r = line;
  while (n < max) {
    fields[n++] = w;
    int quoted = *r == '"';
    if (quoted) r++;
    for (;;) {
      if (quoted && r[0] == '"' && r[1] == '"') {
        *w++ = '"';
        r += 2;
      } else if (quoted && r[0] == '"') {
        quoted = 0;
        r++;
      } else if (!quoted && (*r == ',' || *r == '\n' || *r == '\0')) {
        break;
      } else {
        *w++ = *r++;
      }
    }
    char end = *r;
    *w++ = '\0';
    if (end != ',') break;
    r++;
  }
  return n;
}

static void test_csv_round_trip(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/r.csv", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_CSV, path);
  assert_int_equal(mb_report_add(rep, g_results[0]), MB_OK);
  assert_int_equal(mb_report_add(rep, g_results[1]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  char *text = slurp(path);
  char *lines[3], *save = NULL;
  int nl = 0;
  for (char *l = strtok_r(text, "\n", &save); l && nl < 3;
       l = strtok_r(NULL, "\n", &save))
    lines[nl++] = l;
  assert_int_equal(nl, 3);
  char *head[64], *row[64];
  int nh = split_csv(lines[0], head, 64), nr = split_csv(lines[1], row, 64);
  assert_int_equal(nh, nr);
  int col_op = -1, col_shape = -1, col_correct = -1, col_median = -1;
  for (int i = 0; i < nh; i++) {
    if (!strcmp(head[i], "op")) col_op = i;
    if (!strcmp(head[i], "shape")) col_shape = i;
    if (!strcmp(head[i], "correct")) col_correct = i;
    if (!strcmp(head[i], "median_ns")) col_median = i;
  }
  assert_string_equal(row[col_op], "gemm");
  assert_string_equal(row[col_shape], "32x48x40");
  assert_string_equal(row[col_correct], "true");
  mb_stats_t st = MB_STATS_INIT;
  mb_result_stats(g_results[0], &st);
  assert_true(strtod(row[col_median], NULL) == st.median);
  assert_int_equal(split_csv(lines[2], row, 64), nh);
  free(text);
}

static void test_table_and_markdown(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/r.md", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_MARKDOWN, path);
  assert_int_equal(mb_report_add(rep, g_results[0]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  char *text = slurp(path);
  assert_contains(text, "| op ");
  assert_contains(text, "| gemm ");
  assert_contains(text, "| 32x48x40 ");
  assert_contains(text, "| pass ");
  free(text);
  mb_format_t f;
  assert_int_equal(mb_format_from_name("xml", &f), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "valid formats: table, json, csv, md");
}

static void test_unwritable_path(void **state) {
  (void)state;
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  mb_report_t *rep = NULL;
  o.format = MB_FORMAT_CSV;
  o.path = "/nonexistent/dir/r.csv";
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_ERR_IO);
  assert_contains(mb_error_last(), "/nonexistent/dir/r.csv");
  assert_int_equal(mb_report_close(NULL), MB_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_round_trip),
      cmocka_unit_test(test_csv_round_trip),
      cmocka_unit_test(test_table_and_markdown),
      cmocka_unit_test(test_unwritable_path),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
