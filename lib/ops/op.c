/* An op descriptor's public accessors and the checks every op shares
 * (catalogue.c lists the ops). */
#include <stdio.h>
#include <string.h>

#include "ops/op_internal.h"

const char *mb_op_name(const mb_op_t *op) {
  return op ? op->name : "";
}
const char *mb_op_summary(const mb_op_t *op) {
  return op ? op->summary : "";
}
uint32_t mb_op_rank(const mb_op_t *op) {
  return op ? op->rank : 0;
}
const char *mb_op_shape_syntax(const mb_op_t *op) {
  return op ? op->shape_syntax : "";
}
int mb_op_is_collective(const mb_op_t *op) {
  return op && op->coll != 0;
}
uint32_t mb_op_num_inputs(const mb_op_t *op) {
  return op ? op->num_inputs : 0;
}
uint32_t mb_op_num_outputs(const mb_op_t *op) {
  return op ? op->num_outputs : 0;
}

/* Each flag is a bit of its own: a power of two, and their sum is their
 * union (no two share a bit). */
#define POW2(NAME, ...) &&!(MB_PARAM_##NAME & (MB_PARAM_##NAME - 1u))
#define SUM(NAME, ...) +MB_PARAM_##NAME
#define UNION(NAME, ...) | MB_PARAM_##NAME
_Static_assert(1 MB_PARAM_FLAG_LIST(POW2) && (0u MB_PARAM_FLAG_LIST(SUM)) ==
                                                 (0u MB_PARAM_FLAG_LIST(UNION)),
               "MB_PARAM_FLAG_LIST: two flags share a bit, or one is not a "
               "single bit");
#undef POW2
#undef SUM
#undef UNION

/* A parameter the op does not use is an error, not silently ignored:
 * `--causal` on a gemm would otherwise measure something other than asked. */
static mb_status_t check_applicable(const mb_op_t *op,
                                    const mb_op_params_t *p) {
  static const struct {
    uint32_t flag, mask;
    const char *name;
  } k_flags[] = {
#define ROW(NAME, group, key, result, inverted, name, ...) \
  {MB_PARAM_##NAME, MB__P_##group, name},
      MB_PARAM_FLAG_LIST(ROW)
#undef ROW
  };
  for (size_t i = 0; i < sizeof k_flags / sizeof k_flags[0]; i++)
    if ((p->flags & k_flags[i].flag) && !(op->param_mask & k_flags[i].mask))
      return mb__fail(
          MB_ERR_INVALID_ARG,
          "%s: \"%s\" does not apply to this op (its parameters: "
          "%s)",
          op->name, k_flags[i].name,
          op->params_doc && *op->params_doc ? op->params_doc : "none");
  const uint32_t scaled = MB__P_SCALES | MB__P_SCALE_A;
  if ((p->scale_a.mode != MB_SCALE_NONE && !(op->param_mask & scaled)) ||
      (p->scale_b.mode != MB_SCALE_NONE && !(op->param_mask & MB__P_SCALES)))
    return mb__fail(
        MB_ERR_INVALID_ARG,
        "%s: scales do not apply to this op (its parameters: %s)", op->name,
        op->params_doc && *op->params_doc ? op->params_doc : "none");
  if (p->recipe != MB_RECIPE_BASELINE && !(op->param_mask & MB__P_RECIPE))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: a recipe (%s) applies to the model ops (linear, "
                    "linear_training, ln_linear, transformer_block), not to "
                    "a primitive",
                    op->name, mb_recipe_name((mb_recipe_t)p->recipe));
  if (p->dtype_q != MB_DTYPE_NONE && !(op->param_mask & MB__P_QUANT))
    return mb__fail(MB_ERR_INVALID_ARG, "%s: dtype_q does not apply to this op",
                    op->name);
  if (p->dtype_scale != MB_DTYPE_NONE && !(op->param_mask & scaled))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: a scale dtype does not apply to this op", op->name);
  if (p->kv_heads != 0 && !(op->param_mask & MB__P_KV_HEADS))
    return mb__fail(
        MB_ERR_INVALID_ARG,
        "%s: kv_heads (%lld) applies to attention and attention_bwd only",
        op->name, (long long)p->kv_heads);
  if (p->reduce_op != 0 && !(op->param_mask & MB__P_REDUCE))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: reduce_op applies to all_reduce, reduce_scatter and "
                    "reduce only",
                    op->name);
  if (p->root != 0 && !(op->param_mask & MB__P_ROOT))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: root (%d) applies to broadcast and reduce only",
                    op->name, (int)p->root);
  return MB_OK;
}

