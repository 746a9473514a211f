/* The communicator's contract without MPI (microbench/comm.h): a table of
 * two "ranks" simulated in one process checks what mb_comm_create
 * requires, the arguments each call refuses before reaching the table,
 * that calls reach it unchanged, and that the table's state is freed on
 * every path. */
#include <math.h>

#include "test_util.h"

typedef struct fake {
  int rank, size;
  int destroyed, barriers, bcasts, reduces, gathers, collectives;
  double last_timeout;
  int *freed; /* set on destroy, outliving the fake */
} fake_t;

static mb_status_t f_info(void *self, mb_comm_info_t *out) {
  const fake_t *f = self;
  out->rank = f->rank;
  out->size = f->size;
  snprintf(out->host, sizeof out->host, "fakehost");
  snprintf(out->impl, sizeof out->impl, "fake 1.0");
  return MB_OK;
}
static mb_status_t f_barrier(void *self, double t) {
  fake_t *f = self;
  f->barriers++;
  f->last_timeout = t;
  return MB_OK;
}
static mb_status_t f_bcast(void *self, void *buf, size_t n, int root,
                           double t) {
  fake_t *f = self;
  (void)t;
  f->bcasts++;
  if (f->rank != root) memset(buf, root + 1, n);
  return MB_OK;
}
static mb_status_t f_reduce(void *self, double *v, size_t n, mb_reduce_op_t op,
                            double t) {
  fake_t *f = self;
  (void)t;
  f->reduces++;
  for (size_t i = 0; i < n; i++) v[i] = op == MB_REDUCE_MAX ? 2 * v[i] : v[i];
  return MB_OK;
}
static mb_status_t f_gather(void *self, const void *buf, size_t n, int root,
                            void **out, size_t *sizes, double t) {
  fake_t *f = self;
  (void)t;
  f->gathers++;
  if (f->rank != root) return MB_OK;
  char *d = malloc(2 * n + 1);
  memcpy(d, buf, n);
  memcpy(d + n, buf, n);
  sizes[0] = sizes[1] = n;
  *out = d;
  return MB_OK;
}
static void f_destroy(void *self) {
  fake_t *f = self;
  *f->freed += 1;
  free(f);
}

static mb_status_t f_collective(void *self, const mb_coll_t *c,
                                double timeout_s) {
  fake_t *f = self;
  (void)c;
  f->collectives++;
  f->last_timeout = timeout_s;
  return MB_OK;
}

static fake_t *fake(int rank, int size, int *freed);
static const mb_comm_ops_t k_ops;

/* The part of color >= 0: a fake of one rank sharing the freed counter. */
static mb_status_t f_split(void *self, int color, int key, mb_comm_t **out,
                           double timeout_s) {
  fake_t *f = self;
  (void)key;
  f->last_timeout = timeout_s;
  *out = NULL;
  return color < 0 ? MB_OK : mb_comm_create(&k_ops, fake(0, 1, f->freed), out);
}

static const mb_comm_ops_t k_ops = {sizeof(mb_comm_ops_t),
                                    f_info,
                                    f_barrier,
                                    f_bcast,
                                    f_reduce,
                                    f_gather,
                                    f_destroy,
                                    f_collective,
                                    f_split};

static fake_t *fake(int rank, int size, int *freed) {
  fake_t *f = calloc(1, sizeof *f);
  f->rank = rank, f->size = size, f->freed = freed;
  return f;
}

