/* The collective ops end to end in one process, on a communicator of one
 * rank whose data plane this test supplies (microbench/comm.h): every op
 * runs on the CPU backend's kernel and is checked against the op's
 * reference; a data plane that gets one element wrong fails the check
 * (the reference is not satisfied by anything); a collective without a
 * communicator, or over one that carries no data, is skipped with why.
 * The ops over MPI, with 2 and 4 ranks, are tests/mpi/test_collectives.py. */
#include <string.h>

#include "test_util.h"

typedef struct one {
  int planted; /* 1: the last element of every result is off by one */
  int calls;
} one_t;

static mb_status_t o_info(void *self, mb_comm_info_t *out) {
  (void)self;
  out->rank = 0, out->size = 1, out->local_rank = 0, out->local_size = 1;
  snprintf(out->host, sizeof out->host, "here");
  snprintf(out->impl, sizeof out->impl, "one rank (test)");
  return MB_OK;
}
static mb_status_t o_barrier(void *self, double t) {
  (void)self, (void)t;
  return MB_OK;
}
static mb_status_t o_bcast(void *self, void *b, size_t n, int root, double t) {
  (void)self, (void)b, (void)n, (void)root, (void)t;
  return MB_OK;
}
static mb_status_t o_reduce(void *self, double *v, size_t n, mb_reduce_op_t op,
                            double t) {
  (void)self, (void)v, (void)n, (void)op, (void)t;
  return MB_OK;
}
static mb_status_t o_gather(void *self, const void *buf, size_t bytes, int root,
                            void **out, size_t *sizes, double t) {
  (void)self, (void)root, (void)t;
  *out = malloc(bytes ? bytes : 1);
  memcpy(*out, buf, bytes);
  if (sizes) sizes[0] = bytes;
  return MB_OK;
}
static void o_destroy(void *self) {
  (void)self;
}

/* With one rank every collective is its input, where the op puts it. */
static mb_status_t o_collective(void *self, const mb_coll_t *c, double t) {
  one_t *o = self;
  (void)t;
  const size_t esize =
                   c->dtype == MB_DTYPE_F32 || c->dtype == MB_DTYPE_I32 ? 4 : 2,
               bytes = c->count * esize;
  if (c->send) memcpy(c->recv, c->send, bytes);
  if (o->planted && c->count) {
    unsigned char *last = (unsigned char *)c->recv + bytes - esize;
    last[esize - 1] ^= 0x40; /* the top byte: sign or exponent bits */
  }
  o->calls++;
  return MB_OK;
}

static const mb_comm_ops_t k_one = {sizeof(mb_comm_ops_t),
                                    o_info,
                                    o_barrier,
                                    o_bcast,
                                    o_reduce,
                                    o_gather,
                                    o_destroy,
                                    o_collective};

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
  one_t one = {0, 0};
  mb_comm_t *comm = NULL;
  assert_int_equal(mb_comm_create(&k_one, &one, &comm), MB_OK);
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
  one_t one = {0, 0};
  mb_comm_ops_t control = k_one;
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
