/* Plans: the entries a config file expands to, the front door that picks
 * the schema (the --filter / --max-flop / --backend / timing passes are
 * plan_passes.c's), and running an entry with its baseline's speedup. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mb_fnv.h"
#include "plan/jax_names.h"
#include "plan/plan_internal.h"
#include "rng.h"
#include "results/result.h"

/* The slot of `name`, or of the empty slot where it would go. */
static size_t name_slot(const mb_plan_t *plan, const char *name) {
  size_t mask = plan->names_cap - 1, i = (size_t)mb__fnv1a_str(name) & mask;
  while (plan->names[i] && strcmp(plan->entries[plan->names[i] - 1].name, name))
    i = (i + 1) & mask;
  return i;
}

static int name_taken(const mb_plan_t *plan, const char *name) {
  return plan->names_cap && plan->names[name_slot(plan, name)] != 0;
}

/* Rebuilds the set for entries [0, count) with room for `want` names. */
mb_status_t mb__plan_rehash_names(mb_plan_t *plan, size_t want) {
  size_t cap = 64;
  while (cap < 2 * want) cap *= 2;
  size_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  free(plan->names);
  plan->names = slots;
  plan->names_cap = cap;
  for (size_t i = 0; i < plan->count; i++)
    plan->names[name_slot(plan, plan->entries[i].name)] = i + 1;
  return MB_OK;
}

void mb__plan_entry_free(plan_entry_t *e) {
  char *fields[] = {e->name,        e->group,          e->op,
                    e->model,       e->recipe,         e->mode,
                    e->shape_name,  e->device_request, e->skip_reason,
                    e->csv_path,    e->backend,        e->impl,
                    e->baseline_key};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) free(fields[i]);
  cJSON_Delete(e->config);
}

void mb_plan_destroy(mb_plan_t *plan) {
  if (!plan) return;
  for (size_t i = 0; i < plan->count; i++)
    mb__plan_entry_free(&plan->entries[i]);
  free(plan->entries);
  for (size_t i = 0; i < plan->num_notes; i++) free(plan->notes[i]);
  free(plan->notes);
  free(plan->names);
  free(plan->trace);
  free(plan);
}

/* Points the public view's strings and spec at the entry's own copies
 * (again after the array moves). */
void mb__plan_entry_views(plan_entry_t *e) {
  mb_plan_entry_t *p = &e->pub;
  p->name = e->name;
  p->group = e->group;
  p->op = e->op;
  p->model = e->model;
  p->recipe = e->recipe;
  p->mode = e->mode;
  p->shape_name = e->shape_name;
  p->device_request = e->device_request;
  p->skip_reason = e->skip_reason;
  p->csv_path = e->csv_path;
  p->spec.op = e->op;
  p->spec.params = &p->params;
  p->spec.backend = *e->backend ? e->backend : NULL;
  p->spec.impl = *e->impl ? e->impl : NULL;
}

static char *dup_or_empty(const char *s) {
  return mb__strdup(s ? s : "");
}

/* "name", then "name#2", "name#3", ... until unused. */
static char *unique_name(const mb_plan_t *plan, const char *want) {
  size_t n = strlen(want) + 24;
  char *name = malloc(n);
  if (!name) return NULL;
  snprintf(name, n, "%s", want);
  for (unsigned k = 2; name_taken(plan, name); k++)
    snprintf(name, n, "%s#%u", want, k);
  return name;
}

