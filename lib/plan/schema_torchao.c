/* torchao's microbenchmark schema (its benchmarks/microbenchmarks YAML):
 * benchmark_mode, quantization_config_recipe_names,
 * sparsity_config_recipe_names, output_dir, the float8 training options,
 * and model_params (a list of maps, or one map), each item expanded over
 * its matrix_shapes and the recipes, `baseline` first and always, since
 * every speedup is measured against it, then the sparsity pairs. Keys that only
 * steer PyTorch (torch.compile, the profilers) are accepted, recorded in
 * each entry's `config.ignored` and noted once. docs/config.md, "torchao
 * schema". */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/foreign.h"
#include "microbench/preset.h"
#include "plan/models.h"
#include "plan/torchao_recipes.h"

#define PATH_CAP 512
#define NAME_CAP 1024

static const char *const k_top_keys[] = {"benchmark_mode",
                                         "quantization_config_recipe_names",
                                         "sparsity_config_recipe_names",
                                         "output_dir",
                                         "model_params",
                                         "scaling_type_input",
                                         "scaling_type_weight",
                                         "scaling_type_grad_output",
                                         "scaling_granularity",
                                         "use_fast_accum",
                                         "repeat_n",
                                         NULL};

static const char *const k_group_keys[] = {"name",
                                           "matrix_shapes",
                                           "high_precision_dtype",
                                           "model_type",
                                           "device",
                                           "use_torch_compile",
                                           "torch_compile_mode",
                                           "compile",
                                           "enable_profiler",
                                           "enable_memory_profiler",
                                           NULL};

/* Accepted so torchao's files load unchanged; nothing here compiles a graph
 * or runs PyTorch's memory profiler. (enable_profiler asks for the run's
 * trace: read_profiler.) */
static const char *const k_torch_only[] = {"use_torch_compile",
                                           "torch_compile_mode", "compile",
                                           "enable_memory_profiler", NULL};

static const char *const k_shape_keys[] = {"name", "shapes", "min_power",
                                           "max_power", NULL};

/* The float8 training options: checked and recorded in `config.training`.
 * They do not steer the run: a recipe fixes its own scaling (OPS.md,
 * "Quantization recipes"), and timing is libmicrobench's, not repeat_n. */
static const char *const k_scaling_types[] = {"dynamic", "disabled", NULL};
static const char *const k_granularities[] = {"tensorwise", "rowwise",
                                              "columnwise", NULL};
typedef enum opt_kind { OPT_CHOICE, OPT_BOOL, OPT_COUNT } opt_kind_t;
static const struct training_opt {
  const char *key;
  opt_kind_t kind;
  const char *const *choices;
} k_training[] = {
    {"scaling_type_input", OPT_CHOICE, k_scaling_types},
    {"scaling_type_weight", OPT_CHOICE, k_scaling_types},
    {"scaling_type_grad_output", OPT_CHOICE, k_scaling_types},
    {"scaling_granularity", OPT_CHOICE, k_granularities},
    {"use_fast_accum", OPT_BOOL, NULL},
    {"repeat_n", OPT_COUNT, NULL},
};

/* torch's device strings; a NULL backend: no backend of ours runs there,
 * so the entry is kept and reported skipped (--backend overrides). */
static const struct device_row {
  const char *device, *backend, *what;
} k_devices[] = {
    {"cuda", "cuda", "NVIDIA GPU"},
    {"cpu", "cpu", "CPU"},
    {"xpu", NULL, "Intel GPU"},
    {"mps", NULL, "Apple GPU"},
};

/* high_precision_dtype: what torchao accepts, by the text str(torch.dtype)
 * gives (its CSV's `high_precision_dtype` column). */
static const struct hp_row {
  mb_dtype_t dtype;
  const char *torch;
} k_hp_dtypes[] = {
    {MB_DTYPE_F32, "torch.float32"},
    {MB_DTYPE_BF16, "torch.bfloat16"},
    {MB_DTYPE_F16, "torch.float16"},
};

/* What holds for every entry of the file. */
typedef struct file_facts {
  const char *mode;
  const char *output_dir;   /* as written; torchao's default without one */
  mb__torchao_recipes_t rc; /* the recipes and sparsity pairs */
  char csv[4096];           /* "" none */
  cJSON *training;          /* NULL none */
} file_facts_t;

