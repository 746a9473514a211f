/* mb_plan_assign (plan.h): a plan split over ranks the same way every
 * time, each recipe on its baseline's rank, the costly entries spread
 * first, and every rank used when there are enough entries. */
#include "test_plan_util.h"

static void test_baselines_stay_together(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("torchao/readme_inference.yml");
  const size_t n = mb_plan_count(plan);
  size_t *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
  for (size_t ranks = 1; ranks <= 5; ranks++) {
    assert_int_equal(mb_plan_assign(plan, ranks, a), MB_OK);
    assert_int_equal(mb_plan_assign(plan, ranks, b), MB_OK);
    assert_memory_equal(a, b, n * sizeof *a); /* deterministic */
    size_t with_baseline = 0;
    for (size_t i = 0; i < n; i++) {
      assert_true(a[i] < ranks);
      mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
      mb_plan_entry(plan, i, &e);
      if (e.baseline == SIZE_MAX) continue;
      assert_int_equal(a[i], a[e.baseline]);
      with_baseline++;
    }
    assert_true(with_baseline > 0);
  }
  free(a), free(b);
  mb_plan_destroy(plan);
}

/* Four entries, one far costlier: it gets a rank of its own and the other
 * three share the second; with four ranks each has one. */
static void test_costly_first(void **state) {
  (void)state;
  static const char k_doc[] =
      "benchmarks:\n"
      "- {op: add, shapes: [[64, 64]], dtypes: [f32]}\n"
      "- {op: gemm, shapes: [[2048, 2048, 2048]], dtypes: [f32]}\n"
      "- {op: add, shapes: [[32, 32]], dtypes: [f32]}\n"
      "- {op: add, shapes: [[16, 16]], dtypes: [f32]}\n";
  mb_plan_t *plan = NULL;
  assert_int_equal(mb_plan_parse(k_doc, strlen(k_doc), "t.yaml", NULL, &plan),
                   MB_OK);
  size_t owner[4];
  assert_int_equal(mb_plan_assign(plan, 2, owner), MB_OK);
  assert_int_equal(owner[1], 0);
  assert_int_equal(owner[0], 1);
  assert_int_equal(owner[2], 1);
  assert_int_equal(owner[3], 1);
  assert_int_equal(mb_plan_assign(plan, 4, owner), MB_OK);
  int seen[4] = {0};
  for (size_t i = 0; i < 4; i++) seen[owner[i]]++;
  for (size_t r = 0; r < 4; r++) assert_int_equal(seen[r], 1);
  assert_int_equal(mb_plan_assign(plan, 0, owner), MB_ERR_INVALID_ARG);
  assert_int_equal(mb_plan_assign(NULL, 2, owner), MB_ERR_INVALID_ARG);
  mb_plan_destroy(plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_baselines_stay_together),
      cmocka_unit_test(test_costly_first),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
