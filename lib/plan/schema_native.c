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
 * expanded as the cartesian product op x shape x swept fields (in
 * mb__native_fields order), the last varying fastest. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/models.h"
#include "plan/native.h"

/* The swept fields (native_fields.c) and the shapes and presets
 * (native_shapes.c) are read in files of their own; native.h holds what
 * the pieces share. */

/* Keys of a benchmark that are not swept fields; "name" must stay first
 * (defaults take every key but it). */
static const char *const k_other_keys[] = {
    "name",  "op",     "ops",  "model",  "mode", "shapes", "presets", "preset",
    "sizes", "device", "seed", "strict", "csv",  "timing", NULL};

/* ---- what a benchmark says, read whole --------------------------------- */

static void bench_free(bench_t *b) {
  for (size_t f = 0; f < NUM_FIELDS; f++) free(b->sweeps[f].values);
  for (size_t i = 0; i < b->num_lists; i++) mb_shape_list_destroy(b->lists[i]);
  free(b->lists);
  free(b->ops);
  free(b->shapes);
  free(b->origins);
}

mb_status_t mb__native_no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
}

mb_status_t mb__native_expect_kind(const mb__pb_t *pb, const mb_cfg_node_t *n,
                                   const char *path, mb_cfg_kind_t kind,
                                   const char *what) {
  if (n->kind == kind) return MB_OK;
  if (n->text && n->kind != MB_CFG_NULL)
    return mb__pb_error(pb, n, path, "expected %s, got %s \"%s\"", what,
                        mb__cfg_kind_name(n->kind), n->text);
  return mb__pb_error(pb, n, path, "expected %s, got a %s", what,
                      mb__cfg_kind_name(n->kind));
}

/* `key` or its `plural` in one map; writing both is an error. */
mb_status_t mb__native_find_in(const mb__pb_t *pb, const mb_cfg_node_t *map,
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
const mb_cfg_node_t *mb__native_source(const reader_t *r, const bench_t *b,
                                       const char *const *group,
                                       const char **path) {
  if (has_any(b->node, group) || !r->defaults) {
    *path = b->path;
    return b->node;
  }
  *path = "defaults";
  return r->defaults;
}

mb_status_t mb__native_find(const reader_t *r, const bench_t *b,
                            const char *key, const char *plural, found_t *out) {
  const char *group[] = {key, plural, NULL}, *path;
  const mb_cfg_node_t *map = mb__native_source(r, b, group, &path);
  return mb__native_find_in(r->pb, map, path, key, plural, out);
}

/* ---- op or model -------------------------------------------------------- */

static const char *const k_what_keys[] = {"op", "ops", "model", NULL};

static mb_status_t read_ops(const reader_t *r, bench_t *b, const found_t *f) {
  const mb__pb_t *pb = r->pb;
  const mb_cfg_node_t *n = f->node;
  size_t count = n->kind == MB_CFG_LIST ? n->count : 1;
  if (n->kind == MB_CFG_LIST && count == 0)
    return mb__pb_error(pb, n, f->path, "empty list; name at least one op");
  if (!(b->ops = calloc(count, sizeof *b->ops))) return mb__native_no_memory();
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
  const mb_cfg_node_t *map = mb__native_source(r, b, k_what_keys, &path);
  found_t op, model;
  mb_status_t st = mb__native_find_in(r->pb, map, path, "op", "ops", &op);
  if (st == MB_OK)
    st = mb__native_find_in(r->pb, map, path, "model", NULL, &model);
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
  mb_status_t st = mb__native_find(r, b, "mode", NULL, &f);
  b->mode = "inference";
  if (st != MB_OK || !f.node) return st;
  if (!b->model)
    return mb__pb_error(r->pb, f.node, f.path,
                        "`mode` applies to `model` benchmarks, not to ops");
  st = mb__pb_string(r->pb, f.node, f.path, &b->mode);
  if (st == MB_OK) st = mb__mode_check(r->pb, f.node, f.path, b->mode);
  return st;
}

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
TSET(t_repetitions, repetitions, uint32_t)
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
    {"repetitions", 1, 1, 0, t_repetitions},
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
  if (mb_criterion_from_name(name, &spec->criterion) != MB_OK)
    return mb__pb_error(pb, c, here,
                        "unknown criterion \"%s\"; valid: stdrel, fixed, "
                        "entropy",
                        name);
  if (spec->criterion == MB_CRITERION_FIXED && !samples)
    return mb__pb_error(pb, c, here,
                        "criterion fixed needs `samples` (how many)");
  if (spec->criterion != MB_CRITERION_FIXED && samples) {
    mb__path_key(here, sizeof here, path, "samples");
    return mb__pb_error(
        pb, samples, here,
        "`samples` is for criterion fixed; %s stops on its "
        "own (use min_samples, min_time%s)",
        name, spec->criterion == MB_CRITERION_STDREL ? ", max_noise" : "");
  }
  if (spec->criterion != MB_CRITERION_FIXED) spec->samples = 0;
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
  mb_status_t st = mb__native_find(r, b, "device", NULL, &f);
  if (st == MB_OK && f.node &&
      (st = mb__pb_int(pb, f.node, f.path, 0, 4095, &v)) == MB_OK)
    it->spec.device = (uint32_t)v;
  if (st == MB_OK) st = mb__native_find(r, b, "seed", NULL, &f);
  /* JSON numbers are doubles: exact up to 2^53. */
  if (st == MB_OK && f.node &&
      (st = mb__pb_int(pb, f.node, f.path, 0, (int64_t)1 << 53, &v)) == MB_OK) {
    it->spec.seed = (uint64_t)v;
    it->seed_given = 1;
  }
  if (st == MB_OK) st = mb__native_find(r, b, "strict", NULL, &f);
  if (st == MB_OK && f.node &&
      (st = mb__pb_bool(pb, f.node, f.path, &flag)) == MB_OK && flag)
    it->spec.flags |= MB_BENCH_STRICT;
  if (st == MB_OK) st = mb__native_find(r, b, "csv", NULL, &f);
  if (st == MB_OK && f.node)
    st = mb__pb_string(pb, f.node, f.path, &it->csv_path);
  if (st == MB_OK) st = mb__native_find(r, b, "timing", NULL, &f);
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
  if (st == MB_OK) st = mb__native_read_where(r, b);
  for (size_t f = 0; st == MB_OK && f < NUM_FIELDS; f++)
    st = mb__native_read_sweep(r, b, f);
  if (st == MB_OK && b->model) st = mb__native_model_recipes(b);
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
 * alias's) default; MB_DTYPE_NONE when it does not resolve (mb__plan_add
 * says why). A `sizes` entry has no shape yet: its dtype is resolved on
 * [1], which every rank-1 op takes. */
