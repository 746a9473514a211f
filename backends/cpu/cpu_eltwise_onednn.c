/* CPU backend — activation, softmax and layernorm through oneDNN 2.6
 * (eltwise, softmax and layer-normalization primitives).
 *
 * The shared kernel in cpu_onednn.c wraps exactly three operands; these
 * primitives have two (eltwise, softmax) or four (layer norm: source,
 * scale, shift, destination), so this file has its own small kernel over
 * any number of operands, with the same rules: the primitive and its
 * scratchpad are built in prepare, memory objects are re-pointed when the
 * caller's buffers change, run() executes and waits.
 *
 * oneDNN 2.x takes layer norm's scale and shift in f32 only: for bf16 data,
 * W and Bias (N elements, in the op's dtype) are converted into f32 buffers
 * inside run() — N conversions against M*N elements normalised. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"
#include "cpu_onednn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_OPERANDS = 4, FIXED = -1 };

typedef struct eltwise_dnnl {
  mb_cpu_state_t *st;
  char what[48];
  dnnl_primitive_t prim;
  dnnl_memory_t scratch;
  int nmem;
  dnnl_memory_t mem[MAX_OPERANDS];
  int operand[MAX_OPERANDS]; /* call operand (inputs, then outputs) or FIXED */
  void *bound[MAX_OPERANDS];
  dnnl_exec_arg_t args[MAX_OPERANDS + 1]; /* the operands, the scratchpad */
  int nargs;
  /* Layer norm on 16-bit data: f32 copies of W and Bias, from operands 1, 2. */
  float *params_f32[2];
  size_t n_params;
  mb_dtype_t param_dtype;
} eltwise_dnnl_t;

static void *operand_ptr(const mb_kernel_call_t *call, int i) {
  return (uint32_t)i < call->num_in ? call->in[i]
                                    : call->out[(uint32_t)i - call->num_in];
}

void mb__cpu_eltwise_onednn_release(void *kstate) {
  eltwise_dnnl_t *k = kstate;
  if (!k) return;
  for (int i = 0; i < k->nmem; ++i)
    if (k->mem[i]) dnnl_memory_destroy(k->mem[i]);
  if (k->scratch) dnnl_memory_destroy(k->scratch);
  if (k->prim) dnnl_primitive_destroy(k->prim);
  free(k->params_f32[0]);
  free(k->params_f32[1]);
  free(k);
}

static eltwise_dnnl_t *kernel_new(mb_cpu_state_t *st, const char *what) {
  eltwise_dnnl_t *k = calloc(1, sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: out of memory", what);
    return NULL;
  }
  k->st = st;
  snprintf(k->what, sizeof k->what, "%s", what);
  return k;
}

static mb_status_t create_primitive(eltwise_dnnl_t *k,
                                    const_dnnl_op_desc_t desc) {
  return mb__cpu_onednn_build(k->st, k->what, desc, NULL, &k->prim,
                              &k->scratch);
}

/* Execution argument `arg` over call operand `operand`, or over `fixed`
 * memory of ours when operand is FIXED. */
static mb_status_t bind(eltwise_dnnl_t *k, const mb_kernel_call_t *call,
                        int arg, const dnnl_memory_desc_t *md, int operand,
                        void *fixed) {
  const int i = k->nmem++;
  k->operand[i] = operand;
  k->bound[i] = operand == FIXED ? fixed : operand_ptr(call, operand);
  const dnnl_status_t s =
      dnnl_memory_create(&k->mem[i], md, k->st->engine, k->bound[i]);
  if (s != dnnl_success) {
    MB_CPU_ERROR(k->st, "cpu/onednn: %s: wrapping operand %d: %s", k->what, i,
                 dnnl_status2str(s));
    return MB_ERR_BACKEND;
  }
  k->args[i] = (dnnl_exec_arg_t){arg, k->mem[i]};
  return MB_OK;
}

