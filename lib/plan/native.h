/* Internal: what the pieces of the native schema reader share
 * (schema_native.c reads a benchmark whole and expands it; native_fields.c
 * holds the swept fields; native_shapes.c the shapes and presets). The
 * types a benchmark is read into, the limits, and the helpers that find a
 * key in a benchmark or in defaults. Only these three files include it. */
#ifndef MB_LIB_PLAN_NATIVE_H
#define MB_LIB_PLAN_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#include "microbench/preset.h"
#include "plan/plan_build.h"

/* More entries than this from one file is almost surely a typo in a sweep
 * (and would take days to run). */
#define MAX_ENTRIES 100000
#define PATH_CAP 256
#define NAME_CAP 512
#define MAX_DIM MB_MAX_DIM_SIZE

/* ---- swept fields ----------------------------------------------------- */

typedef struct field field_t;

/* One value of a swept field, and how it reads in an entry's name. */
typedef struct value {
  union {
    mb_dtype_t dtype;
    mb_scaling_t scaling;
    mb_activation_t act;
    mb_cache_policy_t cache;
    mb_flush_t flush;
    const char *str; /* owned by the config tree */
    int boolean;
    double number;
    int64_t count;
    mb_reduce_op_t reduce;
    int32_t rank;
  } u;
  char label[80];
  /* The field it is a value of: a set_fn gets only the value, and the
   * shared ones (a member, a flag) find in the field what to set. */
  const field_t *field;
} value_t;

typedef void (*set_fn)(mb__plan_item_t *it, const value_t *v);

/* How a field's values are read and labelled (k_kinds in native_fields.c
 * says how for each). */
typedef enum kind {
  K_DTYPE,
  K_SCALING,
  K_ACT,
  K_CACHE,
  K_FLUSH,
  K_WORD,   /* a backend or implementation name */
  K_RECIPE, /* a recipe name, checked against the recipes */
  K_BOOL,
  K_NUMBER,
  K_COUNT,  /* a positive integer (attention's kv_heads) */
  K_REDUCE, /* a reduction: sum, prod, min, max */
  K_RANK    /* a rank, 0 to 2^31 - 1 (a collective's root) */
} kind_t;

/* Which benchmarks a field means something for. */
typedef enum scope { FOR_ALL, FOR_OPS, FOR_MODELS } scope_t;

struct field {
  const char *key, *plural; /* plural: NULL when there is none */
  kind_t kind;
  set_fn set;
  scope_t scope;
  /* In names: 0 "/<value>" (self-describing: bf16, hot, cuda), 1
   * "/<key>=<value>" (alpha=0.5, transpose=true, scale_a=row). */
  int keyed;
  /* What native_fields.c's shared setters set: the mb__plan_item_t
   * member at offset `at`, or the MB_PARAM_* bit `flag`. */
  size_t at;
  uint32_t flag;
};

/* The flags config files take (MB_PARAM_FLAG_LIST's set_by
 * OPTION_AND_CONFIG): `what` for them, nothing for the others. */
#define CONFIG_FLAG(set_by, ...) CONFIG_FLAG_##set_by(__VA_ARGS__)
#define CONFIG_FLAG_OPTION_AND_CONFIG(...) __VA_ARGS__
#define CONFIG_FLAG_OPTION_ONLY(...)
#define CONFIG_FLAG_IMPLIED(...)
#define COUNT_CONFIG_FLAG(NAME, group, key, result, inverted, name, label, \
                          set_by, ...)                                     \
  CONFIG_FLAG(set_by, +1)

/* The swept fields, in expansion order (the last varies fastest): 19 of
 * their own and a boolean per config flag; defined in native_fields.c,
 * which checks NUM_FIELDS against it. */
extern const field_t mb__native_fields[];
#define NUM_FIELDS (22 MB_PARAM_FLAG_LIST(COUNT_CONFIG_FLAG))
#define F_DTYPE 0                 /* mb__native_fields index of dtype */
#define NUM_AXES (2 + NUM_FIELDS) /* op, shape, then the fields */

/* ---- what a benchmark says, read whole --------------------------------- */

/* Where shapes came from: a `shapes` item, a preset or a `sizes` value
 * (rank errors, a size that is no whole number of elements). */
typedef enum origin_kind { FROM_SHAPES, FROM_PRESET, FROM_SIZES } origin_kind_t;
typedef struct origin {
  const mb_cfg_node_t *at;
  char path[PATH_CAP];
  origin_kind_t kind;
} origin_t;

typedef struct shape {
  uint32_t ndim;
  int64_t dims[MB_MAX_DIMS];
  const char *name; /* NULL: none; owned by the tree or a preset list */
  size_t origin;
  /* > 0: a `sizes` value in bytes; the entry's shape is [bytes / its
   * dtype's element size] (mb__native_size_shape), dims unused */
  int64_t bytes;
} shape_t;

