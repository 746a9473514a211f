/* CUDA backend — which cuBLASLt problem a GEMM request becomes and why it
 * is declined when it cannot be one (see cuda_gemm_lt.h for the operand
 * swap; the scale layouts and prepare's re-layouts: cuda_gemm_lt_scales.c).
 *
 * Sources: cuBLAS 13 documentation, "cublasLtMatmul()" (supported type
 * combinations; IMMA and fp8 requirements: TN format, 16-byte alignment,
 * CUBLAS_COMPUTE_32F for fp8, at least one e4m3 operand) and "Narrow
 * Precision Data Types Usage" (Scaling Mode Support Overview: tensor-wide
 * fp8 scales from 8.9, outer-vector and 128-element 1D / 128x128 2D block
 * scales on 9.0, VEC32_UE8M0 from 10.0; the layouts of VEC128_32F and
 * BLK128x128_32F scales; which A/B scale-mode pairs are supported; the
 * 1D block scaling factors layout of VEC32_UE8M0). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda_gemm_lt.h"

enum { GM, GK, GN };

static mb_status_t refuse(char *why, size_t cap, const char *fmt, ...)
    MB__PRINTF(3, 4);
static mb_status_t refuse(char *why, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, cap, fmt, ap);
  va_end(ap);
  return MB_ERR_UNSUPPORTED;
}

static const char *dname(mb_dtype_t t) {
  switch (t) {
    case MB_DTYPE_F32:
      return "f32";
    case MB_DTYPE_F16:
      return "f16";
    case MB_DTYPE_BF16:
      return "bf16";
    case MB_DTYPE_F8E4M3:
      return "f8e4m3";
    case MB_DTYPE_F8E5M2:
      return "f8e5m2";
    case MB_DTYPE_I8:
      return "i8";
    case MB_DTYPE_I4:
      return "i4";
    case MB_DTYPE_I32:
      return "i32";
    case MB_DTYPE_F4E2M1:
      return "f4e2m1";
    default:
      return "none";
  }
}

static int is_fp8(mb_dtype_t t) {
  return t == MB_DTYPE_F8E4M3 || t == MB_DTYPE_F8E5M2;
}

static int is_float_out(mb_dtype_t t) {
  return t == MB_DTYPE_F32 || t == MB_DTYPE_BF16 || t == MB_DTYPE_F16;
}

static cudaDataType_t cuda_type(mb_dtype_t t) {
  switch (t) {
    case MB_DTYPE_F16:
      return CUDA_R_16F;
    case MB_DTYPE_BF16:
      return CUDA_R_16BF;
    case MB_DTYPE_F8E4M3:
      return CUDA_R_8F_E4M3;
    case MB_DTYPE_F8E5M2:
      return CUDA_R_8F_E5M2;
    case MB_DTYPE_I8:
      return CUDA_R_8I;
    case MB_DTYPE_I32:
      return CUDA_R_32I;
    default:
      return CUDA_R_32F;
  }
}

static size_t type_bytes(mb_dtype_t t) {
  switch (t) {
    case MB_DTYPE_F16:
    case MB_DTYPE_BF16:
      return 2;
    case MB_DTYPE_F8E4M3:
    case MB_DTYPE_F8E5M2:
    case MB_DTYPE_I8:
      return 1;
    default:
      return 4;
  }
}

/* resolve() admits MB_PARAM_FAST_ACCUM on fp8 products only, which are the
 * fp8 and quantize-inputs plans; cuBLASLt takes the flag as an int8_t. */
static int8_t fast_accum_of(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_FAST_ACCUM) ? 1 : 0;
}

static int cc_of(const mb_cuda_device_t *d) {
  return d->cc_major * 10 + d->cc_minor;
}

/* ---- one side's scaling, in our orientation ------------------------------ */

/* A's blocks are bo x bk (bo along M); B's are bk x bo (bo along N). A side
 * without scales is one block: the 1x1 tensor holding 1. */
typedef struct sdesc {
  int64_t bo, bk, outer, k;
  int our_b;
} sdesc_t;

