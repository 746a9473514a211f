/* The native schema (docs/config.md, "Native schema"):
 *
 *   defaults: {timing: {samples: 5}}
 *   benchmarks:
 *     - name: square
 *       op: gemm
 *       presets: pow2
 *       dtypes: [bf16, f32]
 *
 * Every benchmark is read whole first — each value parsed and checked,
 * presets expanded — so a typo anywhere fails before anything is built and
 * the runaway-sweep guard knows the file's total. Then each benchmark is
 * expanded as the cartesian product op x shape x swept fields (in k_fields
 * order), the last varying fastest. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench/preset.h"
#include "models.h"
#include "plan_build.h"

/* More entries than this from one file is almost surely a typo in a sweep
 * (and would take days to run). */
#define MAX_ENTRIES 100000
#define PATH_CAP 256
#define NAME_CAP 512
#define MAX_DIM ((int64_t)1 << 40)

/* ---- swept fields ----------------------------------------------------- */

/* One value of a swept field, and how it reads in an entry's name. */
typedef struct value {
  union {
    mb_dtype_t dtype;
    mb_scaling_t scaling;
    mb_activation_t act;
    mb_cache_policy_t cache;
    const char *str; /* owned by the config tree */
    int boolean;
    double number;
  } u;
  char label[80];
} value_t;

typedef struct field field_t;
/* Reads one scalar node into *v (label included); errors name `path`. */
typedef mb_status_t (*parse_fn)(const mb__pb_t *pb, const field_t *f,
                                const mb_cfg_node_t *n, const char *path,
                                value_t *v);
typedef void (*set_fn)(mb__plan_item_t *it, const value_t *v);

/* Which benchmarks a field means something for. */
typedef enum scope { FOR_ALL, FOR_OPS, FOR_MODELS } scope_t;

struct field {
  const char *key, *plural; /* plural: NULL when there is none */
  parse_fn parse;           /* the field's kind */
  set_fn set;
  scope_t scope;
  /* In names: 0 "/<value>" (self-describing: bf16, hot, cuda), 1
   * "/<key>=<value>" (alpha=0.5, transpose=true, scale_a=row). */
  int keyed;
};

static mb_status_t wrap(const mb__pb_t *pb, const mb_cfg_node_t *n,
                        const char *path, mb_status_t st) {
  return st == MB_OK ? MB_OK : mb__pb_error(pb, n, path, "%s", mb_error_last());
}

static void label(const field_t *f, value_t *v, const char *text) {
  if (f->keyed)
    snprintf(v->label, sizeof v->label, "%s=%s", f->key, text);
  else
    snprintf(v->label, sizeof v->label, "%s", text);
}

static mb_status_t parse_dtype(const mb__pb_t *pb, const field_t *f,
                               const mb_cfg_node_t *n, const char *path,
                               value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK) st = wrap(pb, n, path, mb_dtype_from_name(s, &v->u.dtype));
  if (st == MB_OK) label(f, v, mb_dtype_name(v->u.dtype));
  return st;
}

static mb_status_t parse_scaling(const mb__pb_t *pb, const field_t *f,
                                 const mb_cfg_node_t *n, const char *path,
                                 value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = wrap(pb, n, path, mb_scaling_from_string(s, &v->u.scaling));
  if (st == MB_OK) label(f, v, s);
  return st;
}

static mb_status_t parse_activation(const mb__pb_t *pb, const field_t *f,
                                    const mb_cfg_node_t *n, const char *path,
                                    value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = wrap(pb, n, path, mb_activation_from_name(s, &v->u.act));
  if (st == MB_OK) label(f, v, mb_activation_name(v->u.act));
  return st;
}

static mb_status_t parse_cache(const mb__pb_t *pb, const field_t *f,
                               const mb_cfg_node_t *n, const char *path,
                               value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = wrap(pb, n, path, mb_cache_policy_from_name(s, &v->u.cache));
  if (st == MB_OK) label(f, v, mb_cache_policy_name(v->u.cache));
  return st;
}

/* A backend or implementation name: checked when it runs (what exists
 * depends on the machine). */
static mb_status_t parse_word(const mb__pb_t *pb, const field_t *f,
                              const mb_cfg_node_t *n, const char *path,
                              value_t *v) {
  mb_status_t st = mb__pb_string(pb, n, path, &v->u.str);
  if (st == MB_OK && !*v->u.str)
    return mb__pb_error(pb, n, path, "%s must not be empty", f->key);
  if (st == MB_OK) label(f, v, v->u.str);
  return st;
}

static mb_status_t parse_recipe(const mb__pb_t *pb, const field_t *f,
                                const mb_cfg_node_t *n, const char *path,
                                value_t *v) {
  mb_status_t st = mb__pb_string(pb, n, path, &v->u.str);
  if (st == MB_OK) st = mb__recipe_check(pb, n, path, v->u.str);
  if (st == MB_OK) label(f, v, v->u.str);
  return st;
}

static mb_status_t parse_bool(const mb__pb_t *pb, const field_t *f,
                              const mb_cfg_node_t *n, const char *path,
                              value_t *v) {
  mb_status_t st = mb__pb_bool(pb, n, path, &v->u.boolean);
  if (st == MB_OK) label(f, v, v->u.boolean ? "true" : "false");
  return st;
}

static mb_status_t parse_number(const mb__pb_t *pb, const field_t *f,
                                const mb_cfg_node_t *n, const char *path,
                                value_t *v) {
  mb_status_t st = mb__pb_number(pb, n, path, &v->u.number);
  char text[32];
  snprintf(text, sizeof text, "%g", v->u.number); /* JSON and YAML alike */
  if (st == MB_OK) label(f, v, text);
  return st;
}

#define SETTER(fn, member, part)                          \
  static void fn(mb__plan_item_t *it, const value_t *v) { \
    it->member = v->u.part;                               \
  }
