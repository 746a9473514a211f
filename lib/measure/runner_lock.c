/* A collective benchmark in lockstep: every rank of the context's
 * communicator runs the same benchmark through the same steps, and they
 * agree at each one. Each sample starts at a barrier and its time is the
 * maximum over the ranks (a collective ends when its last rank does), so
 * every rank holds the same samples, stops at the same sample and reaches
 * the same verdict; a step that fails on one rank fails on all, with that
 * rank's reason, rather than leaving the others waiting (docs/distributed.md,
 * "Collectives"). Without a communicator, or for any other op, each call
 * here is a no-op. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "measure/runner_internal.h"

mb_status_t mb__lock_setup(mb__run_t *r) {
  r->comm = mb_op_is_collective(r->op) ? r->ctx->comm : NULL;
  r->split = 0;
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  if (r->comm && mb_comm_info(r->comm, &info) != MB_OK) r->comm = NULL;
  if (!mb_op_is_collective(r->op)) return MB_OK;
  /* params.ranks as given: how many ranks the collective runs over (0:
   * all); the first that many, when fewer than the job has. */
  const int want = r->params.ranks;
  if (want > info.size)
    return mb__fail(MB_ERR_UNSUPPORTED,
                    "%s over %d ranks: this job has %d (%s)", r->op->name, want,
                    info.size,
                    r->comm ? "start it with more" : "no communicator");
  mb_op_params_t p = r->params;
  p.ranks = want ? want : info.size;
  p.rank = info.rank < p.ranks ? info.rank : 0;
  mb_status_t st = mb_op_resolve(r->op, &p);
  if (st != MB_OK) return st;
  r->params = p;
  r->split = want && want < info.size ? want : 0;
  return MB_OK;
}

static double wait_s(const mb__run_t *r);

void mb__lock_join(mb__run_t *r, mb_result_t *res) {
  if (!r->split || !r->comm) return;
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  mb_comm_info(r->comm, &info);
  const int member = info.rank < r->split;
  mb_comm_t *part = NULL;
  /* Collective over the job: every rank comes here for a collective. */
  const mb_status_t st =
      mb_comm_split(r->comm, member ? 0 : -1, info.rank, &part, wait_s(r));
  if (st != MB_OK || !member) {
    char why[512];
    if (st == MB_OK)
      snprintf(why, sizeof why,
               "rank %d is not one of the %d ranks this %s runs over (rank "
               "0's result holds it)",
               info.rank, r->split, r->op->name);
    else
      snprintf(why, sizeof why, "%s", mb_error_last());
    if (r->dev) mb__result_set_status(res, MB_RESULT_SKIPPED, why);
    r->dev = NULL;
    r->comm = NULL;
    return;
  }
  /* The backends reach it through the context (the host table's comm
   * calls): the context holds the part until mb__lock_leave. */
  r->world = r->ctx->comm;
  r->sub = part;
  r->comm = part;
  r->ctx->comm = part;
}

void mb__lock_leave(mb__run_t *r) {
  if (!r->sub) return;
  r->ctx->comm = r->world;
  mb_comm_destroy(r->sub);
  r->sub = NULL;
}

static double wait_s(const mb__run_t *r) {
  return mb_comm_wait(r->comm);
}

/* Status codes as agreed: 0 ok, 1 unsupported (skipped), 2 failed. */
static double code_of(mb_status_t st) {
  return st == MB_OK ? 0.0 : st == MB_ERR_UNSUPPORTED ? 1.0 : 2.0;
}

mb_status_t mb__lock_agree(mb__run_t *r, mb_status_t st, const char *step) {
  if (!r->comm) return st;
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  mb_comm_info(r->comm, &info);
  /* One number: the worst status, then the lowest rank that has it
   * (size - rank is largest there). */
  const double code = code_of(st), n = info.size;
  double v[1] = {code ? code * (n + 1) + (n - info.rank) : 0.0};
  mb_status_t cst =
      mb_comm_allreduce_f64(r->comm, v, 1, MB_REDUCE_MAX, wait_s(r));
  if (cst != MB_OK) return cst;
  if (v[0] == 0) return MB_OK;
  const double worst = floor(v[0] / (n + 1));
  const int from = info.size - (int)(v[0] - worst * (n + 1));
  /* That rank's reason, to every rank: the result kept (rank 0's) says
   * what happened where. */
  char why[512] = "";
  if (info.rank == from) snprintf(why, sizeof why, "%s", mb_error_last());
  if ((cst = mb_comm_bcast(r->comm, why, sizeof why, from, wait_s(r))) != MB_OK)
    return cst;
  why[sizeof why - 1] = '\0';
  if (info.rank == from) return st; /* its own message */
  return mb__fail(worst == 1.0 ? MB_ERR_UNSUPPORTED : MB_ERR_BACKEND,
                  "rank %d of %d could not %s: %s", from, info.size, step, why);
}

