/* The JAX suite's collective benchmarks as our collective ops (issue 24
 * item 4), both layouts, on upstream's own files (tests/configs/jax/
 * collectives/ from Ironwood/configs/collectives at 947f49d, and
 * tests/configs/jax/current/ from configs/7x at 6a306a8) and small ones
 * written here: the op, N (the exchange's element count as nccl-tests
 * counts it, from upstream's per-device array and mesh), the dtype, the
 * reduction, the names, and what stays skipped or is refused. */
#include "test_plan_util.h"

/* Entry i runs `op` on [n] of `dtype`, not skipped, named `name`. */
static void expect_coll(const mb_plan_t *plan, size_t i, const char *name,
                        const char *op, int64_t n, mb_dtype_t dtype) {
  mb_plan_entry_t e = test_plan_entry(plan, i);
  if (name) assert_string_equal(e.name, name);
  assert_string_equal(e.op, op);
  assert_string_equal(e.skip_reason, "");
  assert_int_equal(e.params.ndim, 1);
  assert_int_equal(e.params.shape[0], n);
  assert_int_equal(e.params.dtype, dtype);
}

/* ---- legacy layout ------------------------------------------------------ */

/* psum: (matrix_dim, 8, 128) on every device, all-reduced: N = dim x 1024;
 * matrix_dim 8 .. 16384 twice (two meshes), 5 fixed runs. */
static void test_legacy_psum(void **state) {
  (void)state;
  mb_plan_t *plan =
      test_plan_load("jax/collectives/all_reduce_tpu7x_2x2x1.yaml");
  assert_int_equal(mb_plan_count(plan), 24);
  for (size_t i = 0; i < 24; i++) {
    mb_plan_entry_t e = test_plan_entry(plan, i);
    expect_coll(plan, i, NULL, "all_reduce", (INT64_C(8) << (i % 12)) * 1024,
                MB_DTYPE_F32);
    assert_int_equal(e.params.reduce_op, MB_REDUCE_SUM);
    assert_int_equal(e.spec.samples, 5);
    assert_int_equal(e.spec.criterion, MB_CRITERION_FIXED);
  }
  expect_coll(plan, 0, "psum/8x8x128/float32/mesh=2x2x2/shard=2x2x1",
              "all_reduce", 8192, MB_DTYPE_F32);
  /* the second mesh's row: its own name */
  expect_coll(plan, 12, "psum/8x8x128/float32/mesh=2x2x2/shard=2x2x2",
              "all_reduce", 8192, MB_DTYPE_F32);
  mb_plan_destroy(plan);
}

/* all_gather: each device's (dim, 8, 128) gathered over the group: the
 * mesh axes whose strategy entry is above 1 (16x4x2 by 1x4x1: 4 devices;
 * 4x4x8 by 1x1x4: the third axis, 8 devices). */
static void test_legacy_all_gather(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/collectives/all_gather_1d.yaml");
  assert_int_equal(mb_plan_count(plan), 26); /* 2 .. 8192, twice */
  for (size_t i = 0; i < 13; i++) {
    const int64_t dim = INT64_C(2) << i;
    expect_coll(plan, i, NULL, "all_gather", 4 * dim * 1024, MB_DTYPE_F32);
    expect_coll(plan, 13 + i, NULL, "all_gather", 8 * dim * 1024, MB_DTYPE_F32);
  }
  expect_coll(plan, 13, "all_gather/2x8x128/float32/mesh=4x4x8/shard=1x1x4",
              "all_gather", 16384, MB_DTYPE_F32);
  mb_plan_destroy(plan);
  /* six meshes and warmup_tries on the benchmark (run_benchmark.py does
   * not read it there: recorded) */
  plan = test_plan_load("jax/collectives/all_gather_demo.yaml");
  assert_int_equal(mb_plan_count(plan), 6 * 9);
  for (size_t i = 0; i < 6 * 9; i++)
    assert_string_equal(test_plan_entry(plan, i).skip_reason, "");
  /* mesh 64x2 by 64x1: 64 devices */
  expect_coll(plan, 4 * 9, "all_gather/2x8x128/float32/mesh=64x2/shard=64x1",
              "all_gather", 64 * 2 * 1024, MB_DTYPE_F32);
  mb_plan_destroy(plan);
}

