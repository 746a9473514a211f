/* The communicator over MPI (microbench/mpi.h): each call of the table is
 * the blocking MPI call under the watchdog's bound, on a duplicate of the
 * caller's communicator whose errors return (MPI_ERRORS_RETURN) and
 * become statuses with MPI's own message. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microbench/mpi.h"
#include "mpi/mpi_internal.h"

mb_status_t mb__mpi_fail(int rc, const char *call) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  return mb_comm_fail(MB_ERR_BACKEND, "%s: %s", call, len ? text : "MPI error");
}

static mb_status_t info(void *self, mb_comm_info_t *out) {
  *out = ((const mpi_comm_t *)self)->info;
  return MB_OK;
}

static mb_status_t barrier(void *self, double timeout_s) {
  mpi_comm_t *c = self;
  GUARDED(c, "MPI_Barrier", timeout_s, MPI_Barrier(c->comm));
  return MB_OK;
}

/* MPI counts are int: larger buffers go in INT_MAX-byte pieces. */
static mb_status_t bcast(void *self, void *buf, size_t bytes, int root,
                         double timeout_s) {
  mpi_comm_t *c = self;
  for (size_t at = 0; at < bytes; at += INT_MAX) {
    const size_t n = bytes - at < INT_MAX ? bytes - at : INT_MAX;
    GUARDED(c, "MPI_Bcast", timeout_s,
            MPI_Bcast((char *)buf + at, (int)n, MPI_BYTE, root, c->comm));
  }
  return MB_OK;
}

static MPI_Op mpi_op(mb_reduce_op_t op) {
  static const MPI_Op k_ops[MB_REDUCE_COUNT] = {
      [MB_REDUCE_SUM] = MPI_SUM,
      [MB_REDUCE_PROD] = MPI_PROD,
      [MB_REDUCE_MIN] = MPI_MIN,
      [MB_REDUCE_MAX] = MPI_MAX,
  };
  return k_ops[op];
}

static mb_status_t allreduce_f64(void *self, double *values, size_t n,
                                 mb_reduce_op_t op, double timeout_s) {
  mpi_comm_t *c = self;
  if (n > INT_MAX)
    return mb_comm_fail(MB_ERR_INVALID_ARG,
                        "allreduce of %zu values: more than MPI counts", n);
  GUARDED(c, "MPI_Allreduce", timeout_s,
          MPI_Allreduce(MPI_IN_PLACE, values, (int)n, MPI_DOUBLE, mpi_op(op),
                        c->comm));
  return MB_OK;
}

/* Sizes first (every rank's, as 64-bit counts), then the bytes. */
static mb_status_t gather(void *self, const void *buf, size_t bytes, int root,
                          void **out, size_t *sizes, double timeout_s) {
  mpi_comm_t *c = self;
  const int size = c->info.size, me = c->info.rank;
  unsigned long long mine = bytes, *all = NULL;
  int *counts = NULL, *displs = NULL, too_big = 0;
  char *data = NULL;
  if (me == root) {
    all = calloc((size_t)size, sizeof *all);
    counts = calloc((size_t)size, sizeof *counts);
    displs = calloc((size_t)size, sizeof *displs);
  }
  /* Every rank joins the size gather even when root is out of memory,
   * so that no rank waits for a call root never makes. */
  mb__watchdog_arm(&c->dog, "MPI_Gather", timeout_s);
  int rc = MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1,
                      MPI_UNSIGNED_LONG_LONG, root, c->comm);
  mb__watchdog_disarm(&c->dog);
  unsigned long long total = 0;
  if (me == root && rc == MPI_SUCCESS && all && counts && displs) {
    for (int r = 0; r < size; r++) {
      too_big |= all[r] > INT_MAX || total + all[r] > INT_MAX;
      displs[r] = (int)total;
      counts[r] = (int)all[r];
      total += all[r];
      if (sizes) sizes[r] = (size_t)all[r];
    }
    data = malloc(total ? total : 1);
  }
  /* Whether root can take the bytes: every rank learns it, so all skip
   * the second call together. */
  int ok = me != root || (rc == MPI_SUCCESS && data && !too_big);
  mb__watchdog_arm(&c->dog, "MPI_Bcast", timeout_s);
  int rc2 = MPI_Bcast(&ok, 1, MPI_INT, root, c->comm);
  mb__watchdog_disarm(&c->dog);
  if (rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && ok) {
    mb__watchdog_arm(&c->dog, "MPI_Gatherv", timeout_s);
    rc = MPI_Gatherv(buf, (int)bytes, MPI_BYTE, data, counts, displs, MPI_BYTE,
                     root, c->comm);
    mb__watchdog_disarm(&c->dog);
  }
  free(all);
  free(counts);
  free(displs);
  mb_status_t st = MB_OK;
  if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS)
    st = mb__mpi_fail(rc != MPI_SUCCESS ? rc : rc2, "gather");
  else if (!ok)
    st = mb_comm_fail(too_big ? MB_ERR_INVALID_ARG : MB_ERR_NO_MEMORY,
                      "gather to rank %d: %s", root,
                      too_big ? "more than 2 GiB in all (MPI counts are int)"
                              : "out of memory on the root");
  if (st != MB_OK || me != root) {
    free(data);
    data = NULL;
  }
  *out = data;
  return st;
}

