/* The GPU backends' collective kernels (backends/gpu/host/gpu_ccl.c, impl
 * "nccl") on the emulated GPU, through a fake libnccl.so.2
 * (tests/fixtures/fake_nccl.c) that works on host memory for one rank and
 * records every call. Each op, dtype, reduction and in/out-of-place form
 * runs end to end, checked by the op's reference, and its calls are checked
 * against NCCL's contract: the count each call takes (a block for
 * all_gather and reduce_scatter), NCCL's numbers for the dtype and the
 * reduction (written out below from nccl.h, not taken from the module's
 * header), the root, in-place buffers, the backend's stream, and the
 * grouped ncclSend/ncclRecv of all_to_all and sendrecv. The communicator is
 * made once per device (rank 0's unique id through the context's
 * communicator when there is one) and destroyed with the backend. A missing
 * library is every nccl kernel's skip reason. No GPU: this is the glue,
 * not NCCL. */
#include <dlfcn.h>
#include <string.h>
#include <time.h>

#include "test_one_rank.h"
#include "test_util.h"

#ifndef FAKE_NCCL
#error "FAKE_NCCL: the fake library's file (the build defines it)"
#endif

/* As tests/fixtures/fake_nccl.c records a call. */
typedef struct fake_nccl_call {
  char fn[24];
  size_t count;
  int type, op, root, peer;
  int in_place;
  int in_group;
  int on_stream;
} fake_nccl_call_t;

typedef struct fake {
  void *dl;
  const fake_nccl_call_t *(*calls)(size_t *n);
  void (*reset)(void);
} fake_t;

/* nccl.h: ncclInt32 2, ncclFloat16 6, ncclFloat32 7, ncclBfloat16 9;
 * ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3. */
static int nccl_type(mb_dtype_t dt) {
  switch (dt) {
    case MB_DTYPE_I32:
      return 2;
    case MB_DTYPE_F16:
      return 6;
    case MB_DTYPE_F32:
      return 7;
    case MB_DTYPE_BF16:
      return 9;
    default:
      return -100;
  }
}
static const struct {
  const char *name;
  int nccl;
} k_reductions[] = {{"sum", 0}, {"prod", 1}, {"max", 2}, {"min", 3}};

/* Each op: NCCL's call, whether it reduces, is rooted, has an in-place
 * form, and is grouped send/recv. */
static const struct {
  const char *op, *fn;
  int reduces, rooted, in_place, grouped;
} k_ops[] = {
    {"all_reduce", "ncclAllReduce", 1, 0, 1, 0},
    {"all_gather", "ncclAllGather", 0, 0, 1, 0},
    {"reduce_scatter", "ncclReduceScatter", 1, 0, 1, 0},
    {"all_to_all", NULL, 0, 0, 0, 1},
    {"broadcast", "ncclBroadcast", 0, 1, 1, 0},
    {"reduce", "ncclReduce", 1, 1, 1, 0},
    {"sendrecv", NULL, 0, 0, 0, 1},
};

static const mb_dtype_t k_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16,
                                      MB_DTYPE_I32};

#define N 37

static fake_t open_fake(void) {
  fake_t f;
  f.dl = dlopen(FAKE_NCCL, RTLD_NOW | RTLD_LOCAL);
  if (!f.dl) fail_msg("%s", dlerror());
  void *c = dlsym(f.dl, "fake_nccl_calls"), *r = dlsym(f.dl, "fake_nccl_reset");
  assert_non_null(c);
  assert_non_null(r);
  memcpy(&f.calls, &c, sizeof c);
  memcpy(&f.reset, &r, sizeof r);
  f.reset();
  return f;
}

static mb_context_t *emu_context(const char *library) {
  if (library)
    setenv("MB_NCCL_LIBRARY", library, 1);
  else
    unsetenv("MB_NCCL_LIBRARY");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/gpuemu", test_env_dir("MB_TEST_FIXTURE_DIR"));
  return test_context(dir);
}

static mb_result_t *run(mb_context_t *ctx, const char *op, mb_dtype_t dt,
                        uint32_t reduce_op, int root, int in_place) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 1;
  p.shape[0] = N;
  p.dtype = dt;
  p.reduce_op = reduce_op;
  p.root = root;
  p.flags = in_place ? MB_PARAM_IN_PLACE : 0u;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = "gpuemu";
  s.impl = "nccl";
  s.cache = MB_CACHE_HOT; /* batches of runs */
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 2;
  s.batch = 3;
  s.warmup_s = 0;
  s.warmup_runs = 1;
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  return r;
}

static void expect_passed(mb_result_t *r, const char *what) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  if (info.status != MB_RESULT_OK)
    fail_msg("%s: %s: %s", what, mb_result_status_name(info.status),
             info.reason);
  assert_int_equal(mb_result_correctness(r, &c), MB_OK);
  if (!c.pass) fail_msg("%s: the check failed", what);
  assert_string_equal(info.impl, "nccl");
}

