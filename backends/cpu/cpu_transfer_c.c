/* CPU backend — h2d and d2h: Y = X across the "host link".
 *
 * The CPU backend's device memory is host memory, so a transfer is a copy
 * between the core's tensor and a host buffer of the kernel's own: pageable
 * (malloc'd and touched, as a numpy array handed to jax.device_put is), or
 * with `pinned` locked in memory (mlock; a GPU runtime's page-locked
 * allocation is the same idea). The figures say what a host-to-host copy of
 * that kind costs on this machine — the baseline a GPU's transfer is
 * compared against, not a PCIe measurement. h2d stages X in the buffer
 * untimed and times buffer -> Y; d2h times X -> buffer, and its collect
 * hook (untimed, before a check) copies the buffer into Y and spoils the
 * buffer, so each check sees only what the runs since the last one wrote. */
#include "cpu_eltwise.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

enum { ALIGN = 64, SPOILED = 0xA5 };

typedef struct transfer_c {
  void *host; /* the kernel's host buffer */
  size_t bytes;
  unsigned threads;
  int locked; /* mlock succeeded: munlock on release */
} transfer_c_t;

static void release(void *kstate) {
  transfer_c_t *k = kstate;
  if (!k) return;
  if (k->locked) munlock(k->host, k->bytes);
  free(k->host);
  free(k);
}

/* mlock's usual refusal is the memlock limit: say it and how to lift it. */
static void pin_error(mb_cpu_state_t *st, const char *op, size_t bytes,
                      int err) {
  struct rlimit rl;
  char limit[64] = "unknown";
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    snprintf(limit, sizeof limit, "%llu bytes",
             (unsigned long long)rl.rlim_cur);
  MB_CPU_ERROR(st,
               "cpu/c: %s pinned: cannot lock %zu bytes of host memory: %s "
               "(RLIMIT_MEMLOCK %s; raise it with `ulimit -l`, or drop "
               "pinned)",
               op, bytes, strerror(err), limit);
}

static mb_status_t prepare(void *bstate, const mb_kernel_call_t *call,
                           const char *op, void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  transfer_c_t *k = calloc(1, sizeof *k);
  if (k) {
    k->bytes = st->host.dtype_bytes(p->dtype,
                                    (size_t)p->shape[0] * (size_t)p->shape[1]);
    k->threads = st->threads;
    const size_t padded = (k->bytes + ALIGN - 1) / ALIGN * ALIGN;
    k->host = aligned_alloc(ALIGN, padded ? padded : ALIGN);
  }
  if (!k || !k->host) {
    release(k);
    MB_CPU_ERROR(st, "cpu/c: %s: out of host memory", op);
    return MB_ERR_NO_MEMORY;
  }
  /* Every page touched (or locked, which faults them in) before timing. */
  memset(k->host, SPOILED, k->bytes);
  if (p->flags & MB_PARAM_PINNED) {
    if (mlock(k->host, k->bytes) != 0) {
      pin_error(st, op, k->bytes, errno);
      release(k);
      return MB_ERR_BACKEND;
    }
    k->locked = 1;
  }
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_h2d_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                  void **kstate) {
  mb_status_t st = prepare(bstate, call, "h2d", kstate);
  if (st == MB_OK) {
    transfer_c_t *k = *kstate;
    memcpy(k->host, call->in[0], k->bytes); /* X staged on the host */
  }
  return st;
}

mb_status_t mb__cpu_h2d_c_run(void *kstate, const mb_kernel_call_t *call) {
  const transfer_c_t *k = kstate;
  mb__cpu_parallel_copy(call->out[0], k->host, k->bytes, k->threads);
  return MB_OK;
}

mb_status_t mb__cpu_d2h_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                  void **kstate) {
  return prepare(bstate, call, "d2h", kstate);
}

mb_status_t mb__cpu_d2h_c_run(void *kstate, const mb_kernel_call_t *call) {
  const transfer_c_t *k = kstate;
  mb__cpu_parallel_copy(k->host, call->in[0], k->bytes, k->threads);
  return MB_OK;
}

mb_status_t mb__cpu_d2h_c_collect(void *kstate, const mb_kernel_call_t *call) {
  transfer_c_t *k = kstate;
  memcpy(call->out[0], k->host, k->bytes);
  memset(k->host, SPOILED, k->bytes);
  return MB_OK;
}

void mb__cpu_h2d_c_release(void *kstate) {
  release(kstate);
}

void mb__cpu_d2h_c_release(void *kstate) {
  release(kstate);
}
