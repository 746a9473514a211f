/* CPU backend — what the oneDNN kernels share: building a primitive over the
 * caller's buffers, and running it. A oneDNN kernel is one primitive over
 * up to MB_CPU_ONEDNN_MAX_OPERANDS of the call's operands; gemm, add,
 * activation, softmax and layer norm differ only in the operation
 * descriptor, attributes and operands they build. */
#ifndef MB_CPU_ONEDNN_H
#define MB_CPU_ONEDNN_H

#include "cpu_internal.h"

#ifdef MB_HAVE_ONEDNN

#include <dnnl_debug.h> /* dnnl_status2str() for messages */

/* Layer norm's four (source, scale, shift, destination) are the most. */
enum { MB_CPU_ONEDNN_MAX_OPERANDS = 4 };

/* The primitive's operands: the i-th of n is execution argument arg[i]
 * (DNNL_ARG_SRC, ...), described by md[i], over the call's input
 * in[operand[i]], or its output out[j] for operand[i] MB_CPU_ONEDNN_OUT(j)
 * (outputs are named apart: how many inputs precede them varies, gemm has
 * its scale operands). */
#define MB_CPU_ONEDNN_OUT(j) (-1 - (j))
typedef struct mb_cpu_onednn_operands {
  int n;
  int arg[MB_CPU_ONEDNN_MAX_OPERANDS];
  int operand[MB_CPU_ONEDNN_MAX_OPERANDS];
  dnnl_memory_desc_t md[MB_CPU_ONEDNN_MAX_OPERANDS];
} mb_cpu_onednn_operands_t;

/* MB_OK, or MB_ERR_UNSUPPORTED (with an error message) when oneDNN is not
 * usable in this process. */
mb_status_t mb__cpu_onednn_check(mb_cpu_state_t *st, const char *what);

/* MB_OK when oneDNN initialised the operation descriptor (`s`, what its
 * dnnl_*_desc_init returned), else MB_ERR_UNSUPPORTED with a message naming
 * the `kind` of descriptor ("matmul"): oneDNN refuses shapes, dtypes and
 * flags it has no primitive for at this step already. */
mb_status_t mb__cpu_onednn_desc(mb_cpu_state_t *st, const char *what,
                                const char *kind, dnnl_status_t s);

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

/* Builds the primitive for `op_desc` with `attr` (borrowed, or NULL for the
 * defaults; scratchpad mode is set here either way), wraps the call's
 * operands `ops`, and returns the kernel state, which mb__cpu_onednn_run
 * and mb__cpu_onednn_release (cpu_internal.h) take. MB_ERR_UNSUPPORTED when
 * oneDNN has no implementation for it. `what` names the kernel in messages,
 * e.g. "gemm bf16". */
mb_status_t mb__cpu_onednn_create(mb_cpu_state_t *st, const char *what,
                                  const_dnnl_op_desc_t op_desc,
                                  dnnl_primitive_attr_t attr,
                                  const mb_cpu_onednn_operands_t *ops,
                                  const mb_kernel_call_t *call, void **kstate);

/* A bf16 (rows x inner) x (inner x cols) matmul into f32, its source and
 * destination dense row-major, its weights in the blocked layout oneDNN
 * picks: *packed describes it (pack weights into it once with a reorder,
 * mb__cpu_onednn_reorder: a plain one the matmul would copy into its
 * scratchpad at every call). The scratchpad is the caller's ("user" mode,
 * *scratch its descriptor, one per thread that runs the primitive). Logged
 * at debug under `what`. */
mb_status_t mb__cpu_onednn_packed_matmul(mb_cpu_state_t *st, const char *what,
                                         int64_t rows, int64_t inner,
                                         int64_t cols, dnnl_primitive_t *prim,
                                         dnnl_memory_desc_t *packed,
                                         dnnl_memory_desc_t *scratch);

/* A reorder from `from` into `to`; MB_ERR_UNSUPPORTED where it would need
 * a scratchpad (none of the plain-to-blocked ones here does). */
mb_status_t mb__cpu_onednn_reorder(mb_cpu_state_t *st, const char *what,
                                   const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to,
                                   dnnl_primitive_t *prim);

/* Executes prim with its n arguments on `stream` and waits: what oneDNN
 * said (loops inside parallel regions report a failure afterwards). */
dnnl_status_t mb__cpu_onednn_exec(dnnl_primitive_t prim, dnnl_stream_t stream,
                                  int n, const dnnl_exec_arg_t *args);

/* Calls fn(arg) where oneDNN sees one thread: for creating primitives that
 * each thread of a parallel region runs on its own, with a scratchpad of
 * its own (cpu_onednn.c says why). */
mb_status_t mb__cpu_onednn_one_thread(mb_status_t (*fn)(void *arg), void *arg);

#endif
#endif
