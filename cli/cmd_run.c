/* mbench run (one benchmark) and the default suite. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define O(field) offsetof(cli_opts_t, field)

/* What both commands take for isolation. */
/* clang-format off */
#define ISOLATE_OPTS                                                        \
  {"isolate", 0, OPT_FLAG, O(isolate), NULL,                                \
   "run each benchmark in a child process: a crash or hang becomes a "      \
   "failed result and the run goes on"},                                    \
  {"isolate-timeout", 0, OPT_DOUBLE, O(isolate_timeout), "S",               \
   "--isolate: kill a benchmark's process after S seconds (default 120 + "  \
   "2 x timeout x repetitions)"},                                           \
  {"child-index", 0, OPT_STR, O(child_index), "N",                          \
   "internal (--isolate): run only benchmark N and print its JSON"}

/* Where their results go, then -v and -h. */
#define REPORT_OPTS(format_help)                                            \
  {"format", 'f', OPT_STR, O(format), "table|json|csv|md|ossdb",            \
   format_help},                                                            \
  {"output", 'o', OPT_STR, O(output), "FILE",                               \
   "write results to FILE (the table still goes to stdout)"},               \
  {"verbose", 'v', OPT_FLAG, O(verbose), NULL, "log more"},                 \
  {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"}
/* clang-format on */

/* The op flags' options (MB_PARAM_FLAG_LIST): a row for each flag an
 * option sets, into its cli_opts_t field flag_<NAME>. */
#define PARAM_OPT(NAME, group, key, result, inverted, name, label, set_by, \
                  option, help)                                            \
  PARAM_OPT_##set_by(option, help, O(flag_##NAME))
#define PARAM_OPT_OPTION_AND_CONFIG(option, help, field) \
  {option, 0, OPT_FLAG, field, NULL, help},
#define PARAM_OPT_OPTION_ONLY PARAM_OPT_OPTION_AND_CONFIG
#define PARAM_OPT_IMPLIED(option, help, field)
/* Each flag with the field of its option (never set for IMPLIED). */
#define FLAG_OF_OPTION(NAME, ...) {O(flag_##NAME), MB_PARAM_##NAME},

