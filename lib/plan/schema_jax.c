/* The JAX accelerator-microbenchmarks schema (AI-Hypercomputer's
 * Ironwood/configs/ *.yaml): `benchmarks: [{benchmark_name,
 * benchmark_params, benchmark_sweep_params, num_runs, csv_path, ...}]`.
 * Sweeps expand exactly as that suite's run_benchmark.py does; each
 * benchmark name maps to one of our ops or aliases through one table.
 * docs/config.md, "JAX-suite schema". */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/foreign.h"
#include "plan/jax_benches.h"

#define PATH_CAP 512
#define NAME_CAP 1024
/* Guards against a sweep that would never fit in memory. */
#define MAX_RANGE_VALUES 100000u
#define MAX_COMBINATIONS 1000000u

static const char *const k_bench_keys[] = {
    "benchmark_name",   "benchmark_params", "benchmark_sweep_params",
    "num_runs",         "csv_path",         "trace_dir",
    "xlml_metrics_dir", "xla_dump_dir",     NULL};
/* XLA/TPU outputs (profiles, metrics for XLML, HLO dumps). */
static const char *const k_xla_only[] = {"trace_dir", "xlml_metrics_dir",
                                         "xla_dump_dir"};
static const char *const k_range_keys[] = {"start", "end", "multiplier",
                                           "increase_by", NULL};

static mb_status_t no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
}

/* ---- sweeps ---------------------------------------------------------------
 */

static mb_cfg_node_t *clone(const mb_cfg_node_t *n) {
  mb_cfg_node_t *c = mb__cfg_new(n->kind, n->line, n->text);
  if (!c) return NULL;
  c->number = n->number;
  c->boolean = n->boolean;
  for (size_t i = 0; i < n->count; i++) {
    mb_cfg_node_t *k = clone(n->items[i]);
    if (!k || mb__cfg_append(c, n->kind == MB_CFG_MAP ? n->keys[i] : NULL, k) !=
                  MB_OK) {
      mb__cfg_free(c);
      return NULL;
    }
  }
  return c;
}

static mb_cfg_node_t *number_node(double v, int line) {
  char text[64];
  if (v == floor(v) && fabs(v) < 9007199254740992.0)
    snprintf(text, sizeof text, "%.0f", v);
  else
    snprintf(text, sizeof text, "%.17g", v);
  mb_cfg_node_t *n = mb__cfg_new(MB_CFG_NUMBER, line, text);
  if (n) n->number = v;
  return n;
}

/* One key of a sweep map: the parameter it sets (suffix `_range` or
 * `_list` dropped) and its values, in order. */
typedef struct column {
  char key[128];
  const char *written;
  mb_cfg_node_t *values; /* a list node, owned */
} column_t;

static mb_status_t range_number(mb__pb_t *pb, const mb_cfg_node_t *range,
                                const char *path, const char *key, int need,
                                double *out, int *given) {
  const mb_cfg_node_t *n = mb__cfg_get(range, key);
  char here[PATH_CAP];
  *given = n != NULL;
  if (!n && need)
    return mb__pb_error(pb, range, path,
                        "a range needs `%s` ({start, end, multiplier | "
                        "increase_by})",
                        key);
  if (!n) return MB_OK;
  mb__path_key(here, sizeof here, path, key);
  return mb__pb_number(pb, n, here, out);
}

/* {start, end, multiplier | increase_by}: start, then x multiplier or
 * + increase_by while <= end (run_benchmark.py's loop), refusing the ranges
 * on which that loop never ends. */
