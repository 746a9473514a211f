/* The JAX accelerator-microbenchmarks suite's current layout (upstream
 * configs/ *.yaml since 6a306a8): `global:` parameters merged into every
 * item of `benchmarks:`, each `{name, <params>, sweep: {key: values}}`.
 * Read as the suite's core/config.py load_config and main.py do: global,
 * then the item's own keys, then one sweep combination, each overriding
 * the one before; every name its registry defines is either mapped to one
 * of our ops (k_benches) or kept as a skipped entry saying why.
 * docs/config.md, "JAX suite, current layout". */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "plan/jax_collectives.h"
#include "plan/jax_moe.h"
#include "plan/jax_rope.h"
#include "plan/jax_sweep.h"

#define PATH_CAP MB__JAX_PATH_CAP
#define TAG_CAP MB__SWEEP_TAG_CAP
#define WHY_CAP MB__SWEEP_WHY_CAP
/* core/config.py caps a sweep at 1000 combinations and runs the first. */
#define MAX_COMBINATIONS 1000u

/* BaseBenchmarkParams (core/base.py): every benchmark takes these, and
 * seed (gemm's) and the legacy layout's csv_path and trace_dir. */
// clang-format off
static const char *const k_base_keys[] = {
    "warmup_tries", "num_runs", "min_duration_s", "xprof_timing", "xprof_dir",
    "system", "dtype", "use_trace_roofline", "hardware_stats", "seed",
    "csv_path", "trace_dir", NULL};
// clang-format on
/* Profiling and roofline inputs of the suite's TPU runs; min_duration_s
 * extends its sampling in time, which our fixed num_runs replaces. */
static const char *const k_ignored_keys[] = {
    "xprof_timing",   "xprof_dir",      "system", "use_trace_roofline",
    "hardware_stats", "min_duration_s", NULL};

/* The names the current registry defines that we run (jax_names.c has them
 * all); parameters and defaults from each benchmark's dataclass. */
// clang-format off
static const mb__sweep_bench_t k_benches[] = {
    /* matmul.py GemmParams */
    {"gemm_generalized", "gemm", {"m", "k", "n"}, {1024, 1024, 1024},
     MB__SWEEP_GEMM,
     {"transpose_a", "transpose_b", "alpha", "beta", "use_scaling_factors"},
     mb__sweep_refine_gemm},
    /* hbm.py HBMBandwidthParams: `size` elements */
    {"hbm_bandwidth", "copy", {"", "size"}, {1, 134217728}, MB__SWEEP_PARAM,
     {"op_type", "device_id"}, mb__sweep_refine_hbm},
    /* compute_ops.py: AddParams, ComputeParams, QuantParams */
    {"simple_add", "add", {"", "size"}, {1, 1048576}, MB__SWEEP_BF16, {NULL},
     NULL},
    {"rmsnorm", "rmsnorm", {"batch", "dim"}, {1024, 4096}, MB__SWEEP_BF16,
     {NULL}, NULL},
    /* Its [batch, 2 dim] input split in halves: silu_mul of [batch, dim]. */
    {"swiglu", "silu_mul", {"batch", "dim"}, {1024, 4096}, MB__SWEEP_BF16,
     {NULL}, NULL},
    {"quantization", "quantization", {"m", "n"}, {4096, 4096}, MB__SWEEP_BF16,
     {NULL}, NULL},
    {"rope", "rope", {"batch", "heads", "seq_len", "head_dim"}, {32, 32, 1024, 128},
     MB__SWEEP_F32, {NULL}, mb__sweep_refine_rope}, /* RoPEParams: jax_rope.c */
    /* attention.py AttentionParams; Sq = Skv = seq_len */
    {"attention_flashed", "attention",
     {"batch", "num_q_heads", "seq_len", "seq_len", "head_dim"},
     {1, 56, 8192, 8192, 128}, MB__SWEEP_PARAM,
     {"mode", "causal", "num_kv_heads"}, mb__sweep_refine_attention},
    /* components.py TransformerLayerParams: [1, mslen, model_dim] */
    {"transformer_layer_moe", MB__JAX_MOE_OP, {"", "mslen", "model_dim"},
     {1, 1024, 7168}, MB__SWEEP_PARAM, {"tp", "etp", "cp", "ep"},
     mb__sweep_refine_moe},
    /* host_device.py HostDeviceParams: jax.device_put / device_get of a
     * numpy (pageable) array */
    {"host_to_device", "h2d", {"", "data_size_mib"}, {1, 64}, MB__SWEEP_F32,
     {NULL}, mb__sweep_refine_transfer},
    {"device_to_host", "d2h", {"", "data_size_mib"}, {1, 64}, MB__SWEEP_F32,
     {NULL}, mb__sweep_refine_transfer},
    /* collectives.py CollectivesParams: matrix_dim -> N (jax_collectives.c) */
    {"all_reduce", "all_reduce", {"matrix_dim"}, {1024}, MB__SWEEP_PARAM,
     {"mesh_shape", "sharding_strategy", "reduce_op"},
     mb__sweep_refine_collective},
    {"all_gather", "all_gather", {"matrix_dim"}, {1024}, MB__SWEEP_PARAM,
     {"mesh_shape", "sharding_strategy", "reduce_op"},
     mb__sweep_refine_collective},
    {"all_to_all", "all_to_all", {"matrix_dim"}, {1024}, MB__SWEEP_PARAM,
     {"mesh_shape", "sharding_strategy", "reduce_op"},
     mb__sweep_refine_collective},
    {"reduce_scatter", "reduce_scatter", {"matrix_dim"}, {1024},
     MB__SWEEP_PARAM, {"mesh_shape", "sharding_strategy", "reduce_op"},
     mb__sweep_refine_collective},
};
// clang-format on
#define NUM_BENCHES (sizeof k_benches / sizeof *k_benches)

