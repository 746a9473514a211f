/* libFuzzer target: arbitrary bytes through mb_plan_parse, once named as
 * YAML and once as JSON, so both syntax readers (libyaml, cJSON), the
 * config tree and the three schema readers behind them are reached. A
 * parse error is the expected answer to most inputs; what is looked for
 * is a crash, a read past `size` (the input is not NUL-terminated), a leak
 * or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>

#include <microbench.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const k_names[] = {"fuzz.yaml", "fuzz.json"};
  for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++) {
    mb_plan_t *plan = NULL;
    mb_plan_parse((const char *)data, size, k_names[i], NULL, &plan);
    mb_plan_destroy(plan);
  }
  return 0;
}
