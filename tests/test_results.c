/* Result files read back (documents and streams), compared and merged: each
 * verdict from results with known medians and noise, the errors bad files
 * get, and one round trip through the real JSON writer. */
#include <cjson/cJSON.h>
#include <math.h>
#include <unistd.h>

#include "test_util.h"

static char g_dir[256];

/* One result as the verdicts see it. noise: the relative IQR spread the
 * file's stats imply ((iqr / 1.349) / median) when count >= 5; with
 * count < 5, rel_stdev is noise and the IQR is set to something else, to
 * show which is read. The samples (count of them, 10 when 0) lie evenly
 * over a band `spread` x median wide centred on the median, so their
 * median is `median` and the test sees a known overlap. */
typedef struct res {
  const char *id, *problem, *status;
  double median, noise;
  int count;
  int wrong; /* checked and failed the check */
  double spread;
} res_t;

static const char *path_of(const char *name, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
  return buf;
}

static void put_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
}

static void append_result(char *buf, size_t cap, const res_t *r) {
  size_t n = strlen(buf);
  int count = r->count ? r->count : 10;
  int few = count < 5;
  double iqr = (few ? 0.5 : r->noise) * 1.349 * r->median;
  double rel = few ? r->noise : 0.99; /* unused unless few */
  n += (size_t)snprintf(
      buf + n, cap - n,
      "{\"id\": \"%s\", \"problem\": \"%s\", \"op\": \"gemm\", "
      "\"status\": \"%s\", \"reason\": \"\", \"correctness\": "
      "{\"checked\": %s, \"pass\": %s}, \"stats\": {\"count\": %d, "
      "\"median_ns\": %.17g, \"iqr_ns\": %.17g, \"rel_stdev\": %.17g}, "
      "\"samples_ns\": [",
      r->id, r->problem ? r->problem : r->id, r->status,
      strcmp(r->status, "ok") == 0 ? "true" : "false",
      r->wrong ? "false" : "true", count, r->median, iqr, rel);
  for (int i = 0; i < count && n < cap; i++)
    n += (size_t)snprintf(
        buf + n, cap - n, "%s%.17g", i ? ", " : "",
        r->median * (1 + r->spread * ((i + 0.5) / count - 0.5)));
  assert_true(n + 3 < cap);
  strcat(buf, "]}");
}

static const char k_device[] =
    "{\"backend\": \"cpu\", \"index\": 0, \"name\": \"Test CPU\"}";

/* A results document with host `host`; returns its path in buf. */
static const char *write_doc(const char *name, const char *host,
                             const res_t *rs, size_t n, char *buf, size_t cap) {
  static char text[1 << 16];
  snprintf(text, sizeof text,
           "{\n  \"schema\": \"microbench.results/1\",\n  \"meta\": "
           "{\"version\": \"9.9.9\", \"git_commit\": \"abc\", \"host\": "
           "{\"hostname\": \"%s\"}},\n  \"devices\": [%s, %s],\n  "
           "\"results\": [\n",
           host, k_device, k_device);
  for (size_t i = 0; i < n; i++) {
    if (i) strcat(text, ",\n");
    append_result(text, sizeof text, &rs[i]);
  }
  strcat(text, "\n  ]\n}\n");
  put_file(path_of(name, buf, cap), text);
  return buf;
}

static const char k_stream_header[] =
    "{\"schema\": \"microbench.results/1\", \"meta\": {\"host\": "
    "{\"hostname\": \"streamhost\"}}, \"devices\": [{\"backend\": \"cpu\", "
    "\"index\": 0, \"name\": \"Other CPU\"}]}\n";

/* A stream: header, one result per line, then `tail` as written. */
static const char *write_stream(const char *name, const res_t *rs, size_t n,
                                const char *tail, char *buf, size_t cap) {
  static char text[1 << 16];
  snprintf(text, sizeof text, "%s", k_stream_header);
  for (size_t i = 0; i < n; i++) {
    append_result(text, sizeof text, &rs[i]);
    strcat(text, "\n");
  }
  strcat(text, tail);
  put_file(path_of(name, buf, cap), text);
  return buf;
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/mb_test_results_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static mb_results_t *load(const char *path) {
  mb_results_t *set = NULL;
  if (mb_results_load(path, &set) != MB_OK)
    fail_msg("loading %s: %s", path, mb_error_last());
  return set;
}

static void assert_load_fails(const char *path, mb_status_t want,
                              const char *const *needles) {
  mb_results_t *set = (mb_results_t *)1;
  assert_int_equal(mb_results_load(path, &set), want);
  assert_null(set);
  for (; *needles; needles++) assert_contains(mb_error_last(), *needles);
}

/* ---- loading ------------------------------------------------------------ */

static const res_t k_two[] = {{"a/1", NULL, "ok", 1000, 0.01, 0, 0, 0},
                              {"b/2", NULL, "ok", 2000, 0.01, 0, 0, 0}};

static void test_load_document(void **state) {
  (void)state;
  char p[512];
  mb_results_t *set = load(write_doc("doc.json", "h", k_two, 2, p, sizeof p));
  assert_int_equal(mb_results_count(set), 2);
  assert_string_equal(mb_results_id(set, 0), "a/1");
  assert_string_equal(mb_results_id(set, 1), "b/2");
  assert_null(mb_results_id(set, 2));
  assert_null(mb_results_json(set, 2));
  const char *json = mb_results_json(set, 1);
  assert_non_null(json);
  assert_ptr_equal(json, mb_results_json(set, 1)); /* cached */
  assert_null(strchr(json, '\n'));                 /* unformatted */
  cJSON *r = cJSON_Parse(json);
  assert_string_equal(cJSON_GetObjectItem(r, "id")->valuestring, "b/2");
  assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "stats"), "median_ns")
                  ->valuedouble == 2000);
  cJSON_Delete(r);
  mb_results_destroy(set);
  mb_results_destroy(NULL);
  assert_int_equal(mb_results_count(NULL), 0);
}

