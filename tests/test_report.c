/* Writers: every format is read back. JSON and ossdb files stream JSON
 * lines while running (checked between mb_report_add and close) and are
 * whole documents after close; CSV is parsed by an RFC 4180 reader. */
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

/* gemm, add, gemm with two variant words (its problem id has a comma), one
 * skipped (no f16 -> f16 gemm kernel on cpu), a plan entry (name, recipe,
 * model, speedup; a composite: steps, accuracy, peak memory) and a model
 * in training under int8dq (forward and backward times). */
enum { R_GEMM, R_ADD, R_VARIANT, R_SKIPPED, R_PLAN, R_TRAIN, NUM_RESULTS };

static mb_context_t *g_ctx;
static mb_result_t *g_results[NUM_RESULTS];
static char g_dir[256];

/* A native config: one linear layer under recipe baseline, its own
 * baseline (speedup 1), with a name that CSV must quote. */
static const char k_plan[] =
    "benchmarks:\n"
    "  - name: 'lin, \"q\"'\n"
    "    model: linear\n"
    "    recipes: [baseline]\n"
    "    shapes: [[64, 32, 48]]\n"
    "    backend: cpu\n"
    "    timing: {samples: 3}\n";

static mb_op_params_t shape(int64_t m, int64_t k, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = n ? 3 : 2;
  p.shape[0] = m;
  p.shape[1] = k;
  p.shape[2] = n;
  return p;
}

static mb_result_t *bench(const char *op, const mb_op_params_t *p) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "cpu";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 4;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_OK);
  return r;
}

static mb_result_t *plan_result(void) {
  mb_plan_t *plan = NULL;
  mb_result_t *r = NULL;
  if (mb_plan_parse(k_plan, sizeof k_plan - 1, "report.yaml", NULL, &plan) !=
      MB_OK)
    fail_msg("the plan: %s", mb_error_last());
  assert_int_equal(mb_plan_count(plan), 1);
  assert_int_equal(mb_plan_run(g_ctx, plan, 0, &r), MB_OK);
  mb_plan_destroy(plan);
  return r;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_op_params_t p = shape(32, 48, 40);
  g_results[R_GEMM] = bench("gemm", &p);
  p = shape(30, 20, 0);
  g_results[R_ADD] = bench("add", &p);
  p = shape(16, 24, 8);
  p.beta = 0.5;
  p.flags = MB_PARAM_QUANTIZE_INPUTS;
  p.dtype_q = MB_DTYPE_F8E4M3;
  g_results[R_VARIANT] = bench("gemm", &p);
  p = shape(16, 24, 8);
  p.dtype = MB_DTYPE_F16;
  g_results[R_SKIPPED] = bench("gemm", &p);
  g_results[R_PLAN] = plan_result();
  p = shape(32, 64, 48);
  p.recipe = MB_RECIPE_INT8DQ;
  g_results[R_TRAIN] = bench("linear_training", &p);
  snprintf(g_dir, sizeof g_dir, "/tmp/mb_test_report_XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < NUM_RESULTS; i++) mb_result_destroy(g_results[i]);
  mb_context_destroy(g_ctx);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* ---- helpers --------------------------------------------------------- */

/* The plan entry's name (the reader extends the name it was given). */
static const char *plan_name(void) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(g_results[R_PLAN], &info), MB_OK);
  return info.name;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot read %s", path);
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
  if (!doc) fail_msg("%s is not JSON", path);
  return doc;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(o, key);
  if (!cJSON_IsString(v)) fail_msg("\"%s\" is not a string", key);
  return v->valuestring;
}

static double number(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(o, key);
  if (!cJSON_IsNumber(v)) fail_msg("\"%s\" is not a number", key);
  return v->valuedouble;
}

/* The result's own JSON, to compare the writers' fields with. */
static cJSON *result_json(const mb_result_t *r) {
  cJSON *o = cJSON_Parse(mb_result_json(r));
  assert_non_null(o);
  return o;
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

/* The JSON-lines stream: the header line, then one line per result added,
 * each the result's own JSON. */
static void check_stream(const char *path, size_t results) {
  char *text = slurp(path);
  size_t n = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l;
       l = strtok_r(NULL, "\n", &save), n++) {
    cJSON *line = cJSON_Parse(l);
    if (!line) fail_msg("%s line %zu is not JSON: %s", path, n + 1, l);
    if (n == 0) {
      assert_string_equal(str(line, "schema"), "microbench.results/1");
      assert_string_equal(str(cJSON_GetObjectItem(line, "meta"), "version"),
                          mb_version());
      assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(line, "devices")) >=
                  1);
      assert_null(cJSON_GetObjectItem(line, "results"));
    } else {
      cJSON *want = result_json(g_results[n - 1]);
      assert_string_equal(str(line, "id"), str(want, "id"));
      assert_true(cJSON_Compare(line, want, 1));
      cJSON_Delete(want);
    }
    cJSON_Delete(line);
  }
  free(text);
  assert_int_equal(n, results + 1);
}

/* Adds every result, checking the stream after each one; the final file
 * must not exist before close. */
static void add_all(mb_report_t *rep, const char *path, const char *stream) {
  check_stream(stream, 0);
  for (size_t i = 0; i < NUM_RESULTS; i++) {
    assert_int_equal(mb_report_add(rep, g_results[i]), MB_OK);
    check_stream(stream, i + 1);
    assert_false(exists(path));
  }
}

/* ---- JSON ------------------------------------------------------------ */