static sdesc_t describe(const mb_op_params_t *p, int our_b) {
  const mb_scaling_t *s = our_b ? &p->scale_b : &p->scale_a;
  sdesc_t d = {0, 0, our_b ? p->shape[GN] : p->shape[GM], p->shape[GK], our_b};
  if (s->mode == MB_SCALE_NONE || s->block[0] <= 0 || s->block[1] <= 0) {
    d.bo = d.outer;
    d.bk = d.k;
  } else {
    d.bo = our_b ? s->block[1] : s->block[0];
    d.bk = our_b ? s->block[0] : s->block[1];
  }
  return d;
}

static int scalar(const sdesc_t *s) {
  return s->bo == s->outer && s->bk == s->k;
}
/* One scale per row of A / column of B. */
static int per_outer(const sdesc_t *s) {
  return s->bo == 1 && s->bk == s->k;
}
static int blk128(const sdesc_t *s) {
  return s->bo == 128 && s->bk == 128;
}

/* "none", "tensor", "row", "col", or "BMxBN" as the user wrote it. */
static const char *side_name(const mb_op_params_t *p, const sdesc_t *s,
                             char *buf, size_t cap) {
  const mb_scaling_t *sc = s->our_b ? &p->scale_b : &p->scale_a;
  if (sc->mode == MB_SCALE_NONE) return "none";
  if (scalar(s)) return "tensor";
  if (per_outer(s)) return s->our_b ? "col" : "row";
  snprintf(buf, cap, "%lldx%lld", (long long)(s->our_b ? s->bk : s->bo),
           (long long)(s->our_b ? s->bo : s->bk));
  return buf;
}

static void describe_scales(const mb_op_params_t *p, mb_lt_plan_t *pl) {
  char ba[48], bb[48];
  const sdesc_t a = describe(p, 0), b = describe(p, 1);
  snprintf(pl->scale_mode, sizeof pl->scale_mode,
           "scale_a %s -> cuBLASLt B %s (%s); scale_b %s -> cuBLASLt A %s "
           "(%s)",
           side_name(p, &a, ba, sizeof ba), mb__cuda_lt_mode_name(pl->lb.mode),
           mb__cuda_lt_src_name(pl->lb.src, 0), side_name(p, &b, bb, sizeof bb),
           mb__cuda_lt_mode_name(pl->la.mode),
           mb__cuda_lt_src_name(pl->la.src, 1));
}

void mb__cuda_lt_describe(const mb_op_params_t *p, mb_lt_plan_t *pl) {
  describe_scales(p, pl);
}

/* Outer-vector and 128-block scales: Hopper (9.0) per NVIDIA's table, and a
 * cuBLASLt that has the scale-mode attributes (12.9). Newer GPUs are let
 * through: if their cuBLASLt has no algorithm, prepare says so. */
static mb_status_t need_hopper_scales(const mb_cuda_device_t *d,
                                      const mb_lt_plan_t *pl, const char *what,
                                      char *why, size_t cap) {
  if (d->cc_major < 9)
    return refuse(why, cap,
                  "fp8 GEMM with %s scales needs cuBLASLt's outer-vector or "
                  "128-block scaling, which needs compute capability 9.0; "
                  "this GPU (%s) is %d.%d, where cuBLASLt scales fp8 "
                  "tensor-wide only",
                  what, d->base.name, d->cc_major, d->cc_minor);
  const size_t v = pl->lt_version;
  if (v < 120900)
    return refuse(why, cap,
                  "fp8 GEMM with %s scales needs cuBLASLt >= 12.9 (scale "
                  "modes); this one is %zu.%zu.%zu",
                  what, v / 10000, (v / 100) % 100, v % 100);
  return MB_OK;
}

static mb_status_t fp8_dims(const mb_op_params_t *p, char *why, size_t cap) {
  const int64_t k = p->shape[GK], n = p->shape[GN];
  if (k % 16 || n % 16)
    return refuse(why, cap,
                  "fp8 GEMM in cuBLASLt needs 16-byte aligned leading "
                  "dimensions (B stored N x K, D row-major): K (%lld) and N "
                  "(%lld) must be multiples of 16",
                  (long long)k, (long long)n);
  return MB_OK;
}

