/* CPU backend — add through oneDNN's binary primitive.
 *
 * Z[M,N] = X + Y. oneDNN computes in f32 and rounds once to Z's dtype. */
#include "cpu_onednn.h"

#include <stdio.h>

mb_status_t mb__cpu_add_onednn_prepare(void *bstate,
                                       const mb_kernel_call_t *call,
                                       void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  char what[48];
  snprintf(what, sizeof what, "add %s->%s", st->host.dtype_name(p->dtype),
           st->host.dtype_name(p->dtype_out));
  mb_status_t status = mb__cpu_onednn_check(st, what);
  if (status != MB_OK) return status;

  const int64_t m = p->shape[0], n = p->shape[1];
  mb_cpu_onednn_operands_t ops = {
      .n = 3,
      .arg = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST},
      .operand = {0, 1, MB_CPU_ONEDNN_OUT(0)}};
  status = mb__cpu_onednn_md_2d(st, what, &ops.md[0], m, n, p->dtype);
  if (status == MB_OK)
    status = mb__cpu_onednn_md_2d(st, what, &ops.md[1], m, n, p->dtype_b);
  if (status == MB_OK)
    status = mb__cpu_onednn_md_2d(st, what, &ops.md[2], m, n, p->dtype_out);
  if (status != MB_OK) return status;

  dnnl_binary_desc_t desc;
  const dnnl_status_t s = dnnl_binary_desc_init(
      &desc, dnnl_binary_add, &ops.md[0], &ops.md[1], &ops.md[2]);
  status = mb__cpu_onednn_desc(st, what, "binary", s);
  if (status != MB_OK) return status;
  /* No attributes of its own: the defaults (attr NULL) suffice. */
  return mb__cpu_onednn_create(st, what, &desc, NULL, &ops, call, kstate);
}