static void check_document(cJSON *doc) {
  assert_string_equal(str(doc, "schema"), "microbench.results/1");
  cJSON *meta = cJSON_GetObjectItem(doc, "meta");
  assert_string_equal(str(meta, "version"), mb_version());
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(meta, "argv")), 2);
  assert_non_null(cJSON_GetObjectItem(meta, "host"));
  assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "devices")) >= 1);
  cJSON *results = cJSON_GetObjectItem(doc, "results");
  assert_int_equal(cJSON_GetArraySize(results), NUM_RESULTS);
  for (int i = 0; i < NUM_RESULTS; i++) {
    cJSON *want = result_json(g_results[i]);
    assert_true(cJSON_Compare(cJSON_GetArrayItem(results, i), want, 1));
    cJSON_Delete(want);
  }

  cJSON *r = cJSON_GetArrayItem(results, R_GEMM);
  assert_string_equal(str(r, "op"), "gemm");
  assert_string_equal(str(r, "status"), "ok");
  assert_string_equal(str(r, "backend"), "cpu");
  cJSON *shape = cJSON_GetObjectItem(r, "shape");
  assert_true(number(shape, "M") == 32);
  assert_true(number(shape, "K") == 48);
  assert_true(number(shape, "N") == 40);
  assert_string_equal(str(cJSON_GetObjectItem(r, "dtypes"), "a"), "f32");
  assert_true(cJSON_IsTrue(
      cJSON_GetObjectItem(cJSON_GetObjectItem(r, "correctness"), "pass")));
  cJSON *samples = cJSON_GetObjectItem(r, "samples_ns");
  assert_int_equal(cJSON_GetArraySize(samples), 4);
  assert_true(number(cJSON_GetObjectItem(r, "stats"), "count") == 4);
  size_t n;
  const double *mine = mb_result_samples(g_results[R_GEMM], &n);
  for (int i = 0; i < 4; i++)
    assert_true(cJSON_GetArrayItem(samples, i)->valuedouble == mine[i]);
  assert_true(number(cJSON_GetObjectItem(r, "derived"), "flop") ==
              2.0 * 32 * 48 * 40);

  r = cJSON_GetArrayItem(results, R_PLAN);
  assert_string_equal(str(r, "name"), plan_name());
  assert_contains(plan_name(), "lin, \"q\"");
  assert_string_equal(str(r, "recipe"), "baseline");
  assert_string_equal(str(r, "model"), "linear");
  assert_true(number(r, "speedup_vs_baseline") == 1.0);
  r = cJSON_GetArrayItem(results, R_SKIPPED);
  assert_string_equal(str(r, "status"), "skipped");
}

static void test_json_file(void **state) {
  (void)state;
  char path[512], stream[512];
  snprintf(path, sizeof path, "%s/r.json", g_dir);
  snprintf(stream, sizeof stream, "%s/r.jsonl", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_JSON, path);
  add_all(rep, path, stream);
  assert_int_equal(mb_report_close(rep), MB_OK);
  assert_false(exists(stream));
  cJSON *doc = read_json(path);
  check_document(doc);
  cJSON_Delete(doc);
}

/* Without a path the document is printed at close, nothing before. */
static void test_json_to_stream(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  o.format = MB_FORMAT_JSON;
  o.stream = f;
  o.argc = 2;
  o.argv = (const char *const[]){"test_report", "--flag"};
  mb_report_t *rep = NULL;
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_OK);
  for (int i = 0; i < NUM_RESULTS; i++)
    assert_int_equal(mb_report_add(rep, g_results[i]), MB_OK);
  fflush(f);
  assert_int_equal(len, 0);
  assert_int_equal(mb_report_close(rep), MB_OK);
  fclose(f);
  cJSON *doc = cJSON_Parse(buf);
  assert_non_null(doc);
  check_document(doc);
  cJSON_Delete(doc);
  free(buf);
}

/* When the document cannot be put in place the stream stays, with every
 * result, and the error names both. */
static void test_json_kept_stream(void **state) {
  (void)state;
  char path[512], stream[512];
  snprintf(path, sizeof path, "%s/dir.json", g_dir);
  snprintf(stream, sizeof stream, "%s/dir.jsonl", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_JSON, path);
  for (int i = 0; i < NUM_RESULTS; i++)
    assert_int_equal(mb_report_add(rep, g_results[i]), MB_OK);
  assert_int_equal(mkdir(path, 0700), 0); /* rename cannot replace it */
  assert_int_equal(mb_report_close(rep), MB_ERR_IO);
  assert_contains(mb_error_last(), path);
  assert_contains(mb_error_last(), stream);
  check_stream(stream, NUM_RESULTS);
}

/* ---- CSV ------------------------------------------------------------- */

typedef struct csv {
  char **cells; /* row-major, `cols` per row */
  size_t rows, cols, n, cap;
} csv_t;

static void csv_push(csv_t *c, const char *s, size_t len) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->cells = realloc(c->cells, c->cap * sizeof *c->cells);
    assert_non_null(c->cells);
  }
  char *cell = malloc(len + 1);
  memcpy(cell, s, len);
  cell[len] = '\0';
  c->cells[c->n++] = cell;
}

/* RFC 4180: records end in CRLF or LF; a field is bare (no comma, quote or
 * line break) or quoted with "" for a quote. Every record must have as
 * many fields as the header. */
static csv_t csv_parse(const char *text) {
  csv_t c = {0};
  size_t cols = 0, len = 0, cap = strlen(text) + 1;
  char *field = malloc(cap);
  const char *p = text;
  while (*p) {
    len = 0;
    if (*p == '"') {
      for (p++;; p++) {
        if (!*p) fail_msg("CSV: unterminated quoted field");
        if (*p == '"' && p[1] != '"') break;
        if (*p == '"') p++;
        field[len++] = *p;
      }
      p++;
      if (*p != ',' && *p != '\n' && *p != '\r')
        fail_msg("CSV: text after a closing quote: %.20s", p);
    } else {
      for (; *p && *p != ',' && *p != '\n' && *p != '\r'; p++) {
        if (*p == '"') fail_msg("CSV: a quote in a bare field: %.20s", p);
        field[len++] = *p;
      }
    }
    csv_push(&c, field, len);
    cols++;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '\r') p++;
    if (*p != '\n') fail_msg("CSV: a record does not end in a line break");
    p++;
    if (c.rows == 0) c.cols = cols;
    if (cols != c.cols)
      fail_msg("CSV: record %zu has %zu fields, the header %zu", c.rows + 1,
               cols, c.cols);
    c.rows++;
    cols = 0;
  }
  assert_int_equal(cols, 0);
  free(field);
  return c;
}

