/* Internal: the bound on every wait of the MPI communicator. A thread
 * that sleeps until a deadline and ends the process if the call it
 * guards has not returned by then; arming is a coarse clock read and
 * release stores, disarming one store, cheap enough to wrap each call (a
 * mutex and a wake-up per call would cost more than a small collective). */
#ifndef MB_LIB_MPI_WATCHDOG_H
#define MB_LIB_MPI_WATCHDOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct mb__watchdog {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop, running;
  _Atomic int64_t deadline_ns; /* CLOCK_MONOTONIC_COARSE; 0: disarmed */
  _Atomic(const char *) what;  /* the call guarded (static text) */
  _Atomic int64_t timeout_ms;  /* for the message */
  char where[384];             /* "rank 1 of 4 on host" */
} mb__watchdog_t;

/* 0, or -1 when the thread cannot start (errno). */
int mb__watchdog_start(mb__watchdog_t *w, const char *where);
void mb__watchdog_stop(mb__watchdog_t *w);
void mb__watchdog_arm(mb__watchdog_t *w, const char *what, double timeout_s);
void mb__watchdog_disarm(mb__watchdog_t *w);

#endif