/* psum_scatter: (prod(sharding_strategy), dim, 256) on every device,
 * reduce-scattered: N is that input. */
static void test_legacy_psum_scatter(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/collectives/reduce_scatter_1d.yaml");
  assert_int_equal(mb_plan_count(plan), 26);
  for (size_t i = 0; i < 26; i++) {
    const int64_t dim = INT64_C(2) << (i % 13);
    expect_coll(plan, i, NULL, "reduce_scatter", 4 * dim * 256, MB_DTYPE_F32);
    assert_int_equal(test_plan_entry(plan, i).params.reduce_op, MB_REDUCE_SUM);
  }
  expect_coll(plan, 0, "psum_scatter/4x2x256/float32/mesh=16x4x2/shard=1x4x1",
              "reduce_scatter", 2048, MB_DTYPE_F32);
  mb_plan_destroy(plan);
}

/* all_to_all: N = dim x 1024; the benchmark's topology key (the TPU
 * slice's, for upstream's theoretical peak) is accepted and recorded. */
static void test_legacy_all_to_all(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/collectives/all_to_all_v6e_4x4.yaml");
  assert_int_equal(mb_plan_count(plan), 12); /* 8 .. 16384 */
  for (size_t i = 0; i < 12; i++)
    expect_coll(plan, i, NULL, "all_to_all", (INT64_C(8) << i) * 1024,
                MB_DTYPE_F32);
  mb_plan_destroy(plan);
  /* two meshes of the same matrix_dim: two names */
  plan = test_plan_load("jax/collectives/all_reduce_2d.yaml");
  assert_int_equal(mb_plan_count(plan), 26);
  assert_string_equal(test_plan_entry(plan, 13).name,
                      "psum/2x8x128/float32/mesh=4x32/shard=1x32");
  mb_plan_destroy(plan);
}

/* send_recv (one pair at a time) is not our ring: one skipped entry. */
static void test_legacy_send_recv_skipped(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_load("jax/collectives/send_recv.yaml");
  assert_int_equal(mb_plan_count(plan), 1);
  mb_plan_entry_t e = test_plan_entry(plan, 0);
  assert_string_equal(e.op, "sendrecv");
  assert_contains(e.skip_reason, "benchmark_name \"send_recv\"");
  assert_contains(e.skip_reason, "ring shift");
  mb_plan_destroy(plan);
}

/* ppermute's ring i -> i + 1 of each device's (dim, dim) matrix:
 * sendrecv of dim^2; a DCN ring (dcn_size > 1) is skipped; a dtype our
 * collectives do not take is skipped with the op's words. */
static void test_legacy_ppermute_and_dtypes(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_parse(
      "benchmarks:\n- benchmark_name: ppermute\n"
      "  benchmark_sweep_params:\n"
      "  - {matrix_dim: 64, dtype: bfloat16, ici_size: 4, dcn_size_list: [1, "
      "2]}\n"
      "- benchmark_name: psum\n"
      "  benchmark_params:\n"
      "  - {matrix_dim: 4, mesh_shape: 2x2, sharding_strategy: 2x2}\n"
      "  - {matrix_dim: 4, mesh_shape: 2x2, sharding_strategy: 2x2, dtype: "
      "float8}\n");
  assert_int_equal(mb_plan_count(plan), 4);
  expect_coll(plan, 0, "ppermute/64x64/bfloat16", "sendrecv", 64 * 64,
              MB_DTYPE_BF16);
  assert_contains(test_plan_entry(plan, 1).skip_reason, "dcn_size 2 > 1");
  /* psum's dtype defaults to bfloat16 (its function's default; the name
   * shows the dtype as written) */
  expect_coll(plan, 2, "psum/4x8x128/mesh=2x2/shard=2x2", "all_reduce", 4096,
              MB_DTYPE_BF16);
  assert_contains(test_plan_entry(plan, 3).skip_reason,
                  "the JAX suite runs this; all_reduce");
  mb_plan_destroy(plan);
}

