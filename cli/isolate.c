/* --isolate: each benchmark runs in a child process — this same mbench,
 * re-executed with the same arguments plus --child-index N, so the child
 * builds the same benchmark list and runs only entry N, printing its result
 * as one JSON object. A fresh process (exec, not just fork) is what GPU
 * runtimes need: CUDA cannot be used in a forked child of a process that
 * initialised it. The parent reads the JSON back (mb_result_from_json);
 * a child that crashes or outlives the watchdog becomes a failed result
 * that says so, and the run goes on. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The watchdog: the sampling limit of every repetition, twice over, plus a
 * generous allowance for set-up, the check and the warm-up. */
static double watchdog_s(const cli_runner_t *c, const mb_bench_spec_t *spec) {
  if (CLI_GIVEN(c->opts, isolate_timeout)) return c->opts->isolate_timeout;
  double reps = spec->repetitions ? spec->repetitions : 1;
  return 120.0 + 2.0 * spec->timeout_s * reps;
}

/* The child's argv: ours plus --child-index N (it wins over --isolate). */
static char **child_argv(const cli_runner_t *c, size_t index, char *num,
                         size_t cap) {
  char **av = calloc((size_t)c->argc + 3, sizeof *av);
  if (!av) return NULL;
  for (int i = 0; i < c->argc; i++) av[i] = c->argv[i];
  snprintf(num, cap, "%zu", index);
  av[c->argc] = "--child-index";
  av[c->argc + 1] = num;
  return av;
}

static pid_t spawn(const cli_runner_t *c, size_t index, int *out_fd) {
  const pid_t parent = getpid();
  int fds[2];
  if (pipe(fds) != 0) return -1;
  char num[32];
  char **av = child_argv(c, index, num, sizeof num);
  if (!av) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    /* Its own process group: the watchdog kills it and anything it
     * started; the terminal's Ctrl-C reaches only us, and we decide. So
     * that it cannot outlive us (mbench killed with SIGKILL), it dies
     * with its parent; a parent that died before the call is seen as a
     * changed parent pid. */
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
      _exit(127);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    /* The CPUs mbench started on: this thread may be pinned to one core
     * (the CPU backend's), which the child would take for its binding and
     * run one thread (cpu_topology.c). */
    if (c->opts->have_start_cpus)
      (void)sched_setaffinity(0, sizeof c->opts->start_cpus,
                              &c->opts->start_cpus);
    execv("/proc/self/exe", av);
    execvp(av[0], av);
    _exit(127);
  }
  free(av);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return -1;
  }
  setpgid(pid, pid); /* also here: no race with the child's own call */
  *out_fd = fds[0];
  return pid;
}

typedef struct output {
  char *text;
  size_t len, cap;
} output_t;

static int append(output_t *o, const char *buf, size_t n) {
  if (o->len + n + 1 > o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 65536;
    while (cap < o->len + n + 1) cap *= 2;
    char *t = realloc(o->text, cap);
    if (!t) return -1;
    o->text = t;
    o->cap = cap;
  }
  memcpy(o->text + o->len, buf, n);
  o->len += n;
  o->text[o->len] = '\0';
  return 0;
}

typedef enum ending { ENDED, TIMED_OUT, INTERRUPTED, IO_ERROR } ending_t;

/* Reads the child's stdout to EOF, or until the deadline or Ctrl-C; on
 * IO_ERROR *err is the system's errno. */
static ending_t collect(int fd, double deadline, output_t *out, int *err) {
  char buf[65536];
  for (;;) {
    if (cli_interrupted()) return INTERRUPTED;
    double left = deadline - now_s();
    if (left <= 0) return TIMED_OUT;
    struct pollfd p = {fd, POLLIN, 0};
    int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
    int n = poll(&p, 1, ms);
    if (n < 0 && errno != EINTR) return *err = errno, IO_ERROR;
    if (n <= 0) continue;
    ssize_t got = read(fd, buf, sizeof buf);
    if (got == 0) return ENDED;
    if (got < 0 && errno != EINTR) return *err = errno, IO_ERROR;
    if (got > 0 && append(out, buf, (size_t)got) != 0)
      return *err = ENOMEM, IO_ERROR;
  }
}

