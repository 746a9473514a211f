/* Config documents: JSON and YAML into one tree, typed scalars, lines, and
 * the messages bad files get. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_tree.h"
#include "microbench.h"

static const char k_yaml[] =
    "benchmark_mode: inference\n"
    "quantization_config_recipe_names:\n"
    "  - float8dq-row   # a comment\n"
    "  - \"int4wo-128\"\n"
    "model_params:\n"
    "  - name: small_bench\n"
    "    high_precision_dtype: torch.bfloat16\n"
    "    use_torch_compile: true\n"
    "    min_power: 10\n"
    "    scale: 1.5e-3\n"
    "    nothing: ~\n"
    "    quoted: '10'\n"
    "    shapes: [[1024, 1024, 1024], [2048, 4096, 1024]]\n";

static const char k_json[] =
    "{\"benchmark_mode\": \"inference\",\n"
    " \"quantization_config_recipe_names\": [\"float8dq-row\", "
    "\"int4wo-128\"],\n"
    " \"model_params\": [{\"name\": \"small_bench\",\n"
    "   \"high_precision_dtype\": \"torch.bfloat16\",\n"
    "   \"use_torch_compile\": true, \"min_power\": 10, \"scale\": 1.5e-3,\n"
    "   \"nothing\": null, \"quoted\": \"10\",\n"
    "   \"shapes\": [[1024, 1024, 1024], [2048, 4096, 1024]]}]}\n";

static void assert_same(const mb_cfg_node_t *a, const mb_cfg_node_t *b) {
  assert_int_equal(a->kind, b->kind);
  assert_int_equal(a->count, b->count);
  if (a->kind == MB_CFG_NUMBER) assert_true(a->number == b->number);
  if (a->kind == MB_CFG_BOOL) assert_int_equal(a->boolean, b->boolean);
  if (a->kind == MB_CFG_STRING) assert_string_equal(a->text, b->text);
  for (size_t i = 0; i < a->count; i++) {
    if (a->kind == MB_CFG_MAP) assert_string_equal(a->keys[i], b->keys[i]);
    assert_same(a->items[i], b->items[i]);
  }
}

static void test_yaml_and_json_make_the_same_tree(void **state) {
  (void)state;
  mb_cfg_node_t *y, *j;
  assert_int_equal(mb__cfg_parse_yaml(k_yaml, strlen(k_yaml), "t.yaml", &y),
                   MB_OK);
  assert_int_equal(mb__cfg_parse_json(k_json, "t.json", &j), MB_OK);
  assert_same(y, j);
  const mb_cfg_node_t *m = mb__cfg_get(y, "model_params")->items[0];
  assert_int_equal(mb__cfg_get(m, "high_precision_dtype")->kind, MB_CFG_STRING);
  assert_int_equal(mb__cfg_get(m, "use_torch_compile")->kind, MB_CFG_BOOL);
  assert_int_equal(mb__cfg_get(m, "min_power")->kind, MB_CFG_NUMBER);
  assert_int_equal(mb__cfg_get(m, "nothing")->kind, MB_CFG_NULL);
  assert_int_equal(mb__cfg_get(m, "quoted")->kind, MB_CFG_STRING);
  assert_null(mb__cfg_get(m, "absent"));
  /* YAML keeps lines: the list item on line 6, its dtype on line 7. */
  assert_int_equal(mb__cfg_get(y, "model_params")->items[0]->line, 6);
  assert_int_equal(mb__cfg_get(m, "high_precision_dtype")->line, 7);
  mb__cfg_free(y);
  mb__cfg_free(j);
}