static void test_load_stream(void **state) {
  (void)state;
  char p[512];
  /* The run died in the middle of its third result. */
  mb_results_t *set = load(write_stream(
      "s.jsonl", k_two, 2, "{\"id\": \"c/3\", \"status\": \"o", p, sizeof p));
  assert_int_equal(mb_results_count(set), 2);
  assert_string_equal(mb_results_id(set, 1), "b/2");
  assert_contains(mb_results_json(set, 0), "\"median_ns\":1000");
  mb_results_destroy(set);
  /* Complete streams, with blank lines and a last line with no newline. */
  set = load(write_stream("s2.jsonl", k_two, 2, "\n", p, sizeof p));
  assert_int_equal(mb_results_count(set), 2);
  mb_results_destroy(set);
  set = load(write_stream("s3.jsonl", k_two, 1,
                          "{\"id\": \"z\", \"status\": \"ok\"}", p, sizeof p));
  assert_int_equal(mb_results_count(set), 2);
  assert_string_equal(mb_results_id(set, 1), "z");
  mb_results_destroy(set);
  /* A header alone: no results yet. */
  set = load(write_stream("s4.jsonl", NULL, 0, "", p, sizeof p));
  assert_int_equal(mb_results_count(set), 0);
  mb_results_destroy(set);
}

static void test_stream_errors(void **state) {
  (void)state;
  char p[512];
  /* A bad line that is not the cut-off last one: its newline was written. */
  write_stream("bad_mid.jsonl", k_two, 1, "{\"id\": \"x\", \"sta\n", p,
               sizeof p);
  assert_load_fails(
      p, MB_ERR_PARSE,
      (const char *const[]){"bad_mid.jsonl:3", "not a result", NULL});
  write_stream("bad_mid2.jsonl", k_two, 1, "garbage\n{\"id\": \"y\"}\n", p,
               sizeof p);
  assert_load_fails(p, MB_ERR_PARSE,
                    (const char *const[]){"bad_mid2.jsonl:3", NULL});
  write_stream("noid.jsonl", k_two, 2, "{\"status\": \"ok\"}\n", p, sizeof p);
  assert_load_fails(p, MB_ERR_PARSE,
                    (const char *const[]){"noid.jsonl:4", "no \"id\"", NULL});
  put_file(path_of("badschema.jsonl", p, sizeof p),
           "{\"schema\": \"other/2\", \"meta\": {}}\n{\"id\": \"a\"}\n");
  assert_load_fails(p, MB_ERR_PARSE,
                    (const char *const[]){"badschema.jsonl:1", "\"other/2\"",
                                          "microbench.results/1", NULL});
}

static void test_document_errors(void **state) {
  (void)state;
  char p[512];
  put_file(path_of("v2.json", p, sizeof p),
           "{\n\"schema\": \"microbench.results/2\", \"results\": []}\n");
  assert_load_fails(
      p, MB_ERR_PARSE,
      (const char *const[]){"v2.json", "microbench.results/2",
                            "expected \"microbench.results/1\"", NULL});
  put_file(path_of("noschema.json", p, sizeof p), "{\n\"results\": []}\n");
  assert_load_fails(p, MB_ERR_PARSE,
                    (const char *const[]){"noschema.json", "no \"schema\"",
                                          "microbench.results/1", NULL});
  put_file(path_of("noid.json", p, sizeof p),
           "{\n\"schema\": \"microbench.results/1\", \"results\": "
           "[{\"id\": \"a\", \"status\": \"ok\"}, {\"op\": \"gemm\"}]}\n");
  assert_load_fails(
      p, MB_ERR_PARSE,
      (const char *const[]){"noid.json", "results[1]", "no \"id\"", NULL});
  put_file(path_of("broken.json", p, sizeof p),
           "{\n\"schema\": \"microbench.results/1\",\n\"results\": [,]}\n");
  assert_load_fails(
      p, MB_ERR_PARSE,
      (const char *const[]){"broken.json:3", "not valid JSON", NULL});
  put_file(path_of("noresults.json", p, sizeof p),
           "{\n\"schema\": \"microbench.results/1\", \"results\": 3}\n");
  assert_load_fails(
      p, MB_ERR_PARSE,
      (const char *const[]){"noresults.json", "\"results\"", NULL});
  put_file(path_of("empty.json", p, sizeof p), "\n  \n");
  assert_load_fails(p, MB_ERR_PARSE,
                    (const char *const[]){"empty.json", "empty", NULL});
  assert_load_fails(path_of("absent.json", p, sizeof p), MB_ERR_IO,
                    (const char *const[]){"absent.json", NULL});
}

/* ---- comparing ---------------------------------------------------------- */

/* Base and new per case, and the verdict the rule gives (threshold 5 %,
 * alpha 0.05; 10 samples a side unless said). */
