/* Planted bugs: kernels that forget the scales, transpose B, round
 * toward zero, or drop a term of a gradient must fail the correctness check; so
 * must kernels that leave output elements unwritten, that are right only on
 * their first call or on the run's own operands, and one wrong tile of a large
 * sampled output. Their correct twins pass. User kernels on the CPU backend's
 * (host) memory, through the public API. */
#include <math.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum bug {
  BUG_NONE,
  BUG_NO_SCALES,
  BUG_TRANSPOSE_B,
  BUG_TRUNCATE,
  BUG_ACCUMULATE, /* adds into the output as if it started at zero */
  BUG_SKIP_ZERO,  /* leaves the elements that quantize to 0 unwritten */
  BUG_TILE,       /* one 64 x 64 tile of the output off by one */
  BUG_NO_PROJ,    /* rmsnorm_bwd: dX = rstd g, rstd's own gradient lost */
  BUG_DW_NO_RSTD, /* rmsnorm_bwd: dW sums dy x, not dy x rstd */
  BUG_SILU_GRAD   /* swiglu_bwd: silu'(a) taken as sigmoid(a) */
};

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

/* i8 x i8 -> i32: D = A B exactly, A [M,K], B [K,N]. */
static mb_status_t int8_gemm(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], k = a->params->shape[1],
                n = a->params->shape[2];
  const int8_t *qa = mb_tensor_data(a->inputs[0]),
               *qb = mb_tensor_data(a->inputs[1]);
  int32_t *d = mb_tensor_data(a->outputs[0]);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      /* Unsigned, so the buggy variant adding onto the output's sentinel
       * (INT32_MIN) wraps as the hardware would instead of being UB. */
      uint32_t acc = bug == BUG_ACCUMULATE ? (uint32_t)d[i * n + j] : 0u;
      for (int64_t p = 0; p < k; p++)
        acc += (uint32_t)(qa[i * k + p] * qb[p * n + j]);
      d[i * n + j] = (int32_t)acc;
    }
  return MB_OK;
}

/* Row-wise dynamic quantize of bf16 to symmetric i8 (s = absmax / 127). */
static mb_status_t quant_i8_rows(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], n = a->params->shape[1];
  const uint16_t *x = mb_tensor_data(a->inputs[0]);
  int8_t *q = mb_tensor_data(a->outputs[0]);
  float *s = mb_tensor_data(a->outputs[1]);
  for (int64_t i = 0; i < m; i++) {
    float amax = 0;
    for (int64_t j = 0; j < n; j++)
      amax = fmaxf(amax, fabsf(mb_bf16_to_f32(x[i * n + j])));
    s[i] = amax > 0 ? amax / 127.0f : 1.0f;
    for (int64_t j = 0; j < n; j++) {
      float v = nearbyintf(mb_bf16_to_f32(x[i * n + j]) / s[i]);
      if (bug != BUG_SKIP_ZERO || v != 0) q[i * n + j] = (int8_t)v;
    }
  }
  return MB_OK;
}

/* f32 D = A B, A [M,K], B [K,N], row by row; the bug adds 1 to the tile
 * of rows [1984, 2048) x columns [2880, 2944) (tile-aligned, as a wrong
 * thread block's would be). */
static mb_status_t f32_gemm(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], k = a->params->shape[1],
                n = a->params->shape[2];
  const float *fa = mb_tensor_data(a->inputs[0]),
              *fb = mb_tensor_data(a->inputs[1]);
  float *d = mb_tensor_data(a->outputs[0]);
  for (int64_t i = 0; i < m; i++) {
    float *row = d + i * n;
    for (int64_t j = 0; j < n; j++) row[j] = 0;
    for (int64_t p = 0; p < k; p++)
      for (int64_t j = 0; j < n; j++) row[j] += fa[i * k + p] * fb[p * n + j];
    if (bug == BUG_TILE && i >= 1984 && i < 2048)
      for (int64_t j = 2880; j < 2944 && j < n; j++) row[j] += 1.0f;
  }
  return MB_OK;
}