/* MXFP8: e8m0 scales in 1x32 blocks of A and 32x1 of B are cuBLASLt's
 * VEC32_UE8M0 on both operands, which exists from compute capability 10.0
 * (Blackwell) and cuBLASLt 12.8; elsewhere the shared kernels run it. */
static int mx32(const sdesc_t *s) {
  return s->bo == 1 && s->bk == 32;
}

static mb_status_t mx_scales(const mb_cuda_device_t *d, const mb_op_params_t *p,
                             mb_lt_plan_t *pl, mb_lt_scale_src_t src, char *why,
                             size_t cap) {
  const sdesc_t a = describe(p, 0), b = describe(p, 1);
  char ba[48], bb[48];
  if (!mx32(&a) || !mx32(&b))
    return refuse(why, cap,
                  "e8m0 scales with scale_a %s / scale_b %s: cuBLASLt's "
                  "UE8M0 mode (VEC32_UE8M0) takes 1x32 blocks of A and 32x1 "
                  "of B only",
                  side_name(p, &a, ba, sizeof ba),
                  side_name(p, &b, bb, sizeof bb));
  if (d->cc_major < 10)
    return refuse(why, cap,
                  "MXFP8 (e8m0 scales per 32 along K) is cuBLASLt's "
                  "VEC32_UE8M0 mode, which needs compute capability 10.0; "
                  "this GPU (%s) is %d.%d",
                  d->base.name, d->cc_major, d->cc_minor);
  const size_t v = pl->lt_version;
  if (v < 120800)
    return refuse(why, cap,
                  "MXFP8 needs cuBLASLt >= 12.8 (VEC32_UE8M0); this one is "
                  "%zu.%zu.%zu",
                  v / 10000, (v / 100) % 100, v % 100);
  pl->scale_vec = 32;
  mb__cuda_lt_side(&pl->la, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, src,
                   p->shape[GN], p->shape[GK]);
  mb__cuda_lt_side(&pl->lb, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, src,
                   p->shape[GM], p->shape[GK]);
  return MB_OK;
}

/* ---- the variants -------------------------------------------------------- */

static mb_status_t plan_float(const mb_cuda_device_t *d,
                              const mb_op_params_t *p, mb_lt_plan_t *pl,
                              char *why, size_t cap) {
  const mb_dtype_t t = p->dtype, out = p->dtype_out;
  if (p->dtype_b != t)
    return refuse(why, cap,
                  "%s x %s: cuBLASLt's float GEMM takes matching inputs "
                  "(weight-only i4 has no cuBLASLt kernel)",
                  dname(t), dname(p->dtype_b));
  if (p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE)
    return refuse(why, cap, "%s inputs take no scales", dname(t));
  if (p->dtype_acc != MB_DTYPE_F32)
    return refuse(why, cap, "%s GEMM accumulates in f32, not %s", dname(t),
                  dname(p->dtype_acc));
  pl->compute = CUBLAS_COMPUTE_32F;
  if (t == MB_DTYPE_F32) {
    if (out != MB_DTYPE_F32)
      return refuse(why, cap,
                    "f32 inputs: cuBLASLt writes f32 only, not %s (cuBLAS "
                    "type table: CUBLAS_COMPUTE_32F with f32 A/B has f32 C)",
                    dname(out));
    if (p->flags & MB_PARAM_TF32) {
      if (d->cc_major < 8)
        return refuse(why, cap,
                      "tf32 needs tensor cores of compute capability >= 8.0; "
                      "this GPU (%s) is %d.%d (run without tf32 for exact "
                      "f32)",
                      d->base.name, d->cc_major, d->cc_minor);
      pl->compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      snprintf(pl->math, sizeof pl->math, "tf32");
      snprintf(pl->compute_name, sizeof pl->compute_name,
               "CUBLAS_COMPUTE_32F_FAST_TF32");
    } else {
      snprintf(pl->math, sizeof pl->math, "f32");
    }
  } else if (t == MB_DTYPE_BF16 || t == MB_DTYPE_F16) {
    if (t == MB_DTYPE_BF16 && d->cc_major < 8)
      return refuse(why, cap,
                    "bf16 GEMM needs compute capability >= 8.0; this GPU (%s) "
                    "is %d.%d",
                    d->base.name, d->cc_major, d->cc_minor);
    if (out != t && out != MB_DTYPE_F32)
      return refuse(why, cap,
                    "%s inputs: cuBLASLt writes %s or f32, not %s (cuBLAS "
                    "type table for CUBLAS_COMPUTE_32F)",
                    dname(t), dname(t), dname(out));
    snprintf(pl->math, sizeof pl->math, "%s", dname(t));
  } else {
    return refuse(why, cap, "%s inputs have no cuBLASLt GEMM", dname(t));
  }
  pl->variant = MB_LT_FLOAT;
  pl->tn = (p->flags & MB_PARAM_TRANS_B) != 0;
  pl->a_t = (p->flags & MB_PARAM_TRANS_A) != 0;
  if (!pl->compute_name[0])
    snprintf(pl->compute_name, sizeof pl->compute_name, "CUBLAS_COMPUTE_32F");
  pl->scale_type = CUDA_R_32F;
  pl->a_type = pl->b_type = cuda_type(t);
  pl->a_bytes = pl->b_bytes = type_bytes(t);
  return MB_OK;
}