static const struct {
  res_t base, nw;
  mb_verdict_t want;
} k_cases[] = {
    /* d = +3 %, no overlap (p ~ 1e-5): real, within the threshold. */
    {{"same_thr", 0, "ok", 1000, 0.01, 0, 0, 0},
     {"same_thr", 0, "ok", 1030, 0.01, 0, 0, 0},
     MB_VERDICT_SAME},
    /* d = +4 %, samples overlapping: within the threshold all the same. */
    {{"same_noise", 0, "ok", 1000, 0.03, 0, 0, 0.2},
     {"same_noise", 0, "ok", 1040, 0.03, 0, 0, 0.2},
     MB_VERDICT_SAME},
    /* d = +10 %, samples spread over +-50 %: p 0.53, cannot tell. */
    {{"noisy", 0, "ok", 1000, 0.10, 0, 0, 1.0},
     {"noisy", 0, "ok", 1100, 0.10, 0, 0, 1.0},
     MB_VERDICT_NOISY},
    /* d = +30 % over +-10 % spread: apart (p 1.1e-5), a regression. */
    {{"slower_noisy", 0, "ok", 1000, 0.10, 0, 0, 0.2},
     {"slower_noisy", 0, "ok", 1300, 0.10, 0, 0, 0.2},
     MB_VERDICT_SLOWER},
    {{"faster", 0, "ok", 1000, 0.01, 0, 0, 0},
     {"faster", 0, "ok", 800, 0.01, 0, 0, 0},
     MB_VERDICT_FASTER},
    {{"slower", 0, "ok", 1000, 0.01, 0, 0, 0},
     {"slower", 0, "ok", 1200, 0.01, 0, 0, 0},
     MB_VERDICT_SLOWER},
    /* 3 samples a side: p is at least 2 / C(6, 3) = 0.1 however far apart
     * they are, so +20 % cannot be told from chance. (The noise reported
     * is rel_stdev when there are fewer than 5 samples.) */
    {{"few_samples", 0, "ok", 1000, 0.2, 3, 0, 0},
     {"few_samples", 0, "ok", 1200, 0.2, 3, 0, 0},
     MB_VERDICT_NOISY},
    {{"failed", 0, "ok", 1000, 0.01, 0, 0, 0},
     {"failed", 0, "failed", 0, 0, 0, 0, 0},
     MB_VERDICT_FAILED},
    {{"wrong", 0, "ok", 1000, 0.01, 0, 0, 0},
     {"wrong", 0, "ok", 1000, 0.01, 0, 1, 0},
     MB_VERDICT_FAILED},
    /* Wrong before and after: no new failure, the times are compared. */
    {{"wrong_both", 0, "ok", 1000, 0.01, 0, 1, 0},
     {"wrong_both", 0, "ok", 1010, 0.01, 0, 1, 0},
     MB_VERDICT_SAME},
    {{"skipped_base", 0, "skipped", 0, 0, 0, 0, 0},
     {"skipped_base", 0, "ok", 1000, 0.01, 0, 0, 0},
     MB_VERDICT_SKIPPED},
    {{"failed_base", 0, "failed", 0, 0, 0, 0, 0},
     {"failed_base", 0, "failed", 0, 0, 0, 0, 0},
     MB_VERDICT_SKIPPED},
    {{"skipped_both", 0, "skipped", 0, 0, 0, 0, 0},
     {"skipped_both", 0, "skipped", 0, 0, 0, 0, 0},
     MB_VERDICT_SKIPPED},
};
#define NUM_CASES (sizeof k_cases / sizeof k_cases[0])

static mb_comparison_t *compare_with(const char *base, const char *nw,
                                     const mb_compare_options_t *o) {
  mb_results_t *b = load(base), *n = load(nw);
  mb_comparison_t *c = NULL;
  if (mb_results_compare(b, n, o, &c) != MB_OK)
    fail_msg("compare: %s", mb_error_last());
  mb_results_destroy(b); /* the comparison owns what it keeps */
  mb_results_destroy(n);
  return c;
}

static mb_comparison_t *compare(const char *base, const char *nw,
                                double threshold, int by_problem) {
  mb_compare_options_t o = MB_COMPARE_OPTIONS_INIT;
  o.threshold_pct = threshold;
  o.match_problem = by_problem;
  return compare_with(base, nw, &o);
}

static mb_compare_row_t row_at(const mb_comparison_t *c, size_t i) {
  mb_compare_row_t r = MB_COMPARE_ROW_INIT;
  assert_int_equal(mb_comparison_row(c, i, &r), MB_OK);
  return r;
}

static void write_case_files(char *bp, char *np, size_t cap) {
  res_t base[NUM_CASES + 1], nw[NUM_CASES + 1];
  for (size_t i = 0; i < NUM_CASES; i++) {
    base[i] = k_cases[i].base;
    nw[NUM_CASES - i] = k_cases[i].nw; /* another order: base's wins */
  }
  base[NUM_CASES] = (res_t){"gone", 0, "ok", 500, 0.01, 0, 0, 0};
  nw[0] = (res_t){"added", 0, "ok", 700, 0.01, 0, 0, 0};
  write_doc("cases_base.json", "h1", base, NUM_CASES + 1, bp, cap);
  write_doc("cases_new.json", "h1", nw, NUM_CASES + 1, np, cap);
}