/* One model_params item. */
typedef struct group {
  size_t index;
  const char *name, *model, *device, *backend;
  char skip[256];
  mb_dtype_t hp;
  cJSON *ignored; /* NULL none */
  int named;      /* `name` given (else torchao makes one per entry) */
  const char *hp_torch;
  const mb_cfg_node_t *compile_mode; /* NULL: torchao's "default" */
} group_t;

static mb_status_t no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
}

static int in_list(const char *const *names, const char *s) {
  for (size_t i = 0; names[i]; i++)
    if (!strcmp(names[i], s)) return 1;
  return 0;
}

static void join_names(char *buf, size_t cap, const char *const *names) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; names[i] && len < cap; i++) {
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
    if (w < 0) break;
    len += (size_t)w;
  }
}

/* ---- file-wide keys ------------------------------------------------------
 */

static mb_status_t read_mode(mb__pb_t *pb, file_facts_t *f) {
  const mb_cfg_node_t *n = mb__cfg_get(pb->root, "benchmark_mode");
  if (!n) return MB_OK; /* torchao's default */
  mb_status_t st = mb__pb_string(pb, n, "benchmark_mode", &f->mode);
  return st == MB_OK ? mb__mode_check(pb, n, "benchmark_mode", f->mode) : st;
}

static mb_status_t read_output_dir(mb__pb_t *pb, file_facts_t *f) {
  const mb_cfg_node_t *n = mb__cfg_get(pb->root, "output_dir");
  const char *dir;
  if (!n) return MB_OK;
  mb_status_t st = mb__pb_string(pb, n, "output_dir", &dir);
  if (st != MB_OK) return st;
  if (!*dir)
    return mb__pb_error(pb, n, "output_dir",
                        "is empty: give a directory (results.csv goes there)");
  f->output_dir = dir;
  return mb__foreign_join(pb, n, "output_dir", dir, "results.csv", f->csv,
                          sizeof f->csv);
}

static mb_status_t read_training_opt(mb__pb_t *pb, const struct training_opt *o,
                                     const mb_cfg_node_t *n) {
  const char *s;
  int b;
  int64_t v;
  mb_status_t st;
  char valid[256];
  switch (o->kind) {
    case OPT_CHOICE:
      st = mb__pb_string(pb, n, o->key, &s);
      if (st != MB_OK || in_list(o->choices, s)) return st;
      join_names(valid, sizeof valid, o->choices);
      return mb__pb_error(pb, n, o->key, "unknown value \"%s\"; valid: %s", s,
                          valid);
    case OPT_BOOL:
      return mb__pb_bool(pb, n, o->key, &b);
    case OPT_COUNT:
      return mb__pb_int(pb, n, o->key, 1, UINT32_MAX, &v);
  }
  return MB_OK;
}

static mb_status_t read_training(mb__pb_t *pb, file_facts_t *f) {
  for (size_t i = 0; i < sizeof k_training / sizeof *k_training; i++) {
    const mb_cfg_node_t *n = mb__cfg_get(pb->root, k_training[i].key);
    if (!n) continue;
    mb_status_t st = read_training_opt(pb, &k_training[i], n);
    if (st != MB_OK) return st;
    if (!f->training && !(f->training = cJSON_CreateObject()))
      return no_memory();
    cJSON *v = mb__cfg_to_cjson(n);
    if (!v) return no_memory();
    cJSON_AddItemToObject(f->training, k_training[i].key, v);
  }
  return MB_OK;
}

/* ---- one model_params item ------------------------------------------------
 */

static mb_status_t read_string_key(mb__pb_t *pb, const mb_cfg_node_t *item,
                                   const char *path, const char *key,
                                   const char **out) {
  const mb_cfg_node_t *n = mb__cfg_get(item, key);
  char here[PATH_CAP];
  if (!n) return MB_OK; /* keeps the default in *out */
  mb__path_key(here, sizeof here, path, key);
  mb_status_t st = mb__pb_string(pb, n, here, out);
  if (st == MB_OK && !**out) st = mb__pb_error(pb, n, here, "is empty");
  return st;
}

