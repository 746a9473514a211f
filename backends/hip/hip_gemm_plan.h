/* HIP backend — which hipBLASLt or rocBLAS problem a GEMM request becomes
 * (hip_gemm_plan.c: pure host code, no HIP call), and the vendor enum
 * values it hands them.
 *
 * Our operands are row-major: A is M x K, B is K x N, D is M x N (with
 * MB_PARAM_TRANS_A, A is stored K x M; with MB_PARAM_TRANS_B, B is stored
 * N x K). Both libraries are column-major, so every plan computes
 * D^T = B^T A^T, as backends/cuda/cuda_gemm_lt.h explains: the library's
 * "A" is our B and its "B" is our A, with m = N, n = M, k = K, and D^T in
 * column-major (ld N) is exactly our row-major D. Nothing is copied:
 *   library A = our B: K x N row-major is N x K column-major (ld N), op N;
 *     with trans_b, our B stored N x K is K x N column-major (ld K), op T.
 *   library B = our A: M x K row-major is K x M column-major (ld K), op N;
 *     with trans_a, our A stored K x M is M x K column-major (ld M), op T.
 *   D (= C, in place): N x M column-major, ld N.
 *
 * Support matrix (one table per library in hip_gemm_plan.c):
 *
 *   hipBLASLt (>= 0.7.0, ROCm 6.1):
 *     f32 x f32 -> f32            HIPBLAS_COMPUTE_32F
 *     f32 x f32 -> f32, tf32      HIPBLAS_COMPUTE_32F_FAST_TF32 (hipBLASLt's
 *                                 xf32), only on gfx940/941/942
 *     bf16 x bf16 -> bf16 | f32   HIP_R_16BF, HIPBLAS_COMPUTE_32F
 *     f16 x f16 -> f16 | f32      HIP_R_16F, HIPBLAS_COMPUTE_32F
 *     i8 x i8 -> i32 (exact)      HIP_R_8I / HIP_R_32I, HIPBLAS_COMPUTE_32I
 *     fp8 (e4m3/e5m2, any pair) -> bf16 | f16 | f32, no or tensor-wide
 *       scales (A/B scale pointers), HIPBLAS_COMPUTE_32F: only where the
 *       matrix cores read the OCP fp8 our tensors hold (gfx950, gfx12xx)
 *       and hipBLASLt >= 0.10.0 (ROCm 6.3, the first hipDataType with
 *       HIP_R_8F_E4M3/E5M2). Declined on gfx94x (FNUZ fp8: other exponent
 *       bias and NaN encoding) and where there is no fp8 matrix math.
 *       fast_accum runs with f32 accumulation (hipBLASLt has no such
 *       mode) and the note "fast_accum": "not applied: ..." (hip_blaslt.c).
 *   rocBLAS (>= 4.0.0, ROCm 6.0; rocblas_gemm_ex, algo standard):
 *     f32 -> f32, bf16 -> bf16 | f32, f16 -> f16 | f32 (compute f32_r),
 *     i8 x i8 -> i32 (compute i32_r). Declined: tf32, fp8 (rocBLAS takes
 *     fp8 only through rocblas_gemm_ex3, in the FNUZ formats).
 *   Both decline, naming the native implementation that runs them:
 *     row/column/block-scaled fp8, int4 weight-only, rescaled i8 (i8 ->
 *     bf16/f32 with scales) and quantize-inputs. Dimensions and leading
 *     dimensions must fit in int32 (rocblas_int; hipBLASLt's layouts). */
#ifndef MB_HIP_GEMM_PLAN_H
#define MB_HIP_GEMM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "hip_internal.h"

/* hipDataType. Values from ROCm/HIP include/hip/library_types.h (ROCm 6.x;
 * HIP_R_8F_E4M3 = 28 and HIP_R_8F_E5M2 = 29 from ROCm 6.3 on; the FNUZ
 * types are AMD-specific, 1000 and 1001). Declared here, prefixed: Debian's
 * HIP 5.2 library_types.h knows only six of them. */
enum {
  MB_HIP_R_32F = 0,
  MB_HIP_R_16F = 2,
  MB_HIP_R_8I = 3,
  MB_HIP_R_32I = 10,
  MB_HIP_R_16BF = 14,
  MB_HIP_R_8F_E4M3 = 28,
  MB_HIP_R_8F_E5M2 = 29,
  MB_HIP_R_8F_E4M3_FNUZ = 1000, /* never handed over: see the plan */
  MB_HIP_R_8F_E5M2_FNUZ = 1001
};

/* hipblasComputeType_t. ROCm/hipBLAS-common library/include/hipblas-common.h
 * (hipBLASLt >= 0.7 takes it; 0.6 had its own hipblasLtComputeType_t).
 * hipBLASLt's clients name HIPBLAS_COMPUTE_32F_FAST_TF32 "xf32_r". */