mb_status_t mb__plan_add(mb__pb_t *pb, const mb__plan_item_t *it) {
  mb_plan_t *plan = pb->plan;
  cJSON *config = it->config;
  const mb_op_t *op = mb_op_find(it->op);
  if (!op) {
    cJSON_Delete(config);
    return mb__pb_error(pb, it->at, it->path, "%s", mb_error_last());
  }
  const int unsupported = it->unsupported && *it->unsupported;
  mb_op_params_t params = it->params;
  mb_op_apply_alias(it->op, &params);
  const int resolved = mb_op_resolve(op, &params) == MB_OK;
  if (!resolved && !unsupported) {
    cJSON_Delete(config);
    return mb__pb_error(pb, it->at, it->path, "%s", mb_error_last());
  }
  if (2 * (plan->count + 1) > plan->names_cap &&
      mb__plan_rehash_names(plan, plan->count + 1) != MB_OK) {
    cJSON_Delete(config);
    return MB_ERR_NO_MEMORY;
  }
  if (plan->count == plan->cap) {
    size_t cap = plan->cap ? 2 * plan->cap : 64;
    plan_entry_t *grown = realloc(plan->entries, cap * sizeof *grown);
    if (!grown) {
      cJSON_Delete(config);
      return mb__fail(MB_ERR_NO_MEMORY, "out of memory building the plan");
    }
    plan->entries = grown;
    plan->cap = cap;
    for (size_t i = 0; i < plan->count; i++)
      mb__plan_entry_views(&plan->entries[i]);
  }
  plan_entry_t *e = &plan->entries[plan->count];
  memset(e, 0, sizeof *e);
  e->config = config;
  e->name = unique_name(plan, it->name ? it->name : it->op);
  char **fields[] = {&e->group,          &e->op,          &e->model,
                     &e->recipe,         &e->mode,        &e->shape_name,
                     &e->device_request, &e->skip_reason, &e->csv_path,
                     &e->backend,        &e->impl,        &e->baseline_key};
  const char *values[] = {
      it->group,          it->op,
      it->model,          it->recipe,
      it->mode,           it->shape_name,
      it->device_request, unsupported ? it->unsupported : it->skip_reason,
      it->csv_path,       it->spec.backend,
      it->spec.impl,      it->baseline_key};
  int ok = e->name != NULL;
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
    ok &= (*fields[i] = dup_or_empty(values[i])) != NULL;
  if (!ok) {
    mb__plan_entry_free(e);
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory building the plan");
  }
  e->is_baseline = it->is_baseline;
  e->unsupported = unsupported;
  e->median_ns = NAN;
  e->pub = (mb_plan_entry_t)MB_PLAN_ENTRY_INIT;
  e->pub.params = it->params; /* as written: mb_bench_run resolves again */
  e->pub.spec = it->spec;
  if (!it->seed_given) e->pub.spec.flags |= MB_BENCH_FRESH_SAMPLE;
  /* An entry that cannot run does no work (and its params may not have
   * resolved). */
  e->pub.flop = unsupported ? 0.0 : mb_op_flop(op, &params);
  e->pub.bytes = unsupported ? 0.0 : mb_op_bytes(op, &params);
  e->pub.baseline = SIZE_MAX;
  mb__plan_entry_views(e);
  plan->names[name_slot(plan, e->name)] = plan->count + 1;
  plan->count++;
  return MB_OK;
}

mb_status_t mb__plan_note(mb__pb_t *pb, const char *fmt, ...) {
  mb_plan_t *plan = pb->plan;
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  for (size_t i = 0; i < plan->num_notes; i++)
    if (!strcmp(plan->notes[i], text)) return MB_OK;
  char **grown = realloc(plan->notes, (plan->num_notes + 1) * sizeof *grown);
  char *copy = grown ? mb__strdup(text) : NULL;
  if (grown) plan->notes = grown;
  if (!copy) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  plan->notes[plan->num_notes++] = copy;
  return MB_OK;
}

mb_status_t mb__plan_set_trace(mb__pb_t *pb, const char *key,
                               const char *path) {
  mb_plan_t *plan = pb->plan;
  if (plan->trace) /* one trace per run: the first asked for */
    return strcmp(plan->trace, path)
               ? mb__plan_note(pb,
                               "%s: `%s`: one trace per run, written to %s "
                               "(the file's other trace paths are not)",
                               pb->file, key, plan->trace)
               : MB_OK;
  if (!(plan->trace = mb__strdup(path)))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  return mb__plan_note(pb,
                       "%s: `%s`: the run's trace (Chrome/Perfetto JSON) "
                       "goes to %s (--trace FILE chooses another)",
                       pb->file, key, path);
}

const char *mb_plan_trace(const mb_plan_t *plan) {
  return plan && plan->trace ? plan->trace : "";
}

/* ---- the front door -------------------------------------------------------
 */

static int has_key(const mb_cfg_node_t *map, const char *key) {
  return mb__cfg_get(map, key) != NULL;
}

static const struct {
  const char *name;
  mb_status_t (*read)(mb__pb_t *pb);
} k_schemas[] = {
    {"native", mb__schema_native},
    {"torchao", mb__schema_torchao},
    {"jax", mb__schema_jax},       /* the suite's legacy layout */
    {"jax", mb__schema_jax_sweep}, /* its current one */
};
enum { NATIVE, TORCHAO, JAX_LEGACY, JAX_SWEEP };

/* The JAX suite's current layout: `global:` or `hardware:` (no other
 * schema has them), or a first item that sweeps with `sweep:` or names
 * a benchmark by `name:` alone -- a native item names its op, ops or
 * model, and has no `sweep` key. */
static int is_jax_sweep(const mb_cfg_node_t *root, const mb_cfg_node_t *b) {
  static const char *const k_native[] = {"op", "ops", "model"};
  if (has_key(root, "global") || has_key(root, "hardware")) return 1;
  if (!b || b->kind != MB_CFG_LIST || !b->count) return 0;
  const mb_cfg_node_t *first = b->items[0];
  if (has_key(first, "sweep")) return 1;
  for (size_t i = 0; i < sizeof k_native / sizeof *k_native; i++)
    if (has_key(first, k_native[i])) return 0;
  const mb_cfg_node_t *name = mb__cfg_get(first, "name");
  return name && name->kind == MB_CFG_STRING && name->text &&
         mb__jax_name_find(MB__JAX_SWEEP, name->text);
}

