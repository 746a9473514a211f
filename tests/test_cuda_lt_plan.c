/* The CUDA module's cuBLASLt planning (backends/cuda/cuda_gemm_lt_plan.c,
 * pure host code) without a GPU: which problem an MXFP8 request becomes on
 * a compute capability 10.0 device (VEC32_UE8M0 on both operands, the
 * tiled scale counts, given or quantized inside), and that below 10.0, with
 * an older cuBLASLt, with other blocks or with tensor-wise e8m0 it declines
 * with the reason (the shared kernel then runs it); FP4 the same way
 * (cuda_gemm_lt_fp4.c: MXFP4 as VEC32_UE8M0, NVFP4 as VEC16_UE4M3 with its
 * per-tensor scales in alpha, B's nibbles transposed). Built with the CUDA
 * module; nothing here runs on a GPU. */
#include "cuda_gemm_lt.h"
#include "test_util.h"

static mb_cuda_device_t device(int major, int minor) {
  mb_cuda_device_t d;
  memset(&d, 0, sizeof d);
  d.cc_major = major;
  d.cc_minor = minor;
  snprintf(d.base.name, sizeof d.base.name, "test sm_%d%d", major, minor);
  return d;
}

/* MXFP8 params: given e4m3 operands, or gemm_mxfp8_b32 (quantize inside). */
static mb_op_params_t mx(const char *alias, int64_t m, int64_t k, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3, p.shape[0] = m, p.shape[1] = k, p.shape[2] = n;
  if (alias) {
    assert_int_equal(mb_op_apply_alias(alias, &p), MB_OK);
  } else {
    p.dtype = MB_DTYPE_F8E4M3, p.dtype_out = MB_DTYPE_BF16;
    p.dtype_scale = MB_DTYPE_E8M0;
    p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 32}};
    p.scale_b = (mb_scaling_t){MB_SCALE_BLOCK, {32, 1}};
  }
  if (mb_op_resolve(mb_op_find("gemm"), &p) != MB_OK)
    fail_msg("%s", mb_error_last());
  return p;
}

static const size_t k_lt = 130000; /* cuBLASLt 13.0 */

static const char *declined(const mb_cuda_device_t *d, const mb_op_params_t *p,
                            size_t version) {
  static char why[320];
  mb_lt_plan_t pl;
  why[0] = '\0';
  assert_int_equal(mb__cuda_lt_plan(d, p, version, &pl, why, sizeof why),
                   MB_ERR_UNSUPPORTED);
  return why;
}

static void test_mxfp8_on_sm100(void **state) {
  (void)state;
  const mb_cuda_device_t b200 = device(10, 0);
  char why[320] = "";
  mb_lt_plan_t pl;
  /* M = 200, K = 160 (5 blocks), N = 96: tiles padded to 256 x 8, 128 x 8 */
  mb_op_params_t p = mx(NULL, 200, 160, 96);
  if (mb__cuda_lt_plan(&b200, &p, k_lt, &pl, why, sizeof why) != MB_OK)
    fail_msg("%s", why);
  assert_int_equal(pl.variant, MB_LT_FP8);
  assert_int_equal(pl.la.mode, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0);
  assert_int_equal(pl.lb.mode, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0);
  assert_int_equal(pl.la.src, MB_LT_SC_MX32);
  assert_int_equal(pl.la.outer, 96);  /* cuBLASLt A: our B, N rows */
  assert_int_equal(pl.lb.outer, 200); /* cuBLASLt B: our A, M rows */
  assert_int_equal(pl.la.count, 128 * 8);
  assert_int_equal(pl.lb.count, 256 * 8);
  assert_string_equal(pl.math, "mxfp8 e4m3 x e4m3");
  assert_contains(pl.scale_mode, "VEC32_UE8M0");
  /* quantize inside: the same modes, scales from the quantize kernel */
  p = mx("gemm_mxfp8_b32", 128, 256, 64);
  if (mb__cuda_lt_plan(&b200, &p, k_lt, &pl, why, sizeof why) != MB_OK)
    fail_msg("%s", why);
  assert_int_equal(pl.variant, MB_LT_QI);
  assert_int_equal(pl.la.src, MB_LT_SC_QUANT_MX);
  assert_int_equal(pl.lb.mode, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0);
  p = mx("gemm_mxfp8_b32_static_scaling", 128, 256, 64);
  assert_int_equal(mb__cuda_lt_plan(&b200, &p, k_lt, &pl, why, sizeof why),
                   MB_OK);
}