/* Picks cuBLASLt's scale modes for the two fp8 operands. */
static mb_status_t fp8_scales(const mb_cuda_device_t *d,
                              const mb_op_params_t *p, mb_lt_plan_t *pl,
                              char *why, size_t cap) {
  const int64_t m = p->shape[GM], k = p->shape[GK], n = p->shape[GN];
  const sdesc_t a = describe(p, 0), b = describe(p, 1);
  char ba[48], bb[48], what[128];
  snprintf(what, sizeof what, "scale_a %s / scale_b %s",
           side_name(p, &a, ba, sizeof ba), side_name(p, &b, bb, sizeof bb));
  /* First: e8m0 bytes are never one of the f32 modes below, whatever the
   * blocks. */
  if (p->dtype_scale == MB_DTYPE_E8M0)
    return mx_scales(d, p, pl, MB_LT_SC_MX32, why, cap);
  if (scalar(&a) && scalar(&b)) {
    mb__cuda_lt_side(&pl->la, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                     MB_LT_SC_CALL, n, k);
    mb__cuda_lt_side(&pl->lb, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                     MB_LT_SC_CALL, m, k);
    return MB_OK;
  }
  const int outer_vec = a.bk == k && b.bk == k;
  /* MXFP8 first: its reason is not the compute capability. */
  if (!outer_vec && (a.bk % 128 || b.bk % 128) && (a.bk == 32 || b.bk == 32))
    return refuse(why, cap,
                  "%s: 1x32 / 32x1 blocks with f32 scales: cuBLASLt runs "
                  "blocks of 32 only as MXFP8 (VEC32_UE8M0, compute "
                  "capability >= 10.0), whose scales are e8m0 powers of two; "
                  "these are arbitrary f32 (absmax / qmax), which e8m0 cannot "
                  "hold (ask for e8m0 scales: --scale-dtype e8m0)",
                  what);
  mb_status_t st = need_hopper_scales(d, pl, what, why, cap);
  if (st != MB_OK) return st;
  if (outer_vec) {
    /* Constant along K: one scale per row of A and per column of B. */
    mb__cuda_lt_side(&pl->la, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
                     per_outer(&b) ? MB_LT_SC_CALL : MB_LT_SC_OUTER, n, k);
    mb__cuda_lt_side(&pl->lb, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
                     per_outer(&a) ? MB_LT_SC_CALL : MB_LT_SC_OUTER, m, k);
    return MB_OK;
  }
  if (a.bk % 128 == 0 && b.bk % 128 == 0) {
    /* Blocks of 128 along K. cuBLASLt pairs VEC128 with VEC128 or with
     * BLK128x128, never BLK with BLK; a 128x128 side that cannot be BLK is
     * expanded to VEC128 (exact: the same scale repeated per row). */
    if (m % 4 || n % 4)
      return refuse(why, cap,
                    "%s: cuBLASLt's 128-block scaling needs M (%lld) and N "
                    "(%lld) to be multiples of 4",
                    what, (long long)m, (long long)n);
    const int64_t l = k / 128;
    const int b_blk = blk128(&b), a_blk = blk128(&a) && !b_blk;
    if (b_blk)
      mb__cuda_lt_side(&pl->la, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
                       MB_LT_SC_BLK128, n, k);
    else /* our B's (K/128) x N row-major grid is N-major already */
      mb__cuda_lt_side(
          &pl->la, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
          (b.bk == 128 && b.bo == 1) ? MB_LT_SC_CALL : MB_LT_SC_VEC128, n, k);
    if (a_blk) /* (M/128) x L row-major is K-major when L % 4 == 0 */
      mb__cuda_lt_side(&pl->lb, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
                       l % 4 == 0 ? MB_LT_SC_CALL : MB_LT_SC_BLK128, m, k);
    else /* our A's M x L row-major grid is K-major: transposed */
      mb__cuda_lt_side(&pl->lb, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
                       (a.bk == 128 && a.bo == 1 && l == 1) ? MB_LT_SC_CALL
                                                            : MB_LT_SC_VEC128,
                       m, k);
    return MB_OK;
  }
  return refuse(why, cap,
                "%s: cuBLASLt scales fp8 operands tensor-wide, per row of A "
                "and column of B, or in blocks of 128 along K (1x128, 128x1, "
                "128x128); these blocks are none of those",
                what);
}

