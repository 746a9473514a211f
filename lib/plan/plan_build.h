/* Internal: what the schema readers (schema_native.c, schema_torchao.c,
 * schema_jax.c, schema_jax_sweep.c) use to turn a config tree into plan
 * entries, and how they word their errors. A reader never prints: it returns
 * MB_ERR_PARSE with "FILE:LINE: PATH: what is wrong; valid: ..." in
 * mb_error_last(). */
#ifndef MB_LIB_PLAN_PLAN_BUILD_H
#define MB_LIB_PLAN_PLAN_BUILD_H

#include <cjson/cJSON.h>

#include "config/cfg_tree.h"
#include "internal.h"

/* A reader's state: the plan being filled and where the document came
 * from. */
typedef struct mb__pb {
  mb_plan_t *plan;
  const char *file; /* for messages and the `config.file` record */
  const mb_cfg_node_t *root;
} mb__pb_t;

/* One benchmark as a reader describes it. Strings are borrowed (copied by
 * mb__plan_add); NULL means "". */
typedef struct mb__plan_item {
  const char *name;  /* unique-ish; the plan appends "#2", "#3" on repeats */
  const char *group; /* the file block's name */
  const char *op;    /* op or alias name */
  const char *model, *recipe, *mode, *shape_name;
  const char *device_request; /* as written ("cuda", "mps") */
  const char *skip_reason;    /* non-empty: do not run, report skipped */
  const char *csv_path;
  /* Entries with the same non-empty baseline_key share a baseline: the
   * one with is_baseline set. The plan adds the backend to the key. */
  const char *baseline_key;
  int is_baseline;
  mb_op_params_t params; /* shape, dtypes and op parameters as written */
  mb_bench_spec_t spec;  /* cache, timing, backend, impl, seed, flags;
                            op and params are ignored */
  /* Facts recorded in the result's `config` (e.g. {"ignored": {...}}):
   * taken over by the plan (also on failure). NULL: none. */
  cJSON *config;
  /* Where the entry was defined, for the error when the op rejects the
   * parameters (unknown dtype for the op, shape that does not fit). */
  const mb_cfg_node_t *at;
  const char *path;
  /* Non-empty: the library cannot build this entry (a model without a
   * training graph, a weight-only recipe in training, a recipe the shape
   * does not fit). Kept and reported skipped with this reason on any
   * backend (--backend does not lift it); its params need not resolve. */
  const char *unsupported;
  /* The file gave spec.seed: the check's sample is drawn from it alone;
   * otherwise every run draws a fresh one (MB_BENCH_FRESH_SAMPLE), as
   * mbench without --seed does. */
  int seed_given;
} mb__plan_item_t;

#define MB__PLAN_ITEM_INIT                                               \
  {                                                                      \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, \
        MB_OP_PARAMS_INIT, MB_BENCH_SPEC_INIT, NULL, NULL, NULL, NULL, 0 \
  }

/* Validates the item (op known, parameters resolve, spec sane) and
 * appends it; the error names item->at / item->path. */
mb_status_t mb__plan_add(mb__pb_t *pb, const mb__plan_item_t *item);

/* The run's trace file, as the file's `key` asks (torchao's
 * enable_profiler, the JAX suite's trace_dir): the first one asked for is
 * the run's, with a note saying where; a later other path gets a note. */
mb_status_t mb__plan_set_trace(mb__pb_t *pb, const char *key, const char *path);

/* A note for the user (printf-style); the same text is kept once. */
mb_status_t mb__plan_note(mb__pb_t *pb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* MB_ERR_PARSE with "FILE:LINE: PATH: message" (the line from `at`, left
 * out when unknown; PATH left out when NULL or ""). Safe to pass
 * mb_error_last() among the arguments. */
mb_status_t mb__pb_error(const mb__pb_t *pb, const mb_cfg_node_t *at,
                         const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Path building: "model_params" + 1 -> "model_params[1]";
 * "model_params[1]" + "name" -> "model_params[1].name". */
void mb__path_index(char *buf, size_t cap, const char *parent, size_t i);
void mb__path_key(char *buf, size_t cap, const char *parent, const char *key);

/* Typed reads of a scalar node; errors name path, the value and the type
 * wanted ("expected a string, got a list"). */
mb_status_t mb__pb_string(const mb__pb_t *pb, const mb_cfg_node_t *n,
                          const char *path, const char **out);
mb_status_t mb__pb_int(const mb__pb_t *pb, const mb_cfg_node_t *n,
                       const char *path, int64_t lo, int64_t hi, int64_t *out);
mb_status_t mb__pb_number(const mb__pb_t *pb, const mb_cfg_node_t *n,
                          const char *path, double *out);
mb_status_t mb__pb_bool(const mb__pb_t *pb, const mb_cfg_node_t *n,
                        const char *path, int *out);

/* Checks every key of map `n` against `known` (NULL-terminated); the error
 * names the unknown key and lists the known ones. */
mb_status_t mb__pb_check_keys(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, const char *const *known);

/* The node as JSON (for `config` records); NULL on out of memory. */
cJSON *mb__cfg_to_cjson(const mb_cfg_node_t *n);

/* The readers. Each fills pb->plan or fails with the message set. */
mb_status_t mb__schema_native(mb__pb_t *pb);
mb_status_t mb__schema_torchao(mb__pb_t *pb);
mb_status_t mb__schema_jax(mb__pb_t *pb);
mb_status_t mb__schema_jax_sweep(mb__pb_t *pb);

#endif
