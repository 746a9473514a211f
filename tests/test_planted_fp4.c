/* Planted bugs in FP4 quantization: an MXFP4 kernel that takes fp8's
 * emax_elem (8) for e2m1's (2), one that truncates the elements instead of
 * rounding to nearest even, and an NVFP4 kernel whose block scales forget
 * the per-tensor scale must each fail the check that the correct twins
 * pass; so must NVFP4 GEMMs that forget the per-tensor scale or read the
 * e4m3 block scales as MX's e8m0. User kernels on the CPU backend's (host)
 * memory, through the public API (test_planted.c's harness). */
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum bug {
  BUG_NONE,   /* MXFP4, right */
  BUG_EMAX8,  /* MXFP4 with X = floor(log2 amax) - 8 */
  BUG_TRUNC,  /* MXFP4 elements rounded toward zero */
  BUG_NV,     /* NVFP4, right */
  BUG_NV_NOS, /* NVFP4 block scale e4m3(amax / 6), S forgotten */
  BUG_G_NV,   /* NVFP4 gemm, right */
  BUG_G_NOS,  /* NVFP4 gemm without the per-tensor scale */
  BUG_G_E8M0, /* NVFP4 gemm reading the block scales as e8m0 */
};
static const enum bug k_bugs[] = {BUG_NONE,   BUG_EMAX8, BUG_TRUNC, BUG_NV,
                                  BUG_NV_NOS, BUG_G_NV,  BUG_G_NOS, BUG_G_E8M0};
static const char *const k_names[] = {"right",  "emax8",   "trunc", "nv_right",
                                      "nv_nos", "g_right", "g_nos", "g_e8m0"};

static int is_gemm(enum bug b) {
  return b >= BUG_G_NV;
}

static float bf16_at(const uint16_t *x, size_t i) {
  return mb_bf16_to_f32(x[i]);
}

/* |v| rounded toward zero onto e2m1's grid (saturating), sign kept. */
static float e2m1_trunc(float v) {
  static const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  float m = 0;
  for (int i = 0; i < 8; i++)
    if (mag[i] <= fabsf(v)) m = mag[i];
  return copysignf(m, v);
}

/* One block's scale: the MX shared exponent as an e8m0 byte, or NVFP4's
 * e4m3 block scale; *div is what its elements are divided by. */
static uint8_t block_scale(float amax, enum bug bug, float tensor_scale,
                           float *div) {
  uint8_t b = 0;
  if (bug == BUG_NV || bug == BUG_NV_NOS) {
    const float v = bug == BUG_NV ? (amax / 6.0f) / tensor_scale : amax / 6.0f;
    mb_convert(&b, MB_DTYPE_F8E4M3, &v, MB_DTYPE_F32, 1, MB_CONVERT_SATURATE);
    float s;
    mb_convert(&s, MB_DTYPE_F32, &b, MB_DTYPE_F8E4M3, 1, 0);
    if (bug == BUG_NV) s *= tensor_scale;
    *div = s == 0.0f ? INFINITY : s;
    return b;
  }
  int e = -127 - 1; /* amax 0: X clamps to -127, the smallest scale */
  if (amax > 0) frexpf(amax, &e);
  int x = e - 1 - (bug == BUG_EMAX8 ? 8 : 2);
  x = x < -127 ? -127 : x > 127 ? 127 : x;
  b = (uint8_t)(x + 127);
  mb_convert(div, MB_DTYPE_F32, &b, MB_DTYPE_E8M0, 1, 0);
  return b;
}

/* quantize bf16 -> f4e2m1 in 1 x 32 (MX) or 1 x 16 (NVFP4) blocks. */
static mb_status_t k_quantize(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const int nv = bug == BUG_NV || bug == BUG_NV_NOS;
  const size_t blk = nv ? 16 : 32;
  const uint16_t *x = mb_tensor_data(a->inputs[0]);
  uint8_t *q = mb_tensor_data(a->outputs[0]),
          *s = mb_tensor_data(a->outputs[1]);
  const size_t n = mb_tensor_numel(a->inputs[0]);
  for (size_t b = 0; b < n / blk; b++) {
    float amax = 0.0f, v[32], div;
    for (size_t i = 0; i < blk; i++)
      amax = fmaxf(amax, fabsf(bf16_at(x, blk * b + i)));
    s[b] = block_scale(amax, bug, (float)a->params->scale, &div);
    for (size_t i = 0; i < blk; i++) {
      v[i] = bf16_at(x, blk * b + i) / div;
      if (bug == BUG_TRUNC) v[i] = e2m1_trunc(v[i]);
    }
    /* blk is even: the block starts on a byte */
    mb_convert(q + blk * b / 2, MB_DTYPE_F4E2M1, v, MB_DTYPE_F32, blk, 0);
  }
  return MB_OK;
}

