/* CPU backend — activation, softmax and layernorm through oneDNN 2.6
 * (eltwise, softmax and layer-normalization primitives), each one
 * primitive over the shared kernel of cpu_onednn.c.
 *
 * oneDNN 2.x takes layer norm's scale and shift in f32 only: for bf16 data,
 * W and Bias (N elements, in the op's dtype) are converted into f32 buffers
 * inside run() — N conversions against M*N elements normalised — and the
 * shared kernel reads those in their place. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"
#include "cpu_onednn.h"

#include <stdio.h>
#include <stdlib.h>

/* What every prepare here starts with: the kernel's name in `what`
 * ("softmax f32"), oneDNN's availability, and the data operands: X (in[0])
 * as SRC and Y (out[0]) as DST, both row-major M x N. */
static mb_status_t start(mb_cpu_state_t *st, const mb_kernel_call_t *call,
                         const char *op, char *what, size_t size,
                         mb_cpu_onednn_operands_t *ops) {
  const mb_op_params_t *p = call->params;
  snprintf(what, size, "%s %s", op, st->host.dtype_name(p->dtype));
  mb_status_t status = mb__cpu_onednn_check(st, what);
  if (status != MB_OK) return status;
  *ops = (mb_cpu_onednn_operands_t){.n = 2,
                                    .arg = {DNNL_ARG_SRC, DNNL_ARG_DST},
                                    .operand = {0, MB_CPU_ONEDNN_OUT(0)}};
  status = mb__cpu_onednn_md_2d(st, what, &ops->md[0], p->shape[0], p->shape[1],
                                p->dtype);
  if (status == MB_OK) ops->md[1] = ops->md[0];
  return status;
}

/* ---- activation ------------------------------------------------------------
 * Our activations as oneDNN eltwise algorithms. */
static const struct {
  dnnl_alg_kind_t alg;
  float alpha, beta;
  int slope; /* alpha is params.act_alpha */
} k_act[MB_ACT_COUNT] = {
    [MB_ACT_RELU] = {dnnl_eltwise_relu, 0.0f, 0.0f, 0},
    [MB_ACT_GELU_TANH] = {dnnl_eltwise_gelu_tanh, 0.0f, 0.0f, 0},
    [MB_ACT_GELU_ERF] = {dnnl_eltwise_gelu_erf, 0.0f, 0.0f, 0},
    [MB_ACT_SILU] = {dnnl_eltwise_swish, 1.0f, 0.0f, 0}, /* x sigmoid(1 x) */
    [MB_ACT_SIGMOID] = {dnnl_eltwise_logistic, 0.0f, 0.0f, 0},
    [MB_ACT_LEAKYRELU] = {dnnl_eltwise_relu, 0.0f, 0.0f, 1},
    [MB_ACT_RELU6] = {dnnl_eltwise_clip_v2, 0.0f, 6.0f, 0}, /* [0, 6] */
    [MB_ACT_HARDSWISH] = {dnnl_eltwise_hardswish, 0.0f, 0.0f, 0},
};

mb_status_t mb__cpu_activation_onednn_prepare(void *bstate,
                                              const mb_kernel_call_t *call,
                                              void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  char what[48];
  mb_cpu_onednn_operands_t ops;
  mb_status_t status = start(st, call, "activation", what, sizeof what, &ops);
  if (status != MB_OK) return status;
  if ((unsigned)p->activation >= MB_ACT_COUNT) {
    MB_CPU_ERROR(st, "cpu/onednn: activation %d is not implemented",
                 (int)p->activation);
    return MB_ERR_UNSUPPORTED;
  }
  const float alpha = k_act[p->activation].slope ? (float)p->act_alpha
                                                 : k_act[p->activation].alpha;
  dnnl_eltwise_desc_t desc;
  const dnnl_status_t s = dnnl_eltwise_forward_desc_init(
      &desc, dnnl_forward_inference, k_act[p->activation].alg, &ops.md[0],
      alpha, k_act[p->activation].beta);
  status = mb__cpu_onednn_desc(st, what, "eltwise", s);
  if (status != MB_OK) return status;
  return mb__cpu_onednn_create(st, what, &desc, NULL, &ops, call, kstate);
}

/* ---- softmax ---------------------------------------------------------------
 */

mb_status_t mb__cpu_softmax_onednn_prepare(void *bstate,
                                           const mb_kernel_call_t *call,
                                           void **kstate) {
  mb_cpu_state_t *st = bstate;
  char what[48];
  mb_cpu_onednn_operands_t ops;
  mb_status_t status = start(st, call, "softmax", what, sizeof what, &ops);
  if (status != MB_OK) return status;
  dnnl_softmax_v2_desc_t desc;
  const dnnl_status_t s = dnnl_softmax_v2_forward_desc_init(
      &desc, dnnl_forward_inference, dnnl_softmax_accurate, &ops.md[0],
      &ops.md[1], 1);
  status = mb__cpu_onednn_desc(st, what, "softmax", s);
  if (status != MB_OK) return status;
  return mb__cpu_onednn_create(st, what, &desc, NULL, &ops, call, kstate);
}