static const opt_def_t k_run_opts[] = {
    {"config", 'c', OPT_STR, O(config), "FILE",
     "run the plan of a config file (JSON or YAML: native, torchao or JAX "
     "schema; docs/config.md)"},
    {"dry-run", 0, OPT_FLAG, O(dry_run), NULL,
     "--config: print the expanded plan (count, names, FLOP, bytes); run "
     "nothing"},
    {"filter", 0, OPT_STR, O(filter), "REGEX",
     "--config: only benchmarks whose name matches (POSIX extended regex)"},
    {"max-flop", 0, OPT_DOUBLE, O(max_flop), "F",
     "--config: leave out benchmarks above F FLOP per run"},
    {"op", 0, OPT_STR, O(op), "OP", "op to measure (mbench list ops)"},
    {"model", 0, OPT_STR, O(model), "NAME",
     "or a torchao model type: linear, ln_linear_<act>, transformer_block "
     "(mbench list models)"},
    {"recipe", 0, OPT_STR, O(recipe), "R",
     "quantization recipe of a model or composite op (mbench list "
     "recipes; baseline)"},
    {"mode", 0, OPT_STR, O(mode), "inference|training",
     "--model: forward only, or forward + backward (inference)"},
    {"shape", 0, OPT_STR, O(shape), "MxKxN|MxN", "problem shape"},
    {"dtype", 0, OPT_STR, O(dtype), "DT",
     "input dtype: f32, bf16, f16 (default f32)"},
    {"out-dtype", 0, OPT_STR, O(out_dtype), "DT",
     "output dtype (default: op's, usually the input's)"},
    {"backend", 0, OPT_STR, O(backend), "B",
     "backend (default: best with a device)"},
    {"device", 0, OPT_UINT, O(device), "N",
     "device index within the backend (0)"},
    {"impl", 0, OPT_STR, O(impl), "NAME",
     "kernel implementation (default: the backend's first)"},
    {"cache", 0, OPT_STR, O(cache), "cold|hot|rotate",
     "flush caches before each sample (cold, default), not (hot), or cycle "
     "operand copies larger than the last-level cache (rotate)"},
    {"flush", 0, OPT_STR, O(flush), "write|read",
     "cold: flush by writing a buffer the cache's size (write, default) or "
     "by reading twice its size (read: no dirty lines left)"},
    {"criterion", 0, OPT_STR, O(criterion), "stdrel|fixed|entropy",
     "stopping criterion (stdrel; fixed with --samples); this and the "
     "timing options below override a --config file's timing"},
    {"repetitions", 0, OPT_UINT, O(repetitions), "N",
     "sample N times over, each until the criterion holds; aggregates "
     "over the repetitions' medians (1)"},
    {"samples", 0, OPT_UINT, O(samples), "N",
     "take exactly N samples (implies --criterion fixed)"},
    {"min-samples", 0, OPT_UINT, O(min_samples), "N",
     "stdrel: at least N samples (10)"},
    {"min-time", 0, OPT_DOUBLE, O(min_time), "S",
     "stdrel: at least S seconds measured (0.5)"},
    {"max-noise", 0, OPT_DOUBLE, O(max_noise), "F",
     "stdrel: stop below this relative stdev (0.005)"},
    {"timeout", 0, OPT_DOUBLE, O(timeout), "S",
     "stdrel: give up sampling after S seconds (15)"},
    {"warmup", 0, OPT_DOUBLE, O(warmup), "S",
     "warm up at least S seconds (0.025)"},
    {"warmup-runs", 0, OPT_UINT, O(warmup_runs), "N",
     "warm up at least N runs (1)"},
    {"batch", 0, OPT_UINT, O(batch), "N",
     "runs per sample (default: automatic for hot)"},
    {"seed", 0, OPT_STR, O(seed), "N",
     "input generator seed (42); given, the sampled check is repeatable"},
    {"dtype-b", 0, OPT_STR, O(dtype_b), "DT",
     "second input's dtype (gemm B: e.g. i4, f8e5m2)"},
    {"alpha", 0, OPT_DOUBLE, O(alpha), "A", "gemm: D = alpha*A.B + beta*D (1)"},
    {"beta", 0, OPT_DOUBLE, O(beta), "B", "gemm: (0)"},
    {"scale-a", 0, OPT_STR, O(scale_a), "S",
     "gemm A's / quantize's scaling: none|tensor|row|col|block:BMxBN|group:G"},
    {"granularity", 0, OPT_STR, O(scale_a), "S",
     "same as --scale-a (quantize, dequantize)"},
    {"scale-b", 0, OPT_STR, O(scale_b), "S",
     "gemm B's scaling: none|tensor|col|block:BKxBN|group:G"},
    {"dtype-q", 0, OPT_STR, O(dtype_q), "DT",
     "gemm --quantize-inputs target: f8e4m3 (default), f8e5m2, i8"},
    {"static-scale", 0, OPT_DOUBLE, O(static_scale), "S",
     "quantize: use this scale, not absmax"},
    {"act", 0, OPT_STR, O(act), "NAME",
     "activation: relu, gelu_tanh, gelu_erf, silu, sigmoid, leakyrelu, relu6, "
     "hardswish"},
    {"act-alpha", 0, OPT_DOUBLE, O(act_alpha), "F",
     "leakyrelu negative slope (0.01)"},
    {"eps", 0, OPT_DOUBLE, O(eps), "F", "layernorm/rmsnorm epsilon (1e-5)"},
    /* clang-format off: an option per op flag that has one */
    MB_PARAM_FLAG_LIST(PARAM_OPT)
    /* clang-format on */
    {"strict", 0, OPT_FLAG, O(strict), NULL,
     "a wrong result is a failure and is not timed"},
    {"interleave", 0, OPT_STR, O(interleave), "SEED",
     "--config: run the benchmarks in a random order drawn from SEED "
     "(baselines still first); spreads drift over all of them"},
    ISOLATE_OPTS,
    REPORT_OPTS("output format (table; with -o: from the extension)"),
};
#define NUM_RUN_OPTS (sizeof k_run_opts / sizeof k_run_opts[0])

