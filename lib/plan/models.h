/* Internal: torchao's model types and quantization recipes as the plan
 * readers see them — which names exist, which are built, and the op an
 * entry runs. One table each, shared by the native and torchao readers. */
#ifndef MB_LIB_PLAN_MODELS_H
#define MB_LIB_PLAN_MODELS_H

#include "plan_build.h"

/* Checks a name; the error (at `at`/`path`) lists the valid names, or says
 * the name is known but not built in this version. */
mb_status_t mb__model_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                            const char *path, const char *model);
mb_status_t mb__recipe_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                             const char *path, const char *recipe);
mb_status_t mb__mode_check(const mb__pb_t *pb, const mb_cfg_node_t *at,
                           const char *path, const char *mode);

/* Sets item->op and item->params (shape, dtypes) for `model` under `recipe`
 * in `mode` with high-precision dtype `hp` and shape mkn = {M, K, N}; the
 * names must have passed the checks above. Also sets item->model, recipe,
 * mode, is_baseline. */
mb_status_t mb__model_item(const mb__pb_t *pb, const char *model,
                           const char *recipe, const char *mode, mb_dtype_t hp,
                           const int64_t mkn[3], mb__plan_item_t *item);

#endif
