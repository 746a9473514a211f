/* What the commands that run benchmarks share — mbench run, the default
 * suite (cmd_run.c) and run --config (cmd_plan.c): the spec from the
 * options, --child-index, the exit status. Both command files call into
 * this one and not into each other's helpers. Also what compare and merge
 * say about a results file they read (cli_results_note). */
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The timing options besides --criterion: where each is in cli_opts_t and
 * in the spec, and its MB_TIMING_* bit. Only those given apply. */
#define TIMING(opt, kind, member, bit)                                  \
  {                                                                     \
    offsetof(cli_opts_t, opt), kind, offsetof(mb_bench_spec_t, member), \
        MB_TIMING_##bit                                                 \
  }
static const struct {
  size_t opt;
  opt_kind_t kind; /* OPT_UINT into a uint32_t, or OPT_DOUBLE */
  size_t member;
  uint32_t bit;
} k_timing[] = {
    TIMING(repetitions, OPT_UINT, repetitions, REPETITIONS),
    TIMING(samples, OPT_UINT, samples, SAMPLES),
    TIMING(min_samples, OPT_UINT, min_samples, MIN_SAMPLES),
    TIMING(min_time, OPT_DOUBLE, min_time_s, MIN_TIME),
    TIMING(max_noise, OPT_DOUBLE, max_noise, MAX_NOISE),
    TIMING(timeout, OPT_DOUBLE, timeout_s, TIMEOUT),
    TIMING(warmup, OPT_DOUBLE, warmup_s, WARMUP),
    TIMING(warmup_runs, OPT_UINT, warmup_runs, WARMUP_RUNS),
};
#undef TIMING

int cli_apply_timing(const char *cmd, const cli_opts_t *o,
                     mb_bench_spec_t *spec, uint32_t *fields) {
  *fields = 0;
  if (o->criterion) {
    if (mb_criterion_from_name(o->criterion, &spec->criterion) != MB_OK)
      return cli_error(cmd, "--criterion: %s", mb_error_last());
    *fields |= MB_TIMING_CRITERION;
  }
  for (size_t i = 0; i < sizeof k_timing / sizeof *k_timing; i++) {
    if (!cli_given(o, k_timing[i].opt)) continue;
    const char *opt = (const char *)o + k_timing[i].opt;
    char *member = (char *)spec + k_timing[i].member;
    if (k_timing[i].kind == OPT_UINT)
      *(uint32_t *)member = *(const unsigned *)opt;
    else
      *(double *)member = *(const double *)opt;
    *fields |= k_timing[i].bit;
  }
  const int samples = CLI_GIVEN(o, samples);
  /* --samples alone asks for exactly that many. */
  if (samples && !o->criterion) {
    spec->criterion = MB_CRITERION_FIXED;
    *fields |= MB_TIMING_CRITERION;
  }
  if (spec->criterion == MB_CRITERION_FIXED && !spec->samples)
    return cli_error(cmd, "--criterion fixed needs --samples N");
  /* As a config's `samples:` (schema_native.c): a count means nothing to
   * the criteria that stop on their own, so asking for both is a mistake,
   * not a fixed count in disguise. */
  if (samples && spec->criterion != MB_CRITERION_FIXED)
    return cli_error(cmd,
                     "--samples is for --criterion fixed; %s stops on its "
                     "own (drop --samples, or use --criterion fixed)",
                     o->criterion);
  return 0;
}

int cli_apply_common(const char *cmd, const cli_opts_t *o,
                     mb_bench_spec_t *spec) {
  if (o->cache && mb_cache_policy_from_name(o->cache, &spec->cache) != MB_OK)
    return cli_error(cmd, "--cache: %s", mb_error_last());
  mb_flush_t flush = MB_FLUSH_WRITE;
  if (o->flush && mb_flush_from_name(o->flush, &flush) != MB_OK)
    return cli_error(cmd, "--flush: %s", mb_error_last());
  if (o->flush && spec->cache != MB_CACHE_COLD)
    return cli_error(cmd, "--flush applies to --cache cold (got --cache %s)",
                     mb_cache_policy_name(spec->cache));
  if (flush == MB_FLUSH_READ) spec->flags |= MB_BENCH_FLUSH_READ;
  uint32_t timing;
  if (cli_apply_timing(cmd, o, spec, &timing) != 0) return EXIT_USAGE;
  spec->batch = o->batch;
  /* Without --seed every run checks a fresh sample of a large output;
   * with it, the same one (the inputs are seeded either way). */
  unsigned long long seed = 42;
  if (!o->seed)
    spec->flags |= MB_BENCH_FRESH_SAMPLE;
  else if (cli_parse_u64(cmd, "seed", o->seed, ULLONG_MAX, &seed) != 0)
    return EXIT_USAGE;
  spec->seed = seed;
  spec->backend = o->backend;
  spec->device = o->device;
  spec->impl = o->impl;
  if (o->strict) spec->flags |= MB_BENCH_STRICT;
  return 0;
}

int cli_child_index(const char *cmd, const cli_opts_t *o, size_t count,
                    size_t *index) {
  if (!o->child_index) return 0;
  char *end;
  unsigned long long v = strtoull(o->child_index, &end, 10);
  if (!*o->child_index || *end || v >= count)
    return cli_error(cmd, "--child-index: \"%s\" is not in [0, %zu)",
                     o->child_index, count),
           -1;
  *index = (size_t)v;
  return 1;
}