static void csv_free(csv_t *c) {
  for (size_t i = 0; i < c->n; i++) free(c->cells[i]);
  free(c->cells);
}

static const char *cell(const csv_t *c, size_t row, const char *column) {
  for (size_t i = 0; i < c->cols; i++)
    if (!strcmp(c->cells[i], column)) return c->cells[row * c->cols + i];
  fail_msg("CSV: no column \"%s\"", column);
  return NULL;
}

/* A numeric field: empty (unknown) or a whole number text. */
static double csv_number(const csv_t *c, size_t row, const char *column) {
  const char *s = cell(c, row, column);
  if (!*s) return NAN;
  char *end;
  double v = strtod(s, &end);
  if (*end) fail_msg("CSV: %s = \"%s\" is not a number", column, s);
  return v;
}

/* Columns added after the first format come last, in this order (readers
 * of the older columns keep their indices): a model's, the peak memory,
 * the roofline's, whether a model's parts add up. */
static const char *const k_late_columns[] = {
    "accuracy_sqnr_db",     "accuracy_rel_err", "accuracy_pass",
    "accuracy_min_sqnr_db", "forward_ns",       "backward_ns",
    "peak_memory_bytes",    "pct_roof",         "bound",
    "bandwidth_gbps",       "parts_agree"};
#define NUM_LATE_COLUMNS (sizeof k_late_columns / sizeof *k_late_columns)
/* The model's own: empty for a primitive. */
static const char *const k_model_columns[] = {
    "accuracy_sqnr_db",     "accuracy_rel_err", "accuracy_pass",
    "accuracy_min_sqnr_db", "forward_ns",       "backward_ns",
    "parts_agree"};

static void check_csv_model_columns(const csv_t *c) {
  for (size_t i = 0; i < NUM_LATE_COLUMNS; i++)
    assert_string_equal(c->cells[c->cols - NUM_LATE_COLUMNS + i],
                        k_late_columns[i]);
  /* A primitive: no accuracy or phases, but its peak memory and roof. */
  for (size_t i = 0; i < sizeof k_model_columns / sizeof *k_model_columns; i++)
    assert_string_equal(cell(c, 1 + R_GEMM, k_model_columns[i]), "");
  mb_derived_t d = MB_DERIVED_INIT;
  mb_result_derived(g_results[R_GEMM], &d);
  assert_true(d.pct_roof > 0);
  assert_true(csv_number(c, 1 + R_GEMM, "pct_roof") == d.pct_roof);
  assert_string_equal(cell(c, 1 + R_GEMM, "bound"), d.bound);
  assert_true(csv_number(c, 1 + R_GEMM, "bandwidth_gbps") == d.bandwidth_gbps);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(g_results[R_GEMM], &info);
  assert_true(info.peak_memory_bytes > 0);
  assert_true(csv_number(c, 1 + R_GEMM, "peak_memory_bytes") ==
              info.peak_memory_bytes);
  /* Inference: accuracy, forward, no backward. */
  const mb_result_t *r = g_results[R_PLAN];
  mb_accuracy_t a = MB_ACCURACY_INIT;
  assert_int_equal(mb_result_accuracy(r, &a), MB_OK);
  assert_true(a.checked);
  assert_true(csv_number(c, 1 + R_PLAN, "accuracy_sqnr_db") == a.sqnr_db);
  assert_true(csv_number(c, 1 + R_PLAN, "accuracy_rel_err") == a.rel_err);
  assert_true(csv_number(c, 1 + R_PLAN, "accuracy_min_sqnr_db") ==
              mb_recipe_min_sqnr_db(MB_RECIPE_BASELINE));
  assert_string_equal(cell(c, 1 + R_PLAN, "accuracy_pass"),
                      a.pass ? "true" : "false");
  assert_true(csv_number(c, 1 + R_PLAN, "forward_ns") ==
              mb_result_phase_ns(r, MB_PHASE_FORWARD));
  assert_true(isnan(csv_number(c, 1 + R_PLAN, "backward_ns")));
  mb_parts_check_t parts = MB_PARTS_CHECK_INIT;
  assert_int_equal(mb_result_parts_check(r, &parts), MB_OK);
  assert_string_equal(cell(c, 1 + R_PLAN, "parts_agree"),
                      parts.agree ? "true" : "false");
  /* Training: both phases, as measured. */
  r = g_results[R_TRAIN];
  assert_true(csv_number(c, 1 + R_TRAIN, "forward_ns") ==
              mb_result_phase_ns(r, MB_PHASE_FORWARD));
  assert_true(csv_number(c, 1 + R_TRAIN, "backward_ns") ==
              mb_result_phase_ns(r, MB_PHASE_BACKWARD));
  assert_true(csv_number(c, 1 + R_TRAIN, "backward_ns") > 0);
  assert_true(csv_number(c, 1 + R_TRAIN, "accuracy_min_sqnr_db") ==
              mb_recipe_min_sqnr_db(MB_RECIPE_INT8DQ));
  assert_string_equal(cell(c, 1 + R_TRAIN, "mode"), "training");
  assert_string_equal(cell(c, 1 + R_TRAIN, "recipe"), "int8dq");
  /* Skipped: nothing measured (its peak memory aside). */
  for (size_t i = 0; i < NUM_LATE_COLUMNS; i++)
    if (strcmp(k_late_columns[i], "peak_memory_bytes"))
      assert_string_equal(cell(c, 1 + R_SKIPPED, k_late_columns[i]), "");
}

