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
/* 1 for a model op (linear, linear_training, ln_linear, transformer_block;
 * model.h): defined as a graph of primitive ops, so any backend with the
 * primitives runs it without a kernel of its own. */
MB_API int mb_op_is_composite(const mb_op_t *op);
/* A composite's primitive ops, those its graph runs under one recipe or
 * another, in mb_op_next order: index 0, 1, ... until NULL. NULL for a
 * primitive op. What a backend needs kernels for to run the composite;
 * mb_error_last() is left as it was. */
MB_API const mb_op_t *mb_op_primitive(const mb_op_t *op, size_t index);
/* 1 for a collective (all_reduce, all_gather, reduce_scatter, all_to_all,
 * broadcast, reduce, sendrecv): every rank of the context's communicator
 * runs it together, in lockstep (docs/distributed.md). */
MB_API int mb_op_is_collective(const mb_op_t *op);
/* Number of shape dimensions and their names, e.g. 3 and "MxKxN". */
MB_API uint32_t mb_op_rank(const mb_op_t *op);
MB_API const char *mb_op_shape_syntax(const mb_op_t *op);
/* Operands: inputs first, then outputs, in kernel order. */
MB_API uint32_t mb_op_num_inputs(const mb_op_t *op);
MB_API uint32_t mb_op_num_outputs(const mb_op_t *op);
/* "A", "B", "scale_a", ...; "" when out of range. Static. */
MB_API const char *mb_op_operand_name(const mb_op_t *op, uint32_t role);
/* Parameters beyond shape and dtypes, one line ("" if none), named as
 * config keys and Python keywords name them (no_affine, fast_accum; `mbench
 * list ops` spells the flags as its options, --no-affine). Static. */
MB_API const char *mb_op_params_doc(const mb_op_t *op);
/* Input dtypes the op defines. Static array of *count entries. */
MB_API const mb_dtype_t *mb_op_dtypes(const mb_op_t *op, size_t *count);

/* How a tensor is scaled: one f32 scale per block of block[0] x block[1]
 * elements of its 2-D view (rows x cols). Every granularity is a block size:
 * tensor = rows x cols, row = 1 x cols, col = rows x 1, group g along K =
 * 1 x g for A/activations and g x 1 for B/weights. mb_op_resolve() turns the
 * mode into the explicit block; an axis the block does not divide is an
 * error (never padding, never wrong output). */
typedef enum mb_scale_mode {
  MB_SCALE_NONE = 0,
  MB_SCALE_TENSOR = 1,
  MB_SCALE_ROW = 2,
  MB_SCALE_COL = 3,
  MB_SCALE_BLOCK = 4, /* block[0] x block[1] as given */
  MB_SCALE_GROUP = 5  /* block[1] = g along K (see above) */
} mb_scale_mode_t;

typedef struct mb_scaling {
  mb_scale_mode_t mode;
  int64_t block[2];
} mb_scaling_t;

/* "none", "tensor", "row", "col", "block", "group". Static. */
MB_API const char *mb_scale_mode_name(mb_scale_mode_t mode);
/* Parses "none", "tensor", "row", "col", "block:BMxBN" (also "BMxBN"),
 * "group:G". Errors list the valid forms. */
MB_API mb_status_t mb_scaling_from_string(const char *text, mb_scaling_t *out);

typedef enum mb_activation {
  MB_ACT_RELU = 0,
  MB_ACT_GELU_TANH = 1,
  MB_ACT_GELU_ERF = 2,
  MB_ACT_SILU = 3,
  MB_ACT_SIGMOID = 4,
  MB_ACT_LEAKYRELU = 5, /* negative slope: act_alpha (0.01) */
  MB_ACT_RELU6 = 6,
  MB_ACT_HARDSWISH = 7,
  MB_ACT_COUNT
} mb_activation_t;

/* "relu", "gelu_tanh", ...; also accepts "gelu" (= gelu_tanh, torchao's). */
MB_API const char *mb_activation_name(mb_activation_t act);
MB_API mb_status_t mb_activation_from_name(const char *name,
                                           mb_activation_t *out);

/* params.flags */
#define MB_PARAM_TRANSPOSE 1u /* quantize: quantize X^T (output N x M) */
#define MB_PARAM_STATIC 2u    /* quantize: use params.scale, not absmax */
#define MB_PARAM_CAUSAL 4u    /* attention: causal mask */
#define MB_PARAM_QUANTIZE_INPUTS                                    \
  8u                           /* gemm: quantize A and B to dtype_q \
                                  dynamically inside the timed op */
