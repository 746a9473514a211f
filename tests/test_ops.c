/* The op catalogue: look-up, validation, FLOP/byte model, references and
 * the (sampled) verification against them. */
#include <math.h>
#include <time.h>

#include "test_util.h"
#include "dtype_internal.h"
#include "ops/op_internal.h"
#include "ops/verify.h"

static mb_op_params_t gemm_params(int64_t m, int64_t k, int64_t n) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = m;
  p.shape[1] = k;
  p.shape[2] = n;
  return p;
}

static void test_find(void **state) {
  (void)state;
  assert_ptr_equal(mb_op_find("gemm"), &mb__op_gemm);
  assert_ptr_equal(mb_op_find("matmul"), &mb__op_gemm);
  assert_ptr_equal(mb_op_find("add"), &mb__op_add);
  assert_ptr_equal(mb_op_find("gemm_fp8_rowwise"), &mb__op_gemm);
  assert_ptr_equal(mb_op_find("transpose_quantization"), &mb__op_quantize);
  assert_null(mb_op_find("gemmm"));
  assert_contains(mb_error_last(),
                  "unknown op \"gemmm\"; valid ops: activation, add, ");
  assert_contains(
      mb_error_last(),
      "gemm, gemm_block_sparse, gemm_sparse24, h2d, layernorm, linear, "
      "linear_training, ln_linear, moe_layer_proxy, quantize");
  /* Iteration visits every op once, in name order. */
  const char *prev = "";
  for (const mb_op_t *op = mb_op_next(NULL); op; op = mb_op_next(op)) {
    assert_true(strcmp(prev, mb_op_name(op)) < 0);
    prev = mb_op_name(op);
  }
  /* Every alias names an op that exists. */
  for (size_t i = 0; i < mb_op_alias_count(); i++) {
    const char *op = NULL;
    const char *name = mb_op_alias_name(i, &op, NULL);
    assert_non_null(mb_op_find(name));
    assert_non_null(mb_op_find(op));
  }
}

static void test_resolve(void **state) {
  (void)state;
  mb_op_params_t p = gemm_params(4, 5, 6);
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  assert_int_equal(p.dtype, MB_DTYPE_F32);
  assert_int_equal(p.dtype_out, MB_DTYPE_F32);
  assert_int_equal(p.dtype_acc, MB_DTYPE_F32);
  p = gemm_params(4, 5, 6);
  p.dtype = MB_DTYPE_BF16;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  assert_int_equal(p.dtype_out, MB_DTYPE_BF16);
  p = gemm_params(4, 5, 6);
  p.dtype = MB_DTYPE_I32;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(),
                  "gemm: dtype \"i32\" is not supported; valid: f32, bf16, "
                  "f16, f8e4m3, f8e5m2, i8");
  p = gemm_params(4, 5, 6);
  p.ndim = 2;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "needs 3 (MxKxN)");
  p = gemm_params(4, 0, 6);
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "dimension 1 (K of MxKxN) is 0");
  p = gemm_params(4, 5, 6);
  p.flags = MB_PARAM_CAUSAL; /* an attention parameter */
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "gemm: \"causal\" does not apply");
  mb_op_params_t a = MB_OP_PARAMS_INIT;
  a.ndim = 2, a.shape[0] = a.shape[1] = 4;
  a.scale_a.mode = MB_SCALE_ROW;
  assert_int_equal(mb_op_resolve(&mb__op_add, &a), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "add: scales do not apply");
  p = gemm_params(4, 5, 6);
  p.struct_size = 8;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_ERR_INVALID_ARG);
}

static void test_flop_bytes(void **state) {
  (void)state;
  mb_op_params_t p = gemm_params(2048, 1024, 512);
  p.dtype = MB_DTYPE_BF16;
  p.dtype_out = MB_DTYPE_F32;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  assert_true(mb_op_flop(&mb__op_gemm, &p) == 2.0 * 2048 * 1024 * 512);
  assert_true(mb_op_bytes(&mb__op_gemm, &p) ==
              2.0 * 2048 * 1024 + 2.0 * 1024 * 512 + 4.0 * 2048 * 512);
  p.beta = 1; /* D is read too */
  assert_true(mb_op_bytes(&mb__op_gemm, &p) ==
              2.0 * 2048 * 1024 + 2.0 * 1024 * 512 + 8.0 * 2048 * 512);
  mb_op_params_t a = MB_OP_PARAMS_INIT;
  a.ndim = 2;
  a.shape[0] = 100;
  a.shape[1] = 30;
  a.dtype = MB_DTYPE_BF16;
  assert_int_equal(mb_op_resolve(&mb__op_add, &a), MB_OK);
  assert_true(mb_op_flop(&mb__op_add, &a) == 3000);
  assert_true(mb_op_bytes(&mb__op_add, &a) == 3 * 3000 * 2);
}