/* Finishes a kernel whose primitive and operands are built. */
static mb_status_t finish(eltwise_dnnl_t *k, mb_status_t status,
                          void **kstate) {
  if (status != MB_OK) {
    mb__cpu_eltwise_onednn_release(k);
    return status;
  }
  k->nargs = k->nmem;
  if (k->scratch)
    k->args[k->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, k->scratch};
  *kstate = k;
  return MB_OK;
}

static mb_status_t check(mb_cpu_state_t *st, const mb_kernel_call_t *call,
                         const char *op, char *what, size_t size) {
  snprintf(what, size, "%s %s", op, st->host.dtype_name(call->params->dtype));
  return mb__cpu_onednn_check(st, what);
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
  mb_status_t status = check(st, call, "activation", what, sizeof what);
  if (status != MB_OK) return status;
  if ((unsigned)p->activation >= MB_ACT_COUNT) {
    MB_CPU_ERROR(st, "cpu/onednn: activation %d is not implemented",
                 (int)p->activation);
    return MB_ERR_UNSUPPORTED;
  }
  dnnl_memory_desc_t md;
  status =
      mb__cpu_onednn_md_2d(st, what, &md, p->shape[0], p->shape[1], p->dtype);
  if (status != MB_OK) return status;
  const float alpha = k_act[p->activation].slope ? (float)p->act_alpha
                                                 : k_act[p->activation].alpha;
  dnnl_eltwise_desc_t desc;
  const dnnl_status_t s = dnnl_eltwise_forward_desc_init(
      &desc, dnnl_forward_inference, k_act[p->activation].alg, &md, alpha,
      k_act[p->activation].beta);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: eltwise descriptor: %s", what,
                 dnnl_status2str(s));
    return MB_ERR_UNSUPPORTED;
  }
  eltwise_dnnl_t *k = kernel_new(st, what);
  if (!k) return MB_ERR_NO_MEMORY;
  status = create_primitive(k, &desc);
  if (status == MB_OK) status = bind(k, call, DNNL_ARG_SRC, &md, 0, NULL);
  if (status == MB_OK) status = bind(k, call, DNNL_ARG_DST, &md, 1, NULL);
  return finish(k, status, kstate);
}

/* ---- softmax ---------------------------------------------------------------
 */

mb_status_t mb__cpu_softmax_onednn_prepare(void *bstate,
                                           const mb_kernel_call_t *call,
                                           void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  char what[48];
  mb_status_t status = check(st, call, "softmax", what, sizeof what);
  if (status != MB_OK) return status;
  dnnl_memory_desc_t md;
  status =
      mb__cpu_onednn_md_2d(st, what, &md, p->shape[0], p->shape[1], p->dtype);
  if (status != MB_OK) return status;
  dnnl_softmax_v2_desc_t desc;
  const dnnl_status_t s = dnnl_softmax_v2_forward_desc_init(
      &desc, dnnl_forward_inference, dnnl_softmax_accurate, &md, &md, 1);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: softmax descriptor: %s", what,
                 dnnl_status2str(s));
    return MB_ERR_UNSUPPORTED;
  }
  eltwise_dnnl_t *k = kernel_new(st, what);
  if (!k) return MB_ERR_NO_MEMORY;
  status = create_primitive(k, &desc);
  if (status == MB_OK) status = bind(k, call, DNNL_ARG_SRC, &md, 0, NULL);
  if (status == MB_OK) status = bind(k, call, DNNL_ARG_DST, &md, 1, NULL);
  return finish(k, status, kstate);
}

/* ---- layernorm --------------------------------------------------------------
 * Operands X (0), W (1), Bias (2), Y (3). */

static mb_status_t params_md(eltwise_dnnl_t *k, dnnl_memory_desc_t *md,
                             int64_t n) {
  const dnnl_dims_t dims = {n};
  const dnnl_status_t s =
      dnnl_memory_desc_init_by_tag(md, 1, dims, dnnl_f32, dnnl_a);
  if (s == dnnl_success) return MB_OK;
  MB_CPU_ERROR(k->st, "cpu/onednn: %s: scale/shift descriptor: %s", k->what,
               dnnl_status2str(s));
  return MB_ERR_BACKEND;
}