static void test_mxfp8_declined_elsewhere(void **state) {
  (void)state;
  const mb_cuda_device_t h100 = device(9, 0), b200 = device(10, 0);
  mb_op_params_t p = mx(NULL, 128, 128, 128);
  const char *why = declined(&h100, &p, k_lt);
  assert_contains(why, "VEC32_UE8M0");
  assert_contains(why, "10.0");
  assert_contains(why, "9.0");
  p = mx("gemm_mxfp8_b32", 128, 128, 128);
  assert_contains(declined(&h100, &p, k_lt), "10.0");
  /* a cuBLASLt before the mode */
  p = mx(NULL, 128, 128, 128);
  assert_contains(declined(&b200, &p, 120700), "12.8");
  /* e8m0 in blocks VEC32 is not, or tensor-wise: never read as f32 */
  p.scale_b = (mb_scaling_t){MB_SCALE_BLOCK, {32, 32}};
  assert_contains(declined(&b200, &p, k_lt), "1x32 blocks of A and 32x1");
  p.scale_a = (mb_scaling_t){MB_SCALE_TENSOR, {0, 0}};
  p.scale_b = (mb_scaling_t){MB_SCALE_TENSOR, {0, 0}};
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(declined(&b200, &p, k_lt), "VEC32_UE8M0");
  /* f32 scales in 1x32 blocks: not MXFP8, say how to ask for it */
  p = mx(NULL, 128, 128, 128);
  p.dtype_scale = MB_DTYPE_NONE;
  assert_contains(declined(&b200, &p, k_lt), "--scale-dtype e8m0");
}

/* FP4 params: MXFP4 (e8m0, 1x32 / 32x1) or NVFP4 (f8e4m3, 1x16 / 16x1, S
 * as the static scale), f4e2m1 given, or bf16 quantized inside (qi). */
static mb_op_params_t fp4(int nv, int qi, int64_t m, int64_t k, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  const int64_t vec = nv ? 16 : 32;
  p.ndim = 3, p.shape[0] = m, p.shape[1] = k, p.shape[2] = n;
  p.dtype = qi ? MB_DTYPE_BF16 : MB_DTYPE_F4E2M1, p.dtype_out = MB_DTYPE_BF16;
  if (qi) p.flags |= MB_PARAM_QUANTIZE_INPUTS, p.dtype_q = MB_DTYPE_F4E2M1;
  p.dtype_scale = nv ? MB_DTYPE_F8E4M3 : MB_DTYPE_E8M0;
  if (nv) p.flags |= MB_PARAM_STATIC, p.scale = 0.25;
  p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, vec}};
  p.scale_b = (mb_scaling_t){MB_SCALE_BLOCK, {vec, 1}};
  if (mb_op_resolve(mb_op_find("gemm"), &p) != MB_OK)
    fail_msg("%s", mb_error_last());
  return p;
}

/* On 10.0: CUDA_R_4F_E2M1 with VEC32_UE8M0 (MXFP4) or VEC16_UE4M3 (NVFP4,
 * S^2 in alpha) on both operands, the byte scales tiled 128 x 4, given or
 * from the quantize kernel. */
