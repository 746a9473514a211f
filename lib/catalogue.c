/* The op catalogue: every op the library knows — the primitives (ops/) and
 * the models (models/) — as one constant table, looked up by name or alias
 * and iterated by cursor. It sits above both folders so neither names the
 * other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_ops.h"
#include "ops/alias.h"
#include "ops/op_internal.h"
#include "ops/sparse.h"

/* Sorted by name; `mbench list ops` prints this order. */
static const mb_op_t *const k_ops[] = {
    &mb__op_activation,
    &mb__op_add,
    &mb__op_all_gather,
    &mb__op_all_reduce,
    &mb__op_all_to_all,
    &mb__op_attention,
    &mb__op_attention_bwd,
    &mb__op_broadcast,
    &mb__op_copy,
    &mb__op_d2d,
    &mb__op_d2h,
    &mb__op_dequantize,
    &mb__op_gemm,
    &mb__op_gemm_block_sparse,
    &mb__op_gemm_sparse24,
    &mb__op_h2d,
    &mb__op_layernorm,
    &mb__op_linear,
    &mb__op_linear_training,
    &mb__op_ln_linear,
    &mb__op_moe_layer_proxy,
    &mb__op_quantize,
    &mb__op_reduce,
    &mb__op_reduce_scatter,
    &mb__op_rmsnorm,
    &mb__op_rmsnorm_bwd,
    &mb__op_rope,
    &mb__op_scale,
    &mb__op_sendrecv,
    &mb__op_silu_mul,
    &mb__op_softmax,
    &mb__op_swiglu_bwd,
    &mb__op_transformer_block,
    &mb__op_triad,
};
#define MB__NUM_OPS (sizeof k_ops / sizeof k_ops[0])

static void list_ops(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < MB__NUM_OPS && len < cap; i++) {
    int n =
        snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", k_ops[i]->name);
    if (n < 0) break;
    len += (size_t)n;
  }
}

const mb_op_t *mb_op_find(const char *name) {
  char valid[512];
  if (!name) {
    mb__fail(MB_ERR_INVALID_ARG, "mb_op_find: name is NULL");
    return NULL;
  }
  const mb__alias_t *alias = mb__alias_find(name);
  if (alias) name = alias->op;
  for (size_t i = 0; i < MB__NUM_OPS; i++)
    if (strcmp(k_ops[i]->name, name) == 0) return k_ops[i];
  list_ops(valid, sizeof valid);
  mb__fail(MB_ERR_NOT_FOUND,
           "unknown op \"%s\"; valid ops: %s (and aliases: mbench list ops)",
           name, valid);
  return NULL;
}

mb_status_t mb_op_apply_alias(const char *name, mb_op_params_t *params) {
  if (!mb_op_find(name)) return MB_ERR_NOT_FOUND;
  const mb__alias_t *alias = mb__alias_find(name);
  if (!alias || !alias->preset || !params) return MB_OK;
  /* The presets write today's params; an older caller gets its prefix. */
  mb_op_params_t full = MB_OP_PARAMS_INIT;
  mb_status_t st =
      mb__struct_in(MB__STRUCT_OP_PARAMS, "mb_op_apply_alias", params, &full);
  if (st != MB_OK) return st;
  alias->preset(&full);
  return mb__struct_out(MB__STRUCT_OP_PARAMS, "mb_op_apply_alias", &full,
                        params);
}

int mb_op_is_composite(const mb_op_t *op) {
  return op && op->compose;
}

const mb_op_t *mb_op_next(const mb_op_t *prev) {
  if (!prev) return k_ops[0];
  for (size_t i = 0; i + 1 < MB__NUM_OPS; i++)
    if (k_ops[i] == prev) return k_ops[i + 1];
  return NULL;
}

/* Whether composite `op` runs primitive `prim` under some recipe. Each
 * recipe's graph is composed at a shape every recipe takes (256 in every
 * dimension: a multiple of the largest block, 128, and group, 256); a
 * recipe the op refuses (weight-only in training) is passed over. Asking
 * the graph, not a list kept beside it, keeps the answer true when a
 * recipe's steps change. */
static int composite_runs(const mb_op_t *op, const mb_op_t *prim,
                          mb__graph_t *g) {
  for (int r = 0; r < MB_RECIPE_COUNT; r++) {
    mb_op_params_t p = MB_OP_PARAMS_INIT;
    p.ndim = op->rank;
    for (uint32_t d = 0; d < op->rank; d++) p.shape[d] = 256;
    p.recipe = (uint32_t)r;
    if (op->resolve(&p) != MB_OK) continue;
    op->compose(&p, g);
    for (uint32_t s = 0; g->status == MB_OK && s < g->num_steps; s++)
      if (g->steps[s].op == prim) return 1;
  }
  return 0;
}

const mb_op_t *mb_op_primitive(const mb_op_t *op, size_t index) {
  if (!mb_op_is_composite(op)) return NULL;
  mb__graph_t *g = malloc(sizeof *g);
  if (!g) return NULL;
  /* A recipe the op refuses sets the thread's message; the caller asked
   * a question, not for an operation, so its last error stays. */
  char saved[2048];
  snprintf(saved, sizeof saved, "%s", mb_error_last());
  const mb_op_t *found = NULL;
  for (size_t i = 0; i < MB__NUM_OPS && !found; i++)
    if (!mb_op_is_composite(k_ops[i]) && composite_runs(op, k_ops[i], g) &&
        index-- == 0)
      found = k_ops[i];
  mb_error_set(saved);
  free(g);
  return found;
}