static void test_csv(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/r.csv", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_CSV, path);
  for (int i = 0; i < NUM_RESULTS; i++)
    assert_int_equal(mb_report_add(rep, g_results[i]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  char *text = slurp(path);
  csv_t c = csv_parse(text);
  assert_int_equal(c.rows, 1 + NUM_RESULTS);
  assert_string_equal(c.cells[0], "id");
  assert_string_equal(c.cells[1], "name");
  static const char *const k_numeric[] = {"max_abs_err",
                                          "max_rel_err",
                                          "sqnr_db",
                                          "samples",
                                          "batch",
                                          "min_ns",
                                          "median_ns",
                                          "mean_ns",
                                          "max_ns",
                                          "stdev_ns",
                                          "rel_stdev",
                                          "p10_ns",
                                          "p25_ns",
                                          "p75_ns",
                                          "p90_ns",
                                          "p99_ns",
                                          "iqr_ns",
                                          "flop",
                                          "bytes",
                                          "tflops",
                                          "gbps",
                                          "pct_peak",
                                          "speedup_vs_baseline",
                                          "accuracy_sqnr_db",
                                          "accuracy_rel_err",
                                          "accuracy_min_sqnr_db",
                                          "forward_ns",
                                          "backward_ns",
                                          "peak_memory_bytes"};
  for (size_t row = 1; row < c.rows; row++) {
    const mb_result_t *r = g_results[row - 1];
    cJSON *want = result_json(r);
    assert_string_equal(cell(&c, row, "id"), str(want, "id"));
    assert_string_equal(cell(&c, row, "problem"), str(want, "problem"));
    assert_string_equal(cell(&c, row, "op"), str(want, "op"));
    assert_string_equal(cell(&c, row, "status"), str(want, "status"));
    for (size_t i = 0; i < sizeof k_numeric / sizeof *k_numeric; i++)
      csv_number(&c, row, k_numeric[i]);
    mb_stats_t st = MB_STATS_INIT;
    mb_result_stats(r, &st);
    assert_true(csv_number(&c, row, "samples") == (double)st.count);
    if (st.count) assert_true(csv_number(&c, row, "median_ns") == st.median);
    cJSON_Delete(want);
  }
  assert_string_equal(cell(&c, 1 + R_GEMM, "shape"), "32x48x40");
  assert_string_equal(cell(&c, 1 + R_GEMM, "correct"), "true");
  assert_string_equal(cell(&c, 1 + R_GEMM, "name"), "");
  assert_true(isnan(csv_number(&c, 1 + R_GEMM, "speedup_vs_baseline")));
  /* Quoted on disk, whole when read back. */
  assert_non_null(strchr(cell(&c, 1 + R_VARIANT, "problem"), ','));
  assert_string_equal(cell(&c, 1 + R_PLAN, "name"), plan_name());
  assert_contains(text, "\"lin, \"\"q\"\"");
  assert_string_equal(cell(&c, 1 + R_PLAN, "recipe"), "baseline");
  assert_string_equal(cell(&c, 1 + R_PLAN, "model"), "linear");
  assert_true(csv_number(&c, 1 + R_PLAN, "speedup_vs_baseline") == 1.0);
  assert_string_equal(cell(&c, 1 + R_SKIPPED, "status"), "skipped");
  assert_string_equal(cell(&c, 1 + R_SKIPPED, "correct"), "");
  check_csv_model_columns(&c);
  csv_free(&c);
  free(text);
}

/* ---- ossdb ----------------------------------------------------------- */

/* The records of result `id`, in order, with their metric names. */
static size_t ossdb_records(cJSON *doc, const char *id, cJSON **out,
                            size_t max) {
  size_t n = 0;
  cJSON *rec;
  cJSON_ArrayForEach(rec, doc) {
    cJSON *b = cJSON_GetObjectItem(rec, "benchmark");
    if (!strcmp(str(cJSON_GetObjectItem(b, "extra_info"), "id"), id) && n < max)
      out[n++] = rec;
  }
  return n;
}

/* cJSON prints 15 digits when they read back within an ulp or so. */
static int near(double a, double b) {
  return fabs(a - b) <= 4 * DBL_EPSILON * fabs(b);
}

static double metric(const cJSON *rec, const char *want_name) {
  cJSON *m = cJSON_GetObjectItem(rec, "metric");
  assert_string_equal(str(m, "name"), want_name);
  cJSON *values = cJSON_GetObjectItem(m, "benchmark_values");
  assert_int_equal(cJSON_GetArraySize(values), 1);
  assert_true(number(m, "target_value") == 0);
  return cJSON_GetArrayItem(values, 0)->valuedouble;
}

/* What every record of a result says, whatever its metric. */
static void check_record(const cJSON *rec, const mb_result_t *r,
                         const char *dtype, const char *model_name,
                         const char *model_type) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  cJSON *b = cJSON_GetObjectItem(rec, "benchmark");
  assert_string_equal(str(b, "name"), "libmicrobench");
  assert_string_equal(str(b, "mode"), *info.mode ? info.mode : "inference");
  assert_string_equal(str(b, "dtype"), dtype);
  cJSON *x = cJSON_GetObjectItem(b, "extra_info");
  assert_string_equal(str(x, "device"), "cpu");
  assert_string_equal(str(x, "arch"), info.device);
  assert_string_equal(str(x, "op"), info.op);
  assert_string_equal(str(x, "impl"), info.impl);
  assert_string_equal(str(x, "cache"), "cold");
  cJSON *m = cJSON_GetObjectItem(rec, "model");
  assert_string_equal(str(m, "name"), model_name);
  assert_string_equal(str(m, "type"), model_type);
  cJSON *origins = cJSON_GetObjectItem(m, "origins");
  assert_int_equal(cJSON_GetArraySize(origins), 1);
  assert_string_equal(cJSON_GetArrayItem(origins, 0)->valuestring,
                      "libmicrobench");
  assert_true(cJSON_IsArray(cJSON_GetObjectItem(rec, "runners")));
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rec, "runners")), 0);
  assert_true(cJSON_IsObject(cJSON_GetObjectItem(rec, "dependencies")));
}