enum {
  MB_HIPBLAS_COMPUTE_32F = 2,
  MB_HIPBLAS_COMPUTE_32F_FAST_TF32 = 6,
  MB_HIPBLAS_COMPUTE_32I = 9
};

/* hipblasOperation_t (hipblas-common.h) and rocblas_operation (ROCm/rocBLAS
 * library/include/internal/rocblas-types.h) share their values. */
enum { MB_HIPBLAS_OP_N = 111, MB_HIPBLAS_OP_T = 112 };
enum { MB_ROCBLAS_OP_NONE = 111, MB_ROCBLAS_OP_TRANSPOSE = 112 };

/* rocblas_datatype (rocblas-types.h). */
enum {
  MB_ROCBLAS_DATATYPE_F16_R = 150,
  MB_ROCBLAS_DATATYPE_F32_R = 151,
  MB_ROCBLAS_DATATYPE_I8_R = 160,
  MB_ROCBLAS_DATATYPE_I32_R = 162,
  MB_ROCBLAS_DATATYPE_BF16_R = 168
};

/* hipBLASLt versions as hipblasLtGetVersion() encodes them: major * 100000 +
 * minor * 100 + patch. */
#define MB_HIPBLASLT_VERSION(maj, min, pat) ((maj)*100000 + (min)*100 + (pat))
/* The first hipBLASLt taking hipDataType / hipblasComputeType_t (ROCm 6.1;
 * hipBLASLt pull request 466). 0.6.x (ROCm 6.0) took hipblasltDatatype_t,
 * where 150 is f16: our HIP_R_* values would be misread. */
#define MB_HIPBLASLT_MIN_VERSION MB_HIPBLASLT_VERSION(0, 7, 0)
/* The first whose hipDataType has the OCP fp8 types (ROCm 6.3). */
#define MB_HIPBLASLT_OCP_FP8_VERSION MB_HIPBLASLT_VERSION(0, 10, 0)

typedef enum mb_hip_gemm_lib {
  MB_HIP_LIB_BLASLT = 0,
  MB_HIP_LIB_ROCBLAS = 1
} mb_hip_gemm_lib_t;

/* One library problem. "its A" is our B, "its B" is our A (see above). */
typedef struct mb_hip_gemm_plan {
  mb_hip_gemm_lib_t lib;
  int64_t m, n, k;                /* the library's: m = N, n = M, k = K */
  int32_t op_a, op_b;             /* 111 (N) / 112 (T) for its A and B */
  int64_t a_rows, a_cols, lda;    /* its A as stored, column-major */
  int64_t b_rows, b_cols, ldb;    /* its B as stored, column-major */
  int64_t ldd;                    /* C = D: m x n, column-major */
  int32_t a_type, b_type, d_type; /* its A (our B), its B (our A), C/D */
  int32_t compute;                /* hipblasComputeType_t / rocblas_datatype */
  int32_t scale_type;   /* alpha/beta: hipDataType; rocBLAS: compute */
  int int_scalars;      /* alpha, beta are int32 (i8 -> i32) */
  int scale_a, scale_b; /* fp8: our scale_a / scale_b are tensor scales,
                           bound as its B / A scale pointers */
  char math[32];        /* "bf16", "tf32 (xf32)", "fp8 e4m3 x e5m2", ... */
} mb_hip_gemm_plan_t;

/* The hipBLASLt problem `p` becomes on device `d` with a hipBLASLt of
 * `version` (MB_HIPBLASLT_VERSION encoding): MB_OK, or MB_ERR_UNSUPPORTED
 * with the reason in why[cap]. */
mb_status_t mb__hip_plan_blaslt(const mb_hip_device_t *d,
                                const mb_op_params_t *p, int version,
                                mb_hip_gemm_plan_t *pl, char *why, size_t cap);
/* The rocblas_gemm_ex call `p` becomes on device `d`. */
mb_status_t mb__hip_plan_rocblas(const mb_hip_device_t *d,
                                 const mb_op_params_t *p,
                                 mb_hip_gemm_plan_t *pl, char *why, size_t cap);

/* The vendor's own spelling of a value ("HIP_R_16BF",
 * "rocblas_datatype_bf16_r", "HIPBLAS_COMPUTE_32F", "N"); "?" if unknown.
 * Static strings. */
const char *mb__hip_type_name(mb_hip_gemm_lib_t lib, int32_t type);
const char *mb__hip_compute_name(mb_hip_gemm_lib_t lib, int32_t compute);
const char *mb__hip_op_name(int32_t op);

#endif
