/* libmicrobench — the context: owns loaded backends, their devices, user
 * kernels and log settings. Everything mutable lives in a context.
 *
 * Threading: one context per thread at a time. Distinct contexts may be
 * used from distinct threads concurrently. */
#ifndef MICROBENCH_CONTEXT_H
#define MICROBENCH_CONTEXT_H

#include <signal.h> /* sig_atomic_t */

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mb_context mb_context_t;

/* Receives every log line at or above the context's level. `msg` is valid
 * only during the call. */
typedef void (*mb_log_fn)(void *user, mb_log_level_t level, const char *msg);

/* Do not search $MB_BACKEND_PATH nor the default module directory: only
 * `backend_path` (tests, sandboxes). */
#define MB_CONTEXT_NO_DEFAULT_BACKENDS 1u

typedef struct mb_context_options {
  uint32_t struct_size;
  /* Colon-separated directories searched for backend modules
   * (mb_backend_*.so) before $MB_BACKEND_PATH and the default directory
   * (`microbench/` beside libmicrobench.so). NULL: none. Borrowed: read
   * during mb_context_create only. */
  const char *backend_path;
  mb_log_level_t log_level; /* default MB_LOG_WARN */
  mb_log_fn log_fn;         /* NULL: log to stderr */
  void *log_user; /* passed to log_fn; borrowed for the context's life */
  uint32_t flags; /* MB_CONTEXT_* */
} mb_context_options_t;

#define MB_CONTEXT_OPTIONS_INIT \
  { sizeof(mb_context_options_t), NULL, MB_LOG_WARN, NULL, NULL, 0u }

/* Creates a context and loads (registers) every backend module found. A
 * module that fails to load is recorded with its reason, never fatal; see
 * mb_backend_info(). `opts` may be NULL (defaults). The caller owns *out
 * and releases it with mb_context_destroy(). $MB_BACKEND_VERBOSE=1 logs
 * every module tried and why it was or was not loaded. */
MB_API mb_status_t mb_context_create(mb_context_t **out,
                                     const mb_context_options_t *opts);
/* Unloads everything; every tensor/result of the context must be destroyed
 * first. NULL is a no-op. */
MB_API void mb_context_destroy(mb_context_t *ctx);

/* Lets a signal handler stop a run: while *flag is nonzero, a benchmark in
 * progress stops sampling and its result is failed with reason
 * "interrupted" (check mb_result_info), and mb_bench_run starts nothing
 * new. The flag is the caller's (a handler may only write a volatile
 * sig_atomic_t); NULL detaches it. */
MB_API void mb_context_set_interrupt(mb_context_t *ctx,
                                     const volatile sig_atomic_t *flag);

/* ---- traces ----------------------------------------------------------
 * A Chrome/Perfetto trace of what the context runs (trace event format,
 * JSON array form; open it in ui.perfetto.dev or chrome://tracing): each
 * benchmark a slice named by its result id with the result's facts as
 * args, in it the checks, the warm-up, every sample (its flush nested)
 * and a composite's steps and phases. Events are written as each
 * benchmark ends and the file is flushed then, so a run that dies leaves
 * a trace of what finished (the viewers accept the array without its
 * closing "]"). Timestamps: CLOCK_MONOTONIC microseconds. pid: the rank
 * under a communicator (mb_context_set_comm), else the process id. The
 * timed batches themselves are untouched: times are read around them and
 * the events written after sampling. See docs/measurement.md, "Traces". */

/* Continue a trace another process opened (an isolated child writing into
 * its parent's file): events are appended, no "[" and no "]". */
#define MB_TRACE_APPEND 1u

/* Starts writing the trace to `path` (created or truncated; with
 * MB_TRACE_APPEND appended to). A path that is a directory, device or
 * read-only file is MB_ERR_INVALID_ARG / MB_ERR_IO naming it; a trace
 * already open is MB_ERR_INVALID_ARG. */
MB_API mb_status_t mb_context_trace_open(mb_context_t *ctx, const char *path,
                                         uint32_t flags);
/* Ends the trace (the closing "]") and closes the file; MB_ERR_IO when a
 * write failed. No trace open: MB_OK. mb_context_destroy closes it too. */
MB_API mb_status_t mb_context_trace_close(mb_context_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