static void test_every_verdict(void **state) {
  (void)state;
  char bp[512], np[512];
  write_case_files(bp, np, sizeof bp);
  mb_comparison_t *c = compare(bp, np, 5.0, 0);
  assert_int_equal(mb_comparison_count(c), NUM_CASES + 2);
  size_t regressions = 0;
  for (size_t i = 0; i < NUM_CASES; i++) {
    mb_compare_row_t r = row_at(c, i);
    assert_string_equal(r.id, k_cases[i].base.id);
    if (r.verdict != k_cases[i].want)
      fail_msg("%s: %s, expected %s", r.id, mb_verdict_name(r.verdict),
               mb_verdict_name(k_cases[i].want));
    regressions += k_cases[i].want == MB_VERDICT_SLOWER ||
                   k_cases[i].want == MB_VERDICT_FAILED;
  }
  mb_compare_row_t gone = row_at(c, NUM_CASES),
                   added = row_at(c, NUM_CASES + 1);
  assert_string_equal(gone.id, "gone");
  assert_int_equal(gone.verdict, MB_VERDICT_MISSING);
  assert_true(gone.base_ns == 500 && isnan(gone.new_ns) && isnan(gone.ratio));
  assert_string_equal(added.id, "added");
  assert_int_equal(added.verdict, MB_VERDICT_NEW);
  assert_true(isnan(added.base_ns) && added.new_ns == 700);
  assert_int_equal(mb_comparison_regressions(c), regressions);
  assert_int_equal(regressions, 4);

  /* The figures behind the verdicts. */
  mb_compare_row_t slower = row_at(c, 5), few = row_at(c, 6);
  assert_true(slower.base_ns == 1000 && slower.new_ns == 1200);
  assert_true(fabs(slower.ratio - 1.2) < 1e-12);
  assert_true(fabs(slower.base_noise - 0.01) < 1e-12); /* from the IQR */
  assert_true(fabs(few.base_noise - 0.2) < 1e-12);     /* rel_stdev */
  mb_compare_row_t failed = row_at(c, 7);
  assert_true(isnan(failed.new_ns) && isnan(failed.ratio));
  /* The test's p beside each timed verdict; the ones checked by hand:
   * 3 v 3 apart, 2 / C(6, 3); 10 v 10 apart, 2 / C(20, 10). */
  assert_true(isnan(gone.p_value) && isnan(added.p_value));
  assert_true(isnan(failed.p_value));
  assert_true(fabs(few.p_value - 0.1) < 1e-12);
  assert_true(fabs(slower.p_value - 2 / 184756.0) < 1e-15);
  assert_true(row_at(c, 2).p_value > 0.5 && row_at(c, 2).p_value < 0.6);
  mb_comparison_destroy(c);

  /* A threshold of 25 %: +20 % becomes SAME; +30 % is still SLOWER. */
  c = compare(bp, np, 25.0, 0);
  assert_int_equal(row_at(c, 5).verdict, MB_VERDICT_SAME);
  assert_int_equal(row_at(c, 3).verdict, MB_VERDICT_SLOWER);
  assert_int_equal(row_at(c, 2).verdict, MB_VERDICT_SAME); /* noise < 25 % */
  assert_int_equal(mb_comparison_regressions(c), 3);
  mb_comparison_destroy(c);
}

static void test_verdict_names_and_rows(void **state) {
  (void)state;
  static const char *const k_names[] = {"SAME",  "FASTER", "SLOWER",
                                        "NOISY", "FAILED", "MISSING",
                                        "NEW",   "SKIPPED"};
  for (int v = 0; v < 8; v++)
    assert_string_equal(mb_verdict_name((mb_verdict_t)v), k_names[v]);
  assert_string_equal(mb_verdict_name((mb_verdict_t)99), "?");
  char p[512];
  write_doc("one.json", "h", k_two, 2, p, sizeof p);
  mb_results_t *s = load(p);
  mb_comparison_t *c = NULL;
  assert_int_equal(mb_results_compare(s, s, NULL, &c), MB_OK); /* defaults */
  mb_compare_row_t r = MB_COMPARE_ROW_INIT;
  assert_int_equal(mb_comparison_row(c, 2, &r), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "2 rows");
  assert_int_equal(row_at(c, 1).verdict, MB_VERDICT_SAME);
  mb_comparison_destroy(c);
  mb_compare_options_t o = MB_COMPARE_OPTIONS_INIT;
  o.threshold_pct = -1;
  assert_int_equal(mb_results_compare(s, s, &o, &c), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "threshold_pct");
  assert_null(c);
  o = (mb_compare_options_t)MB_COMPARE_OPTIONS_INIT;
  o.struct_size = 4;
  assert_int_equal(mb_results_compare(s, s, &o, &c), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "MB_COMPARE_OPTIONS_INIT");
  mb_results_destroy(s);
}

static void test_match_by_problem(void **state) {
  (void)state;
  const res_t cpu[] = {{"gemm/8x8x8/f32/cpu:0/onednn/cold", "gemm/8x8x8/f32",
                        "ok", 1000, 0.01, 0, 0, 0}};
  const res_t gpu[] = {{"gemm/8x8x8/f32/cuda:0/cublaslt/cold", "gemm/8x8x8/f32",
                        "ok", 100, 0.01, 0, 0, 0}};
  char bp[512], np[512];
  write_doc("cpu.json", "h", cpu, 1, bp, sizeof bp);
  write_doc("gpu.json", "h", gpu, 1, np, sizeof np);
  mb_comparison_t *c = compare(bp, np, 5, 0);
  assert_int_equal(mb_comparison_count(c), 2);
  assert_int_equal(row_at(c, 0).verdict, MB_VERDICT_MISSING);
  assert_int_equal(row_at(c, 1).verdict, MB_VERDICT_NEW);
  mb_comparison_destroy(c);
  c = compare(bp, np, 5, 1);
  assert_int_equal(mb_comparison_count(c), 1);
  mb_compare_row_t r = row_at(c, 0);
  assert_string_equal(r.id, "gemm/8x8x8/f32");
  assert_int_equal(r.verdict, MB_VERDICT_FASTER);
  assert_true(fabs(r.ratio - 0.1) < 1e-12);
  mb_comparison_destroy(c);
}

