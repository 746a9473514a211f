/* Shared by the plan tests: a config file of tests/configs or a text as
 * a plan (failing the test with the message if it does not load), an
 * entry by index, and a text that must be refused naming what is wrong. */
#ifndef MB_TEST_PLAN_UTIL_H
#define MB_TEST_PLAN_UTIL_H

#include "test_util.h"

#ifdef MB_TEST_CONFIG_DIR
static inline mb_plan_t *test_plan_load(const char *rel) {
  char path[4096];
  mb_plan_t *plan = NULL;
  snprintf(path, sizeof path, "%s/%s", MB_TEST_CONFIG_DIR, rel);
  if (mb_plan_load(path, NULL, &plan) != MB_OK)
    fail_msg("%s: %s", rel, mb_error_last());
  return plan;
}
#endif

static inline mb_plan_t *test_plan_parse_opts(const char *text,
                                              const mb_plan_options_t *opts) {
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(text, strlen(text), "t.yaml", opts, &plan) != MB_OK)
    fail_msg("%s\n%s", mb_error_last(), text);
  return plan;
}

static inline mb_plan_t *test_plan_parse(const char *text) {
  return test_plan_parse_opts(text, NULL);
}

static inline mb_plan_entry_t test_plan_entry(const mb_plan_t *plan, size_t i) {
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  assert_int_equal(mb_plan_entry(plan, i, &e), MB_OK);
  return e;
}

/* The text ("bad.yaml") fails with MB_ERR_PARSE and a message holding a
 * and, when not NULL, b. */
static inline void test_plan_expect_error(const char *text, const char *a,
                                          const char *b) {
  mb_plan_t *plan = NULL;
  mb_status_t st = mb_plan_parse(text, strlen(text), "bad.yaml", NULL, &plan);
  if (st == MB_OK) {
    mb_plan_destroy(plan);
    fail_msg("loaded:\n%s", text);
  }
  assert_int_equal(st, MB_ERR_PARSE);
  assert_contains(mb_error_last(), a);
  if (b) assert_contains(mb_error_last(), b);
}

#endif