/* Every call the fake recorded for one benchmark is the op's, as NCCL
 * takes it: `fn` with (count, type, op, root, in place) or, grouped,
 * GroupStart, Send and Recv to and from rank 0, GroupEnd. */
static void expect_calls(const fake_t *f, int o, mb_dtype_t dt, int nccl_op,
                         int root, int in_place, const char *what) {
  size_t n = 0;
  const fake_nccl_call_t *c = f->calls(&n);
  size_t runs = 0;
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(c[i].fn, "ncclGetUniqueId") ||
        !strcmp(c[i].fn, "ncclCommInitRank"))
      continue; /* the first benchmark makes the communicator */
    if (k_ops[o].grouped) {
      /* all_to_all: one pair per rank (one), blocks of N / 1 */
      if (i + 3 >= n || strcmp(c[i].fn, "ncclGroupStart") ||
          strcmp(c[i + 1].fn, "ncclSend") || strcmp(c[i + 2].fn, "ncclRecv") ||
          strcmp(c[i + 3].fn, "ncclGroupEnd"))
        fail_msg("%s: call %zu (%s) does not start a grouped send/recv", what,
                 i, c[i].fn);
      for (size_t j = i + 1; j <= i + 2; j++) {
        assert_int_equal(c[j].count, N);
        assert_int_equal(c[j].type, nccl_type(dt));
        assert_int_equal(c[j].peer, 0); /* rank 0's ring is itself */
        assert_true(c[j].in_group);
        assert_true(c[j].on_stream);
      }
      i += 3;
    } else {
      if (strcmp(c[i].fn, k_ops[o].fn))
        fail_msg("%s: call %zu is %s, not %s", what, i, c[i].fn, k_ops[o].fn);
      assert_int_equal(c[i].count, N); /* one rank: a block is all N */
      assert_int_equal(c[i].type, nccl_type(dt));
      if (c[i].op != nccl_op)
        fail_msg("%s: reduction %d, NCCL's is %d", what, c[i].op, nccl_op);
      assert_int_equal(c[i].root, root);
      assert_int_equal(c[i].in_place, in_place);
      assert_false(c[i].in_group);
      assert_true(c[i].on_stream);
    }
    runs++;
  }
  /* warm-up, the check's run, 2 samples of 3 */
  if (runs < 2 + 2 * 3) fail_msg("%s: %zu calls recorded", what, runs);
}

static size_t count_calls(const fake_t *f, const char *fn) {
  size_t n = 0, k = 0;
  const fake_nccl_call_t *c = f->calls(&n);
  for (size_t i = 0; i < n; i++) k += !strcmp(c[i].fn, fn);
  return k;
}

static void test_every_op_through_nccl(void **state) {
  (void)state;
  fake_t f = open_fake();
  mb_context_t *ctx = emu_context(FAKE_NCCL);
  char what[160];
  size_t inits = 0;
  for (size_t o = 0; o < sizeof k_ops / sizeof *k_ops; o++)
    for (size_t d = 0; d < sizeof k_dtypes / sizeof *k_dtypes; d++)
      for (int ip = 0; ip <= k_ops[o].in_place; ip++)
        for (size_t rd = 0; rd < (k_ops[o].reduces ? 4u : 1u); rd++) {
          snprintf(what, sizeof what, "%s %s%s%s%s", k_ops[o].op,
                   mb_dtype_name(k_dtypes[d]), ip ? " in place" : "",
                   k_ops[o].reduces ? " " : "",
                   k_ops[o].reduces ? k_reductions[rd].name : "");
          mb_reduce_op_t rop = MB_REDUCE_SUM;
          assert_int_equal(mb_reduce_op_from_name(k_reductions[rd].name, &rop),
                           MB_OK);
          f.reset();
          mb_result_t *r =
              run(ctx, k_ops[o].op, k_dtypes[d], (uint32_t)rop, 0, ip);
          expect_passed(r, what);
          expect_calls(&f, (int)o, k_dtypes[d],
                       k_ops[o].reduces ? k_reductions[rd].nccl : -1,
                       k_ops[o].rooted ? 0 : -1, ip, what);
          inits += count_calls(&f, "ncclCommInitRank");
          const char *json = mb_result_json(r);
          assert_contains(json, "\"nccl_version\"");
          assert_contains(json, "2.19.3"); /* the fake's ncclGetVersion */
          assert_contains(json, "between two events");
          mb_result_destroy(r);
        }
  /* The communicator: made at the first collective, then kept until the
   * backend goes. */
  assert_int_equal(inits, 1);
  f.reset();
  mb_context_destroy(ctx);
  assert_int_equal(count_calls(&f, "ncclCommDestroy"), 1);
  dlclose(f.dl);
  unsetenv("MB_NCCL_LIBRARY");
}

/* ---- through a communicator of one rank -----------------------------------
 */

/* Rank 0's unique id reaches ncclCommInitRank through the communicator's
 * broadcast (a changed id makes the fake refuse it). */
