/* torchao's sparsity recipes (issue 23, item 10): the 2:4 and 64x64
 * block patterns (which weights a pruned W keeps, their compressed forms),
 * the sparse GEMMs on the CPU backend against the dense product of the
 * pruned weights, planted kernels that misread the indices and fail, the
 * recipes' graphs and runs, and torchao's sparsity_config_recipe_names
 * paired with the quantization recipes as its runner pairs them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/graph.h"
#include "ops/recipe.h"
#include "ops/sparse.h"
#include "test_util.h"

static mb_context_t *g_ctx;

/* ---- patterns ------------------------------------------------------------ */

static void test_pattern_24(void **state) {
  (void)state;
  /* W[8,2] (rows r0..r7): column 0 keeps r1, r2 (|-3|, |4|) then r4, r6
   * (|-5|, |-6|); column 1 keeps r1 and, of the tied 7s, the lower r2, then
   * r6, r7. */
  const float w[16] = {1, 2, -3, 9, 4, 7, 0, 7, -5, 1, 1, 1, -6, 3, 0, 3};
  float vals[8], pruned[16];
  uint8_t meta[2] = {0xFF, 0xFF};
  mb__sparse24_compress(w, 8, 2, vals, meta);
  const float want_vals[8] = {-3, 9, 4, 7, -5, 3, -6, 3};
  for (int i = 0; i < 8; i++) assert_true(vals[i] == want_vals[i]);
  /* nibble idx0 | idx1 << 2: (1,2) = 0x9, (0,2) = 0x8, (2,3) = 0xE; the
   * odd group in the high nibble. */
  assert_int_equal(meta[0], 0x9 | 0x8 << 4);
  assert_int_equal(meta[1], 0x9 | 0xE << 4);
  assert_int_equal(mb__sparse24_nibble(meta, 2, 1, 1), 0xE);
  memcpy(pruned, w, sizeof w);
  assert_int_equal(mb__sparse_prune(pruned, 8, 2, MB__SPARSE_24), MB_OK);
  const float want[16] = {0, 0, -3, 9, 4, 7, 0, 0, -5, 0, 0, 0, -6, 3, 0, 3};
  for (int i = 0; i < 16; i++) assert_true(pruned[i] == want[i]);
  /* Compressing the pruned W gives the same values and indices. */
  float vals2[8];
  uint8_t meta2[2];
  mb__sparse24_compress(pruned, 8, 2, vals2, meta2);
  assert_memory_equal(vals, vals2, sizeof vals);
  assert_memory_equal(meta, meta2, sizeof meta);
}

static void test_pattern_block(void **state) {
  (void)state;
  /* W[256, 128]: 4 k-blocks by 2 strips; strip 0's block norms 1, 4, 2, 3
   * keep blocks 1 and 3; strip 1's are all equal, so the lower two, 0, 1. */
  enum { K = 256, N = 128, BS = MB__SPARSE_BS };
  const float level[2][4] = {{1, 4, 2, 3}, {1, 1, 1, 1}};
  float *w = malloc(K * N * sizeof *w), *vals = malloc(K * N / 2 * sizeof *w);
  int32_t idx[4];
  for (int r = 0; r < K; r++)
    for (int c = 0; c < N; c++) w[r * N + c] = level[c / BS][r / BS];
  mb__sparse_block_compress(w, K, N, vals, idx);
  assert_int_equal(mb__sparse_block_keep(K), 2);
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 3);
  assert_int_equal(idx[2], 0);
  assert_int_equal(idx[3], 1);
  assert_true(vals[0] == 4 && vals[BS * BS] == 3 && vals[2 * BS * BS] == 1);
  assert_int_equal(mb__sparse_prune(w, K, N, MB__SPARSE_BLOCK), MB_OK);
  assert_true(w[0] == 0 && w[BS * N] == 4 && w[2 * BS * N] == 0 &&
              w[3 * BS * N] == 3);
  assert_true(w[BS] == 1 && w[BS * N + BS] == 1 && w[2 * BS * N + BS] == 0);
  free(w);
  free(vals);
  assert_int_equal(mb__sparse_check_shape("t", MB__SPARSE_BLOCK, 192, 64),
                   MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "K = 192 must be a multiple of 128");
  assert_int_equal(mb__sparse_check_shape("t", MB__SPARSE_24, 12, 64),
                   MB_ERR_INVALID_ARG);
}

/* ---- the ops on the CPU backend ----------------------------------------- */

static mb_op_params_t mkn(int64_t m, int64_t k, int64_t n, mb_dtype_t dt) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = m, p.shape[1] = k, p.shape[2] = n;
  p.dtype = dt;
  return p;
}

