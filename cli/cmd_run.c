/* mbench run: one benchmark, or one per shape and dtype of a list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts_common.h"

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
    {"shape", 0, OPT_STR, O(shape), "MxKxN|MxN[,...]",
     "problem shape; a comma-separated list runs each"},
    {"dtype", 0, OPT_STR, O(dtype), "DT[,...]",
     "input dtype: f32 (default), f16, bf16, f8e4m3, f8e5m2, i8, i4 (mbench "
     "list dtypes); a comma-separated list runs each"},
    {"out-dtype", 0, OPT_STR, O(out_dtype), "DT",
     "output dtype (default: op's, usually the input's; mbench list "
     "dtypes)"},
    SELECT_OPTS("backend (default: best with a device; mbench list backends)"),
    TIMING_OPTS,
    {"batch", 0, OPT_UINT, O(batch), "N",
     "runs per sample (default: automatic for hot)"},
    {"dtype-b", 0, OPT_STR, O(dtype_b), "DT",
     "second input's dtype (gemm B: e.g. i4, f8e5m2; mbench list dtypes)"},
    {"alpha", 0, OPT_DOUBLE, O(alpha), "A", "gemm: D = alpha*A.B + beta*D (1)"},
    {"beta", 0, OPT_DOUBLE, O(beta), "B", "gemm: (0)"},
    {"scale-a", 0, OPT_STR, O(scale_a), "S",
     "gemm A's / quantize's scaling: none|tensor|row|col|block:BMxBN|group:G"},
    {"granularity", 0, OPT_STR, O(scale_a), "S",
     "same as --scale-a (quantize, dequantize)"},
    {"scale-b", 0, OPT_STR, O(scale_b), "S",
     "gemm B's scaling: none|tensor|row|col|block:BKxBN|group:G"},
    {"scale-dtype", 0, OPT_STR, O(scale_dtype), "DT",
     "scales' dtype: f32 (default), e8m0 (MX power-of-two scales, fp8 or "
     "f4e2m1 elements; MXFP8/MXFP4 with block:1x32 / block:32x1), f8e4m3 "
     "(NVFP4: f4e2m1 elements, block:1x16, --static-scale is the "
     "per-tensor scale)"},
    {"dtype-q", 0, OPT_STR, O(dtype_q), "DT",
     "gemm --quantize-inputs target: f8e4m3 (default), f8e5m2, i8, f4e2m1"},
    {"static-scale", 0, OPT_DOUBLE, O(static_scale), "S",
     "quantize: use this scale, not absmax (NVFP4: the per-tensor scale)"},
    {"act", 0, OPT_STR, O(act), "NAME",
     "activation: relu, gelu_tanh, gelu_erf, silu, sigmoid, leakyrelu, relu6, "
     "hardswish"},
    {"act-alpha", 0, OPT_DOUBLE, O(act_alpha), "F",
     "leakyrelu negative slope (0.01)"},
    {"eps", 0, OPT_DOUBLE, O(eps), "F",
     "layernorm, rmsnorm, rmsnorm_bwd epsilon (1e-5)"},
    {"kv-heads", 0, OPT_UINT, O(kv_heads), "N",
     "attention: K/V heads, dividing H (grouped-query: query head h reads "
     "K/V head h / (H / N); 1: multi-query; default H)"},
    {"reduce-op", 0, OPT_STR, O(reduce_op), "OP",
     "all_reduce, reduce_scatter, reduce: sum (default), prod, min, max"},
    {"root", 0, OPT_UINT, O(root), "R", "broadcast, reduce: the root rank (0)"},
    /* clang-format off: an option per op flag that has one */
    MB_PARAM_FLAG_LIST(PARAM_OPT)
    /* clang-format on */
    {"interleave", 0, OPT_STR, O(interleave), "SEED",
     "--config: run the benchmarks in a random order drawn from SEED "
     "(baselines still first); spreads drift over all of them"},
    {"ranks-mode", 0, OPT_STR, O(ranks_mode), "M",
     "--config under mpirun/srun: exclusive (one benchmark at a time across "
     "the job, the default) or concurrent (every rank at once)"},
    {"rank-wait", 0, OPT_DOUBLE, O(rank_wait), "S",
     "--config under mpirun/srun: the longest a rank waits for the others' "
     "benchmarks before it gives up on them (3600)"},
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
  if (o->scale_dtype &&
      mb_dtype_from_name(o->scale_dtype, &p->dtype_scale) != MB_OK)
    return cli_error("run", "--scale-dtype: %s", mb_error_last());
  if (o->act && mb_activation_from_name(o->act, &p->activation) != MB_OK)
    return cli_error("run", "--act: %s", mb_error_last());
  p->alpha = o->alpha;
  p->beta = o->beta;
  if (CLI_GIVEN(o, act_alpha)) p->act_alpha = o->act_alpha;
  if (CLI_GIVEN(o, eps)) p->eps = o->eps;
  p->kv_heads = o->kv_heads;
  mb_reduce_op_t red = MB_REDUCE_SUM;
  if (o->reduce_op && mb_reduce_op_from_name(o->reduce_op, &red) != MB_OK)
    return cli_error("run", "--reduce-op: %s", mb_error_last());
  p->reduce_op = (uint32_t)red;
  p->root = (int32_t)o->root;
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
static int check_problem(const char *name, const mb_op_params_t *params,
                         mb_op_params_t *resolved) {
  const mb_op_t *op = mb_op_find(name);
  *resolved = *params;
  mb_op_apply_alias(name, resolved);
  if (!op || mb_op_resolve(op, resolved) != MB_OK)
    return cli_error("run", "%s", mb_error_last());
  return 0;
}

