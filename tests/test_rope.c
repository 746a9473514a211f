/* rope (rotary position embedding): its FLOP/byte model and shape rule, the
 * rotation table the op hands kernels (F[s, 2j], F[s, 2j+1] = cos, sin of
 * s 10000^(-2j/D) rounded to f32), the reference against a kernel computing
 * the textbook formula on its own, and planted bugs — the sine's sign
 * flipped (the inverse rotation), the rotate-half pairing (j, j + D/2)
 * instead of interleaved pairs, positions off by one — which must fail the
 * check their correct twins pass. User kernels on the CPU backend's (host)
 * memory, through the public API. */
#include <math.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum bug {
  BUG_NONE,     /* reads the table F */
  BUG_FORMULA,  /* right, from the formula in double, F unread */
  BUG_SIN_SIGN, /* x0 c + x1 s, -x0 s + x1 c */
  BUG_HALF,     /* pairs (j, j + D/2): the rotate-half layout */
  BUG_POS       /* position s + 1 */
};
static const enum bug k_bugs[] = {BUG_NONE, BUG_FORMULA, BUG_SIN_SIGN, BUG_HALF,
                                  BUG_POS};
static const char *const k_names[] = {"right", "formula", "sin_sign", "half",
                                      "pos"};

static double angle(int64_t s, int64_t j, int64_t d) {
  return (double)s * pow(10000.0, -2.0 * (double)j / (double)d);
}

static float load(const void *x, mb_dtype_t dt, size_t i) {
  return dt == MB_DTYPE_F32 ? ((const float *)x)[i]
                            : mb_bf16_to_f32(((const uint16_t *)x)[i]);
}

static void store(void *y, mb_dtype_t dt, size_t i, double v) {
  if (dt == MB_DTYPE_F32)
    ((float *)y)[i] = (float)v;
  else
    ((uint16_t *)y)[i] = mb_f32_to_bf16((float)v, 0);
}

/* f32 or bf16 X [B,H,S,D] -> Y, computed in double from F or the formula;
 * the right kernel first checks that F is the table the op promises. */
static mb_status_t rope(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const mb_op_params_t *p = a->params;
  const int64_t rows = p->shape[0] * p->shape[1], s_len = p->shape[2],
                d = p->shape[3];
  const mb_dtype_t dt = p->dtype;
  const void *x = mb_tensor_data(a->inputs[0]);
  const float *f = mb_tensor_data(a->inputs[1]);
  void *y = mb_tensor_data(a->outputs[0]);
  for (int64_t s = 0; bug == BUG_NONE && s < s_len; s++)
    for (int64_t j = 0; j < d / 2; j++)
      if (f[s * d + 2 * j] != (float)cos(angle(s, j, d)) ||
          f[s * d + 2 * j + 1] != (float)sin(angle(s, j, d)))
        return MB_ERR_INVALID_ARG;
  for (int64_t r = 0; r < rows * s_len; r++) {
    const int64_t s = r % s_len, base = r * d;
    for (int64_t j = 0; j < d / 2; j++) {
      /* Where the pair's two elements are, and its rotation. */
      const int64_t i0 = base + (bug == BUG_HALF ? j : 2 * j),
                    i1 = bug == BUG_HALF ? i0 + d / 2 : i0 + 1;
      const int64_t pos = bug == BUG_POS ? s + 1 : s;
      double c = cos(angle(pos, j, d)), sn = sin(angle(pos, j, d));
      if (bug == BUG_NONE) c = f[s * d + 2 * j], sn = f[s * d + 2 * j + 1];
      if (bug == BUG_SIN_SIGN) sn = -sn;
      const double x0 = load(x, dt, (size_t)i0), x1 = load(x, dt, (size_t)i1);
      store(y, dt, (size_t)i0, x0 * c - x1 * sn);
      store(y, dt, (size_t)i1, x0 * sn + x1 * c);
    }
  }
  return MB_OK;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  static const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16};
  for (size_t t = 0; t < 2; t++)
    for (size_t b = 0; b < sizeof k_bugs / sizeof k_bugs[0]; b++) {
      mb_kernel_desc_t k = MB_KERNEL_DESC_INIT;
      k.op = "rope";
      k.name = k_names[b];
      k.dtype = dts[t];
      k.dtype_out = dts[t];
      k.run = rope;
      k.user = (void *)&k_bugs[b];
      assert_int_equal(mb_kernel_register(g_ctx, &k), MB_OK);
    }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static mb_op_params_t shape4(mb_dtype_t dt, int64_t b, int64_t h, int64_t s,
                             int64_t d) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 4;
  p.shape[0] = b, p.shape[1] = h, p.shape[2] = s, p.shape[3] = d;
  p.dtype = dt;
  return p;
}