/* ---- one combination -> one entry -----------------------------------------
 */

static mb_status_t read_shape(mb__pb_t *pb, const mb__sweep_combo_t *c,
                              mb_op_params_t *p, char *text, size_t cap) {
  const mb__sweep_bench_t *b = c->item->bench;
  size_t len = 0;
  text[0] = '\0';
  for (size_t i = 0; i < 5 && b->dims[i]; i++, p->ndim++) {
    p->shape[i] = b->defaults[i];
    if (!*b->dims[i]) continue; /* a constant 1 */
    mb_status_t st =
        mb__sweep_int(pb, c, b->dims[i], b->defaults[i], 1, &p->shape[i]);
    if (st != MB_OK) return st;
    int repeat = 0; /* seq_len gives Sq and Skv: shown once */
    for (size_t k = 0; k < i; k++) repeat |= !strcmp(b->dims[k], b->dims[i]);
    int w = repeat ? 0
                   : snprintf(text + len, cap - len, "%s%" PRId64,
                              len ? "x" : "", p->shape[i]);
    if (w > 0 && (size_t)w < cap - len) len += (size_t)w;
  }
  return MB_OK;
}

static mb_status_t read_dtypes(mb__pb_t *pb, const mb__sweep_combo_t *c,
                               mb_op_params_t *p, char *text, size_t cap,
                               char *why) {
  const char *in = "bfloat16", *out = NULL;
  mb_status_t st = MB_OK;
  switch (c->item->bench->dtype) {
    case MB__SWEEP_BF16:
      p->dtype = MB_DTYPE_BF16;
      break;
    case MB__SWEEP_F32:
      p->dtype = MB_DTYPE_F32, in = "float32";
      break;
    case MB__SWEEP_PARAM:
      st = mb__sweep_dtype(pb, c, "dtype", "bfloat16", &p->dtype, &in, why,
                           WHY_CAP);
      break;
    case MB__SWEEP_GEMM:
      st = mb__sweep_dtype(pb, c, "in_dtype", "float8_e4m3fn", &p->dtype, &in,
                           why, WHY_CAP);
      if (st == MB_OK)
        st = mb__sweep_dtype(pb, c, "out_dtype", "bfloat16", &p->dtype_out,
                             &out, why, WHY_CAP);
      break;
  }
  snprintf(text, cap, "%s%s%s", in, out ? "->" : "", out ? out : "");
  return st;
}

static mb_status_t read_timing(mb__pb_t *pb, const mb__sweep_combo_t *c,
                               mb__plan_item_t *it) {
  char path[PATH_CAP];
  int64_t seed;
  const mb_cfg_node_t *v = mb__sweep_find(c, "num_runs", path, sizeof path);
  mb_status_t st = mb__jax_num_runs(pb, v, path, &it->spec);
  v = mb__sweep_find(c, "warmup_tries", path, sizeof path);
  if (st == MB_OK) st = mb__jax_warmup(pb, v, path, &it->spec);
  if (st == MB_OK && mb__sweep_find(c, "seed", path, sizeof path)) {
    st = mb__sweep_int(pb, c, "seed", 0, 0, &seed);
    it->spec.seed = (uint64_t)seed;
    it->seed_given = 1;
  }
  return st;
}

/* Every parameter of the combination, layer by layer, as the suite passed
 * them to the benchmark's dataclass: the record of what ran. */