/* Scale and shift: the caller's W and Bias when f32, else our f32 copies. */
static mb_status_t bind_params(eltwise_dnnl_t *k, const mb_kernel_call_t *call,
                               int64_t n) {
  dnnl_memory_desc_t md;
  mb_status_t status = params_md(k, &md, n);
  const mb_dtype_t dtype = call->params->dtype;
  if (status == MB_OK && dtype != MB_DTYPE_F32) {
    k->n_params = (size_t)n;
    k->param_dtype = dtype;
    k->params_f32[0] = malloc((size_t)n * sizeof(float));
    k->params_f32[1] = malloc((size_t)n * sizeof(float));
    if (!k->params_f32[0] || !k->params_f32[1]) {
      MB_CPU_ERROR(k->st, "cpu/onednn: %s: out of memory", k->what);
      return MB_ERR_NO_MEMORY;
    }
  }
  const int copy = dtype != MB_DTYPE_F32;
  if (status == MB_OK)
    status =
        bind(k, call, DNNL_ARG_SCALE, &md, copy ? FIXED : 1, k->params_f32[0]);
  if (status == MB_OK)
    status =
        bind(k, call, DNNL_ARG_SHIFT, &md, copy ? FIXED : 2, k->params_f32[1]);
  return status;
}

mb_status_t mb__cpu_layernorm_onednn_prepare(void *bstate,
                                             const mb_kernel_call_t *call,
                                             void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  char what[48];
  mb_status_t status = check(st, call, "layernorm", what, sizeof what);
  if (status != MB_OK) return status;
  dnnl_memory_desc_t md;
  status =
      mb__cpu_onednn_md_2d(st, what, &md, p->shape[0], p->shape[1], p->dtype);
  if (status != MB_OK) return status;
  const int affine = !(p->flags & MB_PARAM_NO_WEIGHT);
  dnnl_layer_normalization_desc_t desc;
  const dnnl_status_t s = dnnl_layer_normalization_forward_desc_init(
      &desc, dnnl_forward_inference, &md, NULL, (float)p->eps,
      affine ? dnnl_use_scale | dnnl_use_shift : 0u);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: layer normalization descriptor: %s", what,
                 dnnl_status2str(s));
    return MB_ERR_UNSUPPORTED;
  }
  eltwise_dnnl_t *k = kernel_new(st, what);
  if (!k) return MB_ERR_NO_MEMORY;
  status = create_primitive(k, &desc);
  if (status == MB_OK) status = bind(k, call, DNNL_ARG_SRC, &md, 0, NULL);
  if (status == MB_OK) status = bind(k, call, DNNL_ARG_DST, &md, 3, NULL);
  if (status == MB_OK && affine) status = bind_params(k, call, p->shape[1]);
  return finish(k, status, kstate);
}

/* ---- run
 * --------------------------------------------------------------------- */

mb_status_t mb__cpu_eltwise_onednn_run(void *kstate,
                                       const mb_kernel_call_t *call) {
  eltwise_dnnl_t *k = kstate;
  mb_cpu_state_t *st = k->st;
  /* Re-pointing a memory object at another buffer is cheap on CPU, so a
   * caller rotating through operand copies needs no new primitive. */
  for (int i = 0; i < k->nmem; ++i) {
    if (k->operand[i] == FIXED) continue;
    void *ptr = operand_ptr(call, k->operand[i]);
    if (ptr == k->bound[i]) continue;
    const dnnl_status_t s = dnnl_memory_set_data_handle(k->mem[i], ptr);
    if (s != dnnl_success) {
      MB_CPU_ERROR(st, "cpu/onednn: %s: re-pointing operand %d: %s", k->what, i,
                   dnnl_status2str(s));
      return MB_ERR_BACKEND;
    }
    k->bound[i] = ptr;
  }
  for (int i = 0; i < 2 && k->n_params; ++i)
    mb__cpu_load_f32(k->params_f32[i], call->in[1 + i], k->param_dtype, 0,
                     k->n_params);
  return mb__cpu_onednn_execute(st, k->what, k->prim, k->nargs, k->args);
}
