/* Internal: the JAX suite's current-layout rope benchmark as our rope op
 * (jax_rope.c), registered in schema_jax_sweep.c's table. */
#ifndef MB_LIB_PLAN_JAX_ROPE_H
#define MB_LIB_PLAN_JAX_ROPE_H

#include "plan/jax_sweep.h"

/* RoPEParams beyond the shape the table reads ([batch, heads, seq_len,
 * head_dim], f32): the entry's name records complex64, and an odd head_dim
 * (upstream's head_dim // 2 complex numbers drop one element) sets `why`. */
mb_status_t mb__sweep_refine_rope(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                  mb__plan_item_t *it, char *tag, char *why);

#endif