int cli_exit_status(const char *cmd, const sinks_t *s, int worst,
                    int interrupted, size_t done, size_t total) {
  if (interrupted) {
    fprintf(stderr,
            "mbench: interrupted: %zu of %zu benchmark%s finished and "
            "written\n",
            done, total, total == 1 ? "" : "s");
    return cli_interrupt_status();
  }
  if (worst != EXIT_OK || !s || !s->results || s->skipped < s->results)
    return worst;
  /* A gate that passes on a run that measured nothing (a GPU job on a
   * runner without the GPU) hides exactly the failure it is there for. */
  /* What to try depends on who declined: a backend without a device, or
   * the CPU itself (a parameter it does not run, such as --tf32). */
  const char *try = s->skip_on_cpu
                        ? "drop what the CPU backend declines, or see mbench "
                          "list ops for what each backend runs"
                        : "try --backend cpu, or mbench list backends to see "
                          "which backends have a device";
  fprintf(stderr, "mbench %s: nothing was measured: %s skipped (%s%s); %s\n",
          cmd, s->results == 1 ? "the benchmark was" : "every benchmark was",
          s->results > 1 ? "the first: " : "", s->skip_reason, try);
  return EXIT_NOTHING_MEASURED;
}

void cli_results_note(const char *cmd, const mb_results_t *set) {
  const char *note = mb_results_note(set);
  if (*note) fprintf(stderr, "mbench %s: note: %s\n", cmd, note);
}

/* An isolated child learns its parent's trace file from here (the parent
 * may have renamed it for its rank, which the child does not know). */
#define CLI_TRACE_ENV "MBENCH_TRACE_APPEND"

/* path with ".rankN" before its extension (t.json -> t.rank1.json; no
 * extension: t.rank1). */
static void rank_path(char *buf, size_t cap, const char *path, int rank) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(path, '.');
  if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
    dot = path + strlen(path);
  snprintf(buf, cap, "%.*s.rank%d%s", (int)(dot - path), path, rank, dot);
}

/* The trace's path (rank files: rank_path) checked: neither the config
 * being read nor the results file (the trace would destroy the one and be
 * destroyed by the other), and a file we may write. 1 and path set; 0
 * when there is no trace; -1 when it is bad (reported). */
static int trace_path(const char *cmd, const cli_opts_t *o,
                      const char *plan_trace, int rank, char *path,
                      size_t cap) {
  const char *given = o->trace ? o->trace : plan_trace;
  if (!given || !*given) return 0;
  if (rank > 0)
    rank_path(path, cap, given, rank);
  else
    snprintf(path, cap, "%s", given);
  const char *others[2];
  size_t n = 0;
  if (o->config) others[n++] = o->config;
  if (o->output && strcmp(o->output, "-") != 0) others[n++] = o->output;
  if (mb_report_check_output(path, others, n) == MB_OK) return 1;
  cli_error(cmd, "%s: %s", o->trace ? "--trace" : "the config's trace",
            mb_error_last());
  return -1;
}

int cli_trace_probe(const char *cmd, const cli_opts_t *o,
                    const char *plan_trace, int rank, cli_trace_probe_t *p) {
  p->created = 0;
  if (o->child_index) return 0;
  const int has = trace_path(cmd, o, plan_trace, rank, p->path, sizeof p->path);
  if (has <= 0) return has;
  /* Opened as the trace will be, but neither truncated nor written: an
   * existing file keeps its contents until the run really starts. */
  int fd = open(p->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd >= 0)
    p->created = 1;
  else if (errno == EEXIST)
    fd = open(p->path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    return cli_error(cmd, "%s: %s: cannot write the trace: %s",
                     o->trace ? "--trace" : "the config's trace", p->path,
                     strerror(errno));
  close(fd);
  return 0;
}

void cli_trace_unprobe(cli_trace_probe_t *p) {
  struct stat st;
  /* Still empty: the trace was never opened (it writes at once). */
  if (p->created && stat(p->path, &st) == 0 && st.st_size == 0) unlink(p->path);
  p->created = 0;
}

int cli_trace_open(const char *cmd, mb_context_t *ctx, const cli_opts_t *o,
                   const char *plan_trace, int rank) {
  const char *inherited = getenv(CLI_TRACE_ENV);
  if (o->child_index) {
    if (!inherited || !*inherited) return 0;
    return mb_context_trace_open(ctx, inherited, MB_TRACE_APPEND) == MB_OK
               ? 0
               : cli_error(cmd, "--trace: %s", mb_error_last());
  }
  char path[4096];
  const int has = trace_path(cmd, o, plan_trace, rank, path, sizeof path);
  if (has <= 0) return has;
  if (mb_context_trace_open(ctx, path, 0) != MB_OK)
    return cli_error(cmd, "%s: %s", o->trace ? "--trace" : "the config's trace",
                     mb_error_last());
  if (o->isolate) setenv(CLI_TRACE_ENV, path, 1);
  return 0;
}

void cli_trace_close(const char *cmd, mb_context_t *ctx, int *rc) {
  if (ctx && mb_context_trace_close(ctx) != MB_OK) {
    cli_error(cmd, "--trace: %s", mb_error_last());
    if (*rc == EXIT_OK) *rc = EXIT_USAGE;
  }
}