/* [[1,2],[3,4]] . [[5,6],[7,8]] = [[19,22],[43,50]]; alpha 2, beta 0.5. */
static void test_gemm_reference_known(void **state) {
  (void)state;
  mb_op_params_t p = gemm_params(2, 2, 2);
  p.alpha = 2;
  p.beta = 0.5;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, d0[] = {10, 20, 30, 40};
  const float one = 1.0f;
  const void *host[] = {a, b, &one, &one, d0};
  void *ref;
  assert_int_equal(mb__op_gemm.ref_prepare(&p, host, &ref), MB_OK);
  const double want[] = {2 * 19 + 5, 2 * 22 + 10, 2 * 43 + 15, 2 * 50 + 20};
  const double scale[] = {2 * 19 + 5, 2 * 22 + 10, 2 * 43 + 15, 2 * 50 + 20};
  for (size_t i = 0; i < 4; i++) {
    double v, s;
    mb__op_gemm.ref_element(ref, 0, i, &v, &s);
    assert_true(v == want[i]);
    assert_true(s == scale[i]);
  }
  mb__op_gemm.ref_release(ref);
}

/* The layout flags change where A and B are stored, not the product: the
 * reference over the stored operands equals a naive product of the logical
 * ones, and the operand shapes are the stored ones. Distinct integers with
 * M != K != N make any misread index show (and keep the sums exact). */
static const float k_one_ref = 1.0f;

static void test_gemm_trans_reference(void **state) {
  (void)state;
  enum { M = 3, K = 4, N = 5 };
  float a[M * K], b[K * N], at[K * M], bt[N * K];
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++)
      at[k * M + i] = a[i * K + k] =
          (float)((i * K + k + 1) * (k % 2 ? -1 : 1));
  for (int k = 0; k < K; k++)
    for (int j = 0; j < N; j++)
      bt[j * K + k] = b[k * N + j] = (float)(2 * (k * N + j) - 7);
  static const uint32_t k_flags[] = {0, MB_PARAM_TRANS_A, MB_PARAM_TRANS_B,
                                     MB_PARAM_TRANS_A | MB_PARAM_TRANS_B};
  mb_op_params_t plain = gemm_params(M, K, N);
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &plain), MB_OK);
  for (size_t f = 0; f < sizeof k_flags / sizeof k_flags[0]; f++) {
    const int ta = (k_flags[f] & MB_PARAM_TRANS_A) != 0;
    const int tb = (k_flags[f] & MB_PARAM_TRANS_B) != 0;
    mb_op_params_t p = gemm_params(M, K, N);
    p.flags = k_flags[f];
    p.alpha = 0.5;
    assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
    mb_dtype_t dt;
    uint32_t nd;
    int64_t sh[MB_MAX_DIMS];
    assert_int_equal(mb_op_operand(&mb__op_gemm, &p, 0, &dt, &nd, sh), MB_OK);
    assert_true(sh[0] == (ta ? K : M) && sh[1] == (ta ? M : K));
    assert_int_equal(mb_op_operand(&mb__op_gemm, &p, 1, &dt, &nd, sh), MB_OK);
    assert_true(sh[0] == (tb ? N : K) && sh[1] == (tb ? K : N));
    assert_int_equal(mb_op_operand(&mb__op_gemm, &p, 4, &dt, &nd, sh), MB_OK);
    assert_true(sh[0] == M && sh[1] == N);
    /* The same work and traffic as the plain gemm. */
    assert_true(mb_op_flop(&mb__op_gemm, &p) ==
                mb_op_flop(&mb__op_gemm, &plain));
    assert_true(mb_op_bytes(&mb__op_gemm, &p) ==
                mb_op_bytes(&mb__op_gemm, &plain));
    const void *host[] = {ta ? at : a, tb ? bt : b, &k_one_ref, &k_one_ref,
                          NULL};
    void *ref;
    assert_int_equal(mb__op_gemm.ref_prepare(&p, host, &ref), MB_OK);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double want = 0, mag = 0, v, sc;
        for (int k = 0; k < K; k++) {
          want += (double)a[i * K + k] * b[k * N + j];
          mag += fabs((double)a[i * K + k] * b[k * N + j]);
        }
        mb__op_gemm.ref_element(ref, 0, (size_t)(i * N + j), &v, &sc);
        if (v != 0.5 * want || sc != 0.5 * mag)
          fail_msg("flags %u: D[%d,%d] = %g (scale %g), want %g (%g)",
                   k_flags[f], i, j, v, sc, 0.5 * want, 0.5 * mag);
      }
    mb__op_gemm.ref_release(ref);
  }
}