static void test_legacy_errors(void **state) {
  (void)state;
  static const char k_head[] =
      "benchmarks:\n- benchmark_name: all_gather\n  benchmark_params:\n";
  static const struct {
    const char *params, *a, *b;
  } k_cases[] = {
      {"  - {matrix_dim: 4, dtype: float32, sharding_strategy: 1x4}\n",
       "all_gather needs mesh_shape", NULL},
      {"  - {matrix_dim: 4, dtype: float32, mesh_shape: 4x4}\n",
       "all_gather needs sharding_strategy", NULL},
      {"  - {matrix_dim: 4, dtype: float32, mesh_shape: 4by4, "
       "sharding_strategy: 1x4}\n",
       "benchmark_params[0].mesh_shape", "\"4by4\" is not axis sizes"},
      {"  - {matrix_dim: 4, dtype: float32, mesh_shape: 4x4x2, "
       "sharding_strategy: 1x4}\n",
       "sharding_strategy \"1x4\" has fewer axes than mesh_shape \"4x4x2\"",
       NULL},
      {"  - {matrix_dim: 4, mesh_shape: 4x4, sharding_strategy: 1x4}\n",
       "all_gather needs dtype", NULL},
      {"  - {matrix_dim: 4, dtype: float32, mesh_shape: 4x4, "
       "sharding_strategy: 1x4, m: 3}\n",
       "unknown parameter \"m\" for all_gather",
       "valid: matrix_dim, ici_size, mesh_shape, sharding_strategy"},
  };
  for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
    char text[512];
    snprintf(text, sizeof text, "%s%s", k_head, k_cases[i].params);
    test_plan_expect_error(text, k_cases[i].a, k_cases[i].b);
  }
}

/* ---- current layout ----------------------------------------------------- */

static void test_current_upstream(void **state) {
  (void)state;
  static const int64_t k_dims[] = {512, 1024, 2048};
  /* all_gather over mesh 4x2x2 by 4x2x2: 16 devices */
  mb_plan_t *plan = test_plan_load("jax/current/all_gather.yaml");
  assert_int_equal(mb_plan_count(plan), 3);
  for (size_t i = 0; i < 3; i++)
    expect_coll(plan, i, NULL, "all_gather", 16 * k_dims[i] * 1024,
                MB_DTYPE_BF16);
  expect_coll(plan, 0, "all_gather/512/bfloat16/mesh=4x2x2/shard=4x2x2",
              "all_gather", 16 * 512 * 1024, MB_DTYPE_BF16);
  assert_int_equal(test_plan_entry(plan, 0).spec.samples, 5);
  assert_int_equal(test_plan_entry(plan, 0).spec.warmup_runs, 2);
  mb_plan_destroy(plan);
  plan = test_plan_load("jax/current/all_reduce.yaml");
  assert_int_equal(mb_plan_count(plan), 3);
  for (size_t i = 0; i < 3; i++) {
    expect_coll(plan, i, NULL, "all_reduce", k_dims[i] * 1024, MB_DTYPE_BF16);
    assert_int_equal(test_plan_entry(plan, i).params.reduce_op, MB_REDUCE_SUM);
  }
  assert_string_equal(test_plan_entry(plan, 0).name,
                      "all_reduce/512/bfloat16/sum/mesh=16x4x2/shard=16x4x2");
  mb_plan_destroy(plan);
  /* (n, dim, 256) on every device, n = 16 x 4 x 2 */
  plan = test_plan_load("jax/current/reduce_scatter.yaml");
  assert_int_equal(mb_plan_count(plan), 3);
  for (size_t i = 0; i < 3; i++)
    expect_coll(plan, i, NULL, "reduce_scatter", 128 * k_dims[i] * 256,
                MB_DTYPE_BF16);
  mb_plan_destroy(plan);
  plan = test_plan_load("jax/current/all_to_all.yaml");
  assert_int_equal(mb_plan_count(plan), 3);
  for (size_t i = 0; i < 3; i++)
    expect_coll(plan, i, NULL, "all_to_all", k_dims[i] * 1024, MB_DTYPE_BF16);
  mb_plan_destroy(plan);
}

