/* The parameters of one combination of the JAX suite's current layout:
 * each key looked up through its layers, the last written winning
 * (jax_sweep.h). */
#include <stdio.h>

#include "plan/jax_sweep.h"

#define PATH_CAP MB__JAX_PATH_CAP
#define WHY_CAP MB__SWEEP_WHY_CAP

/* Key `key`'s value in the combination and the path it was written at:
 * the layers from the last written (a sweep's) to the first. An empty
 * CSV cell is not a value (upstream's None would reach the dataclass and
 * fail there). */
const mb_cfg_node_t *mb__sweep_find(const mb__sweep_combo_t *c, const char *key,
                                    char *path, size_t cap) {
  const mb__sweep_item_t *it = c->item;
  char sweep[PATH_CAP], model[PATH_CAP];
  mb__path_key(sweep, sizeof sweep, it->path, "sweep");
  mb__path_key(model, sizeof model, it->path, "model");
  const struct {
    const mb_cfg_node_t *map;
    const char *path;
  } layers[] = {{c->swept, sweep},
                {it->row, it->row_path},
                {it->entry, it->path},
                {it->preset, model},
                {it->global, "global"}};
  for (size_t l = 0; l < sizeof layers / sizeof *layers; l++) {
    const mb_cfg_node_t *v = mb__cfg_get(layers[l].map, key);
    if (!v || (layers[l].map == it->row && v->kind == MB_CFG_NULL)) continue;
    mb__path_key(path, cap, layers[l].path, key);
    return v;
  }
  return NULL;
}

mb_status_t mb__sweep_int(mb__pb_t *pb, const mb__sweep_combo_t *c,
                          const char *key, int64_t def, int64_t lo,
                          int64_t *out) {
  char path[PATH_CAP];
  const mb_cfg_node_t *v = mb__sweep_find(c, key, path, sizeof path);
  *out = def;
  return v ? mb__pb_int(pb, v, path, lo, INT64_C(1) << 40, out) : MB_OK;
}

mb_status_t mb__sweep_str(mb__pb_t *pb, const mb__sweep_combo_t *c,
                          const char *key, const char *def, const char **out,
                          const mb_cfg_node_t **at, char *path, size_t cap) {
  const mb_cfg_node_t *v = mb__sweep_find(c, key, path, cap);
  *out = def;
  *at = v;
  return v ? mb__pb_string(pb, v, path, out) : MB_OK;
}

mb_status_t mb__sweep_bool(mb__pb_t *pb, const mb__sweep_combo_t *c,
                           const char *key, int def, int *out) {
  char path[PATH_CAP];
  const mb_cfg_node_t *v = mb__sweep_find(c, key, path, sizeof path);
  *out = def;
  return v ? mb__pb_bool(pb, v, path, out) : MB_OK;
}

mb_status_t mb__sweep_num(mb__pb_t *pb, const mb__sweep_combo_t *c,
                          const char *key, double def, double *out) {
  char path[PATH_CAP];
  const mb_cfg_node_t *v = mb__sweep_find(c, key, path, sizeof path);
  *out = def;
  return v ? mb__pb_number(pb, v, path, out) : MB_OK;
}

/* A dtype parameter: 1 with *out set; 0 with `why` set (the suite defines
 * it, we do not run it). */
mb_status_t mb__sweep_dtype(mb__pb_t *pb, const mb__sweep_combo_t *c,
                            const char *key, const char *def, mb_dtype_t *out,
                            const char **written, char *why, size_t cap) {
  char path[PATH_CAP] = "";
  const mb_cfg_node_t *at;
  const mb__jax_name_t *d;
  mb_status_t st =
      mb__sweep_str(pb, c, key, def, written, &at, path, sizeof path);
  if (st != MB_OK) return st;
  switch (mb__jax_dtype_lookup(MB__JAX_SWEEP, *written, out, &d)) {
    case 1:
      return MB_OK;
    case 0:
      if (!*why) mb__jax_skip_reason(why, cap, key, d);
      return MB_OK;
    default:
      return mb__jax_dtype_error(pb, MB__JAX_SWEEP, at, path, *written);
  }
}