static mb_dtype_t entry_dtype(const mb__plan_item_t *it) {
  if (it->params.dtype != MB_DTYPE_NONE) return it->params.dtype;
  const mb_op_t *op = mb_op_find(it->op);
  mb_op_params_t p = it->params;
  if (!p.ndim) p.ndim = 1, p.shape[0] = 1;
  mb_op_apply_alias(it->op, &p);
  if (op && mb_op_resolve(op, &p) == MB_OK) return p.dtype;
  return MB_DTYPE_NONE;
}

static const char *dtype_label(const mb__plan_item_t *it) {
  mb_dtype_t d = entry_dtype(it);
  return d == MB_DTYPE_NONE ? "default" : mb_dtype_name(d);
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
    mb__native_shape_text(s, text, sizeof text);
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
      mb__native_fields[f].set(&it, &b->sweeps[f].values[idx[2 + f]]);
  char name[NAME_CAP], key[NAME_CAP], why[512];
  if (b->model) {
    /* For a model, dtype is the high-precision dtype. */
    mb_dtype_t hp =
        it.params.dtype != MB_DTYPE_NONE ? it.params.dtype : MB_DTYPE_BF16;
    mb_status_t st = mb__model_item(pb, b->model, it.recipe, b->mode, hp,
                                    s->dims, &it, why, sizeof why);
    if (st != MB_OK) return st;
    entry_name(b, idx, &it, mb__native_field_index("recipe"), key, sizeof key);
    it.baseline_key = key;
  } else if (s->bytes) { /* sizes: [bytes / element size] */
    it.op = b->ops[idx[0]];
    /* The shape holds for this dtype only: the entry keeps it, the op's
     * default included. */
    if (it.params.dtype == MB_DTYPE_NONE) it.params.dtype = entry_dtype(&it);
    mb_status_t st =
        mb__native_size_shape(pb, b, s, it.params.dtype, &it.params);
    if (st != MB_OK) return st;
  } else {
    it.op = b->ops[idx[0]];
    it.params.ndim = s->ndim;
    memcpy(it.params.shape, s->dims, s->ndim * sizeof *s->dims);
  }
  entry_name(b, idx, &it, NUM_FIELDS, name, sizeof name);
  it.name = name;
  it.group = b->name ? b->name : b->ops ? b->ops[idx[0]] : b->model;
  it.shape_name = s->name;
  if (!(it.config = entry_config(pb, it.group, index)))
    return mb__native_no_memory();
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
    r->bench_keys[k++] = mb__native_fields[f].key;
    if (mb__native_fields[f].plural)
      r->bench_keys[k++] = mb__native_fields[f].plural;
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
  return mb__native_expect_kind(pb, *list, "benchmarks", MB_CFG_LIST,
                                "a list of benchmarks");
}

mb_status_t mb__schema_native(mb__pb_t *pb) {
  _Static_assert(
      sizeof k_other_keys / sizeof *k_other_keys + 2 * NUM_FIELDS <= 80,
      "reader_t.bench_keys is too small");
  reader_t r = {0};
  reader_init(&r, pb);
  const mb_cfg_node_t *list;
  mb_status_t st = read_top(&r, &list);
  if (st != MB_OK) return st;
  bench_t *benches = calloc(list->count ? list->count : 1, sizeof *benches);
  if (!benches) return mb__native_no_memory();
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
