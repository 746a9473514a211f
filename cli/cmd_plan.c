/* mbench run --config FILE: load a plan, print it (--dry-run) or run it
 * into the sinks and the CSV files the file asks for, with a progress line
 * on a terminal. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---- the CSV files a config names (JAX csv_path, torchao output_dir) ---- */

typedef struct csv_out {
  char *path;
  cli_out_t out; /* held until something was measured, as -o FILE */
} csv_out_t;

typedef struct csv_outs {
  csv_out_t *items;
  size_t count;
} csv_outs_t;

/* mkdir -p of the directory part of `path`. */
static int make_parent_dirs(const char *path) {
  char *dir = strdup(path);
  if (!dir) return -1;
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
      free(dir);
      return -1;
    }
    *p = '/';
  }
  free(dir);
  return 0;
}

/* --trace, else the file's (enable_profiler, trace_dir), whose directory
 * is made as the file's CSV directories are. With a probe (before the
 * results files are opened): checked and probed, not yet truncated
 * (cli_trace_probe); without, opened (after them; an isolated child: at
 * once, appending). */
static int plan_trace(const cli_opts_t *o, mb_context_t *ctx,
                      const mb_plan_t *plan, int rank,
                      cli_trace_probe_t *probe) {
  const char *from_file = mb_plan_trace(plan);
  if (!o->trace && *from_file && !o->child_index &&
      make_parent_dirs(from_file) != 0)
    return cli_error("run",
                     "the config's trace: %s: cannot make its "
                     "directory: %s",
                     from_file, strerror(errno));
  return probe ? cli_trace_probe("run", o, from_file, rank, probe)
               : cli_trace_open("run", ctx, o, from_file, rank);
}

/* The report for `path`, opened on first use. NULL on error (reported). */
static cli_out_t *csv_for(csv_outs_t *outs, mb_context_t *ctx, const char *path,
                          int argc, char **argv) {
  for (size_t i = 0; i < outs->count; i++)
    if (!strcmp(outs->items[i].path, path)) return &outs->items[i].out;
  csv_out_t *grown = realloc(outs->items, (outs->count + 1) * sizeof *grown);
  if (!grown) return NULL;
  outs->items = grown;
  csv_out_t *c = &outs->items[outs->count];
  mb_report_options_t ro = MB_REPORT_OPTIONS_INIT;
  ro.format = MB_FORMAT_CSV;
  ro.path = path;
  ro.argc = argc;
  ro.argv = (const char *const *)argv;
  if (make_parent_dirs(path) != 0) {
    cli_error("run", "cannot create the directory of %s: %s", path,
              strerror(errno));
    return NULL;
  }
  if (!(c->path = strdup(path))) {
    cli_error("run", "out of memory");
    return NULL;
  }
  ro.path = c->path;
  if (cli_out_open("run", ctx, &ro, NULL, &c->out) != 0) {
    free(c->path);
    return NULL;
  }
  outs->count++;
  return &c->out;
}

/* Before anything runs, every CSV file the config names: a path results
 * cannot go to, or one that is the config itself or the -o file, is an
 * input error; an existing file is replaced, and said so once (it may be
 * an unrelated file that happens to have that name). */
static int check_csvs(const mb_plan_t *plan, const cli_opts_t *o) {
  const char *inputs[2] = {o->config, o->output};
  const size_t num_inputs = o->output ? 2 : 1;
  const size_t n = mb_plan_count(plan);
  const char **seen = calloc(n ? n : 1, sizeof *seen); /* distinct paths */
  size_t num_seen = 0;
  if (!seen) return cli_error("run", "out of memory");
  for (size_t i = 0; i < n; i++) {
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    mb_plan_entry(plan, i, &e);
    size_t s = 0;
    while (s < num_seen && strcmp(seen[s], e.csv_path)) s++;
    if (!*e.csv_path || s < num_seen) continue;
    seen[num_seen++] = e.csv_path;
    if (mb_report_check_output(e.csv_path, inputs, num_inputs) != MB_OK) {
      free(seen);
      return cli_error("run", "%s: the CSV file the config names: %s", e.name,
                       mb_error_last());
    }
    struct stat st;
    if (stat(e.csv_path, &st) == 0)
      fprintf(stderr,
              "mbench run: note: %s (named by the config) exists; this run's "
              "results replace it\n",
              e.csv_path);
  }
  free(seen);
  return 0;
}

