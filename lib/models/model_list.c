/* The models torchao's runner names (linear, ln_linear_<act>,
 * transformer_block), their modes, and the label a result carries. */
#include <stdio.h>
#include <string.h>

#include "models/model_ops.h"
#include "ops/op_internal.h"

typedef struct model_row {
  const char *name, *summary;
  const mb_op_t *op, *training; /* training: NULL when not built */
  mb_activation_t act;          /* ln_linear_<act> */
} model_row_t;

#define LN_LINEAR(act_name, act)                                      \
  {                                                                   \
    "ln_linear_" act_name,                                            \
        "LayerNorm(K) -> Linear K->N -> " act_name " (input [M, K])", \
        &mb__op_ln_linear, NULL, act                                  \
  }

static const model_row_t k_models[] = {
    {"linear", "one Linear K->N, no bias (input [M, K])", &mb__op_linear,
     &mb__op_linear_training, MB_ACT_RELU},
    LN_LINEAR("sigmoid", MB_ACT_SIGMOID),
    LN_LINEAR("relu", MB_ACT_RELU),
    LN_LINEAR("leakyrelu", MB_ACT_LEAKYRELU),
    LN_LINEAR("relu6", MB_ACT_RELU6),
    /* torch's nn.GELU() is the erf form. */
    LN_LINEAR("gelu", MB_ACT_GELU_ERF),
    LN_LINEAR("silu", MB_ACT_SILU),
    LN_LINEAR("hardswish", MB_ACT_HARDSWISH),
    {"transformer_block",
     "RMSNorm -> QKV -> 8-head attention -> proj -> +x -> RMSNorm -> MLP "
     "K->4K->K (GELU) -> +; input [M, 16, K], N unused",
     &mb__op_transformer_block, NULL, MB_ACT_RELU},
};
#define NUM_MODELS (sizeof k_models / sizeof k_models[0])

static const char *const k_modes[] = {"inference", "training"};

size_t mb_model_count(void) {
  return NUM_MODELS;
}

const char *mb_model_name(size_t i, const char **summary) {
  if (i >= NUM_MODELS) return NULL;
  if (summary) *summary = k_models[i].summary;
  return k_models[i].name;
}

size_t mb_mode_count(void) {
  return 2;
}

const char *mb_mode_name(size_t i) {
  return i < 2 ? k_modes[i] : NULL;
}

static void list_models(char *buf, size_t cap) {
  size_t len = 0;
  for (size_t i = 0; i < NUM_MODELS && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
                            k_models[i].name);
}

mb_status_t mb_model_resolve(const char *model, const char *mode,
                             const char **op, mb_op_params_t *params) {
  const model_row_t *m = NULL;
  for (size_t i = 0; i < NUM_MODELS && !m; i++)
    if (model && !strcmp(model, k_models[i].name)) m = &k_models[i];
  if (!m) {
    char valid[512];
    list_models(valid, sizeof valid);
    return mb__fail(MB_ERR_NOT_FOUND, "unknown model \"%s\"; valid: %s",
                    model ? model : "(null)", valid);
  }
  int training = 0;
  if (mode && strcmp(mode, "inference")) {
    if (strcmp(mode, "training"))
      return mb__fail(MB_ERR_NOT_FOUND,
                      "unknown benchmark mode \"%s\"; valid: inference, "
                      "training",
                      mode);
    training = 1;
  }
  if (training && !m->training)
    return mb__fail(MB_ERR_UNSUPPORTED,
                    "model \"%s\" has no training graph in this version: its "
                    "backward needs layernorm and activation backward ops, "
                    "which the catalogue does not have yet (attention_bwd "
                    "it has); training is built for: linear",
                    model);
  if (op) *op = (training ? m->training : m->op)->name;
  if (params && m->op == &mb__op_ln_linear) {
    /* torchao's LNLinearActivationModel: LayerNorm(elementwise_affine=
     * False), no gamma or beta. */
    params->activation = m->act;
    params->flags |= MB_PARAM_NO_WEIGHT;
  }
  return MB_OK;
}

void mb__model_label(const mb_op_t *op, const mb_op_params_t *p, char *buf,
                     size_t cap) {
  for (size_t i = 0; i < NUM_MODELS; i++)
    if ((k_models[i].op == op || k_models[i].training == op) &&
        (op != &mb__op_ln_linear || k_models[i].act == p->activation)) {
      snprintf(buf, cap, "%s", k_models[i].name);
      return;
    }
  /* An activation torchao has no model for (gelu_tanh). */
  if (op == &mb__op_ln_linear)
    snprintf(buf, cap, "%s_%s", op->name, mb_activation_name(p->activation));
  else /* a composite that is not one of torchao's (moe_layer_proxy) */
    snprintf(buf, cap, "%s", op->name);
}

const char *mb_phase_name(mb_phase_t p) {
  static const char *const names[] = {"forward", "backward", "setup"};
  return (unsigned)p < 3 ? names[p] : "?";
}