static mb_status_t expand_range(mb__pb_t *pb, const mb_cfg_node_t *range,
                                const char *path, mb_cfg_node_t *values) {
  double start = 0, end = 0, mult = 0, inc = 0;
  int has_mult, has_inc, given;
  mb_status_t st = mb__pb_check_keys(pb, range, path, k_range_keys);
  if (st == MB_OK)
    st = range_number(pb, range, path, "start", 1, &start, &given);
  if (st == MB_OK) st = range_number(pb, range, path, "end", 1, &end, &given);
  if (st == MB_OK)
    st = range_number(pb, range, path, "multiplier", 0, &mult, &has_mult);
  if (st == MB_OK)
    st = range_number(pb, range, path, "increase_by", 0, &inc, &has_inc);
  if (st != MB_OK) return st;
  if (!has_mult && !has_inc)
    return mb__pb_error(pb, range, path,
                        "a range needs `multiplier` or `increase_by`");
  if (has_mult && has_inc)
    return mb__pb_error(pb, range, path,
                        "give `multiplier` or `increase_by`, not both");
  if (has_mult && (mult <= 1 || start <= 0))
    return mb__pb_error(pb, range, path,
                        "multiplier %g from start %g would never pass end: "
                        "need multiplier > 1 and start > 0",
                        mult, start);
  if (has_inc && inc <= 0)
    return mb__pb_error(pb, range, path,
                        "increase_by %g would never pass end: need "
                        "increase_by > 0",
                        inc);
  if (start > end)
    return mb__pb_error(pb, range, path,
                        "start %g is above end %g: the range is empty", start,
                        end);
  for (double v = start; v <= end; v = has_mult ? v * mult : v + inc) {
    if (values->count == MAX_RANGE_VALUES)
      return mb__pb_error(pb, range, path, "more than %u values",
                          MAX_RANGE_VALUES);
    mb_cfg_node_t *n = number_node(v, range->line);
    if (!n || mb__cfg_append(values, NULL, n) != MB_OK) return no_memory();
  }
  return MB_OK;
}

static void strip_suffix(char *key, size_t cap, const char *written) {
  snprintf(key, cap, "%s", written);
  size_t len = strlen(key);
  if (len > 6 && !strcmp(key + len - 6, "_range")) key[len -= 6] = '\0';
  if (len > 5 && !strcmp(key + len - 5, "_list")) key[len - 5] = '\0';
}

/* The column for key i of sweep map `sweep`. */
static mb_status_t read_column(mb__pb_t *pb, const mb__jax_bench_t *b,
                               const mb_cfg_node_t *sweep, const char *path,
                               size_t i, column_t *c) {
  const mb_cfg_node_t *v = sweep->items[i];
  char here[PATH_CAP];
  c->written = sweep->keys[i];
  strip_suffix(c->key, sizeof c->key, c->written);
  mb__path_key(here, sizeof here, path, c->written);
  mb_status_t st = mb__jax_check_param(pb, b, v, here, c->key, c->written);
  if (st != MB_OK) return st;
  if (!(c->values = mb__cfg_new(MB_CFG_LIST, v->line, NULL)))
    return no_memory();
  if (v->kind == MB_CFG_MAP) return expand_range(pb, v, here, c->values);
  if (v->kind == MB_CFG_LIST && !v->count)
    return mb__pb_error(pb, v, here, "an empty list sweeps nothing");
  size_t count = v->kind == MB_CFG_LIST ? v->count : 1;
  for (size_t k = 0; k < count; k++) {
    mb_cfg_node_t *n = clone(v->kind == MB_CFG_LIST ? v->items[k] : v);
    if (!n || mb__cfg_append(c->values, NULL, n) != MB_OK) return no_memory();
  }
  return MB_OK;
}

/* ---- one combination of parameters -> one entry ---------------------------
 */

/* What a benchmark block gives each of its entries. */
typedef struct block {
  const mb__jax_bench_t *bench;
  const char *name;
  const mb_cfg_node_t *num_runs; /* NULL: none at this level */
  char csv[4096];                /* "" none */
  cJSON *ignored;                /* NULL none */
} block_t;

/* `params` with the key each value was written under, for messages. */
typedef struct combo {
  mb_cfg_node_t *map; /* owned */
  const char *const *written;
  const char *path; /* the map it came from */
} combo_t;

static size_t combo_find(const combo_t *c, const char *key) {
  size_t i = 0;
  while (i < c->map->count && strcmp(c->map->keys[i], key)) i++;
  return i;
}

/* `SAME_AS_<key>` takes that key's value in the same combination, key by
 * key in document order (as run_benchmark.py does). */
