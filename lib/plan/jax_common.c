/* What the JAX suite's two config layouts share: sweep values and their
 * product, the timing keys, csv_path, the XLA/TPU-only keys and the
 * skipped entry of a benchmark we do not run (jax_common.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/jax_common.h"

/* A sweep runs at most 1000 combinations (core/config.py), so no more of a
 * range's values can ever run; a longer range is refused rather than built
 * (a fuzzed {start: 1024, end: 3e12, increase_by: 2048} took seconds to
 * expand, growing its list one value at a time). */
#define MAX_RANGE_VALUES 1000u

static const char *const k_range_keys[] = {"start", "end", "multiplier",
                                           "increase_by", NULL};

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

/* ---- ranges ---------------------------------------------------------------
 */

typedef struct range {
  double start, end, mult, inc;
  int has_mult, has_inc;
} range_t;

static mb_status_t range_number(mb__pb_t *pb, const mb_cfg_node_t *range,
                                const char *path, const char *key, int need,
                                double *out, int *given) {
  const mb_cfg_node_t *n = mb__cfg_get(range, key);
  char here[MB__JAX_PATH_CAP];
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

static mb_status_t read_range(mb__pb_t *pb, const mb_cfg_node_t *m,
                              const char *path, range_t *r) {
  int given;
  mb_status_t st = mb__pb_check_keys(pb, m, path, k_range_keys);
  if (st == MB_OK)
    st = range_number(pb, m, path, "start", 1, &r->start, &given);
  if (st == MB_OK) st = range_number(pb, m, path, "end", 1, &r->end, &given);
  if (st == MB_OK)
    st = range_number(pb, m, path, "multiplier", 0, &r->mult, &r->has_mult);
  if (st == MB_OK)
    st = range_number(pb, m, path, "increase_by", 0, &r->inc, &r->has_inc);
  return st;
}

/* The legacy rule (run_benchmark.py): exactly one of multiplier and
 * increase_by. */
static mb_status_t legacy_step(mb__pb_t *pb, const mb_cfg_node_t *m,
                               const char *path, range_t *r) {
  if (!r->has_mult && !r->has_inc)
    return mb__pb_error(pb, m, path,
                        "a range needs `multiplier` or `increase_by`");
  if (r->has_mult && r->has_inc)
    return mb__pb_error(pb, m, path,
                        "give `multiplier` or `increase_by`, not both");
  return MB_OK;
}

/* The current rule (core/config.py resolve_params): multiplier defaults to
 * 1; above 1 it multiplies (increase_by ignored), at exactly 1 the value
 * grows by increase_by (default 1), below 1 the suite's loop never ends. */
static mb_status_t sweep_step(mb__pb_t *pb, const mb_cfg_node_t *m,
                              const char *path, range_t *r) {
  if (!r->has_mult) r->mult = 1;
  if (r->mult > 1) {
    r->has_mult = 1;
    r->has_inc = 0;
    return MB_OK;
  }
  if (r->mult < 1)
    return mb__pb_error(pb, m, path,
                        "multiplier %g would never pass end: need multiplier "
                        "> 1, or 1 with increase_by",
                        r->mult);
  if (!r->has_inc) r->inc = 1;
  r->has_mult = 0;
  r->has_inc = 1;
  return MB_OK;
}

/* start, then x multiplier or + increase_by while <= end (both layouts'
 * loop), refusing the ranges on which that loop never ends. */
static mb_status_t expand_range(mb__pb_t *pb, mb__jax_layout_t layout,
                                const mb_cfg_node_t *m, const char *path,
                                mb_cfg_node_t *values) {
  range_t r = {0, 0, 0, 0, 0, 0};
  mb_status_t st = read_range(pb, m, path, &r);
  if (st == MB_OK)
    st = layout == MB__JAX_LEGACY ? legacy_step(pb, m, path, &r)
                                  : sweep_step(pb, m, path, &r);
  if (st != MB_OK) return st;
  if (r.has_mult && (r.mult <= 1 || r.start <= 0))
    return mb__pb_error(pb, m, path,
                        "multiplier %g from start %g would never pass end: "
                        "need multiplier > 1 and start > 0",
                        r.mult, r.start);
  if (r.has_inc && r.inc <= 0)
    return mb__pb_error(pb, m, path,
                        "increase_by %g would never pass end: need "
                        "increase_by > 0",
                        r.inc);
  if (r.start > r.end)
    return mb__pb_error(pb, m, path,
                        "start %g is above end %g: the range is empty", r.start,
                        r.end);
  for (double v = r.start; v <= r.end;
       v = r.has_mult ? v * r.mult : v + r.inc) {
    if (values->count == MAX_RANGE_VALUES)
      return mb__pb_error(pb, m, path,
                          "the range gives more than %u values (a sweep runs "
                          "at most %u combinations): raise start, lower end "
                          "or take larger steps",
                          MAX_RANGE_VALUES, MAX_RANGE_VALUES);
    mb_cfg_node_t *n = number_node(v, m->line);
    if (!n || mb__cfg_append(values, NULL, n) != MB_OK)
      return mb__jax_no_memory();
  }
  return MB_OK;
}

mb_status_t mb__jax_values(mb__pb_t *pb, mb__jax_layout_t layout,
                           const mb_cfg_node_t *v, const char *path,
                           mb_cfg_node_t *values) {
  if (v->kind == MB_CFG_MAP) return expand_range(pb, layout, v, path, values);
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