/* The GEMM reference reads its operands where they lie (a row converted at
 * a time) or from a transposed copy; every path must give the value a
 * naive product of the logical operands gives, bit for bit: each product
 * a sa b sb in double, summed in K order, plus beta D. One small shape
 * (operands converted whole) and one whose operands pass 2^22 elements
 * (converted a row at a time, transposed by several threads), with dims
 * that are not multiples of the transpose's tiles where no scale forbids. */
typedef struct ref_path {
  const char *name;
  mb_dtype_t a, b, out, q;
  uint32_t flags;
  const char *sa, *sb;
  double beta;
} ref_path_t;

/* Logical element (r, c) of a side: stored transposed when `t`. */
static double side_at(const void *v, mb_dtype_t dt, int t, int64_t r, int64_t c,
                      int64_t rows, int64_t cols) {
  return mb__load(v, dt, (size_t)(t ? c * rows + r : r * cols + c));
}

static double grid_at(const float *g, const mb_scaling_t *s, int64_t cols,
                      int64_t r, int64_t c) {
  if (s->mode == MB_SCALE_NONE) return 1.0;
  return (double)g[r / s->block[0] * (cols / s->block[1]) + c / s->block[1]];
}

/* The values and grid of a side the op quantizes itself (its semantics,
 * mb__quantize_ref), or the host's. */
static void *naive_side(const mb_op_params_t *p, const void *host,
                        const float *host_grid, int b, float **grid) {
  const mb_scaling_t *s = b ? &p->scale_b : &p->scale_a;
  const int64_t rows = b ? p->shape[1] : p->shape[0];
  const int64_t cols = b ? p->shape[2] : p->shape[1];
  if (!(p->flags & MB_PARAM_QUANTIZE_INPUTS)) {
    *grid = (float *)host_grid;
    return (void *)host;
  }
  const size_t count = (size_t)(rows * cols);
  int64_t gr, gc;
  mb__scaling_grid(s, rows, cols, &gr, &gc);
  float *x = malloc(count * sizeof *x);
  void *q = malloc(mb_dtype_bytes(p->dtype_q, count));
  *grid = malloc((size_t)(gr * gc) * sizeof **grid);
  assert_non_null(x);
  assert_non_null(q);
  assert_non_null(*grid);
  mb_convert(x, MB_DTYPE_F32, host, b ? p->dtype_b : p->dtype, count, 0);
  mb__quantize_ref_sd(x, rows, cols, s, p->dtype_q, p->dtype_scale, 0.0, q,
                      *grid);
  free(x);
  return q;
}

