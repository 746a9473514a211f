/* CUDA backend — FP4 (f4e2m1, packed two per byte) GEMMs on cuBLASLt: which
 * problem an MXFP4 or NVFP4 request becomes, why one is declined, and the
 * nibble transpose prepare makes of B (cuda_gemm_lt.h for the operand swap;
 * cuda_gemm_lt_plan.c calls mb__cuda_lt_plan_fp4 for every FP4 request).
 *
 * Sources: cuBLAS 13 documentation, "Narrow Precision Data Types Usage"
 * (CUDA_R_4F_E2M1 operands take block scales only: VEC32_UE8M0, e8m0 per
 * 32 elements along K, is MXFP4; VEC16_UE4M3, e4m3 per 16, is NVFP4; both
 * from compute capability 10.0, TN format, the scales in the "1D Block
 * Scaling Factors Layout" of 128 x 4 tiles that MXFP8 uses), and
 * cublasLt.h (12.8: the enums). NVFP4's second level, the per-tensor
 * scale, has no scale pointer of its own: the block-scale pointers hold the
 * e4m3 grids, so the per-tensor scales, a product outside the sum, go into
 * alpha (alpha S_a S_b; here both sides share S, the static scale), as
 * NVIDIA's NVFP4 recipe does. None of this has run on a GPU here: it is
 * compiled for sm_90a and its planning is tested host-side
 * (test_cuda_lt_plan). */
#include <stdio.h>
#include <string.h>

#include "cuda_gemm_lt.h"

enum { GM, GK, GN };

/* The two FP4 block-scaled modes, by params.dtype_scale. */
typedef struct fp4_mode {
  mb_dtype_t sdt;
  int64_t vec; /* elements along K per scale */
  int32_t mode;
  const char *name;
} fp4_mode_t;

static const fp4_mode_t k_modes[] = {
    {MB_DTYPE_E8M0, 32, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, "mxfp4"},
    {MB_DTYPE_F8E4M3, 16, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, "nvfp4"},
};

static const fp4_mode_t *mode_of(mb_dtype_t sdt) {
  for (size_t i = 0; i < sizeof k_modes / sizeof k_modes[0]; i++)
    if (k_modes[i].sdt == sdt) return &k_modes[i];
  return NULL;
}

/* A side scaled by vec along K alone: A 1 x vec, B vec x 1. */
static int k_blocks_of(const mb_scaling_t *s, int our_b, int64_t vec) {
  return s->mode != MB_SCALE_NONE && s->block[our_b ? 0 : 1] == vec &&
         s->block[our_b ? 1 : 0] == 1;
}

mb_status_t mb__cuda_lt_plan_fp4(const mb_cuda_device_t *d,
                                 const mb_op_params_t *p, mb_lt_plan_t *pl,
                                 char *why, size_t cap) {
  const int qi = (p->flags & MB_PARAM_QUANTIZE_INPUTS) != 0;
  const fp4_mode_t *md = mode_of(p->dtype_scale);
  const int64_t k = p->shape[GK], n = p->shape[GN];
  if (!md) {
    snprintf(why, cap,
             "FP4 (f4e2m1) %s scales: cuBLASLt runs CUDA_R_4F_E2M1 "
             "block-scaled only, as MXFP4 (e8m0 scales, --scale-dtype e8m0, "
             "1x32 / 32x1) or NVFP4 (f8e4m3 scales, 1x16 / 16x1, and the "
             "per-tensor scale); the shared kernel runs this one",
             p->scale_a.mode == MB_SCALE_NONE ? "without" : "with f32");
    return MB_ERR_UNSUPPORTED;
  }
  if (!k_blocks_of(&p->scale_a, 0, md->vec) ||
      !k_blocks_of(&p->scale_b, 1, md->vec)) {
    snprintf(why, cap,
             "%s: cuBLASLt's %s mode takes scale_a block:1x%lld and scale_b "
             "block:%lldx1 only",
             md->name,
             md->mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
                 ? "VEC32_UE8M0"
                 : "VEC16_UE4M3",
             (long long)md->vec, (long long)md->vec);
    return MB_ERR_UNSUPPORTED;
  }
  if (d->cc_major < 10) {
    snprintf(why, cap,
             "%s (CUDA_R_4F_E2M1 with block scales) needs compute capability "
             "10.0; this GPU (%s) is %d.%d (the shared kernel runs it, "
             "emulated)",
             md->name, d->base.name, d->cc_major, d->cc_minor);
    return MB_ERR_UNSUPPORTED;
  }
  const size_t v = pl->lt_version;
  if (v < 120800) {
    snprintf(why, cap,
             "%s needs cuBLASLt >= 12.8 (CUDA_R_4F_E2M1); this one is "
             "%zu.%zu.%zu",
             md->name, v / 10000, (v / 100) % 100, v % 100);
    return MB_ERR_UNSUPPORTED;
  }
  /* Rows of packed e2m1 (B stored N x K, A K-contiguous) and of D start on
   * 16 bytes, as the narrow-precision kernels require: 32 elements. */
  if (k % 32 || n % 32) {
    snprintf(why, cap,
             "%s in cuBLASLt needs 16-byte aligned rows of packed e2m1: K "
             "(%lld) and N (%lld) must be multiples of 32",
             md->name, (long long)k, (long long)n);
    return MB_ERR_UNSUPPORTED;
  }
  if (p->dtype_out != MB_DTYPE_F32 && p->dtype_out != MB_DTYPE_BF16 &&
      p->dtype_out != MB_DTYPE_F16) {
    snprintf(why, cap, "%s writes bf16, f16 or f32", md->name);
    return MB_ERR_UNSUPPORTED;
  }
  const mb_lt_scale_src_t src = qi ? MB_LT_SC_QUANT_MX : MB_LT_SC_MX32;
  mb__cuda_lt_side(&pl->la, md->mode, src, n, k);
  mb__cuda_lt_side(&pl->lb, md->mode, src, p->shape[GM], k);
  pl->scale_vec = md->vec;
  /* NVFP4: S of A times S of B, outside the sum, in alpha. */
  if (md->sdt == MB_DTYPE_F8E4M3) pl->alpha_mul = (float)(p->scale * p->scale);
  pl->variant = qi ? MB_LT_QI : MB_LT_FP8;
  pl->compute = CUBLAS_COMPUTE_32F;
  pl->scale_type = CUDA_R_32F;
  pl->a_type = pl->b_type = CUDA_R_4F_E2M1;
  pl->a_bytes = pl->b_bytes = 1; /* two elements per byte: see fp4 */
  pl->fp4 = 1;
  pl->tn = pl->b_copy = 1;
  snprintf(pl->math, sizeof pl->math, "%s e2m1 x e2m1", md->name);
  snprintf(pl->compute_name, sizeof pl->compute_name, "CUBLAS_COMPUTE_32F");
  mb__cuda_lt_describe(p, pl);
  return MB_OK;
}

/* dst (cols x rows) = src (rows x cols)^T in packed nibbles (element i in
 * byte i / 2, low nibble first); dst is cleared first, so an odd count's
 * last high nibble is 0. */
void mb__cuda_lt_transpose_u4(const uint8_t *src, uint8_t *dst, int64_t rows,
                              int64_t cols) {
  memset(dst, 0, (size_t)((rows * cols + 1) / 2));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      const int64_t i = r * cols + c, o = c * rows + r;
      const uint8_t nib = (uint8_t)((src[i / 2] >> (4 * (i & 1))) & 0xFu);
      dst[o / 2] |= (uint8_t)(nib << (4 * (o & 1)));
    }
}