/* rmsnorm_bwd in f32 from the op's formulas, rows in double. */
static mb_status_t rms_bwd(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], n = a->params->shape[1];
  const float *x = mb_tensor_data(a->inputs[0]),
              *w = mb_tensor_data(a->inputs[1]),
              *dy = mb_tensor_data(a->inputs[2]);
  float *dx = mb_tensor_data(a->outputs[0]),
        *dw = mb_tensor_data(a->outputs[1]);
  for (int64_t j = 0; j < n; j++) dw[j] = 0;
  for (int64_t i = 0; i < m; i++) {
    double sq = 0, gx = 0;
    for (int64_t j = 0; j < n; j++) {
      sq += (double)x[i * n + j] * x[i * n + j];
      gx += (double)dy[i * n + j] * w[j] * x[i * n + j];
    }
    const double r = 1 / sqrt(sq / (double)n + a->params->eps);
    const double c = bug == BUG_NO_PROJ ? 0 : r * r * gx / (double)n;
    for (int64_t j = 0; j < n; j++) {
      dx[i * n + j] = (float)(r * (dy[i * n + j] * w[j] - x[i * n + j] * c));
      dw[j] += (float)((double)dy[i * n + j] * x[i * n + j] *
                       (bug == BUG_DW_NO_RSTD ? 1 : r));
    }
  }
  return MB_OK;
}

/* swiglu_bwd in f32: dA = dY B silu'(A), dB = dY silu(A). */
static mb_status_t swiglu_bwd(void *user, const mb_kernel_args_t *a) {
  enum bug bug = *(const enum bug *)user;
  const float *x = mb_tensor_data(a->inputs[0]),
              *y = mb_tensor_data(a->inputs[1]),
              *dy = mb_tensor_data(a->inputs[2]);
  float *da = mb_tensor_data(a->outputs[0]),
        *db = mb_tensor_data(a->outputs[1]);
  for (size_t i = 0; i < mb_tensor_numel(a->outputs[0]); i++) {
    const double s = 1 / (1 + exp(-(double)x[i]));
    const double d = bug == BUG_SILU_GRAD ? s : s * (1 + x[i] * (1 - s));
    da[i] = (float)(dy[i] * y[i] * d);
    db[i] = (float)(dy[i] * x[i] * s);
  }
  return MB_OK;
}

static const enum bug k_bugs[] = {BUG_NONE,     BUG_NO_SCALES,  BUG_TRANSPOSE_B,
                                  BUG_TRUNCATE, BUG_ACCUMULATE, BUG_SKIP_ZERO,
                                  BUG_TILE,     BUG_NO_PROJ,    BUG_DW_NO_RSTD,
                                  BUG_SILU_GRAD};
static const char *const k_names[] = {
    "right",     "no_scales", "transpose_b", "truncate",   "accumulate",
    "skip_zero", "tile",      "no_proj",     "dw_no_rstd", "silu_grad"};

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
  reg("gemm", MB_DTYPE_I8, MB_DTYPE_I32, int8_gemm, BUG_NONE);
  reg("gemm", MB_DTYPE_I8, MB_DTYPE_I32, int8_gemm, BUG_ACCUMULATE);
  reg("quantize", MB_DTYPE_BF16, MB_DTYPE_I8, quant_i8_rows, BUG_NONE);
  reg("quantize", MB_DTYPE_BF16, MB_DTYPE_I8, quant_i8_rows, BUG_SKIP_ZERO);
  reg("gemm", MB_DTYPE_F32, MB_DTYPE_F32, f32_gemm, BUG_NONE);
  reg("gemm", MB_DTYPE_F32, MB_DTYPE_F32, f32_gemm, BUG_TILE);
  reg("rmsnorm_bwd", MB_DTYPE_F32, MB_DTYPE_F32, rms_bwd, BUG_NONE);
  reg("rmsnorm_bwd", MB_DTYPE_F32, MB_DTYPE_F32, rms_bwd, BUG_NO_PROJ);
  reg("rmsnorm_bwd", MB_DTYPE_F32, MB_DTYPE_F32, rms_bwd, BUG_DW_NO_RSTD);
  reg("swiglu_bwd", MB_DTYPE_F32, MB_DTYPE_F32, swiglu_bwd, BUG_NONE);
  reg("swiglu_bwd", MB_DTYPE_F32, MB_DTYPE_F32, swiglu_bwd, BUG_SILU_GRAD);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

/* One sample of `op` with kernel `impl` in ctx; the caller destroys it. */
static mb_result_t *bench(mb_context_t *ctx, const char *op,
                          const mb_op_params_t *p, const char *impl,
                          mb_cache_policy_t cache, uint32_t flags,
                          uint64_t seed) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "cpu";
  s.impl = impl;
  s.cache = cache;
  s.flags = flags;
  s.seed = seed;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 1;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  return r;
}

/* Runs `op` (an op or alias) on params p with kernel `impl`; returns
 * whether it passed. */
static int passes_p(const char *op, const mb_op_params_t *p, const char *impl) {
  mb_result_t *r = bench(g_ctx, op, p, impl, MB_CACHE_COLD, 0, 42);
  int pass = test_result_passes(r, impl);
  mb_result_destroy(r);
  return pass;
}