mb_status_t mb_op_resolve(const mb_op_t *op, mb_op_params_t *given) {
  if (!op || !given)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_op_resolve: NULL argument");
  /* Resolved at today's size; an older caller gets back what it holds. */
  mb_op_params_t full = MB_OP_PARAMS_INIT, *p = &full;
  mb_status_t st = mb__struct_in(MB__STRUCT_OP_PARAMS, op->name, given, p);
  if (st == MB_OK) st = mb__check_shape(op, p);
  if (st == MB_OK) st = check_applicable(op, p);
  if (st == MB_OK) st = op->resolve(p);
  return st != MB_OK ? st
                     : mb__struct_out(MB__STRUCT_OP_PARAMS, op->name, p, given);
}

/* A caller's params at today's size (an older caller's lack defaults);
 * NULL, with the error set, when they are not ours. */
static const mb_op_params_t *params_in(const char *fn,
                                       const mb_op_params_t *given,
                                       mb_op_params_t *full) {
  *full = (mb_op_params_t)MB_OP_PARAMS_INIT;
  return mb__struct_in(MB__STRUCT_OP_PARAMS, fn, given, full) == MB_OK ? full
                                                                       : NULL;
}

double mb_op_flop(const mb_op_t *op, const mb_op_params_t *given) {
  mb_op_params_t full;
  const mb_op_params_t *p =
      op && given ? params_in("mb_op_flop", given, &full) : NULL;
  return p ? op->flop(p) : 0.0;
}

double mb_op_bytes(const mb_op_t *op, const mb_op_params_t *given) {
  mb_op_params_t full;
  const mb_op_params_t *p =
      op && given ? params_in("mb_op_bytes", given, &full) : NULL;
  return p ? op->bytes(p) : 0.0;
}

mb_status_t mb_op_operand(const mb_op_t *op, const mb_op_params_t *given,
                          uint32_t role, mb_dtype_t *dtype, uint32_t *ndim,
                          int64_t *shape) {
  if (!op || !given || !dtype || !ndim || !shape)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_op_operand: NULL argument");
  mb_op_params_t full;
  const mb_op_params_t *p = params_in("mb_op_operand", given, &full);
  if (!p) return MB_ERR_INVALID_ARG;
  if (role >= op->num_inputs + op->num_outputs)
    return mb__fail(MB_ERR_INVALID_ARG, "%s has %u operands; role %u invalid",
                    op->name, op->num_inputs + op->num_outputs, role);
  op->operand(p, role, dtype, ndim, shape);
  return MB_OK;
}

mb_status_t mb__check_shape(const mb_op_t *op, const mb_op_params_t *p) {
  if (p->ndim != op->rank) {
    /* The shape as given ("8x8" for a gemm), so the message names it. */
    char given[MB_MAX_DIMS * 21 + 1] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < p->ndim && i < MB_MAX_DIMS; i++)
      len += (size_t)snprintf(given + len, sizeof given - len, "%s%lld",
                              i ? "x" : "", (long long)p->shape[i]);
    return mb__fail(
        MB_ERR_INVALID_ARG, "%s: shape %s has %u dimension%s; %s needs %u (%s)",
        op->name, p->ndim ? given : "(none)", p->ndim, p->ndim == 1 ? "" : "s",
        op->name, op->rank, op->shape_syntax);
  }
  for (uint32_t i = 0; i < p->ndim; i++)
    if (p->shape[i] <= 0 || p->shape[i] > ((int64_t)1 << 40))
      return mb__fail(MB_ERR_INVALID_ARG,
                      "%s: shape dimension %u (%s of %s) is %lld; must be in "
                      "1 .. 2^40",
                      op->name, i, op->dim_names[i], op->shape_syntax,
                      (long long)p->shape[i]);
  return MB_OK;
}