static void test_ossdb(void **state) {
  (void)state;
  /* Not ".json": the stream is "<path>.jsonl". */
  char path[512], stream[512];
  snprintf(path, sizeof path, "%s/dashboard.out", g_dir);
  snprintf(stream, sizeof stream, "%s/dashboard.out.jsonl", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_OSSDB, path);
  add_all(rep, path, stream);
  assert_int_equal(mb_report_close(rep), MB_OK);
  assert_false(exists(stream));
  cJSON *doc = read_json(path);
  assert_true(cJSON_IsArray(doc));

  cJSON *recs[8];
  mb_stats_t st = MB_STATS_INIT;
  mb_derived_t d = MB_DERIVED_INIT;
  /* gemm: time, TFLOP/s and a pass; no baseline, so no speedup. */
  cJSON *want = result_json(g_results[R_GEMM]);
  mb_result_stats(g_results[R_GEMM], &st);
  mb_result_derived(g_results[R_GEMM], &d);
  assert_int_equal(ossdb_records(doc, str(want, "id"), recs, 8), 3);
  for (int i = 0; i < 3; i++)
    check_record(recs[i], g_results[R_GEMM], "f32", "32-48-40",
                 "micro-benchmark gemm");
  assert_true(near(metric(recs[0], "time_ms"), st.median / 1e6));
  assert_true(near(metric(recs[1], "tflops"), d.tflops));
  assert_true(metric(recs[2], "correctness") == 1);
  cJSON_Delete(want);

  /* The plan's entry: the recipe is the dtype, the model the type; a
   * model adds its accuracy and peak memory. */
  want = result_json(g_results[R_PLAN]);
  mb_result_stats(g_results[R_PLAN], &st);
  mb_result_derived(g_results[R_PLAN], &d);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(g_results[R_PLAN], &info);
  mb_accuracy_t a = MB_ACCURACY_INIT;
  mb_result_accuracy(g_results[R_PLAN], &a);
  assert_int_equal(ossdb_records(doc, str(want, "id"), recs, 8), 6);
  for (int i = 0; i < 6; i++)
    check_record(recs[i], g_results[R_PLAN], "baseline", "64-32-48",
                 "micro-benchmark linear");
  assert_true(near(metric(recs[0], "time_ms"), st.median / 1e6));
  assert_true(near(metric(recs[1], "tflops"), d.tflops));
  assert_true(metric(recs[2], "speedup(wrt baseline)") == 1.0);
  assert_true(metric(recs[3], "correctness") == 1);
  assert_true(near(metric(recs[4], "sqnr_db"), a.sqnr_db));
  assert_true(
      near(metric(recs[5], "peak_memory_mb"), info.peak_memory_bytes / 1e6));
  cJSON_Delete(want);

  /* Training: forward and backward times too; no baseline, no speedup. */
  const mb_result_t *t = g_results[R_TRAIN];
  want = result_json(t);
  assert_int_equal(ossdb_records(doc, str(want, "id"), recs, 8), 7);
  for (int i = 0; i < 7; i++)
    check_record(recs[i], t, "int8dq", "32-64-48", "micro-benchmark linear");
  static const char *const k_train[] = {
      "time_ms",        "tflops",          "correctness",     "sqnr_db",
      "peak_memory_mb", "forward_time_ms", "backward_time_ms"};
  for (int i = 0; i < 5; i++) metric(recs[i], k_train[i]);
  assert_true(near(metric(recs[5], "forward_time_ms"),
                   mb_result_phase_ns(t, MB_PHASE_FORWARD) / 1e6));
  assert_true(near(metric(recs[6], "backward_time_ms"),
                   mb_result_phase_ns(t, MB_PHASE_BACKWARD) / 1e6));
  cJSON_Delete(want);

  /* Skipped: nothing was measured or checked, so no record. */
  want = result_json(g_results[R_SKIPPED]);
  assert_int_equal(ossdb_records(doc, str(want, "id"), recs, 8), 0);
  cJSON_Delete(want);
  assert_int_equal(cJSON_GetArraySize(doc), 3 + 3 + 3 + 6 + 7);
  cJSON_Delete(doc);
}

/* ---- table, markdown, names ------------------------------------------ */