static mb_status_t read_hp_dtype(mb__pb_t *pb, const mb_cfg_node_t *item,
                                 const char *path, group_t *g) {
  const char *name = "torch.bfloat16";
  const mb_cfg_node_t *n = mb__cfg_get(item, "high_precision_dtype");
  char here[PATH_CAP];
  mb__path_key(here, sizeof here, path, "high_precision_dtype");
  mb_status_t st =
      read_string_key(pb, item, path, "high_precision_dtype", &name);
  if (st != MB_OK) return st;
  if (mb_dtype_from_name(name, &g->hp) != MB_OK)
    return mb__pb_error(pb, n, here, "%s", mb_error_last());
  for (size_t i = 0; i < sizeof k_hp_dtypes / sizeof *k_hp_dtypes; i++)
    if (k_hp_dtypes[i].dtype == g->hp) {
      g->hp_torch = k_hp_dtypes[i].torch;
      return MB_OK;
    }
  return mb__pb_error(pb, n, here,
                      "\"%s\" is not a high-precision dtype; valid: "
                      "torch.float32, torch.bfloat16, torch.float16",
                      name);
}

static mb_status_t read_device(mb__pb_t *pb, const mb_cfg_node_t *item,
                               const char *path, group_t *g) {
  const mb_cfg_node_t *n = mb__cfg_get(item, "device");
  char here[PATH_CAP];
  if (!n) return MB_OK; /* the best backend with a device */
  mb__path_key(here, sizeof here, path, "device");
  mb_status_t st = mb__pb_string(pb, n, here, &g->device);
  if (st != MB_OK) return st;
  for (size_t i = 0; i < sizeof k_devices / sizeof *k_devices; i++) {
    const struct device_row *d = &k_devices[i];
    if (strcmp(d->device, g->device)) continue;
    g->backend = d->backend;
    if (!d->backend)
      snprintf(g->skip, sizeof g->skip,
               "device \"%s\" (%s) is not available here: libmicrobench has "
               "no %s backend; override the backend with cpu or cuda "
               "(mbench --backend, Python backend=)",
               d->device, d->what, d->device);
    return MB_OK;
  }
  return mb__pb_error(pb, n, here,
                      "unknown device \"%s\"; valid: cuda, cpu, xpu, mps",
                      g->device);
}

/* enable_profiler: true asks for the run's trace where torchao's profiler
 * writes, the output directory (beside results.csv): OUTPUT_DIR/trace.json
 * (docs/measurement.md, "Traces"). */
static mb_status_t read_profiler(mb__pb_t *pb, const file_facts_t *f,
                                 const mb_cfg_node_t *item, const char *path) {
  const mb_cfg_node_t *n = mb__cfg_get(item, "enable_profiler");
  char here[PATH_CAP], trace[4096];
  int on = 0;
  if (!n) return MB_OK;
  mb__path_key(here, sizeof here, path, "enable_profiler");
  mb_status_t st = mb__pb_bool(pb, n, here, &on);
  if (st == MB_OK && on)
    st = mb__foreign_join(pb, n, here, f->output_dir, "trace.json", trace,
                          sizeof trace);
  return st == MB_OK && on ? mb__plan_set_trace(pb, "enable_profiler", trace)
                           : st;
}

static mb_status_t read_group(mb__pb_t *pb, const mb_cfg_node_t *item,
                              const char *path, group_t *g) {
  mb_status_t st = mb__pb_check_keys(pb, item, path, k_group_keys);
  if (st == MB_OK)
    st = read_string_key(pb, item, path, "model_type", &g->model);
  if (st == MB_OK) {
    char here[PATH_CAP];
    mb__path_key(here, sizeof here, path, "model_type");
    st = mb__model_check(pb, mb__cfg_get(item, "model_type"), here, g->model);
  }
  /* Unnamed groups take the model's name (torchao's README example). */
  g->name = g->model;
  g->named = mb__cfg_get(item, "name") != NULL;
  g->compile_mode = mb__cfg_get(item, "torch_compile_mode");
  if (st == MB_OK) st = read_string_key(pb, item, path, "name", &g->name);
  if (st == MB_OK) st = read_hp_dtype(pb, item, path, g);
  if (st == MB_OK) st = read_device(pb, item, path, g);
  for (size_t i = 0; st == MB_OK && i < item->count; i++)
    if (in_list(k_torch_only, item->keys[i]))
      st = mb__foreign_ignore(pb, &g->ignored, item->keys[i], item->items[i],
                              "is PyTorch-only: recorded, has no effect here");
  return st;
}

/* ---- entries --------------------------------------------------------------
 */

/* The entry as torchao's BenchmarkConfig.to_dict() holds it, filled from the
 * file as its runner fills it (pytorch/ao benchmarks/microbenchmarks/utils.py
 * at dbef6992, BenchmarkConfig.__init__): recorded in `config.torchao` for
 * the writers of torchao's CSV and dashboard layouts (lib/report/torchao.c).
 * `device` and the profiler flags say how a run went, so the writers take
 * them from the result. NULL on OOM. */