static mb_status_t resolve_same_as(mb__pb_t *pb, combo_t *c) {
  static const char prefix[] = "SAME_AS_";
  mb_cfg_node_t *m = c->map;
  for (size_t i = 0; i < m->count; i++) {
    const mb_cfg_node_t *v = m->items[i];
    if (v->kind != MB_CFG_STRING || !v->text || strncmp(v->text, prefix, 8))
      continue;
    const char *ref = v->text + 8;
    size_t j = combo_find(c, ref);
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, c->path, c->written[i]);
    if (j == m->count) {
      char have[512] = "";
      size_t len = 0;
      for (size_t k = 0; k < m->count && len < sizeof have; k++) {
        int w = snprintf(have + len, sizeof have - len, "%s%s", k ? ", " : "",
                         m->keys[k]);
        if (w > 0) len += (size_t)w;
      }
      return mb__pb_error(pb, v, here,
                          "\"%s\": no parameter \"%s\" here; parameters: %s",
                          v->text, ref, have);
    }
    mb_cfg_node_t *copy = clone(m->items[j]);
    if (!copy) return no_memory();
    copy->line = v->line;
    mb__cfg_free(m->items[i]);
    m->items[i] = copy;
  }
  return MB_OK;
}

static mb_status_t read_dim(mb__pb_t *pb, const combo_t *c, const char *key,
                            int64_t *out, const char *needs,
                            const block_t *blk) {
  size_t i = combo_find(c, key);
  if (i == c->map->count)
    return mb__pb_error(pb, c->map, c->path, "%s needs %s; \"%s\" is missing",
                        blk->name, needs, key);
  char here[PATH_CAP];
  mb__path_key(here, sizeof here, c->path, c->written[i]);
  return mb__pb_int(pb, c->map->items[i], here, 1, INT64_C(1) << 40, out);
}

/* Shape, and the "MxKxN" / "MxN" / "N" the entry's name shows (as written:
 * swiglu_fwd's halving is ours). */
static mb_status_t read_shape(mb__pb_t *pb, const combo_t *c,
                              const block_t *blk, mb_op_params_t *p, char *text,
                              size_t cap) {
  const mb__jax_bench_t *b = blk->bench;
  int64_t d[3];
  mb_status_t st = MB_OK;
  if (b->dims == MB__JAX_ELEMENTS) {
    st = read_dim(pb, c, "num_elements", &d[0], "num_elements", blk);
    if (st != MB_OK) return st;
    p->ndim = 2;
    p->shape[0] = 1;
    p->shape[1] = d[0];
    snprintf(text, cap, "%" PRId64, d[0]);
    return MB_OK;
  }
  if (b->dims == MB__JAX_MKN) {
    static const char *const mkn[] = {"m", "k", "n"};
    for (size_t i = 0; i < 3 && st == MB_OK; i++)
      st = read_dim(pb, c, mkn[i], &d[i], "m, k and n", blk);
    if (st != MB_OK) return st;
    p->ndim = 3;
    memcpy(p->shape, d, sizeof d);
    snprintf(text, cap, "%" PRId64 "x%" PRId64 "x%" PRId64, d[0], d[1], d[2]);
    return MB_OK;
  }
  st = read_dim(pb, c, "m", &d[0], "m and n", blk);
  if (st == MB_OK) st = read_dim(pb, c, "n", &d[1], "m and n", blk);
  if (st != MB_OK) return st;
  if (b->split_n && d[1] % 2) {
    size_t i = combo_find(c, "n");
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, c->path, c->written[i]);
    return mb__pb_error(pb, c->map->items[i], here,
                        "%s splits its [m, n] input into two halves: n must "
                        "be even, got %" PRId64,
                        b->name, d[1]);
  }
  p->ndim = 2;
  p->shape[0] = d[0];
  p->shape[1] = b->split_n ? d[1] / 2 : d[1];
  snprintf(text, cap, "%" PRId64 "x%" PRId64, d[0], d[1]);
  return MB_OK;
}

static mb_status_t read_dtype(mb__pb_t *pb, const combo_t *c,
                              const block_t *blk, mb_op_params_t *p,
                              const char **written) {
  const mb__jax_bench_t *b = blk->bench;
  size_t i = combo_find(c, "dtype");
  p->dtype = b->dtype;
  *written = NULL;
  if (i == c->map->count) {
    if (!b->dtype_required) return MB_OK;
    return mb__pb_error(pb, c->map, c->path,
                        "%s needs dtype; valid: " MB__JAX_DTYPES_VALID,
                        b->name);
  }
  char here[PATH_CAP];
  mb__path_key(here, sizeof here, c->path, c->written[i]);
  const mb_cfg_node_t *n = c->map->items[i];
  mb_status_t st = mb__pb_string(pb, n, here, written);
  if (st != MB_OK) return st;
  if (mb__jax_dtype_find(*written, &p->dtype)) return MB_OK;
  if (!strcmp(*written, "float4"))
    return mb__pb_error(
        pb, n, here, "float4 is not supported; valid: " MB__JAX_DTYPES_VALID);
  return mb__pb_error(pb, n, here,
                      "unknown dtype \"%s\"; valid: " MB__JAX_DTYPES_VALID,
                      *written);
}