static cJSON *params_record(const mb__sweep_combo_t *c) {
  const mb_cfg_node_t *layers[] = {c->item->global, c->item->preset,
                                   c->item->entry, c->item->row, c->swept};
  cJSON *o = cJSON_CreateObject();
  for (size_t l = 0; o && l < sizeof layers / sizeof *layers; l++)
    for (size_t i = 0; layers[l] && i < layers[l]->count; i++) {
      const char *k = layers[l]->keys[i];
      if (!strcmp(k, "name") || !strcmp(k, "sweep") ||
          (layers[l] == c->item->row &&
           layers[l]->items[i]->kind == MB_CFG_NULL))
        continue;
      cJSON *v = mb__cfg_to_cjson(layers[l]->items[i]);
      if (!v) {
        cJSON_Delete(o);
        return NULL;
      }
      cJSON_DeleteItemFromObject(o, k);
      cJSON_AddItemToObject(o, k, v);
    }
  return o;
}

static mb_status_t add_combo(mb__pb_t *pb, void *ctx, mb_cfg_node_t *swept) {
  const mb__sweep_item_t *item = ctx;
  const mb__sweep_combo_t c = {item, swept};
  const mb__sweep_bench_t *b = item->bench;
  mb__plan_item_t it = MB__PLAN_ITEM_INIT;
  char dims[96], types[64], tag[TAG_CAP] = "", why[WHY_CAP] = "";
  char name[1024];
  it.op = b->op;
  mb_status_t st = read_shape(pb, &c, &it.params, dims, sizeof dims);
  if (st == MB_OK)
    st = read_dtypes(pb, &c, &it.params, types, sizeof types, why);
  if (st == MB_OK && b->refine) st = b->refine(pb, &c, &it, tag, why);
  if (st == MB_OK) st = read_timing(pb, &c, &it);
  if (st != MB_OK) return st;
  /* What the suite runs and our op does not take (a dtype pair, a
   * transpose of a quantized operand) is our limit, not the file's. */
  mb_op_params_t resolved = it.params;
  const mb_op_t *op = mb_op_find(it.op);
  mb_op_apply_alias(it.op, &resolved);
  if (!*why && mb_op_resolve(op, &resolved) != MB_OK)
    snprintf(why, sizeof why, "the JAX suite runs this; %s", mb_error_last());
  snprintf(name, sizeof name, "%s/%s/%s%s", item->name, dims, types, tag);
  it.name = name;
  it.group = item->name;
  it.unsupported = why;
  it.csv_path = item->csv;
  it.at = swept && swept->count ? swept : item->entry;
  it.path = item->path;
  return mb__jax_add(pb, &it, item->name, "params", params_record(&c),
                     item->ignored);
}

/* ---- one item of benchmarks: ---------------------------------------------
 */

/* The parameters benchmark b takes, NULL-terminated: its dataclass's. */
static void bench_keys(const mb__sweep_bench_t *b, const char *out[40]) {
  static const char *const k_gemm[] = {"in_dtype", "out_dtype"};
  size_t n = 0;
  for (size_t i = 0; k_base_keys[i]; i++) out[n++] = k_base_keys[i];
  for (size_t i = 0; i < 5 + 8 + 2; i++) {
    const char *k = i < 5                        ? b->dims[i]
                    : i < 13                     ? b->keys[i - 5]
                    : b->dtype == MB__SWEEP_GEMM ? k_gemm[i - 13]
                                                 : NULL;
    int seen = !k || !*k;
    for (size_t j = 0; !seen && j < n; j++) seen = !strcmp(out[j], k);
    if (!seen) out[n++] = k;
  }
  out[n] = NULL;
}

/* Every key of map m (the global, an item, a CSV row or a sweep) is a
 * parameter of the benchmark, as the suite's dataclass requires; `own`: m
 * is an item, which also has its name, sweep, model and csv_shapes. */
static mb_status_t check_keys(mb__pb_t *pb, const mb__sweep_bench_t *b,
                              const mb_cfg_node_t *m, const char *path,
                              int own) {
  const char *keys[40];
  bench_keys(b, keys);
  for (size_t i = 0; m && i < m->count; i++) {
    const char *k = m->keys[i];
    int ok = own && (!strcmp(k, "name") || !strcmp(k, "sweep") ||
                     !strcmp(k, "model") || !strcmp(k, "csv_shapes"));
    for (size_t j = 0; !ok && keys[j]; j++) ok = !strcmp(keys[j], k);
    if (ok) continue;
    char here[PATH_CAP], valid[1024];
    size_t len = 0;
    valid[0] = '\0';
    for (size_t j = 0; keys[j]; j++) {
      int w = snprintf(valid + len, sizeof valid - len, "%s%s", j ? ", " : "",
                       keys[j]);
      if (w > 0 && (size_t)w < sizeof valid - len) len += (size_t)w;
    }
    mb__path_key(here, sizeof here, path, k);
    return mb__pb_error(pb, m->items[i], here,
                        "%s takes no parameter \"%s\"; valid: %s", b->name, k,
                        valid);
  }
  return MB_OK;
}