static void test_cpu_kernels(void **state) {
  (void)state;
  const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
  for (size_t i = 0; i < 3; i++) {
    mb_op_params_t p = mkn(37, 136, 40, dts[i]); /* rows not a multiple */
    assert_true(test_impl_passes(g_ctx, "gemm_sparse24", &p, "c"));
    p = mkn(19, 384, 192, dts[i]);
    assert_true(test_impl_passes(g_ctx, "gemm_block_sparse", &p, "c"));
  }
  /* The op counts the products it does: half the dense GEMM's. */
  mb_op_params_t p = mkn(64, 256, 128, MB_DTYPE_BF16);
  assert_int_equal(mb_op_resolve(mb_op_find("gemm_sparse24"), &p), MB_OK);
  assert_true(mb_op_flop(mb_op_find("gemm_sparse24"), &p) == 64.0 * 256 * 128);
  /* |A| + |values| + |metadata| + |D| */
  assert_true(mb_op_bytes(mb_op_find("gemm_sparse24"), &p) ==
              2.0 * (64 * 256 + 128 * 128 + 64 * 128) + 32 * 128);
}

/* ---- planted bugs ---------------------------------------------------------
 */

enum bug { RIGHT, FIRST_TWO, SWAPPED, BLOCK_ORDER };
static const enum bug k_bugs[] = {RIGHT, FIRST_TWO, SWAPPED, BLOCK_ORDER};

/* 2:4 in f32: RIGHT reads the indices; FIRST_TWO takes positions 0 and 1
 * of every group (the metadata ignored); SWAPPED pairs the first value with
 * the second index. */
static mb_status_t sp24(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], k = a->params->shape[1],
                n = a->params->shape[2];
  const float *x = mb_tensor_data(a->inputs[0]),
              *v = mb_tensor_data(a->inputs[1]);
  const uint8_t *meta = mb_tensor_data(a->inputs[2]);
  float *d = mb_tensor_data(a->outputs[0]);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int64_t g = 0; g < k / 4; g++) {
        unsigned nib = mb__sparse24_nibble(meta, n, g, j);
        unsigned i0 = nib & 3u, i1 = nib >> 2;
        if (bug == FIRST_TWO) i0 = 0, i1 = 1;
        if (bug == SWAPPED) i0 = nib >> 2, i1 = nib & 3u;
        acc += x[i * k + 4 * g + i0] * v[2 * g * n + j] +
               x[i * k + 4 * g + i1] * v[(2 * g + 1) * n + j];
      }
      d[i * n + j] = acc;
    }
  return MB_OK;
}

/* Block-sparse in f32: BLOCK_ORDER multiplies strip j's t-th kept block by
 * A's t-th k-block instead of the one its index names. */
static mb_status_t spblock(void *user, const mb_kernel_args_t *a) {
  const enum bug bug = *(const enum bug *)user;
  const int64_t m = a->params->shape[0], k = a->params->shape[1],
                n = a->params->shape[2], bs = MB__SPARSE_BS,
                keep = mb__sparse_block_keep(k);
  const float *x = mb_tensor_data(a->inputs[0]),
              *v = mb_tensor_data(a->inputs[1]);
  const int32_t *idx = mb_tensor_data(a->inputs[2]);
  float *d = mb_tensor_data(a->outputs[0]);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int64_t t = 0; t < keep; t++) {
        const int64_t kb = bug == BLOCK_ORDER ? t : idx[j / bs * keep + t];
        for (int64_t q = 0; q < bs; q++)
          acc += x[i * k + kb * bs + q] *
                 v[((j / bs * keep + t) * bs + q) * bs + j % bs];
      }
      d[i * n + j] = acc;
    }
  return MB_OK;
}

static void reg(const char *op, const char *name, mb_kernel_fn fn,
                enum bug bug) {
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = op;
  d.name = name;
  d.dtype = MB_DTYPE_F32;
  d.dtype_out = MB_DTYPE_F32;
  d.run = fn;
  d.user = (void *)&k_bugs[bug];
  assert_int_equal(mb_kernel_register(g_ctx, &d), MB_OK);
}

static void test_planted(void **state) {
  (void)state;
  mb_op_params_t p = mkn(24, 64, 32, MB_DTYPE_F32);
  assert_true(test_impl_passes(g_ctx, "gemm_sparse24", &p, "right"));
  assert_false(test_impl_passes(g_ctx, "gemm_sparse24", &p, "first_two"));
  assert_false(test_impl_passes(g_ctx, "gemm_sparse24", &p, "swapped"));
  p = mkn(24, 512, 128, MB_DTYPE_F32);
  assert_true(test_impl_passes(g_ctx, "gemm_block_sparse", &p, "right"));
  assert_false(test_impl_passes(g_ctx, "gemm_block_sparse", &p, "order"));
}