static void test_scalar_typing(void **state) {
  (void)state;
  static const struct {
    const char *text;
    mb_cfg_kind_t kind;
  } k_cases[] = {{"a: 0x10", MB_CFG_STRING}, {"a: inf", MB_CFG_STRING},
                 {"a: -3", MB_CFG_NUMBER},   {"a: 1_000", MB_CFG_STRING},
                 {"a: False", MB_CFG_BOOL},  {"a: ''", MB_CFG_STRING},
                 {"a:", MB_CFG_NULL},        {"a: 8x8x8", MB_CFG_STRING}};
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    mb_cfg_node_t *n;
    assert_int_equal(
        mb__cfg_parse_yaml(k_cases[i].text, strlen(k_cases[i].text), "t", &n),
        MB_OK);
    if (mb__cfg_get(n, "a")->kind != k_cases[i].kind)
      fail_msg("\"%s\": %s", k_cases[i].text,
               mb__cfg_kind_name(mb__cfg_get(n, "a")->kind));
    mb__cfg_free(n);
  }
}

static void expect_yaml_error(const char *text, const char *msg) {
  mb_cfg_node_t *n = (mb_cfg_node_t *)1;
  assert_int_not_equal(mb__cfg_parse_yaml(text, strlen(text), "bad.yaml", &n),
                       MB_OK);
  assert_null(n);
  if (!strstr(mb_error_last(), msg))
    fail_msg("error \"%s\" lacks \"%s\"", mb_error_last(), msg);
}

static void test_errors_name_file_and_line(void **state) {
  (void)state;
  expect_yaml_error("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml:");
  expect_yaml_error("a: 1\na: 2\n", "bad.yaml:2: key \"a\" appears twice");
  expect_yaml_error("x: &v 1\ny: *v\n", "bad.yaml:2: YAML aliases");
  expect_yaml_error("a: 1\n---\nb: 2\n", "a second YAML document");
  expect_yaml_error("? [1, 2]\n: 3\n", "a map key must be a plain value");
  mb_cfg_node_t *n = (mb_cfg_node_t *)1;
  assert_int_equal(mb__cfg_parse_json("{\"a\": 1,\n \"b\": }", "bad.json", &n),
                   MB_ERR_PARSE);
  assert_null(n);
  assert_non_null(strstr(mb_error_last(), "bad.json:2: invalid JSON"));
  assert_int_equal(mb__cfg_parse_json("{\"a\": 1, \"a\": 2}", "dup.json", &n),
                   MB_ERR_PARSE);
  assert_non_null(strstr(mb_error_last(), "dup.json: key \"a\" appears twice"));
}

/* depth lists (or maps) inside each other, each written flow-style on
 * its own line, so the innermost one sits on line `depth`. */
static char *nested(int depth, int map) {
  char *t = malloc((size_t)depth * 8 + 8), *p = t;
  for (int i = 0; i < depth; i++) p += sprintf(p, map ? "{a:\n" : "[\n");
  p += sprintf(p, "1");
  for (int i = 0; i < depth; i++) *p++ = map ? '}' : ']';
  *p = '\0';
  return t;
}

/* A config nested 50,000 deep crashed the recursive reader (stack
 * overflow); JSON's reader stops at cJSON's 1000, and YAML now does too,
 * naming the line. 1000 levels still read. */
static void test_depth_bounded(void **state) {
  (void)state;
  for (int map = 0; map < 2; map++) {
    char *deep = nested(50000, map);
    expect_yaml_error(deep, "bad.yaml:1001: nested deeper than 1000 levels");
    free(deep);
    char *ok = nested(MB__CFG_MAX_DEPTH, map);
    mb_cfg_node_t *n = NULL;
    assert_int_equal(mb__cfg_parse_yaml(ok, strlen(ok), "ok.yaml", &n), MB_OK);
    mb__cfg_free(n);
    free(ok);
  }
  char json[3 * 1024];
  memset(json, '[', 2000);
  memset(json + 2000, ']', 1000);
  json[3000] = '\0';
  mb_cfg_node_t *n = NULL;
  assert_int_equal(mb__cfg_parse_json(json, "deep.json", &n), MB_ERR_PARSE);
  assert_null(n);
}

/* 100,000 keys read (a hash finds duplicates: the check was quadratic,
 * 15 s); a duplicate at the very end is still found, with its line. */