static mb_status_t add_sweep(mb__pb_t *pb, mb__sweep_item_t *item) {
  const mb_cfg_node_t *sw = item->sweep;
  char path[PATH_CAP];
  mb__path_key(path, sizeof path, item->path, "sweep");
  if (sw->kind != MB_CFG_MAP)
    return mb__pb_error(pb, sw, path, "expected a map of parameters, got a %s",
                        mb__cfg_kind_name(sw->kind));
  if (sw->count > 64)
    return mb__pb_error(pb, sw, path, "more than 64 parameters");
  mb_status_t st = check_keys(pb, item->bench, sw, path, 0);
  mb_cfg_node_t *cols[64];
  size_t made = 0;
  for (; st == MB_OK && made < sw->count; made++) {
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, path, sw->keys[made]);
    cols[made] = mb__cfg_new(MB_CFG_LIST, sw->items[made]->line, NULL);
    st = cols[made] ? mb__jax_values(pb, MB__JAX_SWEEP, sw->items[made], here,
                                     cols[made])
                    : mb__jax_no_memory();
  }
  if (st == MB_OK)
    st = mb__jax_product(pb, sw, path, (const char *const *)sw->keys, cols,
                         sw->count, MAX_COMBINATIONS, 1, add_combo, item);
  for (size_t i = 0; i < made; i++) mb__cfg_free(cols[i]);
  return st;
}

/* A CSV row's path in messages: the file as written and the row's line
 * there (the row map keeps its CSV line; its cells take the config's). */
static void row_path(char *out, size_t cap, const mb__sweep_item_t *item,
                     const mb_cfg_node_t *row) {
  const mb_cfg_node_t *csv = mb__cfg_get(item->entry, "csv_shapes");
  snprintf(out, cap, "%s.csv_shapes(%s:%d)", item->path, csv->text, row->line);
}

/* The item's `model` preset (item->preset, which the caller frees) and
 * csv_shapes rows (*rows: one pass of the item each). */
static mb_status_t read_sources(mb__pb_t *pb, mb__sweep_item_t *item,
                                mb_cfg_node_t **rows, char *why) {
  const mb_cfg_node_t *model = mb__cfg_get(item->entry, "model");
  const mb_cfg_node_t *csv = mb__cfg_get(item->entry, "csv_shapes");
  char here[PATH_CAP], file[4096];
  mb_status_t st = MB_OK;
  if (model) {
    const char *keys[40];
    mb_cfg_node_t *preset;
    bench_keys(item->bench, keys);
    mb__path_key(here, sizeof here, item->path, "model");
    st = mb__sweep_preset(pb, model, here, keys, &preset);
    item->preset = preset;
  }
  if (st != MB_OK || !csv) return st;
  mb__path_key(here, sizeof here, item->path, "csv_shapes");
  st = mb__sweep_csv(pb, csv, here, rows, file, sizeof file, why, WHY_CAP);
  for (size_t i = 0; st == MB_OK && *rows && i < (*rows)->count; i++) {
    mb_cfg_node_t *row = (*rows)->items[i];
    char at[PATH_CAP];
    row_path(at, sizeof at, item, row);
    for (size_t k = 0; k < row->count; k++)
      mb__sweep_relocate(row->items[k], csv->line);
    st = check_keys(pb, item->bench, row, at, 0);
  }
  return st;
}

