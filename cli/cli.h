/* mbench internals: commands and option parsing. */
#ifndef MBENCH_CLI_H
#define MBENCH_CLI_H

#include <microbench.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes: the contract scripts rely on. */
enum {
  EXIT_OK = 0,
  EXIT_BENCH_FAILED = 1,
  EXIT_USAGE = 2,
  /* Every result was skipped (no device, ...): a CI job that measured
   * nothing must not pass as if it had. */
  EXIT_NOTHING_MEASURED = 3,
  /* Interrupted: 128 + the signal, as shells report it (130 SIGINT, 143
   * SIGTERM; cli_interrupt_status). */
};

/* Everything any command accepts; each command takes a subset. */
typedef struct cli_opts {
  const char *op, *shape, *dtype, *out_dtype, *backend, *impl, *cache;
  const char *flush; /* cold samples: write (default) or read */
  const char *format, *output, *criterion;
  const char *trace;   /* --trace: the run's Chrome/Perfetto trace file */
  const char *columns; /* the table's (mb_report_options_t.columns) */
  int quiet;           /* no progress line */
  int remeasure_peak;  /* MB_REMEASURE_PEAK=1 for this process */
  const char *dtype_b, *dtype_q, *scale_a, *scale_b, *act, *scale_dtype;
  const char *model, *recipe, *mode; /* run: a torchao model (model.h) */
  unsigned device, samples, min_samples, warmup_runs, batch;
  unsigned kv_heads;     /* run: attention's K/V heads (0: as many as H) */
  const char *reduce_op; /* run: a collective's reduction */
  unsigned root;         /* run: broadcast's and reduce's root rank */
  const char *seed;      /* NULL: 42 and a fresh check sample per run */
  double min_time, max_noise, timeout, warmup, alpha, beta;
  double static_scale, act_alpha, eps;
  int strict, help, verbose;
  /* Each op flag's option (MB_PARAM_FLAG_LIST): flag_<NAME>, 1 when
   * given. */
#define CLI_FLAG_FIELD(NAME, ...) int flag_##NAME;
  MB_PARAM_FLAG_LIST(CLI_FLAG_FIELD)
#undef CLI_FLAG_FIELD
  const char *config, *filter; /* run --config */
  double max_flop;
  int dry_run;
  /* list: every backend's kernels (--all); bare names, one a line, for
   * completion scripts (--names) */
  int list_all, list_names;
  double threshold;         /* compare */
  const char *title, *plot; /* report */
  const char *by;
  const char *fail_on; /* compare: verdicts that also fail, comma-separated */
  unsigned repetitions;
  const char *interleave;  /* run --config: seed of the order */
  const char *ranks_mode;  /* under MPI: exclusive (default), concurrent */
  double rank_wait;        /* under MPI: the longest wait for other ranks */
  int isolate;             /* each benchmark in a child process */
  double isolate_timeout;  /* its watchdog, s; 0: from the spec */
  const char *child_index; /* set in that child: run only entry N */
  /* The fields (offsets into this struct) the command line set: whether
   * an option was given is never read from its value, so no value the user
   * can type stands for "not given" (--timeout -1 ran 15 s). */
  size_t given[64];
  size_t num_given;
  /* The CPUs this process was started on, read before any backend pins
   * its threads (the CPU backend binds the calling thread to a core): an
   * isolated child gets them back, not the core its parent's thread was
   * on (isolate.c). */
  cpu_set_t start_cpus;
  int have_start_cpus;
} cli_opts_t;

/* 1 when the option behind cli_opts_t's `field` was given. */
int cli_given(const cli_opts_t *o, size_t offset);
#define CLI_GIVEN(o, field) cli_given((o), offsetof(cli_opts_t, field))

typedef enum opt_kind { OPT_STR, OPT_UINT, OPT_DOUBLE, OPT_FLAG } opt_kind_t;

typedef struct opt_def {
  const char *name; /* long name without "--" */
  char short_name;
  opt_kind_t kind;
  size_t offset; /* into cli_opts_t */
  const char *metavar;
  const char *help;
} opt_def_t;

/* Parses argv[first..] against `defs`; positional words go to `words`.
 * On error prints "mbench CMD: ..." to stderr and returns -1. */