/* torchao's top-level keys; a `benchmarks` list whose items name a
 * `benchmark_name` (the JAX suite's legacy layout) or its current layout;
 * anything else is read as native. */
static size_t detect_schema(const mb_cfg_node_t *root) {
  static const char *const k_torchao[] = {"benchmark_mode",
                                          "quantization_config_recipe_names",
                                          "model_params", "output_dir"};
  for (size_t i = 0; i < sizeof k_torchao / sizeof *k_torchao; i++)
    if (has_key(root, k_torchao[i])) return TORCHAO;
  const mb_cfg_node_t *b = mb__cfg_get(root, "benchmarks");
  if (b && b->kind == MB_CFG_LIST && b->count > 0 &&
      has_key(b->items[0], "benchmark_name"))
    return JAX_LEGACY;
  return is_jax_sweep(root, b) ? JAX_SWEEP : NATIVE;
}

static mb_status_t build(const mb_cfg_node_t *root, const char *name,
                         const mb_plan_options_t *opts, mb_plan_t **out) {
  mb_plan_t *plan = calloc(1, sizeof *plan);
  if (!plan) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  mb__pb_t pb = {plan, name, root};
  mb_status_t st = MB_OK;
  if (root->kind != MB_CFG_MAP) {
    st = mb__pb_error(&pb, root, NULL,
                      "the document must be a map (e.g. `benchmarks: [...]`), "
                      "got a %s",
                      mb__cfg_kind_name(root->kind));
  } else {
    size_t schema = detect_schema(root);
    plan->schema = k_schemas[schema].name;
    st = k_schemas[schema].read(&pb);
  }
  if (st == MB_OK && plan->count == 0)
    st = mb__pb_error(&pb, root, NULL, "the file defines no benchmarks");
  if (st == MB_OK && opts) st = mb__plan_passes(&pb, opts);
  if (st != MB_OK) {
    mb_plan_destroy(plan);
    return st;
  }
  mb__plan_link_baselines(plan);
  *out = plan;
  return MB_OK;
}

/* The caller's options (an older, shorter struct included) over the
 * defaults into *opts. */
static mb_status_t check_opts(const mb_plan_options_t *given,
                              mb_plan_options_t *opts, mb_plan_t **out) {
  if (!out) return mb__fail(MB_ERR_INVALID_ARG, "mb_plan: NULL out");
  *out = NULL;
  *opts = (mb_plan_options_t)MB_PLAN_OPTIONS_INIT;
  return given ? mb__struct_in(MB__STRUCT_PLAN_OPTIONS, "mb_plan", given, opts)
               : MB_OK;
}

mb_status_t mb_plan_load(const char *path, const mb_plan_options_t *given,
                         mb_plan_t **out) {
  mb_plan_options_t full, *opts = &full;
  mb_status_t st = check_opts(given, opts, out);
  if (st != MB_OK) return st;
  if (!path) return mb__fail(MB_ERR_INVALID_ARG, "mb_plan_load: NULL path");
  mb_cfg_node_t *root;
  if ((st = mb__cfg_parse_file(path, &root)) != MB_OK) return st;
  st = build(root, path, opts, out);
  mb__cfg_free(root);
  return st;
}

mb_status_t mb_plan_parse(const char *text, size_t len, const char *name,
                          const mb_plan_options_t *given, mb_plan_t **out) {
  mb_plan_options_t full, *opts = &full;
  mb_status_t st = check_opts(given, opts, out);
  if (st != MB_OK) return st;
  if (!text) return mb__fail(MB_ERR_INVALID_ARG, "mb_plan_parse: NULL text");
  /* The parsers want a terminated string; `text` need not be one. */
  char *copy = malloc(len + 1);
  if (!copy) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  memcpy(copy, text, len);
  copy[len] = '\0';
  mb_cfg_node_t *root;
  name = name ? name : "(config)";
  st = mb__cfg_parse_text(copy, len, name, &root);
  free(copy);
  if (st != MB_OK) return st;
  st = build(root, name, opts, out);
  mb__cfg_free(root);
  return st;
}

/* ---- reading and running --------------------------------------------------
 */

const char *mb_plan_schema(const mb_plan_t *plan) {
  return plan ? plan->schema : "";
}

size_t mb_plan_count(const mb_plan_t *plan) {
  return plan ? plan->count : 0;
}