static void test_duplicate_key(void **state) {
  (void)state;
  const res_t dup[] = {{"x/1", "p", "ok", 1000, 0.01, 0, 0, 0},
                       {"x/2", "p", "ok", 1000, 0.01, 0, 0, 0},
                       {"x/1", "p", "ok", 1000, 0.01, 0, 0, 0}};
  char p[512], q[512];
  write_doc("dup.json", "h", dup, 3, p, sizeof p);
  write_doc("dup_problem.json", "h", dup, 2, q, sizeof q);
  mb_results_t *d = load(p), *dp = load(q);
  mb_comparison_t *c = NULL;
  assert_int_equal(mb_results_compare(dp, d, NULL, &c), MB_ERR_INVALID_ARG);
  assert_null(c);
  assert_contains(mb_error_last(), "dup.json");
  assert_contains(mb_error_last(), "\"x/1\"");
  assert_contains(mb_error_last(), "results[0] and results[2]");
  assert_contains(mb_error_last(), "ambiguous");
  /* By id the two problems' results differ; by problem they collide. */
  assert_int_equal(mb_results_compare(dp, dp, NULL, &c), MB_OK);
  mb_comparison_destroy(c);
  mb_compare_options_t o = MB_COMPARE_OPTIONS_INIT;
  o.match_problem = 1;
  assert_int_equal(mb_results_compare(dp, dp, &o, &c), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "problem \"p\"");
  mb_results_destroy(d);
  mb_results_destroy(dp);
}

/* ---- the test on the samples -------------------------------------------- */

/* One result each side, compared at threshold_pct and alpha: its row. */
static mb_compare_row_t judge_pair(const res_t *b, const res_t *n,
                                   double threshold_pct, double alpha) {
  char bp[512], np[512];
  write_doc("pair_base.json", "h", b, 1, bp, sizeof bp);
  write_doc("pair_new.json", "h", n, 1, np, sizeof np);
  mb_compare_options_t o = MB_COMPARE_OPTIONS_INIT;
  o.threshold_pct = threshold_pct;
  o.alpha = alpha;
  mb_comparison_t *c = compare_with(bp, np, &o);
  assert_int_equal(mb_comparison_count(c), 1);
  mb_compare_row_t r = row_at(c, 0);
  r.id = NULL; /* owned by the comparison */
  mb_comparison_destroy(c);
  assert_true(isnan(r.p_value) || (r.p_value >= 0 && r.p_value <= 1));
  return r;
}

/* Samples spread evenly over a band 20 % wide (+-10 %), new 3 % slower:
 * each run's noise figure is 7.4 % ((IQR / 1.349) / median), 10.5 % for
 * the two, so the rule before the test called it NOISY at any sample
 * count. The test tells it apart once there are enough samples. */
static void test_shift_within_the_spread(void **state) {
  (void)state;
  const double noise = 0.1 / 1.349;
  const res_t b200 = {"k", 0, "ok", 1000, noise, 200, 0, 0.2},
              n200 = {"k", 0, "ok", 1030, noise, 200, 0, 0.2};
  mb_compare_row_t r = judge_pair(&b200, &n200, 1, 0.05);
  assert_int_equal(r.verdict, MB_VERDICT_SLOWER);
  assert_true(fabs(r.ratio - 1.03) < 1e-12);
  assert_true(r.p_value < 1e-4);
  assert_true(sqrt(r.base_noise * r.base_noise + r.new_noise * r.new_noise) >
              0.1);
  mb_compare_row_t rev = judge_pair(&n200, &b200, 1, 0.05);
  assert_int_equal(rev.verdict, MB_VERDICT_FASTER);
  assert_true(fabs(rev.p_value - r.p_value) < 1e-15); /* two-sided */
  /* Real, but within a 5 % threshold: too small to matter. */
  assert_int_equal(judge_pair(&b200, &n200, 5, 0.05).verdict, MB_VERDICT_SAME);
  /* alpha is read: at 1e-9 the same evidence is not enough. */
  assert_int_equal(judge_pair(&b200, &n200, 1, 1e-9).verdict, MB_VERDICT_NOISY);
  /* The same distribution: every sample tied with one in the other run. */
  r = judge_pair(&b200, &b200, 1, 0.05);
  assert_int_equal(r.verdict, MB_VERDICT_SAME);
  assert_true(r.p_value == 1);

  /* 5 a side cannot tell the 3 % from chance: p = 174 / C(10, 5), counted
   * exactly. 50 a side can (p ~ 0.02): more samples decide NOISY. */
  const res_t b5 = {"k", 0, "ok", 1000, noise, 5, 0, 0.2},
              n5 = {"k", 0, "ok", 1030, noise, 5, 0, 0.2};
  r = judge_pair(&b5, &n5, 1, 0.05);
  assert_int_equal(r.verdict, MB_VERDICT_NOISY);
  assert_true(fabs(r.p_value - 174 / 252.0) < 1e-12);
  const res_t b50 = {"k", 0, "ok", 1000, noise, 50, 0, 0.2},
              n50 = {"k", 0, "ok", 1030, noise, 50, 0, 0.2};
  r = judge_pair(&b50, &n50, 1, 0.05);
  assert_int_equal(r.verdict, MB_VERDICT_SLOWER);
  assert_true(r.p_value > 0.01 && r.p_value < 0.03);
}

/* A stream of one result "tiny" whose samples are exactly `samples`. */
static const char *write_tiny(const char *name, double median,
                              const char *samples, char *buf, size_t cap) {
  char line[512];
  snprintf(line, sizeof line,
           "{\"id\": \"tiny\", \"problem\": \"tiny\", \"op\": \"gemm\", "
           "\"status\": \"ok\", \"reason\": \"\", \"correctness\": "
           "{\"checked\": true, \"pass\": true}, \"stats\": {\"median_ns\": "
           "%g}, \"samples_ns\": %s}\n",
           median, samples);
  return write_stream(name, NULL, 0, line, buf, cap);
}

/* p-values counted by hand: every way to pick base's ranks is equally
 * likely; p is the share of picks whose rank sum is at least as far from
 * its mean as base's. */
