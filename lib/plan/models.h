/* Internal: torchao's model types, quantization recipes and modes as the
 * plan readers see them — which names exist (the library's own tables in
 * microbench/model.h; no copy here) and the entry a model under a recipe
 * in a mode becomes. Shared by the native and torchao readers. */
#ifndef MB_LIB_PLAN_MODELS_H
#define MB_LIB_PLAN_MODELS_H

#include "plan/plan_build.h"

/* Checks a name; an unknown one is an error (at `at`/`path`) that lists
 * the valid names. */
mb_status_t mb__model_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                            const char *path, const char *model);
mb_status_t mb__recipe_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                             const char *path, const char *recipe);
mb_status_t mb__mode_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                           const char *path, const char *mode);

/* Sets item->op (mb_model_resolve's composite) and item->params (shape
 * mkn = {M, K, N}, high-precision dtype `hp`, recipe, the model's
 * activation) for `model` under `recipe` in `mode`; the names must have
 * passed the checks above. Also sets item->model, recipe, mode and
 * is_baseline.
 *
 * A combination the library cannot build — a model without a training
 * graph, a weight-only recipe in training, a recipe the shape does not fit
 * (a 128-wide block on K = 96) — is not an error: item->unsupported is
 * set to the reason, written into why[cap] (which must outlive the item),
 * and the entry is kept to be reported skipped. What the baseline cannot
 * build either (a dtype the model does not take) is the reader's error. */
mb_status_t mb__model_item(const mb__pb_t *pb, const char *model,
                           const char *recipe, const char *mode, mb_dtype_t hp,
                           const int64_t mkn[3], mb__plan_item_t *item,
                           char *why, size_t cap);

#endif