/* ---- layernorm --------------------------------------------------------------
 * Inputs X (0), W (1), Bias (2); output Y. */

typedef struct layernorm_dnnl {
  void *inner; /* the shared kernel */
  /* 16-bit data with weights: f32 copies of W and Bias, which the shared
   * kernel reads in their place; NULL otherwise. */
  float *params_f32[2];
  size_t n;
  mb_dtype_t dtype;
} layernorm_dnnl_t;

void mb__cpu_layernorm_onednn_release(void *kstate) {
  layernorm_dnnl_t *k = kstate;
  if (!k) return;
  mb__cpu_onednn_release(k->inner);
  free(k->params_f32[0]);
  free(k->params_f32[1]);
  free(k);
}

/* The call as the shared kernel sees it: inputs 1 and 2 are our f32
 * copies when there are any. `in` holds the three inputs. */
static mb_kernel_call_t with_copies(const layernorm_dnnl_t *k,
                                    const mb_kernel_call_t *call, void *in[3]) {
  mb_kernel_call_t view = *call;
  if (!k->params_f32[0]) return view;
  in[0] = call->in[0];
  in[1] = k->params_f32[0];
  in[2] = k->params_f32[1];
  view.in = in;
  return view;
}

/* Scale and shift (operands 2, 3 of the primitive): N floats each, the
 * caller's W and Bias when f32, else our f32 copies, allocated here. */
static mb_status_t add_params(mb_cpu_state_t *st, const char *what,
                              layernorm_dnnl_t *k, const mb_op_params_t *p,
                              mb_cpu_onednn_operands_t *ops) {
  const dnnl_dims_t dims = {p->shape[1]};
  const dnnl_status_t s =
      dnnl_memory_desc_init_by_tag(&ops->md[2], 1, dims, dnnl_f32, dnnl_a);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: scale/shift descriptor: %s", what,
                 dnnl_status2str(s));
    return MB_ERR_BACKEND;
  }
  ops->md[3] = ops->md[2];
  ops->arg[2] = DNNL_ARG_SCALE;
  ops->operand[2] = 1;
  ops->arg[3] = DNNL_ARG_SHIFT;
  ops->operand[3] = 2;
  ops->n = 4;
  if (p->dtype == MB_DTYPE_F32) return MB_OK;
  k->n = (size_t)p->shape[1];
  k->dtype = p->dtype;
  k->params_f32[0] = malloc(k->n * sizeof(float));
  k->params_f32[1] = malloc(k->n * sizeof(float));
  if (k->params_f32[0] && k->params_f32[1]) return MB_OK;
  MB_CPU_ERROR(st, "cpu/onednn: %s: out of memory", what);
  return MB_ERR_NO_MEMORY;
}

mb_status_t mb__cpu_layernorm_onednn_prepare(void *bstate,
                                             const mb_kernel_call_t *call,
                                             void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  char what[48];
  mb_cpu_onednn_operands_t ops;
  mb_status_t status = start(st, call, "layernorm", what, sizeof what, &ops);
  if (status != MB_OK) return status;
  const int affine = !(p->flags & MB_PARAM_NO_WEIGHT);
  dnnl_layer_normalization_desc_t desc;
  const dnnl_status_t s = dnnl_layer_normalization_forward_desc_init(
      &desc, dnnl_forward_inference, &ops.md[0], NULL, (float)p->eps,
      affine ? dnnl_use_scale | dnnl_use_shift : 0u);
  status = mb__cpu_onednn_desc(st, what, "layer normalization", s);
  if (status != MB_OK) return status;
  layernorm_dnnl_t *k = calloc(1, sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: out of memory", what);
    return MB_ERR_NO_MEMORY;
  }
  if (affine) status = add_params(st, what, k, p, &ops);
  void *in[3];
  const mb_kernel_call_t view = with_copies(k, call, in);
  if (status == MB_OK)
    status =
        mb__cpu_onednn_create(st, what, &desc, NULL, &ops, &view, &k->inner);
  if (status != MB_OK) {
    mb__cpu_layernorm_onednn_release(k);
    return status;
  }
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_layernorm_onednn_run(void *kstate,
                                         const mb_kernel_call_t *call) {
  const layernorm_dnnl_t *k = kstate;
  for (int i = 0; i < 2 && k->params_f32[i]; ++i)
    mb__cpu_load_f32(k->params_f32[i], call->in[1 + i], k->dtype, 0, k->n);
  void *in[3];
  const mb_kernel_call_t view = with_copies(k, call, in);
  return mb__cpu_onednn_run(k->inner, &view);
}