SETTER(set_dtype, params.dtype, dtype)
SETTER(set_dtype_b, params.dtype_b, dtype)
SETTER(set_dtype_out, params.dtype_out, dtype)
SETTER(set_dtype_q, params.dtype_q, dtype)
SETTER(set_scale_a, params.scale_a, scaling)
SETTER(set_scale_b, params.scale_b, scaling)
SETTER(set_activation, params.activation, act)
SETTER(set_backend, spec.backend, str)
SETTER(set_impl, spec.impl, str)
SETTER(set_cache, spec.cache, cache)
SETTER(set_recipe, recipe, str)
SETTER(set_alpha, params.alpha, number)
SETTER(set_beta, params.beta, number)
SETTER(set_eps, params.eps, number)
SETTER(set_act_alpha, params.act_alpha, number)
#undef SETTER

#define FLAG_SETTER(fn, flag)                             \
  static void fn(mb__plan_item_t *it, const value_t *v) { \
    if (v->u.boolean)                                     \
      it->params.flags |= (flag);                         \
    else                                                  \
      it->params.flags &= ~(uint32_t)(flag);              \
  }
FLAG_SETTER(set_quantize_inputs, MB_PARAM_QUANTIZE_INPUTS)
FLAG_SETTER(set_transpose, MB_PARAM_TRANSPOSE)
FLAG_SETTER(set_causal, MB_PARAM_CAUSAL)
FLAG_SETTER(set_tf32, MB_PARAM_TF32)
FLAG_SETTER(set_no_affine, MB_PARAM_NO_WEIGHT)
#undef FLAG_SETTER

/* A static scale is the quantize op's MB_PARAM_STATIC with its value. */
static void set_static_scale(mb__plan_item_t *it, const value_t *v) {
  it->params.flags |= MB_PARAM_STATIC;
  it->params.scale = v->u.number;
}

/* The swept fields, in expansion order (the last varies fastest). dtype
 * comes first: every entry name carries it. */
static const field_t k_fields[] = {
    {"dtype", "dtypes", parse_dtype, set_dtype, FOR_ALL, 0},
    {"dtype_b", NULL, parse_dtype, set_dtype_b, FOR_OPS, 1},
    {"dtype_out", NULL, parse_dtype, set_dtype_out, FOR_OPS, 1},
    {"dtype_q", NULL, parse_dtype, set_dtype_q, FOR_OPS, 1},
    {"scale_a", NULL, parse_scaling, set_scale_a, FOR_OPS, 1},
    {"scale_b", NULL, parse_scaling, set_scale_b, FOR_OPS, 1},
    {"activation", NULL, parse_activation, set_activation, FOR_OPS, 0},
    {"backend", "backends", parse_word, set_backend, FOR_ALL, 0},
    {"impl", "impls", parse_word, set_impl, FOR_ALL, 0},
    {"cache", NULL, parse_cache, set_cache, FOR_ALL, 0},
    {"recipe", "recipes", parse_recipe, set_recipe, FOR_MODELS, 0},
    {"quantize_inputs", NULL, parse_bool, set_quantize_inputs, FOR_OPS, 1},
    {"transpose", NULL, parse_bool, set_transpose, FOR_OPS, 1},
    {"causal", NULL, parse_bool, set_causal, FOR_OPS, 1},
    {"tf32", NULL, parse_bool, set_tf32, FOR_OPS, 1},
    {"no_affine", NULL, parse_bool, set_no_affine, FOR_OPS, 1},
    {"alpha", NULL, parse_number, set_alpha, FOR_OPS, 1},
    {"beta", NULL, parse_number, set_beta, FOR_OPS, 1},
    {"eps", NULL, parse_number, set_eps, FOR_OPS, 1},
    {"act_alpha", NULL, parse_number, set_act_alpha, FOR_OPS, 1},
    {"static_scale", NULL, parse_number, set_static_scale, FOR_OPS, 1},
};
#define NUM_FIELDS (sizeof k_fields / sizeof k_fields[0])
#define F_DTYPE 0                 /* k_fields index of dtype */
#define NUM_AXES (2 + NUM_FIELDS) /* op, shape, then the fields */

/* Keys of a benchmark that are not swept fields; "name" must stay first
 * (defaults take every key but it). */
static const char *const k_other_keys[] = {
    "name",   "op",     "ops",  "model",  "mode", "shapes", "presets",
    "preset", "device", "seed", "strict", "csv",  "timing", NULL};

/* ---- what a benchmark says, read whole --------------------------------- */

/* Where shapes came from: a `shapes` item, or a preset (rank errors). */
typedef struct origin {
  const mb_cfg_node_t *at;
  char path[PATH_CAP];
  int preset;
} origin_t;

typedef struct shape {
  uint32_t ndim;
  int64_t dims[MB_MAX_DIMS];
  const char *name; /* NULL: none; owned by the tree or a preset list */
  size_t origin;
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
  const char *bench_keys[64], *const *default_keys;
} reader_t;

static void bench_free(bench_t *b) {
  for (size_t f = 0; f < NUM_FIELDS; f++) free(b->sweeps[f].values);
  for (size_t i = 0; i < b->num_lists; i++) mb_shape_list_destroy(b->lists[i]);
  free(b->lists);
  free(b->ops);
  free(b->shapes);
  free(b->origins);
}

static mb_status_t no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
}

static mb_status_t expect_kind(const mb__pb_t *pb, const mb_cfg_node_t *n,
                               const char *path, mb_cfg_kind_t kind,
                               const char *what) {
  if (n->kind == kind) return MB_OK;
  if (n->text && n->kind != MB_CFG_NULL)
    return mb__pb_error(pb, n, path, "expected %s, got %s \"%s\"", what,
                        mb__cfg_kind_name(n->kind), n->text);
  return mb__pb_error(pb, n, path, "expected %s, got a %s", what,
                      mb__cfg_kind_name(n->kind));
}

/* A key as found: the node and its path, in the benchmark or defaults. */
typedef struct found {
  const mb_cfg_node_t *node; /* NULL: not written */
  const char *key;           /* the spelling written */
  char path[PATH_CAP];
} found_t;

