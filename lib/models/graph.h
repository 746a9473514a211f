/* Internal: a composite op as a short graph of primitive steps.
 *
 * A composite's compose hook writes its graph: buffers (the op's operands
 * first, then intermediates) and steps, each a primitive op with resolved
 * params wired to buffers. The core runs the graph on any backend that has
 * the primitives (composite.c), checks every step against its own
 * reference on the inputs the device really gave it, and times each step
 * alone for the breakdown. Builders chain calls without checking: the first
 * error sticks in g->status and later calls do nothing. */
#ifndef MB_LIB_GRAPH_H
#define MB_LIB_GRAPH_H

#include "ops/op_internal.h"
#include "ops/sparse.h"

/* A transformer block under an HQQ recipe: 6 layers of 5 steps and 8
 * buffers each, beside the norms, attention and residuals. */
#define MB__GRAPH_MAX_BUFS 96
#define MB__GRAPH_MAX_STEPS 64
/* An argument slot that asks mb__graph_step for a new intermediate buffer
 * shaped as the step's operand. */
#define MB__NEW UINT32_MAX

typedef struct mb__gbuf {
  const char *name; /* static: "x", "w_q", "qkv.scale_a" */
  mb_dtype_t dtype;
  uint32_t ndim;
  int64_t shape[MB_MAX_DIMS];
  size_t numel;
  int operand; /* >= 0: the composite's operand role; -1: intermediate */
  /* Intermediates only: filled with `value` once at prepare (a unit scale
   * for an unscaled GEMM side); NAN: left as allocated. */
  double value;
} mb__gbuf_t;

/* A step the core computes on the host instead of a backend kernel: setup
 * only (weight preparation no device library has, HQQ's solver), its
 * inputs copied back from the device and its outputs uploaded. `note`: a
 * line for the result ("" none). */
typedef mb_status_t (*mb__host_fn_t)(const mb_op_params_t *p,
                                     const void *const *in, void *const *out,
                                     char *note, size_t cap);

typedef struct mb__gstep {
  const char *label; /* static: "quantize activations", "gemm" */
  const mb_op_t *op;
  mb_op_params_t params; /* resolved */
  uint32_t arg[8];       /* buffer of each operand role (inputs, outputs) */
  mb_phase_t phase;      /* setup steps run once, untimed */
  mb__host_fn_t host;    /* NULL: a backend kernel runs it */
} mb__gstep_t;

typedef struct mb__graph {
  mb__gbuf_t bufs[MB__GRAPH_MAX_BUFS];
  uint32_t num_bufs;
  mb__gstep_t steps[MB__GRAPH_MAX_STEPS];
  uint32_t num_steps;
  mb_status_t status; /* the first error; MB_OK while building succeeds */
  const char *op;     /* the composite's name, for messages */
} mb__graph_t;

/* Starts the graph of composite `op` with resolved-so-far params `p`:
 * buffers 0 .. inputs+outputs-1 are its operands in role order. */
void mb__graph_init(mb__graph_t *g, const mb_op_t *op, const mb_op_params_t *p);
/* A new rows x cols intermediate; its index (0 after an error). */
uint32_t mb__graph_buf(mb__graph_t *g, const char *name, mb_dtype_t dtype,
                       int64_t rows, int64_t cols);
/* A 1 x 1 f32 buffer holding 1: the scale input of an unscaled side. */
uint32_t mb__graph_unit(mb__graph_t *g);
/* Appends step `label` of primitive `op` with `params` (resolved here; an
 * error names the composite, the step and the recipe's constraint) and its
 * operands wired to args[0 .. inputs+outputs-1] (MB__NEW: a new buffer
 * shaped as that operand). Each operand must match its buffer's dtype and
 * element count; a mismatch is a bug in the composite (MB_ERR_INTERNAL).
 * Returns the step index (0 after an error). */
uint32_t mb__graph_step(mb__graph_t *g, const char *label, mb_phase_t phase,
                        const mb_op_t *op, const mb_op_params_t *params,
                        const uint32_t *args);
/* A setup step the core runs on the host with `fn` (mb__host_fn_t). */
uint32_t mb__graph_host_step(mb__graph_t *g, const char *label,
                             const mb_op_t *op, const mb_op_params_t *params,
                             const uint32_t *args, mb__host_fn_t fn);
/* Buffer wired to operand `role` of step `step`. */
static inline uint32_t mb__graph_arg(const mb__graph_t *g, uint32_t step,
                                     uint32_t role) {
  return g->steps[step].arg[role];
}

/* The recipe's linear layer Y[M,N] = X[M,K] . W[K,N] (hp dtype) appended
 * to g: weight quantization (a setup step in inference; in training it is
 * timed, the master weights change every step), dynamic activation
 * quantization, dequantization and the GEMM, as the recipe says
 * (recipe.c). `name` prefixes the labels: "" for a lone layer, or one of
 * q, k, v, proj, fc1, fc2. xq/xs: X already quantized for this recipe (0:
 * quantize it here, and they are set to what was made, so layers that
 * read the same X share one quantization). */
typedef struct mb__linear_io {
  const char *name;
  uint32_t x, w, y; /* buffers */
  int64_t m, k, n;
  int training; /* weights quantized inside the timed step */
  uint32_t xq, xs;
} mb__linear_io_t;
void mb__graph_linear(mb__graph_t *g, const mb_op_params_t *p,
                      mb__linear_io_t *io);
/* The backward of that layer given dY[M,N]: dX[M,K] = dY . W^T and
 * dW[K,N] = X^T . dY, each quantized dynamically as the recipe scales
 * (tensorwise, rowwise, blockwise; baseline: high precision, transposes
 * read in place by the GEMM). */
void mb__graph_linear_backward(mb__graph_t *g, const mb_op_params_t *p,
                               const mb__linear_io_t *io, uint32_t dy,
                               uint32_t dx, uint32_t dw);

/* HQQ's weight preparation of W[K,N] (hp) in groups of `group` along K, a
 * host setup step (hqq_step.c): its outputs, by role 1..4, are Q (i4,
 * K x N), the scales (f32, K/g x N), the zero-point offsets (hp, K/g x N)
 * and the group-sum matrix G (hp, K x K/g). Returns the step. */
extern const mb_op_t mb__op_hqq_weights;
uint32_t mb__graph_hqq_weights(mb__graph_t *g, const char *label, uint32_t w,
                               int64_t k, int64_t n, mb_dtype_t hp,
                               int64_t group);

/* torchao's sparsity on W[K,N] (hp), a host setup step (sparse_step.c):
 * compress: its outputs, roles 1 and 2, are the sparse GEMM's B operands
 * (gemm_sparse24's values and metadata, or gemm_block_sparse's blocks and
 * indices); else role 1 is W pruned 2:4, dense, for a quantized recipe.
 * Returns the step. */
uint32_t mb__graph_sparse_weights(mb__graph_t *g, const char *label, uint32_t w,
                                  int64_t k, int64_t n, mb_dtype_t hp,
                                  mb__sparsity_t s, int compress);

/* FLOP and bytes of a graph's timed steps (the composites' models). */
double mb__graph_flop(const mb__graph_t *g);
double mb__graph_bytes(const mb__graph_t *g);

#endif