static void test_unique_id_through_the_communicator(void **state) {
  (void)state;
  for (int corrupt = 0; corrupt <= 1; corrupt++) {
    fake_t f = open_fake();
    mb_context_t *ctx = emu_context(FAKE_NCCL);
    one_t one = {.corrupt = corrupt};
    mb_comm_t *comm = one_rank_comm(&one);
    assert_non_null(comm);
    mb_context_set_comm(ctx, comm);
    mb_result_t *r = run(ctx, "all_reduce", MB_DTYPE_F32, MB_REDUCE_SUM, 0, 0);
    assert_true(one.bcasts >= 1);
    assert_int_equal(one.last_root, 0);
    assert_true(one.bytes > 128); /* NCCL_UNIQUE_ID_BYTES, and more */
    if (!corrupt) {
      expect_passed(r, "all_reduce over a communicator");
      assert_contains(mb_result_json(r), "one rank (test)");
    } else {
      mb_result_info_t info = MB_RESULT_INFO_INIT;
      assert_int_equal(mb_result_info(r, &info), MB_OK);
      assert_int_not_equal(info.status, MB_RESULT_OK);
      assert_contains(info.reason, "ncclCommInitRank");
    }
    mb_result_destroy(r);
    mb_context_destroy(ctx);
    mb_comm_destroy(comm);
    dlclose(f.dl);
  }
  unsetenv("MB_NCCL_LIBRARY");
}

/* A rank that never joins: ncclCommInitRank does not return (the fake
 * sleeps in it far longer than the test runs). The benchmark fails within
 * the communicator's wait, saying so, and the context goes on: the next
 * collective, with a library that returns, makes its communicator. Last in
 * the file: the abandoned call's thread is still asleep in the fake. */
static void test_init_wait_bounded(void **state) {
  (void)state;
  fake_t f = open_fake();
  mb_context_t *ctx = emu_context(FAKE_NCCL);
  one_t one = {.corrupt = 0};
  mb_comm_t *comm = one_rank_comm(&one);
  assert_non_null(comm);
  mb_comm_set_wait(comm, 0.5);
  mb_context_set_comm(ctx, comm);
  setenv("FAKE_NCCL_INIT_SLEEP", "3600", 1);
  const time_t t0 = time(NULL);
  mb_result_t *r = run(ctx, "all_reduce", MB_DTYPE_F32, MB_REDUCE_SUM, 0, 0);
  const double waited = difftime(time(NULL), t0);
  unsetenv("FAKE_NCCL_INIT_SLEEP");
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_FAILED);
  assert_contains(info.reason,
                  "ncclCommInitRank (rank 0 of 1, device 0) did "
                  "not return within 0.5 s");
  assert_contains(info.reason, "NCCL stays loaded");
  if (waited > 5.0) fail_msg("the benchmark took %.0f s", waited);
  mb_result_destroy(r);
  assert_int_equal(count_calls(&f, "ncclCommInitRank"), 1);
  r = run(ctx, "all_reduce", MB_DTYPE_F32, MB_REDUCE_SUM, 0, 0);
  expect_passed(r, "all_reduce after an init that never returned");
  mb_result_destroy(r);
  assert_int_equal(count_calls(&f, "ncclCommInitRank"), 2);
  mb_context_destroy(ctx);
  mb_comm_destroy(comm);
  dlclose(f.dl);
  /* The abandoned call's thread is still in the library: the backend left
   * it loaded, though every handle the test knows of is closed. */
  void *still = dlopen(FAKE_NCCL, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(still);
  dlclose(still);
  unsetenv("MB_NCCL_LIBRARY");
}

/* ---- without the library ----------------------------------------------------
 */

static void expect_skipped(mb_context_t *ctx, const char *reason) {
  for (size_t o = 0; o < sizeof k_ops / sizeof *k_ops; o++) {
    mb_result_t *r =
        run(ctx, k_ops[o].op, MB_DTYPE_F32, MB_REDUCE_SUM, 0, k_ops[o].rooted);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    assert_int_equal(mb_result_info(r, &info), MB_OK);
    if (info.status != MB_RESULT_SKIPPED)
      fail_msg("%s: %s, not skipped", k_ops[o].op,
               mb_result_status_name(info.status));
    assert_contains(info.reason, "NCCL not loaded: ");
    assert_contains(info.reason, reason);
    mb_result_destroy(r);
  }
}

static void test_not_loaded(void **state) {
  (void)state;
  mb_context_t *ctx = emu_context("/nonexistent/libnccl.so.2");
  expect_skipped(ctx,
                 "cannot load /nonexistent/libnccl.so.2 (from "
                 "MB_NCCL_LIBRARY): /nonexistent/libnccl.so.2: cannot "
                 "open shared object file");
  mb_context_destroy(ctx);
  /* The emulator never looks for a real NCCL. */
  ctx = emu_context(NULL);
  expect_skipped(ctx, "loads only the library MB_NCCL_LIBRARY names");
  mb_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_op_through_nccl),
      cmocka_unit_test(test_unique_id_through_the_communicator),
      cmocka_unit_test(test_not_loaded),
      cmocka_unit_test(test_init_wait_bounded), /* last: leaves a thread */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