/* ---- recipes --------------------------------------------------------------
 */

typedef struct sparse_want {
  mb_recipe_t r;
  const char *ops[4]; /* the steps' ops, in order */
} sparse_want_t;

static const sparse_want_t k_want[] = {
    {MB_RECIPE_SEMI_SPARSE, {"compress_2to4", "gemm_sparse24"}},
    {MB_RECIPE_BLOCK_SPARSE, {"compress_block", "gemm_block_sparse"}},
    {MB_RECIPE_INT8DQ_SEMI_SPARSE,
     {"prune_2to4", "quantize", "quantize", "gemm"}},
    {MB_RECIPE_FLOAT8DQ_TENSOR_SEMI_SPARSE,
     {"prune_2to4", "quantize", "quantize", "gemm"}},
    {MB_RECIPE_FLOAT8DQ_ROW_SEMI_SPARSE,
     {"prune_2to4", "quantize", "quantize", "gemm"}},
};

static void test_recipe_graphs(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_want / sizeof *k_want; i++) {
    mb_op_params_t p = mkn(64, 256, 128, MB_DTYPE_BF16);
    p.recipe = (uint32_t)k_want[i].r;
    const mb_op_t *op = mb_op_find("linear");
    assert_int_equal(mb_op_resolve(op, &p), MB_OK);
    mb__graph_t *g = malloc(sizeof *g);
    op->compose(&p, g);
    assert_int_equal(g->status, MB_OK);
    for (uint32_t s = 0; s < 4; s++) {
      if (!k_want[i].ops[s]) {
        assert_int_equal(g->num_steps, s);
        break;
      }
      assert_string_equal(g->steps[s].op->name, k_want[i].ops[s]);
    }
    /* The weights are pruned once, untimed, on the host. */
    assert_int_equal(g->steps[0].phase, MB_PHASE_SETUP);
    assert_non_null(g->steps[0].host);
    /* A quantized recipe quantizes the pruned weights. */
    if (g->num_steps == 4)
      assert_int_equal(mb__graph_arg(g, 1, 0), mb__graph_arg(g, 0, 1));
    free(g);
    /* The model's FLOP stay the dense baseline's, so TFLOP/s compare. */
    assert_true(mb_op_flop(op, &p) == 2.0 * 64 * 256 * 128);
    assert_false(mb_recipe_trains(k_want[i].r));
  }
  mb_op_params_t p = mkn(64, 256, 128, MB_DTYPE_BF16);
  p.recipe = MB_RECIPE_SEMI_SPARSE;
  assert_int_equal(mb_op_resolve(mb_op_find("ln_linear"), &p),
                   MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "runs on the linear model only");
  p = mkn(64, 192, 128, MB_DTYPE_BF16);
  p.recipe = MB_RECIPE_BLOCK_SPARSE;
  assert_int_equal(mb_op_resolve(mb_op_find("linear"), &p), MB_ERR_INVALID_ARG);
}

/* Every sparse recipe runs on the CPU, each step checked, and its output
 * against the dense layer of the pruned weights. */
static void test_recipes_run(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_want / sizeof *k_want; i++) {
    mb_op_params_t p = mkn(32, 256, 128, MB_DTYPE_BF16);
    p.recipe = (uint32_t)k_want[i].r;
    mb_result_t *r = test_run_cpu(g_ctx, "linear", &p, 1);
    assert_true(test_result_passes(r, mb_recipe_name(k_want[i].r)));
    mb_accuracy_t acc = MB_ACCURACY_INIT;
    assert_int_equal(mb_result_accuracy(r, &acc), MB_OK);
    /* Against the unpruned layer a 2:4 weight would sit near 9 dB; the
     * pruned reference puts the recipe at its dense twin's level. */
    assert_true(acc.sqnr_db > mb_recipe_min_sqnr_db(k_want[i].r));
    mb_result_destroy(r);
  }
}

/* ---- torchao's sparsity_config_recipe_names ----------------------------- */

static mb_plan_t *parse(const char *text) {
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(text, strlen(text), "t.yml", NULL, &plan) != MB_OK)
    fail_msg("%s", mb_error_last());
  return plan;
}

static void expect_names(const mb_plan_t *plan, const char *const *want,
                         size_t n) {
  assert_int_equal(mb_plan_count(plan), n);
  for (size_t i = 0; i < n; i++) {
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    assert_int_equal(mb_plan_entry(plan, i, &e), MB_OK);
    assert_string_equal(e.name, want[i]);
  }
}

#define MODEL                                                        \
  "model_params: [{name: s, matrix_shapes: [{name: custom, shapes: " \
  "[[32, 256, 128]]}], device: cpu}]\n"