static const cli_command_t k_run_command = {
    "run", k_run_opts, NUM_RUN_OPTS,
    "usage: mbench run --op OP --shape SHAPE [options]\n"
    "       mbench run --model MODEL [--recipe R] [--mode M] --shape "
    "MxKxN [options]\n"
    "       mbench run --config FILE [--dry-run] [--backend B] [--filter "
    "REGEX]\n"
    "                  [--max-flop F] [-o FILE] [--format F]\n\n"
    "Measures one op on one backend, checks it against the reference,\n"
    "and reports the statistics of every sample. A model (torchao's "
    "linear,\nln_linear_<act>, transformer_block) runs under a "
    "quantization recipe\nand reports its steps, forward/backward "
    "times and accuracy (SQNR)\nagainst the high-precision model; "
    "mbench list models|recipes. With\n--config, runs every benchmark "
    "a config file asks for (docs/config.md).\n\n"
    "options:\n"};

/* The suite takes only what changes where and how it reports. */
static const opt_def_t k_suite_opts[] = {
    {"backend", 0, OPT_STR, O(backend), "B",
     "backend (default: cpu, so the default suite means the same everywhere)"},
    {"cache", 0, OPT_STR, O(cache), "cold|hot|rotate", "cache policy (cold)"},
    {"flush", 0, OPT_STR, O(flush), "write|read", "cold: how to flush (write)"},
    {"timeout", 0, OPT_DOUBLE, O(timeout), "S",
     "per benchmark sampling limit (4)"},
    ISOLATE_OPTS,
    REPORT_OPTS("output format (table)"),
};
#define NUM_SUITE_OPTS (sizeof k_suite_opts / sizeof k_suite_opts[0])

static const cli_command_t k_suite_command = {
    "suite", k_suite_opts, NUM_SUITE_OPTS,
    "usage: mbench [suite] [options]\n\n"
    "Runs the default suite (gemm f32/bf16 at 1024^3 and 2048^3, add\n"
    "f32/bf16) on the cpu backend (--backend to choose) and prints a "
    "table.\n\n"
    "options:\n"};

/* The op parameters beyond shape and the main dtypes; each parser's error
 * names the valid choices. */
static int apply_op_params(const cli_opts_t *o, mb_op_params_t *p) {
  if (o->dtype_b && mb_dtype_from_name(o->dtype_b, &p->dtype_b) != MB_OK)
    return cli_error("run", "--dtype-b: %s", mb_error_last());
  if (o->dtype_q && mb_dtype_from_name(o->dtype_q, &p->dtype_q) != MB_OK)
    return cli_error("run", "--dtype-q: %s", mb_error_last());
  if (o->scale_a && mb_scaling_from_string(o->scale_a, &p->scale_a) != MB_OK)
    return cli_error("run", "--scale-a: %s", mb_error_last());
  if (o->scale_b && mb_scaling_from_string(o->scale_b, &p->scale_b) != MB_OK)
    return cli_error("run", "--scale-b: %s", mb_error_last());
  if (o->act && mb_activation_from_name(o->act, &p->activation) != MB_OK)
    return cli_error("run", "--act: %s", mb_error_last());
  p->alpha = o->alpha;
  p->beta = o->beta;
  if (CLI_GIVEN(o, act_alpha)) p->act_alpha = o->act_alpha;
  if (CLI_GIVEN(o, eps)) p->eps = o->eps;
  if (CLI_GIVEN(o, static_scale)) {
    p->flags |= MB_PARAM_STATIC;
    p->scale = o->static_scale;
  }
  static const struct {
    size_t opt;
    uint32_t flag;
  } k_flags[] = {MB_PARAM_FLAG_LIST(FLAG_OF_OPTION)};
  for (size_t i = 0; i < sizeof k_flags / sizeof *k_flags; i++)
    if (*(const int *)((const char *)o + k_flags[i].opt))
      p->flags |= k_flags[i].flag;
  return 0;
}

