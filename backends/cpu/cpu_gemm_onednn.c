/* CPU backend — gemm through oneDNN matmul.
 *
 * D[M,N] = alpha * A[M,K]·B[K,N] + beta * D, all row-major as the caller
 * holds them (no pre-packed weights: we measure what a caller with plain
 * matrices gets, including oneDNN's own packing). With MB_PARAM_TRANS_A /
 * MB_PARAM_TRANS_B, A is stored K x M / B is stored N x K: their memory
 * descriptors say so ("ba") and oneDNN reads them in place, no copy. alpha is
 * the common output scale (mask 0) and beta a sum post-op, both applied in f32
 * before the one rounding to the output dtype. */
#include "cpu_onednn.h"

#include <stdio.h>

static mb_status_t build_attr(mb_cpu_state_t *st, const char *what,
                              const mb_op_params_t *p,
                              dnnl_primitive_attr_t attr) {
  dnnl_status_t s = dnnl_success;
  if (p->alpha != 1.0) {
    const float alpha = (float)p->alpha;
    s = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha);
  }
  if (s == dnnl_success && p->beta != 0.0) {
    dnnl_post_ops_t po = NULL;
    s = dnnl_post_ops_create(&po);
    if (s == dnnl_success) s = dnnl_post_ops_append_sum(po, (float)p->beta);
    if (s == dnnl_success) s = dnnl_primitive_attr_set_post_ops(attr, po);
    if (po) dnnl_post_ops_destroy(po);
  }
  if (s == dnnl_success) return MB_OK;
  MB_CPU_ERROR(st, "cpu/onednn: %s: alpha %g / beta %g attributes: %s", what,
               p->alpha, p->beta, dnnl_status2str(s));
  return MB_ERR_BACKEND;
}

mb_status_t mb__cpu_gemm_onednn_prepare(void *bstate,
                                        const mb_kernel_call_t *call,
                                        void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  char what[48];
  const int ta = (p->flags & MB_PARAM_TRANS_A) != 0;
  const int tb = (p->flags & MB_PARAM_TRANS_B) != 0;
  /* The layout is named: oneDNN may pick another implementation for it. */
  snprintf(what, sizeof what, "gemm %s->%s%s%s", st->host.dtype_name(p->dtype),
           st->host.dtype_name(p->dtype_out), ta ? " trans_a" : "",
           tb ? " trans_b" : "");
  mb_status_t status = mb__cpu_onednn_check(st, what);
  if (status != MB_OK) return status;

  const int64_t m = p->shape[0], k = p->shape[1], n = p->shape[2];
  mb_cpu_onednn_operands_t ops = {
      .n = 3,
      .arg = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
      .operand = {0, 1, MB_CPU_ONEDNN_OUT(0)}};
  status =
      mb__cpu_onednn_md_2d_stored(st, what, &ops.md[0], m, k, p->dtype, ta);
  if (status == MB_OK)
    status =
        mb__cpu_onednn_md_2d_stored(st, what, &ops.md[1], k, n, p->dtype_b, tb);
  if (status == MB_OK)
    status = mb__cpu_onednn_md_2d(st, what, &ops.md[2], m, n, p->dtype_out);
  if (status != MB_OK) return status;

  dnnl_matmul_desc_t desc;
  const dnnl_status_t s =
      dnnl_matmul_desc_init(&desc, &ops.md[0], &ops.md[1], NULL, &ops.md[2]);
  status = mb__cpu_onednn_desc(st, what, "matmul", s);
  if (status != MB_OK) return status;
  dnnl_primitive_attr_t attr = NULL;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: cannot create attributes", what);
    return MB_ERR_NO_MEMORY;
  }
  status = build_attr(st, what, p, attr);
  if (status == MB_OK)
    status = mb__cpu_onednn_create(st, what, &desc, attr, &ops, call, kstate);
  dnnl_primitive_attr_destroy(attr);
  return status;
}