static void test_torchao_pairs(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "quantization_config_recipe_names: [baseline, int8wo, int8dq, "
      "float8dq-row, float8-block]\n"
      "sparsity_config_recipe_names: [null, semi-sparse, block]\n" MODEL);
  static const char *const want[] = {"s/32x256x128/baseline",
                                     "s/32x256x128/int8wo",
                                     "s/32x256x128/int8dq",
                                     "s/32x256x128/float8dq-row",
                                     "s/32x256x128/float8-block",
                                     "s/32x256x128/baseline+semi-sparse",
                                     "s/32x256x128/int8dq+semi-sparse",
                                     "s/32x256x128/float8dq-row+semi-sparse",
                                     "s/32x256x128/baseline+block"};
  expect_names(plan, want, sizeof want / sizeof *want);
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  assert_int_equal(mb_plan_entry(plan, 6, &e), MB_OK);
  assert_string_equal(e.recipe, "int8dq-semi-sparse");
  assert_int_equal(mb_plan_entry(plan, 8, &e), MB_OK);
  assert_string_equal(e.recipe, "block-sparse");
  mb_plan_destroy(plan);
  /* 2:4 pairs with baseline only when the file lists it (torchao's rule);
   * block always does. */
  plan = parse(
      "quantization_config_recipe_names: [int8wo]\n"
      "sparsity_config_recipe_names: ['2:4', block]\n" MODEL);
  static const char *const want2[] = {"s/32x256x128/baseline",
                                      "s/32x256x128/int8wo",
                                      "s/32x256x128/baseline+block"};
  expect_names(plan, want2, 3);
  mb_plan_destroy(plan);
  /* torchao raises on "None" as a string and on a name it cannot pair. */
  const char *bad[] = {
      "sparsity_config_recipe_names: ['None']\n" MODEL,
      "sparsity_config_recipe_names: [unstructured]\n" MODEL,
      "sparsity_config_recipe_names: block\n" MODEL,
      /* our pair's name is not a torchao quantization */
      "quantization_config_recipe_names: [semi-sparse]\n" MODEL};
  for (size_t i = 0; i < 4; i++) {
    plan = NULL;
    assert_int_equal(
        mb_plan_parse(bad[i], strlen(bad[i]), "t.yml", NULL, &plan),
        MB_ERR_PARSE);
    assert_contains(mb_error_last(), "sparsity_config_recipe_names");
  }
}

/* The shared GPU kernels (backends/gpu/gpu_sparse.cu) on the emulated GPU
 * (32- and 64-wide warps): both ops in each dtype and the recipes' layers,
 * every output checked. */
static void test_gpuemu(void **state) {
  (void)state;
  static const char *const emus[] = {"gpuemu", "gpuemu64"};
  for (size_t e = 0; e < 2; e++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", test_env_dir("MB_TEST_FIXTURE_DIR"),
             emus[e]);
    mb_context_t *ctx = test_context(dir);
    const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16};
    for (size_t i = 0; i < 3; i++) {
      mb_op_params_t p = mkn(9, 136, 40, dts[i]);
      mb_result_t *r = test_run_on(ctx, emus[e], "gemm_sparse24", &p, 1);
      assert_true(test_result_passes(r, "gemm_sparse24/native"));
      mb_result_destroy(r);
      p = mkn(9, 256, 128, dts[i]);
      r = test_run_on(ctx, emus[e], "gemm_block_sparse", &p, 1);
      assert_true(test_result_passes(r, "gemm_block_sparse/native"));
      mb_result_destroy(r);
    }
    for (size_t i = 0; i < 2; i++) {
      mb_op_params_t p = mkn(8, 256, 128, MB_DTYPE_BF16);
      p.recipe = (uint32_t)k_want[i].r;
      mb_result_t *r = test_run_on(ctx, emus[e], "linear", &p, 1);
      assert_true(test_result_passes(r, mb_recipe_name(k_want[i].r)));
      mb_result_destroy(r);
    }
    mb_context_destroy(ctx);
  }
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  reg("gemm_sparse24", "right", sp24, RIGHT);
  reg("gemm_sparse24", "first_two", sp24, FIRST_TWO);
  reg("gemm_sparse24", "swapped", sp24, SWAPPED);
  reg("gemm_block_sparse", "right", spblock, RIGHT);
  reg("gemm_block_sparse", "order", spblock, BLOCK_ORDER);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pattern_24),
      cmocka_unit_test(test_pattern_block),
      cmocka_unit_test(test_cpu_kernels),
      cmocka_unit_test(test_planted),
      cmocka_unit_test(test_recipe_graphs),
      cmocka_unit_test(test_recipes_run),
      cmocka_unit_test(test_torchao_pairs),
      cmocka_unit_test(test_gpuemu),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
