/* mbench run --config under an MPI launcher: the plan split over the ranks
 * (mb_plan_assign), each rank running its entries on the device of its
 * node-local rank and streaming them to its own results file, then rank 0
 * gathering every result and writing the outputs once, in plan order.
 * docs/distributed.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* How long a rank waits for the others at a step that does not include
 * anyone's benchmarks (agreeing on the plan, the final gather once all
 * have finished): they are all a second away or gone. */
#define QUICK_WAIT_S 120.0

/* FNV-1a over bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(1099511628211);
  return h;
}

/* What must be the same on every rank: the command line and the config
 * file's bytes. */
static uint64_t command_hash(const cli_opts_t *o, int argc, char **argv) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (int i = 0; i < argc; i++) h = fnv(h, argv[i], strlen(argv[i]) + 1);
  FILE *f = fopen(o->config, "rb");
  if (f) {
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) h = fnv(h, buf, n);
    fclose(f);
  }
  return h;
}

int cli_shard_agree(const char *cmd, mb_comm_t *comm, int ok,
                    const char *what) {
  double v[1] = {ok ? 0.0 : 1.0};
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  mb_comm_info(comm, &info);
  if (mb_comm_allreduce_f64(comm, v, 1, MB_REDUCE_SUM, QUICK_WAIT_S) != MB_OK)
    return cli_error(cmd, "MPI: %s", mb_error_last());
  if (v[0] == 0) return 0;
  if (ok)
    cli_error(cmd,
              "rank %d of %d: %g rank%s could not %s (%s message%s above); "
              "nothing ran",
              info.rank, info.size, v[0], v[0] == 1 ? "" : "s", what,
              v[0] == 1 ? "its" : "their", v[0] == 1 ? "" : "s");
  return -1;
}

int cli_shard_same_command(const char *cmd, mb_comm_t *comm,
                           const cli_opts_t *o, int argc, char **argv) {
  const uint64_t h = command_hash(o, argc, argv);
  /* Two 32-bit halves: a double holds each exactly. */
  double lo[2] = {(double)(h & 0xffffffffu), (double)(h >> 32)};
  double hi[2] = {lo[0], lo[1]};
  if (mb_comm_allreduce_f64(comm, lo, 2, MB_REDUCE_MIN, QUICK_WAIT_S) !=
          MB_OK ||
      mb_comm_allreduce_f64(comm, hi, 2, MB_REDUCE_MAX, QUICK_WAIT_S) != MB_OK)
    return cli_error(cmd, "MPI: %s", mb_error_last());
  if (lo[0] == hi[0] && lo[1] == hi[1]) return 0;
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  mb_comm_info(comm, &info);
  return cli_error(cmd,
                   "rank %d of %d: the ranks were not given the same "
                   "command and config file (%s here): every rank must run "
                   "the same mbench run --config, with the same file",
                   info.rank, info.size, o->config);
}

/* ---- running this rank's entries --------------------------------------- */

typedef struct shard_runner {
  const cli_runner_t *inner;
  int device; /* the node-local rank's device; -1: the entry's */
} shard_runner_t;

/* The entry on this rank's device: device local_rank of the entry's
 * backend, when the backend has that many (a CPU has one: every rank
 * shares it). */
static mb_status_t run_here(void *user, mb_context_t *ctx, size_t index,
                            const mb_bench_spec_t *spec, mb_result_t **out) {
  const shard_runner_t *sr = user;
  mb_bench_spec_t s = *spec;
  if (sr->device >= 0 && spec->backend) {
    mb_device_t *dev;
    if (mb_device_find(ctx, spec->backend, (uint32_t)sr->device, &dev) == MB_OK)
      s.device = (uint32_t)sr->device;
  }
  return cli_bench_runner((void *)sr->inner, ctx, index, &s, out);
}

/* "index length\n" then the JSON, for every result this rank made. */
typedef struct blob {
  char *data;
  size_t len, cap;
} blob_t;

static int blob_add(blob_t *b, size_t index, const char *json) {
  char head[64];
  const size_t jl = strlen(json);
  int hl = snprintf(head, sizeof head, "%zu %zu\n", index, jl);
  if (b->len + (size_t)hl + jl + 1 > b->cap) {
    size_t cap = (b->cap ? 2 * b->cap : 65536) + (size_t)hl + jl + 1;
    char *d = realloc(b->data, cap);
    if (!d) return -1;
    b->data = d, b->cap = cap;
  }
  memcpy(b->data + b->len, head, (size_t)hl);
  memcpy(b->data + b->len + hl, json, jl);
  b->len += (size_t)hl + jl;
  b->data[b->len] = '\0';
  return 0;
}

/* Rank 0: the gathered blobs back into results, by plan index. */
static int unpack(const char *cmd, const char *data, size_t len,
                  mb_result_t **by_index, size_t n) {
  const char *p = data, *end = data + len;
  while (p < end) {
    size_t index, jl;
    int used = 0;
    if (sscanf(p, "%zu %zu\n%n", &index, &jl, &used) != 2 || used <= 0 ||
        (size_t)(end - p) < (size_t)used + jl || index >= n)
      return cli_error(cmd, "MPI: a rank's results arrived damaged");
    p += used;
    char *json = strndup(p, jl);
    mb_result_t *r = NULL;
    if (!json || mb_result_from_json(json, &r) != MB_OK) {
      free(json);
      return cli_error(cmd, "MPI: a rank's result cannot be read: %s",
                       mb_error_last());
    }
    free(json);
    mb_result_destroy(by_index[index]);
    by_index[index] = r;
    p += jl;
  }
  return 0;
}

