/* CUDA backend — GEMM through cuBLASLt (cuda_gemm_lt.c: prepare and run;
 * cuda_gemm_lt_tune.c: autotuning; cuda_gemm_lt_plan.c: which cuBLASLt
 * problem a request becomes and the reasons it declines;
 * cuda_gemm_lt_scales.c: the scale layouts and the host-side re-layouts
 * made in prepare).
 *
 * Our operands are row-major: A is M x K, B is K x N, D is M x N. cuBLASLt
 * is column-major, so every variant computes D^T = B^T A^T: cuBLASLt's "A"
 * is our B and its "B" is our A, with m = N, n = M, k = K, and D^T in
 * column-major (ld N) is exactly our row-major D. Variants:
 *
 *   float  f32 (exact or tf32), bf16, f16 inputs, f32 accumulation:
 *          "NN": cuBLASLt A = our B as N x K (ld N), B = our A as K x M
 *          (ld K); nothing is copied. The layout flags map onto cuBLASLt's
 *          ops, still without a copy: trans_b (our B stored N x K) is
 *          cuBLASLt A read as K x N (ld K) with op T, trans_a (our A stored
 *          K x M) is cuBLASLt B read as M x K (ld M) with op T.
 *   fp8    e4m3/e5m2 with tensor, row x column or 128-block scales: "TN",
 *          which fp8 requires: cuBLASLt A = our B stored N x K (K
 *          contiguous; transposed once in prepare), op T; B = our A (K x M,
 *          ld K), op N. Scales whose layout differs from cuBLASLt's are
 *          re-laid out in prepare.
 *   i8     i8 x i8 -> i32, exact (CUBLAS_COMPUTE_32I), TN as fp8.
 *   qi     quantize-inputs (gemm_fp8_rowwise): the shared quantize kernel
 *          turns A into fp8 + scales and B^T into N x K fp8 + scales inside
 *          the timed run, then the fp8 TN matmul reads them.
 *   MXFP8  fp8 (given scales, or quantize-inputs) with e8m0 scales in 1x32
 *          blocks of A and 32x1 of B: VEC32_UE8M0 on both operands, compute
 *          capability 10.0 and up only (elsewhere the shared kernels run
 *          it); the byte grids are tiled into cuBLASLt's 128x4 layout on
 *          the device (gpu_mx.h), in prepare for given scales, inside the
 *          timed run after the quantize kernel for quantize-inputs.
 *   FP4    f4e2m1 (given, or quantize-inputs to f4e2m1) as MXFP4
 *          (VEC32_UE8M0) or NVFP4 (VEC16_UE4M3, its per-tensor scales in
 *          alpha), CUDA_R_4F_E2M1, TN with B's nibbles transposed once in
 *          prepare (or quantized transposed in the op), the byte scales
 *          tiled as MXFP8's; compute capability 10.0 up
 *          (cuda_gemm_lt_fp4.c).
 * fp8 and qi take MB_PARAM_FAST_ACCUM: CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1
 * on the matmul descriptor (torch._scaled_mm's use_fast_accum). */
#ifndef MB_CUDA_GEMM_LT_H
#define MB_CUDA_GEMM_LT_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_internal.h"

/* ---- the kernel-table hooks (cuda_kernels_gemm.def) ---------------------- */

/* One hook for every entry: it analyses the whole request (variant, compute
 * capability, dims, scales), so the reason it gives is precise whichever
 * entry matched. */
mb_status_t mb__cuda_lt_supports(void *bstate, uint32_t dev,
                                 const mb_op_params_t *params,
                                 const char **why);
mb_status_t mb__cuda_lt_prepare(void *bstate, const mb_kernel_call_t *call,
                                void **kstate);
mb_status_t mb__cuda_lt_run(void *kstate, const mb_kernel_call_t *call);
void mb__cuda_lt_release(void *kstate);
uint32_t mb__cuda_lt_notes(void *kstate, mb_kernel_note_t *out, uint32_t max);

/* ---- between cuda_gemm_lt.c and cuda_gemm_lt_plan.c ---------------------- */

typedef enum mb_lt_variant {
  MB_LT_FLOAT = 0,
  MB_LT_FP8 = 1,
  MB_LT_I8 = 2,
  MB_LT_QI = 3
} mb_lt_variant_t;

/* Where the scales of one cuBLASLt operand come from. */
typedef enum mb_lt_scale_src {
  MB_LT_SC_NONE = 0,    /* not an fp8 operand: no scale pointer */
  MB_LT_SC_CALL = 1,    /* the op's scale tensor as it is (pointer from call) */
  MB_LT_SC_OUTER = 2,   /* expanded in prepare to one scale per row/column */
  MB_LT_SC_VEC128 = 3,  /* re-laid out in prepare: outer-major, 1 per 128 K */
  MB_LT_SC_BLK128 = 4,  /* re-laid out in prepare: K-major 128x128 blocks */
  MB_LT_SC_QUANT = 5,   /* written by the quantize kernel inside the op */
  MB_LT_SC_MX32 = 6,    /* e8m0, tiled for VEC32_UE8M0 in prepare */
  MB_LT_SC_QUANT_MX = 7 /* e8m0 from the quantize kernel, tiled in the op */
} mb_lt_scale_src_t;