static void test_table_and_markdown(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/r.md", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_MARKDOWN, path);
  assert_int_equal(mb_report_add(rep, g_results[R_GEMM]), MB_OK);
  assert_int_equal(mb_report_add(rep, g_results[R_SKIPPED]), MB_OK);
  assert_int_equal(mb_report_add(rep, g_results[R_PLAN]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  char *text = slurp(path);
  assert_contains(text, "| op ");
  assert_contains(text, "| speedup ");
  assert_contains(text, "| gemm ");
  assert_contains(text, "| 32x48x40 ");
  assert_contains(text, "| pass ");
  /* The plan's row: its recipe with the variant, speedup 1. */
  assert_contains(text, "| baseline ");
  assert_contains(text, "| 1.00x ");
  /* Nothing but rows until the table ends (a line under a row would end
   * it): why the skipped one did not run, and any warning, come in a list
   * after it, then the model's details. */
  const char *notes = strstr(text, "\n\nNotes:\n\n");
  const char *block = strstr(text, "\nModel rows, step by step:\n\n```text\n");
  assert_non_null(notes);
  assert_non_null(block);
  assert_true(notes < block);
  for (const char *l = text; l <= notes; l = strchr(l, '\n') + 1)
    assert_int_equal(*l, '|');
  mb_result_info_t skipped = MB_RESULT_INFO_INIT;
  mb_result_info(g_results[R_SKIPPED], &skipped);
  char want[512];
  snprintf(want, sizeof want, ": skipped: %s\n", skipped.reason);
  const char *note = strstr(notes, want);
  assert_non_null(note);
  assert_true(note < block);
  while (note > notes && note[-1] != '\n') note--;
  assert_true(!strncmp(note, "- ", 2));
  assert_contains(block, "inference: accuracy ");
  assert_contains(block, "(floor 45 dB): pass");
  assert_contains(block, "forward  gemm");
  assert_contains(text, "```\n");
  free(text);
}

/* The console table: a primitive's row is one line, as always; a model's
 * is followed by its accuracy, peak memory, forward/backward times and
 * each step with its share. */
static void test_table_model_details(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/r.txt", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_TABLE, path);
  assert_int_equal(mb_report_add(rep, g_results[R_GEMM]), MB_OK);
  assert_int_equal(mb_report_add(rep, g_results[R_ADD]), MB_OK);
  assert_int_equal(mb_report_add(rep, g_results[R_TRAIN]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  char *text = slurp(path);
  assert_contains(text, "quantize activations");
  assert_contains(text, "dW = X^T.dY");
  char *lines[64];
  size_t n = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l && n < 64;
       l = strtok_r(NULL, "\n", &save))
    if (strncmp(l, "  warning: ", 11)) /* a fast run may warn (timer) */
      lines[n++] = l;
  assert_true(n > 4);
  assert_true(!strncmp(lines[1], "gemm ", 5));
  assert_true(!strncmp(lines[2], "add ", 4));
  assert_true(!strncmp(lines[3], "linear_training ", 16));
  mb_accuracy_t a = MB_ACCURACY_INIT;
  assert_int_equal(mb_result_accuracy(g_results[R_TRAIN], &a), MB_OK);
  char want[128];
  snprintf(want, sizeof want, "  training: accuracy %.1f dB SQNR", a.sqnr_db);
  assert_true(!strncmp(lines[4], want, strlen(want)));
  assert_contains(lines[4], "(floor 35 dB)");
  assert_contains(lines[4], "; peak memory ");
  assert_true(!strncmp(lines[5], "  forward ", 10));
  assert_contains(lines[5], ", backward ");
  assert_contains(lines[5], "(noise ");
  assert_true(!strncmp(lines[6], "  the phases alone add up to ", 29));
  assert_string_equal(lines[7],
                      "  steps (each timed alone; share of their sum):");
  /* One line per step, the timed ones' shares adding up to ~100%. */
  size_t steps = mb_result_step_count(g_results[R_TRAIN]);
  assert_int_equal(n, 8 + steps);
  double share = 0;
  for (size_t i = 0; i < steps; i++) {
    mb_step_time_t s = MB_STEP_TIME_INIT;
    assert_int_equal(mb_result_step(g_results[R_TRAIN], i, &s), MB_OK);
    const char *l = lines[8 + i];
    assert_true(!strncmp(l, "    ", 4));
    assert_contains(l, mb_phase_name(s.phase));
    assert_contains(l, s.label);
    const char *pct = strchr(l, '%');
    if (isfinite(s.median_ns)) {
      assert_non_null(pct);
      while (pct > l && pct[-1] != ' ') pct--;
      share += strtod(pct, NULL);
    }
  }
  assert_true(fabs(share - 100) <= steps); /* each rounded */
  free(text);
}

/* Control characters in names and reasons are printed as \xNN: a name
 * holding ESC [ 2 J cannot clear the terminal, a newline cannot forge a
 * row. The length returned is the whole escaped text's, as snprintf's. */
static void test_escape_controls(void **state) {
  (void)state;
  char out[64];
  const char *evil = "a\x1b[2Jb\nc\x7f\td\xc3\xa9";
  size_t n = mb_escape_controls(evil, out, sizeof out);
  assert_string_equal(out, "a\\x1b[2Jb\\x0ac\\x7f\\x09d\xc3\xa9");
  assert_int_equal(n, strlen(out));
  assert_int_equal(mb_escape_controls(evil, out, 4), n); /* cut, sized */
  assert_string_equal(out, "a\\x");
  assert_int_equal(mb_escape_controls("", out, sizeof out), 0);
  assert_string_equal(out, "");
  /* The table writer prints a reason through it. */
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = p.shape[1] = 8;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "add";
  s.params = &p;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_result_without_run(g_ctx, &s, MB_RESULT_SKIPPED,
                                               "why\x1b[2J", &r),
                   MB_OK);
  char path[512];
  snprintf(path, sizeof path, "%s/evil.txt", g_dir);
  mb_report_t *rep = open_report(MB_FORMAT_TABLE, path);
  assert_int_equal(mb_report_add(rep, r), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  mb_result_destroy(r);
  char *text = slurp(path);
  assert_contains(text, "skipped: why\\x1b[2J");
  assert_null(strchr(text, '\x1b'));
  free(text);
}

static void test_format_names(void **state) {
  (void)state;
  static const char *const k_names[] = {"table", "json", "csv", "md", "ossdb"};
  for (size_t i = 0; i < sizeof k_names / sizeof *k_names; i++) {
    mb_format_t f;
    assert_int_equal(mb_format_from_name(k_names[i], &f), MB_OK);
    assert_string_equal(mb_format_name(f), k_names[i]);
  }
  mb_format_t f;
  assert_int_equal(mb_format_from_name("markdown", &f), MB_OK);
  assert_int_equal(f, MB_FORMAT_MARKDOWN);
  assert_int_equal(mb_format_from_name("xml", &f), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "\"xml\"");
  assert_contains(mb_error_last(),
                  "valid formats: table, json, csv, md, ossdb");
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  mb_report_t *rep = NULL;
  o.format = (mb_format_t)99;
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(),
                  "valid formats: table, json, csv, md, ossdb");
}

static void test_unwritable_path(void **state) {
  (void)state;
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  mb_report_t *rep = NULL;
  o.format = MB_FORMAT_CSV;
  o.path = "/nonexistent/dir/r.csv";
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_ERR_IO);
  assert_contains(mb_error_last(), "/nonexistent/dir/r.csv");
  o.format = MB_FORMAT_JSON;
  o.path = "/nonexistent/dir/r.json";
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_ERR_IO);
  assert_contains(mb_error_last(), "/nonexistent/dir/r.jsonl");
  assert_null(rep);
  assert_int_equal(mb_report_close(NULL), MB_OK);
}

