/* CPU backend — what the oneDNN kernels share: building a primitive over the
 * caller's buffers, and running it. A oneDNN kernel is one primitive with
 * three operands (two inputs, one output); gemm and add differ only in the
 * operation descriptor and attributes they build. */
#ifndef MB_CPU_ONEDNN_H
#define MB_CPU_ONEDNN_H

#include "cpu_internal.h"

#ifdef MB_HAVE_ONEDNN

#include <dnnl_debug.h> /* dnnl_status2str() for messages */

/* Which execution argument each operand is: in[0], in[1], out[0]. */
typedef struct mb_cpu_onednn_operands {
  int arg[3]; /* DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST */
  dnnl_memory_desc_t md[3];
} mb_cpu_onednn_operands_t;

/* MB_OK, or MB_ERR_UNSUPPORTED (with an error message) when oneDNN is not
 * usable in this process. */
mb_status_t mb__cpu_onednn_check(mb_cpu_state_t *st, const char *what);

/* A row-major rows × cols matrix of `dtype`. */
mb_status_t mb__cpu_onednn_md_2d(mb_cpu_state_t *st, const char *what,
                                 dnnl_memory_desc_t *md, int64_t rows,
                                 int64_t cols, mb_dtype_t dtype);

/* A rows × cols matrix of `dtype` stored row-major, or, when `transposed`,
 * stored as its cols × rows transpose (column-major: oneDNN's "ba"), so a
 * primitive reads it in place. */
mb_status_t mb__cpu_onednn_md_2d_stored(mb_cpu_state_t *st, const char *what,
                                        dnnl_memory_desc_t *md, int64_t rows,
                                        int64_t cols, mb_dtype_t dtype,
                                        int transposed);

/* Creates the primitive for `op_desc` (and its scratchpad memory, ours in
 * "user" mode so nothing is allocated inside the timed execute; NULL when it
 * needs none). `attr` is borrowed and may be NULL (defaults). Logs the
 * implementation oneDNN picked (a warning for a slow "ref" one).
 * MB_ERR_UNSUPPORTED when oneDNN has no implementation for it. */
mb_status_t mb__cpu_onednn_build(mb_cpu_state_t *st, const char *what,
                                 const_dnnl_op_desc_t op_desc,
                                 dnnl_primitive_attr_t attr,
                                 dnnl_primitive_t *prim,
                                 dnnl_memory_t *scratch);

/* Executes on the backend's stream and waits: the timed part of a kernel. */
mb_status_t mb__cpu_onednn_execute(mb_cpu_state_t *st, const char *what,
                                   dnnl_primitive_t prim, int nargs,
                                   const dnnl_exec_arg_t *args);

/* Builds the primitive for `op_desc` with `attr` (borrowed; scratchpad mode
 * is set here), wraps the call's buffers, and returns the kernel state.
 * MB_ERR_UNSUPPORTED when oneDNN has no implementation for it. `what` names
 * the kernel in messages, e.g. "gemm bf16". */
mb_status_t mb__cpu_onednn_create(mb_cpu_state_t *st, const char *what,
                                  const_dnnl_op_desc_t op_desc,
                                  dnnl_primitive_attr_t attr,
                                  const mb_cpu_onednn_operands_t *ops,
                                  const mb_kernel_call_t *call, void **kstate);

#endif
#endif