static int close_csvs(csv_outs_t *outs) {
  int rc = 0;
  for (size_t i = 0; i < outs->count; i++) {
    int closed = cli_out_close("run", &outs->items[i].out);
    if (closed < 0)
      rc = -1;
    else if (closed == 0)
      fprintf(stderr, "mbench run: wrote %s\n", outs->items[i].path);
    free(outs->items[i].path);
  }
  free(outs->items);
  return rc;
}

/* ---- --dry-run ---------------------------------------------------------- */

/* Why entry e will be skipped here: the file's reason, or the one its
 * result would carry when its backend has no device (mb_device_find's, as
 * the run's); "" when it will run. An unknown backend is left to the run,
 * where it is an input error. */
static const char *predicted_skip(mb_context_t *ctx, const mb_plan_entry_t *e,
                                  char *buf, size_t cap) {
  mb_device_t *dev;
  if (*e->skip_reason || !e->spec.backend) return e->skip_reason;
  mb_status_t st = mb_device_find(ctx, e->spec.backend, e->spec.device, &dev);
  if (st == MB_OK || st == MB_ERR_NOT_FOUND) return "";
  snprintf(buf, cap, "%s", mb_error_last());
  return buf;
}

static int print_plan(mb_context_t *ctx, const mb_plan_t *plan,
                      const char *file) {
  size_t n = mb_plan_count(plan), skipped = 0, no_device = 0;
  double flop = 0, bytes = 0;
  printf("%-5s %-58s %12s %12s  %s\n", "#", "name", "FLOP", "bytes", "runs on");
  for (size_t i = 0; i < n; i++) {
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    mb_plan_entry(plan, i, &e);
    flop += e.flop;
    bytes += e.bytes;
    char buf[1024];
    const char *skip = predicted_skip(ctx, &e, buf, sizeof buf);
    skipped += *skip != '\0';
    no_device += skip == buf; /* the backend's, not the file's, reason */
    const char *where = *skip            ? "skipped: "
                        : e.spec.backend ? e.spec.backend
                                         : "best available";
    char name[256], why[1024];
    mb_escape_controls(e.name, name, sizeof name);
    mb_escape_controls(skip, why, sizeof why);
    printf("%-5zu %-58s %12.4g %12.4g  %s%s\n", i + 1, name, e.flop, e.bytes,
           where, why);
  }
  printf(
      "plan: %s (%s schema): %zu benchmark%s; one run of each: %.4g FLOP, "
      "%.4g bytes in total\n",
      file, mb_plan_schema(plan), n, n == 1 ? "" : "s", flop, bytes);
  if (n && skipped == n)
    fprintf(stderr,
            "mbench run: note: every benchmark would be skipped: the run "
            "would measure nothing (exit 3)%s\n",
            no_device ? "; --backend cpu runs them on the CPU" : "");
  else if (no_device)
    fprintf(stderr,
            "mbench run: note: %zu benchmark%s would be skipped for want of "
            "a device; --backend cpu runs every benchmark on the CPU\n",
            no_device, no_device == 1 ? "" : "s");
  return EXIT_OK;
}

/* ---- running ------------------------------------------------------------ */