static mb_status_t read_scale(mb__pb_t *pb, const combo_t *c,
                              mb_op_params_t *p) {
  size_t i = combo_find(c, "scale");
  p->scale = 1.0; /* no `scale`: unit static scale (docs/config.md) */
  if (i == c->map->count) return MB_OK;
  char here[PATH_CAP];
  mb__path_key(here, sizeof here, c->path, c->written[i]);
  mb_status_t st = mb__pb_number(pb, c->map->items[i], here, &p->scale);
  if (st == MB_OK && !(p->scale > 0))
    st = mb__pb_error(pb, c->map->items[i], here,
                      "the static scale must be > 0, got %g", p->scale);
  return st;
}

/* num_runs: exactly that many samples (the combination's own, else the
 * block's); none: our default stopping criterion. */
static mb_status_t read_runs(mb__pb_t *pb, const combo_t *c, const block_t *blk,
                             mb_bench_spec_t *spec) {
  size_t i = combo_find(c, "num_runs");
  const mb_cfg_node_t *n = blk->num_runs;
  char here[PATH_CAP] = "num_runs";
  if (i < c->map->count) {
    n = c->map->items[i];
    mb__path_key(here, sizeof here, c->path, c->written[i]);
  }
  if (!n) return MB_OK;
  int64_t runs;
  mb_status_t st = mb__pb_int(pb, n, here, 1, 1000000000, &runs);
  if (st != MB_OK) return st;
  spec->criterion = MB_CRITERION_FIXED;
  spec->samples = (uint32_t)runs;
  return MB_OK;
}

static mb_status_t add_combo(mb__pb_t *pb, const block_t *blk, combo_t *c) {
  const mb__jax_bench_t *b = blk->bench;
  mb__plan_item_t it = MB__PLAN_ITEM_INIT;
  char dims[96], name[NAME_CAP];
  const char *dtype;
  mb_status_t st = resolve_same_as(pb, c);
  if (st == MB_OK) st = read_shape(pb, c, blk, &it.params, dims, sizeof dims);
  if (st == MB_OK) st = read_dtype(pb, c, blk, &it.params, &dtype);
  if (st == MB_OK && (b->takes & MB__JAX_SCALE))
    st = read_scale(pb, c, &it.params);
  if (st == MB_OK) st = read_runs(pb, c, blk, &it.spec);
  if (st != MB_OK) return st;
  it.params.dtype_out = b->dtype_out;
  it.params.flags = b->flags;
  snprintf(name, sizeof name, "%s/%s%s%s", blk->name, dims, dtype ? "/" : "",
           dtype ? dtype : "");
  it.name = name;
  it.group = blk->name;
  it.op = b->op;
  it.csv_path = blk->csv;
  it.at = c->map;
  it.path = c->path;
  cJSON *params = mb__cfg_to_cjson(c->map);
  if (!params) return no_memory();
  const mb__foreign_extra_t extras[] = {{"params", params},
                                        {"ignored", blk->ignored}};
  it.config = mb__foreign_config(pb, "jax", blk->name, extras,
                                 sizeof extras / sizeof *extras);
  cJSON_Delete(params);
  if (!it.config) return MB_ERR_NO_MEMORY;
  return mb__plan_add(pb, &it);
}

/* ---- benchmark_params and benchmark_sweep_params --------------------------
 */

static mb_status_t add_params(mb__pb_t *pb, const block_t *blk,
                              const mb_cfg_node_t *item, const char *path) {
  if (item->kind != MB_CFG_MAP)
    return mb__pb_error(pb, item, path,
                        "expected a map of parameters, got a %s",
                        mb__cfg_kind_name(item->kind));
  for (size_t i = 0; i < item->count; i++) {
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, path, item->keys[i]);
    mb_status_t st = mb__jax_check_param(pb, blk->bench, item->items[i], here,
                                         item->keys[i], item->keys[i]);
    if (st != MB_OK) return st;
  }
  combo_t c = {clone(item), (const char *const *)item->keys, path};
  if (!c.map) return no_memory();
  mb_status_t st = add_combo(pb, blk, &c);
  mb__cfg_free(c.map);
  return st;
}