/* ---- torchao drop-in outputs ------------------------------------------ */

/* torchao's CSV header, copied from pytorch/ao at dbef6992 (the last
 * commit with the runner): generate_results_csv writes
 * BenchmarkResult.to_dict()'s keys, benchmarks/microbenchmarks/utils.py
 * lines 92-105 (BenchmarkConfig.to_dict) then 132-142. */
static const char *const k_torchao_columns[] = {
    "name",
    "quantization",
    "sparsity",
    "m",
    "k",
    "n",
    "high_precision_dtype",
    "torch_compile_mode",
    "device",
    "model_type",
    "output_dir",
    "enable_profiler",
    "enable_memory_profiler",
    "baseline_model_eager_inference_time_in_ms",
    "quantized_model_eager_inference_time_in_ms",
    "baseline_model_compiled_inference_time_in_ms",
    "quantized_model_compiled_inference_time_in_ms",
    "eager speedup on baseline",
    "compile speedup on baseline",
    "eager vs compile speedup",
    "profiler_json_path",
    "memory_profile_path",
    "memory_visualization_path",
    "memory_stats"};
#define NUM_TORCHAO_COLUMNS \
  (sizeof k_torchao_columns / sizeof *k_torchao_columns)

/* Its dashboard's metrics, in the order it writes them:
 * benchmarks/dashboard/ci_microbenchmark_runner.py lines 131, 141, 154,
 * 167 (same commit). */
static const char *const k_torchao_metrics[] = {
    "Fwd Speedup (x)", "Bfloat16 Fwd Time (ms)", "Quantized Fwd Time (ms)",
    "Allocated Memory (MB)"};

/* A torchao config (the schema is detected): baseline and int8wo on one
 * unnamed linear group, so torchao's default name applies. */
static const char k_torchao_plan[] =
    "benchmark_mode: inference\n"
    "quantization_config_recipe_names: [int8wo]\n"
    "model_params:\n"
    "  - matrix_shapes: [{name: custom, shapes: [[32, 64, 48]]}]\n"
    "    torch_compile_mode: max-autotune\n"
    "    device: cpu\n";

/* Both entries run in order (baseline first: the speedup needs it);
 * out[0] baseline, out[1] int8wo. */
static void torchao_results(mb_result_t *out[2]) {
  mb_bench_spec_t timing = MB_BENCH_SPEC_INIT;
  timing.criterion = MB_CRITERION_FIXED;
  timing.samples = 3;
  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.timing = &timing;
  o.timing_fields = MB_TIMING_CRITERION | MB_TIMING_SAMPLES;
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(k_torchao_plan, sizeof k_torchao_plan - 1, "ao.yml", &o,
                    &plan) != MB_OK)
    fail_msg("the torchao plan: %s", mb_error_last());
  assert_string_equal(mb_plan_schema(plan), "torchao");
  assert_int_equal(mb_plan_count(plan), 2);
  for (size_t i = 0; i < 2; i++)
    assert_int_equal(mb_plan_run(g_ctx, plan, i, &out[i]), MB_OK);
  mb_plan_destroy(plan);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(out[1], &info);
  assert_string_equal(info.recipe, "int8wo");
  assert_int_equal(info.status, MB_RESULT_OK);
}

