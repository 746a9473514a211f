/* The collective ops end to end in one process, on a communicator of one
 * rank whose data plane this test supplies (microbench/comm.h): every op
 * runs on the CPU backend's kernel and is checked against the op's
 * reference; a data plane that gets one element wrong fails the check
 * (the reference is not satisfied by anything); a collective without a
 * communicator, or over one that carries no data, is skipped with why.
 * The ops over MPI, with 2 and 4 ranks, are tests/mpi/test_collectives.py. */
#include <string.h>

#include "test_one_rank.h"
#include "test_util.h"

static const char *const k_ops[] = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
    "broadcast",  "reduce",     "sendrecv"};

static mb_result_t *run(mb_context_t *ctx, const char *op, mb_dtype_t dt,
                        uint32_t flags) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 1;
  p.shape[0] = 37;
  p.dtype = dt;
  p.flags = flags;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = "cpu";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 2;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  return r;
}

/* What MPI declines (cpu/mpi's supports) is the other form. */
static uint32_t runnable_flags(const char *op) {
  return !strcmp(op, "broadcast") ? MB_PARAM_IN_PLACE : 0u;
}

static void test_every_op_checked(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  one_t one = {.planted = 0};
  mb_comm_t *comm = NULL;
  assert_int_equal(mb_comm_create(&k_one_rank, &one, &comm), MB_OK);
  mb_context_set_comm(ctx, comm);
  const mb_dtype_t dts[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16,
                            MB_DTYPE_I32};
  for (size_t i = 0; i < sizeof k_ops / sizeof *k_ops; i++)
    for (size_t d = 0; d < 4; d++) {
      mb_result_t *r = run(ctx, k_ops[i], dts[d], runnable_flags(k_ops[i]));
      mb_result_info_t info = MB_RESULT_INFO_INIT;
      mb_correctness_t c = MB_CORRECTNESS_INIT;
      assert_int_equal(mb_result_info(r, &info), MB_OK);
      assert_int_equal(mb_result_correctness(r, &c), MB_OK);
      if (info.status != MB_RESULT_OK)
        fail_msg("%s: %s", k_ops[i], info.reason);
      assert_true(c.pass);
      assert_string_equal(info.impl, "mpi");
      assert_int_equal(info.params.ranks, 1);
      assert_contains(mb_result_json(r), "one rank (test)");
      mb_result_destroy(r);
    }
  assert_true(one.calls > 0);
  /* A wrong element anywhere fails every op's check. */
  one.planted = 1;
  for (size_t i = 0; i < sizeof k_ops / sizeof *k_ops; i++) {
    mb_result_t *r = run(ctx, k_ops[i], MB_DTYPE_F32, runnable_flags(k_ops[i]));
    mb_correctness_t c = MB_CORRECTNESS_INIT;
    assert_int_equal(mb_result_correctness(r, &c), MB_OK);
    if (c.pass) fail_msg("%s: a planted error passed the check", k_ops[i]);
    mb_result_destroy(r);
  }
  mb_context_destroy(ctx);
  mb_comm_destroy(comm);
}

static void test_skipped_without_a_data_plane(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_result_t *r = run(ctx, "all_reduce", MB_DTYPE_F32, 0);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_contains(info.reason, "no communicator");
  mb_result_destroy(r);
  one_t one = {.planted = 0};
  mb_comm_ops_t control = k_one_rank;
  control.struct_size = offsetof(mb_comm_ops_t, collective);
  mb_comm_t *comm = NULL;
  assert_int_equal(mb_comm_create(&control, &one, &comm), MB_OK);
  mb_context_set_comm(ctx, comm);
  r = run(ctx, "all_reduce", MB_DTYPE_F32, 0);
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_FAILED);
  assert_contains(info.reason, "carries no data");
  mb_result_destroy(r);
  /* MPI's refusals, before anything runs */
  r = run(ctx, "broadcast", MB_DTYPE_F32, 0);
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_contains(info.reason, "MPI_Bcast works in one buffer");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
  mb_comm_destroy(comm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_op_checked),
      cmocka_unit_test(test_skipped_without_a_data_plane),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