/* The cartesian product of the columns, last key varying fastest. */
static mb_status_t add_product(mb__pb_t *pb, const block_t *blk,
                               const mb_cfg_node_t *sweep, const char *path,
                               const column_t *cols, const char **written) {
  size_t n = sweep->count, total = 1;
  for (size_t i = 0; i < n; i++) {
    total *= cols[i].values->count;
    if (total > MAX_COMBINATIONS)
      return mb__pb_error(pb, sweep, path, "more than %u combinations",
                          MAX_COMBINATIONS);
  }
  mb_status_t st = MB_OK;
  for (size_t idx = 0; st == MB_OK && idx < total; idx++) {
    combo_t c = {mb__cfg_new(MB_CFG_MAP, sweep->line, NULL), written, path};
    if (!c.map) return no_memory();
    size_t rest = idx, pick[64];
    for (size_t i = n; i-- > 0;) {
      pick[i] = rest % cols[i].values->count;
      rest /= cols[i].values->count;
    }
    for (size_t i = 0; st == MB_OK && i < n; i++) {
      mb_cfg_node_t *v = clone(cols[i].values->items[pick[i]]);
      st = v ? mb__cfg_append(c.map, cols[i].key, v) : no_memory();
    }
    if (st == MB_OK) st = add_combo(pb, blk, &c);
    mb__cfg_free(c.map);
  }
  return st;
}

static mb_status_t add_sweep(mb__pb_t *pb, const block_t *blk,
                             const mb_cfg_node_t *sweep, const char *path) {
  if (sweep->kind != MB_CFG_MAP)
    return mb__pb_error(pb, sweep, path,
                        "expected a map of parameters, got a %s",
                        mb__cfg_kind_name(sweep->kind));
  if (sweep->count > 64)
    return mb__pb_error(pb, sweep, path, "more than 64 parameters");
  column_t cols[64];
  const char *written[64];
  mb_status_t st = MB_OK;
  size_t made = 0;
  for (; st == MB_OK && made < sweep->count; made++) {
    memset(&cols[made], 0, sizeof cols[made]);
    st = read_column(pb, blk->bench, sweep, path, made, &cols[made]);
    written[made] = cols[made].written;
    for (size_t k = 0; st == MB_OK && k < made; k++)
      if (!strcmp(cols[k].key, cols[made].key)) {
        char here[PATH_CAP];
        mb__path_key(here, sizeof here, path, cols[made].written);
        st = mb__pb_error(pb, sweep->items[made], here,
                          "sets \"%s\" again (already set by \"%s\")",
                          cols[made].key, cols[k].written);
      }
  }
  if (st == MB_OK) st = add_product(pb, blk, sweep, path, cols, written);
  for (size_t i = 0; i < made; i++) mb__cfg_free(cols[i].values);
  return st;
}

static mb_status_t add_list(mb__pb_t *pb, const block_t *blk,
                            const mb_cfg_node_t *bench, const char *bpath,
                            const char *key,
                            mb_status_t (*add)(mb__pb_t *, const block_t *,
                                               const mb_cfg_node_t *,
                                               const char *)) {
  const mb_cfg_node_t *list = mb__cfg_get(bench, key);
  char path[PATH_CAP];
  if (!list) return MB_OK;
  mb__path_key(path, sizeof path, bpath, key);
  if (list->kind != MB_CFG_LIST)
    return mb__pb_error(pb, list, path, "expected a list of maps, got a %s",
                        mb__cfg_kind_name(list->kind));
  mb_status_t st = MB_OK;
  for (size_t i = 0; st == MB_OK && i < list->count; i++) {
    char here[PATH_CAP];
    mb__path_index(here, sizeof here, path, i);
    st = add(pb, blk, list->items[i], here);
  }
  return st;
}

/* ---- one benchmarks[] item ------------------------------------------------
 */