static cJSON *torchao_facts(const file_facts_t *f, const group_t *g,
                            const mb__torchao_combo_t *c,
                            const int64_t mkn[3]) {
  const char *recipe = c->quant;
  char name[NAME_CAP], dir[PATH_CAP];
  if (g->named)
    snprintf(name, sizeof name, "%s", g->name);
  else /* torchao's default name, "_compile" and all */
    snprintf(name, sizeof name,
             "benchmark_%s_%s_m%" PRId64 "_k%" PRId64 "_n%" PRId64 "_compile",
             recipe, g->model, mkn[0], mkn[1], mkn[2]);
  snprintf(dir, sizeof dir, "%s/%s", f->output_dir, f->mode);
  cJSON *o = cJSON_CreateObject();
  cJSON *mode = g->compile_mode ? mb__cfg_to_cjson(g->compile_mode)
                                : cJSON_CreateString("default");
  int ok = o && mode && cJSON_AddStringToObject(o, "name", name) &&
           cJSON_AddStringToObject(o, "quantization", recipe) &&
           (c->sparsity ? cJSON_AddStringToObject(o, "sparsity", c->sparsity)
                        : cJSON_AddNullToObject(o, "sparsity")) &&
           cJSON_AddNumberToObject(o, "m", (double)mkn[0]) &&
           cJSON_AddNumberToObject(o, "k", (double)mkn[1]) &&
           cJSON_AddNumberToObject(o, "n", (double)mkn[2]) &&
           cJSON_AddStringToObject(o, "high_precision_dtype", g->hp_torch) &&
           cJSON_AddItemToObject(o, "torch_compile_mode", mode);
  if (ok) mode = NULL; /* o owns it */
  ok = ok && cJSON_AddStringToObject(o, "model_type", g->model) &&
       cJSON_AddStringToObject(o, "output_dir", dir);
  cJSON_Delete(mode);
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}

/* One shape under every recipe. */
static mb_status_t add_entries(mb__pb_t *pb, const file_facts_t *f,
                               const group_t *g, const char *shape_name,
                               const int64_t mkn[3], const mb_cfg_node_t *at,
                               const char *path) {
  char seg[64], key[NAME_CAP], name[NAME_CAP], why[512];
  if (shape_name)
    snprintf(seg, sizeof seg, "%s", shape_name);
  else
    snprintf(seg, sizeof seg, "%" PRId64 "x%" PRId64 "x%" PRId64, mkn[0],
             mkn[1], mkn[2]);
  /* The group's index keeps two groups of the same name apart. */
  snprintf(key, sizeof key, "%zu:%s/%s/%s/%s", g->index, g->name, seg, g->model,
           f->mode);
  for (size_t r = 0; r < f->rc.num_combos; r++) {
    const mb__torchao_combo_t *c = &f->rc.combos[r];
    snprintf(name, sizeof name, "%s/%s/%s%s%s", g->name, seg, c->quant,
             c->sparsity ? "+" : "", c->sparsity ? c->sparsity : "");
    mb__plan_item_t it = MB__PLAN_ITEM_INIT;
    it.name = name;
    it.group = g->name;
    it.shape_name = shape_name;
    it.device_request = g->device;
    it.skip_reason = g->skip;
    it.csv_path = f->csv;
    it.baseline_key = key;
    it.spec.backend = g->backend;
    it.at = at;
    it.path = path;
    mb_status_t st = mb__model_item(pb, g->model, c->recipe, f->mode, g->hp,
                                    mkn, &it, why, sizeof why);
    if (st != MB_OK) return st;
    cJSON *facts = torchao_facts(f, g, c, mkn);
    if (!facts) return no_memory();
    const mb__foreign_extra_t extras[] = {
        {"ignored", g->ignored}, {"training", f->training}, {"torchao", facts}};
    it.config = mb__foreign_config(pb, "torchao", name, extras,
                                   sizeof extras / sizeof *extras);
    cJSON_Delete(facts);
    if (!it.config) return MB_ERR_NO_MEMORY;
    if ((st = mb__plan_add(pb, &it)) != MB_OK) return st;
  }
  return MB_OK;
}

