/* mbench list ops|backends|devices|presets|recipes|models, and mbench
 * info. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define O(field) offsetof(cli_opts_t, field)

static const opt_def_t k_list_opts[] = {
    {"verbose", 'v', OPT_FLAG, O(verbose), NULL, "log more"},
    {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"},
};
#define NUM_LIST_OPTS (sizeof k_list_opts / sizeof k_list_opts[0])

/* A kernel that takes any dtype in a slot lists it as "*". */
static const char *slot(mb_dtype_t d) {
  return d == MB_DTYPE_NONE ? "*" : mb_dtype_name(d);
}

static void print_kernels(mb_context_t *ctx, const char *op) {
  int any = 0;
  printf("    kernels:");
  for (size_t i = 0; i < mb_kernel_count(ctx); i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    if (mb_kernel_info(ctx, i, &k) != MB_OK || strcmp(k.op, op) != 0) continue;
    printf(" %s/%s(%s->%s)", k.backend, k.name, slot(k.dtype),
           slot(k.dtype_out));
    any = 1;
  }
  printf("%s\n", any ? "" : " none loaded");
}

static int list_ops(mb_context_t *ctx) {
  for (const mb_op_t *op = mb_op_next(NULL); op; op = mb_op_next(op)) {
    size_t nd;
    const mb_dtype_t *dts = mb_op_dtypes(op, &nd);
    printf("%s  %s\n    %s\n    dtypes:", mb_op_name(op),
           mb_op_shape_syntax(op), mb_op_summary(op));
    for (size_t i = 0; i < nd; i++)
      printf("%s %s", i ? "," : "", mb_dtype_name(dts[i]));
    printf("\n    operands:");
    uint32_t n = mb_op_num_inputs(op) + mb_op_num_outputs(op);
    for (uint32_t r = 0; r < n; r++)
      printf(" %s%s", mb_op_operand_name(op, r),
             r + 1 == mb_op_num_inputs(op) ? " ->" : "");
    printf("\n");
    if (*mb_op_params_doc(op)) printf("    params: %s\n", mb_op_params_doc(op));
    print_kernels(ctx, mb_op_name(op));
  }
  printf("\naliases (the predecessor tools' names):\n");
  for (size_t i = 0; i < mb_op_alias_count(); i++) {
    const char *op, *summary;
    const char *name = mb_op_alias_name(i, &op, &summary);
    printf("  %-24s %-10s %s\n", name, op, summary);
  }
  return EXIT_OK;
}

static int list_backends(mb_context_t *ctx) {
  size_t n = mb_backend_count(ctx);
  if (n == 0) {
    printf(
        "no backend modules found.\n"
        "Set MB_BACKEND_PATH to the directory holding mb_backend_*.so, or\n"
        "run with MB_BACKEND_VERBOSE=1 to see where mbench looked.\n");
    return EXIT_OK;
  }
  printf("%-12s %-11s %-7s %s\n", "backend", "status", "devices",
         "version / reason");
  for (size_t i = 0; i < n; i++) {
    mb_backend_info_t b = MB_BACKEND_INFO_INIT;
    if (mb_backend_info(ctx, i, &b) != MB_OK) continue;
    const char *status = !b.loaded        ? "unavailable"
                         : b.device_count ? "ready"
                                          : "no device";
    printf("%-12s %-11s %-7u %s%s%s\n", b.name, status, b.device_count,
           b.version, *b.version && *b.reason ? "; " : "", b.reason);
    if (!b.loaded) printf("%-12s path: %s\n", "", b.path);
  }
  return EXIT_OK;
}

static void print_peak(mb_device_t *dev, mb_dtype_t dt) {
  double pf = mb_device_peak_flops(dev, dt);
  if (pf > 0) printf(" %s %.1f GFLOP/s", mb_dtype_name(dt), pf / 1e9);
}

static int list_devices(mb_context_t *ctx) {
  size_t n = mb_device_count(ctx);
  if (n == 0) printf("no devices (see mbench list backends)\n");
  for (size_t i = 0; i < n; i++) {
    mb_device_t *dev = mb_device_at(ctx, i);
    mb_device_info_t d = MB_DEVICE_INFO_INIT;
    mb_device_info(dev, &d);
    printf("%s:%u  %s\n", d.backend, d.index, d.name);
    printf("    kind %s, %u compute units, memory %.1f GiB",
           d.kind == MB_DEVICE_GPU ? "gpu" : "cpu", d.compute_units,
           (double)d.memory_bytes / (1u << 30));
    if (d.clock_hz > 0) printf(", clock %.2f GHz", d.clock_hz / 1e9);
    printf("\n    caches: L1d %llu KiB, L2 %llu KiB, last level %llu KiB\n",
           (unsigned long long)d.cache_bytes[0] >> 10,
           (unsigned long long)d.cache_bytes[1] >> 10,
           (unsigned long long)d.cache_bytes[2] >> 10);
    printf("    peak:");
    print_peak(dev, MB_DTYPE_F32);
    print_peak(dev, MB_DTYPE_BF16);
    print_peak(dev, MB_DTYPE_F16);
    print_peak(dev, MB_DTYPE_F8E4M3);
    print_peak(dev, MB_DTYPE_I8);
    printf(" (%s)\n", *d.peak_source ? d.peak_source : "unknown");
    if (d.mem_bw_bytes_per_s > 0)
      printf("    memory bandwidth %.1f GB/s\n", d.mem_bw_bytes_per_s / 1e9);
  }
  return EXIT_OK;
}