/* The order to run in: the file's, or --interleave's seeded shuffle. */
static int plan_order(const cli_opts_t *o, const mb_plan_t *plan,
                      size_t *order) {
  size_t n = mb_plan_count(plan);
  if (!o->interleave) {
    for (size_t i = 0; i < n; i++) order[i] = i;
    return 0;
  }
  char *end;
  unsigned long long seed = strtoull(o->interleave, &end, 10);
  if (!*o->interleave || *end)
    return cli_error("run", "--interleave: \"%s\" is not a seed (an integer)",
                     o->interleave);
  if (mb_plan_order(plan, seed, order) != MB_OK)
    return cli_error("run", "%s", mb_error_last());
  return 0;
}

/* Where each result goes: the sinks (-o, the table) and the CSV file its
 * entry names. */
typedef struct outputs {
  mb_context_t *ctx;
  const mb_plan_t *plan;
  sinks_t *sinks;
  csv_outs_t *csvs;
  const cli_runner_t *runner;
} outputs_t;

/* A cli_emit_fn: entry i's result r to its outputs. */
static int emit(void *user, size_t i, const mb_result_t *r) {
  const outputs_t *o = user;
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  mb_plan_entry(o->plan, i, &e);
  if (cli_add_result("run", o->sinks, r) != 0) return -1;
  if (!*e.csv_path) return 0;
  cli_out_t *out =
      csv_for(o->csvs, o->ctx, e.csv_path, o->runner->argc, o->runner->argv);
  return !out || cli_out_add("run", out, r) != 0 ? -1 : 0;
}

/* The worst exit status so far; *done: the benchmarks finished. */
static int run_entries(mb_context_t *ctx, mb_plan_t *plan, const size_t *order,
                       sinks_t *sinks, csv_outs_t *csvs,
                       const cli_runner_t *runner, cli_progress_t *prog,
                       size_t *done) {
  const size_t total = mb_plan_count(plan);
  int rc = EXIT_OK;
  for (*done = 0; *done < total && !cli_interrupted(); ++*done) {
    const size_t i = order[*done];
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    mb_plan_entry(plan, i, &e);
    cli_progress_begin(prog, *done, e.name);
    mb_result_t *r = NULL;
    if (mb_plan_run_with(ctx, plan, i, cli_bench_runner, (void *)runner, &r) !=
        MB_OK) {
      cli_progress_end(prog);
      cli_error("run", "%s: %s", e.name, mb_error_last());
      return EXIT_USAGE;
    }
    cli_progress_end(prog);
    if (cli_result_unfinished(r)) { /* stopped by Ctrl-C: not written */
      mb_result_destroy(r);
      break;
    }
    if (cli_result_failed(r)) rc = EXIT_BENCH_FAILED;
    outputs_t outs = {ctx, plan, sinks, csvs, runner};
    int bad = emit(&outs, i, r) != 0;
    mb_result_destroy(r);
    if (bad) return EXIT_USAGE;
    /* Finished (or kept its finished repetitions) as Ctrl-C came: it
     * counts, and nothing more starts. */
    if (cli_interrupted()) {
      ++*done;
      break;
    }
  }
  return rc;
}

static int run_plan(mb_context_t *ctx, mb_plan_t *plan, const size_t *order,
                    sinks_t *sinks, csv_outs_t *csvs,
                    const cli_runner_t *runner, size_t *done) {
  cli_progress_t prog;
  cli_progress_start(&prog, runner->opts, mb_plan_count(plan));
  int rc = run_entries(ctx, plan, order, sinks, csvs, runner, &prog, done);
  cli_progress_stop(&prog);
  return rc;
}

/* --child-index N: entry N alone, its result as JSON on stdout. A skipped
 * entry never gets here: the parent makes its result itself. */
static int run_child(mb_context_t *ctx, const mb_plan_t *plan, size_t i) {
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  mb_plan_entry(plan, i, &e);
  return cli_child_report("run", ctx, &e.spec);
}

/* Under an MPI launcher: the communicator over the job's ranks (NULL:
 * one process), and whether a rank's failure at this step stops them all
 * (cli_shard_agree). */