/* `key` or its `plural` in one map; writing both is an error. */
static mb_status_t find_in(const mb__pb_t *pb, const mb_cfg_node_t *map,
                           const char *map_path, const char *key,
                           const char *plural, found_t *out) {
  out->node = NULL;
  if (!map) return MB_OK;
  const mb_cfg_node_t *one = mb__cfg_get(map, key);
  const mb_cfg_node_t *many = plural ? mb__cfg_get(map, plural) : NULL;
  if (one && many) {
    mb__path_key(out->path, sizeof out->path, map_path, plural);
    return mb__pb_error(pb, many, out->path,
                        "both `%s` and `%s` are given; write one of them", key,
                        plural);
  }
  out->node = one ? one : many;
  out->key = one ? key : plural;
  if (out->node) mb__path_key(out->path, sizeof out->path, map_path, out->key);
  return MB_OK;
}

static int has_any(const mb_cfg_node_t *map, const char *const *keys) {
  for (; map && *keys; keys++)
    if (mb__cfg_get(map, *keys)) return 1;
  return 0;
}

/* The map a group of keys is taken from: the benchmark when it writes any
 * of them, else defaults. A group is a key with its plural, or keys that
 * replace each other as a whole (op/model; shapes/presets). */
static const mb_cfg_node_t *source(const reader_t *r, const bench_t *b,
                                   const char *const *group,
                                   const char **path) {
  if (has_any(b->node, group) || !r->defaults) {
    *path = b->path;
    return b->node;
  }
  *path = "defaults";
  return r->defaults;
}

static mb_status_t find(const reader_t *r, const bench_t *b, const char *key,
                        const char *plural, found_t *out) {
  const char *group[] = {key, plural, NULL}, *path;
  const mb_cfg_node_t *map = source(r, b, group, &path);
  return find_in(r->pb, map, path, key, plural, out);
}

/* ---- op or model -------------------------------------------------------- */

static const char *const k_what_keys[] = {"op", "ops", "model", NULL};

static mb_status_t read_ops(const reader_t *r, bench_t *b, const found_t *f) {
  const mb__pb_t *pb = r->pb;
  const mb_cfg_node_t *n = f->node;
  size_t count = n->kind == MB_CFG_LIST ? n->count : 1;
  if (n->kind == MB_CFG_LIST && count == 0)
    return mb__pb_error(pb, n, f->path, "empty list; name at least one op");
  if (!(b->ops = calloc(count, sizeof *b->ops))) return no_memory();
  for (size_t i = 0; i < count; i++) {
    const mb_cfg_node_t *item = n->kind == MB_CFG_LIST ? n->items[i] : n;
    char path[PATH_CAP];
    if (n->kind == MB_CFG_LIST)
      mb__path_index(path, sizeof path, f->path, i);
    else
      snprintf(path, sizeof path, "%s", f->path);
    mb_status_t st = mb__pb_string(pb, item, path, &b->ops[i]);
    if (st == MB_OK && !mb_op_find(b->ops[i]))
      st = mb__pb_error(pb, item, path, "%s", mb_error_last());
    if (st != MB_OK) return st;
  }
  b->num_ops = count;
  return MB_OK;
}

static mb_status_t read_what(const reader_t *r, bench_t *b) {
  const char *path;
  const mb_cfg_node_t *map = source(r, b, k_what_keys, &path);
  found_t op, model;
  mb_status_t st = find_in(r->pb, map, path, "op", "ops", &op);
  if (st == MB_OK) st = find_in(r->pb, map, path, "model", NULL, &model);
  if (st != MB_OK) return st;
  if (op.node && model.node)
    return mb__pb_error(r->pb, model.node, model.path,
                        "both `%s` and `model` are given; a benchmark runs "
                        "either ops or a model",
                        op.key);
  if (!op.node && !model.node)
    return mb__pb_error(r->pb, b->node, b->path,
                        "say what to run: `op` (an op or alias, see `mbench "
                        "list ops`) or `model` (e.g. linear)");
  if (op.node) return read_ops(r, b, &op);
  st = mb__pb_string(r->pb, model.node, model.path, &b->model);
  if (st == MB_OK)
    st = mb__model_check(r->pb, model.node, model.path, b->model);
  return st;
}

/* `mode` goes with `model`; inference unless told. */
static mb_status_t read_mode(const reader_t *r, bench_t *b) {
  found_t f;
  mb_status_t st = find(r, b, "mode", NULL, &f);
  b->mode = "inference";
  if (st != MB_OK || !f.node) return st;
  if (!b->model)
    return mb__pb_error(r->pb, f.node, f.path,
                        "`mode` applies to `model` benchmarks, not to ops");
  st = mb__pb_string(r->pb, f.node, f.path, &b->mode);
  if (st == MB_OK) st = mb__mode_check(r->pb, f.node, f.path, b->mode);
  return st;
}

/* ---- shapes and presets ------------------------------------------------- */

static const char *const k_shape_keys[] = {"shapes", "presets", "preset", NULL};

static mb_status_t add_origin(bench_t *b, const mb_cfg_node_t *at,
                              const char *path, int preset) {
  origin_t *grown =
      realloc(b->origins, (b->num_origins + 1) * sizeof *b->origins);
  if (!grown) return no_memory();
  b->origins = grown;
  origin_t *o = &b->origins[b->num_origins++];
  o->at = at;
  o->preset = preset;
  snprintf(o->path, sizeof o->path, "%s", path);
  return MB_OK;
}

static mb_status_t push_shape(bench_t *b, const shape_t *s) {
  if (b->num_shapes == b->cap_shapes) {
    size_t cap = b->cap_shapes ? 2 * b->cap_shapes : 16;
    shape_t *grown = realloc(b->shapes, cap * sizeof *grown);
    if (!grown) return no_memory();
    b->shapes = grown;
    b->cap_shapes = cap;
  }
  b->shapes[b->num_shapes++] = *s;
  return MB_OK;
}