int cli_parse(const char *cmd, int argc, char **argv, int first,
              const opt_def_t *defs, size_t num_defs, cli_opts_t *opts,
              const char **words, size_t max_words, size_t *num_words);
void cli_print_options(const opt_def_t *defs, size_t num_defs);
/* A command's options, and what its --help says before listing them. */
typedef struct cli_command {
  const char *name; /* "run": what its messages start with */
  const opt_def_t *defs;
  size_t num_defs;
  const char *usage; /* up to and including "options:\n" */
} cli_command_t;
/* cli_parse with the command's options, then --help: its usage and
 * options. 0: go on; 1: the help was printed (exit 0); -1: an error,
 * reported. */
int cli_parse_command(const cli_command_t *c, int argc, char **argv, int first,
                      cli_opts_t *opts, const char **words, size_t max_words,
                      size_t *num_words);
/* The items of --OPT's comma-separated list into items[0 .. *n) (at most
 * CLI_MAX_ITEMS, each under CLI_ITEM bytes); an empty or overlong item is
 * an error, reported as "mbench CMD: --OPT ...". */
enum { CLI_MAX_ITEMS = 256, CLI_ITEM = 96 };
int cli_split_list(const char *cmd, const char *opt, const char *list,
                   char (*items)[CLI_ITEM], size_t *n);
/* "fatal" helpers */
int cli_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Context with the CLI's defaults (log level from --verbose). */
int cli_context(const char *cmd, int verbose, mb_context_t **ctx);
/* --remeasure-peak: the CPU backend measures its peak afresh (and
 * rewrites its cache) in this process; an --isolate child reads the cache
 * its parent just wrote. */
void cli_apply_remeasure(const cli_opts_t *o);

/* The defaults every command starts from. */
void cli_init_opts(cli_opts_t *o);
/* v as an integer in 0 .. max into *out; else a message that says whether
 * v is not a non-negative integer or out of range (naming max), -1. */
int cli_parse_u64(const char *cmd, const char *name, const char *v,
                  unsigned long long max, unsigned long long *out);

/* run_common.c: what the commands that run benchmarks (run, the suite,
 * run --config) share. */
/* The timing, cache, backend and impl options into a spec. */
int cli_apply_common(const char *cmd, const cli_opts_t *o,
                     mb_bench_spec_t *spec);
/* Only the timing options that were given (criterion, samples,
 * min-samples, min-time, max-noise, timeout, warmup, warmup-runs,
 * repetitions) over spec's own; *fields says which spec fields they set
 * (MB_TIMING_*: with --config, the plan's timing override). Returns
 * nonzero (reported) when they do not make sense. */
int cli_apply_timing(const char *cmd, const cli_opts_t *o,
                     mb_bench_spec_t *spec, uint32_t *fields);
/* The run's trace (docs/measurement.md, "Traces"): --trace, else the
 * plan's (a config's enable_profiler or trace_dir; NULL or "": none),
 * opened on ctx; under MPI rank N > 0 writes FILE with ".rankN" before
 * its extension; an --isolate child appends to its parent's file. A path
 * that cannot be written, or that is the config or -o, is reported naming
 * it: nonzero. */
int cli_trace_open(const char *cmd, mb_context_t *ctx, const cli_opts_t *o,
                   const char *plan_trace, int rank);
/* Before the results files are opened: the trace's path checked and
 * opened as the trace will be, without truncating an existing file (nor
 * writing it), so a run refused for its outputs loses no earlier trace;
 * cli_trace_open truncates it once they are open. cli_trace_unprobe
 * removes a file the probe made that is still empty (no trace was opened
 * on it). 0, or nonzero when the trace cannot be written (reported);
 * nothing for an isolated child. */
typedef struct cli_trace_probe {
  char path[4096];
  int created;
} cli_trace_probe_t;
int cli_trace_probe(const char *cmd, const cli_opts_t *o,
                    const char *plan_trace, int rank, cli_trace_probe_t *p);