static mb_status_t plan_fp8(const mb_cuda_device_t *d, const mb_op_params_t *p,
                            mb_lt_plan_t *pl, char *why, size_t cap) {
  const mb_dtype_t ta = p->dtype, tb = p->dtype_b, out = p->dtype_out;
  if (cc_of(d) < 89)
    return refuse(why, cap,
                  "fp8 GEMM needs compute capability >= 8.9; this GPU (%s) is "
                  "%d.%d",
                  d->base.name, d->cc_major, d->cc_minor);
  if (!is_fp8(tb))
    return refuse(why, cap, "fp8 x %s has no cuBLASLt GEMM", dname(tb));
  if (ta == MB_DTYPE_F8E5M2 && tb == MB_DTYPE_F8E5M2)
    return refuse(why, cap,
                  "f8e5m2 x f8e5m2: cuBLASLt's fp8 kernels need an e4m3 "
                  "operand (e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3)");
  if (!is_float_out(out))
    return refuse(why, cap, "fp8 GEMM writes bf16, f16 or f32, not %s",
                  dname(out));
  if (p->dtype_acc != MB_DTYPE_F32)
    return refuse(why, cap, "fp8 GEMM accumulates in f32 (CUBLAS_COMPUTE_32F)");
  mb_status_t st = fp8_dims(p, why, cap);
  if (st == MB_OK) st = fp8_scales(d, p, pl, why, cap);
  if (st != MB_OK) return st;
  pl->variant = MB_LT_FP8;
  pl->fast_accum = fast_accum_of(p);
  pl->compute = CUBLAS_COMPUTE_32F;
  pl->scale_type = CUDA_R_32F;
  pl->a_type = cuda_type(ta);
  pl->b_type = cuda_type(tb);
  pl->a_bytes = pl->b_bytes = 1;
  pl->tn = pl->b_copy = 1;
  snprintf(pl->math, sizeof pl->math, "%s %s x %s",
           p->dtype_scale == MB_DTYPE_E8M0 ? "mxfp8" : "fp8",
           ta == MB_DTYPE_F8E4M3 ? "e4m3" : "e5m2",
           tb == MB_DTYPE_F8E4M3 ? "e4m3" : "e5m2");
  snprintf(pl->compute_name, sizeof pl->compute_name, "CUBLAS_COMPUTE_32F");
  describe_scales(p, pl);
  return MB_OK;
}