static void test_p_value_by_hand(void **state) {
  (void)state;
  static const struct {
    const char *base, *nw;
    double base_median, new_median, p;
  } k_tiny[] = {
      /* Apart: 2 of the C(6, 3) = 20 picks (this and its mirror). */
      {"[3, 1, 2]", "[4, 6, 5]", 2, 5, 0.1},
      /* Ranks 1 2 4 (sum 7, mean 10.5): sums <= 7 or >= 14, 4 picks. */
      {"[1, 2, 4]", "[3, 5, 6]", 2, 5, 0.2},
      /* Ties share their mean rank: 1 3 3 | 3 5 6 (sum 7, mean 10.5); the
       * picks of 1 and two 3s or of a 3, 5 and 6: 3 + 3 of 20. */
      {"[1, 2, 2]", "[2, 3, 4]", 2, 3, 0.3},
      /* One sample each: either order is as likely. */
      {"[1]", "[2]", 1, 2, 1},
  };
  for (size_t i = 0; i < sizeof k_tiny / sizeof k_tiny[0]; i++) {
    char bp[512], np[512];
    write_tiny("tiny_base.jsonl", k_tiny[i].base_median, k_tiny[i].base, bp,
               sizeof bp);
    write_tiny("tiny_new.jsonl", k_tiny[i].new_median, k_tiny[i].nw, np,
               sizeof np);
    mb_compare_options_t o = MB_COMPARE_OPTIONS_INIT;
    mb_comparison_t *c = compare_with(bp, np, &o);
    mb_compare_row_t r = row_at(c, 0);
    if (fabs(r.p_value - k_tiny[i].p) > 1e-12)
      fail_msg("%s vs %s: p %.17g, expected %g", k_tiny[i].base, k_tiny[i].nw,
               r.p_value, k_tiny[i].p);
    /* None reaches 0.05 at 3 a side: beyond the threshold, NOISY. */
    assert_int_equal(r.verdict, MB_VERDICT_NOISY);
    mb_comparison_destroy(c);
  }
  /* At alpha 0.2 the first is apart enough: SLOWER (ratio 2.5). */
  mb_compare_options_t o = MB_COMPARE_OPTIONS_INIT;
  o.alpha = 0.2;
  char bp[512], np[512];
  write_tiny("tiny_base.jsonl", 2, k_tiny[0].base, bp, sizeof bp);
  write_tiny("tiny_new.jsonl", 5, k_tiny[0].nw, np, sizeof np);
  mb_comparison_t *c = compare_with(bp, np, &o);
  assert_int_equal(row_at(c, 0).verdict, MB_VERDICT_SLOWER);
  mb_comparison_destroy(c);

  /* 21 a side (42 in all: the normal approximation), each run's samples
   * all equal, the runs apart: U = 0, mean 220.5, the variance corrected
   * for the two tie groups of 21, and 0.5 for continuity. */
  const res_t b = {"k", 0, "ok", 1000, 0.01, 21, 0, 0},
              n = {"k", 0, "ok", 1200, 0.01, 21, 0, 0};
  mb_compare_row_t r = judge_pair(&b, &n, 5, 0.05);
  double var = 21 * 21 / 12.0 * (43 - 2 * (21.0 * 21 * 21 - 21) / (42 * 41));
  double want = erfc((21 * 21 / 2.0 - 0.5) / sqrt(var) / sqrt(2.0));
  assert_true(fabs(r.p_value / want - 1) < 1e-9);
  assert_int_equal(r.verdict, MB_VERDICT_SLOWER);

  /* The medians say +10 %, the ranks (p 0.01) that new is faster: the two
   * disagree, so neither verdict can be trusted. */
  write_tiny("tiny_base.jsonl", 100,
             "[90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 100, 1000, 1000, 1000, "
             "1000, 1000, 1000, 1000, 1000, 1000, 1000]",
             bp, sizeof bp);
  write_tiny(
      "tiny_new.jsonl", 110,
      "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 110, 110, 110, 110, 110, 110, 110, "
      "110, 110, 110, 110]",
      np, sizeof np);
  c = compare_with(bp, np, &o); /* alpha 0.2 */
  r = row_at(c, 0);
  assert_true(r.p_value < 0.02 && fabs(r.ratio - 1.1) < 1e-12);
  assert_int_equal(r.verdict, MB_VERDICT_NOISY);
  mb_comparison_destroy(c);
}

static void test_geomean_and_versions(void **state) {
  (void)state;
  const res_t base[] = {{"x2", 0, "ok", 1000, 0.01, 0, 0, 0},
                        {"x1/8", 0, "ok", 1000, 0.01, 0, 0, 0},
                        {"gone", 0, "ok", 1000, 0.01, 0, 0, 0}};
  const res_t nw[] = {{"x2", 0, "ok", 2000, 0.01, 0, 0, 0},
                      {"x1/8", 0, "ok", 125, 0.01, 0, 0, 0}};
  char bp[512], np[512];
  write_doc("geo_base.json", "h", base, 3, bp, sizeof bp);
  write_doc("geo_new.json", "h", nw, 2, np, sizeof np);
  mb_comparison_t *c = compare(bp, np, 5, 0);
  size_t count = 99;
  /* sqrt(2 x 1/8); the result only in base has no ratio. */
  assert_true(fabs(mb_comparison_geomean(c, &count) - 0.5) < 1e-12);
  assert_int_equal(count, 2);
  assert_true(fabs(mb_comparison_geomean(c, NULL) - 0.5) < 1e-12);
  /* A caller built before p_value existed gets the row without it. */
  mb_compare_row_t old = MB_COMPARE_ROW_INIT;
  old.struct_size = offsetof(mb_compare_row_t, p_value);
  old.p_value = -7;
  assert_int_equal(mb_comparison_row(c, 0, &old), MB_OK);
  assert_int_equal(old.verdict, MB_VERDICT_SLOWER);
  assert_true(old.p_value == -7);
  mb_comparison_destroy(c);
  assert_true(isnan(mb_comparison_geomean(NULL, &count)) && count == 0);

  /* Options from before alpha: the default alpha. */
  mb_results_t *b = load(bp), *n = load(np);
  mb_compare_options_t o = MB_COMPARE_OPTIONS_INIT;
  o.struct_size = offsetof(mb_compare_options_t, alpha);
  o.alpha = 1e-300; /* beyond its struct_size: not read */
  assert_int_equal(mb_results_compare(b, n, &o, &c), MB_OK);
  assert_int_equal(mb_comparison_regressions(c), 1);
  mb_comparison_destroy(c);
  for (size_t i = 0; i < 3; i++) {
    o = (mb_compare_options_t)MB_COMPARE_OPTIONS_INIT;
    o.alpha = (double[]){0, -0.1, 1.5}[i];
    assert_int_equal(mb_results_compare(b, n, &o, &c), MB_ERR_INVALID_ARG);
    assert_contains(mb_error_last(), "alpha");
  }
  /* A run against itself: no change, over all three. */
  assert_int_equal(mb_results_compare(b, b, NULL, &c), MB_OK);
  assert_true(mb_comparison_geomean(c, &count) == 1 && count == 3);
  mb_comparison_destroy(c);
  mb_results_destroy(b);
  mb_results_destroy(n);
}