static void test_create_checks(void **state) {
  (void)state;
  int freed = 0;
  mb_comm_t *c = (mb_comm_t *)1;
  /* not a rank: refused, and the state freed */
  assert_int_equal(mb_comm_create(&k_ops, fake(2, 2, &freed), &c),
                   MB_ERR_INVALID_ARG);
  assert_null(c);
  assert_int_equal(freed, 1);
  assert_contains(mb_error_last(), "rank 2 of 2");
  /* a table without gather */
  mb_comm_ops_t ops = k_ops;
  ops.gather = NULL;
  assert_int_equal(mb_comm_create(&ops, fake(0, 2, &freed), &c),
                   MB_ERR_INVALID_ARG);
  assert_int_equal(freed, 2);
  /* an older caller's table ending before gather, and so before destroy:
   * the state is the caller's to free */
  ops = k_ops;
  ops.struct_size = offsetof(mb_comm_ops_t, gather);
  fake_t *kept = fake(0, 2, &freed);
  assert_int_equal(mb_comm_create(&ops, kept, &c), MB_ERR_INVALID_ARG);
  assert_int_equal(freed, 2);
  f_destroy(kept);
  assert_int_equal(freed, 3);
  /* a newer header's larger table */
  ops = k_ops;
  ops.struct_size = sizeof ops + 8;
  assert_int_equal(mb_comm_create(&ops, fake(0, 2, &freed), &c), MB_ERR_ABI);
  assert_int_equal(freed, 4);
  assert_int_equal(mb_comm_create(NULL, NULL, &c), MB_ERR_INVALID_ARG);
  mb_comm_destroy(NULL);
}

static void test_calls(void **state) {
  (void)state;
  int freed = 0;
  fake_t *f = fake(1, 2, &freed);
  mb_comm_t *c = NULL;
  assert_int_equal(mb_comm_create(&k_ops, f, &c), MB_OK);
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  assert_int_equal(mb_comm_info(c, &info), MB_OK);
  assert_int_equal(info.rank, 1);
  assert_int_equal(info.size, 2);
  assert_string_equal(info.host, "fakehost");
  assert_int_equal(mb_comm_barrier(c, 2.5), MB_OK);
  assert_true(f->last_timeout == 2.5);
  /* a wait needs a positive limit; a root must be a rank */
  assert_int_equal(mb_comm_barrier(c, 0), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "needs a limit");
  assert_int_equal(mb_comm_barrier(c, NAN), MB_ERR_INVALID_ARG);
  char buf[4] = {0};
  assert_int_equal(mb_comm_bcast(c, buf, 4, 2, 1), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "root 2 is not a rank (0..1)");
  assert_int_equal(mb_comm_bcast(c, buf, 4, 0, 1), MB_OK);
  assert_int_equal(buf[3], 1);
  double v[2] = {1, 3};
  assert_int_equal(mb_comm_allreduce_f64(c, v, 2, MB_REDUCE_MAX, 1), MB_OK);
  assert_true(v[1] == 6);
  assert_int_equal(mb_comm_allreduce_f64(c, v, 2, MB_REDUCE_COUNT, 1),
                   MB_ERR_INVALID_ARG);
  assert_string_equal(mb_reduce_op_name(MB_REDUCE_PROD), "prod");
  assert_string_equal(mb_reduce_op_name(MB_REDUCE_COUNT), "?");
  /* the refused calls never reached the table */
  assert_int_equal(f->barriers, 1);
  assert_int_equal(f->bcasts, 1);
  assert_int_equal(f->reduces, 1);
  void *out = (void *)1;
  size_t sizes[2];
  assert_int_equal(mb_comm_gather(c, "abc", 3, 0, &out, sizes, 1), MB_OK);
  assert_null(out); /* not the root */
  mb_comm_destroy(c);
  assert_int_equal(freed, 1);
}

static void test_gather_root(void **state) {
  (void)state;
  int freed = 0;
  mb_comm_t *c = NULL;
  assert_int_equal(mb_comm_create(&k_ops, fake(0, 2, &freed), &c), MB_OK);
  void *out = NULL;
  size_t sizes[2] = {0, 0};
  assert_int_equal(mb_comm_gather(c, "abc", 3, 0, &out, sizes, 1), MB_OK);
  assert_memory_equal(out, "abcabc", 6);
  assert_int_equal(sizes[1], 3);
  free(out);
  assert_int_equal(mb_comm_gather(c, NULL, 3, 0, &out, sizes, 1),
                   MB_ERR_INVALID_ARG);
  mb_comm_destroy(c);
  /* a context holds a borrowed communicator */
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  assert_null(mb_context_comm(ctx));
  mb_context_set_comm(ctx, (mb_comm_t *)&freed);
  assert_ptr_equal(mb_context_comm(ctx), &freed);
  mb_context_set_comm(ctx, NULL);
  mb_context_destroy(ctx);
}