/* --model, --recipe, --mode: a model runs as the composite op
 * mb_model_resolve names (linear_training for linear in training), with
 * the model's settings in params; a recipe goes to params.recipe, for a
 * model or a composite op given by --op (linear, ln_linear, ...). */
static int apply_model(const cli_opts_t *o, const char **op,
                       mb_op_params_t *p) {
  if (o->model && o->op)
    return cli_error("run", "--op and --model are both given; run either");
  if (o->mode && !o->model)
    return cli_error("run",
                     "--mode goes with --model (an op is its mode: linear "
                     "or linear_training)");
  if (o->model && o->act)
    return cli_error("run",
                     "--act goes with --op; a model's activation is in its "
                     "name (ln_linear_gelu)");
  if (o->recipe) {
    mb_recipe_t r;
    if (mb_recipe_from_name(o->recipe, &r) != MB_OK)
      return cli_error("run", "--recipe: %s", mb_error_last());
    p->recipe = (uint32_t)r;
  }
  *op = o->op;
  if (o->model && mb_model_resolve(o->model, o->mode, op, p) != MB_OK)
    return cli_error("run", "--model %s%s%s: %s", o->model,
                     o->mode ? " --mode " : "", o->mode ? o->mode : "",
                     mb_error_last());
  return 0;
}

/* The op resolves the params before anything is printed, so an input
 * error (a recipe the op does not take, a weight-only recipe in training)
 * is the only output, not a table header without its row. */
static int check_problem(const char *name, const mb_op_params_t *params) {
  const mb_op_t *op = mb_op_find(name);
  mb_op_params_t p = *params;
  mb_op_apply_alias(name, &p);
  if (!op || mb_op_resolve(op, &p) != MB_OK)
    return cli_error("run", "%s", mb_error_last());
  return 0;
}

/* "1024x512x256" -> params->shape. */
static int parse_shape(const char *text, mb_op_params_t *p) {
  if (mb_shape_parse(text, &p->ndim, p->shape) != MB_OK)
    return cli_error("run", "--shape: %s", mb_error_last());
  return 0;
}

/* Every spec checked (an unknown backend or implementation) before the
 * devices or the table's header print: the error is the only output. */
static int check_specs(const char *cmd, mb_context_t *ctx,
                       const mb_bench_spec_t *specs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (mb_bench_check(ctx, &specs[i]) != MB_OK)
      return cli_error(cmd, "%s", mb_error_last());
  return 0;
}

/* What run_one did. */
enum { RUN_OK = 0, RUN_FAILED = 1, RUN_INPUT_ERROR = -1, RUN_INTERRUPTED = -2 };

/* Runs spec (benchmark `index` of the command's list) into the sinks;
 * *written: its result went there. A benchmark stopped by Ctrl-C before it
 * finished is not written; one that finished, or kept its finished
 * repetitions, is, and then the run stops. */
