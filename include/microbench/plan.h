/* libmicrobench — plans: a config file (JSON or YAML) expanded into the
 * list of benchmarks it asks for.
 *
 * Three schemas are read (docs/config.md): the native one
 * (`benchmarks: [{op, shapes, presets, dtypes, ...}]`, every list-valued
 * field a cartesian sweep), torchao's microbenchmark schema
 * (`benchmark_mode`, `quantization_config_recipe_names`, `model_params`)
 * and the JAX accelerator-microbenchmarks schema
 * (`benchmarks: [{benchmark_name, benchmark_sweep_params, ...}]`). Errors
 * name the file, the line, the path inside the document
 * (`model_params[1].matrix_shapes[0].name`), the bad value and the valid
 * choices.
 *
 * Threading: a plan is used by one thread at a time (mb_plan_run records
 * each entry's median for the speedups of the entries after it). */
#ifndef MICROBENCH_PLAN_H
#define MICROBENCH_PLAN_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mb_plan mb_plan_t;

typedef struct mb_plan_options {
  uint32_t struct_size;
  /* Run every entry on this backend instead of the one the file asks for
   * (recorded in each result's `config.backend_override`). NULL: the file's. */
  const char *backend;
  /* POSIX extended regular expression: keep only entries whose name
   * matches. NULL: all. */
  const char *filter;
  /* Leave out entries above this many FLOP per run (noted). 0: no limit. */
  double max_flop;
  /* Timing over every entry's own: how long to sample is not what is
   * measured (a quick run of a file written for a GPU, a smoke test). The
   * fields of *timing that timing_fields names (MB_TIMING_*) replace each
   * entry's, and its result records them. NULL or 0: the file's timing. */
  const mb_bench_spec_t *timing;
  uint32_t timing_fields;
} mb_plan_options_t;

#define MB_PLAN_OPTIONS_INIT \
  { sizeof(mb_plan_options_t), NULL, NULL, 0.0, NULL, 0u }

/* mb_plan_options_t.timing_fields: which of mb_bench_spec_t's timing
 * fields the plan takes from options.timing. */
#define MB_TIMING_CRITERION 1u
#define MB_TIMING_SAMPLES 2u
#define MB_TIMING_MIN_SAMPLES 4u
#define MB_TIMING_MIN_TIME 8u /* min_time_s */
#define MB_TIMING_MAX_NOISE 16u
#define MB_TIMING_TIMEOUT 32u /* timeout_s */
#define MB_TIMING_WARMUP 64u  /* warmup_s */
#define MB_TIMING_WARMUP_RUNS 128u
#define MB_TIMING_REPETITIONS 256u

/* Reads and expands a config file; the syntax comes from the extension
 * (.json, .yaml, .yml) or the first character. `opts` may be NULL. Every
 * problem is MB_ERR_PARSE (syntax, unknown key/op/dtype/recipe/preset,
 * wrong type) or MB_ERR_IO with the message in mb_error_last(). The caller
 * owns *out. */
MB_API mb_status_t mb_plan_load(const char *path, const mb_plan_options_t *opts,
                                mb_plan_t **out);
/* The same for a document in memory; `name` stands for the file in
 * messages and records. */
MB_API mb_status_t mb_plan_parse(const char *text, size_t len, const char *name,
                                 const mb_plan_options_t *opts,
                                 mb_plan_t **out);
/* NULL is a no-op. */
MB_API void mb_plan_destroy(mb_plan_t *plan);

/* "native", "torchao" or "jax". Static. */
MB_API const char *mb_plan_schema(const mb_plan_t *plan);
MB_API size_t mb_plan_count(const mb_plan_t *plan);

/* One benchmark of a plan. Strings are owned by the plan. */
typedef struct mb_plan_entry {
  uint32_t struct_size;
  const char *name;       /* unique within the plan; what --filter matches */
  const char *group;      /* the block of the file it came from (its name) */
  const char *op;         /* op or alias, as passed to mb_bench_run */
  const char *model;      /* torchao model_type ("linear"); "" */
  const char *recipe;     /* quantization recipe ("baseline"); "" */
  const char *mode;       /* "inference" or "training"; "" */
  const char *shape_name; /* the preset's name for the shape; "" */
  const char *device_request; /* the device the file asked for; "" */
  /* Non-empty: the entry will not run here (e.g. `device: mps`) and its
   * result is `skipped` with this reason. */
  const char *skip_reason;
  /* Where the file wants this row as CSV (JAX `csv_path`, torchao
   * `output_dir`); "" none. */
  const char *csv_path;
  mb_op_params_t params;
  mb_bench_spec_t spec; /* op and params point at the fields above */
  double flop, bytes;   /* per run, the op's model */
  /* The entry whose median is this one's baseline (same problem, recipe
   * `baseline`); SIZE_MAX when none. */
  size_t baseline;
} mb_plan_entry_t;