#define MB_PARAM_NO_WEIGHT 16u /* layernorm/rmsnorm: no affine weight/bias */
#define MB_PARAM_TF32                                                \
  32u /* gemm, f32 inputs: the kernel may multiply in tf32 (10-bit   \
         significand; tensor cores); the tolerance allows for it and \
         the result says "tf32". A kernel without tf32 declines it. */
#define MB_PARAM_TRANS_A                                                \
  64u /* gemm, unscaled float inputs: A is stored K x M and the product \
         uses its transpose (a backward pass's X^T.dY without a copy) */
#define MB_PARAM_TRANS_B                                                 \
  128u /* gemm, unscaled float inputs: B is stored N x K (torch's Linear \
          weight layout; dY.W in a backward pass) */
#define MB_PARAM_BSHD                                                     \
  256u /* attention: Q, K, V, O are stored [B, S, H, D] (a linear layer's \
          output viewed as heads) instead of [B, H, S, D] */
#define MB_PARAM_FAST_ACCUM                                             \
  512u /* gemm, fp8 A and B (or quantize-inputs to fp8): the kernel may \
          accumulate in the tensor cores' reduced precision without     \
          promoting partial sums to f32 (cuBLASLt's FAST_ACCUM, torch's \
          use_fast_accum); the tolerance allows for it and the result   \
          says "fast-accum". Other inputs: an input error. A real fp8   \
          GEMM without the mode runs in f32 and notes "not applied"; an \
          emulated one declines it (docs/gpu.md). */
#define MB_PARAM_PINNED                                                     \
  1024u /* h2d, d2h: the host buffer is page-locked (pinned: the DMA engine \
           reads or writes it directly) instead of pageable memory (staged  \
           through the driver's pinned bounce buffers) */
#define MB_PARAM_PEER                                                    \
  4096u /* d2d: peer access between the two devices is enabled           \
           (cudaDeviceEnablePeerAccess / hipDeviceEnablePeerAccess, both \
           ways), so the copy goes device to device over NVLink, xGMI or \
           PCIe; without it the runtime stages the copy through host memory */
#define MB_PARAM_EXPLICIT_DEQUANT                                       \
  2048u /* gemm with MB_PARAM_QUANTIZE_INPUTS: the product of the       \
           quantized operands is written unscaled in f32, then a second \
           pass applies A's row and B's column scales (and alpha, beta) \
           into D — the JAX suite's gemm_fp8_rowwise_w_dequantize — \
           instead of the GEMM's epilogue doing it */
#define MB_PARAM_IN_PLACE                                                    \
  8192u /* collectives: one buffer holds the input and then the output       \
           (NCCL's in-place layout, docs/distributed.md) instead of one each \
         */

/* Every MB_PARAM_* flag, one row each. Everything that names the flags
 * reads this list: the op's check that a flag applies, a result's params
 * (JSON) and variant, config files' keys, mbench run's options, and the
 * test of the Python package's constants. So a new flag is its #define
 * above, a row here and the op that takes it.
 *
 * X(NAME, group, key, result, inverted, name, label, set_by, option, help):
 *   NAME      the flag is MB_PARAM_<NAME>
 *   group     which ops take it: those whose parameters include the
 *             library's group <group> (internal: MB__P_<group>)
 *   key       its name in snake_case: the config key and Python keyword
 *   result    its boolean in a result's params, in this order; inverted 1:
 *             the boolean says the flag is not set
 *   name      what an error calls it ("causal" does not apply to this op)
 *   label     its word in a result's variant; NULL: written otherwise
 *             (q:<dtype_q>)
 *   set_by    what sets it as a boolean of its own: OPTION_AND_CONFIG
 *             (mbench run's option, Python's keyword <key>= and config
 *             files' key <key>), OPTION_ONLY (the option and the keyword;
 *             config files do not take it), IMPLIED (another parameter
 *             sets it: a static scale)
 *   option    mbench run --<option>, then its help; NULL when IMPLIED */
