/* Ctrl-C: the first SIGINT/SIGTERM raises a flag that the library checks
 * between samples (mb_context_set_interrupt) and the commands check between
 * benchmarks, so every finished result is written and the reports are
 * closed; the handler then steps aside, so a second Ctrl-C kills at once.
 * A signal handler can only reach static storage, hence the one mutable
 * static of mbench. */
#include <signal.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t g_interrupted, g_signal;

static void on_signal(int sig) {
  g_interrupted = 1;
  g_signal = sig;
  signal(sig, SIG_DFL);
}

void cli_interrupt_install(mb_context_t *ctx) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a wait for a child returns EINTR */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  mb_context_set_interrupt(ctx, &g_interrupted);
}

int cli_interrupted(void) {
  return g_interrupted != 0;
}

int cli_interrupt_status(void) {
  return 128 + (g_signal ? (int)g_signal : SIGINT);
}
