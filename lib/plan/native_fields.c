/* The native schema's swept fields: the keys a benchmark may give one value
 * or a list of, each list one axis of the expansion (dtype, backend, alpha,
 * ...). One table, mb__native_fields, says for each its key and plural,
 * how a value is parsed and labelled in entry names, and where it is set
 * in a plan item; adding a field is adding a row. Also how a benchmark's
 * swept fields are read, and a model's recipes completed. */
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

static mb_status_t parse_dtype(const mb__pb_t *pb, const field_t *f,
                               const mb_cfg_node_t *n, const char *path,
                               value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = mb__native_wrap(pb, n, path, mb_dtype_from_name(s, &v->u.dtype));
  if (st == MB_OK) label(f, v, mb_dtype_name(v->u.dtype));
  return st;
}

static mb_status_t parse_scaling(const mb__pb_t *pb, const field_t *f,
                                 const mb_cfg_node_t *n, const char *path,
                                 value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = mb__native_wrap(pb, n, path, mb_scaling_from_string(s, &v->u.scaling));
  if (st == MB_OK) label(f, v, s);
  return st;
}

static mb_status_t parse_activation(const mb__pb_t *pb, const field_t *f,
                                    const mb_cfg_node_t *n, const char *path,
                                    value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = mb__native_wrap(pb, n, path, mb_activation_from_name(s, &v->u.act));
  if (st == MB_OK) label(f, v, mb_activation_name(v->u.act));
  return st;
}

static mb_status_t parse_cache(const mb__pb_t *pb, const field_t *f,
                               const mb_cfg_node_t *n, const char *path,
                               value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st =
        mb__native_wrap(pb, n, path, mb_cache_policy_from_name(s, &v->u.cache));
  if (st == MB_OK) label(f, v, mb_cache_policy_name(v->u.cache));
  return st;
}

static mb_status_t parse_flush(const mb__pb_t *pb, const field_t *f,
                               const mb_cfg_node_t *n, const char *path,
                               value_t *v) {
  const char *s;
  mb_status_t st = mb__pb_string(pb, n, path, &s);
  if (st == MB_OK)
    st = mb__native_wrap(pb, n, path, mb_flush_from_name(s, &v->u.flush));
  if (st == MB_OK) label(f, v, mb_flush_name(v->u.flush));
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
SETTER(set_alpha, params.alpha, number)
SETTER(set_beta, params.beta, number)
SETTER(set_eps, params.eps, number)
SETTER(set_act_alpha, params.act_alpha, number)
#undef SETTER

/* How cold samples flush: a spec flag (the result records it). */
static void set_flush(mb__plan_item_t *it, const value_t *v) {
  if (v->u.flush == MB_FLUSH_READ)
    it->spec.flags |= MB_BENCH_FLUSH_READ;
  else
    it->spec.flags &= ~MB_BENCH_FLUSH_READ;
}

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
FLAG_SETTER(set_fast_accum, MB_PARAM_FAST_ACCUM)
FLAG_SETTER(set_no_affine, MB_PARAM_NO_WEIGHT)
#undef FLAG_SETTER

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
 * comes first: every entry name carries it. */
const field_t mb__native_fields[] = {
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
    {"flush", NULL, parse_flush, set_flush, FOR_ALL, 1},
    /* Ops take it too: `op: linear` with a recipe runs the composite
     * directly (an op without recipes says so when the plan is built). */
    {"recipe", "recipes", parse_recipe, set_recipe, FOR_ALL, 0},
    {"quantize_inputs", NULL, parse_bool, set_quantize_inputs, FOR_OPS, 1},
    {"transpose", NULL, parse_bool, set_transpose, FOR_OPS, 1},
    {"causal", NULL, parse_bool, set_causal, FOR_OPS, 1},
    {"tf32", NULL, parse_bool, set_tf32, FOR_OPS, 1},
    {"fast_accum", NULL, parse_bool, set_fast_accum, FOR_OPS, 1},
    {"no_affine", NULL, parse_bool, set_no_affine, FOR_OPS, 1},
    {"alpha", NULL, parse_number, set_alpha, FOR_OPS, 1},
    {"beta", NULL, parse_number, set_beta, FOR_OPS, 1},
    {"eps", NULL, parse_number, set_eps, FOR_OPS, 1},
    {"act_alpha", NULL, parse_number, set_act_alpha, FOR_OPS, 1},
    {"static_scale", NULL, parse_number, set_static_scale, FOR_OPS, 1},
};
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
    if ((st = f->parse(r->pb, f, item, path, &sw->values[i])) != MB_OK)
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
  sweep_t *sw = &b->sweeps[mb__native_field_index("recipe")];
  for (size_t i = 0; i < sw->count; i++)
    if (!strcmp(sw->values[i].u.str, "baseline")) return MB_OK;
  value_t *grown = realloc(sw->values, (sw->count + 1) * sizeof *grown);
  if (!grown) return mb__native_no_memory();
  memmove(grown + 1, grown, sw->count * sizeof *grown);
  grown[0].u.str = "baseline";
  snprintf(grown[0].label, sizeof grown[0].label, "baseline");
  sw->values = grown;
  sw->count++;
  return MB_OK;
}
