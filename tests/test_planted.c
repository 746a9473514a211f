/* Planted bugs: kernels that forget the scales, transpose B, or round
 * toward zero must fail the correctness check; their correct twins pass.
 * User kernels on the CPU backend's (host) memory, through the public API. */
#include <math.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum bug { BUG_NONE, BUG_NO_SCALES, BUG_TRANSPOSE_B, BUG_TRUNCATE };

/* D = (A sa)(B sb): fp8 A [M,K] with row scales, B [K,N] with col scales. */
static mb_status_t fp8_gemm(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], k = a->params->shape[1],
                n = a->params->shape[2];
  const uint8_t *qa = mb_tensor_data(a->inputs[0]),
                *qb = mb_tensor_data(a->inputs[1]);
  const float *sa = mb_tensor_data(a->inputs[2]),
              *sb = mb_tensor_data(a->inputs[3]);
  uint16_t *d = mb_tensor_data(a->outputs[0]);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int64_t p = 0; p < k; p++) {
        uint8_t bv = bug == BUG_TRANSPOSE_B ? qb[j * k + p] : qb[p * n + j];
        acc += mb_f8e4m3_to_f32(qa[i * k + p]) * mb_f8e4m3_to_f32(bv);
      }
      if (bug != BUG_NO_SCALES) acc *= sa[i] * sb[j];
      d[i * n + j] = mb_f32_to_bf16(acc, 0);
    }
  return MB_OK;
}

/* Row-wise dynamic quantize to e4m3, RNE or (bug) toward zero. */
static mb_status_t quant_rows(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], n = a->params->shape[1];
  const uint16_t *x = mb_tensor_data(a->inputs[0]);
  uint8_t *q = mb_tensor_data(a->outputs[0]);
  float *s = mb_tensor_data(a->outputs[1]);
  for (int64_t i = 0; i < m; i++) {
    float amax = 0;
    for (int64_t j = 0; j < n; j++)
      amax = fmaxf(amax, fabsf(mb_bf16_to_f32(x[i * n + j])));
    s[i] = amax > 0 ? amax / 448.0f : 1.0f;
    for (int64_t j = 0; j < n; j++) {
      float v = mb_bf16_to_f32(x[i * n + j]) / s[i];
      uint8_t r = mb_f32_to_f8e4m3(v, MB_CONVERT_SATURATE);
      /* Toward zero: step back when rounding went away from zero. */
      if (bug == BUG_TRUNCATE && fabsf(mb_f8e4m3_to_f32(r)) > fabsf(v)) r--;
      q[i * n + j] = r;
    }
  }
  return MB_OK;
}

/* bf16 add computed in f32, rounded to bf16 by RNE or (bug) truncation. */
static mb_status_t add_bf16(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const uint16_t *x = mb_tensor_data(a->inputs[0]),
                 *y = mb_tensor_data(a->inputs[1]);
  uint16_t *z = mb_tensor_data(a->outputs[0]);
  for (size_t i = 0; i < mb_tensor_numel(a->outputs[0]); i++) {
    float v = mb_bf16_to_f32(x[i]) + mb_bf16_to_f32(y[i]);
    uint32_t bits;
    memcpy(&bits, &v, 4);
    z[i] = bug == BUG_TRUNCATE ? (uint16_t)(bits >> 16) : mb_f32_to_bf16(v, 0);
  }
  return MB_OK;
}

static const enum bug k_bugs[] = {BUG_NONE, BUG_NO_SCALES, BUG_TRANSPOSE_B,
                                  BUG_TRUNCATE};
static const char *const k_names[] = {"right", "no_scales", "transpose_b",
                                      "truncate"};

static void reg(const char *op, mb_dtype_t in, mb_dtype_t out, mb_kernel_fn fn,
                enum bug bug) {
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = op;
  d.name = k_names[bug];
  d.dtype = in;
  d.dtype_out = out;
  d.run = fn;
  d.user = (void *)&k_bugs[bug];
  assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  for (int b = BUG_NONE; b <= BUG_TRANSPOSE_B; b++)
    reg("gemm", MB_DTYPE_F8E4M3, MB_DTYPE_BF16, fp8_gemm, (enum bug)b);
  reg("quantize", MB_DTYPE_BF16, MB_DTYPE_F8E4M3, quant_rows, BUG_NONE);
  reg("quantize", MB_DTYPE_BF16, MB_DTYPE_F8E4M3, quant_rows, BUG_TRUNCATE);
  reg("add", MB_DTYPE_BF16, MB_DTYPE_BF16, add_bf16, BUG_NONE);
  reg("add", MB_DTYPE_BF16, MB_DTYPE_BF16, add_bf16, BUG_TRUNCATE);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

/* Runs `op` (an op or alias) with kernel `impl`; returns whether it passed. */
static int passes(const char *op, int64_t m, int64_t k, int64_t n,
                  mb_dtype_t dtype, const char *impl) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = n ? 3 : 2;
  p.shape[0] = m, p.shape[1] = k, p.shape[2] = n;
  p.dtype = dtype;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = "cpu";
  s.impl = impl;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 1;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &c);
  if (info.status != MB_RESULT_OK) fail_msg("%s: %s", impl, info.reason);
  assert_true(c.checked);
  mb_result_destroy(r);
  return c.pass;
}

static void test_gemm_scales_and_transpose(void **state) {
  (void)state;
  assert_true(passes("gemm_fp8", 48, 64, 48, MB_DTYPE_NONE, "right"));
  assert_false(passes("gemm_fp8", 48, 64, 48, MB_DTYPE_NONE, "no_scales"));
  assert_false(passes("gemm_fp8", 48, 64, 48, MB_DTYPE_NONE, "transpose_b"));
}

static void test_quantize_rounding(void **state) {
  (void)state;
  assert_true(passes("quantization", 33, 256, 0, MB_DTYPE_NONE, "right"));
  assert_false(passes("quantization", 33, 256, 0, MB_DTYPE_NONE, "truncate"));
}

static void test_add_rounding(void **state) {
  (void)state;
  assert_true(passes("add", 37, 129, 0, MB_DTYPE_BF16, "right"));
  assert_false(passes("add", 37, 129, 0, MB_DTYPE_BF16, "truncate"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gemm_scales_and_transpose),
      cmocka_unit_test(test_quantize_rounding),
      cmocka_unit_test(test_add_rounding),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