static void check_ref_path(const ref_path_t *c, int64_t m, int64_t k, int64_t n,
                           int every) {
  mb_op_params_t p = gemm_params(m, k, n);
  p.dtype = c->a, p.dtype_b = c->b, p.dtype_out = c->out, p.dtype_q = c->q;
  p.flags = c->flags, p.alpha = 1.5, p.beta = c->beta;
  if (c->sa) assert_int_equal(mb_scaling_from_string(c->sa, &p.scale_a), MB_OK);
  if (c->sb) assert_int_equal(mb_scaling_from_string(c->sb, &p.scale_b), MB_OK);
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  void *buf[5];
  mb_dtype_t dt[5];
  for (uint32_t role = 0; role < 5; role++) {
    uint32_t nd;
    int64_t sh[MB_MAX_DIMS];
    assert_int_equal(mb_op_operand(&mb__op_gemm, &p, role, &dt[role], &nd, sh),
                     MB_OK);
    const size_t count = (size_t)(sh[0] * sh[1]);
    buf[role] = malloc(mb_dtype_bytes(dt[role], count));
    assert_non_null(buf[role]);
    mb_fill_t f = MB_FILL_INIT;
    f.seed = 11 + role;
    if (role == 2 || role == 3) f.kind = MB_FILL_UNIFORM, f.a = 0.25, f.b = 4;
    assert_int_equal(mb_fill_host(buf[role], dt[role], count, &f), MB_OK);
  }
  const void *host[] = {buf[0], buf[1], buf[2], buf[3], buf[4]};
  void *ref;
  assert_int_equal(mb__op_gemm.ref_prepare(&p, host, &ref), MB_OK);
  float *ga, *gb;
  const void *va = naive_side(&p, buf[0], buf[2], 0, &ga);
  const void *vb = naive_side(&p, buf[1], buf[3], 1, &gb);
  const int qi = (p.flags & MB_PARAM_QUANTIZE_INPUTS) != 0;
  const mb_dtype_t da = qi ? p.dtype_q : dt[0], db = qi ? p.dtype_q : dt[1];
  const int ta = (p.flags & MB_PARAM_TRANS_A) != 0;
  const int tb = (p.flags & MB_PARAM_TRANS_B) != 0;
  /* Every element, or a 4 x 4 grid of them with the corners. */
  const int64_t steps = every ? 0 : 4;
  for (int64_t si = 0; si < (every ? m : steps); si++)
    for (int64_t sj = 0; sj < (every ? n : steps); sj++) {
      const int64_t i = every ? si : si * (m - 1) / (steps - 1);
      const int64_t j = every ? sj : sj * (n - 1) / (steps - 1);
      double acc = 0, mag = 0, v, sc;
      for (int64_t q = 0; q < k; q++) {
        double prod =
            side_at(va, da, ta, i, q, m, k) * grid_at(ga, &p.scale_a, k, i, q) *
            side_at(vb, db, tb, q, j, k, n) * grid_at(gb, &p.scale_b, n, q, j);
        acc += prod;
        mag += fabs(prod);
      }
      const double d0 = mb__load(buf[4], dt[4], (size_t)(i * n + j));
      const double want = p.alpha * acc + (p.beta != 0 ? p.beta * d0 : 0);
      const double wsc =
          fabs(p.alpha) * mag + (p.beta != 0 ? fabs(p.beta * d0) : 0);
      mb__op_gemm.ref_element(ref, 0, (size_t)(i * n + j), &v, &sc);
      if (v != want || sc != wsc)
        fail_msg(
            "%s %lldx%lldx%lld: D[%lld,%lld] = %.17g (scale %.17g), "
            "want %.17g (%.17g)",
            c->name, (long long)m, (long long)k, (long long)n, (long long)i,
            (long long)j, v, sc, want, wsc);
    }
  mb__op_gemm.ref_release(ref);
  if (qi) {
    free((void *)va), free((void *)vb);
    free(ga), free(gb);
  }
  for (int r = 0; r < 5; r++) free(buf[r]);
}

static void test_gemm_reference_paths(void **state) {
  (void)state;
  enum { TA = MB_PARAM_TRANS_A, TB = MB_PARAM_TRANS_B };
  const mb_dtype_t F32 = MB_DTYPE_F32, BF16 = MB_DTYPE_BF16, F16 = MB_DTYPE_F16,
                   E4 = MB_DTYPE_F8E4M3, E5 = MB_DTYPE_F8E5M2, I8 = MB_DTYPE_I8,
                   NO = MB_DTYPE_NONE;
  const uint32_t QI = MB_PARAM_QUANTIZE_INPUTS;
  const ref_path_t k_paths[] = {
      {"f32", F32, F32, NO, NO, 0, NULL, NULL, 0.75},
      {"f32 trans_a", F32, F32, NO, NO, TA, NULL, NULL, 0.75},
      {"f32 trans_b", F32, F32, NO, NO, TB, NULL, NULL, 0},
      {"bf16", BF16, BF16, NO, NO, 0, NULL, NULL, -0.5},
      {"bf16 trans_a trans_b", BF16, BF16, F32, NO, TA | TB, NULL, NULL, 2},
      {"f16 trans_a", F16, F16, NO, NO, TA, NULL, NULL, 0.25},
      {"e4m3 blocks", E4, E4, BF16, NO, 0, "block:1x128", "block:128x128", 0.5},
      {"e5m2 row col", E5, E5, F32, NO, 0, "row", "col", 0},
      {"i8 tensor col", I8, I8, F32, NO, 0, "tensor", "col", 0.25},
      {"bf16 x i4 group", BF16, MB_DTYPE_I4, NO, NO, 0, NULL, "group:128", 1},
      {"quantize e4m3", BF16, BF16, NO, E4, QI, NULL, NULL, 0},
      {"quantize i8 blocks", F32, F32, NO, I8, QI, "block:1x128",
       "block:128x128", 0},
  };
  for (size_t c = 0; c < sizeof k_paths / sizeof k_paths[0]; c++) {
    const ref_path_t *r = &k_paths[c];
    if (r->sa || r->sb || (r->flags & QI)) { /* K, N whole blocks */
      check_ref_path(r, 5, 256, 128, 1);
      check_ref_path(r, 128, 33024, 128, 0);
    } else {
      check_ref_path(r, 37, 45, 29, 1);
      check_ref_path(r, 67, 65537, 71, 0);
    }
  }
}

