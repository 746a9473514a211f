/* GPU host layer — the collectives through NCCL (CUDA) or RCCL (HIP),
 * gpu_ccl.h. Each run is the one library call of its name on the device's
 * stream, laid out as nccl-tests does it; all_to_all and sendrecv are
 * grouped ncclSend/ncclRecv (NCCL's own all-to-all is no single call).
 *
 * The library is loaded when a collective is first asked for (dlopen by
 * soname, every entry point through dlsym into a table), so a module whose
 * machine has none still loads and each collective is skipped with
 * "NCCL not loaded: <why>". The communicator is made at a device's first
 * collective and kept for the backend's life: the rank and size are the
 * context's communicator's (host->comm_info; without one a single rank,
 * NCCL on one GPU), rank 0's unique id goes to every rank through
 * host->comm_bcast, then ncclCommInitRank on the benchmark's device, on a
 * thread of its own and waited for at most the communicator's wait
 * (gpu_ccl_init.c). Every rank reaches that point at the same benchmark:
 * collectives run on all ranks in lockstep (lib/measure/runner_lock.c). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ccl.h"
#include "gpu_ccl_abi.h"
#include "gpu_ccl_init.h"
#include "gpu_host_dlopen.h"

/* ---- the ABI subset against the vendor's header, where there is one ----- */