static mb_status_t plan_i8(const mb_op_params_t *p, mb_lt_plan_t *pl, char *why,
                           size_t cap) {
  const int64_t k = p->shape[GK], n = p->shape[GN];
  if (p->dtype_b != MB_DTYPE_I8)
    return refuse(why, cap, "i8 x %s has no cuBLASLt GEMM", dname(p->dtype_b));
  if (p->dtype_out != MB_DTYPE_I32)
    return refuse(why, cap,
                  "i8 -> %s (rescaled): cuBLASLt applies scale tensors to fp8 "
                  "operands only, and its i8 kernels with a float output "
                  "(CUBLAS_COMPUTE_32F) accumulate in f32, not exactly in i32 "
                  "as this op requires; only exact i8 x i8 -> i32 runs on "
                  "cublaslt",
                  dname(p->dtype_out));
  if (p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE ||
      p->alpha != 1 || p->beta != 0)
    return refuse(why, cap,
                  "i8 x i8 -> i32 takes no scales and alpha 1, beta 0");
  if (k % 4 || n % 4)
    return refuse(why, cap,
                  "i8 GEMM in cuBLASLt (IMMA kernels, TN format) needs K "
                  "(%lld) and N (%lld) to be multiples of 4",
                  (long long)k, (long long)n);
  pl->variant = MB_LT_I8;
  pl->compute = CUBLAS_COMPUTE_32I;
  pl->scale_type = CUDA_R_32I;
  pl->a_type = pl->b_type = CUDA_R_8I;
  pl->a_bytes = pl->b_bytes = 1;
  pl->tn = pl->b_copy = 1;
  snprintf(pl->math, sizeof pl->math, "i8");
  snprintf(pl->compute_name, sizeof pl->compute_name, "CUBLAS_COMPUTE_32I");
  return MB_OK;
}

static mb_status_t plan_qi(const mb_cuda_device_t *d, const mb_op_params_t *p,
                           mb_lt_plan_t *pl, char *why, size_t cap) {
  const mb_dtype_t q = p->dtype_q;
  const int64_t m = p->shape[GM], k = p->shape[GK], n = p->shape[GN];
  if (q == MB_DTYPE_I8)
    return refuse(why, cap,
                  "quantize-inputs to i8: the rescaled i8 GEMM (exact i32 "
                  "accumulation, then f32 row/column scales) has no cuBLASLt "
                  "kernel (scale tensors apply to fp8 only)");
  if (!is_fp8(q))
    return refuse(why, cap, "quantize-inputs to %s has no cuBLASLt GEMM",
                  dname(q));
  if (q == MB_DTYPE_F8E5M2)
    return refuse(why, cap,
                  "quantize-inputs to f8e5m2 gives e5m2 x e5m2, which "
                  "cuBLASLt's fp8 kernels do not offer (they need an e4m3 "
                  "operand)");
  if ((p->dtype != MB_DTYPE_BF16 && p->dtype != MB_DTYPE_F32) ||
      p->dtype_b != p->dtype)
    return refuse(why, cap, "quantize-inputs takes bf16 or f32 A and B");
  if (cc_of(d) < 89)
    return refuse(why, cap,
                  "fp8 GEMM needs compute capability >= 8.9; this GPU (%s) is "
                  "%d.%d",
                  d->base.name, d->cc_major, d->cc_minor);
  if (!is_float_out(p->dtype_out) || p->dtype_acc != MB_DTYPE_F32)
    return refuse(why, cap,
                  "quantize-inputs to fp8 writes bf16, f16 or f32 with f32 "
                  "accumulation");
  mb_status_t st = fp8_dims(p, why, cap);
  if (st != MB_OK) return st;
  const sdesc_t a = describe(p, 0), b = describe(p, 1);
  char ba[48], bb[48];
  if (p->dtype_scale == MB_DTYPE_E8M0) {
    if ((st = mx_scales(d, p, pl, MB_LT_SC_QUANT_MX, why, cap)) != MB_OK)
      return st;
  } else if (scalar(&a) && scalar(&b)) {
    mb__cuda_lt_side(&pl->la, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                     MB_LT_SC_QUANT, n, k);
    mb__cuda_lt_side(&pl->lb, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                     MB_LT_SC_QUANT, m, k);
  } else if (per_outer(&a) && per_outer(&b)) {
    if ((st = need_hopper_scales(d, pl, "row x col", why, cap)) != MB_OK)
      return st;
    mb__cuda_lt_side(&pl->la, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
                     MB_LT_SC_QUANT, n, k);
    mb__cuda_lt_side(&pl->lb, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
                     MB_LT_SC_QUANT, m, k);
  } else {
    return refuse(why, cap,
                  "quantize-inputs with scale_a %s / scale_b %s: the quantize "
                  "kernel writes row-major scale grids, which cuBLASLt reads "
                  "as they are only for tensor x tensor and row x col; other "
                  "granularities would need their scales re-laid out inside "
                  "the timed op",
                  side_name(p, &a, ba, sizeof ba),
                  side_name(p, &b, bb, sizeof bb));
  }
  pl->variant = MB_LT_QI;
  pl->fast_accum = fast_accum_of(p);
  pl->compute = CUBLAS_COMPUTE_32F;
  pl->scale_type = CUDA_R_32F;
  pl->a_type = pl->b_type = cuda_type(q);
  pl->a_bytes = pl->b_bytes = 1;
  pl->tn = pl->b_copy = 1;
  snprintf(pl->math, sizeof pl->math, "%s",
           p->dtype_scale == MB_DTYPE_E8M0 ? "mxfp8 e4m3 x e4m3"
                                           : "fp8 e4m3 x e4m3");
  snprintf(pl->compute_name, sizeof pl->compute_name, "CUBLAS_COMPUTE_32F");
  describe_scales(p, pl);
  return MB_OK;
}