/* clang-format off */
#define MB_PARAM_FLAG_LIST(X)                                                 \
  X(QUANTIZE_INPUTS, QUANT, "quantize_inputs", "quantize_inputs", 0,          \
    "quantize-inputs", NULL, OPTION_AND_CONFIG, "quantize-inputs",            \
    "gemm: quantize bf16/f32 A and B inside the op (dynamic)")                \
  X(TF32, TF32, "tf32", "tf32", 0, "tf32", "tf32", OPTION_AND_CONFIG, "tf32", \
    "gemm f32: allow tf32 tensor-core math (GPU)")                            \
  X(TRANSPOSE, TRANSPOSE, "transpose", "transpose", 0, "transpose", "T",      \
    OPTION_AND_CONFIG, "transpose", "quantize: quantize X^T")                 \
  X(STATIC, STATIC, "static", "static", 0, "static scale", "static", IMPLIED, \
    NULL, NULL)                                                               \
  X(NO_WEIGHT, EPS, "no_affine", "affine", 1, "no-affine", "no-affine",       \
    OPTION_AND_CONFIG, "no-affine",                                           \
    "layernorm, rmsnorm, rmsnorm_bwd: no weight and bias")                  \
  X(CAUSAL, CAUSAL, "causal", "causal", 0, "causal", "causal",                \
    OPTION_AND_CONFIG, "causal", "attention: causal mask")                    \
  X(TRANS_A, TRANS_AB, "trans_a", "trans_a", 0, "trans_a", "A^T",             \
    OPTION_ONLY, "trans-a",                                                   \
    "gemm: A is stored K x M and used transposed (unscaled float inputs)")    \
  X(TRANS_B, TRANS_AB, "trans_b", "trans_b", 0, "trans_b", "B^T",             \
    OPTION_ONLY, "trans-b",                                                   \
    "gemm: B is stored N x K (torch's Linear weight) and used transposed")    \
  X(BSHD, BSHD, "bshd", "bshd", 0, "bshd", "bshd", OPTION_ONLY, "bshd",       \
    "attention: Q, K, V, O stored [B, S, H, D] instead of [B, H, S, D]")      \
  X(FAST_ACCUM, FAST_ACCUM, "fast_accum", "fast_accum", 0, "fast_accum",      \
    "fast-accum", OPTION_AND_CONFIG, "fast-accum",                            \
    "gemm fp8: allow fast (reduced-precision) accumulation, torch's "         \
    "use_fast_accum (cuBLASLt)")                                              \
  X(PINNED, PINNED, "pinned", "pinned", 0, "pinned", "pinned",                \
    OPTION_AND_CONFIG, "pinned",                                              \
    "h2d, d2h: page-locked host memory (default: pageable)")                 \
  X(PEER, PEER, "peer", "peer", 0, "peer", "peer", OPTION_AND_CONFIG, "peer", \
    "d2d: peer access enabled (default: staged through host memory)")        \
  X(EXPLICIT_DEQUANT, QUANT, "explicit_dequant", "explicit_dequant", 0,      \
    "explicit_dequant", "dequant", OPTION_AND_CONFIG, "explicit-dequant",    \
    "gemm quantize-inputs: unscaled product in f32, then the scales in a "   \
    "pass of their own (gemm_fp8_rowwise_w_dequantize)")                     \
  X(IN_PLACE, IN_PLACE, "in_place", "in_place", 0, "in_place", "in-place",   \
    OPTION_AND_CONFIG, "in-place",                                           \
    "collectives: one buffer holds the input and the output (NCCL's layout)")
/* clang-format on */

/* Parameters of one op instance. Unset dtypes (MB_DTYPE_NONE) take the op's
 * defaults; mb_op_resolve() fills them and validates everything. Fields
 * only ever grow at the end. */