static mb_status_t read_csv_path(mb__pb_t *pb, const mb_cfg_node_t *bench,
                                 const char *bpath, block_t *blk) {
  const mb_cfg_node_t *n = mb__cfg_get(bench, "csv_path");
  const char *csv;
  char here[PATH_CAP], file[512];
  if (!n) return MB_OK;
  mb__path_key(here, sizeof here, bpath, "csv_path");
  mb_status_t st = mb__pb_string(pb, n, here, &csv);
  if (st != MB_OK) return st;
  size_t len = strlen(csv);
  if (!len) return mb__pb_error(pb, n, here, "is empty");
  if (len > 4 && !strcmp(csv + len - 4, ".csv")) {
    if (len >= sizeof blk->csv)
      return mb__pb_error(pb, n, here, "is too long (%zu bytes at most)",
                          sizeof blk->csv - 1);
    memcpy(blk->csv, csv, len + 1);
    return MB_OK;
  }
  snprintf(file, sizeof file, "%s.csv", blk->name);
  return mb__foreign_join(pb, n, here, csv, file, blk->csv, sizeof blk->csv);
}

static mb_status_t read_block(mb__pb_t *pb, const mb_cfg_node_t *bench,
                              const char *bpath, block_t *blk) {
  char here[PATH_CAP];
  mb_status_t st = mb__pb_check_keys(pb, bench, bpath, k_bench_keys);
  if (st != MB_OK) return st;
  const mb_cfg_node_t *n = mb__cfg_get(bench, "benchmark_name");
  if (!n) return mb__pb_error(pb, bench, bpath, "`benchmark_name` is missing");
  mb__path_key(here, sizeof here, bpath, "benchmark_name");
  if ((st = mb__pb_string(pb, n, here, &blk->name)) != MB_OK ||
      (st = mb__jax_bench_lookup(pb, n, here, blk->name, &blk->bench)) != MB_OK)
    return st;
  if ((blk->num_runs = mb__cfg_get(bench, "num_runs"))) {
    int64_t runs;
    mb__path_key(here, sizeof here, bpath, "num_runs");
    st = mb__pb_int(pb, blk->num_runs, here, 1, 1000000000, &runs);
    if (st != MB_OK) return st;
  }
  if ((st = read_csv_path(pb, bench, bpath, blk)) != MB_OK) return st;
  for (size_t i = 0; i < sizeof k_xla_only / sizeof *k_xla_only; i++) {
    const mb_cfg_node_t *v = mb__cfg_get(bench, k_xla_only[i]);
    if (v && (st = mb__foreign_ignore(pb, &blk->ignored, k_xla_only[i], v,
                                      "has no effect here (XLA/TPU-only): "
                                      "recorded")) != MB_OK)
      return st;
  }
  if (!mb__cfg_get(bench, "benchmark_params") &&
      !mb__cfg_get(bench, "benchmark_sweep_params"))
    return mb__pb_error(pb, bench, bpath,
                        "%s has neither benchmark_params nor "
                        "benchmark_sweep_params: nothing to run",
                        blk->name);
  return MB_OK;
}

static mb_status_t add_block(mb__pb_t *pb, const mb_cfg_node_t *bench,
                             const char *bpath) {
  block_t blk = {NULL, "", NULL, "", NULL};
  mb_status_t st = read_block(pb, bench, bpath, &blk);
  /* The suite runs benchmark_params first, then the sweeps. */
  if (st == MB_OK)
    st = add_list(pb, &blk, bench, bpath, "benchmark_params", add_params);
  if (st == MB_OK)
    st = add_list(pb, &blk, bench, bpath, "benchmark_sweep_params", add_sweep);
  cJSON_Delete(blk.ignored);
  return st;
}

mb_status_t mb__schema_jax(mb__pb_t *pb) {
  static const char *const k_top[] = {"benchmarks", NULL};
  mb_status_t st = mb__pb_check_keys(pb, pb->root, "", k_top);
  const mb_cfg_node_t *list = mb__cfg_get(pb->root, "benchmarks");
  if (st == MB_OK && (!list || list->kind != MB_CFG_LIST))
    return mb__pb_error(pb, list ? list : pb->root, "benchmarks",
                        "expected a list of benchmarks");
  for (size_t i = 0; st == MB_OK && i < list->count; i++) {
    char path[PATH_CAP];
    mb__path_index(path, sizeof path, "benchmarks", i);
    st = add_block(pb, list->items[i], path);
  }
  return st;
}