void cli_trace_unprobe(cli_trace_probe_t *p);
/* Ends the trace; a failed write is reported and makes *rc EXIT_USAGE. */
void cli_trace_close(const char *cmd, mb_context_t *ctx, int *rc);
/* --child-index into *index; 1 when set, 0 when not, -1 on a bad value. */
int cli_child_index(const char *cmd, const cli_opts_t *o, size_t count,
                    size_t *index);
/* sinks.c: a report to a file that is opened only once a result was
 * measured (ok or failed): skipped results are held until then, so a run
 * that measured nothing leaves an existing file as it was. With no path
 * (stdout) it opens at once. */
typedef struct cli_out {
  mb_context_t *ctx;
  mb_report_options_t ro; /* ro.path, ro.argv: borrowed */
  mb_report_t *rep;
  char **held; /* the skipped results' JSON until rep opens */
  size_t num_held;
} cli_out_t;
/* `input`: a file the command reads (its --config), which the output must
 * not be; NULL when none. */
int cli_out_open(const char *cmd, mb_context_t *ctx,
                 const mb_report_options_t *ro, const char *input,
                 cli_out_t *out);
int cli_out_add(const char *cmd, cli_out_t *out, const mb_result_t *r);
/* 0: written; 1: nothing measured and the file exists, left untouched
 * (said on stderr); -1: an error, reported. */
int cli_out_close(const char *cmd, cli_out_t *out);

/* sinks.c: where results go — the chosen format to -o FILE or stdout,
 * plus the table on stdout whenever stdout is not already taken. */
typedef struct sinks {
  cli_out_t file;
  mb_report_t *console;
  size_t results, skipped; /* added so far; of them skipped */
  char skip_reason[512];   /* the first skipped result's reason */
  int skip_on_cpu;         /* ... and it was the CPU backend's */
} sinks_t;
/* The exit status after a command's last benchmark: interrupted (130),
 * else `worst` (0, 1 or 2), else 3 when every result in `s` was skipped
 * (said on stderr, with the reason and what to try). */
int cli_exit_status(const char *cmd, const sinks_t *s, int worst,
                    int interrupted, size_t done, size_t total);
/* The width a table on stdout fits: $COLUMNS, else the terminal's, else
 * 100 (a pipe, a file). */
unsigned cli_terminal_width(void);
/* "json" for x.json, "csv", "md"; "table" otherwise. */
const char *cli_format_from_extension(const char *path);
int cli_open_sinks(const char *cmd, mb_context_t *ctx, const cli_opts_t *o,
                   int argc, char **argv, sinks_t *s);
int cli_add_result(const char *cmd, sinks_t *s, const mb_result_t *r);
int cli_close_sinks(const char *cmd, sinks_t *s);
/* 1 when the result counts as a failure for the exit code: failed, or
 * wrong. */
int cli_result_failed(const mb_result_t *r);
/* 1 when Ctrl-C (SIGTERM) stopped the benchmark before it finished (failed,
 * reason "interrupted"): such a result is not written. */
int cli_result_unfinished(const mb_result_t *r);
/* What reading a results file dropped (mb_results_note), on stderr. */
void cli_results_note(const char *cmd, const mb_results_t *set);
/* How every command runs a benchmark: in this process, or (--isolate) in
 * a child process re-executed with argv + --child-index N (isolate.c). */
typedef struct cli_runner {
  const cli_opts_t *opts;
  int argc;
  char **argv;
} cli_runner_t;
/* An mb_bench_runner_fn; user is a cli_runner_t. */
mb_status_t cli_bench_runner(void *user, mb_context_t *ctx, size_t index,
                             const mb_bench_spec_t *spec, mb_result_t **out);
/* In the child: runs spec and prints its result as one JSON line. */
int cli_child_report(const char *cmd, mb_context_t *ctx,
                     const mb_bench_spec_t *spec);

/* mpi_launch.c: 1 when an MPI launcher (mpirun, srun) started this
 * process with more than one rank (or a PMIx one, whose size MPI says). */
int cli_mpi_launched(void);
/* The communicator over the job's ranks from libmicrobench_mpi, loaded at
 * run time (*lib: its handle, dlclose after destroying *out); 0, or -1
 * with the error said. */
int cli_mpi_world(const char *cmd, int *argc, char ***argv, mb_comm_t **out,
                  void **lib);

