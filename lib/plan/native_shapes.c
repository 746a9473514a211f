/* The native schema's shapes and presets: where a benchmark's shapes come
 * from. `shapes` lists them ([M, K, N], "MxKxN" or {name, shape}); `presets`
 * names generated lists (pow2, llama, ...); `sizes` gives byte counts for
 * rank-1 ops (native_sizes.c). Each shape remembers its origin
 * so that a shape of the wrong rank for an op is reported where it was
 * written. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan/native.h"

/* ---- shapes and presets ------------------------------------------------- */

static const char *const k_shape_keys[] = {"shapes", "presets", "preset",
                                           "sizes", NULL};

mb_status_t mb__native_add_origin(bench_t *b, const mb_cfg_node_t *at,
                                  const char *path, origin_kind_t kind) {
  origin_t *grown =
      realloc(b->origins, (b->num_origins + 1) * sizeof *b->origins);
  if (!grown) return mb__native_no_memory();
  b->origins = grown;
  origin_t *o = &b->origins[b->num_origins++];
  o->at = at;
  o->kind = kind;
  snprintf(o->path, sizeof o->path, "%s", path);
  return MB_OK;
}

mb_status_t mb__native_push_shape(bench_t *b, const shape_t *s) {
  if (b->num_shapes == b->cap_shapes) {
    size_t cap = b->cap_shapes ? 2 * b->cap_shapes : 16;
    shape_t *grown = realloc(b->shapes, cap * sizeof *grown);
    if (!grown) return mb__native_no_memory();
    b->shapes = grown;
    b->cap_shapes = cap;
  }
  b->shapes[b->num_shapes++] = *s;
  return MB_OK;
}

/* "1024x1024x1024": positive integers joined by x (or a list). */
static mb_status_t parse_shape_text(const mb__pb_t *pb, const mb_cfg_node_t *n,
                                    const char *path, shape_t *s) {
  if (mb_shape_parse(n->text, &s->ndim, s->dims) == MB_OK) return MB_OK;
  return mb__pb_error(pb, n, path, "%s (or a list: [1024, 1024, 1024])",
                      mb_error_last());
}

static mb_status_t parse_dims(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, shape_t *s) {
  if (n->kind == MB_CFG_STRING) return parse_shape_text(pb, n, path, s);
  if (n->kind != MB_CFG_LIST)
    return mb__native_expect_kind(
        pb, n, path, MB_CFG_LIST,
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
    if (st == MB_OK) st = mb__native_add_origin(b, n, f->path, FROM_SHAPES);
    s.origin = b->num_origins - 1;
    return st == MB_OK ? mb__native_push_shape(b, &s) : st;
  }
  mb_status_t st =
      mb__native_expect_kind(pb, n, f->path, MB_CFG_LIST, "a list of shapes");
  if (st == MB_OK && n->count == 0)
    st = mb__pb_error(pb, n, f->path, "empty list; give at least one shape");
  for (size_t i = 0; st == MB_OK && i < n->count; i++) {
    char path[PATH_CAP];
    mb__path_index(path, sizeof path, f->path, i);
    shape_t s = {0};
    st = read_shape(pb, n->items[i], path, &s);
    if (st == MB_OK)
      st = mb__native_add_origin(b, n->items[i], path, FROM_SHAPES);
    s.origin = b->num_origins - 1;
    if (st == MB_OK) st = mb__native_push_shape(b, &s);
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
  if (!(*out = calloc(num, sizeof **out))) return mb__native_no_memory();
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
  if (st == MB_OK)
    st = mb__native_wrap(pb, n, path, mb_preset_shapes(name, &pp, &list));
  free(m);
  if (st != MB_OK) return st;
  mb_shape_list_t **grown =
      realloc(b->lists, (b->num_lists + 1) * sizeof *b->lists);
  if (!grown) {
    mb_shape_list_destroy(list);
    return mb__native_no_memory();
  }
  b->lists = grown;
  b->lists[b->num_lists++] = list;
  if ((st = mb__native_add_origin(b, n, path, FROM_PRESET)) != MB_OK) return st;
  for (size_t i = 0; st == MB_OK && i < mb_shape_list_count(list); i++) {
    shape_t s = {0};
    s.ndim = 3;
    s.origin = b->num_origins - 1;
    mb_shape_list_get(list, i, &s.name, s.dims);
    st = mb__native_push_shape(b, &s);
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

void mb__native_shape_text(const shape_t *s, char *buf, size_t cap) {
  if (s->bytes) {
    mb__native_bytes_text(s->bytes, buf, cap);
    return;
  }
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
      if (at->kind == FROM_SIZES)
        return mb__pb_error(pb, at->at, at->path,
                            "sizes give rank-1 shapes [bytes / element "
                            "size], but %s takes %u dimensions (%s); list "
                            "its shapes under `shapes`",
                            who, rank, syntax);
      if (at->kind == FROM_PRESET)
        return mb__pb_error(pb, at->at, at->path,
                            "presets give [M, K, N] shapes, but %s takes %u "
                            "dimensions (%s); list its shapes under `shapes`",
                            who, rank, syntax);
      char text[160];
      mb__native_shape_text(s, text, sizeof text);
      return mb__pb_error(pb, at->at, at->path,
                          "%s takes %u dimensions (%s), this shape has %u "
                          "(%s)",
                          who, rank, syntax, s->ndim, text);
    }
  }
  return MB_OK;
}

mb_status_t mb__native_read_where(const reader_t *r, bench_t *b) {
  const char *path;
  const mb_cfg_node_t *map = mb__native_source(r, b, k_shape_keys, &path);
  found_t shapes, presets, sizes;
  mb_status_t st =
      mb__native_find_in(r->pb, map, path, "shapes", NULL, &shapes);
  if (st == MB_OK)
    st = mb__native_find_in(r->pb, map, path, "presets", "preset", &presets);
  if (st == MB_OK)
    st = mb__native_find_in(r->pb, map, path, "sizes", NULL, &sizes);
  if (st != MB_OK) return st;
  if (!shapes.node && !presets.node && !sizes.node)
    return mb__pb_error(r->pb, b->node, b->path,
                        "no shapes: give `shapes` ([[1024, 1024, 1024]] or "
                        "[\"1024x1024x1024\"]), `presets` (e.g. pow2, "
                        "llama; see `mbench list presets`) and/or `sizes` "
                        "(bytes, for rank-1 ops: [8, 1KiB] or {start: 8, "
                        "end: 1GiB, multiplier: 2})");
  if (shapes.node && (st = read_shapes(r->pb, b, &shapes)) != MB_OK) return st;
  if (presets.node && (st = read_presets(r->pb, b, &presets)) != MB_OK)
    return st;
  if (sizes.node && (st = mb__native_read_sizes(r->pb, b, &sizes)) != MB_OK)
    return st;
  return check_ranks(r->pb, b);
}
