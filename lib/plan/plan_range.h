/* Internal: a sweep range {start, end, multiplier | increase_by} expanded
 * into its values (plan_range.c): start, then x multiplier or +
 * increase_by while <= end. One copy of the loop and of its guards for
 * every reader that takes ranges: the JAX suite's two layouts (each with
 * its own rule for the step) and the native `sizes` key (byte counts,
 * where start and end may carry units). */
#ifndef MB_LIB_PLAN_PLAN_RANGE_H
#define MB_LIB_PLAN_PLAN_RANGE_H

#include "plan/plan_build.h"

/* How the step is chosen. */
typedef enum mb__range_rule {
  /* exactly one of multiplier and increase_by (the JAX suite's legacy
   * run_benchmark.py; the native sizes key, as nccl-tests' -f or -i) */
  MB__RANGE_ONE_STEP,
  /* the JAX suite's current core/config.py: multiplier defaults to 1;
   * above 1 it multiplies (increase_by ignored), at exactly 1 the value
   * grows by increase_by (default 1) */
  MB__RANGE_SWEEP
} mb__range_rule_t;

/* Reads one number of the range (start, end, multiplier, increase_by). */
typedef mb_status_t (*mb__range_number_fn)(const mb__pb_t *pb,
                                           const mb_cfg_node_t *n,
                                           const char *path, double *out);

/* The values of range map `m` (at path) appended to the list node
 * `values` as numbers; `number` reads start and end (the steps are plain
 * numbers). A range that never ends, is empty, or gives more than 1000
 * values is an error at m/path. */
mb_status_t mb__range_expand(mb__pb_t *pb, const mb_cfg_node_t *m,
                             const char *path, mb__range_rule_t rule,
                             mb__range_number_fn number, mb_cfg_node_t *values);

#endif
