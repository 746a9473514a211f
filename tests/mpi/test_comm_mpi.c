/* The MPI communicator (microbench/mpi.h) on real ranks: run under
 * `mpirun -n 2` and `-n 4` (tests/CMakeLists.txt). Every rank checks what
 * it can see; a failure prints the rank and the check and exits 1, which
 * mpirun passes on. Modes: "calls" checks each call of the table, with
 * roots other than 0 and sizes that differ per rank; "stall" has the last
 * rank skip a barrier that the others enter with a 1 s limit: they must
 * end (exit 2) with the message naming the call, not hang. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "microbench.h"
#include "microbench/mpi.h"

static int g_rank = -1;

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s (%s)\n", g_rank, \
              __FILE__, __LINE__, #cond, mb_error_last());               \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

static void calls(mb_comm_t *c, const mb_comm_info_t *info) {
  const int n = info->size, me = info->rank;
  CHECK(mb_comm_barrier(c, 30) == MB_OK);
  /* bcast from the last rank */
  char word[32] = "";
  if (me == n - 1) snprintf(word, sizeof word, "from %d", n - 1);
  CHECK(mb_comm_bcast(c, word, sizeof word, n - 1, 30) == MB_OK);
  char want[32];
  snprintf(want, sizeof want, "from %d", n - 1);
  CHECK(!strcmp(word, want));
  /* every reduction over rank-dependent values */
  const mb_reduce_op_t ops[] = {MB_REDUCE_SUM, MB_REDUCE_PROD, MB_REDUCE_MIN,
                                MB_REDUCE_MAX};
  for (size_t o = 0; o < 4; o++) {
    double v[2] = {me + 1.0, -(me + 1.0)};
    CHECK(mb_comm_allreduce_f64(c, v, 2, ops[o], 30) == MB_OK);
    double fact = 1, sum = n * (n + 1) / 2.0;
    for (int r = 1; r <= n; r++) fact *= r;
    const double want0[] = {sum, fact, 1, n};
    const double want1[] = {-sum, (n % 2 ? -1 : 1) * fact, -n, -1};
    CHECK(v[0] == want0[o] && v[1] == want1[o]);
  }
  /* gather to rank 1 (0 with one rank): rank r sends r bytes of 'a' + r
   * (rank 0 none at all) */
  const int root = n > 1 ? 1 : 0;
  char mine[64];
  memset(mine, 'a' + me, sizeof mine);
  void *out = NULL;
  size_t sizes[64];
  CHECK(mb_comm_gather(c, mine, (size_t)me, root, &out, sizes, 30) == MB_OK);
  if (me == root) {
    const char *p = out;
    for (int r = 0; r < n; r++) {
      CHECK(sizes[r] == (size_t)r);
      for (int i = 0; i < r; i++) CHECK(*p++ == 'a' + r);
    }
    free(out);
  } else {
    CHECK(out == NULL);
  }
  CHECK(info->local_size >= 1 && info->local_rank < info->local_size);
  CHECK(*info->host && strstr(info->impl, "MPI"));
}

int main(int argc, char **argv) {
  mb_comm_t *c = NULL;
  if (argc != 2 || (strcmp(argv[1], "calls") && strcmp(argv[1], "stall"))) {
    fprintf(stderr, "usage: %s calls|stall\n", argv[0]);
    return 2;
  }
  CHECK(mb_mpi_world(&argc, &argv, &c) == MB_OK);
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  CHECK(mb_comm_info(c, &info) == MB_OK);
  g_rank = info.rank;
  if (!strcmp(argv[1], "calls")) {
    calls(c, &info);
    if (info.rank == 0)
      printf("calls: %d ranks passed (%s)\n", info.size, info.impl);
  } else if (info.rank != info.size - 1) {
    mb_comm_barrier(c, 1.0); /* the last rank never comes */
    fprintf(stderr, "rank %d: the barrier returned without the last rank\n",
            info.rank);
    return 1;
  } else {
    /* Stays alive past the others' limit, so that they are the ones to
     * notice; mpirun ends it when they exit. */
    for (int i = 0; i < 100; i++) {
      struct timespec t = {0, 100000000};
      nanosleep(&t, NULL);
    }
    return 1;
  }
  mb_comm_destroy(c);
  return 0;
}