/* `shapes: [[M, K, N], ...]` of a custom item. */
static mb_status_t add_custom(mb__pb_t *pb, const file_facts_t *f,
                              const group_t *g, const mb_cfg_node_t *shapes,
                              const char *path) {
  if (shapes->kind != MB_CFG_LIST || shapes->count == 0)
    return mb__pb_error(pb, shapes, path,
                        "expected a non-empty list of [M, K, N], got %s %s",
                        shapes->kind == MB_CFG_LIST ? "an empty" : "a",
                        mb__cfg_kind_name(shapes->kind));
  for (size_t i = 0; i < shapes->count; i++) {
    const mb_cfg_node_t *s = shapes->items[i];
    char here[PATH_CAP], dim[PATH_CAP];
    int64_t mkn[3];
    mb__path_index(here, sizeof here, path, i);
    if (s->kind != MB_CFG_LIST || s->count != 3)
      return mb__pb_error(pb, s, here, "expected [M, K, N], got a %s of %zu",
                          mb__cfg_kind_name(s->kind), s->count);
    for (size_t d = 0; d < 3; d++) {
      mb__path_index(dim, sizeof dim, here, d);
      mb_status_t st =
          mb__pb_int(pb, s->items[d], dim, 1, INT64_C(1) << 40, &mkn[d]);
      if (st != MB_OK) return st;
    }
    mb_status_t st = add_entries(pb, f, g, NULL, mkn, s, here);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

static mb_status_t check_preset_name(mb__pb_t *pb, const mb_cfg_node_t *n,
                                     const char *path, const char *name) {
  char valid[512] = "";
  size_t len = 0;
  for (size_t i = 0; i < mb_preset_count(); i++) {
    const char *p = mb_preset_name(i, NULL);
    if (!strcmp(p, name)) return MB_OK;
    if (len < sizeof valid) {
      int w =
          snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "", p);
      if (w > 0) len += (size_t)w;
    }
  }
  return mb__pb_error(pb, n, path, "unknown shape preset \"%s\"; valid: %s",
                      name, valid);
}

static mb_status_t read_power(mb__pb_t *pb, const mb_cfg_node_t *item,
                              const char *path, const char *key, int *out) {
  const mb_cfg_node_t *n = mb__cfg_get(item, key);
  char here[PATH_CAP];
  int64_t v;
  if (!n) return MB_OK;
  mb__path_key(here, sizeof here, path, key);
  mb_status_t st = mb__pb_int(pb, n, here, 1, 30, &v);
  if (st == MB_OK) *out = (int)v;
  return st;
}

/* A generated or model preset: its shapes, named by the preset. */
static mb_status_t add_preset(mb__pb_t *pb, const file_facts_t *f,
                              const group_t *g, const mb_cfg_node_t *item,
                              const char *path, const char *preset) {
  mb_preset_params_t pp = MB_PRESET_PARAMS_INIT;
  mb_status_t st = read_power(pb, item, path, "min_power", &pp.min_power);
  if (st == MB_OK) st = read_power(pb, item, path, "max_power", &pp.max_power);
  if (st != MB_OK) return st;
  mb_shape_list_t *list = NULL;
  if (mb_preset_shapes(preset, &pp, &list) != MB_OK)
    return mb__pb_error(pb, item, path, "%s", mb_error_last());
  for (size_t i = 0; st == MB_OK && i < mb_shape_list_count(list); i++) {
    const char *name;
    int64_t mkn[3];
    st = mb_shape_list_get(list, i, &name, mkn);
    if (st == MB_OK) st = add_entries(pb, f, g, name, mkn, item, path);
  }
  mb_shape_list_destroy(list);
  return st;
}

static mb_status_t add_shape_item(mb__pb_t *pb, const file_facts_t *f,
                                  const group_t *g, const mb_cfg_node_t *item,
                                  const char *path) {
  char here[PATH_CAP];
  const char *preset;
  mb_status_t st = mb__pb_check_keys(pb, item, path, k_shape_keys);
  if (st != MB_OK) return st;
  const mb_cfg_node_t *name = mb__cfg_get(item, "name");
  const mb_cfg_node_t *shapes = mb__cfg_get(item, "shapes");
  if (!name)
    return mb__pb_error(pb, item, path,
                        "`name` is missing: the shape preset (custom, llama, "
                        "pow2, ...)");
  mb__path_key(here, sizeof here, path, "name");
  if ((st = mb__pb_string(pb, name, here, &preset)) != MB_OK ||
      (st = check_preset_name(pb, name, here, preset)) != MB_OK)
    return st;
  if (strcmp(preset, "custom")) {
    if (!shapes) return add_preset(pb, f, g, item, path, preset);
    mb__path_key(here, sizeof here, path, "shapes");
    return mb__pb_error(pb, shapes, here,
                        "`shapes` goes with name \"custom\"; preset \"%s\" "
                        "has shapes of its own",
                        preset);
  }
  for (size_t i = 0; i < item->count; i++)
    if (!strcmp(item->keys[i], "min_power") ||
        !strcmp(item->keys[i], "max_power")) {
      mb__path_key(here, sizeof here, path, item->keys[i]);
      return mb__pb_error(pb, item->items[i], here,
                          "does not apply to \"custom\" (its shapes are "
                          "listed)");
    }
  if (!shapes)
    return mb__pb_error(pb, item, path,
                        "name \"custom\" needs `shapes: [[M, K, N], ...]`");
  mb__path_key(here, sizeof here, path, "shapes");
  return add_custom(pb, f, g, shapes, here);
}

static mb_status_t add_group(mb__pb_t *pb, const file_facts_t *f,
                             const mb_cfg_node_t *item, const char *path,
                             size_t index) {
  group_t g = {.index = index,
               .model = "linear",
               .device = "",
               .hp = MB_DTYPE_BF16,
               .hp_torch = "torch.bfloat16"};
  mb_status_t st = read_group(pb, item, path, &g);
  if (st == MB_OK) st = read_profiler(pb, f, item, path);
  const mb_cfg_node_t *shapes =
      st == MB_OK ? mb__cfg_get(item, "matrix_shapes") : NULL;
  char here[PATH_CAP];
  mb__path_key(here, sizeof here, path, "matrix_shapes");
  if (st == MB_OK && !shapes)
    st = mb__pb_error(pb, item, path,
                      "`matrix_shapes` is missing: the shapes to run "
                      "(- name: custom / llama / pow2 ...)");
  else if (st == MB_OK && (shapes->kind != MB_CFG_LIST || !shapes->count))
    st = mb__pb_error(pb, shapes, here, "expected a non-empty list, got %s %s",
                      shapes->kind == MB_CFG_LIST ? "an empty" : "a",
                      mb__cfg_kind_name(shapes->kind));
  for (size_t i = 0; st == MB_OK && i < shapes->count; i++) {
    char at[PATH_CAP];
    mb__path_index(at, sizeof at, here, i);
    st = add_shape_item(pb, f, &g, shapes->items[i], at);
  }
  cJSON_Delete(g.ignored);
  return st;
}

static mb_status_t read_model_params(mb__pb_t *pb, const file_facts_t *f) {
  const mb_cfg_node_t *mp = mb__cfg_get(pb->root, "model_params");
  if (!mp)
    return mb__pb_error(pb, pb->root, NULL,
                        "`model_params` is missing: the benchmarks to run "
                        "(model_params: [{name, matrix_shapes, model_type, "
                        "device, ...}])");
  if (mp->kind == MB_CFG_MAP) return add_group(pb, f, mp, "model_params", 0);
  if (mp->kind != MB_CFG_LIST || !mp->count)
    return mb__pb_error(pb, mp, "model_params",
                        "expected a non-empty list of maps (or one map), got "
                        "%s %s",
                        mp->kind == MB_CFG_LIST ? "an empty" : "a",
                        mb__cfg_kind_name(mp->kind));
  mb_status_t st = MB_OK;
  for (size_t i = 0; st == MB_OK && i < mp->count; i++) {
    char path[PATH_CAP];
    mb__path_index(path, sizeof path, "model_params", i);
    st = add_group(pb, f, mp->items[i], path, i);
  }
  return st;
}

mb_status_t mb__schema_torchao(mb__pb_t *pb) {
  file_facts_t f = {.mode = "inference",
                    .output_dir = "benchmarks/microbenchmarks/results"};
  mb_status_t st = mb__pb_check_keys(pb, pb->root, "", k_top_keys);
  if (st == MB_OK) st = read_mode(pb, &f);
  if (st == MB_OK) st = mb__torchao_read_recipes(pb, &f.rc);
  if (st == MB_OK) st = read_output_dir(pb, &f);
  if (st == MB_OK) st = read_training(pb, &f);
  if (st == MB_OK) st = read_model_params(pb, &f);
  mb__torchao_recipes_free(&f.rc);
  cJSON_Delete(f.training);
  return st;
}
