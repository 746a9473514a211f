/* A communicator of one rank with a data plane of its own, for tests that
 * run the collective ops in one process (test_collective, the conformance
 * suite): with one rank every collective is its input where the op puts
 * it. `planted` makes the data plane get the last element of every result
 * wrong, so a test can show the check catches it. */
#ifndef MB_TESTS_TEST_ONE_RANK_H
#define MB_TESTS_TEST_ONE_RANK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench.h"

typedef struct one {
  int planted; /* 1: the last element of every result is off by one */
  int calls;   /* collectives through the data plane */
  /* broadcasts: how many, the last one's size and root; corrupt: 1 makes
   * every broadcast arrive changed (a GPU library's unique id, say) */
  int bcasts, last_root, corrupt;
  size_t bytes;
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
  one_t *o = self;
  (void)t;
  o->bcasts++;
  o->bytes = n;
  o->last_root = root;
  if (o->corrupt) memset(b, 0x5a, n);
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

static const mb_comm_ops_t k_one_rank = {sizeof(mb_comm_ops_t),
                                         o_info,
                                         o_barrier,
                                         o_bcast,
                                         o_reduce,
                                         o_gather,
                                         o_destroy,
                                         o_collective,
                                         NULL /* one rank: no split */};

/* A one-rank communicator over `state` (borrowed: it must outlive it). */
static inline mb_comm_t *one_rank_comm(one_t *state) {
  mb_comm_t *comm = NULL;
  return mb_comm_create(&k_one_rank, state, &comm) == MB_OK ? comm : NULL;
}

#endif