/* The data plane's argument checks, made before the table sees the call,
 * and a control-only table (no collective) saying it carries no data. */
static void test_collective_checks(void **state) {
  (void)state;
  int freed = 0;
  fake_t *f = fake(1, 2, &freed);
  mb_comm_t *c = NULL;
  assert_int_equal(mb_comm_create(&k_ops, f, &c), MB_OK);
  assert_true(mb_comm_has_collective(c));
  float send[4] = {0}, recv[4] = {0};
  mb_coll_t k = MB_COLL_INIT;
  k.send = send, k.recv = recv, k.count = 4;
  assert_int_equal(mb_comm_collective(c, &k, 1), MB_OK);
  k.kind = MB_COLL_ALL_GATHER, k.count = 3;
  assert_int_equal(mb_comm_collective(c, &k, 1), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "count 3 is not a multiple of the 2 ranks");
  k.kind = MB_COLL_ALL_TO_ALL, k.count = 4, k.send = NULL;
  assert_int_equal(mb_comm_collective(c, &k, 1), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "all_to_all has no in-place form");
  k.kind = MB_COLL_BROADCAST, k.root = 2;
  assert_int_equal(mb_comm_collective(c, &k, 1), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "root 2 is not a rank (0..1)");
  k.root = 0, k.dtype = MB_DTYPE_I8;
  assert_int_equal(mb_comm_collective(c, &k, 1), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "valid: f32, bf16, f16, i32");
  k.dtype = MB_DTYPE_F32, k.peer_recv = -1;
  assert_int_equal(mb_comm_collective(c, &k, 1), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "peer_recv -1 is not a rank");
  k.peer_recv = 0;
  assert_int_equal(mb_comm_collective(c, &k, 0), MB_ERR_INVALID_ARG);
  assert_int_equal(f->collectives, 1);
  assert_string_equal(mb_coll_kind_name(MB_COLL_SENDRECV), "sendrecv");
  assert_true(mb_comm_wait(c) == 3600.0);
  mb_comm_set_wait(c, 5);
  mb_comm_set_wait(c, -1); /* ignored */
  assert_true(mb_comm_wait(c) == 5.0);
  /* a split: the part takes the wait; color < 0 is no part */
  mb_comm_t *part = (mb_comm_t *)1;
  assert_int_equal(mb_comm_split(c, 0, 1, &part, 2), MB_OK);
  assert_non_null(part);
  assert_true(mb_comm_wait(part) == 5.0);
  mb_comm_info_t pinfo = MB_COMM_INFO_INIT;
  assert_int_equal(mb_comm_info(part, &pinfo), MB_OK);
  assert_int_equal(pinfo.size, 1);
  mb_comm_destroy(part);
  assert_int_equal(mb_comm_split(c, -1, 1, &part, 2), MB_OK);
  assert_null(part);
  assert_int_equal(mb_comm_split(c, 0, 1, &part, 0), MB_ERR_INVALID_ARG);
  mb_comm_destroy(c);
  /* a table from before the data plane: control only */
  mb_comm_ops_t ops = k_ops;
  ops.struct_size = offsetof(mb_comm_ops_t, collective);
  assert_int_equal(mb_comm_create(&ops, fake(0, 2, &freed), &c), MB_OK);
  assert_false(mb_comm_has_collective(c));
  assert_int_equal(mb_comm_collective(c, &k, 1), MB_ERR_UNSUPPORTED);
  assert_contains(mb_error_last(), "carries no data");
  assert_int_equal(mb_comm_split(c, 0, 0, &part, 1), MB_ERR_UNSUPPORTED);
  assert_contains(mb_error_last(), "cannot be split");
  mb_comm_destroy(c);
  assert_int_equal(freed, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_checks),
      cmocka_unit_test(test_calls),
      cmocka_unit_test(test_gather_root),
      cmocka_unit_test(test_collective_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