mb_status_t mb__cuda_lt_plan(const mb_cuda_device_t *d, const mb_op_params_t *p,
                             size_t lt_version, mb_lt_plan_t *pl, char *why,
                             size_t cap) {
  memset(pl, 0, sizeof *pl);
  pl->lt_version = lt_version;
  pl->alpha_mul = 1.0f;
  if (p->ndim != 3 || p->shape[GM] <= 0 || p->shape[GK] <= 0 ||
      p->shape[GN] <= 0)
    return refuse(why, cap, "gemm takes a positive M x K x N shape");
  pl->m = p->shape[GM];
  pl->k = p->shape[GK];
  pl->n = p->shape[GN];
  mb_status_t st;
  /* resolve() admits the layout flags on unscaled float gemms only; the
   * other variants' operands are laid out for cuBLASLt's TN kernels. */
  if ((p->flags & (MB_PARAM_TRANS_A | MB_PARAM_TRANS_B)) &&
      ((p->flags & MB_PARAM_QUANTIZE_INPUTS) || is_fp8(p->dtype) ||
       p->dtype == MB_DTYPE_I8))
    return refuse(
        why, cap,
        "trans_a/trans_b apply to unscaled float gemms only (f32, "
        "bf16, f16), not %s x %s%s",
        dname(p->dtype), dname(p->dtype_b),
        (p->flags & MB_PARAM_QUANTIZE_INPUTS) ? " quantize-inputs" : "");
  /* cuBLASLt applies scales in its epilogue; the explicit pass after an
   * unscaled product is the shared kernel's (gpu_gemm_qi.cu). */
  if (p->flags & MB_PARAM_EXPLICIT_DEQUANT)
    return refuse(why, cap,
                  "explicit_dequant (an unscaled f32 product, then the scales "
                  "in a pass of their own): cuBLASLt fuses the scales into "
                  "its epilogue; --impl native runs it");
  /* FP4 (given or quantized inside) before the fp8 and qi plans: its own
   * file, CUDA_R_4F_E2M1 with VEC32_UE8M0 / VEC16_UE4M3. */
  if (p->dtype == MB_DTYPE_F4E2M1 ||
      ((p->flags & MB_PARAM_QUANTIZE_INPUTS) && p->dtype_q == MB_DTYPE_F4E2M1))
    st = mb__cuda_lt_plan_fp4(d, p, pl, why, cap);
  else if (p->flags & MB_PARAM_QUANTIZE_INPUTS)
    st = plan_qi(d, p, pl, why, cap);
  else if (is_fp8(p->dtype))
    st = plan_fp8(d, p, pl, why, cap);
  else if (p->dtype == MB_DTYPE_I8)
    st = plan_i8(p, pl, why, cap);
  else
    st = plan_float(d, p, pl, why, cap);
  if (st != MB_OK) return st;
  pl->d_type = cuda_type(p->dtype_out);
  pl->d_bytes = type_bytes(p->dtype_out);
  return MB_OK;
}
