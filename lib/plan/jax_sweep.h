/* Internal: the JAX suite's current layout, shared by its reader
 * (schema_jax_sweep.c), the combination's parameter accessors
 * (jax_sweep_params.c) and each benchmark's own parameters
 * (jax_sweep_refine.c and a file per larger benchmark). */
#ifndef MB_LIB_PLAN_JAX_SWEEP_H
#define MB_LIB_PLAN_JAX_SWEEP_H

#include "plan/jax_common.h"

typedef enum mb__sweep_dtype_rule {
  MB__SWEEP_BF16,  /* the suite's code fixes bf16; `dtype` has no effect */
  MB__SWEEP_PARAM, /* `dtype` (default bfloat16) */
  MB__SWEEP_GEMM,  /* in_dtype (default float8_e4m3fn), out_dtype (bfloat16) */
  MB__SWEEP_F32    /* the suite's code fixes float32 (host_device.py) */
} mb__sweep_dtype_rule_t;

#define MB__SWEEP_TAG_CAP 64
#define MB__SWEEP_WHY_CAP 512
struct mb__sweep_combo;
/* A benchmark's own parameters beyond shape and dtype: `tag`
 * (MB__SWEEP_TAG_CAP) goes into the entry's name; `why` (MB__SWEEP_WHY_CAP) set
 * skips the combination. */
typedef mb_status_t (*mb__sweep_refine_fn)(mb__pb_t *pb,
                                           const struct mb__sweep_combo *c,
                                           mb__plan_item_t *it, char *tag,
                                           char *why);

typedef struct mb__sweep_bench {
  const char *name; /* the suite's registry name */
  const char *op;   /* our op or alias */
  /* Our shape, dimension by dimension: the parameter giving it ("": 1),
   * and the suite's dataclass default. */
  const char *dims[5];
  int64_t defaults[5];
  mb__sweep_dtype_rule_t dtype;
  const char *keys[8];        /* its other parameters, NULL-terminated */
  mb__sweep_refine_fn refine; /* NULL: none */
} mb__sweep_bench_t;

typedef struct mb__sweep_item {
  const mb__sweep_bench_t *bench;
  const char *name;
  const mb_cfg_node_t *global, *entry, *sweep;
  const char *path; /* benchmarks[i] */
  /* Layers from outside the file: the `model` preset's fields the
   * benchmark takes, and this pass's csv_shapes row (path: row_path). */
  const mb_cfg_node_t *preset, *row;
  char row_path[MB__JAX_PATH_CAP];
  char csv[4096];
  cJSON *ignored;
} mb__sweep_item_t;

/* One combination: the global, model preset, item, CSV row and sweep
 * layers, last wins (the suite's load_config order). */
typedef struct mb__sweep_combo {
  const mb__sweep_item_t *item;
  const mb_cfg_node_t *swept; /* this combination's sweep values */
} mb__sweep_combo_t;

/* Key `key`'s value in the combination and the path it was written at. */
const mb_cfg_node_t *mb__sweep_find(const mb__sweep_combo_t *c, const char *key,
                                    char *path, size_t cap);

mb_status_t mb__sweep_int(mb__pb_t *pb, const mb__sweep_combo_t *c,
                          const char *key, int64_t def, int64_t lo,
                          int64_t *out);

mb_status_t mb__sweep_str(mb__pb_t *pb, const mb__sweep_combo_t *c,
                          const char *key, const char *def, const char **out,
                          const mb_cfg_node_t **at, char *path, size_t cap);

mb_status_t mb__sweep_bool(mb__pb_t *pb, const mb__sweep_combo_t *c,
                           const char *key, int def, int *out);

mb_status_t mb__sweep_num(mb__pb_t *pb, const mb__sweep_combo_t *c,
                          const char *key, double def, double *out);

/* A dtype parameter: 1 with *out set; 0 with `why` set (the suite defines
 * it, we do not run it). */
mb_status_t mb__sweep_dtype(mb__pb_t *pb, const mb__sweep_combo_t *c,
                            const char *key, const char *def, mb_dtype_t *out,
                            const char **written, char *why, size_t cap);

/* Model preset `n` (at path) as a map of the fields named in `keys`
 * (NULL-terminated: what the benchmark takes); an unknown preset is an
 * error listing the suite's (jax_sweep_sources.c). */
mb_status_t mb__sweep_preset(mb__pb_t *pb, const mb_cfg_node_t *n,
                             const char *path, const char *const *keys,
                             mb_cfg_node_t **out);
/* csv_shapes `n` (at path) read into *rows (a list of maps, each node at
 * its CSV line; *rows NULL and `why` set for a URL, which we cannot
 * fetch); `file` gets the path opened. A missing file is an error. */
mb_status_t mb__sweep_csv(mb__pb_t *pb, const mb_cfg_node_t *n,
                          const char *path, mb_cfg_node_t **rows, char *file,
                          size_t cap, char *why, size_t why_cap);
/* Every node of t at `line`: a CSV row's nodes at the config's line of
 * csv_shapes, so messages about them point into the config file. */
void mb__sweep_relocate(mb_cfg_node_t *t, int line);

/* The benchmarks' own parameters (jax_sweep_refine.c). */
mb_status_t mb__sweep_refine_gemm(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                  mb__plan_item_t *it, char *tag, char *why);
mb_status_t mb__sweep_refine_hbm(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                 mb__plan_item_t *it, char *tag, char *why);
mb_status_t mb__sweep_refine_transfer(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                      mb__plan_item_t *it, char *tag,
                                      char *why);
mb_status_t mb__sweep_refine_attention(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                       mb__plan_item_t *it, char *tag,
                                       char *why);

#endif
