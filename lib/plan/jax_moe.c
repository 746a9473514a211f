/* The JAX suite's transformer_layer_moe (src/accelerator_microbenchmarks/
 * benchmarks/components.py, upstream 6a306a8) as our moe_layer_proxy
 * composite (lib/models/moe_layer_proxy.c): the same layer, step for step,
 * on one device.
 *
 * Its TransformerLayerParams are model_dim (7168) and mslen (1024): the
 * shape [1, mslen, model_dim] (batch 1, as upstream fixes it); and `dtype`
 * (default bfloat16; our composite takes bf16, f32 and f16, and any other
 * dtype is skipped with the op's reason). The parallelism degrees tp, etp,
 * cp and ep only shard the layer's arrays across a device mesh upstream
 * (ComponentBenchmark keeps them; generate_inputs shards model_dim over the
 * mesh's first axis, and mslen is already the per-device length, seq_len /
 * cp); on one device they change nothing, so they are checked, recorded
 * and named, no more. Upstream's own FLOP figure, 24 mslen model_dim^2,
 * counts 20% more than its four matmuls do (20 mslen model_dim^2); ours is
 * the graph's (docs/ops.md, "Model: moe_layer_proxy"). */
#include <inttypes.h>
#include <stdio.h>

#include "plan/jax_moe.h"

static const char *const k_degrees[] = {"tp", "etp", "cp", "ep"};
#define NUM_DEGREES (sizeof k_degrees / sizeof *k_degrees)

mb_status_t mb__sweep_refine_moe(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                 mb__plan_item_t *it, char *tag, char *why) {
  size_t len = 0;
  (void)why; /* a dtype our composite does not take, its resolve says */
  /* The degrees in the name, where not 1: a sweep over tp alone must not
   * give two entries one name. */
  for (size_t i = 0; i < NUM_DEGREES; i++) {
    int64_t v;
    mb_status_t st = mb__sweep_int(pb, c, k_degrees[i], 1, 1, &v);
    if (st != MB_OK) return st;
    int w = v == 1 ? 0
                   : snprintf(tag + len, MB__SWEEP_TAG_CAP - len, "/%s%" PRId64,
                              k_degrees[i], v);
    if (w > 0 && (size_t)w < MB__SWEEP_TAG_CAP - len) len += (size_t)w;
  }
  /* A composite's result names its model, mode and recipe (the runner's
   * label_model); the plan's facts replace the runner's, so say them. */
  it->model = MB__JAX_MOE_OP;
  it->mode = "inference";
  it->recipe = "baseline";
  return MB_OK;
}