typedef struct sweep {
  value_t *values;
  size_t count; /* 0: not written (the op's default) */
} sweep_t;

typedef struct bench {
  const mb_cfg_node_t *node;
  char path[64];
  const char *name; /* NULL: the op's or model's */
  const char **ops; /* the ops as written, or NULL for a model */
  size_t num_ops;
  const char *model, *mode;
  shape_t *shapes;
  size_t num_shapes, cap_shapes;
  origin_t *origins;
  size_t num_origins;
  mb_shape_list_t **lists; /* presets, kept for their shape names */
  size_t num_lists;
  sweep_t sweeps[NUM_FIELDS];
  mb__plan_item_t base; /* spec (timing, device, seed, flags), csv_path */
  double count;         /* entries it expands to */
} bench_t;

typedef struct reader {
  mb__pb_t *pb;
  const mb_cfg_node_t *defaults; /* NULL: none */
  const char *bench_keys[80], *const *default_keys;
} reader_t;

/* A key as found: the node and its path, in the benchmark or defaults. */
typedef struct found {
  const mb_cfg_node_t *node; /* NULL: not written */
  const char *key;           /* the spelling written */
  char path[PATH_CAP];
} found_t;

/* ---- shared helpers (schema_native.c) ---------------------------------- */

mb_status_t mb__native_no_memory(void);

mb_status_t mb__native_expect_kind(const mb__pb_t *pb, const mb_cfg_node_t *n,
                                   const char *path, mb_cfg_kind_t kind,
                                   const char *what);

/* `key` or its `plural` in one map; writing both is an error. */
mb_status_t mb__native_find_in(const mb__pb_t *pb, const mb_cfg_node_t *map,
                               const char *map_path, const char *key,
                               const char *plural, found_t *out);

/* The map a group of keys is taken from: the benchmark when it writes any
 * of them, else defaults. A group is a key with its plural, or keys that
 * replace each other as a whole (op/model; shapes/presets). */
const mb_cfg_node_t *mb__native_source(const reader_t *r, const bench_t *b,
                                       const char *const *group,
                                       const char **path);

/* `key` or its `plural`, from the benchmark or else defaults. */
mb_status_t mb__native_find(const reader_t *r, const bench_t *b,
                            const char *key, const char *plural, found_t *out);

/* ---- swept fields (native_fields.c) ------------------------------------ */

/* st, or MB_ERR_PARSE at n/path with mb_error_last() when it failed. */
mb_status_t mb__native_wrap(const mb__pb_t *pb, const mb_cfg_node_t *n,
                            const char *path, mb_status_t st);

/* Reads field `fi` into b->sweeps[fi] (left empty when not written). */
mb_status_t mb__native_read_sweep(const reader_t *r, bench_t *b, size_t fi);

/* The mb__native_fields index of `key`; NUM_FIELDS when there is none. */
size_t mb__native_field_index(const char *key);

/* A model's recipes: [baseline] unless told; any other recipe brings the
 * baseline along, first, so every entry has its speedup (as torchao). */
mb_status_t mb__native_model_recipes(bench_t *b);

/* ---- shapes and presets (native_shapes.c) ------------------------------ */

/* Reads `shapes` and/or `presets` into b and checks every shape fits every
 * op (or the model's [M, K, N]). */
mb_status_t mb__native_read_where(const reader_t *r, bench_t *b);

/* "1024x1024x1024" into buf (cap bytes); a `sizes` value as its bytes
 * ("64MiB", mb__native_bytes_text). */
void mb__native_shape_text(const shape_t *s, char *buf, size_t cap);

/* Adds where shapes came from / a shape to b (native_shapes.c). */
mb_status_t mb__native_add_origin(bench_t *b, const mb_cfg_node_t *at,
                                  const char *path, origin_kind_t kind);
mb_status_t mb__native_push_shape(bench_t *b, const shape_t *s);

/* ---- sizes in bytes (native_sizes.c) ----------------------------------- */

/* Reads `sizes` (found at f) into b: one byte count, a list of them, or
 * a range {start, end, multiplier | increase_by}; a count is an integer
 * or a string with a unit (B, KiB/K, MiB/M, GiB/G, TiB/T). */
mb_status_t mb__native_read_sizes(mb__pb_t *pb, bench_t *b, const found_t *f);

/* Bytes as the largest binary unit that holds them whole: "8B", "4KiB",
 * "64MiB", "1000B". */
void mb__native_bytes_text(int64_t bytes, char *buf, size_t cap);

/* The shape of an entry from `sizes` value s with dtype `dtype`: [bytes /
 * element size]; a size that is not a whole number of elements is an
 * error at the value. */
mb_status_t mb__native_size_shape(const mb__pb_t *pb, const bench_t *b,
                                  const shape_t *s, mb_dtype_t dtype,
                                  mb_op_params_t *p);

#endif