/* The layout flags are for unscaled float gemms; anything else is refused
 * naming the flag and what it applies to. */
static void test_gemm_trans_rejected(void **state) {
  (void)state;
  static const struct {
    mb_dtype_t dtype, dtype_b;
    mb_scale_mode_t sa, sb;
    uint32_t flags;
    const char *message;
  } k_cases[] = {
      {MB_DTYPE_F8E4M3, MB_DTYPE_NONE, MB_SCALE_NONE, MB_SCALE_NONE,
       MB_PARAM_TRANS_A, "trans_a applies to unscaled float gemms only"},
      {MB_DTYPE_F8E4M3, MB_DTYPE_NONE, MB_SCALE_ROW, MB_SCALE_COL,
       MB_PARAM_TRANS_B, "got f8e4m3 x f8e4m3 with scales"},
      {MB_DTYPE_I8, MB_DTYPE_NONE, MB_SCALE_NONE, MB_SCALE_NONE,
       MB_PARAM_TRANS_B, "trans_b applies to unscaled float gemms only"},
      {MB_DTYPE_BF16, MB_DTYPE_I4, MB_SCALE_NONE, MB_SCALE_GROUP,
       MB_PARAM_TRANS_A, "got bf16 x i4 with scales"},
      {MB_DTYPE_F32, MB_DTYPE_NONE, MB_SCALE_TENSOR, MB_SCALE_NONE,
       MB_PARAM_TRANS_B, "trans_b applies to unscaled float gemms only"},
      {MB_DTYPE_BF16, MB_DTYPE_NONE, MB_SCALE_NONE, MB_SCALE_NONE,
       MB_PARAM_TRANS_A | MB_PARAM_QUANTIZE_INPUTS,
       "got bf16 x bf16 with quantize-inputs"},
  };
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    mb_op_params_t p = gemm_params(32, 64, 48);
    p.dtype = k_cases[i].dtype;
    p.dtype_b = k_cases[i].dtype_b;
    p.scale_a.mode = k_cases[i].sa;
    p.scale_b.mode = k_cases[i].sb;
    if (k_cases[i].sb == MB_SCALE_GROUP) p.scale_b.block[1] = 32;
    p.flags = k_cases[i].flags;
    assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_ERR_INVALID_ARG);
    assert_contains(mb_error_last(), k_cases[i].message);
  }
  /* Each float dtype takes both flags, tf32 included. */
  static const mb_dtype_t k_ok[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
  for (size_t i = 0; i < sizeof k_ok / sizeof k_ok[0]; i++) {
    mb_op_params_t p = gemm_params(32, 64, 48);
    p.dtype = k_ok[i];
    p.flags = MB_PARAM_TRANS_A | MB_PARAM_TRANS_B;
    if (k_ok[i] == MB_DTYPE_F32) p.flags |= MB_PARAM_TF32;
    assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  }
}

/* fast_accum is a mode of fp8 products only: fp8 A and B, or
 * quantize-inputs to fp8. Anything else is an input error naming the valid
 * cases; another op says the flag does not apply. */