#define MB_PLAN_ENTRY_INIT                                                    \
  {                                                                           \
    sizeof(mb_plan_entry_t), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, MB_OP_PARAMS_INIT, \
        MB_BENCH_SPEC_INIT, 0.0, 0.0, 0u                                      \
  }

MB_API mb_status_t mb_plan_entry(const mb_plan_t *plan, size_t index,
                                 mb_plan_entry_t *out);

/* Where the file asks for the run's Chrome/Perfetto trace (torchao's
 * `enable_profiler: true`: OUTPUT_DIR/trace.json; the JAX suite's
 * `trace_dir: DIR`: DIR/STEM.trace.json, STEM the config file's name
 * without its extension); "" when it asks for none. The caller opens it
 * (mb_context_trace_open; mbench run --config does, and --trace wins). */
MB_API const char *mb_plan_trace(const mb_plan_t *plan);

/* What the reader wants the user to know once per run: keys that have no
 * effect here ("torch_compile_mode: PyTorch-only; recorded, has no effect
 * here"), entries left out by --max-flop, overrides. Owned by the plan. */
MB_API size_t mb_plan_note_count(const mb_plan_t *plan);
MB_API const char *mb_plan_note(const mb_plan_t *plan, size_t index);

/* Checks every entry against ctx before anything runs: its backend is one
 * ctx knows (else MB_ERR_NOT_FOUND listing them) and its `impl` names a
 * kernel of its op there (else MB_ERR_NOT_FOUND listing the kernels). The
 * message starts with the entry's name. A backend without a device is not
 * an error: its entries are skipped when run. */
MB_API mb_status_t mb_plan_check(mb_context_t *ctx, const mb_plan_t *plan);

/* Runs entry `index` (or makes its skipped result) and records the plan's
 * facts in the result: name, recipe, model, mode, shape name, the file's
 * extra keys (`config`) and, when the entry's baseline already ran,
 * speedup_vs_baseline. Errors as mb_bench_run. The caller owns *out. */
MB_API mb_status_t mb_plan_run(mb_context_t *ctx, mb_plan_t *plan, size_t index,
                               mb_result_t **out);

/* Runs one entry's spec: mb_bench_run's contract (an input error returns
 * non-MB_OK and no result; anything else a result). `index` is the entry's
 * index in the plan. */
typedef mb_status_t (*mb_bench_runner_fn)(void *user, mb_context_t *ctx,
                                          size_t index,
                                          const mb_bench_spec_t *spec,
                                          mb_result_t **out);

/* mb_plan_run with `runner` in place of mb_bench_run (e.g. one that runs
 * the entry in a child process); the plan's facts and the speedup are
 * recorded the same way. runner NULL: mb_bench_run. */
MB_API mb_status_t mb_plan_run_with(mb_context_t *ctx, mb_plan_t *plan,
                                    size_t index, mb_bench_runner_fn runner,
                                    void *user, mb_result_t **out);

/* A seeded random order of the plan's entries (a permutation of
 * [0, count) into order[count]) in which every entry's baseline comes
 * before it, so speedups can still be computed as results complete.
 * Interleaving benchmarks this way spreads slow drift (thermal, other
 * tenants) over all of them instead of the last few. Same seed, same
 * order. */
MB_API mb_status_t mb_plan_order(const mb_plan_t *plan, uint64_t seed,
                                 size_t *order);

/* Splits the plan over `ranks` processes (owner[i]: entry i's rank, for
 * each of the plan's entries), the same on every process: entries that
 * share a baseline stay together (their speedups need it), and the groups
 * go, largest estimated cost first, to the rank with the least so far
 * (ties: the lower index, the lower rank). An entry's cost is a nominal 1 s
 * (warm-up, check, the stopping rule's minimum) plus 100 runs at 10^12
 * FLOP/s or 10^11 bytes/s, whichever is slower; a skipped entry costs
 * nothing. A guide to balance the ranks, not a prediction. A collective
 * (mb_op_is_collective) runs on every rank together: its owner is
 * MB_PLAN_EVERY_RANK. docs/distributed.md. */
#define MB_PLAN_EVERY_RANK SIZE_MAX
MB_API mb_status_t mb_plan_assign(const mb_plan_t *plan, size_t ranks,
                                  size_t *owner);

#ifdef __cplusplus
}
#endif
#endif