static void destroy(void *self) {
  mpi_comm_t *c = self;
  if (!c) return;
  mb__watchdog_stop(&c->dog);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    mb__mpi_coll_fini(c);
    if (c->local != MPI_COMM_NULL) MPI_Comm_free(&c->local);
    if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
    if (c->finalize) MPI_Finalize();
  }
  free(c);
}

static mb_status_t make(MPI_Comm parent, int finalize, mb_comm_t **out);

/* MPI_Comm_split, the part a communicator of its own (a duplicate, as
 * every one here is, with its own bound on waits). */
static mb_status_t split(void *self, int color, int key, mb_comm_t **out,
                         double timeout_s) {
  mpi_comm_t *c = self;
  MPI_Comm part = MPI_COMM_NULL;
  *out = NULL;
  GUARDED(
      c, "MPI_Comm_split", timeout_s,
      MPI_Comm_split(c->comm, color < 0 ? MPI_UNDEFINED : color, key, &part));
  if (part == MPI_COMM_NULL) return MB_OK;
  mb_status_t st = make(part, 0, out);
  MPI_Comm_free(&part);
  return st;
}

static const mb_comm_ops_t k_ops = {
    sizeof(mb_comm_ops_t), info, barrier, bcast, allreduce_f64, gather, destroy,
    mb__mpi_collective,    split};

/* The first line of MPI_Get_library_version ("Open MPI v4.1.4, package:
 * ...": the part before the first comma). */
static void library_version(char *out, size_t cap) {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  text[strcspn(text, ",\n")] = '\0';
  snprintf(out, cap, "%s", len ? text : "MPI");
}

static mb_status_t make(MPI_Comm parent, int finalize, mb_comm_t **out) {
  *out = NULL;
  mpi_comm_t *c = calloc(1, sizeof *c);
  if (!c) return mb_comm_fail(MB_ERR_NO_MEMORY, "out of memory");
  c->comm = c->local = MPI_COMM_NULL;
  c->info = (mb_comm_info_t)MB_COMM_INFO_INIT;
  int rc = MPI_Comm_dup(parent, &c->comm);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(c->comm, &c->info.rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(c->comm, &c->info.size);
  /* The ranks sharing memory with this one: its node-local rank, the
   * device it takes. */
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->info.rank,
                             MPI_INFO_NULL, &c->local);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(c->local, &c->info.local_rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(c->local, &c->info.local_size);
  if (rc == MPI_SUCCESS) rc = mb__mpi_coll_init(c);
  if (rc != MPI_SUCCESS) {
    mb_status_t st = mb__mpi_fail(rc, "creating the MPI communicator");
    destroy(c);
    return st;
  }
  if (gethostname(c->info.host, sizeof c->info.host) != 0)
    snprintf(c->info.host, sizeof c->info.host, "?");
  c->info.host[sizeof c->info.host - 1] = '\0';
  library_version(c->info.impl, sizeof c->info.impl);
  char where[384];
  snprintf(where, sizeof where, "rank %d of %d on %s", c->info.rank,
           c->info.size, c->info.host);
  if (mb__watchdog_start(&c->dog, where) != 0) {
    destroy(c);
    return mb_comm_fail(MB_ERR_INTERNAL,
                        "cannot start the thread that bounds MPI waits");
  }
  mb_status_t st = mb_comm_create(&k_ops, c, out); /* owns c from here */
  /* Set once it cannot fail: a failure's destroy must not finalize MPI
   * that the caller (mb_mpi_world) finalizes itself. */
  if (st == MB_OK) c->finalize = finalize;
  return st;
}

mb_status_t mb_mpi_comm_create(MPI_Comm comm, mb_comm_t **out) {
  int init = 0;
  if (!out) return mb_comm_fail(MB_ERR_INVALID_ARG, "NULL out");
  *out = NULL;
  MPI_Initialized(&init);
  if (!init)
    return mb_comm_fail(MB_ERR_INVALID_ARG,
                        "mb_mpi_comm_create: MPI is not initialized");
  return make(comm, 0, out);
}

mb_status_t mb_mpi_world(int *argc, char ***argv, mb_comm_t **out) {
  int init = 0, provided = 0;
  if (!out) return mb_comm_fail(MB_ERR_INVALID_ARG, "NULL out");
  *out = NULL;
  MPI_Initialized(&init);
  /* FUNNELED: only the thread that made the communicator calls MPI (the
   * watchdog never does). */
  if (!init && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
                   MPI_SUCCESS)
    return mb_comm_fail(MB_ERR_BACKEND, "MPI_Init_thread failed");
  mb_status_t st = make(MPI_COMM_WORLD, !init, out);
  if (st != MB_OK && !init) MPI_Finalize();
  return st;
}