mb_status_t mb__check_dtype(const mb_op_t *op, const char *field,
                            mb_dtype_t dtype, const mb_dtype_t *valid,
                            size_t num_valid) {
  char list[256];
  size_t len = 0;
  for (size_t i = 0; i < num_valid; i++) {
    if (valid[i] == dtype) return MB_OK;
    int n = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                     mb_dtype_name(valid[i]));
    if (n > 0 && (size_t)n < sizeof list - len) len += (size_t)n;
  }
  if (num_valid == 0) list[0] = '\0';
  return mb__fail(MB_ERR_INVALID_ARG,
                  "%s: %s \"%s\" is not supported; valid: %s", op->name, field,
                  mb_dtype_name(dtype), list);
}

size_t mb__operand_numel(const mb_op_t *op, const mb_op_params_t *p,
                         uint32_t role) {
  mb_dtype_t dt;
  uint32_t nd;
  int64_t shape[MB_MAX_DIMS];
  op->operand(p, role, &dt, &nd, shape);
  size_t n = 1;
  for (uint32_t i = 0; i < nd; i++) n *= (size_t)shape[i];
  return n;
}

void mb__default_dtypes(mb_op_params_t *p, mb_dtype_t dflt) {
  if (p->dtype == MB_DTYPE_NONE) p->dtype = dflt;
  if (p->dtype_b == MB_DTYPE_NONE) p->dtype_b = p->dtype;
  if (p->dtype_out == MB_DTYPE_NONE) p->dtype_out = p->dtype;
  if (p->dtype_acc == MB_DTYPE_NONE) p->dtype_acc = MB_DTYPE_F32;
}

double mb__bytes(mb_dtype_t dtype, double count) {
  return (double)mb_dtype_bits(dtype) * count / 8.0;
}

const char *mb_op_params_doc(const mb_op_t *op) {
  return op && op->params_doc ? op->params_doc : "";
}

const mb_dtype_t *mb_op_dtypes(const mb_op_t *op, size_t *count) {
  if (count) *count = op ? op->num_dtypes : 0;
  return op ? op->dtypes : NULL;
}

const char *mb_op_operand_name(const mb_op_t *op, uint32_t role) {
  if (!op || !op->operand_names || role >= op->num_inputs + op->num_outputs)
    return "";
  return op->operand_names[role];
}

static const char *const k_act_names[MB_ACT_COUNT] = {
    "relu",    "gelu_tanh", "gelu_erf", "silu",
    "sigmoid", "leakyrelu", "relu6",    "hardswish"};

const char *mb_activation_name(mb_activation_t act) {
  return (unsigned)act < MB_ACT_COUNT ? k_act_names[act] : "?";
}

mb_status_t mb_activation_from_name(const char *name, mb_activation_t *out) {
  /* torchao's ln_linear_gelu means the tanh approximation. */
  static const struct {
    const char *alias;
    mb_activation_t act;
  } k_aliases[] = {{"gelu", MB_ACT_GELU_TANH}, {"swish", MB_ACT_SILU}};
  for (int i = 0; name && out && i < MB_ACT_COUNT; i++)
    if (strcmp(name, k_act_names[i]) == 0) {
      *out = (mb_activation_t)i;
      return MB_OK;
    }
  for (size_t i = 0; name && out && i < sizeof k_aliases / sizeof *k_aliases;
       i++)
    if (strcmp(name, k_aliases[i].alias) == 0) {
      *out = k_aliases[i].act;
      return MB_OK;
    }
  return mb__fail(MB_ERR_INVALID_ARG,
                  "unknown activation \"%s\"; valid: relu, gelu_tanh (gelu), "
                  "gelu_erf, silu (swish), sigmoid, leakyrelu, relu6, "
                  "hardswish",
                  name ? name : "(null)");
}
