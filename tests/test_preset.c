/* Shape presets: the exact shapes and counts of docs/ops.md, unique names,
 * parameters, and the errors bad requests get. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "microbench.h"

static mb_shape_list_t *expand(const char *name, const mb_preset_params_t *p) {
  mb_shape_list_t *l = NULL;
  if (mb_preset_shapes(name, p, &l) != MB_OK)
    fail_msg("%s: %s", name, mb_error_last());
  return l;
}

static void assert_unique_names(const mb_shape_list_t *l) {
  size_t n = mb_shape_list_count(l);
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      const char *a, *b;
      mb_shape_list_get(l, i, &a, NULL);
      mb_shape_list_get(l, j, &b, NULL);
      if (!strcmp(a, b)) fail_msg("duplicate shape name %s", a);
    }
}

static void test_counts_and_unique_names(void **state) {
  (void)state;
  static const struct {
    const char *name;
    size_t count;
  } k_expect[] = {{"llama", 4},
                  {"llama4", 6},
                  {"deepseek_v3_236b", 4},
                  {"deepseek_v3_671b", 4},
                  {"qwen3_32b", 4},
                  {"gemma3_27b", 4},
                  {"pow2", 5},
                  {"pow2_extended", 10},
                  {"small_sweep", 35},
                  {"sweep", 512}};
  size_t seen = 0;
  for (size_t i = 0; i < sizeof k_expect / sizeof k_expect[0]; i++) {
    mb_shape_list_t *l = expand(k_expect[i].name, NULL);
    if (mb_shape_list_count(l) != k_expect[i].count)
      fail_msg("%s: %zu shapes, expected %zu", k_expect[i].name,
               mb_shape_list_count(l), k_expect[i].count);
    assert_unique_names(l);
    mb_shape_list_destroy(l);
    seen++;
  }
  assert_int_equal(seen + 1, mb_preset_count()); /* + custom */
}

static void expect_shape(const mb_shape_list_t *l, size_t i, const char *name,
                         int64_t m, int64_t k, int64_t n) {
  const char *got;
  int64_t mkn[3];
  assert_int_equal(mb_shape_list_get(l, i, &got, mkn), MB_OK);
  assert_string_equal(got, name);
  assert_int_equal(mkn[0], m);
  assert_int_equal(mkn[1], k);
  assert_int_equal(mkn[2], n);
}

static void test_exact_shapes(void **state) {
  (void)state;
  mb_shape_list_t *l = expand("llama", NULL);
  expect_shape(l, 0, "attn.wqkv", 16384, 8192, 1280);
  expect_shape(l, 1, "attn.w0", 16384, 1024, 8192);
  expect_shape(l, 2, "ffn.w13", 16384, 8192, 7168);
  expect_shape(l, 3, "ffn.w2", 16384, 3584, 8192);
  mb_shape_list_destroy(l);
  l = expand("deepseek_v3_671b", NULL);
  expect_shape(l, 0, "FFN.M16384", 16384, 2048, 7168);
  expect_shape(l, 1, "FFN.M128000", 128000, 2048, 7168);
  expect_shape(l, 3, "QKVO_proj.M128000", 128000, 7168, 7168);
  mb_shape_list_destroy(l);
  l = expand("qwen3_32b", NULL);
  expect_shape(l, 2, "KV_proj.M16384", 16384, 5120, 640);
  mb_shape_list_destroy(l);
  l = expand("pow2_extended", NULL);
  expect_shape(l, 0, "pow2_1024", 1024, 1024, 1024);
  expect_shape(l, 1, "pow2_1536", 1536, 1536, 1536);
  expect_shape(l, 9, "pow2_24576", 24576, 24576, 24576);
  mb_shape_list_destroy(l);
}

static void test_small_sweep_is_ordered(void **state) {
  (void)state;
  mb_shape_list_t *l = expand("small_sweep", NULL);
  for (size_t i = 0; i < mb_shape_list_count(l); i++) {
    int64_t mkn[3];
    mb_shape_list_get(l, i, NULL, mkn);
    assert_true(mkn[0] <= mkn[1] && mkn[1] <= mkn[2]);
    assert_true(mkn[0] >= 1024 && mkn[2] <= 16384);
  }
  mb_shape_list_destroy(l);
}

static void test_params(void **state) {
  (void)state;
  mb_preset_params_t p = MB_PRESET_PARAMS_INIT;
  p.min_power = 10;
  p.max_power = 12;
  mb_shape_list_t *l = expand("pow2", &p);
  assert_int_equal(mb_shape_list_count(l), 3);
  expect_shape(l, 2, "pow2_4096", 4096, 4096, 4096);
  mb_shape_list_destroy(l);
  p.min_power = 8;
  p.max_power = 9;
  l = expand("sweep", &p);
  assert_int_equal(mb_shape_list_count(l), 8);
  expect_shape(l, 1, "256x256x512", 256, 256, 512);
  mb_shape_list_destroy(l);
  const int64_t ms[] = {1, 2048, 4096};
  mb_preset_params_t q = MB_PRESET_PARAMS_INIT;
  q.m_values = ms;
  q.num_m_values = 3;
  l = expand("gemma3_27b", &q);
  assert_int_equal(mb_shape_list_count(l), 6);
  expect_shape(l, 0, "QO_proj.M1", 1, 4096, 4096);
  mb_shape_list_destroy(l);
}

static void expect_error(const char *name, const mb_preset_params_t *p,
                         const char *text) {
  mb_shape_list_t *l = (mb_shape_list_t *)1;
  assert_int_not_equal(mb_preset_shapes(name, p, &l), MB_OK);
  assert_null(l);
  if (!strstr(mb_error_last(), text))
    fail_msg("error \"%s\" lacks \"%s\"", mb_error_last(), text);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("llama5", NULL, "valid: custom, llama, llama4");
  expect_error("custom", NULL, "no shapes of its own");
  mb_preset_params_t p = MB_PRESET_PARAMS_INIT;
  p.min_power = 12;
  p.max_power = 10;
  expect_error("pow2", &p, "min_power <= max_power");
  expect_error("llama", &p, "do not apply");
  p.struct_size = 4;
  expect_error("pow2", &p, "struct_size");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_and_unique_names),
      cmocka_unit_test(test_exact_shapes),
      cmocka_unit_test(test_small_sweep_is_ordered),
      cmocka_unit_test(test_params),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