static int run_one(const char *cmd, mb_context_t *ctx, sinks_t *sinks,
                   const cli_runner_t *runner, size_t index,
                   const mb_bench_spec_t *spec, int *written) {
  mb_result_t *r = NULL;
  *written = 0;
  if (cli_bench_runner((void *)runner, ctx, index, spec, &r) != MB_OK) {
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

/* With --config the file describes the benchmarks: an option that would
 * too is refused rather than silently applied to some of them. How long
 * to sample is not what is measured: the timing options override every
 * entry's (a short run of a file written for a GPU, a smoke test). */
static int config_conflict(const cli_opts_t *o) {
  static const char *const k_allowed[] = {
      "config",      "dry-run",    "filter",          "max-flop",
      "backend",     "format",     "output",          "verbose",
      "help",        "isolate",    "isolate-timeout", "interleave",
      "child-index", "criterion",  "repetitions",     "samples",
      "min-samples", "min-time",   "max-noise",       "timeout",
      "warmup",      "warmup-runs"};
  for (size_t i = 0; i < NUM_RUN_OPTS; i++) {
    const opt_def_t *def = &k_run_opts[i];
    size_t a = 0, n = sizeof k_allowed / sizeof *k_allowed;
    while (a < n && strcmp(k_allowed[a], def->name) != 0) a++;
    if (a < n) continue;
    if (cli_given(o, def->offset))
      return cli_error("run",
                       "--%s cannot be combined with --config: the file "
                       "describes the benchmarks (allowed with --config: "
                       "--dry-run, --filter, --max-flop, --backend, "
                       "--interleave, --isolate, --isolate-timeout, the "
                       "timing options, --format, -o, -v)",
                       def->name);
  }
  return 0;
}

int cmd_run(int argc, char **argv) {
  cli_opts_t o;
  const char *words[1];
  size_t nwords;
  cli_init_opts(&o);
  const int parsed =
      cli_parse_command(&k_run_command, argc, argv, 2, &o, words, 0, &nwords);
  if (parsed != 0) return parsed < 0 ? EXIT_USAGE : EXIT_OK;
  if (o.config)
    return config_conflict(&o) ? EXIT_USAGE : cli_run_config(&o, argc, argv);
  if (o.dry_run || o.filter || CLI_GIVEN(&o, max_flop) || o.interleave)
    return cli_error("run",
                     "--dry-run, --filter, --max-flop and --interleave need "
                     "--config");
  if (!o.op && !o.model)
    return cli_error("run",
                     "--op or --model (or --config FILE) is required; see "
                     "mbench list ops, mbench list models");
  if (!o.shape)
    return cli_error("run", "--shape is required (e.g. 1024x1024x1024)");
  mb_op_params_t params = MB_OP_PARAMS_INIT;
  if (parse_shape(o.shape, &params) != 0) return EXIT_USAGE;
  if (o.dtype && mb_dtype_from_name(o.dtype, &params.dtype) != MB_OK)
    return cli_error("run", "--dtype: %s", mb_error_last());
  if (o.out_dtype &&
      mb_dtype_from_name(o.out_dtype, &params.dtype_out) != MB_OK)
    return cli_error("run", "--out-dtype: %s", mb_error_last());
  if (apply_op_params(&o, &params) != 0) return EXIT_USAGE;
  mb_bench_spec_t spec = MB_BENCH_SPEC_INIT;
  if (apply_model(&o, &spec.op, &params) != 0 ||
      check_problem(spec.op, &params) != 0)
    return EXIT_USAGE;
  spec.params = &params;
  if (cli_apply_common("run", &o, &spec) != 0) return EXIT_USAGE;

  size_t child;
  int is_child = cli_child_index("run", &o, 1, &child);
  if (is_child < 0) return EXIT_USAGE;
  mb_context_t *ctx;
  if (cli_context("run", o.verbose, &ctx) != 0) return EXIT_USAGE;
  cli_interrupt_install(ctx);
  int rc = EXIT_USAGE;
  sinks_t sinks;
  if (is_child) {
    rc = cli_child_report("run", ctx, &spec);
  } else if (check_specs("run", ctx, &spec, 1) != 0) {
    rc = EXIT_USAGE;
  } else if (cli_open_sinks("run", ctx, &o, argc, argv, &sinks) == 0) {
    const cli_runner_t runner = {&o, argc, argv};
    int written = 0;
    int r = run_one("run", ctx, &sinks, &runner, 0, &spec, &written);
    rc = r == RUN_INPUT_ERROR ? EXIT_USAGE
         : r == RUN_FAILED    ? EXIT_BENCH_FAILED
                              : EXIT_OK;
    if (cli_close_sinks("run", &sinks) != 0 && rc == EXIT_OK) rc = EXIT_USAGE;
    rc = cli_exit_status("run", &sinks, rc, r == RUN_INTERRUPTED,
                         (size_t)written, 1);
  }
  mb_context_destroy(ctx);
  return rc;
}

/* The default suite: a few gemm and add shapes, small enough to finish in
 * well under a minute on two cores. */
static const struct {
  const char *op, *dtype, *out;
  int64_t shape[3];
  uint32_t ndim;
} k_suite[] = {
    {"gemm", "f32", NULL, {1024, 1024, 1024}, 3},
    {"gemm", "f32", NULL, {2048, 2048, 2048}, 3},
    {"gemm", "bf16", NULL, {1024, 1024, 1024}, 3},
    {"gemm", "bf16", NULL, {2048, 2048, 2048}, 3},
    {"gemm", "bf16", "f32", {2048, 2048, 2048}, 3},
    {"add", "f32", NULL, {1024, 1024}, 2},
    {"add", "f32", NULL, {4096, 4096}, 2},
    {"add", "bf16", NULL, {4096, 4096}, 2},
};

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

int cmd_suite(int argc, char **argv) {
  cli_opts_t o;
  const char *words[1];
  size_t nwords;
  cli_init_opts(&o);
  int first = argc > 1 && strcmp(argv[1], "suite") == 0 ? 2 : 1;
  const int parsed = cli_parse_command(&k_suite_command, argc, argv, first, &o,
                                       words, 0, &nwords);
  if (parsed != 0) return parsed < 0 ? EXIT_USAGE : EXIT_OK;
  mb_bench_spec_t base = MB_BENCH_SPEC_INIT;
  base.timeout_s = 4.0;
  if (!o.backend) o.backend = "cpu";
  if (cli_apply_common("suite", &o, &base) != 0) return EXIT_USAGE;
  const size_t total = sizeof k_suite / sizeof k_suite[0];
  size_t child;
  int is_child = cli_child_index("suite", &o, total, &child);
  if (is_child < 0) return EXIT_USAGE;
  mb_context_t *ctx;
  if (cli_context("suite", o.verbose, &ctx) != 0) return EXIT_USAGE;
  cli_interrupt_install(ctx);
  mb_op_params_t params[sizeof k_suite / sizeof k_suite[0]];
  mb_bench_spec_t specs[sizeof k_suite / sizeof k_suite[0]];
  for (size_t i = 0; i < total; i++) {
    params[i] = (mb_op_params_t)MB_OP_PARAMS_INIT;
    params[i].ndim = k_suite[i].ndim;
    memcpy(params[i].shape, k_suite[i].shape, sizeof k_suite[i].shape);
    mb_dtype_from_name(k_suite[i].dtype, &params[i].dtype);
    if (k_suite[i].out)
      mb_dtype_from_name(k_suite[i].out, &params[i].dtype_out);
    specs[i] = base;
    specs[i].op = k_suite[i].op;
    specs[i].params = &params[i];
  }
  int rc = EXIT_USAGE;
  sinks_t sinks;
  if (is_child) {
    rc = cli_child_report("suite", ctx, &specs[child]);
  } else if (check_specs("suite", ctx, specs, total) == 0) {
    print_devices(ctx, o.backend);
    if (cli_open_sinks("suite", ctx, &o, argc, argv, &sinks) == 0) {
      const cli_runner_t runner = {&o, argc, argv};
      rc = EXIT_OK;
      size_t done = 0;
      int r = RUN_OK;
      for (; done < total; done++) {
        int written = 0;
        r = run_one("suite", ctx, &sinks, &runner, done, &specs[done],
                    &written);
        if (r == RUN_INPUT_ERROR) rc = EXIT_USAGE;
        if (r == RUN_FAILED) rc = EXIT_BENCH_FAILED;
        if (r == RUN_INTERRUPTED) done += (size_t)written;
        if (r == RUN_INPUT_ERROR || r == RUN_INTERRUPTED) break;
      }
      if (cli_close_sinks("suite", &sinks) != 0 && rc == EXIT_OK)
        rc = EXIT_USAGE;
      rc = cli_exit_status("suite", &sinks, rc, r == RUN_INTERRUPTED, done,
                           total);
    }
  }
  mb_context_destroy(ctx);
  return rc;
}