static int passes(const char *op, int64_t m, int64_t k, int64_t n,
                  mb_dtype_t dtype, const char *impl) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = n ? 3 : 2;
  p.shape[0] = m, p.shape[1] = k, p.shape[2] = n;
  p.dtype = dtype;
  return passes_p(op, &p, impl);
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

/* A gradient with a term dropped fails, in either output. */
static void test_backward_terms(void **state) {
  (void)state;
  assert_true(passes("rmsnorm_bwd", 33, 64, 0, MB_DTYPE_F32, "right"));
  assert_false(passes("rmsnorm_bwd", 33, 64, 0, MB_DTYPE_F32, "no_proj"));
  assert_false(passes("rmsnorm_bwd", 33, 64, 0, MB_DTYPE_F32, "dw_no_rstd"));
  assert_true(passes("swiglu_bwd", 37, 129, 0, MB_DTYPE_F32, "right"));
  assert_false(passes("swiglu_bwd", 37, 129, 0, MB_DTYPE_F32, "silu_grad"));
}

/* ---- outputs left unwritten ----------------------------------------------
 * Integer outputs start as their most negative value, which these never
 * write: with 0 there, an accumulator that assumed a zeroed output and a
 * quantizer that skips its zeros both passed. */

static void test_unwritten_integer_outputs(void **state) {
  (void)state;
  mb_op_params_t g = MB_OP_PARAMS_INIT;
  g.ndim = 3;
  g.shape[0] = 40, g.shape[1] = 64, g.shape[2] = 24;
  g.dtype = MB_DTYPE_I8;
  assert_true(passes_p("gemm", &g, "right"));
  assert_false(passes_p("gemm", &g, "accumulate"));
  mb_op_params_t q = MB_OP_PARAMS_INIT;
  q.ndim = 2;
  q.shape[0] = 33, q.shape[1] = 256;
  q.dtype = MB_DTYPE_BF16;
  q.dtype_out = MB_DTYPE_I8;
  assert_true(passes_p("quantize", &q, "right"));
  assert_false(passes_p("quantize", &q, "skip_zero"));
}

/* ---- runs after the first ------------------------------------------------
 * A kernel that keeps state across calls (its own context each test, so
 * the state lives in the test). LAZY_LATER is right on its first call and
 * does nothing after; LAZY_FIRST_OUTPUT works only on the first output
 * buffer it saw (the run's own operands), never on rotate's copies. */

enum lazy_bug { LAZY_NONE, LAZY_LATER, LAZY_FIRST_OUTPUT };
typedef struct lazy {
  enum lazy_bug bug;
  uint64_t calls;
  const void *first_out;
} lazy_t;

static mb_status_t lazy_add(void *user, const mb_kernel_args_t *a) {
  lazy_t *l = user;
  const float *x = mb_tensor_data(a->inputs[0]),
              *y = mb_tensor_data(a->inputs[1]);
  float *z = mb_tensor_data(a->outputs[0]);
  if (!l->first_out) l->first_out = z;
  if ((l->bug == LAZY_LATER && l->calls++ > 0) ||
      (l->bug == LAZY_FIRST_OUTPUT && z != l->first_out))
    return MB_OK; /* the planted bug: no work */
  for (size_t i = 0; i < mb_tensor_numel(a->outputs[0]); i++)
    z[i] = x[i] + y[i];
  return MB_OK;
}

/* A context with the lazy kernel registered on *l (which outlives it). */
static mb_context_t *lazy_context(lazy_t *l) {
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = "add";
  d.name = "lazy";
  d.dtype = MB_DTYPE_F32;
  d.run = lazy_add;
  d.user = l;
  assert_int_equal(mb_kernel_register(ctx, &d), MB_OK);
  return ctx;
}

/* f32 add of 256 x 512 with the lazy kernel, its bug now `bug`. */
static mb_result_t *lazy_run(mb_context_t *ctx, lazy_t *l, enum lazy_bug bug,
                             mb_cache_policy_t cache, uint32_t flags,
                             mb_correctness_t *c, mb_result_info_t *info) {
  *l = (lazy_t){bug, 0, NULL};
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 256, 512);
  mb_result_t *r = bench(ctx, "add", &p, "lazy", cache, flags, 7);
  *c = (mb_correctness_t)MB_CORRECTNESS_INIT;
  *info = (mb_result_info_t)MB_RESULT_INFO_INIT;
  mb_result_correctness(r, c);
  mb_result_info(r, info);
  return r;
}