/* One cuBLASLt operand's scaling. `outer` is its number of rows in the
 * product: N for cuBLASLt A (our B), M for cuBLASLt B (our A). */
typedef struct mb_lt_side {
  int32_t mode; /* cublasLtMatmulMatrixScale_t */
  mb_lt_scale_src_t src;
  int64_t outer;
  size_t count; /* floats cuBLASLt reads (kstate buffer size when copied);
                   bytes for VEC32_UE8M0 */
} mb_lt_side_t;

typedef struct mb_lt_plan {
  size_t lt_version; /* the loaded cuBLASLt's (features by version) */
  mb_lt_variant_t variant;
  int64_t m, k, n; /* ours */
  cublasComputeType_t compute;
  cudaDataType_t scale_type;     /* alpha/beta */
  cudaDataType_t a_type, b_type; /* our A, our B as cuBLASLt reads them */
  cudaDataType_t d_type;
  size_t a_bytes, b_bytes, d_bytes; /* element sizes */
  int tn;                /* cuBLASLt A is our B stored N x K (op T) */
  int b_copy;            /* ...a kernel-owned copy (fp8, i8, qi), not the
                            caller's B (trans_b) */
  int a_t;               /* cuBLASLt B is our A stored K x M (op T) */
  int8_t fast_accum;     /* fp8 with MB_PARAM_FAST_ACCUM: the descriptor's
                            CUBLASLT_MATMUL_DESC_FAST_ACCUM (int8_t) */
  int64_t scale_vec;     /* byte block scales (MXFP8, MXFP4: 32; NVFP4:
                            16): elements along K per scale; else 0 */
  float alpha_mul;       /* alpha is multiplied by it (NVFP4: S^2, the
                            per-tensor scales); 1 otherwise */
  int fp4;               /* CUDA_R_4F_E2M1 operands, packed two per byte */
  mb_lt_side_t la;       /* cuBLASLt A = our B (scale_b) */
  mb_lt_side_t lb;       /* cuBLASLt B = our A (scale_a) */
  char math[32];         /* "f32", "tf32", "bf16", "fp8 e4m3 x e4m3", "i8" */
  char compute_name[32]; /* "CUBLAS_COMPUTE_32F", ... */
  char scale_mode[320];
} mb_lt_plan_t;

/* The cuBLASLt problem `p` becomes on device `d` with the cuBLASLt of
 * `lt_version` (cublasLtGetVersion's number): MB_OK, or MB_ERR_UNSUPPORTED
 * with the reason in why[cap]. Pure host code. */
mb_status_t mb__cuda_lt_plan(const mb_cuda_device_t *d, const mb_op_params_t *p,
                             size_t lt_version, mb_lt_plan_t *pl, char *why,
                             size_t cap);

/* FP4 (cuda_gemm_lt_fp4.c): the plan of an f4e2m1 request (given, or
 * quantize-inputs to f4e2m1): MXFP4 as VEC32_UE8M0, NVFP4 as VEC16_UE4M3
 * with S^2 in alpha, compute capability 10.0 and cuBLASLt 12.8 up; else
 * MB_ERR_UNSUPPORTED with the reason. */
mb_status_t mb__cuda_lt_plan_fp4(const mb_cuda_device_t *d,
                                 const mb_op_params_t *p, mb_lt_plan_t *pl,
                                 char *why, size_t cap);
/* The planner's pieces FP4's shares: one side's mode, source, outer size and
 * buffer count (cuda_gemm_lt_scales.c); the plan's scale_mode text
 * (cuda_gemm_lt_plan.c). */
void mb__cuda_lt_side(mb_lt_side_t *s, int32_t mode, mb_lt_scale_src_t src,
                      int64_t outer, int64_t k);
void mb__cuda_lt_describe(const mb_op_params_t *p, mb_lt_plan_t *pl);
/* Names for that text (cuda_gemm_lt_scales.c): a cublasLtMatmulMatrixScale_t
 * ("VEC128_32F"), and where one side's scales come from. */
const char *mb__cuda_lt_mode_name(int32_t mode);
const char *mb__cuda_lt_src_name(mb_lt_scale_src_t src, int our_b);

/* Host re-layouts done in prepare (untimed; cuda_gemm_lt_scales.c, the
 * nibble transpose cuda_gemm_lt_fp4.c). */
/* dst (cols x rows) = src (rows x cols)^T, packed nibbles (FP4). */
void mb__cuda_lt_transpose_u4(const uint8_t *src, uint8_t *dst, int64_t rows,
                              int64_t cols);
/* dst (cols x rows) = src (rows x cols)^T, one byte per element. */
void mb__cuda_lt_transpose_u8(const uint8_t *src, uint8_t *dst, int64_t rows,
                              int64_t cols);
/* Floats in the row-major scale grid of our A (our_b = 0) or B (1). */
size_t mb__cuda_lt_grid_count(const mb_op_params_t *p, int our_b);
/* Writes side->count floats of cuBLASLt's layout for side->mode from the
 * op's row-major grid of our A (our_b = 0) or our B (1). */
void mb__cuda_lt_relayout(const mb_op_params_t *p, int our_b,
                          const mb_lt_side_t *side, const float *grid,
                          float *out);

#endif
