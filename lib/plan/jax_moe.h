/* Internal: the JAX suite's transformer_layer_moe (current layout) as our
 * moe_layer_proxy composite (jax_moe.c), registered in schema_jax_sweep.c's
 * k_benches. */
#ifndef MB_LIB_PLAN_JAX_MOE_H
#define MB_LIB_PLAN_JAX_MOE_H

#include "plan/jax_sweep.h"

/* The composite that runs the layer, for the k_benches row. */
#define MB__JAX_MOE_OP "moe_layer_proxy"

/* The row's refine hook: the entry runs the model moe_layer_proxy in
 * inference (the result's model, mode and recipe say so). Shape (1, mslen,
 * model_dim) and dtype come from the row. tp, etp, cp and ep (each an
 * integer >= 1, default 1) change nothing on one device: recorded in
 * config.params, and those other than 1 in the entry's name. */
mb_status_t mb__sweep_refine_moe(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                 mb__plan_item_t *it, char *tag, char *why);

#endif