/* ---- merging ------------------------------------------------------------ */

static void test_merge(void **state) {
  (void)state;
  char a[512], b[512], s[512], out[512];
  const res_t ra[] = {{"r/1", 0, "ok", 1000, 0.01, 0, 0, 0}};
  write_doc("host_a.json", "alpha", ra, 1, a, sizeof a);
  write_doc("host_b.json", "beta", k_two, 2, b, sizeof b);
  write_stream("host_c.jsonl", k_two, 2, "{\"id\": \"cut", s, sizeof s);
  const char *inputs[] = {a, b, s};
  path_of("merged.json", out, sizeof out);
  assert_int_equal(mb_results_merge(inputs, 3, out), MB_OK);

  mb_results_t *m = load(out);
  assert_int_equal(mb_results_count(m), 5);
  static const char *const k_ids[] = {"r/1", "a/1", "b/2", "a/1", "b/2"};
  for (size_t i = 0; i < 5; i++)
    assert_string_equal(mb_results_id(m, i), k_ids[i]);
  mb_results_destroy(m);

  char *text = NULL;
  {
    FILE *f = fopen(out, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
  }
  cJSON *doc = cJSON_Parse(text);
  free(text);
  assert_non_null(doc);
  cJSON *meta = cJSON_GetObjectItem(doc, "meta");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(meta, "merged")));
  assert_string_equal(cJSON_GetObjectItem(meta, "version")->valuestring,
                      "9.9.9");
  cJSON *from = cJSON_GetObjectItem(meta, "merged_from");
  assert_int_equal(cJSON_GetArraySize(from), 3);
  for (int i = 0; i < 3; i++)
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(from, i), "file")->valuestring,
        inputs[i]);
  cJSON *host_b = cJSON_GetObjectItem(
      cJSON_GetObjectItem(cJSON_GetArrayItem(from, 1), "meta"), "host");
  assert_string_equal(cJSON_GetObjectItem(host_b, "hostname")->valuestring,
                      "beta");
  /* Each input listed the same device twice: once per host remains. */
  cJSON *devices = cJSON_GetObjectItem(doc, "devices");
  assert_int_equal(cJSON_GetArraySize(devices), 3);
  static const char *const k_hosts[] = {"alpha", "beta", "streamhost"};
  for (int i = 0; i < 3; i++)
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(devices, i), "host")
            ->valuestring,
        k_hosts[i]);
  cJSON *results = cJSON_GetObjectItem(doc, "results");
  static const struct {
    int input;
    const char *host;
  } k_src[] = {{0, "alpha"},
               {1, "beta"},
               {1, "beta"},
               {2, "streamhost"},
               {2, "streamhost"}};
  for (int i = 0; i < 5; i++) {
    cJSON *src = cJSON_GetObjectItem(cJSON_GetArrayItem(results, i), "source");
    assert_string_equal(cJSON_GetObjectItem(src, "file")->valuestring,
                        inputs[k_src[i].input]);
    assert_string_equal(cJSON_GetObjectItem(src, "host")->valuestring,
                        k_src[i].host);
  }
  cJSON_Delete(doc);
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp", out);
  assert_int_not_equal(access(tmp, F_OK), 0);

  /* Merged again: sources stay where the results really came from. */
  char again[512];
  const char *twice[] = {out, a};
  path_of("merged2.json", again, sizeof again);
  assert_int_equal(mb_results_merge(twice, 2, again), MB_OK);
  m = load(again);
  assert_int_equal(mb_results_count(m), 6);
  assert_contains(mb_results_json(m, 4), "\"host\":\"streamhost\"");
  assert_contains(mb_results_json(m, 5), "\"host\":\"alpha\"");
  mb_results_destroy(m);
}

/* A sharded run's rank files back in plan order: by name, the unnamed and
 * unlisted after, in input order; results of one name keep input order. */
