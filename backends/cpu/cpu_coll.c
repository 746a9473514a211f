/* CPU backend — the collectives (all_reduce, ..., sendrecv) on host
 * memory, through the context's communicator's own data plane (the host
 * table's comm_collective: MPI calls under libmicrobench_mpi). The module
 * never links MPI; each run is one call of the communicator. Implementation
 * name "mpi", the data plane mbench uses; the transport and its version
 * are a note on the result. */
#include <stdlib.h>

#include "cpu_internal.h"

typedef struct coll_k {
  mb_host_api_t *host;
  mb_coll_t c;
} coll_k_t;

/* What MPI cannot do as the ops define it (mpi_coll.c refuses it too):
 * declined before anything runs, so the benchmark is skipped with why. */
static mb_status_t supports(void *bstate, uint32_t dev, const mb_op_params_t *p,
                            const char **why, mb_coll_kind_t kind) {
  (void)bstate, (void)dev;
  const int in_place = (p->flags & MB_PARAM_IN_PLACE) != 0;
  if (kind == MB_COLL_REDUCE_SCATTER && in_place) {
    *why =
        "mpi: reduce_scatter in place: MPI_IN_PLACE leaves the result at the "
        "start of the buffer, the op (as NCCL) at the rank's block; out of "
        "place is the same MPI call";
    return MB_ERR_UNSUPPORTED;
  }
  if (kind == MB_COLL_BROADCAST && !in_place) {
    *why =
        "mpi: broadcast out of place: MPI_Bcast works in one buffer (a "
        "copy on the root would be timed with it); run it in_place";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

static mb_status_t prepare(void *bstate, const mb_kernel_call_t *call,
                           void **kstate, mb_coll_kind_t kind) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  if (!MB_HOST_HAS_COMM(&st->host)) {
    MB_CPU_ERROR(st, "cpu/mpi: the library has no communicator calls");
    return MB_ERR_UNSUPPORTED;
  }
  mb_status_t s = st->host.comm_info(st->host.host, &info);
  if (s != MB_OK) return s; /* no communicator: unsupported, with why */
  coll_k_t *k = calloc(1, sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/mpi: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  const int in_place = (p->flags & MB_PARAM_IN_PLACE) != 0;
  k->host = &st->host;
  k->c = (mb_coll_t)MB_COLL_INIT;
  k->c.kind = kind;
  k->c.dtype = p->dtype;
  k->c.op = (mb_reduce_op_t)p->reduce_op;
  k->c.send = in_place ? NULL : call->in[0];
  k->c.recv = call->out[0];
  k->c.count = (size_t)p->shape[0];
  k->c.root = p->root;
  /* sendrecv's ring: to the next rank, from the previous. */
  k->c.peer_send = (info.rank + 1) % info.size;
  k->c.peer_recv = (info.rank + info.size - 1) % info.size;
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_coll_run(void *kstate, const mb_kernel_call_t *call) {
  coll_k_t *k = kstate;
  (void)call;
  return k->host->comm_collective(k->host->host, &k->c);
}

void mb__cpu_coll_release(void *kstate) {
  free(kstate);
}

/* One supports/prepare pair per collective: the table's hooks carry no
 * op. */
#define COLL_HOOKS(E, name_)                                                   \
  mb_status_t mb__cpu_coll_##E##_supports(                                     \
      void *bstate, uint32_t dev, const mb_op_params_t *p, const char **why) { \
    return supports(bstate, dev, p, why, MB_COLL_##E);                         \
  }                                                                            \
  mb_status_t mb__cpu_coll_##E##_prepare(                                      \
      void *bstate, const mb_kernel_call_t *call, void **kstate) {             \
    return prepare(bstate, call, kstate, MB_COLL_##E);                         \
  }
MB_COLL_MAP(COLL_HOOKS)