static void test_fp4_on_sm100(void **state) {
  (void)state;
  const mb_cuda_device_t b200 = device(10, 0);
  char why[320] = "";
  mb_lt_plan_t pl;
  static const struct {
    int nv, qi;
    int32_t mode;
    int64_t vec;
    const char *math;
  } k_fp4[] = {
      {0, 0, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, 32, "mxfp4 e2m1 x e2m1"},
      {0, 1, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, 32, "mxfp4 e2m1 x e2m1"},
      {1, 0, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, 16, "nvfp4 e2m1 x e2m1"},
      {1, 1, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, 16, "nvfp4 e2m1 x e2m1"},
  };
  for (size_t i = 0; i < sizeof k_fp4 / sizeof k_fp4[0]; i++) {
    /* M = 200, K = 160, N = 96: outer padded to 256 and 128 */
    mb_op_params_t p = fp4(k_fp4[i].nv, k_fp4[i].qi, 200, 160, 96);
    if (mb__cuda_lt_plan(&b200, &p, k_lt, &pl, why, sizeof why) != MB_OK)
      fail_msg("%s", why);
    assert_int_equal(pl.variant, k_fp4[i].qi ? MB_LT_QI : MB_LT_FP8);
    assert_int_equal(pl.a_type, CUDA_R_4F_E2M1);
    assert_int_equal(pl.b_type, CUDA_R_4F_E2M1);
    assert_true(pl.fp4 && pl.tn && pl.b_copy);
    assert_int_equal(pl.la.mode, k_fp4[i].mode);
    assert_int_equal(pl.lb.mode, k_fp4[i].mode);
    assert_int_equal(pl.la.src,
                     k_fp4[i].qi ? MB_LT_SC_QUANT_MX : MB_LT_SC_MX32);
    assert_int_equal(pl.scale_vec, k_fp4[i].vec);
    /* K blocks 160 / vec, padded to a multiple of 4 */
    const size_t kb = (size_t)((160 / k_fp4[i].vec + 3) / 4 * 4);
    assert_int_equal(pl.la.count, 128 * kb);
    assert_int_equal(pl.lb.count, 256 * kb);
    assert_string_equal(pl.math, k_fp4[i].math);
    /* NVFP4's per-tensor scales (0.25 each) in alpha */
    assert_true(pl.alpha_mul == (k_fp4[i].nv ? 0.0625f : 1.0f));
  }
}

/* Below 10.0, with an older cuBLASLt, unscaled or f32-scaled FP4, other
 * blocks, or K and N not multiples of 32: declined with the reason (the
 * shared kernel runs them), never read as another type. */
static void test_fp4_declined(void **state) {
  (void)state;
  const mb_cuda_device_t h100 = device(9, 0), b200 = device(10, 0);
  mb_op_params_t p = fp4(1, 0, 128, 128, 128);
  const char *why = declined(&h100, &p, k_lt);
  assert_contains(why, "nvfp4");
  assert_contains(why, "10.0");
  p = fp4(0, 1, 128, 128, 128);
  assert_contains(declined(&h100, &p, k_lt), "mxfp4");
  assert_contains(declined(&b200, &p, 120700), "12.8");
  p = fp4(0, 0, 128, 96, 48);
  assert_contains(declined(&b200, &p, k_lt), "multiples of 32");
  /* NVFP4 with MX's blocks */
  p = fp4(1, 0, 128, 128, 128);
  p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 32}};
  p.scale_b = (mb_scaling_t){MB_SCALE_BLOCK, {32, 1}};
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(declined(&b200, &p, k_lt), "VEC16_UE4M3");
  /* unscaled FP4 (gemm_multiple_run with float4) and f32 scales */
  p = (mb_op_params_t)MB_OP_PARAMS_INIT;
  p.ndim = 3, p.shape[0] = p.shape[1] = p.shape[2] = 64;
  assert_int_equal(mb_op_apply_alias("gemm_multiple_run", &p), MB_OK);
  p.dtype = MB_DTYPE_F4E2M1;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(declined(&b200, &p, k_lt), "block-scaled only");
  p = fp4(0, 0, 128, 128, 128);
  p.dtype_scale = MB_DTYPE_NONE;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(declined(&b200, &p, k_lt), "with f32 scales");
}

/* B's nibbles transposed for the TN layout: element (r, c) of K x N at
 * (c, r) of N x K, on an odd count too. */
static void test_fp4_transpose(void **state) {
  (void)state;
  enum { R = 3, C = 5 };
  uint8_t src[(R * C + 1) / 2], dst[(R * C + 1) / 2];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(0x31 * i + 7);
  mb__cuda_lt_transpose_u4(src, dst, R, C);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) {
      const int i = r * C + c, o = c * R + r;
      assert_int_equal((src[i / 2] >> (4 * (i & 1))) & 0xF,
                       (dst[o / 2] >> (4 * (o & 1))) & 0xF);
    }
  assert_int_equal(dst[sizeof dst - 1] >> 4, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mxfp8_on_sm100),
      cmocka_unit_test(test_mxfp8_declined_elsewhere),
      cmocka_unit_test(test_fp4_on_sm100),
      cmocka_unit_test(test_fp4_declined),
      cmocka_unit_test(test_fp4_transpose),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