mb_status_t mb__lock_barrier(mb__run_t *r) {
  return r->comm ? mb_comm_barrier(r->comm, wait_s(r)) : MB_OK;
}

mb_status_t mb__lock_time(mb__run_t *r, mb_status_t st, double *ns) {
  if (!r->comm) return st;
  /* A sample this rank's timer dropped (NaN) counts as infinitely long,
   * so every rank drops it; a failure here fails every rank. */
  double v[2] = {st != MB_OK  ? 0.0
                 : isnan(*ns) ? INFINITY
                              : *ns,
                 st != MB_OK ? 1.0 : 0.0};
  mb_status_t cst =
      mb_comm_allreduce_f64(r->comm, v, 2, MB_REDUCE_MAX, wait_s(r));
  if (cst != MB_OK || st != MB_OK) return st != MB_OK ? st : cst;
  if (v[1] != 0)
    return mb__fail(MB_ERR_BACKEND, "another rank failed while timing");
  *ns = isinf(v[0]) ? NAN : v[0];
  return MB_OK;
}

int mb__lock_any(mb__run_t *r, int local) {
  if (!r->comm) return local;
  double v[1] = {local ? 1.0 : 0.0};
  /* Unreachable partners end the process (the watchdog); a failed call
   * stops here rather than going on alone. */
  if (mb_comm_allreduce_f64(r->comm, v, 1, MB_REDUCE_MAX, wait_s(r)) != MB_OK)
    return 1;
  return v[0] != 0;
}

uint32_t mb__lock_batch(mb__run_t *r, uint32_t batch) {
  if (!r->comm) return batch;
  double v[1] = {(double)batch};
  if (mb_comm_allreduce_f64(r->comm, v, 1, MB_REDUCE_MAX, wait_s(r)) != MB_OK)
    return batch;
  return (uint32_t)v[0];
}

void mb__lock_correctness(mb__run_t *r, mb_correctness_t *c) {
  if (!r->comm) return;
  double v[5] = {c->pass ? 0.0 : 1.0, c->max_abs_err, c->max_rel_err,
                 c->max_err_ratio, -c->sqnr_db};
  for (int i = 1; i < 5; i++)
    if (isnan(v[i])) v[i] = INFINITY;
  if (mb_comm_allreduce_f64(r->comm, v, 5, MB_REDUCE_MAX, wait_s(r)) != MB_OK)
    return;
  c->pass = v[0] == 0;
  c->max_abs_err = v[1];
  c->max_rel_err = v[2];
  c->max_err_ratio = v[3];
  c->sqnr_db = -v[4];
}

mb_status_t mb__lock_notes(const mb__run_t *r, mb_result_t *res) {
  if (!mb_op_is_collective(r->op)) return MB_OK;
  const mb_coll_kind_t kind = (mb_coll_kind_t)(r->op->coll - 1);
  /* nccl-tests' bus bandwidth: the algbw (the result's GB/s) times the
   * collective's factor for this many ranks (docs/distributed.md). */
  const double f = mb__coll_bus_factor(kind, r->params.ranks);
  mb_status_t st =
      mb__result_add_note(res, "busbw_gbps", NULL, res->derived.gbps * f);
  if (st == MB_OK)
    st = mb__result_add_note(res, "ranks", NULL, (double)r->params.ranks);
  /* The topology as far as the communicator knows it: its transport (the
   * data may move by another library, NCCL's, which notes itself), and
   * how many ranks share this host (shared memory between them; the rest
   * are across the network). The device's own facts (hwloc's packages and
   * caches, a GPU's links) are in the result's device environment. */
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  if (st == MB_OK && r->comm && mb_comm_info(r->comm, &info) == MB_OK) {
    st = mb__result_add_note(res, "communicator", info.impl, 0.0);
    if (st == MB_OK)
      st = mb__result_add_note(res, "ranks_on_host", NULL,
                               (double)info.local_size);
  }
  return st;
}
