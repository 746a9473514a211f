/* GPU host layer — ncclCommInitRank (RCCL's too: it keeps NCCL's names)
 * with a bound on its wait, for gpu_ccl.c.
 *
 * The call returns once every rank has joined the communicator, and NCCL
 * puts no time limit on that: a rank that died after the unique id went
 * round, or a network NCCL cannot reach, leaves the others inside it for
 * good. So the call runs on a thread of its own, which makes the
 * benchmark's device current first (the current device is per thread),
 * and the caller waits for it at most the communicator's wait (the host's
 * comm_wait, --rank-wait): past that the benchmark fails, saying so, and
 * everything the run finished stays. A blocking init cannot be stopped
 * from outside, so the thread is left where it is, to return, or not,
 * inside the library, which must stay loaded from then on (gpu_ccl.c never
 * unloads it after an abandoned init); a communicator it makes after all,
 * it destroys itself.
 *
 * (ncclCommInitRankConfig with blocking = 0, polled through
 * ncclCommGetAsyncError and ended by ncclCommAbort, could stop it, but
 * makes every later call of that communicator non-blocking: a collective
 * could then return ncclInProgress, and be timed so.) */
#include "gpu_ccl_init.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* Between the caller and the thread; freed by whichever of them is last
 * (`left`: the caller gave up, the thread frees it). */
typedef struct init_job {
  mb_ccl_init_t a;
  mb_ccl_comm_t comm;
  mb_ccl_result_t r;
  int device_ok, done, left;
  pthread_mutex_t mu;
  pthread_cond_t cv;
} init_job_t;

static void job_free(init_job_t *j) {
  pthread_cond_destroy(&j->cv);
  pthread_mutex_destroy(&j->mu);
  free(j);
}

static void *init_thread(void *arg) {
  init_job_t *j = arg;
  mb_ccl_comm_t comm = NULL;
  mb_ccl_result_t r = MB_CCL_INVALID_USAGE;
  const int device_ok = j->a.set_device(j->a.ordinal);
  if (device_ok) r = j->a.init(&comm, j->a.nranks, j->a.id, j->a.rank);
  pthread_mutex_lock(&j->mu);
  const int left = j->left;
  if (!left) {
    j->comm = comm, j->r = r, j->device_ok = device_ok, j->done = 1;
    pthread_cond_signal(&j->cv);
  }
  pthread_mutex_unlock(&j->mu);
  if (left) { /* nobody waits for it any more */
    if (r == MB_CCL_SUCCESS && comm) j->a.destroy(comm);
    job_free(j);
  }
  return NULL;
}

/* Now plus `s` seconds on the monotonic clock. */
static struct timespec deadline(double s) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  const double whole = (double)(time_t)s;
  t.tv_sec += (time_t)s;
  t.tv_nsec += (long)((s - whole) * 1e9);
  if (t.tv_nsec >= 1000000000L) t.tv_sec += 1, t.tv_nsec -= 1000000000L;
  return t;
}

mb_ccl_wait_t mb__gpuh_ccl_init_bounded(const mb_ccl_init_t *a,
                                        double timeout_s, mb_ccl_comm_t *comm,
                                        mb_ccl_result_t *r) {
  *comm = NULL;
  *r = MB_CCL_INVALID_USAGE;
  init_job_t *j = calloc(1, sizeof *j);
  if (!j) return MB_CCL_WAIT_NO_THREAD;
  j->a = *a;
  pthread_condattr_t ca;
  int ok = pthread_condattr_init(&ca) == 0;
  if (ok) {
    ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
         pthread_cond_init(&j->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
  }
  if (!ok) {
    free(j);
    return MB_CCL_WAIT_NO_THREAD;
  }
  pthread_mutex_init(&j->mu, NULL);
  pthread_t th;
  if (pthread_create(&th, NULL, init_thread, j) != 0) {
    job_free(j);
    return MB_CCL_WAIT_NO_THREAD;
  }
  const struct timespec until = deadline(timeout_s);
  pthread_mutex_lock(&j->mu);
  int e = 0;
  while (!j->done && e != ETIMEDOUT)
    e = pthread_cond_timedwait(&j->cv, &j->mu, &until);
  const int done = j->done;
  if (!done) j->left = 1; /* the thread frees j */
  pthread_mutex_unlock(&j->mu);
  if (!done) {
    pthread_detach(th);
    return MB_CCL_WAIT_TIMED_OUT;
  }
  pthread_join(th, NULL);
  const mb_ccl_wait_t w =
      j->device_ok ? MB_CCL_WAIT_RETURNED : MB_CCL_WAIT_NO_DEVICE;
  *comm = j->comm;
  *r = j->r;
  job_free(j);
  return w;
}
