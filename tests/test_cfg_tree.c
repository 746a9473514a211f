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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yaml_and_json_make_the_same_tree),
      cmocka_unit_test(test_scalar_typing),
      cmocka_unit_test(test_errors_name_file_and_line),
      cmocka_unit_test(test_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