/* shard_run.c: run --config across the ranks of a job. */
typedef int (*cli_emit_fn)(void *user, size_t index, const mb_result_t *r);
typedef struct cli_shard {
  mb_comm_t *comm;
  const cli_runner_t *runner;
  int exclusive;           /* one benchmark at a time across the job */
  double wait_s;           /* the longest a rank waits for the others' work */
  const char *stream_path; /* this rank's own results file; NULL: none */
  /* The -o path the rank files and the manifest are named after; NULL:
   * none (no -o, or stdout), and no manifest. */
  const char *output;
} cli_shard_t;
/* Every rank says whether it could `what` (ok); 0 when all could, else -1
 * (the ranks that could say who could not). */
int cli_shard_agree(const char *cmd, mb_comm_t *comm, int ok, const char *what);
/* 0 when every rank runs the same command line and config bytes. */
int cli_shard_same_command(const char *cmd, mb_comm_t *comm,
                           const cli_opts_t *o, int argc, char **argv);
/* Runs this rank's share of the plan; on rank 0, `emit` gets every
 * rank's results in plan order. The job's exit status (the worst rank's).
 */
int cli_run_sharded(const cli_shard_t *sh, mb_context_t *ctx, mb_plan_t *plan,
                    const size_t *order, cli_emit_fn emit, void *emit_user);

/* shard_manifest.c: who ran what in a sharded run, and putting a job
 * that lost a rank back together. */
/* Rank r's results file for -o output: "<output>.rank<r>.json". */
void cli_shard_file(char *buf, size_t cap, const char *output, int rank);
/* Every rank removes its files of an earlier run at sh->output, then rank
 * 0 writes the manifest (every entry's owner, each rank's host and file);
 * 0 on every rank once it is written, else -1 (said) on every rank. */
int cli_shard_manifest(const char *cmd, const cli_shard_t *sh,
                       const mb_plan_t *plan, const size_t *owner,
                       double wait_s);
/* 1 when path is a sharded run's manifest. */
int cli_is_shard_manifest(const char *path);
/* mbench merge MANIFEST -o OUT: the ranks' files in plan order to OUT,
 * and what the job lost (ranks, benchmarks not run) on stderr: the exit
 * status, 1 when anything did not run. */
int cli_merge_sharded(const char *manifest, const char *out);
/* cmd_merge.c: "merged N results from K files into OUT", N as OUT holds
 * them; the exit status. */
int cli_merge_report(const char *out, size_t inputs);

/* progress.c: the progress line on stderr (a terminal, not --quiet). */
typedef struct cli_progress {
  int on, ticking, shown, stop;
  size_t total, done;
  double start;
  char name[128];
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
} cli_progress_t;
/* Starts the line's clock (and its redrawing thread); `p` must stay put
 * until cli_progress_stop. */
void cli_progress_start(cli_progress_t *p, const cli_opts_t *o, size_t total);
/* Benchmark `done` + 1 of total, `name`, starts: shown until _end. */
void cli_progress_begin(cli_progress_t *p, size_t done, const char *name);
/* Clears the line: before anything goes to stdout. */
void cli_progress_end(cli_progress_t *p);
void cli_progress_stop(cli_progress_t *p);

/* interrupt.c: Ctrl-C stops after the benchmark in progress (which is
 * dropped) with every finished result written. */
void cli_interrupt_install(mb_context_t *ctx);
int cli_interrupted(void);
/* The exit status of an interrupted run: 128 + the signal that stopped it
 * (130 for Ctrl-C, 143 for SIGTERM). */
int cli_interrupt_status(void);

/* cmd_plan.c: mbench run --config FILE (o holds the parsed options). */
int cli_run_config(const cli_opts_t *o, int argc, char **argv);

int cmd_run(int argc, char **argv);
int cmd_suite(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* report_png.c: the first SVG-to-PNG converter on PATH (an index for
 * cli_svg_to_png), or -1 when none, said as "mbench CMD: ..." naming
 * those looked for. */
int cli_png_converter(const char *cmd);
/* Converts svg to png with it; 0, or the error said and EXIT_USAGE. */
int cli_svg_to_png(const char *cmd, int converter, const char *svg,
                   const char *png);

#endif