static void test_merge_ordered(void **state) {
  (void)state;
  static const char *const k_rank0[] = {"c", "a", "x"}, *const k_rank1[] = {
                                                            "b", NULL, "a"};
  char p0[512], p1[512], out[512];
  const char *const *ranks[] = {k_rank0, k_rank1};
  char *paths[] = {p0, p1};
  for (int f = 0; f < 2; f++) {
    char text[16384];
    snprintf(text, sizeof text, "%s", k_stream_header);
    for (int i = 0; i < 3; i++) {
      const char *name = ranks[f][i];
      char id[16], one[4096] = "", line[4200];
      snprintf(id, sizeof id, "r%d/%d", f, i);
      append_result(one, sizeof one,
                    &(res_t){id, NULL, "ok", 1000, 0.01, 0, 0, 0});
      snprintf(line, sizeof line, "{%s%s%s%s\n", name ? "\"name\": \"" : "",
               name ? name : "", name ? "\", " : "", one + 1);
      strcat(text, line);
    }
    char file[32];
    snprintf(file, sizeof file, "rank%d.jsonl", f);
    put_file(path_of(file, paths[f], sizeof p0), text);
  }
  const char *inputs[] = {p0, p1};
  static const char *const k_plan[] = {"a", "b", "c", "d"};
  path_of("ordered.json", out, sizeof out);
  if (mb_results_merge_ordered(inputs, 2, k_plan, 4, out) != MB_OK)
    fail_msg("%s", mb_error_last());
  mb_results_t *m = load(out);
  static const char *const k_ids[] = {"r0/1", "r1/2", "r1/0",
                                      "r0/0", "r0/2", "r1/1"};
  assert_int_equal(mb_results_count(m), 6);
  for (size_t i = 0; i < 6; i++)
    assert_string_equal(mb_results_id(m, i), k_ids[i]);
  mb_results_destroy(m);
  /* No names: input order, as mb_results_merge. */
  assert_int_equal(mb_results_merge_ordered(inputs, 2, NULL, 0, out), MB_OK);
  m = load(out);
  assert_string_equal(mb_results_id(m, 0), "r0/0");
  assert_string_equal(mb_results_id(m, 5), "r1/2");
  mb_results_destroy(m);
}

static void test_merge_errors(void **state) {
  (void)state;
  char a[512], bad[512], out[512];
  write_doc("ok.json", "h", k_two, 2, a, sizeof a);
  put_file(path_of("bad.json", bad, sizeof bad), "{\n\"schema\": \"x\"}\n");
  path_of("never.json", out, sizeof out);
  const char *inputs[] = {a, bad};
  assert_int_equal(mb_results_merge(inputs, 2, out), MB_ERR_PARSE);
  assert_contains(mb_error_last(), "bad.json");
  assert_int_not_equal(access(out, F_OK), 0); /* nothing written */
  assert_int_equal(mb_results_merge(inputs, 0, out), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "no input files");
  char dir_out[600];
  snprintf(dir_out, sizeof dir_out, "%s/no/such/dir.json", g_dir);
  assert_int_equal(mb_results_merge(inputs, 1, dir_out), MB_ERR_IO);
  assert_contains(mb_error_last(), "no/such/dir.json");
}

/* ---- with the real writer ----------------------------------------------- */

static void test_round_trip_with_the_writer(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  const mb_op_params_t p = test_shape3(MB_DTYPE_NONE, 24, 16, 8);
  mb_result_t *r = test_run_cpu(ctx, "gemm", &p, 3);
  char path[512];
  path_of("written.json", path, sizeof path);
  mb_report_options_t o = MB_REPORT_OPTIONS_INIT;
  o.format = MB_FORMAT_JSON;
  o.path = path;
  mb_report_t *rep = NULL;
  assert_int_equal(mb_report_open(ctx, &o, &rep), MB_OK);
  assert_int_equal(mb_report_add(rep, r), MB_OK);
  /* While the report is open, its stream beside it holds the result. */
  char lines[600];
  snprintf(lines, sizeof lines, "%sl", path);
  mb_results_t *streamed = load(lines);
  assert_int_equal(mb_results_count(streamed), 1);
  char id[512];
  snprintf(id, sizeof id, "%s", mb_results_id(streamed, 0));
  mb_results_destroy(streamed);
  assert_int_equal(mb_report_close(rep), MB_OK);
  mb_stats_t st = MB_STATS_INIT;
  assert_int_equal(mb_result_stats(r, &st), MB_OK);

  mb_results_t *set = load(path);
  assert_int_equal(mb_results_count(set), 1);
  assert_contains(mb_results_id(set, 0), "gemm/24x16x8/");
  assert_string_equal(mb_results_id(set, 0), id);
  mb_comparison_t *c = NULL;
  assert_int_equal(mb_results_compare(set, set, NULL, &c), MB_OK);
  mb_compare_row_t row = row_at(c, 0);
  assert_true(row.base_ns == st.median && row.new_ns == st.median);
  assert_true(row.ratio == 1.0);
  assert_true(fabs(row.base_noise - st.rel_stdev) < 1e-9); /* 3 samples */
  /* Itself: no change at all, so SAME however noisy the run was. */
  assert_int_equal(row.verdict, MB_VERDICT_SAME);
  assert_int_equal(mb_comparison_regressions(c), 0);
  mb_comparison_destroy(c);
  /* With a threshold above the noise it is SAME. */
  mb_compare_options_t co = MB_COMPARE_OPTIONS_INIT;
  co.threshold_pct = 100 * sqrt(2) * row.base_noise + 1;
  assert_int_equal(mb_results_compare(set, set, &co, &c), MB_OK);
  assert_int_equal(row_at(c, 0).verdict, MB_VERDICT_SAME);
  mb_comparison_destroy(c);
  mb_results_destroy(set);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_document),
      cmocka_unit_test(test_load_stream),
      cmocka_unit_test(test_stream_errors),
      cmocka_unit_test(test_document_errors),
      cmocka_unit_test(test_every_verdict),
      cmocka_unit_test(test_verdict_names_and_rows),
      cmocka_unit_test(test_match_by_problem),
      cmocka_unit_test(test_duplicate_key),
      cmocka_unit_test(test_shift_within_the_spread),
      cmocka_unit_test(test_p_value_by_hand),
      cmocka_unit_test(test_geomean_and_versions),
      cmocka_unit_test(test_merge),
      cmocka_unit_test(test_merge_errors),
      cmocka_unit_test(test_merge_ordered),
      cmocka_unit_test(test_round_trip_with_the_writer),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
