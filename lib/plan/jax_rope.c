/* The JAX suite's current-layout rope (compute_ops.py RoPEBenchmark,
 * upstream 6a306a8) as our rope op. Upstream multiplies complex64 x
 * [batch, heads, seq_len, head_dim / 2] by freq_cis [1, 1, seq_len,
 * head_dim / 2]: our op on f32 [batch, heads, seq_len, head_dim], whose
 * interleaved pairs are those complex numbers (docs/ops.md, "Rotary
 * position embedding"). Its code fixes complex64 whatever `dtype` says, so
 * the table maps it as f32 with `dtype` of no effect, and the name says
 * complex64 so that the entry reads as the suite's. */
#include <inttypes.h>
#include <stdio.h>

#include "plan/jax_rope.h"

mb_status_t mb__sweep_refine_rope(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                  mb__plan_item_t *it, char *tag, char *why) {
  const int64_t head_dim = it->params.shape[3];
  (void)pb, (void)c;
  snprintf(tag, MB__SWEEP_TAG_CAP, "/complex64");
  /* Our op refuses an odd D too; this says what upstream would do. */
  if (head_dim % 2)
    snprintf(why, MB__SWEEP_WHY_CAP,
             "rope with head_dim %" PRId64
             " (odd): upstream rotates head_dim // 2 = %" PRId64
             " complex pairs and leaves the last element out; our rope "
             "needs an even head dim",
             head_dim, head_dim / 2);
  return MB_OK;
}
