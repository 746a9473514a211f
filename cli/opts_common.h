/* The option rows `mbench run` and the default suite share, so the two
 * parse, check and document them alike (cli_print_options prints these
 * rows; docs/cli.md is checked against that output). */
#ifndef MBENCH_OPTS_COMMON_H
#define MBENCH_OPTS_COMMON_H

#include <stddef.h>

#include "cli.h"

#define O(field) offsetof(cli_opts_t, field)

/* clang-format off */
/* Where it runs. */
#define SELECT_OPTS(backend_help)                                           \
  {"backend", 0, OPT_STR, O(backend), "B", backend_help},                   \
  {"device", 0, OPT_UINT, O(device), "N",                                   \
   "device index within the backend (0)"},                                  \
  {"impl", 0, OPT_STR, O(impl), "NAME",                                     \
   "kernel implementation (default: the backend's first; mbench list ops "  \
   "OP --all)"}

/* The cache policy and how long to sample. */
#define TIMING_OPTS                                                         \
  {"cache", 0, OPT_STR, O(cache), "cold|hot|rotate",                        \
   "flush caches before each sample (cold, default), not (hot), or cycle "  \
   "operand copies larger than the last-level cache (rotate)"},             \
  {"flush", 0, OPT_STR, O(flush), "write|read",                             \
   "cold: flush by writing a buffer the cache's size (write, default) or "  \
   "by reading twice its size (read: no dirty lines left)"},                \
  {"criterion", 0, OPT_STR, O(criterion), "stdrel|fixed|entropy",           \
   "stopping criterion (stdrel; fixed with --samples); this and the "       \
   "timing options below override a --config file's timing"},              \
  {"repetitions", 0, OPT_UINT, O(repetitions), "N",                         \
   "sample N times over, each until the criterion holds; aggregates "       \
   "over the repetitions' medians (1)"},                                    \
  {"samples", 0, OPT_UINT, O(samples), "N",                                 \
   "take exactly N samples (implies --criterion fixed)"},                   \
  {"min-samples", 0, OPT_UINT, O(min_samples), "N",                         \
   "stdrel: at least N samples (10)"},                                      \
  {"min-time", 0, OPT_DOUBLE, O(min_time), "S",                             \
   "stdrel: at least S seconds measured (0.5)"},                            \
  {"max-noise", 0, OPT_DOUBLE, O(max_noise), "F",                           \
   "stdrel: stop below this relative stdev (0.005)"},                       \
  {"timeout", 0, OPT_DOUBLE, O(timeout), "S",                               \
   "stdrel: give up sampling after S seconds (15; the suite: 4)"},          \
  {"warmup", 0, OPT_DOUBLE, O(warmup), "S",                                 \
   "warm up at least S seconds (0.025)"},                                   \
  {"warmup-runs", 0, OPT_UINT, O(warmup_runs), "N",                         \
   "warm up at least N runs (1)"},                                          \
  {"seed", 0, OPT_STR, O(seed), "N",                                        \
   "input generator seed (42); given, the sampled check is repeatable"},    \
  {"strict", 0, OPT_FLAG, O(strict), NULL,                                  \
   "a wrong result is a failure and is not timed"},                         \
  {"remeasure-peak", 0, OPT_FLAG, O(remeasure_peak), NULL,                  \
   "measure the roofs (CPU peak FLOP/s, copy bandwidth, flush check) " \
   "again and refresh their caches (else once per machine; the result " \
   "records the cache and its age)"}

/* What both commands take for isolation. */
#define ISOLATE_OPTS                                                        \
  {"isolate", 0, OPT_FLAG, O(isolate), NULL,                                \
   "run each benchmark in a child process: a crash or hang becomes a "      \
   "failed result and the run goes on"},                                    \
  {"isolate-timeout", 0, OPT_DOUBLE, O(isolate_timeout), "S",               \
   "--isolate: kill a benchmark's process after S seconds (default 120 + "  \
   "2 x timeout x repetitions)"},                                           \
  {"child-index", 0, OPT_STR, O(child_index), "N",                          \
   "internal (--isolate): run only benchmark N and print its JSON"}

/* Where their results go and how they show, then -q, -v and -h. */
#define REPORT_OPTS(format_help)                                            \
  {"format", 'f', OPT_STR, O(format), "table|json|csv|md|ossdb",            \
   format_help},                                                            \
  {"output", 'o', OPT_STR, O(output), "FILE",                               \
   "write results to FILE (the table still goes to stdout)"},               \
  {"trace", 0, OPT_STR, O(trace), "FILE",                                \
   "write a Chrome/Perfetto trace of the run to FILE (ui.perfetto.dev): "  \
   "each benchmark, its warm-up and samples; under MPI rank N > 0 writes " \
   "FILE.rankN (before the extension)"},                                   \
  {"columns", 0, OPT_STR, O(columns), "LIST",                               \
   "the table's columns, comma-separated: +col adds to the default set, "   \
   "-col removes (--columns help lists them)"},                             \
  {"quiet", 'q', OPT_FLAG, O(quiet), NULL,                                  \
   "no progress line on stderr (it is shown only on a terminal)"},          \
  {"verbose", 'v', OPT_FLAG, O(verbose), NULL, "log more"},                 \
  {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"}
/* clang-format on */

/* run_list.c: runs `n` benchmarks (names: what the progress line and
 * --filter see) into the command's sinks, with the progress line; in an
 * --isolate child only the one it names. `devices`: print the devices of
 * o->backend above a table. Returns the exit status. */
int cli_run_list(const char *cmd, const cli_opts_t *o, int argc, char **argv,
                 const mb_bench_spec_t *specs, char *const *names, size_t n,
                 int devices);

#endif