/* After EOF the child should exit at once; it still gets until the
 * deadline (exit handlers of GPU runtimes can take a while). */
static ending_t reap(pid_t pid, double deadline, int *status, int *err) {
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return ENDED;
    if (r < 0 && errno != EINTR) return *err = errno, IO_ERROR;
    if (cli_interrupted()) return INTERRUPTED;
    if (now_s() > deadline) return TIMED_OUT;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
}

static void kill_child(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

/* Why the child gave no result, or NULL when it did. */
static const char *judge(ending_t e, int status, int err, double limit,
                         char *why, size_t cap) {
  if (e == TIMED_OUT)
    snprintf(why, cap,
             "hung: no result within %.0f s; the child process was killed "
             "(--isolate-timeout)",
             limit);
  else if (e == IO_ERROR)
    snprintf(why, cap, "isolation: reading the child process failed: %s",
             strerror(err));
  else if (WIFSIGNALED(status))
    snprintf(why, cap,
             "crashed: the child process was killed by signal %d (%s)",
             WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    snprintf(why, cap,
             "the child process exited with status %d before reporting a "
             "result (its messages are above)",
             WEXITSTATUS(status));
  else
    return NULL;
  return why;
}

mb_status_t cli_run_isolated(const cli_runner_t *c, mb_context_t *ctx,
                             size_t index, const mb_bench_spec_t *spec,
                             mb_result_t **out) {
  const double limit = watchdog_s(c, spec);
  const double deadline = now_s() + limit;
  int fd = -1;
  char why[512];
  pid_t pid = spawn(c, index, &fd);
  if (pid < 0) {
    snprintf(why, sizeof why, "isolation: cannot start a child process: %s",
             strerror(errno));
    return mb_bench_result_without_run(ctx, spec, MB_RESULT_FAILED, why, out);
  }
  output_t text = {NULL, 0, 0};
  int status = 0, err = 0;
  ending_t e = collect(fd, deadline, &text, &err);
  close(fd);
  if (e == ENDED) e = reap(pid, deadline, &status, &err);
  if (e != ENDED) kill_child(pid);
  mb_status_t st;
  const char *reason = NULL;
  if (e == INTERRUPTED) {
    reason = "interrupted";
  } else if (!(reason = judge(e, status, err, limit, why, sizeof why))) {
    st = text.text ? mb_result_from_json(text.text, out) : MB_ERR_PARSE;
    if (st == MB_OK) {
      free(text.text);
      return MB_OK;
    }
    snprintf(why, sizeof why,
             "isolation: the child's result could not be read: %s",
             text.text ? mb_error_last() : "it printed nothing");
    reason = why;
  }
  free(text.text);
  return mb_bench_result_without_run(ctx, spec, MB_RESULT_FAILED, reason, out);
}

/* ---- the runner every command uses -------------------------------------- */

mb_status_t cli_bench_runner(void *user, mb_context_t *ctx, size_t index,
                             const mb_bench_spec_t *spec, mb_result_t **out) {
  const cli_runner_t *c = user;
  if (c && c->opts->isolate && !c->opts->child_index)
    return cli_run_isolated(c, ctx, index, spec, out);
  return mb_bench_run(ctx, spec, out);
}

int cli_child_report(const char *cmd, mb_context_t *ctx,
                     const mb_bench_spec_t *spec) {
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, spec, &r) != MB_OK)
    return cli_error(cmd, "%s", mb_error_last());
  const char *json = mb_result_json(r);
  int ok = json && printf("%s\n", json) > 0 && fflush(stdout) == 0;
  mb_result_destroy(r);
  return ok ? EXIT_OK : cli_error(cmd, "writing the result failed");
}