/* The benchmarks of one command line: one per dtype and shape of
 * --dtype and --shape, dtype by dtype (the table reads as a sweep of
 * shapes for each), each problem resolved before anything runs. */
typedef struct batch {
  mb_bench_spec_t *specs;
  mb_op_params_t *params;
  char **names;
  size_t n;
} batch_t;

static void batch_free(batch_t *b) {
  for (size_t i = 0; i < b->n; i++) free(b->names[i]);
  free(b->specs);
  free(b->params);
  free(b->names);
}

static int expand_items(const cli_opts_t *o, const mb_op_params_t *base,
                        const mb_bench_spec_t *spec, char (*shapes)[CLI_ITEM],
                        char (*dtypes)[CLI_ITEM], batch_t *b) {
  size_t ns, nd = 1;
  if (cli_split_list("run", "shape", o->shape, shapes, &ns) != 0 ||
      (o->dtype && cli_split_list("run", "dtype", o->dtype, dtypes, &nd) != 0))
    return EXIT_USAGE;
  if (!o->dtype) snprintf(dtypes[0], CLI_ITEM, "%s", "");
  const size_t total = ns * nd;
  b->specs = calloc(total, sizeof *b->specs);
  b->params = calloc(total, sizeof *b->params);
  b->names = calloc(total, sizeof *b->names);
  if (!b->specs || !b->params || !b->names)
    return cli_error("run", "out of memory");
  for (size_t d = 0; d < nd; d++)
    for (size_t s = 0; s < ns; s++) {
      mb_op_params_t *p = &b->params[b->n];
      mb_bench_spec_t *sp = &b->specs[b->n];
      *p = *base;
      *sp = *spec;
      if (mb_shape_parse(shapes[s], &p->ndim, p->shape) != MB_OK)
        return cli_error("run", "--shape %s: %s", shapes[s], mb_error_last());
      if (*dtypes[d] && mb_dtype_from_name(dtypes[d], &p->dtype) != MB_OK)
        return cli_error("run", "--dtype: %s", mb_error_last());
      mb_op_params_t resolved;
      if (apply_model(o, &sp->op, p) != 0 ||
          check_problem(sp->op, p, &resolved) != 0)
        return EXIT_USAGE;
      sp->params = p;
      char name[3 * CLI_ITEM + 64];
      snprintf(name, sizeof name, "%s/%s/%s", o->model ? o->model : sp->op,
               shapes[s], mb_dtype_name(resolved.dtype));
      if (!(b->names[b->n] = strdup(name)))
        return cli_error("run", "out of memory");
      b->n++;
    }
  return EXIT_OK;
}

static int expand(const cli_opts_t *o, const mb_op_params_t *base,
                  const mb_bench_spec_t *spec, batch_t *b) {
  char(*items)[CLI_ITEM] = calloc(2 * CLI_MAX_ITEMS, CLI_ITEM);
  if (!items) return cli_error("run", "out of memory");
  int rc = expand_items(o, base, spec, items, items + CLI_MAX_ITEMS, b);
  free(items);
  return rc;
}

/* With --config the file describes the benchmarks: an option that would
 * too is refused rather than silently applied to some of them. How long
 * to sample is not what is measured: the timing options override every
 * entry's (a short run of a file written for a GPU, a smoke test). */
static int config_conflict(const cli_opts_t *o) {
  static const char *const k_allowed[] = {
      "config",         "dry-run",     "filter",          "max-flop",
      "backend",        "format",      "output",          "verbose",
      "help",           "isolate",     "isolate-timeout", "interleave",
      "child-index",    "criterion",   "repetitions",     "samples",
      "min-samples",    "min-time",    "max-noise",       "timeout",
      "warmup",         "warmup-runs", "columns",         "quiet",
      "remeasure-peak", "ranks-mode",  "rank-wait",       "trace"};
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
                       "timing options, --remeasure-peak, --format, -o, "
                       "--trace, --columns, -q, -v)",
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
  /* Each rank would run the list alone and write the same files. */
  if (cli_mpi_launched() && !o.child_index)
    return cli_error("run",
                     "under an MPI launcher, mbench run takes --config (the "
                     "plan is shared out over the ranks, and collectives run "
                     "on all of them); put the benchmark in a config file "
                     "(docs/distributed.md)");
  mb_op_params_t base = MB_OP_PARAMS_INIT;
  if (o.out_dtype && mb_dtype_from_name(o.out_dtype, &base.dtype_out) != MB_OK)
    return cli_error("run", "--out-dtype: %s", mb_error_last());
  if (apply_op_params(&o, &base) != 0) return EXIT_USAGE;
  mb_bench_spec_t spec = MB_BENCH_SPEC_INIT;
  if (cli_apply_common("run", &o, &spec) != 0) return EXIT_USAGE;
  batch_t b = {NULL, NULL, NULL, 0};
  int rc = expand(&o, &base, &spec, &b);
  if (rc == EXIT_OK)
    rc = cli_run_list("run", &o, argc, argv, b.specs, b.names, b.n, 0);
  batch_free(&b);
  return rc;
}