static char *write_report(mb_format_t fmt, const char *file,
                          mb_result_t *const *rs, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", g_dir, file);
  mb_report_t *rep = open_report(fmt, path);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(mb_report_add(rep, rs[i]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  return slurp(path);
}

/* The column's cell by position (two names, `name` and `device`, are
 * torchao's and ours). */
static const char *cell_at(const csv_t *c, size_t row, size_t col) {
  return c->cells[row * c->cols + col];
}

static void test_torchao_csv(void **state) {
  (void)state;
  mb_result_t *rs[2];
  torchao_results(rs);
  char *text = write_report(MB_FORMAT_CSV, "ao.csv", rs, 2);
  char *ours = write_report(MB_FORMAT_CSV, "ours.csv", &g_results[R_GEMM], 1);
  csv_t c = csv_parse(text), o = csv_parse(ours);
  assert_int_equal(c.rows, 3);
  /* torchao's columns in its order, then ours, whole and in ours. */
  assert_int_equal(c.cols, NUM_TORCHAO_COLUMNS + o.cols);
  for (size_t i = 0; i < NUM_TORCHAO_COLUMNS; i++)
    assert_string_equal(c.cells[i], k_torchao_columns[i]);
  for (size_t i = 0; i < o.cols; i++)
    assert_string_equal(c.cells[NUM_TORCHAO_COLUMNS + i], o.cells[i]);
  assert_string_equal(o.cells[0], "id"); /* a native result: unchanged */
  /* The config's values as torchao's runner fills them. */
  static const char *const k_want[][2] = {
      {"name", "benchmark_int8wo_linear_m32_k64_n48_compile"},
      {"quantization", "int8wo"},
      {"sparsity", ""},
      {"m", "32"},
      {"k", "64"},
      {"n", "48"},
      {"high_precision_dtype", "torch.bfloat16"},
      {"torch_compile_mode", "max-autotune"},
      {"device", "cpu"},
      {"model_type", "linear"},
      {"output_dir", "benchmarks/microbenchmarks/results/inference"},
      {"enable_profiler", "False"},
      {"enable_memory_profiler", "False"},
      {"baseline_model_eager_inference_time_in_ms", ""},
      {"eager speedup on baseline", ""},
      {"profiler_json_path", ""}};
  for (size_t i = 0; i < sizeof k_want / sizeof *k_want; i++)
    assert_string_equal(cell(&c, 2, k_want[i][0]), k_want[i][1]);
  /* The figures: ours, in torchao's units, Python's text of each. */
  mb_stats_t base = MB_STATS_INIT, q = MB_STATS_INIT;
  mb_result_stats(rs[0], &base);
  mb_result_stats(rs[1], &q);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(rs[1], &info);
  assert_string_equal(cell(&c, 1, "compile speedup on baseline"), "1.0");
  assert_true(
      csv_number(&c, 1, "baseline_model_compiled_inference_time_in_ms") ==
      base.median / 1e6);
  assert_true(
      csv_number(&c, 2, "quantized_model_compiled_inference_time_in_ms") ==
      q.median / 1e6);
  assert_true(
      near(csv_number(&c, 2, "baseline_model_compiled_inference_time_in_ms"),
           base.median / 1e6));
  assert_true(csv_number(&c, 2, "compile speedup on baseline") ==
              info.speedup_vs_baseline);
  char mem[96];
  snprintf(mem, sizeof mem, "{'allocated_bytes.all.peak': ");
  const char *stats = cell(&c, 2, "memory_stats");
  assert_memory_equal(stats, mem, strlen(mem));
  assert_true(
      near(strtod(stats + strlen(mem), NULL), info.peak_memory_bytes / 1e6));
  /* Ours follow under their own names: the second `name` is ours. */
  assert_string_equal(cell_at(&c, 2, NUM_TORCHAO_COLUMNS + 1), info.name);
  assert_string_equal(cell(&c, 2, "recipe"), "int8wo");
  csv_free(&c);
  csv_free(&o);
  free(text);
  free(ours);
  /* The first row chooses: a native one first keeps our header. */
  mb_result_t *mixed[2] = {g_results[R_GEMM], rs[1]};
  text = write_report(MB_FORMAT_CSV, "mixed.csv", mixed, 2);
  c = csv_parse(text);
  assert_string_equal(c.cells[0], "id");
  assert_string_equal(cell(&c, 2, "recipe"), "int8wo");
  csv_free(&c);
  free(text);
  for (int i = 0; i < 2; i++) mb_result_destroy(rs[i]);
}

static void test_torchao_ossdb(void **state) {
  (void)state;
  mb_result_t *rs[3];
  torchao_results(rs);
  /* Read back from its JSON (mbench merge, compare): still torchao's. */
  assert_int_equal(mb_result_from_json(mb_result_json(rs[1]), &rs[2]), MB_OK);
  char *text = write_report(MB_FORMAT_OSSDB, "ao.ossdb", rs, 3);
  cJSON *doc = cJSON_Parse(text);
  assert_non_null(doc);
  mb_stats_t base = MB_STATS_INIT, q = MB_STATS_INIT;
  mb_result_stats(rs[0], &base);
  mb_result_stats(rs[1], &q);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(rs[1], &info);
  /* Baseline and int8wo: torchao's four, then ours it has no metric for;
   * the read-back copy gives the int8wo records again. */
  static const char *const k_ours[] = {"tflops", "correctness", "sqnr_db"};
  const size_t per = 4 + sizeof k_ours / sizeof *k_ours;
  assert_int_equal(cJSON_GetArraySize(doc), 3 * per);
  for (size_t i = 0; i < 3 * per; i++) {
    const cJSON *rec = cJSON_GetArrayItem(doc, (int)i);
    const size_t k = i % per;
    const int is_base = i < per;
    const double v = metric(rec, k < 4 ? k_torchao_metrics[k] : k_ours[k - 4]);
    cJSON *b = cJSON_GetObjectItem(rec, "benchmark");
    assert_string_equal(str(b, "name"), "micro-benchmark api");
    assert_string_equal(str(b, "mode"), "inference");
    assert_string_equal(str(b, "dtype"), is_base ? "baseline" : "int8wo");
    cJSON *x = cJSON_GetObjectItem(b, "extra_info");
    assert_string_equal(str(x, "device"), "cpu");
    assert_string_equal(str(x, "arch"), info.device);
    assert_string_equal(str(x, "torch_compile_mode"), "max-autotune");
    cJSON *m = cJSON_GetObjectItem(rec, "model");
    assert_string_equal(str(m, "name"),
                        is_base ? "baseline-32-64-48" : "int8wo-32-64-48");
    assert_string_equal(str(m, "type"), "micro-benchmark custom layer");
    assert_string_equal(
        cJSON_GetArrayItem(cJSON_GetObjectItem(m, "origins"), 0)->valuestring,
        "torchao");
    cJSON *mx =
        cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "metric"), "extra_info");
    assert_true(cJSON_IsObject(mx));
    if (k == 1 || k == 2) assert_string_equal(str(mx, "unit"), "ms");
    if (k == 3) assert_string_equal(str(mx, "unit"), "MB");
    if (is_base) continue;
    /* int8wo's figures, the read-back copy's the same. */
    if (k == 0) assert_true(near(v, info.speedup_vs_baseline));
    if (k == 1) assert_true(near(v, base.median / 1e6));
    if (k == 2) assert_true(near(v, q.median / 1e6));
    if (k == 3) assert_true(near(v, info.peak_memory_bytes / 1e6));
  }
  cJSON_Delete(doc);
  free(text);
  for (int i = 0; i < 3; i++) mb_result_destroy(rs[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_file),
      cmocka_unit_test(test_json_to_stream),
      cmocka_unit_test(test_json_kept_stream),
      cmocka_unit_test(test_csv),
      cmocka_unit_test(test_ossdb),
      cmocka_unit_test(test_torchao_csv),
      cmocka_unit_test(test_torchao_ossdb),
      cmocka_unit_test(test_table_and_markdown),
      cmocka_unit_test(test_table_model_details),
      cmocka_unit_test(test_escape_controls),
      cmocka_unit_test(test_format_names),
      cmocka_unit_test(test_unwritable_path),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
