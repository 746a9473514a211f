/* Internal: the JAX suite's tokamax_splash_attention parameters as our
 * attention op's (jax_attention.c), read by schema_jax.c. */
#ifndef MB_LIB_PLAN_JAX_ATTENTION_H
#define MB_LIB_PLAN_JAX_ATTENTION_H

#include "plan/foreign.h"

/* One combination: its map, the key each value was written under (for
 * messages) and where the map came from. */
typedef struct mb__jax_combo_in {
  const mb_cfg_node_t *map;
  const char *const *written;
  const char *path;
} mb__jax_combo_in_t;

/* The parameter names the benchmark takes (besides num_runs),
 * NULL-terminated. */
const char *const *mb__jax_attention_params(void);

/* Shape (B, H, Sq, Skv, D), kv_heads and the causal flag into p, the entry
 * name's dimensions into text, and the ops the mode runs into ops[0] and
 * ops[1] (fwd: attention; bwd: attention_bwd; combined: attention, then
 * attention_bwd; ops[1] NULL for one); a combination our ops cannot run (a
 * V head dim of its own, q_heads not a multiple of kv_heads) sets `why`. */
mb_status_t mb__jax_attention_read(mb__pb_t *pb, const mb__jax_combo_in_t *in,
                                   mb_op_params_t *p, char *text, size_t cap,
                                   const char **ops, char *why, size_t why_cap);

#endif
