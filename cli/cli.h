/* mbench internals: commands and option parsing. */
#ifndef MBENCH_CLI_H
#define MBENCH_CLI_H

#include <microbench.h>
#include <stddef.h>

/* Exit codes: the contract scripts rely on. */
enum { EXIT_OK = 0, EXIT_BENCH_FAILED = 1, EXIT_USAGE = 2 };

/* Everything any command accepts; each command takes a subset. */
typedef struct cli_opts {
  const char *op, *shape, *dtype, *out_dtype, *backend, *impl, *cache;
  const char *format, *output, *criterion;
  const char *dtype_b, *dtype_q, *scale_a, *scale_b, *act;
  unsigned device, samples, min_samples, warmup_runs, batch;
  unsigned long long seed;
  double min_time, max_noise, timeout, warmup, alpha, beta;
  double static_scale, act_alpha, eps;
  int strict, help, verbose;
  int quantize_inputs, transpose, causal, no_affine, tf32;
} cli_opts_t;

typedef enum opt_kind {
  OPT_STR,
  OPT_UINT,
  OPT_U64,
  OPT_DOUBLE,
  OPT_FLAG
} opt_kind_t;

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
/* "fatal" helpers */
int cli_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Context with the CLI's defaults (log level from --verbose). */
int cli_context(const char *cmd, int verbose, mb_context_t **ctx);

int cmd_run(int argc, char **argv);
int cmd_suite(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);

#endif