typedef struct job {
  mb_comm_t *comm;  /* two ranks or more: the plan is shared out */
  mb_comm_t *world; /* any launcher's: the context's, for collectives */
  void *lib;
  mb_comm_info_t info;
} job_t;

static int job_start(job_t *job, const cli_opts_t *o) {
  *job = (job_t){NULL, NULL, NULL, MB_COMM_INFO_INIT};
  if (o->child_index || !cli_mpi_launched()) return 0;
  if (cli_mpi_world("run", NULL, NULL, &job->world, &job->lib) != 0) return -1;
  mb_comm_info(job->world, &job->info);
  mb_comm_set_wait(job->world, CLI_GIVEN(o, rank_wait) ? o->rank_wait : 3600.0);
  /* A launcher's single rank runs as one process, but a collective still
   * has its communicator (of one rank). */
  if (job->info.size > 1) job->comm = job->world;
  return 0;
}

static void job_end(job_t *job) {
  mb_comm_destroy(job->world);
  if (job->lib) dlclose(job->lib);
}

/* Every rank got this far (ok) or the job stops: MB_OK for one process. */
static int job_agree(const job_t *job, int ok, const char *what) {
  if (!job->comm) return ok ? 0 : -1;
  return cli_shard_agree("run", job->comm, ok, what);
}

/* --ranks-mode: exclusive unless concurrent is asked for. */
static int ranks_mode(const cli_opts_t *o, int *exclusive) {
  *exclusive = 1;
  if (!o->ranks_mode || !strcmp(o->ranks_mode, "exclusive")) return 0;
  if (!strcmp(o->ranks_mode, "concurrent")) {
    *exclusive = 0;
    return 0;
  }
  return cli_error("run",
                   "--ranks-mode: unknown mode \"%s\"; valid: exclusive, "
                   "concurrent",
                   o->ranks_mode);
}

/* The run proper, one process or this rank's share of a job. */
static int run_outputs(const cli_opts_t *o, int argc, char **argv,
                       mb_context_t *ctx, mb_plan_t *plan, const size_t *order,
                       const job_t *job) {
  sinks_t sinks;
  csv_outs_t csvs = {NULL, 0};
  const cli_runner_t runner = {o, argc, argv};
  const size_t n = mb_plan_count(plan);
  size_t done = 0;
  int exclusive, rc = EXIT_USAGE;
  const int writer = !job->comm || job->info.rank == 0;
  int opened =
      ranks_mode(o, &exclusive) == 0 &&
      (!writer || (check_csvs(plan, o) == 0 &&
                   cli_open_sinks("run", ctx, o, argc, argv, &sinks) == 0));
  /* The trace is truncated only now that the results files are open. */
  const int traced =
      opened && plan_trace(o, ctx, plan, job->info.rank, NULL) == 0;
  if ((job->comm && job_agree(job, traced, "open its outputs") != 0) ||
      !traced) {
    if (opened && writer) cli_close_sinks("run", &sinks);
    return EXIT_USAGE;
  }
  if (job->comm) {
    char stream[4096];
    cli_shard_file(stream, sizeof stream, o->output ? o->output : "",
                   job->info.rank);
    /* -o - is stdout, rank 0's alone: no rank files then. */
    const int files = o->output && strcmp(o->output, "-") != 0;
    const cli_shard_t sh = {job->comm,
                            &runner,
                            exclusive,
                            CLI_GIVEN(o, rank_wait) ? o->rank_wait : 3600.0,
                            files ? stream : NULL,
                            files ? o->output : NULL};
    outputs_t outs = {ctx, plan, writer ? &sinks : NULL, &csvs, &runner};
    rc = cli_run_sharded(&sh, ctx, plan, order, emit, &outs);
    done = n;
  } else {
    rc = run_plan(ctx, plan, order, &sinks, &csvs, &runner, &done);
  }
  if (!writer) return rc;
  if (cli_close_sinks("run", &sinks) != 0 && rc == EXIT_OK) rc = EXIT_USAGE;
  if (close_csvs(&csvs) != 0 && rc == EXIT_OK) rc = EXIT_USAGE;
  return cli_exit_status("run", &sinks, rc, cli_interrupted(), done, n);
}

