/* Internal: what an op descriptor holds. An op is defined once, here in the
 * core — meaning, parameters, FLOP/byte model, inputs, reference, tolerance
 * — and backends only supply kernels, so every backend is measured on the
 * same inputs, formulas and checks. */
#ifndef MB_LIB_OP_INTERNAL_H
#define MB_LIB_OP_INTERNAL_H

#include "internal.h"

/* An output element passes when
 *   |got - ref| <= ulps * ulp_out(ref) + rel * scale
 * where ulp_out(x) is the spacing of the output format at |x| (1 for
 * integers) and `scale` is what the reference returns with the value (e.g.
 * sum |a_ik b_kj| for a dot product). A correctly rounded result is within
 * 0.5 ulp, so ulps = 0.5 catches truncation; rel covers compute-type error. */
typedef struct mb__tolerance {
  double ulps;
  double rel;
} mb__tolerance_t;

/* Which fields of mb_op_params_t an op uses (results record only those).
 * Each MB_PARAM_* flag belongs to one of these groups: the group column of
 * MB_PARAM_FLAG_LIST (op.h) names it without the MB__P_ prefix. */
#define MB__P_ALPHA_BETA 1u
#define MB__P_SCALES 2u  /* scale_a, scale_b */
#define MB__P_SCALE_A 4u /* scale_a only (granularity) */
#define MB__P_QUANT 8u   /* dtype_q + quantize-inputs flag */
#define MB__P_TRANSPOSE 16u
#define MB__P_STATIC 32u
#define MB__P_ACT 64u
#define MB__P_EPS 128u
#define MB__P_CAUSAL 256u
#define MB__P_TF32 512u
#define MB__P_TRANS_AB 1024u   /* gemm: MB_PARAM_TRANS_A / MB_PARAM_TRANS_B */
#define MB__P_BSHD 2048u       /* attention: MB_PARAM_BSHD */
#define MB__P_RECIPE 4096u     /* composites: the recipe */
#define MB__P_FAST_ACCUM 8192u /* gemm: MB_PARAM_FAST_ACCUM */
#define MB__P_PINNED 16384u    /* h2d, d2h: MB_PARAM_PINNED */
#define MB__P_KV_HEADS 32768u  /* attention: kv_heads (grouped-query) */
#define MB__P_COLL 65536u      /* collectives: ranks (and rank) */
#define MB__P_REDUCE 131072u   /* collectives that reduce: reduce_op */
#define MB__P_ROOT 262144u     /* broadcast, reduce: root */
#define MB__P_IN_PLACE 524288u /* collectives: MB_PARAM_IN_PLACE */
#define MB__P_PEER 1048576u    /* d2d: MB_PARAM_PEER */

/* The dimension names of a 2-D [M, N] shape and the operand names of a
 * one-in, one-out op (X -> Y), which most element-wise ops share. */
static const char *const mb__dims_mn[] = {"M", "N"};
static const char *const mb__operands_xy[] = {"X", "Y"};

struct mb__graph;

struct mb_op {
  const char *name;
  const char *summary;
  const char *shape_syntax; /* "MxKxN": dimension letters/names joined by x */
  const char *const *dim_names; /* {"M", "K", "N"}: JSON keys of the shape */
  const char
      *params_doc;     /* parameters beyond shape and dtypes, for `list ops` */
  uint32_t param_mask; /* MB__P_*: the params that mean something here */
  uint32_t rank, num_inputs, num_outputs;
  const char *const *operand_names; /* inputs then outputs */
  const mb_dtype_t *dtypes;         /* valid input dtypes, for listing */
  size_t num_dtypes;

  /* Fill default dtypes and validate; errors name field, value, choices. */
  mb_status_t (*resolve)(mb_op_params_t *p);
  /* dtype and shape of operand `role` (inputs, then outputs). */
  void (*operand)(const mb_op_params_t *p, uint32_t role, mb_dtype_t *dtype,
                  uint32_t *ndim, int64_t *shape);
  double (*flop)(const mb_op_params_t *p);
  double (*bytes)(const mb_op_params_t *p);
  /* 1: the kernel reads output 0 before writing it (gemm with beta). */
  int (*reads_output)(const mb_op_params_t *p);

  /* Input generation. fill: the distribution of input `role` (NULL or
   * untouched: normal(0, 1)); the runner seeds it. post_fill: derive inputs
   * from others after filling (e.g. quantize a normal matrix into A and its
   * scales, as real quantized operands are made). Both may be NULL. */
  void (*fill)(const mb_op_params_t *p, uint32_t role, mb_fill_t *fill);
  mb_status_t (*post_fill)(const mb_op_params_t *p, void *const *host,
                           uint64_t seed);

