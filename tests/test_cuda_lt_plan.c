/* The CUDA module's cuBLASLt planning (backends/cuda/cuda_gemm_lt_plan.c,
 * pure host code) without a GPU: which problem an MXFP8 request becomes on
 * a compute capability 10.0 device (VEC32_UE8M0 on both operands, the
 * tiled scale counts, given or quantized inside), and that below 10.0, with
 * an older cuBLASLt, with other blocks or with tensor-wise e8m0 it declines
 * with the reason (the shared kernel then runs it). Built with the CUDA
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

/* FP4 (MXFP4 given or quantized inside, unscaled f4e2m1) is declined by
 * name on every device until the CUDA_R_4F_E2M1 modes are planned: never
 * read as another type. */
static void test_fp4_declined(void **state) {
  (void)state;
  const mb_cuda_device_t b200 = device(10, 0);
  mb_op_params_t p = mx(NULL, 128, 128, 128);
  p.dtype = p.dtype_b = MB_DTYPE_F4E2M1;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(declined(&b200, &p, k_lt), "CUDA_R_4F_E2M1");
  p = mx("gemm_mxfp8_b32", 128, 128, 128);
  p.dtype_q = MB_DTYPE_F4E2M1;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(declined(&b200, &p, k_lt), "f4e2m1");
  p = (mb_op_params_t)MB_OP_PARAMS_INIT;
  p.ndim = 3, p.shape[0] = p.shape[1] = p.shape[2] = 64;
  assert_int_equal(mb_op_apply_alias("gemm_multiple_run", &p), MB_OK);
  p.dtype = MB_DTYPE_F4E2M1;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  assert_contains(declined(&b200, &p, k_lt), "FP4");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mxfp8_on_sm100),
      cmocka_unit_test(test_mxfp8_declined_elsewhere),
      cmocka_unit_test(test_fp4_declined),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
