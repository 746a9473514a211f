/* Model types and recipes (docs/config.md). A name is either unknown (the
 * error lists every valid one) or known; a known one is built when the
 * library can run it. What is built maps to ops: `linear` (one Linear
 * K->N, no bias, input [M, K]) under `baseline` is the high-precision GEMM
 * D[M,N] = X[M,K] . W[K,N]. The other models and recipes are known by name
 * so a file that asks for them gets "not built in this version" rather
 * than "unknown". */
#include <string.h>

#include "models.h"

typedef struct name_row {
  const char *name;
  int built;
} name_row_t;

static const name_row_t k_models[] = {
    {"linear", 1},
    {"ln_linear_sigmoid", 0},
    {"ln_linear_relu", 0},
    {"ln_linear_leakyrelu", 0},
    {"ln_linear_relu6", 0},
    {"ln_linear_gelu", 0},
    {"ln_linear_silu", 0},
    {"ln_linear_hardswish", 0},
    {"transformer_block", 0},
};

static const name_row_t k_recipes[] = {
    {"baseline", 1},     {"int8wo", 0},       {"int8dq", 0},
    {"int4wo-32", 0},    {"int4wo-64", 0},    {"int4wo-128", 0},
    {"int4wo-256", 0},   {"float8wo", 0},     {"float8dq-tensor", 0},
    {"float8dq-row", 0}, {"float8-block", 0},
};

static const name_row_t k_modes[] = {{"inference", 1}, {"training", 0}};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static mb_status_t check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                         const char *path, const char *what, const char *name,
                         const name_row_t *rows, size_t n) {
  char valid[512] = "", built[256] = "";
  size_t lv = 0, lb = 0;
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(rows[i].name, name)) {
      if (rows[i].built) return MB_OK;
      for (size_t k = 0; k < n; k++)
        if (rows[k].built && lb < sizeof built)
          lb += (size_t)snprintf(built + lb, sizeof built - lb, "%s%s",
                                 lb ? ", " : "", rows[k].name);
      return mb__pb_error(pb, at, path,
                          "%s \"%s\" is not built in this version of "
                          "libmicrobench; built: %s",
                          what, name, built);
    }
    if (lv < sizeof valid)
      lv += (size_t)snprintf(valid + lv, sizeof valid - lv, "%s%s",
                             i ? ", " : "", rows[i].name);
  }
  return mb__pb_error(pb, at, path, "unknown %s \"%s\"; valid: %s", what, name,
                      valid);
}

mb_status_t mb__model_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                            const char *path, const char *model) {
  return check(pb, at, path, "model", model, k_models, COUNT(k_models));
}

mb_status_t mb__recipe_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                             const char *path, const char *recipe) {
  return check(pb, at, path, "recipe", recipe, k_recipes, COUNT(k_recipes));
}

mb_status_t mb__mode_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                           const char *path, const char *mode) {
  return check(pb, at, path, "benchmark mode", mode, k_modes, COUNT(k_modes));
}

mb_status_t mb__model_item(const mb__pb_t *pb, const char *model,
                           const char *recipe, const char *mode, mb_dtype_t hp,
                           const int64_t mkn[3], mb__plan_item_t *item) {
  /* Only linear/baseline/inference is built (the checks refused the rest). */
  if (strcmp(model, "linear") || strcmp(recipe, "baseline") ||
      strcmp(mode, "inference"))
    return mb__pb_error(pb, item->at, item->path,
                        "%s/%s/%s is not built in this version", model, recipe,
                        mode);
  item->op = "gemm";
  item->params.ndim = 3;
  memcpy(item->params.shape, mkn, 3 * sizeof *mkn);
  item->params.dtype = hp;
  item->params.dtype_out = hp;
  item->model = model;
  item->recipe = recipe;
  item->mode = mode;
  item->is_baseline = !strcmp(recipe, "baseline");
  return MB_OK;
}