static void test_gemm_fast_accum_rejected(void **state) {
  (void)state;
  static const struct {
    mb_dtype_t dtype, dtype_b, dtype_q;
    uint32_t flags;
    const char *message;
  } k_bad[] = {
      {MB_DTYPE_F32, MB_DTYPE_NONE, MB_DTYPE_NONE, 0,
       "fast_accum applies to fp8 GEMMs only: A and B f8e4m3 or f8e5m2, or "
       "quantize-inputs to fp8 (got f32 x f32)"},
      {MB_DTYPE_BF16, MB_DTYPE_NONE, MB_DTYPE_NONE, 0, "(got bf16 x bf16)"},
      {MB_DTYPE_I8, MB_DTYPE_NONE, MB_DTYPE_NONE, 0, "(got i8 x i8)"},
      {MB_DTYPE_BF16, MB_DTYPE_I4, MB_DTYPE_NONE, 0, "(got bf16 x i4)"},
      {MB_DTYPE_BF16, MB_DTYPE_NONE, MB_DTYPE_I8, MB_PARAM_QUANTIZE_INPUTS,
       "quantize-inputs takes it with dtype_q f8e4m3 or f8e5m2, not i8"},
  };
  for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
    mb_op_params_t p = gemm_params(32, 64, 48);
    p.dtype = k_bad[i].dtype;
    p.dtype_b = k_bad[i].dtype_b;
    p.dtype_q = k_bad[i].dtype_q;
    if (k_bad[i].dtype_b == MB_DTYPE_I4) p.scale_b.mode = MB_SCALE_GROUP;
    p.scale_b.block[1] = 32;
    p.flags = k_bad[i].flags | MB_PARAM_FAST_ACCUM;
    assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_ERR_INVALID_ARG);
    assert_contains(mb_error_last(), k_bad[i].message);
  }
  mb_op_params_t a = MB_OP_PARAMS_INIT;
  a.ndim = 2;
  a.shape[0] = a.shape[1] = 16;
  a.flags = MB_PARAM_FAST_ACCUM;
  assert_int_equal(mb_op_resolve(&mb__op_add, &a), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "\"fast_accum\" does not apply");
  /* Every fp8 pair, scaled or not, and quantize-inputs to either fp8. */
  static const mb_dtype_t k_fp8[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2};
  for (size_t i = 0; i < 4; i++) {
    mb_op_params_t p = gemm_params(32, 64, 48);
    p.dtype = k_fp8[i / 2];
    p.dtype_b = k_fp8[i % 2];
    if (i % 2) p.scale_a.mode = MB_SCALE_ROW, p.scale_b.mode = MB_SCALE_COL;
    p.flags = MB_PARAM_FAST_ACCUM;
    assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
    p = gemm_params(32, 64, 48);
    p.dtype = MB_DTYPE_BF16;
    p.dtype_q = k_fp8[i % 2];
    p.flags = MB_PARAM_QUANTIZE_INPUTS | MB_PARAM_FAST_ACCUM;
    assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  }
}

static void test_add_reference_known(void **state) {
  (void)state;
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = 1;
  p.shape[1] = 3;
  assert_int_equal(mb_op_resolve(&mb__op_add, &p), MB_OK);
  const float x[] = {1, -2, 0.5f}, y[] = {2, 2, -4};
  const void *host[] = {x, y};
  void *ref;
  assert_int_equal(mb__op_add.ref_prepare(&p, host, &ref), MB_OK);
  double v, s;
  mb__op_add.ref_element(ref, 0, 2, &v, &s);
  assert_true(v == -3.5 && s == 4.5);
  mb__op_add.ref_release(ref);
}

/* A correct f32 GEMM in double, then rounded: the output a perfect kernel
 * would produce. */
static void exact_gemm(const float *a, const float *b, float *d, int m, int k,
                       int n) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double acc = 0;
      for (int p = 0; p < k; p++) acc += (double)a[i * k + p] * b[p * n + j];
      d[i * n + j] = (float)acc;
    }
}

typedef struct gemm_case {
  int m, k, n;
  float *a, *b, *d;
  mb_op_params_t p;
} gemm_case_t;

static void case_init(gemm_case_t *c, int m, int k, int n) {
  c->m = m, c->k = k, c->n = n;
  c->a = malloc(sizeof(float) * m * k);
  c->b = malloc(sizeof(float) * k * n);
  c->d = malloc(sizeof(float) * m * n);
  mb_fill_t f = MB_FILL_INIT;
  f.seed = 1;
  mb_fill_host(c->a, MB_DTYPE_F32, (size_t)m * k, &f);
  f.seed = 2;
  mb_fill_host(c->b, MB_DTYPE_F32, (size_t)k * n, &f);
  exact_gemm(c->a, c->b, c->d, m, k, n);
  c->p = gemm_params(m, k, n);
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &c->p), MB_OK);
}

static void case_free(gemm_case_t *c) {
  free(c->a);
  free(c->b);
  free(c->d);
}

static const float k_one = 1.0f;

