/* Planted bugs in MXFP8 (e8m0 scales): a quantize kernel that rounds the
 * shared exponent up, one that takes e8m0 of absmax / 448 (the f32 rule's
 * scale rounded to a power of two), one that does not saturate, and a
 * scaled GEMM that decodes the e8m0 bytes with the wrong bias, must each
 * fail the check that the correct twins pass. User kernels on the CPU
 * backend's (host) memory, through the public API (test_planted.c's
 * harness). */
#include <math.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum bug {
  BUG_NONE,
  BUG_CEIL,    /* X = ceil(log2 amax) - emax: the exponent rounded up */
  BUG_F32RULE, /* e8m0 of amax / 448 (rounded as torch casts), not the rule */
  BUG_NOSAT,   /* elements past 448 become NaN instead of saturating */
  BUG_BIAS     /* gemm: scales decoded as 2^(b - 128) */
};
static const enum bug k_bugs[] = {BUG_NONE, BUG_CEIL, BUG_F32RULE, BUG_NOSAT,
                                  BUG_BIAS};
static const char *const k_names[] = {"right", "ceil", "f32rule", "nosat",
                                      "bias"};

static float bf16_at(const uint16_t *x, size_t i) {
  return mb_bf16_to_f32(x[i]);
}

/* The block's scale byte: the OCP rule (floor(log2 amax) + 127 - 8 is the
 * exponent field minus 8), or the bug. */
static uint8_t scale_byte(float amax, enum bug bug) {
  if (amax == 0.0f) return 0;
  int e;
  frexpf(amax, &e); /* amax = f 2^e, f in [0.5, 1) */
  int x = e - 1 - 8;
  if (bug == BUG_CEIL && ldexpf(1.0f, e - 1) != amax) x += 1;
  uint8_t b = (uint8_t)(x + 127 < 0 ? 0 : x + 127);
  if (bug == BUG_F32RULE) {
    const float s = amax / 448.0f;
    mb_convert(&b, MB_DTYPE_E8M0, &s, MB_DTYPE_F32, 1, 0);
  }
  return b;
}

/* quantize bf16 -> e4m3 in 1 x 32 blocks with e8m0 scales. */
static mb_status_t k_quantize(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const uint16_t *x = mb_tensor_data(a->inputs[0]);
  uint8_t *q = mb_tensor_data(a->outputs[0]),
          *s = mb_tensor_data(a->outputs[1]);
  const size_t n = mb_tensor_numel(a->inputs[0]);
  for (size_t b = 0; b < n / 32; b++) {
    float amax = 0.0f;
    for (size_t i = 0; i < 32; i++)
      amax = fmaxf(amax, fabsf(bf16_at(x, 32 * b + i)));
    s[b] = scale_byte(amax, bug);
    float scale;
    mb_convert(&scale, MB_DTYPE_F32, &s[b], MB_DTYPE_E8M0, 1, 0);
    for (size_t i = 0; i < 32; i++)
      q[32 * b + i] =
          mb_f32_to_f8e4m3(bf16_at(x, 32 * b + i) / scale,
                           bug == BUG_NOSAT ? 0 : MB_CONVERT_SATURATE);
  }
  return MB_OK;
}

/* D (bf16) = sum_k (a sa)(b sb), A M x K, B K x N in e4m3; sa per 1 x 32
 * of A, sb per 32 x 1 of B, e8m0 bytes. */
static mb_status_t k_gemm(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const mb_op_params_t *p = a->params;
  const int64_t m = p->shape[0], k = p->shape[1], n = p->shape[2];
  const uint8_t *A = mb_tensor_data(a->inputs[0]),
                *B = mb_tensor_data(a->inputs[1]);
  const uint8_t *sa = mb_tensor_data(a->inputs[2]),
                *sb = mb_tensor_data(a->inputs[3]);
  uint16_t *d = mb_tensor_data(a->outputs[0]);
  const int bias = bug == BUG_BIAS ? 128 : 127;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t t = 0; t < k; t++)
        acc += (double)mb_f8e4m3_to_f32(A[i * k + t]) *
               ldexp(1.0, sa[i * (k / 32) + t / 32] - bias) *
               mb_f8e4m3_to_f32(B[t * n + j]) *
               ldexp(1.0, sb[t / 32 * n + j] - bias);
      d[i * n + j] = mb_f32_to_bf16((float)acc, 0);
    }
  return MB_OK;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  for (size_t b = 0; b < sizeof k_bugs / sizeof k_bugs[0]; b++) {
    mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
    d.op = k_bugs[b] == BUG_BIAS ? "gemm" : "quantize";
    d.name = k_names[b];
    d.dtype = k_bugs[b] == BUG_BIAS ? MB_DTYPE_F8E4M3 : MB_DTYPE_BF16;
    d.dtype_out = k_bugs[b] == BUG_BIAS ? MB_DTYPE_BF16 : MB_DTYPE_F8E4M3;
    d.run = k_bugs[b] == BUG_BIAS ? k_gemm : k_quantize;
    d.user = (void *)&k_bugs[b];
    assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
  }
  /* the gemm's correct twin */
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = "gemm", d.name = "right_gemm", d.dtype = MB_DTYPE_F8E4M3;
  d.dtype_out = MB_DTYPE_BF16, d.run = k_gemm, d.user = (void *)&k_bugs[0];
  assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static int passes(const char *op, const char *impl) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.dtype_scale = MB_DTYPE_E8M0;
  if (!strcmp(op, "gemm")) {
    p.ndim = 3, p.shape[0] = 48, p.shape[1] = 128, p.shape[2] = 40;
    p.dtype = MB_DTYPE_F8E4M3, p.dtype_out = MB_DTYPE_BF16;
    p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 32}};
    p.scale_b = (mb_scaling_t){MB_SCALE_BLOCK, {32, 1}};
  } else {
    p = test_shape2(MB_DTYPE_BF16, 64, 256);
    p.dtype_scale = MB_DTYPE_E8M0, p.dtype_out = MB_DTYPE_F8E4M3;
    p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 32}};
  }
  return test_impl_passes(g_ctx, op, &p, impl);
}

static void test_mx_bugs(void **state) {
  (void)state;
  assert_true(passes("quantize", "right"));
  assert_false(passes("quantize", "ceil"));
  assert_false(passes("quantize", "f32rule"));
  assert_false(passes("quantize", "nosat"));
  assert_true(passes("gemm", "right_gemm"));
  assert_false(passes("gemm", "bias"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mx_bugs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
