/* The native schema's swept fields: the keys a benchmark may give one value
 * or a list of, each list one axis of the expansion (dtype, backend, alpha,
 * ...). One table, mb__native_fields, says for each its key and plural,
 * how a value is parsed and labelled in entry names, and where it is set
 * in a plan item; adding a field is adding a row (an op flag's comes from
 * its row of MB_PARAM_FLAG_LIST). Also how a benchmark's swept fields are
 * read, and a model's recipes completed. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/models.h"
#include "plan/native.h"

mb_status_t mb__native_wrap(const mb__pb_t *pb, const mb_cfg_node_t *n,
                            const char *path, mb_status_t st) {
  return st == MB_OK ? MB_OK : mb__pb_error(pb, n, path, "%s", mb_error_last());
}

static void label(const field_t *f, value_t *v, const char *text) {
  if (f->keyed)
    snprintf(v->label, sizeof v->label, "%s=%s", f->key, text);
  else
    snprintf(v->label, sizeof v->label, "%s", text);
}

/* ---- reading a value ---------------------------------------------------- */

/* Reads one scalar node into *v (label included); errors name `path`. */
typedef mb_status_t (*parse_fn)(const mb__pb_t *pb, const field_t *f,
                                const mb_cfg_node_t *n, const char *path,
                                value_t *v);

/* The kinds read from a string: from_<kind> parses it into the value, and
 * name_<kind> gives the label's text (the canonical name of what it
 * parsed). */
#define NAMED(kind, member, parse, name)                                  \
  static mb_status_t from_##kind(const char *s, value_t *v) {             \
    return parse(s, &v->u.member);                                        \
  }                                                                       \
  static const char *name_##kind(const value_t *v, const char *written) { \
    (void)written;                                                        \
    return name(v->u.member);                                             \
  }
NAMED(dtype, dtype, mb_dtype_from_name, mb_dtype_name)
NAMED(act, act, mb_activation_from_name, mb_activation_name)
NAMED(cache, cache, mb_cache_policy_from_name, mb_cache_policy_name)
NAMED(flush, flush, mb_flush_from_name, mb_flush_name)
NAMED(reduce, reduce, mb_reduce_op_from_name, mb_reduce_op_name)
#undef NAMED
static mb_status_t from_scaling(const char *s, value_t *v) {
  return mb_scaling_from_string(s, &v->u.scaling);
}
/* A backend or implementation name: checked when it runs (what exists
 * depends on the machine). */
static mb_status_t from_word(const char *s, value_t *v) {
  v->u.str = s;
  return *s ? MB_OK
            : mb__fail(MB_ERR_PARSE, "%s must not be empty", v->field->key);
}
static mb_status_t from_recipe(const char *s, value_t *v) {
  v->u.str = s;
  return mb_recipe_from_name(s, NULL); /* its error lists the recipes */
}
/* A scaling has no one canonical spelling ("block:1x128", "1x128"), and a
 * name is its own: the label is what the file wrote. */
