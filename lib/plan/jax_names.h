/* Internal: every benchmark name and dtype name the JAX suite defines, in
 * both of its config layouts (jax_names.c), whether libmicrobench runs it
 * or not. A name defined there but not run here becomes a skipped entry
 * saying why (issue 23 item 7); a name defined nowhere stays an input error
 * listing these. */
#ifndef MB_LIB_PLAN_JAX_NAMES_H
#define MB_LIB_PLAN_JAX_NAMES_H

#include <stddef.h>

#include "plan/plan_build.h"

/* The suite's two config layouts. */
typedef enum mb__jax_layout {
  MB__JAX_LEGACY, /* benchmark_name + benchmark_sweep_params */
  MB__JAX_SWEEP   /* global: + benchmarks: [{name, sweep}] */
} mb__jax_layout_t;

/* One name the suite defines. */
typedef struct mb__jax_name {
  const char *name;
  const char *what; /* what it measures, a few words */
  /* Benchmarks: the nearest op of ours, which a skipped result is filed
   * under (a result names a real op); NULL for dtypes. */
  const char *op;
  /* Why libmicrobench cannot run it, where more than "not yet" is known
   * (a sharded matmul, send_recv, convolution); NULL: the generic reason. */
  const char *why;
} mb__jax_name_t;

/* The suite's definition of benchmark `name`, or NULL. */
const mb__jax_name_t *mb__jax_name_find(mb__jax_layout_t layout,
                                        const char *name);

/* "KEY \"NAME\" (WHAT) is defined by the JAX suite but not available in
 * libmicrobench yet[: WHY]" into buf; `key` is the field that named it
 * (benchmark_name, name, dtype). */
void mb__jax_skip_reason(char *buf, size_t cap, const char *key,
                         const mb__jax_name_t *def);

/* The input error for a benchmark name the suite does not define, at n /
 * path, listing every name it does define. */
mb_status_t mb__jax_name_error(mb__pb_t *pb, mb__jax_layout_t layout,
                               const mb_cfg_node_t *n, const char *path,
                               const char *key, const char *name);

/* A dtype name of the layout: 1 and *out set when we run it; 0 and *def
 * set when the suite defines it but we do not (skip, saying why); -1 when
 * the suite does not define it (an input error: see mb__jax_dtype_error). */
int mb__jax_dtype_lookup(mb__jax_layout_t layout, const char *name,
                         mb_dtype_t *out, const mb__jax_name_t **def);
mb_status_t mb__jax_dtype_error(mb__pb_t *pb, mb__jax_layout_t layout,
                                const mb_cfg_node_t *n, const char *path,
                                const char *name);
/* The layout's dtype names, ", "-separated, the ones we run first. */
void mb__jax_dtype_names(mb__jax_layout_t layout, char *buf, size_t cap);

#endif
