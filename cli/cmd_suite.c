/* mbench suite (what plain `mbench` runs): a few gemm and add shapes on
 * the CPU backend, small enough to finish in well under a minute on two
 * cores, with the run options to choose among them and how to time. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts_common.h"

static const opt_def_t k_suite_opts[] = {
    {"filter", 0, OPT_STR, O(filter), "REGEX",
     "only the benchmarks whose name (op/shape/dtype, as the progress line "
     "shows) matches (POSIX extended regex)"},
    {"dtype", 0, OPT_STR, O(dtype), "DT[,...]",
     "only the benchmarks of these input dtypes (f32, bf16)"},
    SELECT_OPTS("backend (default: cpu, so the default suite means the same "
                "everywhere; mbench list backends)"),
    TIMING_OPTS,
    ISOLATE_OPTS,
    REPORT_OPTS("output format (table)"),
};
#define NUM_SUITE_OPTS (sizeof k_suite_opts / sizeof k_suite_opts[0])

static const cli_command_t k_suite_command = {
    "suite", k_suite_opts, NUM_SUITE_OPTS,
    "usage: mbench [suite] [options]\n\n"
    "Runs the default suite (gemm f32/bf16 at 1024^3 and 2048^3, add\n"
    "f32/bf16) on the cpu backend (--backend to choose) and prints a "
    "table.\n--filter and --dtype choose among its benchmarks.\n\n"
    "options:\n"};

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
#define SUITE_SIZE (sizeof k_suite / sizeof k_suite[0])

/* "gemm/1024x1024x1024/bf16->f32": what --filter matches. */
static void suite_name(size_t i, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "%s/", k_suite[i].op);
  for (uint32_t d = 0; d < k_suite[i].ndim; d++)
    n += snprintf(buf + n, cap - (size_t)n, "%s%lld", d ? "x" : "",
                  (long long)k_suite[i].shape[d]);
  snprintf(buf + n, cap - (size_t)n, "/%s%s%s", k_suite[i].dtype,
           k_suite[i].out ? "->" : "", k_suite[i].out ? k_suite[i].out : "");
}

/* --dtype's list as dtypes (aliases such as bfloat16 included); none
 * given: every dtype. */
typedef struct dtype_set {
  mb_dtype_t dtypes[CLI_MAX_ITEMS];
  size_t n;
} dtype_set_t;

static int read_dtypes(const char *list, dtype_set_t *set) {
  set->n = 0;
  if (!list) return 0;
  char(*items)[CLI_ITEM] = calloc(CLI_MAX_ITEMS, CLI_ITEM);
  size_t n = 0;
  int rc = items ? cli_split_list("suite", "dtype", list, items, &n)
                 : cli_error("suite", "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++, set->n++)
    if (mb_dtype_from_name(items[i], &set->dtypes[i]) != MB_OK)
      rc = cli_error("suite", "--dtype: %s", mb_error_last());
  free(items);
  return rc;
}

static int dtype_chosen(const dtype_set_t *set, size_t i) {
  mb_dtype_t dt;
  if (!set->n) return 1;
  mb_dtype_from_name(k_suite[i].dtype, &dt);
  for (size_t k = 0; k < set->n; k++)
    if (set->dtypes[k] == dt) return 1;
  return 0;
}

/* The suite's entries that --filter and --dtype leave, in its order. */
static int choose(const cli_opts_t *o, const dtype_set_t *dtypes,
                  size_t *chosen, size_t *n) {
  regex_t re;
  int rc = o->filter ? regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB) : 0;
  if (rc != 0) {
    char why[256];
    regerror(rc, &re, why, sizeof why);
    return cli_error("suite", "--filter \"%s\": %s", o->filter, why);
  }
  *n = 0;
  char names[SUITE_SIZE][96];
  for (size_t i = 0; i < SUITE_SIZE; i++) {
    suite_name(i, names[i], sizeof names[i]);
    if (dtype_chosen(dtypes, i) &&
        (!o->filter || regexec(&re, names[i], 0, NULL, 0) == 0))
      chosen[(*n)++] = i;
  }
  if (o->filter) regfree(&re);
  if (*n) return 0;
  char all[SUITE_SIZE * 100] = "";
  size_t len = 0;
  for (size_t i = 0; i < SUITE_SIZE && len < sizeof all; i++)
    len += (size_t)snprintf(all + len, sizeof all - len, "%s%s", i ? ", " : "",
                            names[i]);
  return cli_error("suite",
                   "no benchmark of the suite is left by%s%s%s%s; "
                   "its benchmarks: %s",
                   o->filter ? " --filter " : "", o->filter ? o->filter : "",
                   o->dtype ? " --dtype " : "", o->dtype ? o->dtype : "", all);
}

int cmd_suite(int argc, char **argv) {
  cli_opts_t o;
  const char *words[1];
  size_t nwords, chosen[SUITE_SIZE], n;
  cli_init_opts(&o);
  int first = argc > 1 && strcmp(argv[1], "suite") == 0 ? 2 : 1;
  const int parsed = cli_parse_command(&k_suite_command, argc, argv, first, &o,
                                       words, 0, &nwords);
  if (parsed != 0) return parsed < 0 ? EXIT_USAGE : EXIT_OK;
  mb_bench_spec_t base = MB_BENCH_SPEC_INIT;
  base.timeout_s = 4.0;
  if (!o.backend) o.backend = "cpu";
  dtype_set_t dtypes;
  if (cli_apply_common("suite", &o, &base) != 0 ||
      read_dtypes(o.dtype, &dtypes) != 0 ||
      choose(&o, &dtypes, chosen, &n) != 0)
    return EXIT_USAGE;
  mb_op_params_t params[SUITE_SIZE];
  mb_bench_spec_t specs[SUITE_SIZE];
  char names[SUITE_SIZE][96], *name_of[SUITE_SIZE];
  for (size_t j = 0; j < n; j++) {
    const size_t i = chosen[j];
    params[j] = (mb_op_params_t)MB_OP_PARAMS_INIT;
    params[j].ndim = k_suite[i].ndim;
    memcpy(params[j].shape, k_suite[i].shape, sizeof k_suite[i].shape);
    mb_dtype_from_name(k_suite[i].dtype, &params[j].dtype);
    if (k_suite[i].out)
      mb_dtype_from_name(k_suite[i].out, &params[j].dtype_out);
    specs[j] = base;
    specs[j].op = k_suite[i].op;
    specs[j].params = &params[j];
    suite_name(i, names[j], sizeof names[j]);
    name_of[j] = names[j];
  }
  return cli_run_list("suite", &o, argc, argv, specs, name_of, n, 1);
}
