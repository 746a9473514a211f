/* The console table's layout (lib/report/table_layout.c): column choice,
 * a table fitted to a width (constant columns above it, empty ones gone,
 * long variants in a legend, default columns left out in order and said
 * so) and no line ending in spaces. The record formats are test_report's. */
#include <unistd.h>

#include "test_util.h"

/* Three gemms on the CPU that differ in shape only, one with a long
 * variant (beta and quantized inputs), and an add. */
enum { R_SMALL, R_LARGE, R_VARIANT, R_ADD, NUM_RESULTS };

static mb_context_t *g_ctx;
static mb_result_t *g_results[NUM_RESULTS];

static mb_result_t *bench(const char *op, int64_t m, int64_t k, int64_t n,
                          int variant) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = n ? 3 : 2;
  p.shape[0] = m;
  p.shape[1] = k;
  p.shape[2] = n;
  if (variant) {
    p.beta = 0.5;
    p.flags = MB_PARAM_QUANTIZE_INPUTS;
    p.dtype_q = MB_DTYPE_F8E4M3;
  }
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = "cpu";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 3;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(g_ctx, &s, &r), MB_OK);
  return r;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  g_results[R_SMALL] = bench("gemm", 16, 24, 8, 0);
  g_results[R_LARGE] = bench("gemm", 32, 48, 40, 0);
  g_results[R_VARIANT] = bench("gemm", 16, 24, 8, 1);
  g_results[R_ADD] = bench("add", 30, 20, 0, 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < NUM_RESULTS; i++) mb_result_destroy(g_results[i]);
  mb_context_destroy(g_ctx);
  return 0;
}

/* The table of results [first, last) with these options, as text. */
static char *table(const char *columns, unsigned width, int first, int last) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  o.stream = f;
  o.columns = columns;
  o.width = width;
  mb_report_t *rep = NULL;
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_OK);
  for (int i = first; i < last; i++)
    assert_int_equal(mb_report_add(rep, g_results[i]), MB_OK);
  assert_int_equal(mb_report_close(rep), MB_OK);
  assert_int_equal(fclose(f), 0);
  return text;
}

/* The line that starts with `start`, or NULL. */
static const char *line_starting(const char *text, const char *start) {
  for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
    if (!strncmp(l, start, strlen(start))) return l;
  return NULL;
}

static size_t line_len(const char *l) {
  return strcspn(l, "\n");
}

static void assert_no_trailing_spaces(const char *text) {
  for (const char *p = strchr(text, '\n'); p; p = strchr(p + 1, '\n'))
    if (p > text && p[-1] == ' ') fail_msg("a line ends in a space:\n%s", text);
}

/* Streamed: every default column (name only when asked for), the last
 * unpadded. */
static void test_streamed_default(void **state) {
  (void)state;
  char *text = table(NULL, 0, R_SMALL, R_LARGE + 1);
  assert_no_trailing_spaces(text);
  const char *titles = line_starting(text, "op ");
  assert_non_null(titles);
  assert_null(strstr(text, "name "));
  for (size_t i = 0;; i++) {
    int is_default;
    const char *title, *key = mb_report_column(i, &title, NULL, &is_default);
    if (!key) break;
    if (strcmp(key, "name") == 0) continue;
    const int shown = strstr(titles, title) != NULL;
    if (is_default != shown) fail_msg("column %s: shown %d", key, shown);
  }
  free(text);
}

/* "+p90,-gbps" edits the default set; a list replaces it, in the table's
 * own column order; an unknown key names the valid ones. */
static void test_column_choice(void **state) {
  (void)state;
  char *text = table("+p90,+stop,-gbps", 0, R_SMALL, R_SMALL + 1);
  assert_non_null(strstr(text, " p90 "));
  assert_non_null(strstr(text, " stop"));
  assert_null(strstr(text, "GB/s"));
  assert_non_null(strstr(text, "GFLOP/s"));
  free(text);
  text = table("check,median,op", 0, R_SMALL, R_SMALL + 1);
  const char *titles = line_starting(text, "op ");
  assert_non_null(titles);
  assert_true(strstr(titles, "median") < strstr(titles, "check"));
  assert_null(strstr(titles, "shape"));
  free(text);
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  o.columns = "median,nope";
  mb_report_t *rep = NULL;
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_ERR_INVALID_ARG);
  assert_null(rep);
  assert_non_null(strstr(mb_error_last(), "\"nope\""));
  assert_non_null(strstr(mb_error_last(), "p10"));
  o.columns = ",";
  assert_int_equal(mb_report_open(g_ctx, &o, &rep), MB_ERR_INVALID_ARG);
}

/* Fitted: the constant op/dtype/backend move above the table, the empty
 * name, variant and speedup columns go, every line fits. */
static void test_fitted_constants(void **state) {
  (void)state;
  char *text = table(NULL, 100, R_SMALL, R_LARGE + 1);
  assert_no_trailing_spaces(text);
  assert_true(!strncmp(text, "op gemm  |  dtype f32  |  backend cpu", 37));
  const char *titles = line_starting(text, "shape ");
  assert_non_null(titles);
  assert_null(strstr(titles, "variant"));
  assert_null(strstr(titles, "speedup"));
  assert_null(strstr(titles, "name"));
  assert_non_null(line_starting(text, "16x24x8 "));
  assert_non_null(line_starting(text, "32x48x40 "));
  for (const char *l = text; *l; l += line_len(l) + 1)
    assert_true(line_len(l) <= 100);
  free(text);
  /* One row says what it is, in the row when it fits ... */
  text = table(NULL, 200, R_SMALL, R_SMALL + 1);
  assert_non_null(line_starting(text, "op "));
  assert_non_null(line_starting(text, "gemm "));
  free(text);
  /* ... and in a line above it when it does not. */
  text = table(NULL, 60, R_SMALL, R_SMALL + 1);
  assert_true(!strncmp(text, "op gemm  |  shape 16x24x8", 25));
  assert_no_trailing_spaces(text);
  assert_null(line_starting(text, "gemm "));
  const char *median = strstr(text, "median");
  assert_non_null(median);
  assert_true(strstr(median, "noise") < strchr(median, '\n'));
  free(text);
}

/* Narrow: the long variant becomes [1] with a legend, then default
 * columns go in their order and the line under the table names them; a
 * column asked for stays. */
static void test_fitted_narrow(void **state) {
  (void)state;
  char *text = table(NULL, 60, R_SMALL, NUM_RESULTS);
  assert_no_trailing_spaces(text);
  assert_non_null(strstr(text, "  [1]  "));
  const char *legend = line_starting(text, "[1] ");
  assert_non_null(legend);
  assert_non_null(strstr(legend, "beta"));
  const char *left = strstr(text, "(left out to fit 60 columns: ");
  assert_non_null(left);
  assert_non_null(strstr(left, "samples"));
  for (const char *l = text; *l; l += line_len(l) + 1)
    assert_true(line_len(l) <= 60);
  free(text);
  text = table("+samples", 40, R_SMALL, NUM_RESULTS);
  assert_non_null(strstr(text, "samples  "));
  assert_null(strstr(text, "left out to fit 40 columns: samples"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_streamed_default),
      cmocka_unit_test(test_column_choice),
      cmocka_unit_test(test_fitted_constants),
      cmocka_unit_test(test_fitted_narrow),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
