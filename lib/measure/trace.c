/* The context's trace file (trace.h): opening, the events' framing, the
 * process and thread names, closing. */
#include "measure/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

double mb__trace_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

cJSON *mb__trace_slice(const char *name, double t0_us, double t1_us,
                       cJSON **args) {
  cJSON *ev = cJSON_CreateObject();
  *args = cJSON_CreateObject();
  if (!ev || !*args) {
    cJSON_Delete(ev);
    cJSON_Delete(*args);
    *args = NULL;
    return NULL;
  }
  cJSON_AddStringToObject(ev, "name", name);
  cJSON_AddStringToObject(ev, "ph", "X");
  cJSON_AddNumberToObject(ev, "ts", t0_us);
  /* Clocks read in order never run backwards; a negative span would be
   * a caller's mix-up, and the format has no use for it. */
  cJSON_AddNumberToObject(ev, "dur", t1_us > t0_us ? t1_us - t0_us : 0.0);
  cJSON_AddItemToObject(ev, "args", *args);
  return ev;
}

/* The rank under a communicator (a job's files merge with one process per
 * rank), else this process's id (an isolated child is its own process). */
static int trace_pid(const mb_context_t *ctx) {
  mb_comm_info_t info = MB_COMM_INFO_INIT;
  if (ctx->comm && mb_comm_info(ctx->comm, &info) == MB_OK) return info.rank;
  return (int)getpid();
}

/* All of text to the file, or failed set (a regular file writes short
 * only when the disk is full). */
static void write_all(mb__trace_t *t, const char *text, size_t len) {
  while (len > 0) {
    const ssize_t n = write(t->fd, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      t->failed = 1;
      return;
    }
    text += n;
    len -= (size_t)n;
  }
}

static void write_event(mb__trace_t *t, cJSON *ev) {
  char *text = ev ? cJSON_PrintUnformatted(ev) : NULL;
  if (!text) t->failed = 1;
  if (text) mb__sbuf_printf(&t->pending, "%s,\n", text);
  free(text);
  cJSON_Delete(ev);
}

static cJSON *meta(const char *what, int pid, long tid, const char *key,
                   const char *value) {
  cJSON *ev = cJSON_CreateObject(), *args = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "name", what);
  cJSON_AddStringToObject(ev, "ph", "M");
  cJSON_AddNumberToObject(ev, "pid", pid);
  cJSON_AddNumberToObject(ev, "tid", (double)tid);
  cJSON_AddStringToObject(args, key, value);
  cJSON_AddItemToObject(ev, "args", args);
  return ev;
}

/* The viewers' track names: "mbench rank 1 on HOST" or "mbench pid N on
 * HOST", the thread that runs the benchmarks "host: benchmarks" (the
 * devices' own work shows in the backends' tools, NVTX/roctx ranges). */
static void name_process(mb_context_t *ctx, mb__trace_t *t) {
  char host[256] = "", name[400];
  gethostname(host, sizeof host - 1);
  snprintf(name, sizeof name, "mbench %s %d on %s", ctx->comm ? "rank" : "pid",
           t->pid, host);
  write_event(t, meta("process_name", t->pid, t->tid, "name", name));
  write_event(t,
              meta("thread_name", t->pid, t->tid, "name", "host: benchmarks"));
}

void mb__trace_emit(mb_context_t *ctx, cJSON *ev) {
  mb__trace_t *t = ctx->trace;
  if (!t || !ev) {
    cJSON_Delete(ev);
    return;
  }
  const int pid = trace_pid(ctx);
  t->tid = (long)syscall(SYS_gettid);
  if (pid != t->pid) {
    t->pid = pid;
    name_process(ctx, t);
  }
  cJSON_AddNumberToObject(ev, "pid", pid);
  cJSON_AddNumberToObject(ev, "tid", (double)t->tid);
  write_event(t, ev);
}

static void flush(mb__trace_t *t) {
  if (t->pending.oom) t->failed = 1;
  if (t->pending.len) write_all(t, t->pending.p, t->pending.len);
  t->pending.len = 0;
  t->pending.oom = 0;
}

void mb__trace_flush(mb_context_t *ctx) {
  if (ctx->trace) flush(ctx->trace);
}

void mb__trace_mark(mb__trace_t *t, const mb__trace_mark_t *m) {
  if (t->num_marks == t->cap_marks) {
    const size_t cap = t->cap_marks ? 2 * t->cap_marks : 64;
    mb__trace_mark_t *grown = realloc(t->marks, cap * sizeof *grown);
    if (!grown) return;
    t->marks = grown;
    t->cap_marks = cap;
  }
  t->marks[t->num_marks++] = *m;
}

mb_status_t mb_context_trace_open(mb_context_t *ctx, const char *path,
                                  uint32_t flags) {
  if (!ctx || !path)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_context_trace_open: NULL %s",
                    ctx ? "path" : "context");
  if (ctx->trace)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_context_trace_open: %s: a trace is open already "
                    "(mb_context_trace_close it first)",
                    path);
  if (flags & ~MB_TRACE_APPEND)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_context_trace_open: flags 0x%x; valid: 0, "
                    "MB_TRACE_APPEND (1)",
                    (unsigned)flags);
  mb_status_t st = mb__output_path_ok(path, NULL);
  if (st != MB_OK) return st;
  mb__trace_t *t = calloc(1, sizeof *t);
  if (!t) return mb__fail(MB_ERR_NO_MEMORY, "%s: out of memory", path);
  /* Every write at the end, the parent's too: an isolated child appends
   * while the parent waits, and the parent's next event goes after it. */
  t->fd = open(path,
               O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
                   (flags & MB_TRACE_APPEND ? 0 : O_TRUNC),
               0666);
  if (t->fd < 0) {
    free(t);
    return mb__fail(MB_ERR_IO, "%s: cannot write the trace: %s", path,
                    strerror(errno));
  }
  t->flags = flags;
  t->pid = -1;
  t->path = mb__strdup(path);
  if (!(flags & MB_TRACE_APPEND)) write_all(t, "[\n", 2);
  ctx->trace = t;
  return MB_OK;
}

mb_status_t mb_context_trace_close(mb_context_t *ctx) {
  mb__trace_t *t = ctx ? ctx->trace : NULL;
  if (!t) return MB_OK;
  ctx->trace = NULL;
  /* The array's last element, without the comma every other one has: a
   * metadata event the viewers know and show as the process's label. */
  if (!(t->flags & MB_TRACE_APPEND)) {
    const int pid = t->pid >= 0 ? t->pid : trace_pid(ctx);
    cJSON *ev = meta("process_labels", pid, t->tid, "labels", "libmicrobench");
    char *text = ev ? cJSON_PrintUnformatted(ev) : NULL;
    if (!text) t->failed = 1;
    if (text) mb__sbuf_printf(&t->pending, "%s]\n", text);
    free(text);
    cJSON_Delete(ev);
  }
  flush(t);
  const int failed = close(t->fd) != 0 || t->failed;
  const mb_status_t st =
      failed ? mb__fail(MB_ERR_IO, "%s: writing the trace failed: %s",
                        t->path ? t->path : "trace", strerror(errno))
             : MB_OK;
  free(t->path);
  mb__sbuf_free(&t->pending);
  free(t->marks);
  free(t);
  return st;
}