static mb_correctness_t check(gemm_case_t *c) {
  const void *host[] = {c->a, c->b, &k_one, &k_one, c->d};
  const void *outs[] = {c->d};
  mb_correctness_t r = MB_CORRECTNESS_INIT;
  assert_int_equal(mb__verify(&mb__op_gemm, &c->p, host, outs, 7, &r), MB_OK);
  return r;
}

static void test_verify_full_and_sampled(void **state) {
  (void)state;
  gemm_case_t small, big;
  case_init(&small, 33, 47, 29); /* checked in full */
  mb_correctness_t r = check(&small);
  assert_true(r.pass);
  assert_int_equal(r.elements_checked, 33 * 29);
  assert_true(r.max_err_ratio <= 1.0);
  small.d[5 * 29 + 7] += 1e-3f; /* one wrong element */
  r = check(&small);
  assert_false(r.pass);
  case_free(&small);

  case_init(&big, 512, 512, 512); /* sampled: 512^3 > MB__VERIFY_FULL_WORK */
  r = check(&big);
  assert_true(r.pass);
  assert_int_equal(r.elements_checked, MB__VERIFY_SAMPLES + 2);
  assert_int_equal(r.elements_total, 512 * 512);
  assert_true(r.sqnr_db > 100);
  /* The last element alone: the corners are always checked. */
  big.d[512 * 512 - 1] *= 1.01f;
  r = check(&big);
  assert_false(r.pass);
  big.d[512 * 512 - 1] /= 1.01f;
  /* One wrong row of 512 elements: ~16 of the 8192 samples land there. */
  for (int j = 0; j < 512; j++) big.d[300 * 512 + j] *= 1.001f;
  r = check(&big);
  assert_false(r.pass);
  case_free(&big);
}

static void test_verify_nan_output_fails(void **state) {
  (void)state;
  gemm_case_t c;
  case_init(&c, 8, 8, 8);
  c.d[3] = NAN;
  mb_correctness_t r = check(&c);
  assert_false(r.pass);
  case_free(&c);
}

/* Not a timed assertion: prints how long the sampled check of a 4096^3
 * GEMM takes (docs/results/cpu.md quotes it). */
