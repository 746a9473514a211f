/* GPU host layer — the collective library's communicator set-up with a
 * bound on its wait (gpu_ccl_init.c), for gpu_ccl.c. Plain C: the library
 * and the device are reached through the functions given. */
#ifndef MB_GPU_CCL_INIT_H
#define MB_GPU_CCL_INIT_H

#include "gpu_ccl_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One ncclCommInitRank(comm, nranks, id, rank) on device `ordinal`. */
typedef struct mb_ccl_init {
  mb_ccl_result_t (*init)(mb_ccl_comm_t *comm, int nranks,
                          mb_ccl_unique_id_t id, int rank);
  /* ncclCommDestroy: for a communicator made after the wait gave up. */
  mb_ccl_result_t (*destroy)(mb_ccl_comm_t comm);
  /* Makes the device current on the calling thread: 1, or 0 on failure. */
  int (*set_device)(int ordinal);
  int ordinal, nranks, rank;
  mb_ccl_unique_id_t id;
} mb_ccl_init_t;

typedef enum mb_ccl_wait {
  MB_CCL_WAIT_RETURNED = 0,  /* the call returned: *r is its result */
  MB_CCL_WAIT_TIMED_OUT = 1, /* not within timeout_s; the library must stay
                                loaded (its thread is still inside it) */
  MB_CCL_WAIT_NO_DEVICE = 2, /* the thread could not make the device
                                current; nothing called */
  MB_CCL_WAIT_NO_THREAD = 3  /* no thread (or memory) for it; nothing
                                called */
} mb_ccl_wait_t;

/* Runs a->init on a thread of its own (after a->set_device there) and
 * waits for it at most timeout_s seconds (> 0). On MB_CCL_WAIT_RETURNED,
 * *comm and *r are the call's. */
mb_ccl_wait_t mb__gpuh_ccl_init_bounded(const mb_ccl_init_t *a,
                                        double timeout_s, mb_ccl_comm_t *comm,
                                        mb_ccl_result_t *r);

#ifdef __cplusplus
}
#endif
#endif
