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
#include <strings.h>

#include "plan/jax_attention.h"
#include "plan/jax_benches.h"
#include "plan/jax_collectives.h"
#include "plan/jax_common.h"

#define PATH_CAP MB__JAX_PATH_CAP
#define NAME_CAP 1024
/* Guards against a sweep that would never fit in memory. */
#define MAX_COMBINATIONS 1000000u

static const char *const k_bench_keys[] = {"benchmark_name",
                                           "benchmark_params",
                                           "benchmark_sweep_params",
                                           "num_runs",
                                           "csv_path",
                                           "trace_dir",
                                           "xlml_metrics_dir",
                                           "xla_dump_dir",
                                           "topology",
                                           "warmup_tries",
                                           NULL};
/* XLA/TPU outputs (metrics for XLML, HLO dumps; trace_dir asks for the
 * run's trace: mb__jax_trace_dir), and the TPU
 * slice's topology (run_benchmark.py passes it to every combination: the
 * all-to-all's theoretical ICI peak). */
static const char *const k_xla_keys[] = {"xlml_metrics_dir", "xla_dump_dir",
                                         "topology", NULL};

/* One key of a sweep map: the parameter it sets (suffix `_range` or
 * `_list` dropped) and its values, in order. */
typedef struct column {
  char key[128];
  const char *written;
  mb_cfg_node_t *values; /* a list node, owned */
} column_t;

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
    return mb__jax_no_memory();
  return mb__jax_values(pb, MB__JAX_LEGACY, v, here, c->values);
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
  char skip[512]; /* a name the suite defines that we do not run: why */
  const char *op; /* ... and the op its skipped entry is filed under */
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
    mb_cfg_node_t *copy = mb__jax_clone(m->items[j]);
    if (!copy) return mb__jax_no_memory();
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
  if (b->dims == MB__JAX_MIB) { /* MiB of f32 in rows of 128 */
    st = read_dim(pb, c, "data_size_mib", &d[0], "data_size_mib", blk);
    if (st != MB_OK) return st;
    p->ndim = 2;
    p->shape[0] = d[0] * (1024 * 1024 / 4 / 128);
    p->shape[1] = 128;
    snprintf(text, cap, "%" PRId64 "MiB", d[0]);
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

/* The combination's dtype; one the suite defines that we do not run sets
 * `why` (the combination is skipped). */
static mb_status_t read_dtype(mb__pb_t *pb, const combo_t *c,
                              const block_t *blk, mb_op_params_t *p,
                              const char **written, char *why, size_t cap) {
  const mb__jax_bench_t *b = blk->bench;
  size_t i = combo_find(c, "dtype");
  p->dtype = b->dtype;
  *written = NULL;
  if (i == c->map->count) {
    if (!b->dtype_required) return MB_OK;
    char valid[512];
    mb__jax_dtype_names(MB__JAX_LEGACY, valid, sizeof valid);
    return mb__pb_error(pb, c->map, c->path, "%s needs dtype; valid: %s",
                        b->name, valid);
  }
  char here[PATH_CAP];
  mb__path_key(here, sizeof here, c->path, c->written[i]);
  const mb_cfg_node_t *n = c->map->items[i];
  const mb__jax_name_t *def;
  mb_status_t st = mb__pb_string(pb, n, here, written);
  if (st != MB_OK) return st;
  switch (mb__jax_dtype_lookup(MB__JAX_LEGACY, *written, &p->dtype, &def)) {
    case 1:
      return MB_OK;
    case 0:
      mb__jax_skip_reason(why, cap, "dtype", def);
      return MB_OK;
    default:
      return mb__jax_dtype_error(pb, MB__JAX_LEGACY, n, here, *written);
  }
}

/* in_dtype_str and out_dtype_str (gemm_simple_with_dtype), as
 * benchmark_utils.str_to_dtype reads them: case-insensitive, these four. */
static mb_status_t read_inout(mb__pb_t *pb, const combo_t *c,
                              const block_t *blk, mb_op_params_t *p, char *text,
                              size_t cap) {
  static const struct {
    const char *name;
    mb_dtype_t dtype;
  } k_str_dtypes[] = {{"fp8", MB_DTYPE_F8E4M3},
                      {"bf16", MB_DTYPE_BF16},
                      {"fp16", MB_DTYPE_F16},
                      {"fp32", MB_DTYPE_F32}};
  static const char *const keys[] = {"in_dtype_str", "out_dtype_str"};
  mb_dtype_t *fields[] = {&p->dtype, &p->dtype_out};
  const char *written[2] = {"", ""};
  for (size_t k = 0; k < 2; k++) {
    size_t i = combo_find(c, keys[k]);
    if (i == c->map->count)
      return mb__pb_error(pb, c->map, c->path,
                          "%s needs in_dtype_str and out_dtype_str; \"%s\" "
                          "is missing",
                          blk->name, keys[k]);
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, c->path, c->written[i]);
    mb_status_t st = mb__pb_string(pb, c->map->items[i], here, &written[k]);
    if (st != MB_OK) return st;
    size_t d = 0;
    while (d < sizeof k_str_dtypes / sizeof *k_str_dtypes &&
           strcasecmp(k_str_dtypes[d].name, written[k]))
      d++;
    if (d == sizeof k_str_dtypes / sizeof *k_str_dtypes)
      return mb__pb_error(pb, c->map->items[i], here,
                          "unknown %s \"%s\"; valid: fp8 (e4m3), bf16, fp16, "
                          "fp32 (the suite's str_to_dtype)",
                          keys[k], written[k]);
    *fields[k] = k_str_dtypes[d].dtype;
  }
  snprintf(text, cap, "%s->%s", written[0], written[1]);
  return MB_OK;
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

/* quant_dtype (benchmark_compute.quantization): jnp.dtype(quant_dtype),
 * so any jax.numpy name; our quantize's output dtype. */
static mb_status_t read_quant_dtype(mb__pb_t *pb, const combo_t *c,
                                    mb_op_params_t *p, char *tag, size_t cap,
                                    char *why, size_t why_cap) {
  size_t i = combo_find(c, "quant_dtype");
  if (i == c->map->count) return MB_OK; /* the alias's f8e4m3 */
  char here[PATH_CAP];
  const char *written;
  const mb__jax_name_t *def;
  mb__path_key(here, sizeof here, c->path, c->written[i]);
  const mb_cfg_node_t *n = c->map->items[i];
  mb_status_t st = mb__pb_string(pb, n, here, &written);
  if (st != MB_OK) return st;
  snprintf(tag, cap, "/q=%s", written);
  switch (mb__jax_dtype_lookup(MB__JAX_SWEEP, written, &p->dtype_out, &def)) {
    case 1:
      return MB_OK;
    case 0:
      if (!*why) mb__jax_skip_reason(why, why_cap, "quant_dtype", def);
      return MB_OK;
    default:
      return mb__jax_dtype_error(pb, MB__JAX_SWEEP, n, here, written);
  }
}

/* num_runs: exactly that many samples (the combination's own, else the
 * block's); none: our default stopping criterion. */
static mb_status_t read_runs(mb__pb_t *pb, const combo_t *c, const block_t *blk,
                             mb_bench_spec_t *spec) {
  size_t i = combo_find(c, "num_runs");
  char here[PATH_CAP] = "num_runs";
  if (i == c->map->count)
    return mb__jax_num_runs(pb, blk->num_runs, here, spec);
  mb__path_key(here, sizeof here, c->path, c->written[i]);
  return mb__jax_num_runs(pb, c->map->items[i], here, spec);
}

static mb_status_t add_combo(mb__pb_t *pb, const block_t *blk, combo_t *c) {
  const mb__jax_bench_t *b = blk->bench;
  mb__plan_item_t it = MB__PLAN_ITEM_INIT;
  char dims[96], name[NAME_CAP], why[512] = "", inout[64], qtag[64] = "";
  const char *dtype;
  /* The op, and the one a second entry runs after it (NULL: none). */
  const char *ops[2] = {b->op, mb__jax_bench_then(b)};
  mb_status_t st = resolve_same_as(pb, c);
  if (st == MB_OK && b->dims == MB__JAX_ATTN) {
    const mb__jax_combo_in_t in = {c->map, c->written, c->path};
    st = mb__jax_attention_read(pb, &in, &it.params, dims, sizeof dims, ops,
                                why, sizeof why);
  } else if (st == MB_OK && b->dims == MB__JAX_COLL) {
    const mb__jax_combo_in_t in = {c->map, c->written, c->path};
    st = mb__jax_coll_read(pb, b->name, &in, &it.params, dims, sizeof dims,
                           qtag, sizeof qtag, why, sizeof why);
  } else if (st == MB_OK) {
    st = read_shape(pb, c, blk, &it.params, dims, sizeof dims);
  }
  if (st == MB_OK && (b->takes & MB__JAX_INOUT)) {
    st = read_inout(pb, c, blk, &it.params, inout, sizeof inout);
    dtype = inout;
  } else if (st == MB_OK) {
    st = read_dtype(pb, c, blk, &it.params, &dtype, why, sizeof why);
  }
  if (st == MB_OK && (b->takes & MB__JAX_SCALE))
    st = read_scale(pb, c, &it.params);
  if (st == MB_OK && (b->takes & MB__JAX_QDTYPE))
    st =
        read_quant_dtype(pb, c, &it.params, qtag, sizeof qtag, why, sizeof why);
  if (st == MB_OK) st = read_runs(pb, c, blk, &it.spec);
  if (st != MB_OK) return st;
  /* A dtype the suite runs that our collectives do not take (float8,
   * int8): our limit, not the file's, as the current layout says. */
  mb_op_params_t resolved = it.params;
  if (b->dims == MB__JAX_COLL && !*why &&
      mb_op_resolve(mb_op_find(b->op), &resolved) != MB_OK)
    snprintf(why, sizeof why, "the JAX suite runs this; %s", mb_error_last());
  if (b->dtype_out != MB_DTYPE_NONE) it.params.dtype_out = b->dtype_out;
  it.params.flags |= b->flags; /* attention's causal is set already */
  snprintf(name, sizeof name, "%s/%s%s%s%s", blk->name, dims, dtype ? "/" : "",
           dtype ? dtype : "", qtag);
  it.name = name;
  it.group = blk->name;
  it.op = ops[0];
  it.unsupported = why;
  it.csv_path = blk->csv;
  it.at = c->map;
  it.path = c->path;
  const char *then = ops[1];
  char named[NAME_CAP + 16]; /* it.name until the last add */
  if (then) {                /* each op's entry named for it */
    snprintf(named, sizeof named, "%s/%s", name, it.op);
    it.name = named;
    st = mb__jax_add(pb, &it, blk->name, "params", mb__cfg_to_cjson(c->map),
                     blk->ignored);
    snprintf(named, sizeof named, "%s/%s", name, then);
    it.op = then;
    if (st != MB_OK) return st;
  }
  return mb__jax_add(pb, &it, blk->name, "params", mb__cfg_to_cjson(c->map),
                     blk->ignored);
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
  combo_t c = {mb__jax_clone(item), (const char *const *)item->keys, path};
  if (!c.map) return mb__jax_no_memory();
  mb_status_t st = add_combo(pb, blk, &c);
  mb__cfg_free(c.map);
  return st;
}

/* What each combination of a sweep is added with. */
typedef struct sweep_ctx {
  const block_t *blk;
  const char *const *written;
  const char *path;
} sweep_ctx_t;

static mb_status_t add_swept(mb__pb_t *pb, void *ctx, mb_cfg_node_t *map) {
  const sweep_ctx_t *s = ctx;
  combo_t c = {map, s->written, s->path};
  return add_combo(pb, s->blk, &c);
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
  const char *written[64], *keys[64];
  mb_cfg_node_t *values[64];
  mb_status_t st = MB_OK;
  size_t made = 0;
  for (; st == MB_OK && made < sweep->count; made++) {
    memset(&cols[made], 0, sizeof cols[made]);
    st = read_column(pb, blk->bench, sweep, path, made, &cols[made]);
    written[made] = cols[made].written;
    keys[made] = cols[made].key;
    values[made] = cols[made].values;
    for (size_t k = 0; st == MB_OK && k < made; k++)
      if (!strcmp(cols[k].key, cols[made].key)) {
        char here[PATH_CAP];
        mb__path_key(here, sizeof here, path, cols[made].written);
        st = mb__pb_error(pb, sweep->items[made], here,
                          "sets \"%s\" again (already set by \"%s\")",
                          cols[made].key, cols[k].written);
      }
  }
  sweep_ctx_t ctx = {blk, written, path};
  if (st == MB_OK)
    st = mb__jax_product(pb, sweep, path, keys, values, sweep->count,
                         MAX_COMBINATIONS, 0, add_swept, &ctx);
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

static mb_status_t read_block(mb__pb_t *pb, const mb_cfg_node_t *bench,
                              const char *bpath, block_t *blk) {
  char here[PATH_CAP];
  mb_status_t st = mb__pb_check_keys(pb, bench, bpath, k_bench_keys);
  if (st != MB_OK) return st;
  const mb_cfg_node_t *n = mb__cfg_get(bench, "benchmark_name");
  if (!n) return mb__pb_error(pb, bench, bpath, "`benchmark_name` is missing");
  mb__path_key(here, sizeof here, bpath, "benchmark_name");
  const mb__jax_name_t *def;
  if ((st = mb__pb_string(pb, n, here, &blk->name)) != MB_OK ||
      (st = mb__jax_bench_lookup(pb, n, here, blk->name, &blk->bench, &def)) !=
          MB_OK)
    return st;
  if (!blk->bench) { /* defined by the suite, not run here */
    mb__jax_skip_reason(blk->skip, sizeof blk->skip, "benchmark_name", def);
    blk->op = def->op;
  }
  if ((blk->num_runs = mb__cfg_get(bench, "num_runs"))) {
    int64_t runs;
    mb__path_key(here, sizeof here, bpath, "num_runs");
    st = mb__pb_int(pb, blk->num_runs, here, 1, 1000000000, &runs);
    if (st != MB_OK) return st;
  }
  if ((n = mb__cfg_get(bench, "csv_path"))) {
    mb__path_key(here, sizeof here, bpath, "csv_path");
    st = mb__jax_csv_path(pb, n, here, blk->name, blk->csv, sizeof blk->csv);
  }
  if (st == MB_OK && (n = mb__cfg_get(bench, "trace_dir"))) {
    mb__path_key(here, sizeof here, bpath, "trace_dir");
    st = mb__jax_trace_dir(pb, n, here);
  }
  if (st == MB_OK) st = mb__jax_ignore(pb, bench, k_xla_keys, &blk->ignored);
  /* Some upstream collective configs set it on the benchmark, where
   * run_benchmark.py does not read it. */
  if (st == MB_OK && (n = mb__cfg_get(bench, "warmup_tries")))
    st = mb__foreign_ignore(pb, &blk->ignored, "warmup_tries", n,
                            "not read by the suite at this level: recorded");
  if (st != MB_OK) return st;
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
  block_t blk = {NULL, "", NULL, "", NULL, "", NULL};
  mb_status_t st = read_block(pb, bench, bpath, &blk);
  if (st == MB_OK && *blk.skip) { /* one entry says why, params unread */
    const mb__jax_skip_t skip = {blk.name, blk.op, blk.skip,   blk.csv,
                                 bench,    bpath,  blk.ignored};
    st = mb__jax_add_skipped(pb, &skip);
    cJSON_Delete(blk.ignored);
    return st;
  }
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