#if defined(MB_GPU_HIP)
#if defined(__has_include) && __has_include(<rccl/rccl.h>)
#include <rccl/rccl.h>
#define MB_CCL_CHECK_HEADER 1
#endif
#elif !defined(MB_GPU_EMU)
#if defined(__has_include) && __has_include(<nccl.h>)
#include <nccl.h>
#define MB_CCL_CHECK_HEADER 1
#endif
#endif
#ifdef MB_CCL_CHECK_HEADER
#define MB__CCL_SAME(ours, theirs) \
  _Static_assert((ours) == (theirs), #ours " is not " #theirs)
MB__CCL_SAME(MB_CCL_SUCCESS, ncclSuccess);
MB__CCL_SAME(MB_CCL_INVALID_ARGUMENT, ncclInvalidArgument);
MB__CCL_SAME(MB_CCL_INVALID_USAGE, ncclInvalidUsage);
MB__CCL_SAME(MB_CCL_INT32, ncclInt32);
MB__CCL_SAME(MB_CCL_FLOAT16, ncclFloat16);
MB__CCL_SAME(MB_CCL_FLOAT32, ncclFloat32);
MB__CCL_SAME(MB_CCL_BFLOAT16, ncclBfloat16);
MB__CCL_SAME(MB_CCL_SUM, ncclSum);
MB__CCL_SAME(MB_CCL_PROD, ncclProd);
MB__CCL_SAME(MB_CCL_MAX, ncclMax);
MB__CCL_SAME(MB_CCL_MIN, ncclMin);
MB__CCL_SAME(sizeof(mb_ccl_unique_id_t), sizeof(ncclUniqueId));
MB__CCL_SAME(sizeof(mb_ccl_comm_t), sizeof(ncclComm_t));
MB__CCL_SAME(sizeof(mb_ccl_result_t), sizeof(ncclResult_t));
MB__CCL_SAME(sizeof(mb_ccl_type_t), sizeof(ncclDataType_t));
MB__CCL_SAME(sizeof(mb_ccl_redop_t), sizeof(ncclRedOp_t));
#undef MB__CCL_SAME
#endif

/* ---- the library ----------------------------------------------------------
 */

typedef mb_ccl_result_t ccl_res;
typedef struct ccl_lib {
  void *dl; /* first: mb__gpuh_load's contract */
  ccl_res (*get_version)(int *version);
  ccl_res (*get_unique_id)(mb_ccl_unique_id_t *id);
  ccl_res (*comm_init_rank)(mb_ccl_comm_t *comm, int nranks,
                            mb_ccl_unique_id_t id, int rank);
  ccl_res (*comm_destroy)(mb_ccl_comm_t comm);
  const char *(*error_string)(ccl_res r);
  ccl_res (*all_reduce)(const void *send, void *recv, size_t count,
                        mb_ccl_type_t type, mb_ccl_redop_t op,
                        mb_ccl_comm_t comm, mb_gpu_stream_t s);
  ccl_res (*all_gather)(const void *send, void *recv, size_t send_count,
                        mb_ccl_type_t type, mb_ccl_comm_t comm,
                        mb_gpu_stream_t s);
  ccl_res (*reduce_scatter)(const void *send, void *recv, size_t recv_count,
                            mb_ccl_type_t type, mb_ccl_redop_t op,
                            mb_ccl_comm_t comm, mb_gpu_stream_t s);
  ccl_res (*broadcast)(const void *send, void *recv, size_t count,
                       mb_ccl_type_t type, int root, mb_ccl_comm_t comm,
                       mb_gpu_stream_t s);
  ccl_res (*reduce)(const void *send, void *recv, size_t count,
                    mb_ccl_type_t type, mb_ccl_redop_t op, int root,
                    mb_ccl_comm_t comm, mb_gpu_stream_t s);
  ccl_res (*send)(const void *buf, size_t count, mb_ccl_type_t type, int peer,
                  mb_ccl_comm_t comm, mb_gpu_stream_t s);
  ccl_res (*recv)(void *buf, size_t count, mb_ccl_type_t type, int peer,
                  mb_ccl_comm_t comm, mb_gpu_stream_t s);
  ccl_res (*group_start)(void);
  ccl_res (*group_end)(void);
} ccl_lib_t;

#define SYM(name, field) \
  { name, offsetof(ccl_lib_t, field) }
static const mb_gpuh_sym_t k_syms[] = {
    SYM("ncclGetVersion", get_version),
    SYM("ncclGetUniqueId", get_unique_id),
    SYM("ncclCommInitRank", comm_init_rank),
    SYM("ncclCommDestroy", comm_destroy),
    SYM("ncclGetErrorString", error_string),
    SYM("ncclAllReduce", all_reduce),
    SYM("ncclAllGather", all_gather),
    SYM("ncclReduceScatter", reduce_scatter),
    SYM("ncclBroadcast", broadcast),
    SYM("ncclReduce", reduce),
    SYM("ncclSend", send),
    SYM("ncclRecv", recv),
    SYM("ncclGroupStart", group_start),
    SYM("ncclGroupEnd", group_end),
};
#undef SYM
static const char *const k_sonames[] = {MB_CCL_SONAME};

/* A device's communicator over a number of ranks, made at its first
 * collective over that many. A collective over fewer ranks than the job
 * (a `ranks` sweep) runs on the first k ranks, so a rank count names one
 * set of ranks: each keeps its communicator for the rest of the run, and
 * every rank of a set reuses (or makes) the same one together. */
typedef struct ccl_dev {
  mb_ccl_comm_t comm;
  int rank, size;
} ccl_dev_t;
#define CCL_SIZES 8 /* rank counts per device in one run */

struct mb_gpuh_ccl {
  ccl_lib_t *lib; /* NULL: not loaded, `why` says why */
  int stuck;      /* an init was given up on: its thread may still be in
                     the library, which then stays loaded */
  char why[700];
  char file[512];
  char version[64];
  int version_code;
  ccl_dev_t (*devs)[CCL_SIZES]; /* per device of the backend */
};

/* NCCL_VERSION(X, Y, Z): X*1000 + Y*100 + Z before 2.9, X*10000 + Y*100 + Z
 * from 2.9 on (nccl.h); RCCL numbers its versions as NCCL does. */
static void version_text(int code, char *buf, size_t cap) {
  const int big = code >= 10000;
  snprintf(buf, cap, "%d.%d.%d", big ? code / 10000 : code / 1000,
           big ? code % 10000 / 100 : code % 1000 / 100, code % 100);
}

/* The library's state, loading it at the first call; NULL only when no
 * memory is left for it. */
static struct mb_gpuh_ccl *ccl_of(mb_gpuh_state_t *st) {
  if (st->ccl) return st->ccl;
  struct mb_gpuh_ccl *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  static const mb_gpuh_lib_t spec =
      MB_GPUH_LIB(MB_CCL_NAME, MB_CCL_ENV, k_sonames, k_syms, ccl_lib_t);
  char why[600] = "";
#if defined(MB_GPU_EMU)
  /* The emulated GPU's memory is host memory, which a real NCCL cannot
   * use: it loads only the file the variable names (the tests' fake). */
  const char *named = getenv(MB_CCL_ENV);
  if (!named || !*named)
    snprintf(why, sizeof why,
             "the emulated GPU loads only the library %s names (a real %s "
             "cannot use its host memory), and it is unset",
             MB_CCL_ENV, MB_CCL_NAME);
  else
#endif
    c->lib =
        mb__gpuh_load(&spec, NULL, c->file, sizeof c->file, why, sizeof why);
  if (!c->lib) {
    snprintf(c->why, sizeof c->why, "%s not loaded: %s", MB_CCL_NAME, why);
  } else if (c->lib->get_version(&c->version_code) != MB_CCL_SUCCESS) {
    snprintf(c->version, sizeof c->version, "unknown (ncclGetVersion failed)");
    c->version_code = 0;
  } else {
    version_text(c->version_code, c->version, sizeof c->version);
  }
  if (c->lib && st->num_devices &&
      !(c->devs = calloc(st->num_devices, sizeof *c->devs))) {
    dlclose(c->lib->dl);
    free(c->lib);
    free(c);
    return NULL;
  }
  st->ccl = c;
  if (c->lib)
    MB_GPUH_LOG(st, MB_LOG_DEBUG, "%s: %s %s loaded from %s", st->vendor->name,
                MB_CCL_NAME, c->version, c->file);
  return c;
}

void mb__gpuh_ccl_close(mb_gpuh_state_t *st) {
  struct mb_gpuh_ccl *c = st->ccl;
  if (!c) return;
  for (uint32_t i = 0; c->devs && i < st->num_devices; i++)
    for (int k = 0; k < CCL_SIZES; k++) {
      if (!c->devs[i][k].comm) continue;
      mb_gpuh_device_t *d = mb__gpuh_device(st, i);
      if (d && mb_gpu_set_device(d->ordinal) != mb_gpu_success)
        (void)mb_gpu_get_last_error();
      c->lib->comm_destroy(c->devs[i][k].comm);
    }
  free(c->devs);
  if (c->lib) {
    if (!c->stuck) dlclose(c->lib->dl);
    free(c->lib);
  }
  free(c);
  st->ccl = NULL;
}

/* ---- the mappings ----------------------------------------------------------
 */

/* The ops' dtypes as the library's, with the version that brought each. */
typedef struct ccl_type {
  mb_dtype_t dtype;
  mb_ccl_type_t type;
  size_t bytes;
  int since; /* version code; 0: always */
  const char *since_text;
} ccl_type_t;
static const ccl_type_t k_types[] = {
    {MB_DTYPE_F32, MB_CCL_FLOAT32, 4, 0, ""},
    {MB_DTYPE_F16, MB_CCL_FLOAT16, 2, 0, ""},
    {MB_DTYPE_BF16, MB_CCL_BFLOAT16, 2, 21000, "2.10"},
    {MB_DTYPE_I32, MB_CCL_INT32, 4, 0, ""},
};

static const ccl_type_t *type_of(mb_dtype_t dt) {
  for (size_t i = 0; i < sizeof k_types / sizeof *k_types; i++)
    if (k_types[i].dtype == dt) return &k_types[i];
  return NULL;
}

static const mb_ccl_redop_t k_redops[MB_REDUCE_COUNT] = {
    [MB_REDUCE_SUM] = MB_CCL_SUM,
    [MB_REDUCE_PROD] = MB_CCL_PROD,
    [MB_REDUCE_MIN] = MB_CCL_MIN,
    [MB_REDUCE_MAX] = MB_CCL_MAX,
};

/* ---- a kernel --------------------------------------------------------------
 */

typedef struct coll_k coll_k_t;
typedef ccl_res (*ccl_call_fn)(const coll_k_t *k);

struct coll_k {
  mb_gpuh_state_t *st;
  const ccl_lib_t *lib;
  ccl_call_fn call;
  const char *call_name;
  mb_ccl_comm_t comm;
  mb_gpu_stream_t stream;
  const void *send;
  void *recv;
  size_t count; /* as the library call takes it */
  size_t bytes; /* of one element */
  mb_ccl_type_t type;
  mb_ccl_redop_t op;
  int root, rank, size;
  char version[64], file[512];
};

static ccl_res c_all_reduce(const coll_k_t *k) {
  return k->lib->all_reduce(k->send, k->recv, k->count, k->type, k->op, k->comm,
                            k->stream);
}
static ccl_res c_all_gather(const coll_k_t *k) {
  return k->lib->all_gather(k->send, k->recv, k->count, k->type, k->comm,
                            k->stream);
}
static ccl_res c_reduce_scatter(const coll_k_t *k) {
  return k->lib->reduce_scatter(k->send, k->recv, k->count, k->type, k->op,
                                k->comm, k->stream);
}
static ccl_res c_broadcast(const coll_k_t *k) {
  return k->lib->broadcast(k->send, k->recv, k->count, k->type, k->root,
                           k->comm, k->stream);
}
static ccl_res c_reduce(const coll_k_t *k) {
  return k->lib->reduce(k->send, k->recv, k->count, k->type, k->op, k->root,
                        k->comm, k->stream);
}

/* A group's calls: the group is always closed, also after a failed call
 * (NCCL's group state is per thread); the first error is the result. */
static ccl_res group_end(const coll_k_t *k, ccl_res first) {
  const ccl_res e = k->lib->group_end();
  return first != MB_CCL_SUCCESS ? first : e;
}

/* Block r of send to rank r, block r of recv from rank r (nccl-tests'
 * alltoall). */
static ccl_res c_all_to_all(const coll_k_t *k) {
  ccl_res e = k->lib->group_start();
  if (e != MB_CCL_SUCCESS) return e;
  const size_t block = k->count * k->bytes;
  for (int r = 0; r < k->size && e == MB_CCL_SUCCESS; r++) {
    e = k->lib->send((const char *)k->send + (size_t)r * block, k->count,
                     k->type, r, k->comm, k->stream);
    if (e == MB_CCL_SUCCESS)
      e = k->lib->recv((char *)k->recv + (size_t)r * block, k->count, k->type,
                       r, k->comm, k->stream);
  }
  return group_end(k, e);
}

/* To the next rank, from the previous (nccl-tests' sendrecv): a ring. */
static ccl_res c_sendrecv(const coll_k_t *k) {
  ccl_res e = k->lib->group_start();
  if (e != MB_CCL_SUCCESS) return e;
  e = k->lib->send(k->send, k->count, k->type, (k->rank + 1) % k->size, k->comm,
                   k->stream);
  if (e == MB_CCL_SUCCESS)
    e = k->lib->recv(k->recv, k->count, k->type,
                     (k->rank + k->size - 1) % k->size, k->comm, k->stream);
  return group_end(k, e);
}

/* Each collective: its call, and how its count and in-place pointers
 * derive from the op's N (comm.h's layout, which is NCCL's). */
typedef struct kind {
  ccl_call_fn call;
  const char *call_name;
  int per_rank;      /* the call takes N / size (a block), not N */
  int send_at_block; /* in place: send is recv's block `rank` (all_gather) */
  int recv_at_block; /* in place: recv is its own block `rank`, send all of
                        it (reduce_scatter) */
} kind_t;

static const kind_t k_kinds[MB_COLL_COUNT] = {
    [MB_COLL_ALL_REDUCE] = {c_all_reduce, "ncclAllReduce", 0, 0, 0},
    [MB_COLL_ALL_GATHER] = {c_all_gather, "ncclAllGather", 1, 1, 0},
    [MB_COLL_REDUCE_SCATTER] = {c_reduce_scatter, "ncclReduceScatter", 1, 0, 1},
    [MB_COLL_ALL_TO_ALL] = {c_all_to_all, "ncclSend/ncclRecv (grouped)", 1, 0,
                            0},
    [MB_COLL_BROADCAST] = {c_broadcast, "ncclBroadcast", 0, 0, 0},
    [MB_COLL_REDUCE] = {c_reduce, "ncclReduce", 0, 0, 0},
    [MB_COLL_SENDRECV] = {c_sendrecv, "ncclSend/ncclRecv (grouped)", 0, 0, 0},
};

static mb_status_t supports(void *bstate, uint32_t dev, const mb_op_params_t *p,
                            const char **why, mb_coll_kind_t kind) {
  mb_gpuh_state_t *st = bstate;
  (void)dev, (void)kind;
  const struct mb_gpuh_ccl *c = ccl_of(st);
  if (!c) {
    *why = MB_CCL_IMPL ": out of host memory";
    return MB_ERR_UNSUPPORTED;
  }
  if (!c->lib) {
    *why = c->why;
    return MB_ERR_UNSUPPORTED;
  }
  const ccl_type_t *t = type_of(p->dtype);
  if (!t) {
    *why = st->host.reason(st->host.host, "%s: no %s type for %s", MB_CCL_IMPL,
                           MB_CCL_NAME, st->host.dtype_name(p->dtype));
    return MB_ERR_UNSUPPORTED;
  }
  if (c->version_code && c->version_code < t->since) {
    *why = st->host.reason(st->host.host, "%s: %s %s has no %s (%s added it)",
                           MB_CCL_IMPL, MB_CCL_NAME, c->version,
                           st->host.dtype_name(p->dtype), t->since_text);
    return MB_ERR_UNSUPPORTED;
  }
  if (p->reduce_op >= MB_REDUCE_COUNT) {
    *why = MB_CCL_IMPL ": a reduction this module does not know";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

/* `what` failed with r: the library's own words. */
static mb_status_t ccl_fail(mb_gpuh_state_t *st, const ccl_lib_t *lib,
                            const char *what, ccl_res r) {
  st->host.set_error("%s: %s: %s (%d)", MB_CCL_IMPL, what,
                     lib->error_string ? lib->error_string(r) : "?", r);
  return MB_ERR_BACKEND;
}

/* What rank 0 sends the others: the id, or that it has none (the others
 * then fail too instead of waiting for a rank that gave up). */
typedef struct id_msg {
  int32_t ok;
  mb_ccl_unique_id_t id;
} id_msg_t;

static int set_device(int ordinal) {
  return mb_gpu_set_device(ordinal) == mb_gpu_success;
}

/* ncclCommInitRank on device d, waiting for it at most the communicator's
 * wait (gpu_ccl_init.c). */
static mb_status_t init_rank(mb_gpuh_state_t *st, struct mb_gpuh_ccl *c,
                             const mb_gpuh_device_t *d, int size,
                             mb_ccl_unique_id_t id, int rank,
                             mb_ccl_comm_t *comm) {
  const double wait_s = MB_HOST_HAS_COMM_WAIT(&st->host)
                            ? st->host.comm_wait(st->host.host)
                            : 3600.0;
  const mb_ccl_init_t a = {c->lib->comm_init_rank,
                           c->lib->comm_destroy,
                           set_device,
                           d->ordinal,
                           size,
                           rank,
                           id};
  ccl_res r = MB_CCL_SUCCESS;
  switch (mb__gpuh_ccl_init_bounded(&a, wait_s, comm, &r)) {
    case MB_CCL_WAIT_RETURNED:
      return r == MB_CCL_SUCCESS ? MB_OK
                                 : ccl_fail(st, c->lib, "ncclCommInitRank", r);
    case MB_CCL_WAIT_TIMED_OUT:
      c->stuck = 1;
      st->host.set_error(
          "%s: ncclCommInitRank (rank %d of %d, device %d) did not return "
          "within %g s, the communicator's wait (--rank-wait): a rank that "
          "never joined, or a network %s cannot reach; it is left waiting "
          "and %s stays loaded",
          MB_CCL_IMPL, rank, size, d->ordinal, wait_s, MB_CCL_NAME,
          MB_CCL_NAME);
      return MB_ERR_BACKEND;
    case MB_CCL_WAIT_NO_DEVICE:
      st->host.set_error(
          "%s: could not make device %d current for "
          "ncclCommInitRank",
          MB_CCL_IMPL, d->ordinal);
      return MB_ERR_BACKEND;
    default:
      st->host.set_error("%s: no thread for ncclCommInitRank", MB_CCL_IMPL);
      return MB_ERR_NO_MEMORY;
  }
}

/* The device's communicator, made now if it has none. */
static mb_status_t comm_of(mb_gpuh_state_t *st, struct mb_gpuh_ccl *c,
                           uint32_t dev, const mb_gpuh_device_t *d,
                           ccl_dev_t **out) {
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  const mb_status_t s = MB_HOST_HAS_COMM(&st->host)
                            ? st->host.comm_info(st->host.host, &info)
                            : MB_ERR_UNSUPPORTED;
  const int shared = s == MB_OK;
  if (!shared && s != MB_ERR_UNSUPPORTED) return s;
  /* Without a communicator: one rank, the id made here. */
  const int rank = shared ? info.rank : 0, size = shared ? info.size : 1;
  ccl_dev_t *cd = NULL;
  for (int k = 0; k < CCL_SIZES && !cd; k++)
    if (!c->devs[dev][k].comm || c->devs[dev][k].size == size)
      cd = &c->devs[dev][k];
  if (!cd) {
    st->host.set_error("%s: more than %d rank counts on device %u in one run",
                       MB_CCL_IMPL, CCL_SIZES, dev);
    return MB_ERR_UNSUPPORTED;
  }
  *out = cd;
  if (cd->comm) return MB_OK;
  id_msg_t msg;
  memset(&msg, 0, sizeof msg);
  ccl_res r = MB_CCL_SUCCESS;
  if (rank == 0) {
    r = c->lib->get_unique_id(&msg.id);
    msg.ok = r == MB_CCL_SUCCESS;
  }
  if (shared) {
    const mb_status_t bs =
        st->host.comm_bcast(st->host.host, &msg, sizeof msg, 0);
    if (bs != MB_OK) return bs;
  }
  if (rank == 0 && r != MB_CCL_SUCCESS)
    return ccl_fail(st, c->lib, "ncclGetUniqueId", r);
  if (!msg.ok) {
    st->host.set_error("%s: rank 0 could not make the %s unique id",
                       MB_CCL_IMPL, MB_CCL_NAME);
    return MB_ERR_BACKEND;
  }
  mb_status_t ds =
      mb__gpuh_check(st, mb_gpu_set_device(d->ordinal), "set device");
  if (ds != MB_OK) return ds;
  mb_ccl_comm_t comm = NULL;
  ds = init_rank(st, c, d, size, msg.id, rank, &comm);
  if (ds != MB_OK) return ds;
  *cd = (ccl_dev_t){comm, rank, size};
  MB_GPUH_LOG(st, MB_LOG_DEBUG,
              "%s: %s communicator on device %u: rank %d of %d",
              st->vendor->name, MB_CCL_NAME, dev, rank, size);
  return MB_OK;
}

static mb_status_t prepare(void *bstate, const mb_kernel_call_t *call,
                           void **kstate, mb_coll_kind_t kind) {
  mb_gpuh_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  struct mb_gpuh_ccl *c = ccl_of(st);
  const char *why = NULL;
  if (supports(bstate, call->device, p, &why, kind) != MB_OK) {
    st->host.set_error("%s", why);
    return MB_ERR_UNSUPPORTED;
  }
  mb_gpuh_device_t *d = mb__gpuh_device(st, call->device);
  if (!d) return MB_ERR_NOT_FOUND;
  ccl_dev_t *cd = NULL;
  mb_status_t s = comm_of(st, c, call->device, d, &cd);
  if (s != MB_OK) return s;
  if (p->ranks > 0 && p->ranks != cd->size) {
    st->host.set_error(
        "%s: the benchmark runs over %d ranks, the %s communicator has %d",
        MB_CCL_IMPL, (int)p->ranks, MB_CCL_NAME, cd->size);
    return MB_ERR_INVALID_ARG;
  }
  coll_k_t *k = calloc(1, sizeof *k);
  if (!k) {
    st->host.set_error("%s: out of host memory", MB_CCL_IMPL);
    return MB_ERR_NO_MEMORY;
  }
  const kind_t *kd = &k_kinds[kind];
  const ccl_type_t *t = type_of(p->dtype);
  const size_t n = (size_t)p->shape[0];
  const size_t count = kd->per_rank ? n / (size_t)cd->size : n;
  const size_t block = n / (size_t)cd->size * t->bytes;
  char *const y = call->out[0];
  const int in_place = (p->flags & MB_PARAM_IN_PLACE) != 0;
  *k = (coll_k_t){.st = st,
                  .lib = c->lib,
                  .call = kd->call,
                  .call_name = kd->call_name,
                  .comm = cd->comm,
                  .stream = d->stream,
                  .send = in_place ? y : call->in[0],
                  .recv = y,
                  .count = count,
                  .bytes = t->bytes,
                  .type = t->type,
                  .op = k_redops[p->reduce_op],
                  .root = p->root,
                  .rank = cd->rank,
                  .size = cd->size};
  if (in_place && kd->send_at_block) k->send = y + (size_t)cd->rank * block;
  if (in_place && kd->recv_at_block) k->recv = y + (size_t)cd->rank * block;
  snprintf(k->version, sizeof k->version, "%s", c->version);
  snprintf(k->file, sizeof k->file, "%s", c->file);
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__gpuh_ccl_run(void *kstate, const mb_kernel_call_t *call) {
  const coll_k_t *k = kstate;
  (void)call;
  const ccl_res r = k->call(k);
  return r == MB_CCL_SUCCESS ? MB_OK : ccl_fail(k->st, k->lib, k->call_name, r);
}

uint32_t mb__gpuh_ccl_notes(void *kstate, mb_kernel_note_t *out, uint32_t max) {
  coll_k_t *k = kstate;
  const mb_kernel_note_t n[] = {
      {MB_CCL_IMPL "_version", k->version, 0},
      {MB_CCL_IMPL "_library", k->file, 0},
      {MB_CCL_IMPL "_call", k->call_name, 0},
  };
  const uint32_t c = (uint32_t)(sizeof n / sizeof *n);
  for (uint32_t i = 0; i < c && i < max; i++) out[i] = n[i];
  return c;
}

void mb__gpuh_ccl_release(void *kstate) {
  free(kstate);
}

const char *mb__gpuh_ccl_direct(mb_kernel_run_fn run) {
  return run == mb__gpuh_ccl_run
             ? "a " MB_CCL_NAME
               " call: every rank's kernel waits for the other ranks', so "
               "it is neither held behind the blocking kernel nor captured "
               "into a graph (capture across ranks is not established "
               "here); the batch's runs are launched back to back between "
               "two events, after the ranks' barrier"
             : NULL;
}

#define COLL_HOOKS(E, name_)                                                   \
  mb_status_t mb__gpuh_ccl_##E##_supports(                                     \
      void *bstate, uint32_t dev, const mb_op_params_t *p, const char **why) { \
    return supports(bstate, dev, p, why, MB_COLL_##E);                         \
  }                                                                            \
  mb_status_t mb__gpuh_ccl_##E##_prepare(                                      \
      void *bstate, const mb_kernel_call_t *call, void **kstate) {             \
    return prepare(bstate, call, kstate, MB_COLL_##E);                         \
  }
MB_COLL_MAP(COLL_HOOKS)
