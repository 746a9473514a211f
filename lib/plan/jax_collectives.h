/* Internal: the JAX suite's collective benchmarks as our collective ops
 * (jax_collectives.c), in both layouts: legacy psum, psum_scatter,
 * all_gather, all_to_all and ppermute (read by schema_jax.c), current
 * all_reduce, all_gather, all_to_all and reduce_scatter (a refine of
 * schema_jax_sweep.c). One table says how each turns the suite's
 * matrix_dim and device mesh into our shape [N], the exchange's element
 * count as nccl-tests counts it. */
#ifndef MB_LIB_PLAN_JAX_COLLECTIVES_H
#define MB_LIB_PLAN_JAX_COLLECTIVES_H

#include "plan/jax_attention.h"
#include "plan/jax_sweep.h"

/* The parameters legacy collective `name` takes besides dtype and
 * num_runs, NULL-terminated. */
const char *const *mb__jax_coll_params(const char *name);

/* One legacy combination of collective `name`: shape [N] and reduce_op
 * into p, upstream's array as the entry name shows it into text ("8x8x128"),
 * the mesh it was written for into tag ("/mesh=4x4/shard=1x4", or ""); what
 * we cannot run sets `why`. */
mb_status_t mb__jax_coll_read(mb__pb_t *pb, const char *name,
                              const mb__jax_combo_in_t *in, mb_op_params_t *p,
                              char *text, size_t cap, char *tag, size_t tag_cap,
                              char *why, size_t why_cap);

/* The current layout's collectives (CollectivesParams): it->params.shape[0]
 * holds matrix_dim on entry, N on return. */
mb_status_t mb__sweep_refine_collective(mb__pb_t *pb,
                                        const mb__sweep_combo_t *c,
                                        mb__plan_item_t *it, char *tag,
                                        char *why);

#endif