/* "1024x1024x1024": positive integers joined by x. */
static mb_status_t parse_shape_text(const mb__pb_t *pb, const mb_cfg_node_t *n,
                                    const char *path, shape_t *s) {
  const char *p = n->text;
  s->ndim = 0;
  for (;;) {
    char *end;
    long long v = *p >= '0' && *p <= '9' ? strtoll(p, &end, 10) : 0;
    if (v <= 0 || v > MAX_DIM || s->ndim == MB_MAX_DIMS) break;
    s->dims[s->ndim++] = v;
    if (*end == '\0') return MB_OK;
    if (*end != 'x') break;
    p = end + 1;
  }
  return mb__pb_error(pb, n, path,
                      "\"%s\" is not a shape; write positive integers joined "
                      "by x (\"1024x1024x1024\") or a list ([1024, 1024, "
                      "1024]), at most %d dimensions",
                      n->text, MB_MAX_DIMS);
}

static mb_status_t parse_dims(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, shape_t *s) {
  if (n->kind == MB_CFG_STRING) return parse_shape_text(pb, n, path, s);
  if (n->kind != MB_CFG_LIST)
    return expect_kind(pb, n, path, MB_CFG_LIST,
                       "a shape ([M, K, N], \"MxKxN\" or {name: ..., shape: "
                       "[...]}); a single shape is written [[M, K, N]]");
  if (n->count == 0 || n->count > MB_MAX_DIMS)
    return mb__pb_error(pb, n, path,
                        "a shape has 1 to %d dimensions, this one has %zu",
                        MB_MAX_DIMS, n->count);
  s->ndim = (uint32_t)n->count;
  for (size_t i = 0; i < n->count; i++) {
    char here[PATH_CAP];
    mb__path_index(here, sizeof here, path, i);
    mb_status_t st = mb__pb_int(pb, n->items[i], here, 1, MAX_DIM, &s->dims[i]);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

/* A shape: [..], "AxB..", or {name: .., shape: ..}. */
static mb_status_t read_shape(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, shape_t *s) {
  static const char *const k_keys[] = {"name", "shape", NULL};
  s->name = NULL;
  if (n->kind != MB_CFG_MAP) return parse_dims(pb, n, path, s);
  mb_status_t st = mb__pb_check_keys(pb, n, path, k_keys);
  if (st != MB_OK) return st;
  const mb_cfg_node_t *name = mb__cfg_get(n, "name");
  const mb_cfg_node_t *dims = mb__cfg_get(n, "shape");
  char here[PATH_CAP];
  if (!dims)
    return mb__pb_error(pb, n, path,
                        "a named shape needs `shape` ({name: attn, shape: "
                        "[M, K, N]})");
  if (name) {
    mb__path_key(here, sizeof here, path, "name");
    if ((st = mb__pb_string(pb, name, here, &s->name)) != MB_OK) return st;
  }
  mb__path_key(here, sizeof here, path, "shape");
  return parse_dims(pb, dims, here, s);
}

static mb_status_t read_shapes(const mb__pb_t *pb, bench_t *b,
                               const found_t *f) {
  const mb_cfg_node_t *n = f->node;
  if (n->kind == MB_CFG_STRING) { /* shapes: 1024x1024x1024 */
    shape_t s = {0};
    mb_status_t st = read_shape(pb, n, f->path, &s);
    if (st == MB_OK) st = add_origin(b, n, f->path, 0);
    s.origin = b->num_origins - 1;
    return st == MB_OK ? push_shape(b, &s) : st;
  }
  mb_status_t st = expect_kind(pb, n, f->path, MB_CFG_LIST, "a list of shapes");
  if (st == MB_OK && n->count == 0)
    st = mb__pb_error(pb, n, f->path, "empty list; give at least one shape");
  for (size_t i = 0; st == MB_OK && i < n->count; i++) {
    char path[PATH_CAP];
    mb__path_index(path, sizeof path, f->path, i);
    shape_t s = {0};
    st = read_shape(pb, n->items[i], path, &s);
    if (st == MB_OK) st = add_origin(b, n->items[i], path, 0);
    s.origin = b->num_origins - 1;
    if (st == MB_OK) st = push_shape(b, &s);
  }
  return st;
}

/* m_values: one integer or a list of them. */
static mb_status_t read_m_values(const mb__pb_t *pb, const mb_cfg_node_t *n,
                                 const char *path, int64_t **out,
                                 size_t *count) {
  size_t num = n->kind == MB_CFG_LIST ? n->count : 1;
  if (num == 0)
    return mb__pb_error(pb, n, path, "empty list; give at least one M value");
  if (!(*out = calloc(num, sizeof **out))) return no_memory();
  *count = num;
  for (size_t i = 0; i < num; i++) {
    char here[PATH_CAP];
    const mb_cfg_node_t *item = n->kind == MB_CFG_LIST ? n->items[i] : n;
    if (n->kind == MB_CFG_LIST)
      mb__path_index(here, sizeof here, path, i);
    else
      snprintf(here, sizeof here, "%s", path);
    mb_status_t st = mb__pb_int(pb, item, here, 1, MAX_DIM, &(*out)[i]);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

/* The preset's parameters from its map form. Powers start at 1: 0 means
 * "the preset's default" to mb_preset_shapes. */
static mb_status_t read_preset_params(const mb__pb_t *pb,
                                      const mb_cfg_node_t *n, const char *path,
                                      const char **name, mb_preset_params_t *pp,
                                      int64_t **m) {
  static const char *const k_keys[] = {"name", "min_power", "max_power",
                                       "m_values", NULL};
  mb_status_t st = mb__pb_check_keys(pb, n, path, k_keys);
  if (st != MB_OK) return st;
  char here[PATH_CAP];
  const mb_cfg_node_t *v = mb__cfg_get(n, "name");
  if (!v)
    return mb__pb_error(pb, n, path,
                        "a preset map needs `name` ({name: pow2, min_power: "
                        "8, max_power: 12})");
  mb__path_key(here, sizeof here, path, "name");
  if ((st = mb__pb_string(pb, v, here, name)) != MB_OK) return st;
  static const char *const k_powers[] = {"min_power", "max_power"};
  for (size_t i = 0; i < 2; i++) {
    int64_t p;
    if (!(v = mb__cfg_get(n, k_powers[i]))) continue;
    mb__path_key(here, sizeof here, path, k_powers[i]);
    if ((st = mb__pb_int(pb, v, here, 1, 30, &p)) != MB_OK) return st;
    *(i ? &pp->max_power : &pp->min_power) = (int)p;
  }
  if ((v = mb__cfg_get(n, "m_values"))) {
    mb__path_key(here, sizeof here, path, "m_values");
    st = read_m_values(pb, v, here, m, &pp->num_m_values);
    pp->m_values = *m;
  }
  return st;
}

static mb_status_t read_preset(const mb__pb_t *pb, bench_t *b,
                               const mb_cfg_node_t *n, const char *path) {
  mb_preset_params_t pp = MB_PRESET_PARAMS_INIT;
  const char *name = NULL;
  int64_t *m = NULL;
  mb_status_t st = n->kind == MB_CFG_MAP
                       ? read_preset_params(pb, n, path, &name, &pp, &m)
                       : mb__pb_string(pb, n, path, &name);
  mb_shape_list_t *list = NULL;
  if (st == MB_OK) st = wrap(pb, n, path, mb_preset_shapes(name, &pp, &list));
  free(m);
  if (st != MB_OK) return st;
  mb_shape_list_t **grown =
      realloc(b->lists, (b->num_lists + 1) * sizeof *b->lists);
  if (!grown) {
    mb_shape_list_destroy(list);
    return no_memory();
  }
  b->lists = grown;
  b->lists[b->num_lists++] = list;
  if ((st = add_origin(b, n, path, 1)) != MB_OK) return st;
  for (size_t i = 0; st == MB_OK && i < mb_shape_list_count(list); i++) {
    shape_t s = {0};
    s.ndim = 3;
    s.origin = b->num_origins - 1;
    mb_shape_list_get(list, i, &s.name, s.dims);
    st = push_shape(b, &s);
  }
  return st;
}

static mb_status_t read_presets(const mb__pb_t *pb, bench_t *b,
                                const found_t *f) {
  const mb_cfg_node_t *n = f->node;
  if (n->kind != MB_CFG_LIST) return read_preset(pb, b, n, f->path);
  if (n->count == 0)
    return mb__pb_error(pb, n, f->path, "empty list; name at least one preset");
  for (size_t i = 0; i < n->count; i++) {
    char path[PATH_CAP];
    mb__path_index(path, sizeof path, f->path, i);
    mb_status_t st = read_preset(pb, b, n->items[i], path);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

static void shape_text(const shape_t *s, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t d = 0; d < s->ndim && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, d ? "x" : "",
                            s->dims[d]);
}

/* Every shape fits every op (or the model's [M, K, N]). */
static mb_status_t check_ranks(const mb__pb_t *pb, const bench_t *b) {
  size_t num = b->ops ? b->num_ops : 1;
  for (size_t o = 0; o < num; o++) {
    const mb_op_t *op = b->ops ? mb_op_find(b->ops[o]) : NULL;
    uint32_t rank = op ? mb_op_rank(op) : 3;
    const char *syntax = op ? mb_op_shape_syntax(op) : "MxKxN";
    char who[96];
    if (op)
      snprintf(who, sizeof who, "op %s", b->ops[o]);
    else
      snprintf(who, sizeof who, "model %s", b->model);
    for (size_t i = 0; i < b->num_shapes; i++) {
      const shape_t *s = &b->shapes[i];
      const origin_t *at = &b->origins[s->origin];
      if (s->ndim == rank) continue;
      if (at->preset)
        return mb__pb_error(pb, at->at, at->path,
                            "presets give [M, K, N] shapes, but %s takes %u "
                            "dimensions (%s); list its shapes under `shapes`",
                            who, rank, syntax);
      char text[160];
      shape_text(s, text, sizeof text);
      return mb__pb_error(pb, at->at, at->path,
                          "%s takes %u dimensions (%s), this shape has %u "
                          "(%s)",
                          who, rank, syntax, s->ndim, text);
    }
  }
  return MB_OK;
}

static mb_status_t read_where(const reader_t *r, bench_t *b) {
  const char *path;
  const mb_cfg_node_t *map = source(r, b, k_shape_keys, &path);
  found_t shapes, presets;
  mb_status_t st = find_in(r->pb, map, path, "shapes", NULL, &shapes);
  if (st == MB_OK)
    st = find_in(r->pb, map, path, "presets", "preset", &presets);
  if (st != MB_OK) return st;
  if (!shapes.node && !presets.node)
    return mb__pb_error(r->pb, b->node, b->path,
                        "no shapes: give `shapes` ([[1024, 1024, 1024]] or "
                        "[\"1024x1024x1024\"]) and/or `presets` (e.g. pow2, "
                        "llama; see `mbench list presets`)");
  if (shapes.node && (st = read_shapes(r->pb, b, &shapes)) != MB_OK) return st;
  if (presets.node && (st = read_presets(r->pb, b, &presets)) != MB_OK)
    return st;
  return check_ranks(r->pb, b);
}

/* ---- swept fields, read ------------------------------------------------- */

static mb_status_t read_sweep(const reader_t *r, bench_t *b, size_t fi) {
  const field_t *f = &k_fields[fi];
  sweep_t *sw = &b->sweeps[fi];
  found_t at;
  mb_status_t st = find(r, b, f->key, f->plural, &at);
  if (st != MB_OK || !at.node) return st;
  const mb_cfg_node_t *n = at.node;
  if ((f->scope == FOR_OPS && b->model) || (f->scope == FOR_MODELS && b->ops))
    return mb__pb_error(
        r->pb, n, at.path, "`%s` applies to %s benchmarks, not to %s", f->key,
        f->scope == FOR_OPS ? "`op`" : "`model`", b->model ? "models" : "ops");
  size_t count = n->kind == MB_CFG_LIST ? n->count : 1;
  if (count == 0)
    return mb__pb_error(r->pb, n, at.path,
                        "empty list; give at least one value (or leave `%s` "
                        "out for the default)",
                        f->key);
  if (!(sw->values = calloc(count, sizeof *sw->values))) return no_memory();
  for (size_t i = 0; i < count; i++) {
    char path[PATH_CAP];
    const mb_cfg_node_t *item = n->kind == MB_CFG_LIST ? n->items[i] : n;
    if (n->kind == MB_CFG_LIST)
      mb__path_index(path, sizeof path, at.path, i);
    else
      snprintf(path, sizeof path, "%s", at.path);
    if ((st = f->parse(r->pb, f, item, path, &sw->values[i])) != MB_OK)
      return st;
  }
  sw->count = count;
  return MB_OK;
}

static size_t field_index(const char *key) {
  size_t f = 0;
  while (f < NUM_FIELDS && strcmp(k_fields[f].key, key)) f++;
  return f;
}

/* A model's recipes: [baseline] unless told; any other recipe brings the
 * baseline along, first, so every entry has its speedup (as torchao). */
static mb_status_t model_recipes(bench_t *b) {
  sweep_t *sw = &b->sweeps[field_index("recipe")];
  for (size_t i = 0; i < sw->count; i++)
    if (!strcmp(sw->values[i].u.str, "baseline")) return MB_OK;
  value_t *grown = realloc(sw->values, (sw->count + 1) * sizeof *grown);
  if (!grown) return no_memory();
  memmove(grown + 1, grown, sw->count * sizeof *grown);
  grown[0].u.str = "baseline";
  snprintf(grown[0].label, sizeof grown[0].label, "baseline");
  sw->values = grown;
  sw->count++;
  return MB_OK;
}

/* ---- not swept: device, seed, strict, csv, timing ----------------------- */

typedef struct timing_key {
  const char *key;
  int count;   /* 1: an integer in [lo, 1e9]; 0: seconds/ratio */
  double lo;   /* smallest valid value */
  int lo_open; /* 1: must be > lo */
  void (*set)(mb_bench_spec_t *s, double v);
} timing_key_t;

#define TSET(fn, member, type)                   \
  static void fn(mb_bench_spec_t *s, double v) { \
    s->member = (type)v;                         \
  }
TSET(t_samples, samples, uint32_t)
TSET(t_min_samples, min_samples, uint32_t)
TSET(t_min_time, min_time_s, double)
TSET(t_max_noise, max_noise, double)
TSET(t_timeout, timeout_s, double)
TSET(t_warmup, warmup_s, double)
TSET(t_warmup_runs, warmup_runs, uint32_t)
TSET(t_batch, batch, uint32_t)
#undef TSET

static const timing_key_t k_timing[] = {
    {"samples", 1, 1, 0, t_samples},
    {"min_samples", 1, 1, 0, t_min_samples},
    {"min_time", 0, 0, 0, t_min_time},
    {"max_noise", 0, 0, 1, t_max_noise},
    {"timeout", 0, 0, 1, t_timeout},
    {"warmup", 0, 0, 0, t_warmup},
    {"warmup_runs", 1, 0, 0, t_warmup_runs},
    {"batch", 1, 0, 0, t_batch},
};
#define NUM_TIMING (sizeof k_timing / sizeof k_timing[0])

static mb_status_t read_timing_key(const mb__pb_t *pb, const timing_key_t *k,
                                   const mb_cfg_node_t *n, const char *path,
                                   mb_bench_spec_t *spec) {
  double v;
  mb_status_t st;
  if (k->count) {
    int64_t i;
    st = mb__pb_int(pb, n, path, (int64_t)k->lo, 1000000000, &i);
    v = (double)i;
  } else {
    st = mb__pb_number(pb, n, path, &v);
    if (st == MB_OK && (v < k->lo || (k->lo_open && v == k->lo)))
      st = mb__pb_error(pb, n, path, "%g is out of range; valid: %s %g", v,
                        k->lo_open ? ">" : ">=", k->lo);
  }
  if (st == MB_OK) k->set(spec, v);
  return st;
}

static mb_status_t read_criterion(const mb__pb_t *pb, const mb_cfg_node_t *t,
                                  const char *path, mb_bench_spec_t *spec) {
  const mb_cfg_node_t *c = mb__cfg_get(t, "criterion");
  const mb_cfg_node_t *samples = mb__cfg_get(t, "samples");
  char here[PATH_CAP];
  mb__path_key(here, sizeof here, path, "criterion");
  const char *name = samples ? "fixed" : "stdrel"; /* samples: fixed */
  mb_status_t st = c ? mb__pb_string(pb, c, here, &name) : MB_OK;
  if (st != MB_OK) return st;
  if (strcmp(name, "stdrel") && strcmp(name, "fixed"))
    return mb__pb_error(pb, c, here,
                        "unknown criterion \"%s\"; valid: stdrel, fixed", name);
  spec->criterion =
      strcmp(name, "fixed") ? MB_CRITERION_STDREL : MB_CRITERION_FIXED;
  if (spec->criterion == MB_CRITERION_FIXED && !samples)
    return mb__pb_error(pb, c, here,
                        "criterion fixed needs `samples` (how many)");
  if (spec->criterion == MB_CRITERION_STDREL && samples) {
    mb__path_key(here, sizeof here, path, "samples");
    return mb__pb_error(pb, samples, here,
                        "`samples` is for criterion fixed; stdrel stops on "
                        "noise (use min_samples, min_time, max_noise)");
  }
  if (spec->criterion == MB_CRITERION_STDREL) spec->samples = 0;
  return MB_OK;
}

static mb_status_t read_timing(const mb__pb_t *pb, const found_t *f,
                               mb_bench_spec_t *spec) {
  const char *known[NUM_TIMING + 2];
  known[0] = "criterion";
  for (size_t i = 0; i < NUM_TIMING; i++) known[i + 1] = k_timing[i].key;
  known[NUM_TIMING + 1] = NULL;
  mb_status_t st = mb__pb_check_keys(pb, f->node, f->path, known);
  for (size_t i = 0; st == MB_OK && i < NUM_TIMING; i++) {
    const mb_cfg_node_t *n = mb__cfg_get(f->node, k_timing[i].key);
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, f->path, k_timing[i].key);
    if (n) st = read_timing_key(pb, &k_timing[i], n, here, spec);
  }
  return st == MB_OK ? read_criterion(pb, f->node, f->path, spec) : st;
}

static mb_status_t read_run_keys(const reader_t *r, bench_t *b) {
  const mb__pb_t *pb = r->pb;
  mb__plan_item_t *it = &b->base;
  found_t f;
  int64_t v;
  int flag;
  mb_status_t st = find(r, b, "device", NULL, &f);
  if (st == MB_OK && f.node &&
      (st = mb__pb_int(pb, f.node, f.path, 0, 4095, &v)) == MB_OK)
    it->spec.device = (uint32_t)v;
  if (st == MB_OK) st = find(r, b, "seed", NULL, &f);
  /* JSON numbers are doubles: exact up to 2^53. */
  if (st == MB_OK && f.node &&
      (st = mb__pb_int(pb, f.node, f.path, 0, (int64_t)1 << 53, &v)) == MB_OK)
    it->spec.seed = (uint64_t)v;
  if (st == MB_OK) st = find(r, b, "strict", NULL, &f);
  if (st == MB_OK && f.node &&
      (st = mb__pb_bool(pb, f.node, f.path, &flag)) == MB_OK && flag)
    it->spec.flags |= MB_BENCH_STRICT;
  if (st == MB_OK) st = find(r, b, "csv", NULL, &f);
  if (st == MB_OK && f.node)
    st = mb__pb_string(pb, f.node, f.path, &it->csv_path);
  if (st == MB_OK) st = find(r, b, "timing", NULL, &f);
  if (st == MB_OK && f.node) st = read_timing(pb, &f, &it->spec);
  return st;
}

/* ---- one benchmark ------------------------------------------------------ */

static double bench_count(const bench_t *b) {
  double n = (double)(b->ops ? b->num_ops : 1) * (double)b->num_shapes;
  for (size_t f = 0; f < NUM_FIELDS; f++)
    if (b->sweeps[f].count) n *= (double)b->sweeps[f].count;
  return n;
}

static mb_status_t read_bench(const reader_t *r, const mb_cfg_node_t *n,
                              size_t index, bench_t *b) {
  const mb__pb_t *pb = r->pb;
  b->node = n;
  mb__path_index(b->path, sizeof b->path, "benchmarks", index);
  b->base = (mb__plan_item_t)MB__PLAN_ITEM_INIT;
  b->base.at = n;
  b->base.path = b->path;
  mb_status_t st = mb__pb_check_keys(pb, n, b->path, r->bench_keys);
  const mb_cfg_node_t *name =
      n->kind == MB_CFG_MAP ? mb__cfg_get(n, "name") : NULL;
  if (st == MB_OK && name) {
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, b->path, "name");
    if ((st = mb__pb_string(pb, name, here, &b->name)) == MB_OK && !*b->name)
      st = mb__pb_error(pb, name, here, "name must not be empty");
  }
  if (st == MB_OK) st = read_what(r, b);
  if (st == MB_OK) st = read_mode(r, b);
  if (st == MB_OK) st = read_where(r, b);
  for (size_t f = 0; st == MB_OK && f < NUM_FIELDS; f++)
    st = read_sweep(r, b, f);
  if (st == MB_OK && b->model) st = model_recipes(b);
  if (st == MB_OK) st = read_run_keys(r, b);
  b->count = bench_count(b);
  return st;
}

/* ---- expansion ---------------------------------------------------------- */

static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (w > 0) *len += (size_t)w;
}

/* The input dtype an entry runs with: as written, else the op's (or
 * alias's) default. */
static const char *dtype_label(const mb__plan_item_t *it) {
  if (it->params.dtype != MB_DTYPE_NONE) return mb_dtype_name(it->params.dtype);
  const mb_op_t *op = mb_op_find(it->op);
  mb_op_params_t p = it->params;
  mb_op_apply_alias(it->op, &p);
  /* If it does not resolve, mb__plan_add says why. */
  if (op && mb_op_resolve(op, &p) == MB_OK) return mb_dtype_name(p.dtype);
  return "default";
}

/* "<name>[/<op>]/<shape>/<dtype>" then "/<value>" for each other field
 * with more than one value; field `skip` left out (the baseline key). */
static void entry_name(const bench_t *b, const size_t *idx,
                       const mb__plan_item_t *it, size_t skip, char *buf,
                       size_t cap) {
  size_t len = 0;
  const char *what = b->ops ? b->ops[idx[0]] : b->model;
  put(buf, cap, &len, "%s", b->name ? b->name : what);
  if (b->name && b->ops && b->num_ops > 1) put(buf, cap, &len, "/%s", what);
  const shape_t *s = &b->shapes[idx[1]];
  if (s->name && *s->name) {
    put(buf, cap, &len, "/%s", s->name);
  } else {
    char text[160];
    shape_text(s, text, sizeof text);
    put(buf, cap, &len, "/%s", text);
  }
  put(buf, cap, &len, "/%s", dtype_label(it));
  for (size_t f = 0; f < NUM_FIELDS; f++)
    if (f != F_DTYPE && f != skip && b->sweeps[f].count > 1)
      put(buf, cap, &len, "/%s", b->sweeps[f].values[idx[2 + f]].label);
}

static cJSON *entry_config(const mb__pb_t *pb, const char *group,
                           size_t index) {
  cJSON *c = cJSON_CreateObject();
  if (c && (!cJSON_AddStringToObject(c, "file", pb->file) ||
            !cJSON_AddStringToObject(c, "schema", "native") ||
            !cJSON_AddStringToObject(c, "benchmark", group) ||
            !cJSON_AddNumberToObject(c, "benchmark_index", (double)index))) {
    cJSON_Delete(c);
    return NULL;
  }
  return c;
}

static mb_status_t add_entry(mb__pb_t *pb, const bench_t *b, size_t index,
                             const size_t *idx) {
  mb__plan_item_t it = b->base;
  const shape_t *s = &b->shapes[idx[1]];
  for (size_t f = 0; f < NUM_FIELDS; f++)
    if (b->sweeps[f].count)
      k_fields[f].set(&it, &b->sweeps[f].values[idx[2 + f]]);
  char name[NAME_CAP], key[NAME_CAP];
  if (b->model) {
    /* For a model, dtype is the high-precision dtype. */
    mb_dtype_t hp =
        it.params.dtype != MB_DTYPE_NONE ? it.params.dtype : MB_DTYPE_BF16;
    mb_status_t st =
        mb__model_item(pb, b->model, it.recipe, b->mode, hp, s->dims, &it);
    if (st != MB_OK) return st;
    entry_name(b, idx, &it, field_index("recipe"), key, sizeof key);
    it.baseline_key = key;
  } else {
    it.op = b->ops[idx[0]];
    it.params.ndim = s->ndim;
    memcpy(it.params.shape, s->dims, s->ndim * sizeof *s->dims);
  }
  entry_name(b, idx, &it, NUM_FIELDS, name, sizeof name);
  it.name = name;
  it.group = b->name ? b->name : b->ops ? b->ops[idx[0]] : b->model;
  it.shape_name = s->name;
  if (!(it.config = entry_config(pb, it.group, index))) return no_memory();
  return mb__plan_add(pb, &it);
}

static mb_status_t expand(mb__pb_t *pb, const bench_t *b, size_t index) {
  size_t dims[NUM_AXES], idx[NUM_AXES] = {0};
  dims[0] = b->ops ? b->num_ops : 1;
  dims[1] = b->num_shapes;
  for (size_t f = 0; f < NUM_FIELDS; f++)
    dims[2 + f] = b->sweeps[f].count ? b->sweeps[f].count : 1;
  for (;;) {
    mb_status_t st = add_entry(pb, b, index, idx);
    if (st != MB_OK) return st;
    size_t d = NUM_AXES; /* odometer: the last axis turns fastest */
    while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
    if (d == 0) return MB_OK;
  }
}

/* ---- the document ------------------------------------------------------- */

static void reader_init(reader_t *r, mb__pb_t *pb) {
  size_t k = 0;
  r->pb = pb;
  for (size_t i = 0; k_other_keys[i]; i++) r->bench_keys[k++] = k_other_keys[i];
  for (size_t f = 0; f < NUM_FIELDS; f++) {
    r->bench_keys[k++] = k_fields[f].key;
    if (k_fields[f].plural) r->bench_keys[k++] = k_fields[f].plural;
  }
  r->bench_keys[k] = NULL;
  r->default_keys = r->bench_keys + 1; /* all but "name" */
}

static mb_status_t read_top(reader_t *r, const mb_cfg_node_t **list) {
  static const char *const k_top[] = {"benchmarks", "defaults", "description",
                                      NULL};
  const mb__pb_t *pb = r->pb;
  const mb_cfg_node_t *root = pb->root;
  mb_status_t st = mb__pb_check_keys(pb, root, NULL, k_top);
  if (st != MB_OK) return st;
  const mb_cfg_node_t *d = mb__cfg_get(root, "description");
  const char *ignored;
  if (d && (st = mb__pb_string(pb, d, "description", &ignored)) != MB_OK)
    return st;
  if ((r->defaults = mb__cfg_get(root, "defaults")) &&
      (st = mb__pb_check_keys(pb, r->defaults, "defaults", r->default_keys)) !=
          MB_OK)
    return st;
  if (!(*list = mb__cfg_get(root, "benchmarks")))
    return mb__pb_error(pb, root, NULL,
                        "missing `benchmarks`: a list of {op or model, "
                        "shapes or presets, ...}");
  return expect_kind(pb, *list, "benchmarks", MB_CFG_LIST,
                     "a list of benchmarks");
}

mb_status_t mb__schema_native(mb__pb_t *pb) {
  _Static_assert(
      sizeof k_other_keys / sizeof *k_other_keys + 2 * NUM_FIELDS <= 64,
      "reader_t.bench_keys is too small");
  reader_t r = {0};
  reader_init(&r, pb);
  const mb_cfg_node_t *list;
  mb_status_t st = read_top(&r, &list);
  if (st != MB_OK) return st;
  bench_t *benches = calloc(list->count ? list->count : 1, sizeof *benches);
  if (!benches) return no_memory();
  double total = 0, most = 0;
  size_t biggest = 0;
  for (size_t i = 0; st == MB_OK && i < list->count; i++) {
    st = read_bench(&r, list->items[i], i, &benches[i]);
    total += benches[i].count;
    if (benches[i].count > most) most = benches[biggest = i].count;
  }
  if (st == MB_OK && total > MAX_ENTRIES)
    st = mb__pb_error(pb, list, "benchmarks",
                      "this file would expand to %.0f benchmarks, more than "
                      "the limit of %d (benchmarks[%zu] alone gives %.0f); "
                      "narrow the sweeps or split the file",
                      total, MAX_ENTRIES, biggest, most);
  for (size_t i = 0; st == MB_OK && i < list->count; i++)
    st = expand(pb, &benches[i], i);
  for (size_t i = 0; i < list->count; i++) bench_free(&benches[i]);
  free(benches);
  return st;
}