int cli_run_sharded(const cli_shard_t *sh, mb_context_t *ctx, mb_plan_t *plan,
                    const size_t *order, cli_emit_fn emit, void *emit_user) {
  const char *cmd = "run";
  const size_t n = mb_plan_count(plan);
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  mb_comm_info(sh->comm, &info);
  size_t *owner = calloc(n ? n : 1, sizeof *owner);
  mb_result_t **mine = calloc(n ? n : 1, sizeof *mine);
  blob_t blob = {NULL, 0, 0};
  int rc = EXIT_OK, failed = 0;
  if (!owner || !mine) {
    free(owner), free(mine);
    return cli_error(cmd, "out of memory");
  }
  mb_plan_assign(plan, (size_t)info.size, owner);
  /* Who owns what, on disk before anything runs (shard_manifest.c). */
  if (sh->output && cli_shard_manifest(cmd, sh, plan, owner, QUICK_WAIT_S) != 0)
    failed = 1;
  const shard_runner_t sr = {sh->runner, info.local_rank};
  cli_out_t stream;
  const int streaming =
      sh->stream_path &&
      cli_out_open(cmd, ctx,
                   &(mb_report_options_t){
                       sizeof(mb_report_options_t), MB_FORMAT_JSON,
                       sh->stream_path, NULL, sh->runner->argc,
                       (const char *const *)sh->runner->argv, NULL, 0u},
                   NULL, &stream) == 0;
  if (sh->stream_path && !streaming) failed = 1;
  /* Every rank passes every barrier and every collective's decision,
   * whatever happened to it: a rank that stopped running (an error,
   * Ctrl-C) must not leave the others waiting for it until --rank-wait. */
  int stopped = failed;
  for (size_t k = 0; k < n; k++) {
    const size_t i = order[k];
    stopped |= cli_interrupted();
    /* A collective runs on every rank (rank 0's result is the one kept),
     * so only when none has stopped: every rank, a stopped one too, says
     * whether it has before each, and a stopped rank goes through the
     * whole plan (running nothing) so that nobody waits for it there. */
    const int every = owner[i] == MB_PLAN_EVERY_RANK;
    int go = !stopped && (every || owner[i] == (size_t)info.rank);
    if (every) {
      double v[1] = {stopped ? 1.0 : 0.0};
      if (mb_comm_allreduce_f64(sh->comm, v, 1, MB_REDUCE_MAX, sh->wait_s) !=
          MB_OK)
        failed = stopped = 1;
      go = !stopped && v[0] == 0;
    }
    if (go) {
      mb_result_t *r = NULL;
      if (mb_plan_run_with(ctx, plan, i, run_here, (void *)&sr, &r) != MB_OK) {
        mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
        mb_plan_entry(plan, i, &e);
        cli_error(cmd, "%s: %s", e.name, mb_error_last());
        rc = EXIT_USAGE;
        failed = stopped = 1;
      } else if (cli_result_unfinished(r)) { /* Ctrl-C: not written */
        mb_result_destroy(r);
        stopped = 1;
      } else {
        mb_placement_t place = {sizeof place, info.rank, info.size,
                                info.local_rank, ""};
        snprintf(place.host, sizeof place.host, "%s", info.host);
        mb_result_set_placement(r, &place);
        if (cli_result_failed(r) && rc == EXIT_OK) rc = EXIT_BENCH_FAILED;
        const char *json = mb_result_json(r);
        /* Every rank ran a collective; rank 0's result is the one kept,
         * streamed and gathered (the others' say the same). */
        const int keep = !every || info.rank == 0;
        if ((keep && streaming && cli_out_add(cmd, &stream, r) != 0) || !json ||
            (keep && blob_add(&blob, i, json) != 0))
          failed = stopped = 1;
        mine[i] = r;
      }
    }
    /* Exclusive: nobody starts the next benchmark before this one ends,
     * so no two share the machine; its owner may take up to the wait. */
    if (sh->exclusive && mb_comm_barrier(sh->comm, sh->wait_s) != MB_OK)
      failed = stopped = 1;
  }
  if (streaming && cli_out_close(cmd, &stream) < 0) failed = 1;
  /* Every rank reaches the gather, whatever happened here. */
  void *all = NULL;
  size_t *sizes = calloc((size_t)info.size, sizeof *sizes);
  mb_status_t st = sizes ? mb_comm_gather(sh->comm, blob.data, blob.len, 0,
                                          &all, sizes, sh->wait_s)
                         : MB_ERR_NO_MEMORY;
  if (st != MB_OK) {
    cli_error(cmd, "MPI: gathering the results: %s", mb_error_last());
    failed = 1;
  }
  if (info.rank == 0 && st == MB_OK) {
    size_t total = 0;
    for (int r = 0; r < info.size; r++) total += sizes[r];
    if (unpack(cmd, all, total, mine, n) != 0) failed = 1;
    for (size_t i = 0; i < n && !failed; i++)
      if (mine[i] && emit(emit_user, i, mine[i]) != 0) failed = 1;
  }
  free(all), free(sizes), free(blob.data), free(owner);
  for (size_t i = 0; i < n; i++) mb_result_destroy(mine[i]);
  free(mine);
  if (failed && rc < EXIT_USAGE) rc = EXIT_USAGE;
  /* The job's status: the worst of any rank's. */
  double worst[1] = {rc};
  if (mb_comm_allreduce_f64(sh->comm, worst, 1, MB_REDUCE_MAX, QUICK_WAIT_S) ==
      MB_OK)
    rc = (int)worst[0];
  return rc;
}