static const char *as_written(const value_t *v, const char *written) {
  (void)v;
  return written;
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

static mb_status_t parse_count(const mb__pb_t *pb, const field_t *f,
                               const mb_cfg_node_t *n, const char *path,
                               value_t *v) {
  mb_status_t st = mb__pb_int(pb, n, path, 1, MAX_DIM, &v->u.count);
  char text[32];
  snprintf(text, sizeof text, "%lld", (long long)v->u.count);
  if (st == MB_OK) label(f, v, text);
  return st;
}

static mb_status_t parse_rank(const mb__pb_t *pb, const field_t *f,
                              const mb_cfg_node_t *n, const char *path,
                              value_t *v) {
  int64_t r = 0;
  mb_status_t st = mb__pb_int(pb, n, path, 0, INT32_MAX, &r);
  char text[32];
  snprintf(text, sizeof text, "%lld", (long long)r);
  v->u.rank = (int32_t)r;
  if (st == MB_OK) label(f, v, text);
  return st;
}

/* Reads a string through its kind's parser (k_kinds). */
static mb_status_t parse_string(const mb__pb_t *pb, const field_t *f,
                                const mb_cfg_node_t *n, const char *path,
                                value_t *v);

/* How each kind of value is read, and its size in the union (what
 * set_member copies). */
static const struct {
  parse_fn parse;
  /* parse_string's: the parser, and the label's text. */
  mb_status_t (*from)(const char *s, value_t *v);
  const char *(*name)(const value_t *v, const char *written);
  size_t size;
} k_kinds[] = {
    [K_DTYPE] = {parse_string, from_dtype, name_dtype, sizeof(mb_dtype_t)},
    [K_SCALING] = {parse_string, from_scaling, as_written,
                   sizeof(mb_scaling_t)},
    [K_ACT] = {parse_string, from_act, name_act, sizeof(mb_activation_t)},
    [K_CACHE] = {parse_string, from_cache, name_cache,
                 sizeof(mb_cache_policy_t)},
    [K_FLUSH] = {parse_string, from_flush, name_flush, sizeof(mb_flush_t)},
    [K_WORD] = {parse_string, from_word, as_written, sizeof(const char *)},
    [K_RECIPE] = {parse_string, from_recipe, as_written, sizeof(const char *)},
    [K_BOOL] = {parse_bool, NULL, NULL, sizeof(int)},
    [K_NUMBER] = {parse_number, NULL, NULL, sizeof(double)},
    [K_COUNT] = {parse_count, NULL, NULL, sizeof(int64_t)},
    [K_REDUCE] = {parse_string, from_reduce, name_reduce, sizeof(uint32_t)},
    [K_RANK] = {parse_rank, NULL, NULL, sizeof(int32_t)},
};

static mb_status_t parse_string(const mb__pb_t *pb, const field_t *f,
                                const mb_cfg_node_t *n, const char *path,
                                value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = mb__native_wrap(pb, n, path, k_kinds[f->kind].from(s, v));
  if (st == MB_OK) label(f, v, k_kinds[f->kind].name(v, s));
  return st;
}

/* ---- setting a value in a plan item ------------------------------------- */

/* The value into the member its field names, which has the value's type. */
static void set_member(mb__plan_item_t *it, const value_t *v) {
  memcpy((char *)it + v->field->at, &v->u, k_kinds[v->field->kind].size);
}

/* A boolean into its field's MB_PARAM_* flag. */
static void set_flag(mb__plan_item_t *it, const value_t *v) {
  if (v->u.boolean)
    it->params.flags |= v->field->flag;
  else
    it->params.flags &= ~v->field->flag;
}

/* How cold samples flush: a spec flag (the result records it). */
static void set_flush(mb__plan_item_t *it, const value_t *v) {
  if (v->u.flush == MB_FLUSH_READ)
    it->spec.flags |= MB_BENCH_FLUSH_READ;
  else
    it->spec.flags &= ~MB_BENCH_FLUSH_READ;
}

/* The recipe's name (recorded in the result) and its value in the params
 * (what a composite op runs); parse_recipe checked the name. */
static void set_recipe(mb__plan_item_t *it, const value_t *v) {
  mb_recipe_t r = MB_RECIPE_BASELINE;
  mb_recipe_from_name(v->u.str, &r);
  it->recipe = v->u.str;
  it->params.recipe = (uint32_t)r;
}

/* A static scale is the quantize op's MB_PARAM_STATIC with its value. */
static void set_static_scale(mb__plan_item_t *it, const value_t *v) {
  it->params.flags |= MB_PARAM_STATIC;
  it->params.scale = v->u.number;
}

/* The swept fields, in expansion order (the last varies fastest). dtype
 * comes first: every entry name carries it. AT: set_member's member. */
#define AT(member) offsetof(mb__plan_item_t, member), 0
#define FLAG_FIELD(NAME, group, key, result, inverted, name, label, set_by, \
                   ...)                                                     \
  CONFIG_FLAG(set_by,                                                       \
              {key, NULL, K_BOOL, set_flag, FOR_OPS, 1, 0, MB_PARAM_##NAME}, )
const field_t mb__native_fields[] = {
    {"dtype", "dtypes", K_DTYPE, set_member, FOR_ALL, 0, AT(params.dtype)},
    {"dtype_b", NULL, K_DTYPE, set_member, FOR_OPS, 1, AT(params.dtype_b)},
    {"dtype_out", NULL, K_DTYPE, set_member, FOR_OPS, 1, AT(params.dtype_out)},
    {"dtype_q", NULL, K_DTYPE, set_member, FOR_OPS, 1, AT(params.dtype_q)},
    {"scale_a", NULL, K_SCALING, set_member, FOR_OPS, 1, AT(params.scale_a)},
    {"scale_b", NULL, K_SCALING, set_member, FOR_OPS, 1, AT(params.scale_b)},
    {"scale_dtype", NULL, K_DTYPE, set_member, FOR_OPS, 1,
     AT(params.dtype_scale)},
    {"activation", NULL, K_ACT, set_member, FOR_OPS, 0, AT(params.activation)},
    {"backend", "backends", K_WORD, set_member, FOR_ALL, 0, AT(spec.backend)},
    {"impl", "impls", K_WORD, set_member, FOR_ALL, 0, AT(spec.impl)},
    {"cache", NULL, K_CACHE, set_member, FOR_ALL, 0, AT(spec.cache)},
    {"flush", NULL, K_FLUSH, set_flush, FOR_ALL, 1, 0, 0},
    /* Ops take it too: `op: linear` with a recipe runs the composite
     * directly (an op without recipes says so when the plan is built). */
    {"recipe", "recipes", K_RECIPE, set_recipe, FOR_ALL, 0, 0, 0},
    /* clang-format off: a row per flag config files take */
    MB_PARAM_FLAG_LIST(FLAG_FIELD)
    /* clang-format on */
    {"alpha", NULL, K_NUMBER, set_member, FOR_OPS, 1, AT(params.alpha)},
    {"beta", NULL, K_NUMBER, set_member, FOR_OPS, 1, AT(params.beta)},
    {"eps", NULL, K_NUMBER, set_member, FOR_OPS, 1, AT(params.eps)},
    {"act_alpha", NULL, K_NUMBER, set_member, FOR_OPS, 1, AT(params.act_alpha)},
    {"static_scale", NULL, K_NUMBER, set_static_scale, FOR_OPS, 1, 0, 0},
    {"kv_heads", NULL, K_COUNT, set_member, FOR_OPS, 1, AT(params.kv_heads)},
    /* The collectives' (docs/distributed.md) */
    {"reduce_op", "reduce_ops", K_REDUCE, set_member, FOR_OPS, 0,
     AT(params.reduce_op)},
    {"root", NULL, K_RANK, set_member, FOR_OPS, 1, AT(params.root)},
    /* how many of the job's ranks a collective runs over (0: all) */
    {"ranks", NULL, K_RANK, set_member, FOR_OPS, 1, AT(params.ranks)},
};
#undef AT
#undef FLAG_FIELD
_Static_assert(sizeof mb__native_fields / sizeof mb__native_fields[0] ==
                   NUM_FIELDS,
               "NUM_FIELDS in native.h does not match mb__native_fields");

/* ---- swept fields, read ------------------------------------------------- */

mb_status_t mb__native_read_sweep(const reader_t *r, bench_t *b, size_t fi) {
  const field_t *f = &mb__native_fields[fi];
  sweep_t *sw = &b->sweeps[fi];
  found_t at;
  mb_status_t st = mb__native_find(r, b, f->key, f->plural, &at);
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
  if (!(sw->values = calloc(count, sizeof *sw->values)))
    return mb__native_no_memory();
  for (size_t i = 0; i < count; i++) {
    char path[PATH_CAP];
    const mb_cfg_node_t *item = n->kind == MB_CFG_LIST ? n->items[i] : n;
    if (n->kind == MB_CFG_LIST)
      mb__path_index(path, sizeof path, at.path, i);
    else
      snprintf(path, sizeof path, "%s", at.path);
    sw->values[i].field = f;
    if ((st = k_kinds[f->kind].parse(r->pb, f, item, path, &sw->values[i])) !=
        MB_OK)
      return st;
  }
  sw->count = count;
  return MB_OK;
}

size_t mb__native_field_index(const char *key) {
  size_t f = 0;
  while (f < NUM_FIELDS && strcmp(mb__native_fields[f].key, key)) f++;
  return f;
}

/* A model's recipes: [baseline] unless told; any other recipe brings the
 * baseline along, first, so every entry has its speedup (as torchao). */
mb_status_t mb__native_model_recipes(bench_t *b) {
  const size_t fi = mb__native_field_index("recipe");
  sweep_t *sw = &b->sweeps[fi];
  for (size_t i = 0; i < sw->count; i++)
    if (!strcmp(sw->values[i].u.str, "baseline")) return MB_OK;
  value_t *grown = realloc(sw->values, (sw->count + 1) * sizeof *grown);
  if (!grown) return mb__native_no_memory();
  memmove(grown + 1, grown, sw->count * sizeof *grown);
  grown[0].u.str = "baseline";
  grown[0].field = &mb__native_fields[fi];
  snprintf(grown[0].label, sizeof grown[0].label, "baseline");
  sw->values = grown;
  sw->count++;
  return MB_OK;
}