/* 6 FLOPs a pair; X and Y in their dtype, the f32 table once. */
static void test_model(void **state) {
  (void)state;
  const mb_op_t *op = mb_op_find("rope");
  assert_non_null(op);
  mb_op_params_t p = shape4(MB_DTYPE_BF16, 32, 32, 1024, 128);
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  const double n = 32.0 * 32 * 1024 * 128;
  assert_true(mb_op_flop(op, &p) == 6.0 * n / 2);
  assert_true(mb_op_bytes(op, &p) == 2.0 * 2 * n + 4.0 * 1024 * 128);
  p = shape4(MB_DTYPE_F32, 2, 2, 8, 7);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "even");
  p = shape4(MB_DTYPE_I8, 2, 2, 8, 8);
  assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
}

static int passes(mb_dtype_t dt, const char *impl) {
  mb_op_params_t p = shape4(dt, 2, 3, 37, 64);
  return test_impl_passes(g_ctx, "rope", &p, impl);
}

/* The table is the promised one (the right kernel checks it), the
 * reference is the formula's, and each planted bug fails, in f32 and bf16. */
static void test_planted(void **state) {
  (void)state;
  static const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16};
  for (size_t t = 0; t < 2; t++) {
    assert_true(passes(dts[t], "right"));
    assert_true(passes(dts[t], "formula"));
    assert_false(passes(dts[t], "sin_sign"));
    assert_false(passes(dts[t], "half"));
    assert_false(passes(dts[t], "pos"));
  }
}

/* The CPU backend's own kernel on every dtype, D crossing its chunk and a
 * row count that does not split evenly over threads. */
static void test_cpu_kernel(void **state) {
  (void)state;
  static const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
  for (size_t t = 0; t < 3; t++) {
    mb_op_params_t p = shape4(dts[t], 3, 5, 33, 2050);
    assert_true(test_impl_passes(g_ctx, "rope", &p, "c"));
    p = shape4(dts[t], 1, 1, 1, 2);
    assert_true(test_impl_passes(g_ctx, "rope", &p, "c"));
  }
}

/* The JAX suite's current-layout rope: RoPEParams as the shape (upstream's
 * defaults where not given), complex64 as f32 whatever `dtype` says, an odd
 * head_dim skipped saying why; and it runs and passes on the CPU. */
static void test_jax_rope(void **state) {
  (void)state;
  static const char text[] =
      "global: {dtype: bfloat16, num_runs: 2, warmup_tries: 1}\n"
      "benchmarks:\n"
      "- name: rope\n"
      "- name: rope\n"
      "  batch: 2\n"
      "  heads: 3\n"
      "  sweep: {seq_len: [17], head_dim: [64, 7]}\n";
  mb_plan_options_t opts = MB_PLAN_OPTIONS_INIT;
  opts.backend = "cpu";
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(text, strlen(text), "t.yaml", &opts, &plan) != MB_OK)
    fail_msg("%s", mb_error_last());
  assert_int_equal(mb_plan_count(plan), 3);
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  assert_int_equal(mb_plan_entry(plan, 0, &e), MB_OK);
  assert_string_equal(e.name, "rope/32x32x1024x128/float32/complex64");
  assert_string_equal(e.op, "rope");
  assert_int_equal(e.params.dtype, MB_DTYPE_F32);
  assert_int_equal(e.params.shape[2], 1024);
  assert_string_equal(e.skip_reason, "");
  assert_int_equal(mb_plan_entry(plan, 1, &e), MB_OK);
  assert_string_equal(e.name, "rope/2x3x17x64/float32/complex64");
  assert_int_equal(mb_plan_entry(plan, 2, &e), MB_OK);
  assert_contains(e.skip_reason, "head_dim 7 (odd)");
  mb_result_t *r = NULL;
  assert_int_equal(mb_plan_run(g_ctx, plan, 1, &r), MB_OK);
  assert_true(test_result_passes(r, "rope/2x3x17x64"));
  mb_result_destroy(r);
  mb_plan_destroy(plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model),
      cmocka_unit_test(test_planted),
      cmocka_unit_test(test_cpu_kernel),
      cmocka_unit_test(test_jax_rope),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
