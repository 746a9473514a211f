/* Running a list of benchmarks — one `mbench run`, a run over lists of
 * shapes and dtypes, the default suite — into the command's sinks, with
 * the progress line. run --config has its own loop (cmd_plan.c: entries,
 * CSV files, the plan's runner) over the same sinks and progress. */
#include <stdio.h>
#include <string.h>

#include "opts_common.h"

/* Every spec checked (an unknown backend or implementation) before the
 * devices or the table's header print: the error is the only output. */
static int check_specs(const char *cmd, mb_context_t *ctx,
                       const mb_bench_spec_t *specs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (mb_bench_check(ctx, &specs[i]) != MB_OK)
      return cli_error(cmd, "%s", mb_error_last());
  return 0;
}

static void print_devices(mb_context_t *ctx, const char *backend) {
  for (size_t i = 0; i < mb_device_count(ctx); i++) {
    mb_device_info_t di = MB_DEVICE_INFO_INIT;
    mb_device_t *dev = mb_device_at(ctx, i);
    mb_device_info(dev, &di);
    if (backend && strcmp(backend, di.backend) != 0) continue;
    printf(
        "# %s:%u  %s  (%u cores; peak f32 %.1f GFLOP/s, bf16 %.1f GFLOP/s; "
        "%s)\n",
        di.backend, di.index, di.name, di.compute_units,
        mb_device_peak_flops(dev, MB_DTYPE_F32) / 1e9,
        mb_device_peak_flops(dev, MB_DTYPE_BF16) / 1e9,
        *di.peak_source ? di.peak_source : "peak unknown");
  }
}

/* --columns help: the table's columns, from the library's list. */
static int list_columns(void) {
  const char *title, *help;
  int is_default;
  printf("table columns (--columns a,b,... chooses; +c adds, -c removes):\n");
  for (size_t i = 0; mb_report_column(i, &title, &help, &is_default); i++)
    printf("  %-8s %-8s %s%s\n", mb_report_column(i, NULL, NULL, NULL), title,
           help, is_default ? "" : " (not by default)");
  return EXIT_OK;
}

/* What one benchmark did. */
enum { RUN_OK = 0, RUN_FAILED = 1, RUN_INPUT_ERROR = -1, RUN_INTERRUPTED = -2 };

/* Runs spec (benchmark `index` of the list) into the sinks; *written: its
 * result went there. A benchmark stopped by Ctrl-C before it finished is
 * not written; one that finished, or kept its finished repetitions, is,
 * and then the run stops. */
static int run_one(const char *cmd, mb_context_t *ctx, sinks_t *sinks,
                   const cli_runner_t *runner, cli_progress_t *prog,
                   size_t index, const mb_bench_spec_t *spec, int *written) {
  mb_result_t *r = NULL;
  *written = 0;
  const mb_status_t st = cli_bench_runner((void *)runner, ctx, index, spec, &r);
  cli_progress_end(prog);
  if (st != MB_OK) {
    cli_error(cmd, "%s", mb_error_last());
    return RUN_INPUT_ERROR;
  }
  int rc = cli_result_failed(r) ? RUN_FAILED : RUN_OK;
  if (!cli_result_unfinished(r)) {
    if (cli_add_result(cmd, sinks, r) != 0)
      rc = RUN_INPUT_ERROR;
    else
      *written = 1;
  }
  if (cli_interrupted() && rc != RUN_INPUT_ERROR) rc = RUN_INTERRUPTED;
  mb_result_destroy(r);
  return rc;
}

static int run_all(const char *cmd, mb_context_t *ctx, const cli_opts_t *o,
                   int argc, char **argv, sinks_t *sinks,
                   const mb_bench_spec_t *specs, char *const *names, size_t n) {
  const cli_runner_t runner = {o, argc, argv};
  cli_progress_t prog;
  cli_progress_start(&prog, o, n);
  int rc = EXIT_OK, r = RUN_OK;
  size_t done = 0;
  for (; done < n; done++) {
    int written = 0;
    cli_progress_begin(&prog, done, names[done]);
    r = run_one(cmd, ctx, sinks, &runner, &prog, done, &specs[done], &written);
    if (r == RUN_INPUT_ERROR) rc = EXIT_USAGE;
    if (r == RUN_FAILED) rc = EXIT_BENCH_FAILED;
    if (r == RUN_INTERRUPTED) done += (size_t)written;
    if (r == RUN_INPUT_ERROR || r == RUN_INTERRUPTED) break;
  }
  cli_progress_stop(&prog);
  if (cli_close_sinks(cmd, sinks) != 0 && rc == EXIT_OK) rc = EXIT_USAGE;
  return cli_exit_status(cmd, sinks, rc, r == RUN_INTERRUPTED, done, n);
}

int cli_run_list(const char *cmd, const cli_opts_t *o, int argc, char **argv,
                 const mb_bench_spec_t *specs, char *const *names, size_t n,
                 int devices) {
  if (o->columns && strcmp(o->columns, "help") == 0) return list_columns();
  size_t child;
  const int is_child = cli_child_index(cmd, o, n, &child);
  if (is_child < 0) return EXIT_USAGE;
  mb_context_t *ctx;
  cli_apply_remeasure(o);
  if (cli_context(cmd, o->verbose, &ctx) != 0) return EXIT_USAGE;
  cli_interrupt_install(ctx);
  int rc = EXIT_USAGE;
  sinks_t sinks;
  cli_trace_probe_t probe;
  if (is_child) {
    if (cli_trace_open(cmd, ctx, o, NULL, 0) == 0)
      rc = cli_child_report(cmd, ctx, &specs[child]);
  } else if (cli_trace_probe(cmd, o, NULL, 0, &probe) != 0) {
    /* before anything runs or any results file is opened */
  } else if (check_specs(cmd, ctx, specs, n) != 0 ||
             cli_open_sinks(cmd, ctx, o, argc, argv, &sinks) != 0) {
    cli_trace_unprobe(&probe); /* an existing trace was not touched */
  } else if (cli_trace_open(cmd, ctx, o, NULL, 0) != 0) {
    cli_close_sinks(cmd, &sinks); /* nothing measured: nothing replaced */
    cli_trace_unprobe(&probe);
  } else {
    /* The devices head a table; a JSON or CSV document on stdout must
     * stay one. Opening the sinks printed nothing yet. */
    const int table = o->output || !o->format || !strcmp(o->format, "table");
    if (devices && table) print_devices(ctx, o->backend);
    rc = run_all(cmd, ctx, o, argc, argv, &sinks, specs, names, n);
  }
  cli_trace_close(cmd, ctx, &rc);
  mb_context_destroy(ctx);
  return rc;
}
