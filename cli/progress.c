/* The progress line: which benchmark runs, how many are done, the time
 * spent and an estimate of what is left, rewritten in place on stderr when
 * stderr is a terminal; nothing otherwise, and nothing with --quiet.
 *
 * While a benchmark runs, a thread redraws the line once a second so a
 * long sampling shows its time passing. It sleeps on a condition variable
 * in between: a wake-up a second costs a few microseconds of one core,
 * far below the noise the runner already tolerates (and --quiet removes
 * it). The line is cleared, under the same lock, before anything is
 * written to stdout, so results and the line never interleave. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void format_duration(double s, char *buf, size_t cap) {
  if (s < 60)
    snprintf(buf, cap, "%.0fs", s);
  else if (s < 3600)
    snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
  else
    snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* Called with the lock held. */
static void draw(const cli_progress_t *p) {
  const double elapsed = now_s() - p->start;
  char el[32], eta[32] = "?";
  format_duration(elapsed, el, sizeof el);
  /* The mean time per finished benchmark times those left: crude, but it
   * needs nothing the runner does not already know. */
  if (p->done > 0)
    format_duration(elapsed / (double)p->done * (double)(p->total - p->done),
                    eta, sizeof eta);
  fprintf(stderr, "\r\033[K[%zu/%zu] %.60s  elapsed %s, ETA %s", p->done + 1,
          p->total, p->name, el, eta);
  fflush(stderr);
}

static void *ticker(void *arg) {
  cli_progress_t *p = arg;
  pthread_mutex_lock(&p->lock);
  while (!p->stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    pthread_cond_timedwait(&p->wake, &p->lock, &until);
    if (!p->stop && p->shown) draw(p);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

void cli_progress_start(cli_progress_t *p, const cli_opts_t *o, size_t total) {
  memset(p, 0, sizeof *p);
  p->on = !o->quiet && !o->child_index && isatty(STDERR_FILENO);
  p->total = total;
  p->start = now_s();
  if (!p->on) return;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  /* Without the thread the line is still drawn at each benchmark. */
  p->ticking = pthread_create(&p->thread, NULL, ticker, p) == 0;
}

void cli_progress_begin(cli_progress_t *p, size_t done, const char *name) {
  if (!p->on) return;
  pthread_mutex_lock(&p->lock);
  p->done = done;
  mb_escape_controls(name, p->name, sizeof p->name);
  p->shown = 1;
  draw(p);
  pthread_mutex_unlock(&p->lock);
}

void cli_progress_end(cli_progress_t *p) {
  if (!p->on) return;
  pthread_mutex_lock(&p->lock);
  if (p->shown) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  p->shown = 0;
  pthread_mutex_unlock(&p->lock);
}

void cli_progress_stop(cli_progress_t *p) {
  if (!p->on) return;
  cli_progress_end(p);
  if (p->ticking) {
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
  }
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
  p->on = 0;
}
