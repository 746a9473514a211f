/* What the JAX suite's two config layouts share: sweep values and their
 * product, the timing keys, csv_path, the XLA/TPU-only keys and the
 * skipped entry of a benchmark we do not run (jax_common.h). */
#include <stdio.h>
#include <string.h>

#include "plan/jax_common.h"
#include "plan/plan_range.h"

mb_status_t mb__jax_no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
}

mb_cfg_node_t *mb__jax_clone(const mb_cfg_node_t *n) {
  mb_cfg_node_t *c = mb__cfg_new(n->kind, n->line, n->text);
  if (!c) return NULL;
  c->number = n->number;
  c->boolean = n->boolean;
  for (size_t i = 0; i < n->count; i++) {
    mb_cfg_node_t *k = mb__jax_clone(n->items[i]);
    if (!k || mb__cfg_append(c, n->kind == MB_CFG_MAP ? n->keys[i] : NULL, k) !=
                  MB_OK) {
      mb__cfg_free(c);
      return NULL;
    }
  }
  return c;
}

mb_status_t mb__jax_values(mb__pb_t *pb, mb__jax_layout_t layout,
                           const mb_cfg_node_t *v, const char *path,
                           mb_cfg_node_t *values) {
  if (v->kind == MB_CFG_MAP)
    return mb__range_expand(
        pb, v, path,
        layout == MB__JAX_LEGACY ? MB__RANGE_ONE_STEP : MB__RANGE_SWEEP,
        mb__pb_number, values);
  if (v->kind == MB_CFG_LIST && !v->count)
    return mb__pb_error(pb, v, path, "an empty list sweeps nothing");
  size_t count = v->kind == MB_CFG_LIST ? v->count : 1;
  for (size_t k = 0; k < count; k++) {
    mb_cfg_node_t *n = mb__jax_clone(v->kind == MB_CFG_LIST ? v->items[k] : v);
    if (!n || mb__cfg_append(values, NULL, n) != MB_OK)
      return mb__jax_no_memory();
  }
  return MB_OK;
}

mb_status_t mb__jax_product(mb__pb_t *pb, const mb_cfg_node_t *at,
                            const char *path, const char *const *keys,
                            mb_cfg_node_t *const *columns, size_t n,
                            size_t limit, int truncate, mb__jax_combo_fn fn,
                            void *ctx) {
  size_t total = 1;
  for (size_t i = 0; i < n && total <= limit; i++) total *= columns[i]->count;
  if (total > limit && !truncate)
    return mb__pb_error(pb, at, path, "more than %zu combinations", limit);
  mb_status_t st = MB_OK;
  if (total > limit) {
    st = mb__plan_note(pb,
                       "%s: %s: more than %zu combinations: the first %zu "
                       "run, as the suite caps them",
                       pb->file, path, limit, limit);
    total = limit;
  }
  for (size_t idx = 0; st == MB_OK && idx < total; idx++) {
    mb_cfg_node_t *map = mb__cfg_new(MB_CFG_MAP, at->line, NULL);
    if (!map) return mb__jax_no_memory();
    size_t rest = idx, pick[64];
    for (size_t i = n; i-- > 0;) {
      pick[i] = rest % columns[i]->count;
      rest /= columns[i]->count;
    }
    for (size_t i = 0; st == MB_OK && i < n; i++) {
      mb_cfg_node_t *v = mb__jax_clone(columns[i]->items[pick[i]]);
      st = v ? mb__cfg_append(map, keys[i], v) : mb__jax_no_memory();
    }
    if (st == MB_OK) st = fn(pb, ctx, map);
    mb__cfg_free(map);
  }
  return st;
}

/* ---- timing, outputs ------------------------------------------------------
 */

/* A count of runs at n into *out, at least lo; n NULL: *out unchanged. */
static mb_status_t runs(mb__pb_t *pb, const mb_cfg_node_t *n, const char *path,
                        int64_t lo, uint32_t *out, int *given) {
  int64_t v;
  *given = n != NULL;
  mb_status_t st = n ? mb__pb_int(pb, n, path, lo, 1000000000, &v) : MB_OK;
  if (n && st == MB_OK) *out = (uint32_t)v;
  return st;
}

