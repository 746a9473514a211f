/* Internal: what the JAX suite's two layouts share (jax_common.c): sweep
 * values (lists, scalars and start/end ranges, each layout's expansion
 * rule), their cartesian product, num_runs and warm-up, csv_path, the
 * XLA/TPU-only keys, and the skipped entry of a benchmark we do not run.
 * Read by schema_jax.c (legacy) and schema_jax_sweep.c (current). */
#ifndef MB_LIB_PLAN_JAX_COMMON_H
#define MB_LIB_PLAN_JAX_COMMON_H

#include "plan/foreign.h"
#include "plan/jax_names.h"

#define MB__JAX_PATH_CAP 512

mb_status_t mb__jax_no_memory(void);
/* A deep copy; NULL on out of memory. */
mb_cfg_node_t *mb__jax_clone(const mb_cfg_node_t *n);

/* A sweep value as the list of values it stands for, appended to `values`
 * (a list node): a list's items (an empty list is an error), a range map
 * {start, end, ...} expanded by the layout's rule, or the scalar itself. */
mb_status_t mb__jax_values(mb__pb_t *pb, mb__jax_layout_t layout,
                           const mb_cfg_node_t *v, const char *path,
                           mb_cfg_node_t *values);

/* Calls `fn` with each combination of `n` columns (lists of values, keyed
 * keys[i]) as a fresh map, the last key varying fastest; the map is freed
 * after the call. More than `limit` combinations: an error at at/path, or
 * with `truncate` the first `limit` and a note (the current layout's
 * rule). */
typedef mb_status_t (*mb__jax_combo_fn)(mb__pb_t *pb, void *ctx,
                                        mb_cfg_node_t *map);
mb_status_t mb__jax_product(mb__pb_t *pb, const mb_cfg_node_t *at,
                            const char *path, const char *const *keys,
                            mb_cfg_node_t *const *columns, size_t n,
                            size_t limit, int truncate, mb__jax_combo_fn fn,
                            void *ctx);

/* num_runs / warmup_tries at n (NULL: leave the spec's default): exactly
 * that many samples, at least that many warm-up runs. */
mb_status_t mb__jax_num_runs(mb__pb_t *pb, const mb_cfg_node_t *n,
                             const char *path, mb_bench_spec_t *spec);
mb_status_t mb__jax_warmup(mb__pb_t *pb, const mb_cfg_node_t *n,
                           const char *path, mb_bench_spec_t *spec);

/* csv_path at n: a value ending in .csv is the file, else the directory of
 * "<bench>.csv". */
mb_status_t mb__jax_csv_path(mb__pb_t *pb, const mb_cfg_node_t *n,
                             const char *path, const char *bench, char *out,
                             size_t cap);

/* trace_dir at n asks for the run's trace: DIR/STEM.trace.json, STEM the
 * config file's name without its extension (the suite's xprof profiles
 * go under trace_dir too). A URL (gs://...) is no local directory: a note
 * says no trace is written for it. */
mb_status_t mb__jax_trace_dir(mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path);

/* The keys of `keys` found in map m recorded in *ignored with the note
 * "has no effect here (XLA/TPU-only): recorded". */
mb_status_t mb__jax_ignore(mb__pb_t *pb, const mb_cfg_node_t *m,
                           const char *const *keys, cJSON **ignored);

/* Adds `it` with its config {"file", "schema": "jax", "benchmark": bench,
 * key: record, "ignored"}; `record` is taken (NULL: out of memory). */
mb_status_t mb__jax_add(mb__pb_t *pb, mb__plan_item_t *it, const char *bench,
                        const char *key, cJSON *record, const cJSON *ignored);

/* One skipped entry for a whole benchmark we do not run: named and grouped
 * `name`, filed under `op` with a 0 in every dimension, `why` as its reason on
 * every backend, `block` recorded whole in its config. */
typedef struct mb__jax_skip {
  const char *name, *op, *why, *csv;
  const mb_cfg_node_t *block;
  const char *path;
  const cJSON *ignored;
} mb__jax_skip_t;
mb_status_t mb__jax_add_skipped(mb__pb_t *pb, const mb__jax_skip_t *s);

#endif