int cli_run_config(const cli_opts_t *o, int argc, char **argv) {
  /* How long to sample is not what is measured: the timing options given
   * override every entry's (the plan applies them). */
  mb_bench_spec_t timing = MB_BENCH_SPEC_INIT;
  mb_plan_options_t po = MB_PLAN_OPTIONS_INIT;
  job_t job;
  if (cli_apply_timing("run", o, &timing, &po.timing_fields) != 0 ||
      job_start(&job, o) != 0)
    return EXIT_USAGE;
  po.timing = &timing;
  po.backend = o->backend;
  po.filter = o->filter;
  po.max_flop = o->max_flop;
  mb_plan_t *plan = NULL;
  const int loaded = mb_plan_load(o->config, &po, &plan) == MB_OK;
  if (!loaded) cli_error("run", "%s", mb_error_last());
  if (job_agree(&job, loaded, "load the plan") != 0) {
    job_end(&job);
    return EXIT_USAGE;
  }
  const int speaks = !job.comm || job.info.rank == 0;
  for (size_t i = 0; speaks && i < mb_plan_note_count(plan); i++) {
    char note[1024];
    mb_escape_controls(mb_plan_note(plan, i), note, sizeof note);
    fprintf(stderr, "mbench run: note: %s\n", note);
  }
  if (speaks && po.timing_fields && !o->child_index)
    fprintf(stderr,
            "mbench run: note: the timing options given override every "
            "benchmark's timing (each result records the timing it ran "
            "with)\n");
  const size_t n = mb_plan_count(plan);
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  mb_context_t *ctx = NULL;
  /* Everything that can be wrong with the command is found before the
   * first benchmark runs, --dry-run or not: the order's seed, every
   * entry's backend and impl (the backends are loaded for that, and to
   * predict the entries they cannot run). */
  cli_apply_remeasure(o);
  cli_trace_probe_t probe = {.created = 0};
  int ready = order && plan_order(o, plan, order) == 0 &&
              cli_context("run", o->verbose, &ctx) == 0 &&
              (mb_context_set_comm(ctx, job.world), 1) &&
              (mb_plan_check(ctx, plan) == MB_OK ||
               cli_error("run", "%s", mb_error_last()) == 0) &&
              (o->dry_run || plan_trace(o, ctx, plan, job.info.rank,
                                        o->child_index ? NULL : &probe) == 0);
  if (!order) cli_error("run", "out of memory");
  size_t child;
  int is_child =
      ready && n && !o->dry_run ? cli_child_index("run", o, n, &child) : 0;
  if (ready && !o->dry_run && (n == 0 || is_child < 0)) {
    if (n == 0) cli_error("run", "%s: no benchmark left to run", o->config);
    ready = 0;
  }
  int rc = EXIT_USAGE;
  if (job_agree(&job, ready, "check the plan and its backends") == 0 &&
      (!job.comm ||
       cli_shard_same_command("run", job.comm, o, argc, argv) == 0)) {
    if (o->dry_run) {
      rc = speaks ? print_plan(ctx, plan, o->config) : EXIT_OK;
    } else {
      cli_interrupt_install(ctx);
      rc = is_child ? run_child(ctx, plan, child)
                    : run_outputs(o, argc, argv, ctx, plan, order, &job);
    }
  }
  free(order);
  cli_trace_close("run", ctx, &rc);
  cli_trace_unprobe(&probe); /* a file it made that no run wrote */
  mb_context_destroy(ctx);
  mb_plan_destroy(plan);
  job_end(&job);
  return rc;
}