mb_status_t mb__jax_num_runs(mb__pb_t *pb, const mb_cfg_node_t *n,
                             const char *path, mb_bench_spec_t *spec) {
  int given;
  mb_status_t st = runs(pb, n, path, 1, &spec->samples, &given);
  if (given && st == MB_OK) spec->criterion = MB_CRITERION_FIXED;
  return st;
}

mb_status_t mb__jax_warmup(mb__pb_t *pb, const mb_cfg_node_t *n,
                           const char *path, mb_bench_spec_t *spec) {
  int given;
  return runs(pb, n, path, 0, &spec->warmup_runs, &given);
}

mb_status_t mb__jax_csv_path(mb__pb_t *pb, const mb_cfg_node_t *n,
                             const char *path, const char *bench, char *out,
                             size_t cap) {
  const char *csv;
  char file[512];
  mb_status_t st = mb__pb_string(pb, n, path, &csv);
  if (st != MB_OK) return st;
  size_t len = strlen(csv);
  if (!len) return mb__pb_error(pb, n, path, "is empty");
  if (len > 4 && !strcmp(csv + len - 4, ".csv")) {
    if (len >= cap)
      return mb__pb_error(pb, n, path, "is too long (%zu bytes at most)",
                          cap - 1);
    memcpy(out, csv, len + 1);
    return MB_OK;
  }
  snprintf(file, sizeof file, "%s.csv", bench);
  return mb__foreign_join(pb, n, path, csv, file, out, cap);
}

mb_status_t mb__jax_trace_dir(mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path) {
  const char *dir;
  mb_status_t st = mb__pb_string(pb, n, path, &dir);
  if (st != MB_OK) return st;
  if (!*dir)
    return mb__pb_error(pb, n, path,
                        "is empty: give a directory (the run's trace goes "
                        "there)");
  if (strstr(dir, "://"))
    return mb__plan_note(pb,
                         "%s: %s: %s is not a local directory: no trace is "
                         "written for it (--trace FILE writes one)",
                         pb->file, path, dir);
  const char *base = strrchr(pb->file, '/');
  base = base ? base + 1 : pb->file;
  const char *dot = strrchr(base, '.');
  char file[512], out[4096];
  snprintf(file, sizeof file, "%.*s.trace.json",
           (int)(dot && dot != base ? dot - base : (long)strlen(base)), base);
  st = mb__foreign_join(pb, n, path, dir, file, out, sizeof out);
  return st == MB_OK ? mb__plan_set_trace(pb, "trace_dir", out) : st;
}

mb_status_t mb__jax_ignore(mb__pb_t *pb, const mb_cfg_node_t *m,
                           const char *const *keys, cJSON **ignored) {
  mb_status_t st = MB_OK;
  for (size_t i = 0; st == MB_OK && keys[i]; i++) {
    const mb_cfg_node_t *v = mb__cfg_get(m, keys[i]);
    if (v)
      st = mb__foreign_ignore(pb, ignored, keys[i], v,
                              "has no effect here (XLA/TPU-only): recorded");
  }
  return st;
}

mb_status_t mb__jax_add(mb__pb_t *pb, mb__plan_item_t *it, const char *bench,
                        const char *key, cJSON *record, const cJSON *ignored) {
  if (!record) return mb__jax_no_memory();
  const mb__foreign_extra_t extras[] = {{key, record}, {"ignored", ignored}};
  it->config = mb__foreign_config(pb, "jax", bench, extras,
                                  sizeof extras / sizeof *extras);
  cJSON_Delete(record);
  if (!it->config) return MB_ERR_NO_MEMORY;
  return mb__plan_add(pb, it);
}

mb_status_t mb__jax_add_skipped(mb__pb_t *pb, const mb__jax_skip_t *s) {
  mb__plan_item_t it = MB__PLAN_ITEM_INIT;
  it.name = s->name;
  it.group = s->name;
  it.op = s->op;
  /* No shape is known for what we do not run: every dimension 0, so the
   * result still names each of the op's dimensions (its JSON needs them). */
  it.params.ndim = mb_op_rank(mb_op_find(s->op));
  it.unsupported = s->why;
  it.csv_path = s->csv;
  it.at = s->block;
  it.path = s->path;
  return mb__jax_add(pb, &it, s->name, "block", mb__cfg_to_cjson(s->block),
                     s->ignored);
}
