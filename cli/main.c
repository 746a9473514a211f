/* mbench: the command-line face of libmicrobench. It parses and prints;
 * everything else is the library's public API. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *help;
} k_commands[] = {
    {"run", cmd_run, "measure one op, or a config file's plan (--config)"},
    {"suite", cmd_suite, "the default suite (what plain `mbench` runs)"},
    {"compare", cmd_compare,
     "compare two result files; exit 1 on a regression"},
    {"merge", cmd_merge, "combine result files into one document"},
    {"report", cmd_report, "an HTML report or SVG/PNG plots of result files"},
    {"list", cmd_list,
     "list ops, backends, devices, presets, recipes, models or dtypes"},
    {"info", cmd_info, "version, backends and devices"},
};
#define NUM_COMMANDS (sizeof k_commands / sizeof k_commands[0])

/* mbench's own options, before a command (main reads them itself; the
 * table is what --help prints). */
static const opt_def_t k_options[] = {
    {"help", 'h', OPT_FLAG, 0, NULL, "show this help"},
    {"version", 0, OPT_FLAG, 0, NULL, "print the version"},
};
#define NUM_OPTIONS (sizeof k_options / sizeof k_options[0])

/* The environment mbench and its backends read: with the exit status,
 * what the man page (cli/man/mbench_man.py) takes from this help. */
static const struct {
  const char *name, *help;
} k_environment[] = {
    {"MB_BACKEND_PATH",
     "colon-separated absolute directories searched for backend modules "
     "(mb_backend_*.so) before the installed ones"},
    {"MB_BACKEND_VERBOSE", "1: say every directory and module tried, and why"},
    {"MB_CACHE_DIR",
     "where the measured roofs (CPU peak, copy bandwidth, flush check) are "
     "cached (default $XDG_CACHE_HOME/microbench, ~/.cache/microbench)"},
    {"MB_REMEASURE_PEAK",
     "1: measure the roofs (CPU peak, copy bandwidth, flush check) again "
     "and cache them"},
    {"MB_CUBLASLT_LIBRARY", "the CUDA backend's cuBLASLt library file"},
    {"MB_CUSPARSELT_LIBRARY", "the CUDA backend's cuSPARSELt library file"},
    {"MB_HIPBLASLT_LIBRARY", "the HIP backend's hipBLASLt library file"},
    {"MB_ROCBLAS_LIBRARY", "the HIP backend's rocBLAS library file"},
    {"MB_NCCL_LIBRARY",
     "the CUDA backend's NCCL library file (collectives; the emulated GPU of "
     "the tests loads only this one)"},
    {"MB_RCCL_LIBRARY", "the HIP backend's RCCL library file (collectives)"},
    {"MB_ROCTX_LIBRARY", "the HIP backend's roctx library file (ranges)"},
    {"MB_CPU_FSROOT",
     "tests: read /sys and /proc under this directory (fake CPUs)"},
    {"MB_CPU_NO_AVX512",
     "tests: the CPU backend leaves out its hand-written AVX-512 loops (the "
     "portable ones run, and such a CPU's default kernels)"},
};
#define NUM_ENVIRONMENT (sizeof k_environment / sizeof k_environment[0])

static void usage(void) {
  printf(
      "usage: mbench [command] [options]\n\n"
      "Accelerator microbenchmarks with checked numerics.\n"
      "With no command, runs the default suite and prints a table.\n\n"
      "commands:\n");
  for (size_t i = 0; i < NUM_COMMANDS; i++)
    printf("  %-8s %s\n", k_commands[i].name, k_commands[i].help);
  printf(
      "\nA command's options: mbench COMMAND --help. What there is to run:\n"
      "mbench list ops|models|recipes|presets|dtypes (docs/cli.md).\n\n"
      "options:\n");
  cli_print_options(k_options, NUM_OPTIONS);
  printf(
      "\nexit status:\n"
      "  0    success\n"
      "  1    a benchmark failed or computed a wrong result (compare: a "
      "regression)\n"
      "  2    usage or input error\n"
      "  3    run, suite: nothing was measured, every result was skipped\n"
      "  130  interrupted by Ctrl-C (143: SIGTERM); finished results are "
      "written\n\n"
      "environment:\n");
  for (size_t i = 0; i < NUM_ENVIRONMENT; i++)
    printf("  %-22s %s\n", k_environment[i].name, k_environment[i].help);
}

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    if (argc >= 2 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
      usage();
      return EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
      printf("mbench %s (libmicrobench %s, commit %s)\n", mb_version(),
             mb_version(), mb_git_commit());
      return EXIT_OK;
    }
    return cmd_suite(argc, argv);
  }
  for (size_t i = 0; i < NUM_COMMANDS; i++)
    if (strcmp(argv[1], k_commands[i].name) == 0)
      return k_commands[i].fn(argc, argv);
  fprintf(stderr, "mbench: unknown command \"%s\"; valid commands:", argv[1]);
  for (size_t i = 0; i < NUM_COMMANDS; i++)
    fprintf(stderr, "%s %s", i ? "," : "", k_commands[i].name);
  fprintf(stderr, "\n");
  return EXIT_USAGE;
}