  /* Reference, element by element, in double. `host` holds the inputs then
   * the outputs' initial contents, in their own dtypes. */
  double (*ref_cost)(const mb_op_params_t *p); /* work per output element */
  mb_status_t (*ref_prepare)(const mb_op_params_t *p, const void *const *host,
                             void **state);
  /* value: the exact result of element idx of output `out`; scale: the
   * magnitude the rel tolerance multiplies. */
  void (*ref_element)(const void *state, uint32_t out, size_t idx,
                      double *value, double *scale);
  void (*ref_release)(void *state);
  /* 1: ref_element only reads its state, so the check computes the
   * reference values on several threads (verify.c); for references that
   * cost whole rows or columns an element (attention and its backward). */
  int ref_pure;
  mb__tolerance_t (*tolerance)(const mb_op_params_t *p, uint32_t out);

  /* ---- composite ops only (graph.h); NULL for primitives --------------- */
  /* Writes the graph of primitive steps that computes the op under
   * p->recipe. A composite's reference (ref_*) is the high-precision model
   * in double, used for the accuracy of the output (and as the check of a
   * backend's fused kernel). */
  void (*compose)(const mb_op_params_t *p, struct mb__graph *g);
  /* Optional: maps a random number to the index of an output element to
   * check, when checking costs far more for some elements than others (a
   * transformer block's reference computes whole sequences: sample few). */
  size_t (*ref_sample)(const mb_op_params_t *p, uint32_t out, uint64_t r);
  /* Optional: what the result should say about the shape ("N is unused"). */
  const char *shape_note;
  /* 1: the op moves data over a link (h2d, d2h: the host's; d2d: between
   * devices), so the device's copy bandwidth is not its roof: the link's
   * datasheet figure is, when the kernel notes it (MB_KERNEL_NOTE_LINK),
   * else the result has no roofline. */
  int link_bound;
  /* A collective (collective.c): 1 + its mb_coll_kind_t; 0 otherwise. */
  int coll;
};

/* nccl-tests' bus-bandwidth factor of a collective over `ranks` ranks:
 * busbw = algbw x this (docs/distributed.md). */
double mb__coll_bus_factor(mb_coll_kind_t kind, int ranks);

/* attention's kv_heads as results write it (variant, JSON): the K/V head
 * count when it differs from H = shape[1] (grouped-query attention), 0 for
 * multi-head, which results leave out so that they read as they did
 * before the field existed (and back as H). */
static inline int64_t mb__gqa_kv_heads(const mb_op_t *op,
                                       const mb_op_params_t *p) {
  return op && (op->param_mask & MB__P_KV_HEADS) && p->kv_heads &&
                 p->kv_heads != p->shape[1]
             ? p->kv_heads
             : 0;
}

/* The primitive ops (catalogue.c lists every op; the models are in
 * models/model_ops.h). */
extern const mb_op_t mb__op_activation;
extern const mb_op_t mb__op_add;
extern const mb_op_t mb__op_all_gather;
extern const mb_op_t mb__op_all_reduce;
extern const mb_op_t mb__op_all_to_all;
extern const mb_op_t mb__op_broadcast;
extern const mb_op_t mb__op_reduce;
extern const mb_op_t mb__op_reduce_scatter;
extern const mb_op_t mb__op_sendrecv;
extern const mb_op_t mb__op_attention;
extern const mb_op_t mb__op_attention_bwd;
extern const mb_op_t mb__op_copy;
extern const mb_op_t mb__op_d2d;
extern const mb_op_t mb__op_d2h;
extern const mb_op_t mb__op_dequantize;
extern const mb_op_t mb__op_gemm;
extern const mb_op_t mb__op_h2d;
extern const mb_op_t mb__op_layernorm;
extern const mb_op_t mb__op_quantize;
extern const mb_op_t mb__op_rmsnorm;
extern const mb_op_t mb__op_rmsnorm_bwd;
extern const mb_op_t mb__op_rope;
extern const mb_op_t mb__op_scale;
extern const mb_op_t mb__op_silu_mul;
extern const mb_op_t mb__op_softmax;
extern const mb_op_t mb__op_swiglu_bwd;
extern const mb_op_t mb__op_triad;

/* The activation functions in double (activation.c). */
double mb__act_eval(mb_activation_t act, double x, double alpha);

/* Shared by op definitions (op.c). */
mb_status_t mb__check_shape(const mb_op_t *op, const mb_op_params_t *p);
mb_status_t mb__check_dtype(const mb_op_t *op, const char *field,
                            mb_dtype_t dtype, const mb_dtype_t *valid,
                            size_t num_valid);