static void test_checked_after_timing(void **state) {
  (void)state;
  lazy_t l;
  mb_context_t *ctx = lazy_context(&l);
  mb_correctness_t c;
  mb_result_info_t info;
  /* The right kernel: the first run and the last timed run, both pass. */
  mb_result_t *r = lazy_run(ctx, &l, LAZY_NONE, MB_CACHE_HOT, 0, &c, &info);
  assert_int_equal(info.status, MB_RESULT_OK);
  assert_true(c.pass);
  assert_int_equal(c.runs_checked, 2);
  assert_string_equal(info.warning, "");
  mb_result_destroy(r);
  /* Right once, then idle: timed, but it fails, and the warning says the
   * check after timing caught it. */
  r = lazy_run(ctx, &l, LAZY_LATER, MB_CACHE_HOT, 0, &c, &info);
  assert_int_equal(info.status, MB_RESULT_OK);
  assert_false(c.pass);
  assert_int_equal(c.runs_checked, 2);
  assert_contains(info.warning, "wrong result (after timing)");
  const char *json = mb_result_json(r);
  assert_contains(json, "\"runs_checked\":2");
  assert_contains(json, "\"sample_seed\":");
  mb_result_destroy(r);
  /* Strict: the result fails, naming the check. */
  r = lazy_run(ctx, &l, LAZY_LATER, MB_CACHE_HOT, MB_BENCH_STRICT, &c, &info);
  assert_int_equal(info.status, MB_RESULT_FAILED);
  assert_contains(info.reason, "wrong result (after timing)");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

static void test_rotate_checks_every_copy(void **state) {
  (void)state;
  lazy_t l;
  mb_context_t *ctx = lazy_context(&l);
  mb_correctness_t c;
  mb_result_info_t info;
  mb_result_t *r = lazy_run(ctx, &l, LAZY_NONE, MB_CACHE_ROTATE, 0, &c, &info);
  assert_true(c.pass);
  assert_true(info.rotate_copies >= 2);
  /* The first run, then every copy's (the run's own included). */
  assert_int_equal(c.runs_checked, 1 + info.rotate_copies);
  mb_result_destroy(r);
  /* Right on the run's own operands only: the first run and the check
   * after timing pass; copy 1 does not. */
  r = lazy_run(ctx, &l, LAZY_FIRST_OUTPUT, MB_CACHE_ROTATE, MB_BENCH_STRICT, &c,
               &info);
  assert_int_equal(info.status, MB_RESULT_FAILED);
  assert_contains(info.reason, "wrong result (copy 1)");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* ---- sampled checks ------------------------------------------------------
 * A 4096 x 4096 output of a K = 4 gemm costs more to check than the full
 * check's budget, so it is sampled; the sample visits every 64 x 64 tile,
 * so the one wrong tile is caught whatever the seed. */

static void test_wrong_tile_always_caught(void **state) {
  (void)state;
  mb_op_params_t p = test_shape3(MB_DTYPE_F32, 4096, 4, 4096);
  /* 76 and 92: seeds whose uniform samples (8192 in each of the two
   * checks) all miss the tile. */
  static const uint64_t k_seeds[] = {1, 2, 76, 92};
  for (size_t i = 0; i < sizeof k_seeds / sizeof *k_seeds; i++) {
    const uint64_t seed = k_seeds[i];
    mb_result_t *r = bench(g_ctx, "gemm", &p, "tile", MB_CACHE_HOT, 0, seed);
    mb_correctness_t c = MB_CORRECTNESS_INIT;
    mb_result_correctness(r, &c);
    assert_true(c.elements_checked < c.elements_total); /* sampled */
    if (c.pass)
      fail_msg("seed %llu: the wrong tile was missed",
               (unsigned long long)seed);
    mb_result_destroy(r);
  }
  mb_result_t *r = bench(g_ctx, "gemm", &p, "right", MB_CACHE_HOT, 0, 1);
  assert_true(test_result_passes(r, "right"));
  mb_result_destroy(r);
}

/* ---- ties ----------------------------------------------------------------
 * Quantize is byte-exact: a kernel rounding ties half away from zero (C's
 * roundf, or adding 0.5 and truncating) is half an ulp off at a tie, which
 * a tolerance of half an ulp let through. A static scale of 1 makes ties
 * common: every bf16 input k + 0.5 for i8, and one in 16 bf16 values for
 * e4m3 (the 4 dropped significand bits 1000). The kernel counts the ties it
 * met, so the test knows its inputs had some. */

typedef struct tie_kernel {
  int half_away; /* the planted bug */
  uint64_t ties;
} tie_kernel_t;

/* |v| rounded to e4m3 half away from zero: RNE, then one step up in
 * magnitude when RNE went down at an exact tie. */
static uint8_t e4m3_half_away(float v, tie_kernel_t *t) {
  uint8_t r = mb_f32_to_f8e4m3(v, MB_CONVERT_SATURATE);
  float lo = mb_f8e4m3_to_f32(r);
  if ((r & 0x7F) < 0x7E && fabsf(lo) < fabsf(v)) {
    float hi = mb_f8e4m3_to_f32((uint8_t)(r + 1));
    if (fabsf(hi) - fabsf(v) == fabsf(v) - fabsf(lo)) {
      t->ties++;
      if (t->half_away) r++;
    }
  } else if ((r & 0x7F) > 0 && fabsf(lo) > fabsf(v)) {
    /* RNE went up at a tie too (to the even one): that is also a tie. */
    float below = mb_f8e4m3_to_f32((uint8_t)(r - 1));
    if (fabsf(lo) - fabsf(v) == fabsf(v) - fabsf(below)) t->ties++;
  }
  return r;
}

/* Quantize of bf16 with one static scale to i8 or e4m3 (dtype_out). */
static mb_status_t quant_static(void *user, const mb_kernel_args_t *a) {
  tie_kernel_t *t = user;
  const size_t n = mb_tensor_numel(a->inputs[0]);
  const uint16_t *x = mb_tensor_data(a->inputs[0]);
  uint8_t *q = mb_tensor_data(a->outputs[0]);
  float *s = mb_tensor_data(a->outputs[1]);
  const float sc = (float)a->params->scale;
  s[0] = sc;
  for (size_t i = 0; i < n; i++) {
    float v = mb_bf16_to_f32(x[i]) / sc;
    if (a->params->dtype_out == MB_DTYPE_F8E4M3) {
      q[i] = e4m3_half_away(v, t);
      continue;
    }
    float r = nearbyintf(v); /* RNE in the default rounding mode */
    if (fabsf(v - truncf(v)) == 0.5f) {
      t->ties++;
      if (t->half_away) r = roundf(v);
    }
    r = r > 127.0f ? 127.0f : r < -128.0f ? -128.0f : r;
    q[i] = (uint8_t)(int8_t)r;
  }
  return MB_OK;
}

/* Whether quantize of 64 x 256 bf16 to `out`, static scale 1 per tensor,
 * passes with the tie kernel; *ties: the ties it rounded. */
static int tie_passes(mb_dtype_t out, int half_away, uint64_t *ties) {
  tie_kernel_t t = {half_away, 0};
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = "quantize";
  d.name = "ties";
  d.dtype = MB_DTYPE_BF16;
  d.dtype_out = out;
  d.run = quant_static;
  d.user = &t;
  assert_int_equal(mb_kernel_register(ctx, &d), MB_OK);
  mb_op_params_t p = test_shape2(MB_DTYPE_BF16, 64, 256);
  p.dtype_out = out;
  p.flags |= MB_PARAM_STATIC;
  p.scale = 1.0;
  p.scale_a.mode = MB_SCALE_TENSOR;
  mb_result_t *r = bench(ctx, "quantize", &p, "ties", MB_CACHE_HOT, 0, 42);
  int pass = test_result_passes(r, "ties");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
  *ties = t.ties;
  return pass;
}

static void test_quantize_ties_to_even(void **state) {
  (void)state;
  static const mb_dtype_t k_out[] = {MB_DTYPE_I8, MB_DTYPE_F8E4M3};
  for (size_t i = 0; i < sizeof k_out / sizeof *k_out; i++) {
    uint64_t ties = 0;
    assert_true(tie_passes(k_out[i], 0, &ties));
    assert_true(ties > 0); /* the inputs do exercise ties */
    if (tie_passes(k_out[i], 1, &ties))
      fail_msg("%s: rounding %llu ties half away from zero passed",
               mb_dtype_name(k_out[i]), (unsigned long long)ties);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gemm_scales_and_transpose),
      cmocka_unit_test(test_quantize_rounding),
      cmocka_unit_test(test_add_rounding),
      cmocka_unit_test(test_backward_terms),
      cmocka_unit_test(test_unwritten_integer_outputs),
      cmocka_unit_test(test_checked_after_timing),
      cmocka_unit_test(test_rotate_checks_every_copy),
      cmocka_unit_test(test_wrong_tile_always_caught),
      cmocka_unit_test(test_quantize_ties_to_even),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
