/* Model types, recipes and modes (docs/config.md, "Models"). The names are
 * the library's (mb_model_resolve, mb_recipe_from_name, mb_mode_name), so
 * a new model or recipe there is one here, and an unknown name gets the
 * library's own message listing the valid ones. A model under a recipe in
 * a mode runs as the composite op mb_model_resolve names, with the recipe
 * in params.recipe; what the library cannot build is kept as a skipped
 * entry, so one combination does not stop the rest of a file. */
#include <stdio.h>
#include <string.h>

#include "plan/models.h"

/* The library's NOT_FOUND message (it lists the valid names), placed. */
static mb_status_t placed(const mb__pb_t *pb, const mb_cfg_node_t *at,
                          const char *path, mb_status_t st) {
  return st == MB_OK ? MB_OK
                     : mb__pb_error(pb, at, path, "%s", mb_error_last());
}

mb_status_t mb__model_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                            const char *path, const char *model) {
  return placed(pb, at, path, mb_model_resolve(model, NULL, NULL, NULL));
}

mb_status_t mb__recipe_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                             const char *path, const char *recipe) {
  return placed(pb, at, path, mb_recipe_from_name(recipe, NULL));
}

mb_status_t mb__mode_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                           const char *path, const char *mode) {
  char valid[128] = "";
  size_t len = 0;
  for (size_t i = 0; i < mb_mode_count(); i++) {
    if (!strcmp(mb_mode_name(i), mode)) return MB_OK;
    if (len < sizeof valid)
      len += (size_t)snprintf(valid + len, sizeof valid - len, "%s%s",
                              i ? ", " : "", mb_mode_name(i));
  }
  return mb__pb_error(pb, at, path, "unknown benchmark mode \"%s\"; valid: %s",
                      mode, valid);
}

/* The op and params of model/mode/recipe (*p as written, *resolved with
 * the op's defaults filled in), resolved as a run would, so a recipe the
 * shape does not fit fails here, naming the step. */
static mb_status_t build(const char *model, const char *mode,
                         mb_recipe_t recipe, const mb_op_params_t *base,
                         const char **op, mb_op_params_t *p,
                         mb_op_params_t *resolved) {
  *p = *base;
  p->recipe = (uint32_t)recipe;
  mb_status_t st = mb_model_resolve(model, mode, op, p);
  if (st != MB_OK) return st;
  *resolved = *p;
  return mb_op_resolve(mb_op_find(*op), resolved);
}

mb_status_t mb__model_item(const mb__pb_t *pb, const char *model,
                           const char *recipe, const char *mode, mb_dtype_t hp,
                           const int64_t mkn[3], mb__plan_item_t *item,
                           char *why, size_t cap) {
  mb_recipe_t rc;
  if (mb_recipe_from_name(recipe, &rc) != MB_OK)
    return placed(pb, item->at, item->path, MB_ERR_NOT_FOUND);
  item->model = model;
  item->recipe = recipe;
  item->mode = mode;
  item->is_baseline = rc == MB_RECIPE_BASELINE;
  mb_op_params_t base = item->params;
  base.ndim = 3;
  memcpy(base.shape, mkn, 3 * sizeof *mkn);
  base.dtype = hp;
  const char *op;
  mb_op_params_t p, r;
  if (build(model, mode, rc, &base, &op, &p, &r) == MB_OK) {
    item->op = op;
    item->params = p;
    return MB_OK;
  }
  snprintf(why, cap, "%s", mb_error_last());
  /* What the model cannot take at all (a dtype, a shape) is the file's
   * mistake; only what a mode or recipe adds is the library's limit. */
  if (build(model, "inference", MB_RECIPE_BASELINE, &base, &op, &p, &r) !=
      MB_OK)
    return placed(pb, item->at, item->path, MB_ERR_INVALID_ARG);
  /* The op the mode runs, where there is one, for the skipped result; its
   * dtypes as the baseline resolved them (the entry's cannot resolve). */
  if (mb_model_resolve(model, mode, &op, &p) != MB_OK)
    mb_model_resolve(model, "inference", &op, &p);
  p.recipe = (uint32_t)rc;
  p.dtype_b = r.dtype_b;
  p.dtype_out = r.dtype_out;
  p.dtype_acc = r.dtype_acc;
  item->op = op;
  item->params = p;
  item->unsupported = why;
  return MB_OK;
}