mb_status_t mb_plan_entry(const mb_plan_t *plan, size_t index,
                          mb_plan_entry_t *out) {
  if (!plan || !out || index >= plan->count)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_plan_entry: index %zu of %zu",
                    index, plan ? plan->count : 0);
  return mb__struct_out(MB__STRUCT_PLAN_ENTRY, "mb_plan_entry",
                        &plan->entries[index].pub, out);
}

size_t mb_plan_note_count(const mb_plan_t *plan) {
  return plan ? plan->num_notes : 0;
}

const char *mb_plan_note(const mb_plan_t *plan, size_t index) {
  return plan && index < plan->num_notes ? plan->notes[index] : "";
}

/* A result for an entry that does not run here, with its identity. */
static mb_status_t skipped_result(const plan_entry_t *e, mb_result_t **out) {
  const mb_op_t *op = mb_op_find(e->op);
  mb_op_params_t params = e->pub.params;
  mb_op_apply_alias(e->op, &params);
  mb_status_t st = mb_op_resolve(op, &params);
  if (st != MB_OK && !e->unsupported) return st;
  if (st != MB_OK) params = e->pub.params; /* as the plan has it */
  mb_bench_spec_t spec = e->pub.spec;
  if (!spec.backend) spec.backend = e->device_request;
  mb_result_t *r = mb__result_new(mb_op_name(op), mb_op_shape_syntax(op),
                                  &params, &spec, NULL);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  mb__result_set_status(r, MB_RESULT_SKIPPED, e->skip_reason);
  *out = r;
  return MB_OK;
}

static mb_status_t default_runner(void *user, mb_context_t *ctx, size_t index,
                                  const mb_bench_spec_t *spec,
                                  mb_result_t **out) {
  (void)user, (void)index;
  return mb_bench_run(ctx, spec, out);
}

mb_status_t mb_plan_run(mb_context_t *ctx, mb_plan_t *plan, size_t index,
                        mb_result_t **out) {
  return mb_plan_run_with(ctx, plan, index, NULL, NULL, out);
}

mb_status_t mb_plan_run_with(mb_context_t *ctx, mb_plan_t *plan, size_t index,
                             mb_bench_runner_fn runner, void *user,
                             mb_result_t **out) {
  if (!ctx || !plan || !out || index >= plan->count)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_plan_run: bad argument (index %zu "
                    "of %zu)",
                    index, plan ? plan->count : 0);
  *out = NULL;
  plan_entry_t *e = &plan->entries[index];
  mb_result_t *r = NULL;
  if (!runner) runner = default_runner;
  mb_status_t st = *e->skip_reason ? skipped_result(e, &r)
                                   : runner(user, ctx, index, &e->pub.spec, &r);
  if (st != MB_OK) return st;
  mb__result_plan_t facts = {e->name, e->recipe,     e->model,
                             e->mode, e->shape_name, NULL};
  if (e->config && !(facts.config = cJSON_Duplicate(e->config, 1))) {
    mb_result_destroy(r);
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  }
  if ((st = mb__result_set_plan(r, &facts)) != MB_OK) {
    mb_result_destroy(r);
    return st;
  }
  if (r->info.status == MB_RESULT_OK && r->stats.median > 0)
    e->median_ns = r->stats.median;
  double base = e->pub.baseline < plan->count
                    ? plan->entries[e->pub.baseline].median_ns
                    : NAN;
  if (e->is_baseline && isfinite(e->median_ns))
    r->info.speedup_vs_baseline = 1.0;
  else if (isfinite(base) && isfinite(e->median_ns))
    r->info.speedup_vs_baseline = base / e->median_ns;
  *out = r;
  return MB_OK;
}

/* Fisher-Yates under splitmix64, then each entry's baseline pulled in just
 * before its first dependent: still random, and every speedup computable
 * when its result completes. */
mb_status_t mb_plan_order(const mb_plan_t *plan, uint64_t seed, size_t *order) {
  if (!plan || (!order && plan->count))
    return mb__fail(MB_ERR_INVALID_ARG, "mb_plan_order: NULL argument");
  const size_t n = plan->count;
  size_t *shuffled = malloc((n ? n : 1) * sizeof *shuffled);
  unsigned char *placed = calloc(n ? n : 1, 1);
  if (!shuffled || !placed) {
    free(shuffled);
    free(placed);
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  }
  for (size_t i = 0; i < n; i++) shuffled[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(mb__rng_u64(seed, i) % i);
    size_t t = shuffled[i - 1];
    shuffled[i - 1] = shuffled[j];
    shuffled[j] = t;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    size_t e = shuffled[i];
    if (placed[e]) continue;
    size_t b = plan->entries[e].pub.baseline;
    if (b < n && !placed[b]) {
      placed[b] = 1;
      order[k++] = b;
    }
    placed[e] = 1;
    order[k++] = e;
  }
  free(shuffled);
  free(placed);
  return MB_OK;
}