size_t mb__operand_numel(const mb_op_t *op, const mb_op_params_t *p,
                         uint32_t role);
/* Fills unset dtypes: dtype_b/dtype_out from dtype when NONE, acc = f32. */
void mb__default_dtypes(mb_op_params_t *p, mb_dtype_t dflt);
/* Bytes of `count` elements of dtype, as double. */
double mb__bytes(mb_dtype_t dtype, double count);

/* Scaling (scaling.c). Resolves `s` for a rows x cols operand: mode ->
 * explicit block; `group_along_rows` says which way a group runs (B: K is
 * rows). Errors name the op and operand. */
mb_status_t mb__scaling_resolve(const char *op, const char *operand,
                                mb_scaling_t *s, int64_t rows, int64_t cols,
                                int group_along_rows);
/* Number of scales: (rows / block[0]) x (cols / block[1]); 1 for NONE. */
void mb__scaling_grid(const mb_scaling_t *s, int64_t rows, int64_t cols,
                      int64_t *grid_rows, int64_t *grid_cols);
/* The scale of element (r, c) from a row-major f32 grid. */
static inline float mb__scale_at(const float *grid, const mb_scaling_t *s,
                                 int64_t grid_cols, int64_t r, int64_t c) {
  if (s->mode == MB_SCALE_NONE) return 1.0f;
  return grid[(r / s->block[0]) * grid_cols + c / s->block[1]];
}

/* Quantization semantics shared by quantize, dequantize and the GEMM family
 * (quant.c): s = absmax / qmax in f32 (an all-zero block: s = 1), q =
 * round-to-nearest-even-saturate(x / s) with the division in f32. */
float mb__quant_scale(float absmax, mb_dtype_t qdtype);
/* e8m0 scales (MX): emax_elem of an element format (e4m3 8, e5m2 15; 0:
 * none), and a block's scale 2^(floor(log2 amax) - emax) clamped to
 * [2^-127, 2^127], 2^-127 for amax 0, NaN for a NaN or infinite amax. */
int mb__mx_emax(mb_dtype_t qdtype);
float mb__mx_scale(float absmax, mb_dtype_t qdtype);
/* Resolves params.dtype_scale for an op whose quantized elements are
 * `qdtype` (`scaled`: the op has the scales e8m0 needs): f32 becomes NONE;
 * e8m0 needs fp8 elements and, if static, a power-of-two scale. */
mb_status_t mb__check_scale_dtype(const char *op, mb_op_params_t *p,
                                  mb_dtype_t qdtype, int scaled);
/* Quantizes a rows x cols f32 matrix with scaling `s` into q (qdtype) and
 * grid (f32). static_scale > 0: use it for every block instead of absmax. */
void mb__quantize_ref(const float *x, int64_t rows, int64_t cols,
                      const mb_scaling_t *s, mb_dtype_t qdtype,
                      double static_scale, void *q, float *grid);
/* The same with the scales of dtype `sdtype` (params.dtype_scale): for
 * e8m0 the MX scales, held in `grid` as f32 values (each exact in e8m0). */
void mb__quantize_ref_sd(const float *x, int64_t rows, int64_t cols,
                         const mb_scaling_t *s, mb_dtype_t qdtype,
                         mb_dtype_t sdtype, double static_scale, void *q,
                         float *grid);
/* NVFP4 (quant_nvfp4.c): the per-tensor f32 scale S = fl32(amax / 2688)
 * (6 x 448; 1 for an all-zero or non-finite tensor), a block's e4m3 scale
 * e4m3_RNE_sat(fl32(fl32(amax_b / 6) / S)), and the quantization of a
 * rows x cols f32 matrix into packed e2m1 q and the e4m3 block scales
 * `grid` (bytes) with a given S: q = RNE_sat(fl32(x / fl32(s_b S))), 0 in
 * a block whose scale is 0. */
float mb__nvfp4_tensor_scale(float amax);
/* params.dtype_scale f8e4m3 (NVFP4) for op `op` with elements `qdtype`:
 * f4e2m1 elements and the per-tensor scale as the static scale. */
mb_status_t mb__check_nvfp4(const char *op, const mb_op_params_t *p,
                            mb_dtype_t qdtype);
uint8_t mb__nvfp4_block_scale(float amax_block, float tensor_scale);
void mb__nvfp4_quantize_ref(const float *x, int64_t rows, int64_t cols,
                            const mb_scaling_t *s, float tensor_scale, void *q,
                            uint8_t *grid);

#endif
