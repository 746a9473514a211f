/* The sampled check of an op whose reference is pure (ref_pure: attention
 * and its backward, whose reference element costs a whole row or column):
 * its reference values are computed on several threads (lib/ops/verify.c),
 * and the verdict is the one the one-by-one check gives, to the last bit
 * of every figure, in the same elements. On a machine with one CPU the
 * threads part is skipped. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_op_util.h"
#include "ops/verify.h"

/* The op's reference state, and the threads its elements were computed on
 * (the wrapper below records them). */
typedef struct seen {
  const mb_op_t *op;
  void *inner;
  pthread_mutex_t lock;
  pthread_t threads[64];
  size_t n;
} seen_t;

static mb_status_t seen_prepare(const mb_op_params_t *p,
                                const void *const *host, void **state);

static void seen_element(const void *state, uint32_t out, size_t idx,
                         double *value, double *scale) {
  seen_t *s = (seen_t *)state;
  s->op->ref_element(s->inner, out, idx, value, scale);
  pthread_mutex_lock(&s->lock);
  size_t i = 0;
  while (i < s->n && !pthread_equal(s->threads[i], pthread_self())) i++;
  if (i == s->n && s->n < 64) s->threads[s->n++] = pthread_self();
  pthread_mutex_unlock(&s->lock);
}

static void seen_release(void *state) {
  (void)state; /* the test reads it after the check, then frees it */
}

/* The state the next seen_prepare hands out (the test's, one at a time). */
static seen_t *g_next;

static mb_status_t seen_prepare(const mb_op_params_t *p,
                                const void *const *host, void **state) {
  *state = g_next;
  return g_next->op->ref_prepare(p, host, &g_next->inner);
}

/* attention_bwd's operands for p: inputs seeded, O and L by its setup,
 * outputs seeded too (wrong, each by its own amount: every element checked
 * moves the figures). */
static void **operands(const mb_op_t *op, const mb_op_params_t *p) {
  const uint32_t n = op->num_inputs + op->num_outputs;
  void **host = test_op_operands(op, p, n, n, 11);
  assert_int_equal(op->post_fill(p, host, 5), MB_OK);
  return host;
}

static void test_pure_check_same_verdict_on_threads(void **state) {
  (void)state;
  const mb_op_t *op = &mb__op_attention_bwd;
  assert_true(op->ref_pure);
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 5;
  /* dQ: 2 x 256 x 32 = 16384 elements, each 2 x 256 x 32 of work: past
   * a full check, so sampled. */
  const int64_t shape[5] = {1, 2, 256, 256, 32};
  memcpy(p.shape, shape, sizeof shape);
  p.dtype = MB_DTYPE_BF16;
  p.flags = MB_PARAM_CAUSAL;
  assert_int_equal(mb_op_resolve(op, &p), MB_OK);
  void **host = operands(op, &p);
  const void *outs[3];
  for (uint32_t o = 0; o < 3; o++) outs[o] = host[op->num_inputs + o];

  mb_op_t one = *op, many = *op; /* one by one; on threads */
  one.ref_pure = 0;
  one.ref_prepare = many.ref_prepare = seen_prepare;
  one.ref_element = many.ref_element = seen_element;
  one.ref_release = many.ref_release = seen_release;
  seen_t s1 = {.op = op}, s2 = {.op = op};
  pthread_mutex_init(&s1.lock, NULL);
  pthread_mutex_init(&s2.lock, NULL);
  mb_correctness_t c1 = MB_CORRECTNESS_INIT, c2 = MB_CORRECTNESS_INIT;
  g_next = &s1;
  assert_int_equal(
      mb__verify(&one, &p, (const void *const *)host, outs, 9, &c1), MB_OK);
  g_next = &s2;
  assert_int_equal(
      mb__verify(&many, &p, (const void *const *)host, outs, 9, &c2), MB_OK);
  op->ref_release(s1.inner);
  op->ref_release(s2.inner);

  /* Sampled, failing (random outputs), and the same figures exactly. */
  assert_true(c1.elements_checked < c1.elements_total);
  assert_false(c1.pass);
  assert_int_equal(c2.pass, c1.pass);
  assert_int_equal(c2.elements_checked, c1.elements_checked);
  assert_memory_equal(&c2.max_abs_err, &c1.max_abs_err, sizeof(double));
  assert_memory_equal(&c2.max_rel_err, &c1.max_rel_err, sizeof(double));
  assert_memory_equal(&c2.max_err_ratio, &c1.max_err_ratio, sizeof(double));
  assert_memory_equal(&c2.sqnr_db, &c1.sqnr_db, sizeof(double));
  assert_int_equal(s1.n, 1);
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
    assert_true(s2.n >= 2); /* computed on several threads */
  else
    printf("  one CPU: the threads part is not checked\n");
  pthread_mutex_destroy(&s1.lock);
  pthread_mutex_destroy(&s2.lock);
  test_op_operands_free(host, op->num_inputs + op->num_outputs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pure_check_same_verdict_on_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