static mb_status_t read_item(mb__pb_t *pb, mb__sweep_item_t *item, char *why,
                             const char **op, mb_cfg_node_t **rows) {
  const mb_cfg_node_t *n = mb__cfg_get(item->entry, "name"), *csv;
  char here[PATH_CAP];
  if (!n) return mb__pb_error(pb, item->entry, item->path, "`name` is missing");
  mb__path_key(here, sizeof here, item->path, "name");
  mb_status_t st = mb__pb_string(pb, n, here, &item->name);
  if (st != MB_OK) return st;
  for (size_t i = 0; i < NUM_BENCHES && !item->bench; i++)
    if (!strcmp(k_benches[i].name, item->name)) item->bench = &k_benches[i];
  const mb__jax_name_t *def = mb__jax_name_find(MB__JAX_SWEEP, item->name);
  if (!def)
    return mb__jax_name_error(pb, MB__JAX_SWEEP, n, here, "name", item->name);
  *op = def->op;
  if (!item->bench) mb__jax_skip_reason(why, WHY_CAP, "name", def);
  const mb_cfg_node_t *layers[] = {item->entry, item->global};
  for (size_t l = 0; l < 2 && st == MB_OK; l++) {
    if (!layers[l]) continue;
    if ((csv = mb__cfg_get(layers[l], "csv_path")) && !*item->csv) {
      mb__path_key(here, sizeof here, l ? "global" : item->path, "csv_path");
      st = mb__jax_csv_path(pb, csv, here, item->name, item->csv,
                            sizeof item->csv);
    }
    const mb_cfg_node_t *trace = mb__cfg_get(layers[l], "trace_dir");
    if (st == MB_OK && trace) {
      mb__path_key(here, sizeof here, l ? "global" : item->path, "trace_dir");
      st = mb__jax_trace_dir(pb, trace, here);
    }
    if (st == MB_OK)
      st = mb__jax_ignore(pb, layers[l], k_ignored_keys, &item->ignored);
  }
  if (st != MB_OK || *why) return st;
  item->sweep = mb__cfg_get(item->entry, "sweep");
  st = check_keys(pb, item->bench, item->global, "global", 0);
  if (st == MB_OK) st = check_keys(pb, item->bench, item->entry, item->path, 1);
  return st == MB_OK ? read_sources(pb, item, rows, why) : st;
}

static mb_status_t add_item(mb__pb_t *pb, const mb_cfg_node_t *global,
                            const mb_cfg_node_t *entry, const char *path) {
  if (entry->kind != MB_CFG_MAP)
    return mb__pb_error(pb, entry, path,
                        "expected a map (name, sweep, ...), "
                        "got a %s",
                        mb__cfg_kind_name(entry->kind));
  mb__sweep_item_t item = {
      .name = "", .global = global, .entry = entry, .path = path};
  char why[WHY_CAP] = "";
  const char *op = NULL;
  mb_cfg_node_t *rows = NULL;
  mb_status_t st = read_item(pb, &item, why, &op, &rows);
  if (st == MB_OK && *why) { /* one entry says why; parameters unread */
    const mb__jax_skip_t skip = {item.name, op,   why,         item.csv,
                                 entry,     path, item.ignored};
    st = mb__jax_add_skipped(pb, &skip);
  }
  /* csv_shapes: the item once per row (the row's keys over the item's) */
  for (size_t r = 0; st == MB_OK && !*why && r < (rows ? rows->count : 1);
       r++) {
    item.row = rows ? rows->items[r] : NULL;
    if (rows) row_path(item.row_path, sizeof item.row_path, &item, item.row);
    st = item.sweep ? add_sweep(pb, &item) : add_combo(pb, &item, NULL);
  }
  mb__cfg_free(rows);
  mb__cfg_free((mb_cfg_node_t *)item.preset);
  cJSON_Delete(item.ignored);
  return st;
}

mb_status_t mb__schema_jax_sweep(mb__pb_t *pb) {
  static const char *const k_top[] = {"global", "benchmarks", "hardware", NULL};
  static const char *const k_hardware[] = {"hardware", NULL};
  mb_status_t st = mb__pb_check_keys(pb, pb->root, "", k_top);
  const mb_cfg_node_t *global = mb__cfg_get(pb->root, "global");
  const mb_cfg_node_t *list = mb__cfg_get(pb->root, "benchmarks");
  cJSON *ignored = NULL;
  if (st == MB_OK && global && global->kind != MB_CFG_MAP)
    return mb__pb_error(pb, global, "global", "expected a map, got a %s",
                        mb__cfg_kind_name(global->kind));
  if (st == MB_OK && (!list || list->kind != MB_CFG_LIST))
    return mb__pb_error(pb, list ? list : pb->root, "benchmarks",
                        "expected a list of benchmarks");
  /* The machine's peak figures, for the suite's roofline: ours measures
   * its own. */
  if (st == MB_OK) st = mb__jax_ignore(pb, pb->root, k_hardware, &ignored);
  cJSON_Delete(ignored);
  for (size_t i = 0; st == MB_OK && i < list->count; i++) {
    char path[PATH_CAP];
    mb__path_index(path, sizeof path, "benchmarks", i);
    st = add_item(pb, global, list->items[i], path);
  }
  return st;
}
