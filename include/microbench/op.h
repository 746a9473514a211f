/* libmicrobench — the op catalogue and user kernels.
 *
 * Ops (gemm, add, ...) are constant descriptors defined by the library: their
 * meaning, parameters, FLOP/byte model, reference and tolerance. Kernels
 * implement an op on a backend; backends bring theirs, and a program can
 * register its own with mb_kernel_register() to get the whole harness.
 *
 * Threading: op look-up is thread-safe (constant data). Kernel registration
 * follows the context rule (one thread at a time). */
#ifndef MICROBENCH_OP_H
#define MICROBENCH_OP_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An op descriptor: static storage, never freed. */
typedef struct mb_op mb_op_t;

/* By name or alias; NULL with an error message listing the valid ops. */
MB_API const mb_op_t *mb_op_find(const char *name);
/* Iteration: mb_op_next(NULL) is the first op; NULL after the last. */
MB_API const mb_op_t *mb_op_next(const mb_op_t *prev);
MB_API const char *mb_op_name(const mb_op_t *op);
MB_API const char *mb_op_summary(const mb_op_t *op);
/* Number of shape dimensions and their names, e.g. 3 and "MxKxN". */
MB_API uint32_t mb_op_rank(const mb_op_t *op);
MB_API const char *mb_op_shape_syntax(const mb_op_t *op);
/* Operands: inputs first, then outputs, in kernel order. */
MB_API uint32_t mb_op_num_inputs(const mb_op_t *op);
MB_API uint32_t mb_op_num_outputs(const mb_op_t *op);

/* Parameters of one op instance. Unset dtypes (MB_DTYPE_NONE) take the op's
 * defaults; mb_op_resolve() fills them and validates everything. */
typedef struct mb_op_params {
  uint32_t struct_size;
  uint32_t ndim;              /* must equal mb_op_rank() */
  int64_t shape[MB_MAX_DIMS]; /* gemm: M, K, N; add: M, N */
  mb_dtype_t dtype;           /* first input (A, X) */
  mb_dtype_t dtype_b;         /* second input (B, Y); NONE: as dtype */
  mb_dtype_t dtype_out;       /* output; NONE: op default */
  mb_dtype_t dtype_acc;       /* accumulation; NONE: op default */
  double alpha;               /* gemm: D = alpha * A.B + beta * D */
  double beta;
  uint32_t flags;
} mb_op_params_t;

#define MB_OP_PARAMS_INIT                                                \
  {                                                                      \
    sizeof(mb_op_params_t), 0u, {0, 0, 0, 0, 0, 0, 0, 0}, MB_DTYPE_NONE, \
        MB_DTYPE_NONE, MB_DTYPE_NONE, MB_DTYPE_NONE, 1.0, 0.0, 0u        \
  }

/* Fills defaults into *params and validates them for `op`. Errors name the
 * field, the bad value and the valid choices. */
MB_API mb_status_t mb_op_resolve(const mb_op_t *op, mb_op_params_t *params);
/* The FLOP/byte model (OPS.md) for resolved params. */
MB_API double mb_op_flop(const mb_op_t *op, const mb_op_params_t *params);
MB_API double mb_op_bytes(const mb_op_t *op, const mb_op_params_t *params);
/* Shape and dtype of operand `role` (inputs, then outputs). */
MB_API mb_status_t mb_op_operand(const mb_op_t *op,
                                 const mb_op_params_t *params, uint32_t role,
                                 mb_dtype_t *dtype, uint32_t *ndim,
                                 int64_t *shape);

/* What a user kernel receives. Everything is borrowed for the call. */
typedef struct mb_kernel_args {
  uint32_t struct_size;
  const mb_op_t *op;
  const mb_op_params_t *params; /* resolved */
  mb_tensor_t *const *inputs;
  uint32_t num_inputs;
  mb_tensor_t *const *outputs;
  uint32_t num_outputs;
} mb_kernel_args_t;

/* Returns MB_OK or an error (then mb_error_last() should say why). */
typedef mb_status_t (*mb_kernel_fn)(void *user, const mb_kernel_args_t *args);

typedef struct mb_kernel_desc {
  uint32_t struct_size;
  const char *op;       /* op name */
  const char *name;     /* implementation name, [a-z0-9_]+, e.g. "mine" */
  const char *backend;  /* the backend whose device memory it works on: "cpu" */
  mb_dtype_t dtype;     /* input dtype it accepts */
  mb_dtype_t dtype_out; /* output dtype; NONE: any */
  mb_kernel_fn setup;   /* optional; called once before correctness, untimed */
  mb_kernel_fn run;     /* required; the timed call */
  mb_kernel_fn teardown; /* optional; called once after measuring */
  void *user;            /* borrowed; must outlive the registration */
} mb_kernel_desc_t;

#define MB_KERNEL_DESC_INIT                                                    \
  {                                                                            \
    sizeof(mb_kernel_desc_t), 0, 0, "cpu", MB_DTYPE_NONE, MB_DTYPE_NONE, 0, 0, \
        0, 0                                                                   \
  }

/* Registers a user kernel in `ctx` (strings are copied). A registered kernel
 * is chosen over the backend's own when the spec names it (`impl`) or names
 * no implementation. Same (op, backend, name, dtype) twice: MB_ERR_INVALID_ARG.
 */
MB_API mb_status_t mb_kernel_register(mb_context_t *ctx,
                                      const mb_kernel_desc_t *desc);

typedef struct mb_kernel_info {
  uint32_t struct_size;
  const char *op, *name, *backend;
  mb_dtype_t dtype, dtype_out; /* NONE = any */
  int user;                    /* 1: registered by the program */
} mb_kernel_info_t;

#define MB_KERNEL_INFO_INIT \
  { sizeof(mb_kernel_info_t), 0, 0, 0, MB_DTYPE_NONE, MB_DTYPE_NONE, 0 }

/* Every kernel known to the context: user kernels then backend kernels.
 * Strings are owned by the context. */
MB_API size_t mb_kernel_count(const mb_context_t *ctx);
MB_API mb_status_t mb_kernel_info(const mb_context_t *ctx, size_t index,
                                  mb_kernel_info_t *out);

#ifdef __cplusplus
}
#endif
#endif