/* A catalogue of names (presets, models): each name, its summary, then
 * what `details` prints about it. */
static void list_named(size_t count,
                       const char *(*name_at)(size_t, const char **),
                       void (*details)(const char *name)) {
  for (size_t i = 0; i < count; i++) {
    const char *summary, *name = name_at(i, &summary);
    printf("%s\n    %s\n", name, summary);
    details(name);
  }
}

/* A preset's default expansion: count and every shape. */
static void preset_shapes(const char *name) {
  mb_shape_list_t *l;
  if (mb_preset_shapes(name, NULL, &l) != MB_OK) return; /* custom */
  size_t n = mb_shape_list_count(l);
  printf("    %zu shapes [M, K, N]:", n);
  for (size_t j = 0; j < n; j++) {
    const char *sn;
    int64_t mkn[3];
    mb_shape_list_get(l, j, &sn, mkn);
    printf("%s %s (%lld, %lld, %lld)", j % 3 ? "," : "\n     ", sn,
           (long long)mkn[0], (long long)mkn[1], (long long)mkn[2]);
  }
  printf("\n");
  mb_shape_list_destroy(l);
}

static int list_presets(mb_context_t *ctx) {
  (void)ctx;
  list_named(mb_preset_count(), mb_preset_name, preset_shapes);
  return EXIT_OK;
}

/* torchao's recipes: whether each trains, and the accuracy floor its
 * results are checked against (SQNR of the output vs the high-precision
 * model). */
static int list_recipes(mb_context_t *ctx) {
  (void)ctx;
  printf("%-16s %-6s %-10s %s\n", "recipe", "trains", "min SQNR", "summary");
  for (int i = 0; i < MB_RECIPE_COUNT; i++) {
    const mb_recipe_t r = (mb_recipe_t)i;
    char floor[16];
    snprintf(floor, sizeof floor, "%.0f dB", mb_recipe_min_sqnr_db(r));
    printf("%-16s %-6s %-10s %s\n", mb_recipe_name(r),
           mb_recipe_trains(r) ? "yes" : "no", floor, mb_recipe_summary(r));
  }
  return EXIT_OK;
}

/* A model type's modes: the composite op it runs in each mode it has (a
 * mode without a graph is left out). */
static void model_modes(const char *name) {
  printf("    modes:");
  for (size_t m = 0; m < mb_mode_count(); m++) {
    const char *op;
    if (mb_model_resolve(name, mb_mode_name(m), &op, NULL) == MB_OK)
      printf(" %s (op %s)", mb_mode_name(m), op);
  }
  printf("\n");
}

/* torchao's model types. */
static int list_models(mb_context_t *ctx) {
  (void)ctx;
  list_named(mb_model_count(), mb_model_name, model_modes);
  printf(
      "\nrun one: mbench run --model NAME --recipe R --shape MxKxN "
      "[--mode training]\n");
  return EXIT_OK;
}

static const struct {
  const char *what;
  int (*fn)(mb_context_t *);
} k_lists[] = {{"ops", list_ops},         {"backends", list_backends},
               {"devices", list_devices}, {"presets", list_presets},
               {"recipes", list_recipes}, {"models", list_models}};
#define NUM_LISTS (sizeof k_lists / sizeof k_lists[0])

int cmd_list(int argc, char **argv) {
  cli_opts_t o;
  const char *words[1];
  size_t nwords;
  memset(&o, 0, sizeof o);
  if (cli_parse("list", argc, argv, 2, k_list_opts, NUM_LIST_OPTS, &o, words, 1,
                &nwords) != 0)
    return EXIT_USAGE;
  if (o.help || nwords == 0) {
    printf("usage: mbench list ops|backends|devices|presets|recipes|models\n");
    return o.help ? EXIT_OK : EXIT_USAGE;
  }
  for (size_t i = 0; i < NUM_LISTS; i++) {
    if (strcmp(words[0], k_lists[i].what) != 0) continue;
    mb_context_t *ctx;
    if (cli_context("list", o.verbose, &ctx) != 0) return EXIT_USAGE;
    int rc = k_lists[i].fn(ctx);
    mb_context_destroy(ctx);
    return rc;
  }
  return cli_error("list",
                   "unknown list \"%s\"; valid: ops, backends, devices, "
                   "presets, recipes, models",
                   words[0]);
}

int cmd_info(int argc, char **argv) {
  cli_opts_t o;
  const char *words[1];
  size_t nwords;
  memset(&o, 0, sizeof o);
  if (cli_parse("info", argc, argv, 2, k_list_opts, NUM_LIST_OPTS, &o, words, 0,
                &nwords) != 0)
    return EXIT_USAGE;
  if (o.help) {
    printf("usage: mbench info\n\nVersion, backends and devices.\n");
    return EXIT_OK;
  }
  mb_context_t *ctx;
  if (cli_context("info", o.verbose, &ctx) != 0) return EXIT_USAGE;
  printf("libmicrobench %s (commit %s)\n\n", mb_version(), mb_git_commit());
  list_backends(ctx);
  printf("\n");
  list_devices(ctx);
  mb_context_destroy(ctx);
  return EXIT_OK;
}