/* n values of dtype dt (packed e2m1, or scale bytes) as f32. */
static float *widen(const void *src, mb_dtype_t dt, size_t n) {
  float *f = malloc(n * sizeof *f);
  assert_non_null(f);
  mb_convert(f, MB_DTYPE_F32, src, dt, n, 0);
  return f;
}

/* NVFP4 gemm: D (bf16) = sum_k (a s_a S)(b s_b S), A M x K and B K x N
 * packed e2m1, s_a per 1 x 16 of A and s_b per 16 x 1 of B as e4m3 bytes,
 * S the static scale. */
static mb_status_t k_gemm(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const mb_op_params_t *p = a->params;
  const int64_t m = p->shape[0], k = p->shape[1], n = p->shape[2];
  const mb_dtype_t sdt = bug == BUG_G_E8M0 ? MB_DTYPE_E8M0 : MB_DTYPE_F8E4M3;
  const double s = bug == BUG_G_NOS ? 1.0 : p->scale;
  float *A = widen(mb_tensor_data(a->inputs[0]), MB_DTYPE_F4E2M1,
                   (size_t)(m * k)),
        *B = widen(mb_tensor_data(a->inputs[1]), MB_DTYPE_F4E2M1,
                   (size_t)(k * n)),
        *sa = widen(mb_tensor_data(a->inputs[2]), sdt, (size_t)(m * k / 16)),
        *sb = widen(mb_tensor_data(a->inputs[3]), sdt, (size_t)(k / 16 * n));
  uint16_t *d = mb_tensor_data(a->outputs[0]);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t t = 0; t < k; t++)
        acc += (double)A[i * k + t] * sa[i * (k / 16) + t / 16] * s *
               (double)B[t * n + j] * sb[t / 16 * n + j] * s;
      d[i * n + j] = mb_f32_to_bf16((float)acc, 0);
    }
  free(A);
  free(B);
  free(sa);
  free(sb);
  return MB_OK;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  for (size_t b = 0; b < sizeof k_bugs / sizeof k_bugs[0]; b++) {
    mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
    const int g = is_gemm(k_bugs[b]);
    d.op = g ? "gemm" : "quantize";
    d.name = k_names[b];
    d.dtype = g ? MB_DTYPE_F4E2M1 : MB_DTYPE_BF16;
    d.dtype_out = g ? MB_DTYPE_BF16 : MB_DTYPE_F4E2M1;
    d.run = g ? k_gemm : k_quantize;
    d.user = (void *)&k_bugs[b];
    assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static int passes(const char *impl, int nv) {
  mb_op_params_t p = test_shape2(MB_DTYPE_BF16, 64, 256);
  p.dtype_out = MB_DTYPE_F4E2M1;
  if (nv) { /* the per-tensor scale puts block scales near 300 */
    p.dtype_scale = MB_DTYPE_F8E4M3;
    p.flags |= MB_PARAM_STATIC, p.scale = 1.0 / 448;
    p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 16}};
  } else {
    p.dtype_scale = MB_DTYPE_E8M0;
    p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 32}};
  }
  return test_impl_passes(g_ctx, "quantize", &p, impl);
}

/* NVFP4 gemm with S = 1/448: block scales near 75, so forgetting S^2
 * (2^-17.6) or reading e4m3 bytes as powers of two is far off. */
static int gemm_passes(const char *impl) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3, p.shape[0] = 48, p.shape[1] = 128, p.shape[2] = 40;
  p.dtype = MB_DTYPE_F4E2M1, p.dtype_out = MB_DTYPE_BF16;
  p.dtype_scale = MB_DTYPE_F8E4M3;
  p.flags |= MB_PARAM_STATIC, p.scale = 1.0 / 448;
  p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {1, 16}};
  p.scale_b = (mb_scaling_t){MB_SCALE_BLOCK, {16, 1}};
  return test_impl_passes(g_ctx, "gemm", &p, impl);
}

static void test_nvfp4_gemm_bugs(void **state) {
  (void)state;
  assert_true(gemm_passes("g_right"));
  assert_false(gemm_passes("g_nos"));
  assert_false(gemm_passes("g_e8m0"));
}

static void test_fp4_bugs(void **state) {
  (void)state;
  assert_true(passes("right", 0));
  assert_false(passes("emax8", 0));
  assert_false(passes("trunc", 0));
  assert_true(passes("nv_right", 1));
  assert_false(passes("nv_nos", 1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fp4_bugs),
      cmocka_unit_test(test_nvfp4_gemm_bugs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