static void test_verify_4096_cost(void **state) {
  (void)state;
  const size_t n = 4096;
  float *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b),
        *d = calloc(n * n, sizeof *d);
  mb_fill_t f = MB_FILL_INIT;
  mb_fill_host(a, MB_DTYPE_F32, n * n, &f);
  mb_fill_host(b, MB_DTYPE_F32, n * n, &f);
  mb_op_params_t p = gemm_params(4096, 4096, 4096);
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  const void *host[] = {a, b, &k_one, &k_one, d};
  const void *outs[] = {d};
  mb_correctness_t r = MB_CORRECTNESS_INIT;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  assert_int_equal(mb__verify(&mb__op_gemm, &p, host, outs, 7, &r), MB_OK);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  assert_int_equal(r.elements_checked, MB__VERIFY_SAMPLES + 2);
  assert_false(r.pass); /* d is all zeros */
  printf("# sampled check of a 4096^3 gemm: %llu elements in %.3f s\n",
         (unsigned long long)r.elements_checked,
         (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
  free(a);
  free(b);
  free(d);
}

static void test_tolerance_from_formats(void **state) {
  (void)state;
  mb_op_params_t p = gemm_params(16, 1024, 16);
  p.dtype = MB_DTYPE_BF16;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  /* 0.5 ulp of bf16, plus 2 sqrt(1024) u(f32) + 8 u(f32) of the scale */
  mb__tolerance_t t = mb__op_gemm.tolerance(&p, 0);
  assert_true(t.ulps == 0.5);
  assert_true(fabs(t.rel - (64 + 8) * 0x1p-24) < 1e-15);
}

/* x truncated toward zero to a multiple of 2^(e - 13), 2^e > |x|'s scale:
 * what an accumulator with 13 fraction bits keeps of it. */
static double trunc13(double x, int e) {
  return trunc(ldexp(x, 13 - e)) * ldexp(1.0, e - 13);
}

/* One dot product as a Hopper fp8 MMA chain with fast accumulation: steps
 * of 32 products, each step aligning the products and the running sum to
 * the largest of them and keeping 13 fraction bits, no promotion to f32 in
 * between (the model gemm_tolerance's comment describes). */
static double fast_accum_dot(const float *a, const float *b, int k) {
  double acc = 0;
  for (int s = 0; s < k; s += 32) {
    double terms[33], big = fabs(acc);
    int n = 0, e;
    for (int i = s; i < s + 32 && i < k; i++) {
      terms[n] = (double)a[i] * b[i];
      big = fmax(big, fabs(terms[n++]));
    }
    terms[n++] = acc;
    if (big == 0) continue;
    frexp(big, &e);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += trunc13(terms[i], e - 1);
    frexp(sum, &e);
    acc = sum == 0 ? 0 : trunc13(sum, e - 1);
  }
  return acc;
}

/* An fp8 GEMM accumulated that way passes the check with fast_accum and
 * fails it without (where the tolerance is f32 accumulation's); a result
 * off by a wrong scale fails even with it. */
static void test_fast_accum_tolerance(void **state) {
  (void)state;
  enum { M = 4, K = 4096, N = 4 };
  uint8_t *a = malloc(M * K), *bt = malloc(N * K), *b = malloc(K * N);
  float *fa = malloc(sizeof(float) * M * K);
  float *fb = malloc(sizeof(float) * K * N);
  float d[M * N];
  mb_fill_t f = MB_FILL_INIT;
  f.seed = 3;
  mb_fill_host(a, MB_DTYPE_F8E4M3, M * K, &f);
  f.seed = 4;
  mb_fill_host(bt, MB_DTYPE_F8E4M3, N * K, &f); /* B^T: columns contiguous */
  for (int kk = 0; kk < K; kk++)
    for (int j = 0; j < N; j++) b[kk * N + j] = bt[j * K + kk];
  mb_convert(fa, MB_DTYPE_F32, a, MB_DTYPE_F8E4M3, M * K, 0);
  mb_convert(fb, MB_DTYPE_F32, bt, MB_DTYPE_F8E4M3, N * K, 0);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      d[i * N + j] = (float)fast_accum_dot(fa + i * K, fb + j * K, K);
  mb_op_params_t p = gemm_params(M, K, N);
  p.dtype = MB_DTYPE_F8E4M3;
  p.dtype_out = MB_DTYPE_F32; /* bf16's rounding would hide the sums' */
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  const double plain = mb__op_gemm.tolerance(&p, 0).rel;
  const void *host[] = {a, b, &k_one, &k_one, d};
  const void *outs[] = {d};
  mb_correctness_t f32 = MB_CORRECTNESS_INIT, fast = MB_CORRECTNESS_INIT,
                   wrong = MB_CORRECTNESS_INIT;
  assert_int_equal(mb__verify(&mb__op_gemm, &p, host, outs, 7, &f32), MB_OK);
  assert_false(f32.pass);
  p.flags = MB_PARAM_FAST_ACCUM;
  assert_int_equal(mb_op_resolve(&mb__op_gemm, &p), MB_OK);
  /* sqrt(4096) x 2^-14 of the scale on top of f32's, in place of the
   * promoted accumulator's 2^-11 sqrt(128 / 4096) */
  const double window = 0x1p-11 * sqrt(128.0 / K);
  assert_true(fabs(mb__op_gemm.tolerance(&p, 0).rel - (plain - window) -
                   0x1p-8) < 1e-15);
  assert_int_equal(mb__verify(&mb__op_gemm, &p, host, outs, 7, &fast), MB_OK);
  assert_true(fast.pass);
  printf(
      "# fast-accumulation model: max error %.3f of the tolerance (%.0f "
      "of f32's)\n",
      fast.max_err_ratio, f32.max_err_ratio);
  for (int i = 0; i < M * N; i++) d[i] *= 1.5f;
  assert_int_equal(mb__verify(&mb__op_gemm, &p, host, outs, 7, &wrong), MB_OK);
  assert_false(wrong.pass);
  free(a);
  free(b);
  free(bt);
  free(fa);
  free(fb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_find),
      cmocka_unit_test(test_resolve),
      cmocka_unit_test(test_flop_bytes),
      cmocka_unit_test(test_gemm_reference_known),
      cmocka_unit_test(test_gemm_trans_reference),
      cmocka_unit_test(test_gemm_reference_paths),
      cmocka_unit_test(test_gemm_trans_rejected),
      cmocka_unit_test(test_gemm_fast_accum_rejected),
      cmocka_unit_test(test_add_reference_known),
      cmocka_unit_test(test_verify_full_and_sampled),
      cmocka_unit_test(test_verify_nan_output_fails),
      cmocka_unit_test(test_verify_4096_cost),
      cmocka_unit_test(test_tolerance_from_formats),
      cmocka_unit_test(test_fast_accum_tolerance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