static void test_many_keys(void **state) {
  (void)state;
  enum { KEYS = 100000 };
  char *t = malloc((size_t)KEYS * 16 + 32), *p = t;
  for (int i = 0; i < KEYS; i++) p += sprintf(p, "k%d: %d\n", i, i);
  mb_cfg_node_t *n = NULL;
  assert_int_equal(mb__cfg_parse_yaml(t, (size_t)(p - t), "keys.yaml", &n),
                   MB_OK);
  assert_int_equal(n->count, KEYS);
  assert_string_equal(mb__cfg_get(n, "k99999")->text, "99999");
  mb__cfg_free(n);
  sprintf(p, "k77777: 0\n");
  expect_yaml_error(t, "bad.yaml:100001: key \"k77777\" appears twice");
  free(t);
}

static void test_files(void **state) {
  (void)state;
  char path[] = "/tmp/mb_cfg_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("  {\"benchmarks\": []}", f); /* no extension: sniffed as JSON */
  fclose(f);
  mb_cfg_node_t *n;
  assert_int_equal(mb__cfg_parse_file(path, &n), MB_OK);
  assert_int_equal(mb__cfg_get(n, "benchmarks")->kind, MB_CFG_LIST);
  mb__cfg_free(n);
  remove(path);
  assert_int_equal(mb__cfg_parse_file("/nonexistent/x.yaml", &n), MB_ERR_IO);
  assert_non_null(strstr(mb_error_last(), "/nonexistent/x.yaml: cannot open"));
  /* An empty YAML file is an empty config. */
  assert_int_equal(mb__cfg_parse_yaml("", 0, "empty.yaml", &n), MB_OK);
  assert_int_equal(n->kind, MB_CFG_MAP);
  assert_int_equal(n->count, 0);
  mb__cfg_free(n);
}

/* CSV as csv.DictReader reads it: a BOM, quotes with "" inside and a
 * comma, CRLF, a short row padded with nulls, numbers typed. */
static void test_csv(void **state) {
  (void)state;
  static const char k_text[] =
      "\xEF\xBB\xBFname,m,note\r\n\"a \"\"x\"\", y\", 64 ,1e3\r\nb\n";
  mb_cfg_node_t *t = NULL;
  assert_int_equal(mb__cfg_parse_csv(k_text, strlen(k_text), "s.csv", &t),
                   MB_OK);
  assert_int_equal(t->count, 2);
  const mb_cfg_node_t *r = t->items[0];
  assert_int_equal(r->line, 2);
  assert_string_equal(r->keys[0], "name");
  assert_string_equal(mb__cfg_get(r, "name")->text, "a \"x\", y");
  assert_int_equal(mb__cfg_get(r, "m")->kind, MB_CFG_NUMBER);
  assert_true(mb__cfg_get(r, "m")->number == 64);
  assert_true(mb__cfg_get(r, "note")->number == 1000);
  r = t->items[1];
  assert_int_equal(r->line, 3);
  assert_string_equal(mb__cfg_get(r, "name")->text, "b");
  assert_int_equal(mb__cfg_get(r, "m")->kind, MB_CFG_NULL);
  assert_int_equal(mb__cfg_get(r, "note")->kind, MB_CFG_NULL);
  mb__cfg_free(t);
  static const char k_dup[] = "m,m\n1,2\n";
  assert_int_equal(mb__cfg_parse_csv(k_dup, strlen(k_dup), "d.csv", &t),
                   MB_ERR_PARSE);
  assert_null(t);
  assert_non_null(
      strstr(mb_error_last(), "d.csv:1: column \"m\" appears twice"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yaml_and_json_make_the_same_tree),
      cmocka_unit_test(test_scalar_typing),
      cmocka_unit_test(test_errors_name_file_and_line),
      cmocka_unit_test(test_depth_bounded),
      cmocka_unit_test(test_many_keys),
      cmocka_unit_test(test_files),
      cmocka_unit_test(test_csv),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