/* reduce_op (as the suite lowers it), the default matrix_dim 1024, a
 * strategy of the wrong length (upstream takes every axis), no mesh (the
 * job's every device: a gather's size unknown, skipped). */
static void test_current_params(void **state) {
  (void)state;
  mb_plan_t *plan = test_plan_parse(
      "global: {dtype: float32}\n"
      "benchmarks:\n"
      "- {name: all_reduce, reduce_op: MAX, matrix_dim: 2}\n"
      "- {name: all_reduce, reduce_op: min}\n"
      "- {name: all_reduce, reduce_op: mean, matrix_dim: 2}\n"
      "- {name: all_gather, matrix_dim: 2}\n"
      "- {name: all_gather, matrix_dim: 2, mesh_shape: 2x4, "
      "sharding_strategy: 1x4}\n"
      "- {name: reduce_scatter, matrix_dim: 2, mesh_shape: 2x4, "
      "sharding_strategy: 2x4x1}\n"
      "- {name: all_to_all, matrix_dim: 2, dtype: int32}\n");
  assert_int_equal(mb_plan_count(plan), 7);
  expect_coll(plan, 0, "all_reduce/2/float32/max", "all_reduce", 2048,
              MB_DTYPE_F32);
  assert_int_equal(test_plan_entry(plan, 0).params.reduce_op, MB_REDUCE_MAX);
  expect_coll(plan, 1, "all_reduce/1024/float32/min", "all_reduce", 1024 * 1024,
              MB_DTYPE_F32);
  assert_int_equal(test_plan_entry(plan, 1).params.reduce_op, MB_REDUCE_MIN);
  assert_contains(test_plan_entry(plan, 2).skip_reason, "reduce_op mean");
  assert_contains(test_plan_entry(plan, 3).skip_reason,
                  "all_gather without mesh_shape spans every device of the "
                  "job");
  expect_coll(plan, 4, "all_gather/2/float32/mesh=2x4/shard=1x4", "all_gather",
              4 * 2048, MB_DTYPE_F32);
  expect_coll(plan, 5, NULL, "reduce_scatter", 8 * 2 * 256, MB_DTYPE_F32);
  expect_coll(plan, 6, "all_to_all/2/int32", "all_to_all", 2048, MB_DTYPE_I32);
  mb_plan_destroy(plan);
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n"
      "- {name: all_reduce, reduce_op: avg}\n",
      "benchmarks[0].reduce_op",
      "unknown reduce_op \"avg\"; valid: sum, mean, max, "
      "min");
  test_plan_expect_error(
      "global: {}\nbenchmarks:\n"
      "- {name: all_to_all, m: 4}\n",
      "all_to_all takes no parameter \"m\"",
      "mesh_shape, sharding_strategy, reduce_op");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_legacy_psum),
      cmocka_unit_test(test_legacy_all_gather),
      cmocka_unit_test(test_legacy_psum_scatter),
      cmocka_unit_test(test_legacy_all_to_all),
      cmocka_unit_test(test_legacy_send_recv_skipped),
      cmocka_unit_test(test_legacy_ppermute_and_dtypes),
      cmocka_unit_test(test_legacy_errors),
      cmocka_unit_test(test_current_upstream),
      cmocka_unit_test(test_current_params),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