typedef struct mb_op_params {
  uint32_t struct_size;
  uint32_t ndim;              /* must equal mb_op_rank() */
  int64_t shape[MB_MAX_DIMS]; /* gemm: M, K, N; add: M, N; attention: B, H, Sq,
                                 Skv, D */
  mb_dtype_t dtype;           /* first input (A, X) */
  mb_dtype_t dtype_b;         /* second input (B, Y); NONE: op default */
  mb_dtype_t dtype_out;       /* output; NONE: op default */
  mb_dtype_t dtype_acc;       /* accumulation / compute; NONE: op default */
  double alpha;               /* gemm: D = alpha * A.B + beta * D */
  double beta;
  uint32_t flags;             /* MB_PARAM_* */
  mb_scaling_t scale_a;       /* gemm: A's scales; quantize/dequantize: X's */
  mb_scaling_t scale_b;       /* gemm: B's scales */
  mb_dtype_t dtype_q;         /* gemm with MB_PARAM_QUANTIZE_INPUTS: target */
  double scale;               /* quantize with MB_PARAM_STATIC: the scale */
  mb_activation_t activation; /* activation */
  double act_alpha;           /* leakyrelu slope (0.01) */
  double eps;                 /* layernorm/rmsnorm (1e-5) */
  /* Composite ops: the quantization recipe applied to every linear layer
   * (model.h); MB_RECIPE_BASELINE (0): high precision. */
  uint32_t recipe;
  /* The dtype the scales of scale_a/scale_b (quantize, dequantize, gemm)
   * are stored in. NONE or MB_DTYPE_F32: f32 scales, absmax / qmax.
   * MB_DTYPE_E8M0: power-of-two scales, one byte each, computed by the OCP
   * MX rule (2^(floor(log2 amax) - emax_elem)); with blocks of 1x32 along K
   * (B: 32x1) that is MXFP8 (docs/ops.md, "Microscaling"). A field of its
   * own rather than a scale mode: the storage format is independent of the
   * block shape (e8m0 takes any block; NVFP4's e4m3 scales go in here too),
   * and every granularity keeps meaning one thing. */
  mb_dtype_t dtype_scale;
  /* attention: the K and V heads, Hkv (grouped-query attention, PyTorch
   * SDPA's enable_gqa, JAX dot_product_attention with fewer K/V heads): K
   * and V are [B, Hkv, Skv, D] and query head h reads K/V head
   * h / (H / Hkv); H must be a multiple of Hkv (1: multi-query). 0: H,
   * one K/V head per query head, what resolving fills in. Not a shape
   * dimension, so a multi-head shape and its results read as before. */
  int64_t kv_heads;
  /* Collectives (mb_op_is_collective; docs/distributed.md): */
  uint32_t reduce_op; /* all_reduce, reduce, reduce_scatter: mb_reduce_op_t
                         (comm.h), MB_REDUCE_SUM (0) by default */
  int32_t root;       /* broadcast, reduce: the rank that sends or receives */
  /* The ranks the collective runs over and this process's among them: not
   * inputs — the runner fills both from the context's communicator (1 and
   * 0 without one), and an input's shapes (all_gather's block of N /
   * ranks) and the check depend on them. */
  int32_t ranks;
  int32_t rank;
} mb_op_params_t;

#define MB_OP_PARAMS_INIT                                                     \
  {                                                                           \
    sizeof(mb_op_params_t), 0u, {0, 0, 0, 0, 0, 0, 0, 0}, MB_DTYPE_NONE,      \
        MB_DTYPE_NONE, MB_DTYPE_NONE, MB_DTYPE_NONE, 1.0, 0.0, 0u,            \
        {MB_SCALE_NONE, {0, 0}}, {MB_SCALE_NONE, {0, 0}}, MB_DTYPE_NONE, 0.0, \
        MB_ACT_RELU, 0.01, 1e-5, 0u, MB_DTYPE_NONE, 0, 0u, 0, 0, 0            \
  }

/* Aliases: the predecessor tools' names (gemm_simple, gemm_fp8_rowwise,
 * transpose_quantization, ...), each an op plus parameter presets that fill
 * only what the caller left unset. mb_op_alias_name(i, &op, &summary) for
 * i < mb_op_alias_count(); strings are static. */
MB_API size_t mb_op_alias_count(void);
MB_API const char *mb_op_alias_name(size_t index, const char **op,
                                    const char **summary);
/* Applies alias `name`'s presets to *params (no-op for an op's own name).
 * Unknown names: MB_ERR_NOT_FOUND with the valid ops. */
MB_API mb_status_t mb_op_apply_alias(const char *name, mb_op_params_t *params);

/* The largest dimension a shape may have (2^40). */
#define MB_MAX_DIM_SIZE ((int64_t)1 << 40)
/* "1024x512x256" (x or X between): 1 to MB_MAX_DIMS positive integers of
 * at most MB_MAX_DIM_SIZE, digits only. Anything else - a sign, a space, an
 * empty or trailing dimension, a number past the limit - is
 * MB_ERR_INVALID_ARG naming the text and what is wrong with it; *ndim and
 * dims are left alone then. */
MB_API mb_status_t mb_shape_parse(const char *text, uint32_t *ndim,
                                  int64_t *dims);

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

/* Returns MB_OK, or an error status after mb_error_set("why"): the
 * benchmark's result is then failed with that reason. */
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

/* Every kernel known to the context: user kernels then backend kernels,
 * each once (a backend may list a kernel twice in its table, around
 * another, to order the choice: exactly one of the two accepts on a given
 * machine). Strings are owned by the context. */
MB_API size_t mb_kernel_count(const mb_context_t *ctx);
MB_API mb_status_t mb_kernel_info(const mb_context_t *ctx, size_t index,
                                  mb_kernel_info_t *out);

#ifdef __cplusplus
}
#endif
#endif
