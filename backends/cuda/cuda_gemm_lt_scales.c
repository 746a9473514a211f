/* CUDA backend — cuBLASLt's scale layouts, host code: the names of the
 * scale modes and of where a side's scales come from (the plan's
 * scale_mode text), how many values each mode reads, and the re-layouts
 * prepare makes from the op's row-major scale grids (cuda_gemm_lt.h).
 *
 * Source: cuBLAS 13 documentation, "Narrow Precision Data Types Usage"
 * (the layouts of OUTER_VEC_32F, VEC128_32F and BLK128x128_32F scales, and
 * the 128 x 4 tiles of the VEC32_UE8M0 / VEC16_UE4M3 byte scales). */
#include "cuda_gemm_lt.h"

enum { GM, GK, GN };

const char *mb__cuda_lt_mode_name(int32_t mode) {
  switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F:
      return "SCALAR_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F:
      return "OUTER_VEC_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F:
      return "VEC128_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F:
      return "BLK128x128_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0:
      return "VEC32_UE8M0";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3:
      return "VEC16_UE4M3";
    default:
      return "?";
  }
}

const char *mb__cuda_lt_src_name(mb_lt_scale_src_t src, int our_b) {
  switch (src) {
    case MB_LT_SC_CALL:
      return "the op's scale tensor as given";
    case MB_LT_SC_OUTER:
      return our_b ? "expanded to one per column in prepare"
                   : "expanded to one per row in prepare";
    case MB_LT_SC_VEC128:
      return our_b ? "N-major copy made in prepare"
                   : "M-major copy made in prepare";
    case MB_LT_SC_BLK128:
      return "K-major copy (padded to 4) made in prepare";
    case MB_LT_SC_QUANT:
      return "computed by the quantize kernel in the op";
    case MB_LT_SC_MX32:
      return "byte scales, tiled 128x4 on the device in prepare";
    case MB_LT_SC_QUANT_MX:
      return "byte scales from the quantize kernel, tiled 128x4 in the op";
    default:
      return "none";
  }
}

static size_t side_count(int32_t mode, int64_t outer, int64_t k) {
  const int64_t l = (k + 127) / 128, l4 = (l + 3) / 4 * 4;
  switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F:
      return (size_t)outer;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F:
      return (size_t)(l * outer);
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F:
      return (size_t)(l4 * ((outer + 127) / 128));
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0: /* bytes, 128 x 4 tiles */
      return (size_t)((outer + 127) / 128 * 128) *
             (size_t)((k / 32 + 3) / 4 * 4);
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3: /* the same, per 16 */
      return (size_t)((outer + 127) / 128 * 128) *
             (size_t)((k / 16 + 3) / 4 * 4);
    default:
      return 1;
  }
}

void mb__cuda_lt_side(mb_lt_side_t *s, int32_t mode, mb_lt_scale_src_t src,
                      int64_t outer, int64_t k) {
  s->mode = mode;
  s->src = src;
  s->outer = outer;
  s->count = side_count(mode, outer, k);
}

/* ---- host re-layouts (prepare) ------------------------------------------- */

void mb__cuda_lt_transpose_u8(const uint8_t *src, uint8_t *dst, int64_t rows,
                              int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += 64)
    for (int64_t c0 = 0; c0 < cols; c0 += 64)
      for (int64_t r = r0; r < r0 + 64 && r < rows; r++)
        for (int64_t c = c0; c < c0 + 64 && c < cols; c++)
          dst[c * rows + r] = src[r * cols + c];
}

size_t mb__cuda_lt_grid_count(const mb_op_params_t *p, int our_b) {
  const mb_scaling_t *s = our_b ? &p->scale_b : &p->scale_a;
  const int64_t rows = our_b ? p->shape[GK] : p->shape[GM];
  const int64_t cols = our_b ? p->shape[GN] : p->shape[GK];
  if (s->mode == MB_SCALE_NONE || s->block[0] <= 0 || s->block[1] <= 0)
    return 1;
  return (size_t)((rows / s->block[0]) * (cols / s->block[1]));
}

/* The scale of our A at (row `outer`, column kk), or of our B at (row kk,
 * column `outer`), from the op's row-major grid. */
static float scale_at(const mb_op_params_t *p, int our_b, const float *grid,
                      int64_t outer, int64_t kk) {
  const mb_scaling_t *s = our_b ? &p->scale_b : &p->scale_a;
  if (s->mode == MB_SCALE_NONE || s->block[0] <= 0 || s->block[1] <= 0)
    return grid[0];
  const int64_t r = our_b ? kk : outer, c = our_b ? outer : kk;
  const int64_t cols = our_b ? p->shape[GN] : p->shape[GK];
  return grid[(r / s->block[0]) * (cols / s->block[1]) + c / s->block[1]];
}

/* Layouts (cuBLAS docs, "128-element 1D and 128x128 2D block scaling"):
 * OUTER_VEC: one per row of the operand in the product (m or n values);
 * VEC128: outer x L, outer-major: [kb * outer + o];
 * BLK128x128: L4 x ceil(outer / 128), K-major with the column stride L4
 * (L rounded up to a multiple of 4): [ob * L4 + kb], padding zero. */
void mb__cuda_lt_relayout(const mb_op_params_t *p, int our_b,
                          const mb_lt_side_t *side, const float *grid,
                          float *out) {
  const int64_t k = p->shape[GK], outer = side->outer;
  const int64_t l = (k + 127) / 128, l4 = (l + 3) / 4 * 4;
  switch (side->mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F:
      for (int64_t o = 0; o < outer; o++)
        out[o] = scale_at(p, our_b, grid, o, 0);
      break;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F:
      for (int64_t kb = 0; kb < l; kb++)
        for (int64_t o = 0; o < outer; o++)
          out[kb * outer + o] = scale_at(p, our_b, grid, o, kb * 128);
      break;
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F:
      for (int64_t ob = 0; ob < (outer + 127) / 128; ob++)
        for (int64_t kb = 0; kb < l4; kb++)
          out[ob * l4 + kb] =
              kb < l ? scale_at(p, our_b, grid, ob * 128, kb * 128) : 0.0f;
      break;
    default:
      out[0] = grid[0];
  }
}
