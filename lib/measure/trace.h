/* Internal: the context's Chrome/Perfetto trace (mb_context_trace_open).
 * Events are JSON objects in the trace event format's array form, each
 * written as "{...},\n" when it is complete, so that a file cut short (a
 * crash, a kill) is still a trace the viewers load; closing adds the last
 * event and the "]". Timestamps are CLOCK_MONOTONIC microseconds, one
 * clock for every process of the machine: an --isolate child appends its
 * events to its parent's file (MB_TRACE_APPEND) on the same time line. */
#ifndef MB_LIB_TRACE_H
#define MB_LIB_TRACE_H

#include <cjson/cJSON.h>

#include "internal.h"
#include "report/svg.h"

/* When a sample started, when its flush ended (its start when it had
 * none) and when its timed batch ended (us); index: the sample's in the
 * result, or -1 for one the device's timer dropped. */
typedef struct mb__trace_mark {
  double t0, flushed, t1;
  long index;
} mb__trace_mark_t;

typedef struct mb__trace mb__trace_t;
struct mb__trace {
  int fd; /* O_APPEND: a child's and its parent's writes never overlap */
  /* The events since the last flush, written with one write(2) at the end
   * of each benchmark: the file only ever ends between whole events (a
   * kill at any moment leaves a loadable prefix), and an isolated child's
   * events never interleave with its parent's mid-line. */
  mb__sbuf_t pending;
  char *path;
  uint32_t flags; /* MB_TRACE_* */
  int pid;        /* of the last event; -1 before the first */
  long tid;
  int failed; /* a write failed: close says so */
  /* The samples of the measurement in progress (runner_trace.c), kept
   * as numbers while sampling and written once it ends. */
  mb__trace_mark_t *marks;
  size_t num_marks, cap_marks;
};

/* CLOCK_MONOTONIC in microseconds, as the events' ts. */
double mb__trace_now_us(void);
/* A complete ("X") event and its args object (*args, owned by it); NULL
 * on OOM. */
cJSON *mb__trace_slice(const char *name, double t0_us, double t1_us,
                       cJSON **args);
/* Writes ev (with the process and thread ids) and frees it; nothing when
 * the context has no trace. A process or rank not seen before gets its
 * name first ("M" events). */
void mb__trace_emit(mb_context_t *ctx, cJSON *ev);
/* Writes the pending events to the file, whole (after each benchmark). */
void mb__trace_flush(mb_context_t *ctx);
/* Keeps one sample's times; an allocation failure loses the mark only. */
void mb__trace_mark(mb__trace_t *t, const mb__trace_mark_t *m);

#endif
