/* The wait bound of the MPI communicator (watchdog.h). When a deadline
 * passes, the process ends with exit status 2 and one line on stderr:
 * MPI has no portable way to cancel a collective a partner never joins,
 * and the launcher stops the job once a rank exits (mpirun, srun). */
#include "mpi/watchdog.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* The coarse clock (the kernel's tick, a few ms): a deadline of seconds
 * needs no finer, and reading it is a load where CLOCK_MONOTONIC reads
 * the TSC and scales it; arm() reads it before every MPI call, whose
 * small collectives felt the difference (docs/results/mpi.md). */
#ifdef CLOCK_MONOTONIC_COARSE
#define MB__WATCHDOG_CLOCK CLOCK_MONOTONIC_COARSE
#else
#define MB__WATCHDOG_CLOCK CLOCK_MONOTONIC
#endif

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(MB__WATCHDOG_CLOCK, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Checks at least every 100 ms: a missed deadline is noticed within that
 * of its time. */
static void *watch(void *arg) {
  mb__watchdog_t *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100000000;
    if (until.tv_nsec >= 1000000000)
      until.tv_sec++, until.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&w->cv, &w->mu, &until);
    const int64_t deadline =
        atomic_load_explicit(&w->deadline_ns, memory_order_acquire);
    if (w->stop || !deadline || now_ns() < deadline) continue;
    fprintf(stderr,
            "libmicrobench: %s: %s did not complete within %.3g s: a rank "
            "did not join it (missing, stuck, or running another plan); "
            "ending this process (exit 2)\n",
            w->where, atomic_load_explicit(&w->what, memory_order_relaxed),
            (double)atomic_load_explicit(&w->timeout_ms, memory_order_relaxed) /
                1e3);
    fflush(stderr);
    _exit(2);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int mb__watchdog_start(mb__watchdog_t *w, const char *where) {
  atomic_init(&w->deadline_ns, 0);
  atomic_init(&w->what, "");
  atomic_init(&w->timeout_ms, 0);
  snprintf(w->where, sizeof w->where, "%s", where);
  w->stop = 0;
  w->running = 0;
  if (pthread_mutex_init(&w->mu, NULL)) return -1;
  if (pthread_cond_init(&w->cv, NULL)) {
    pthread_mutex_destroy(&w->mu);
    return -1;
  }
  if (pthread_create(&w->thread, NULL, watch, w)) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    return -1;
  }
  w->running = 1;
  return 0;
}

void mb__watchdog_stop(mb__watchdog_t *w) {
  if (!w->running) return;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  w->running = 0;
}

void mb__watchdog_arm(mb__watchdog_t *w, const char *what, double timeout_s) {
  if (timeout_s > 1e9) timeout_s = 1e9; /* 30 years: no int64 overflow */
  /* Release stores, plain moves on x86: the deadline is stored last and
   * read with acquire, so the thread that sees it sees its call's name.
   * Sequentially consistent stores (a locked exchange each) cost more
   * than the rest of a small collective's overhead together. */
  atomic_store_explicit(&w->what, what, memory_order_relaxed);
  atomic_store_explicit(&w->timeout_ms, (int64_t)(timeout_s * 1e3),
                        memory_order_relaxed);
  atomic_store_explicit(&w->deadline_ns, now_ns() + (int64_t)(timeout_s * 1e9),
                        memory_order_release);
}

void mb__watchdog_disarm(mb__watchdog_t *w) {
  atomic_store_explicit(&w->deadline_ns, 0, memory_order_release);
}
