/* mbench list ops|backends|devices|presets|recipes|models|dtypes, and
 * mbench info. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define O(field) offsetof(cli_opts_t, field)

static const opt_def_t k_list_opts[] = {
    {"all", 'a', OPT_FLAG, O(list_all), NULL,
     "ops: the kernels of every backend, devices or not, each with its "
     "dtypes (input->output)"},
    {"names", 0, OPT_FLAG, O(list_names), NULL,
     "bare names, one a line (what completion scripts read); without LIST: "
     "the lists"},
    {"verbose", 'v', OPT_FLAG, O(verbose), NULL, "log more; ops: as --all"},
    {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"},
};
#define NUM_LIST_OPTS (sizeof k_list_opts / sizeof k_list_opts[0])

static const opt_def_t k_info_opts[] = {
    {"verbose", 'v', OPT_FLAG, O(verbose), NULL, "log more"},
    {"help", 'h', OPT_FLAG, O(help), NULL, "show this help"},
};
#define NUM_INFO_OPTS (sizeof k_info_opts / sizeof k_info_opts[0])

/* Distinct words in order of first appearance (implementation names,
 * dtypes, "bf16->f32" pairs): a backend registers a kernel per dtype row,
 * so the same name comes up many times. Past the capacity a word is
 * dropped; no backend comes near it. */
typedef struct words {
  char w[64][32];
  size_t n;
} words_t;

static void words_add(words_t *s, const char *w) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->w[i], w) == 0) return;
  if (s->n < sizeof s->w / sizeof s->w[0])
    snprintf(s->w[s->n++], sizeof s->w[0], "%s", w);
}

static void words_print(const words_t *s) {
  for (size_t i = 0; i < s->n; i++) printf("%s%s", i ? ", " : "", s->w[i]);
}

/* A kernel that takes any dtype in a slot lists it as "any". */
static const char *slot(mb_dtype_t d) {
  return d == MB_DTYPE_NONE ? "any" : mb_dtype_name(d);
}

/* Whether kernel i is one of `op`'s on `backend` (NULL: any backend). */
static int kernel_of(mb_context_t *ctx, size_t i, const char *op,
                     const char *backend, mb_kernel_info_t *k) {
  *k = (mb_kernel_info_t)MB_KERNEL_INFO_INIT;
  return mb_kernel_info(ctx, i, k) == MB_OK && strcmp(k->op, op) == 0 &&
         (!backend || strcmp(k->backend, backend) == 0);
}

/* One backend's kernels of `op` on one line, "cpu: onednn, c (f32, bf16)";
 * with `all`, each implementation with its dtype pairs. 0 when it has
 * none. */
static int backend_kernels(mb_context_t *ctx, const char *op,
                           const mb_backend_info_t *b, int all,
                           const char *lead) {
  words_t impls = {0}, dtypes = {0};
  mb_kernel_info_t k;
  for (size_t i = 0; i < mb_kernel_count(ctx); i++)
    if (kernel_of(ctx, i, op, b->name, &k)) {
      words_add(&impls, k.name);
      words_add(&dtypes, slot(k.dtype));
    }
  if (impls.n == 0) return 0;
  printf("%s%s%s: ", lead, b->name, b->device_count ? "" : " (no device)");
  if (!all) {
    words_print(&impls);
    printf(" (");
    words_print(&dtypes);
    printf(")\n");
    return 1;
  }
  for (size_t j = 0; j < impls.n; j++) {
    words_t pairs = {0};
    for (size_t i = 0; i < mb_kernel_count(ctx); i++) {
      char pair[32];
      if (!kernel_of(ctx, i, op, b->name, &k) || strcmp(k.name, impls.w[j]))
        continue;
      snprintf(pair, sizeof pair, "%s->%s", slot(k.dtype), slot(k.dtype_out));
      words_add(&pairs, pair);
    }
    printf("%s%s (", j ? ", " : "", impls.w[j]);
    words_print(&pairs);
    printf(")");
  }
  printf("\n");
  return 1;
}

/* The kernels of `op`, a line per backend: those with a device, or
 * (`all`) every loaded one. A composite first names the primitives its
 * graph runs: every backend with their kernels runs it, and a kernel of
 * its own (a fused one) is rare. */
static void print_kernels(mb_context_t *ctx, const mb_op_t *op, int all) {
  const char *name = mb_op_name(op);
  int any = 0;
  if (mb_op_is_composite(op)) {
    printf("    runs as a graph of:");
    const mb_op_t *p;
    for (size_t i = 0; (p = mb_op_primitive(op, i)) != NULL; i++)
      printf("%s %s", i ? "," : "", mb_op_name(p));
    printf(" (on any backend with their kernels)\n");
  }
  for (size_t i = 0; i < mb_backend_count(ctx); i++) {
    mb_backend_info_t b = MB_BACKEND_INFO_INIT;
    if (mb_backend_info(ctx, i, &b) != MB_OK || !b.loaded ||
        (!all && !b.device_count))
      continue;
    any |= backend_kernels(ctx, name, &b, all,
                           any ? "             " : "    kernels: ");
  }
  if (!any && !mb_op_is_composite(op))
    printf("    kernels: none on %s\n",
           all ? "a loaded backend" : "a backend with a device (--all: any)");
}

/* An op's parameters as `params_doc` names them (config keys, Python
 * keywords: no_affine), with each flag spelled as its option (--no-affine),
 * read off MB_PARAM_FLAG_LIST, the table the options come from. */
#define FLAG_SPELLING(NAME, group, key, result, inverted, name, label, set_by, \
                      option, help)                                            \
  {key, option},
static void print_params(const char *doc) {
  static const struct {
    const char *key, *option;
  } k_flags[] = {MB_PARAM_FLAG_LIST(FLAG_SPELLING)};
  static const char word_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
  printf("    params: ");
  while (*doc) {
    size_t len = strspn(doc, word_chars);
    const char *option = NULL;
    for (size_t i = 0; len && i < sizeof k_flags / sizeof *k_flags; i++)
      if (k_flags[i].option && strlen(k_flags[i].key) == len &&
          strncmp(doc, k_flags[i].key, len) == 0)
        option = k_flags[i].option;
    if (option)
      printf("--%s", option);
    else
      fwrite(doc, 1, len ? len : 1, stdout);
    doc += len ? len : 1;
  }
  printf("\n");
}
#undef FLAG_SPELLING

static void print_op(mb_context_t *ctx, const mb_op_t *op, int all) {
  size_t nd;
  const mb_dtype_t *dts = mb_op_dtypes(op, &nd);
  printf("%s  %s\n    %s\n    dtypes:", mb_op_name(op), mb_op_shape_syntax(op),
         mb_op_summary(op));
  for (size_t i = 0; i < nd; i++)
    printf("%s %s", i ? "," : "", mb_dtype_name(dts[i]));
  printf("\n    operands:");
  uint32_t n = mb_op_num_inputs(op) + mb_op_num_outputs(op);
  for (uint32_t r = 0; r < n; r++)
    printf(" %s%s", mb_op_operand_name(op, r),
           r + 1 == mb_op_num_inputs(op) ? " ->" : "");
  printf("\n");
  if (*mb_op_params_doc(op)) print_params(mb_op_params_doc(op));
  print_kernels(ctx, op, all);
}

/* Every op, then the aliases; with a name, that op (an alias: the op it
 * stands for). */
static int list_ops(mb_context_t *ctx, const cli_opts_t *o, const char *name) {
  const int all = o->list_all || o->verbose;
  if (name) {
    const mb_op_t *op = mb_op_find(name);
    if (!op) return cli_error("list", "%s", mb_error_last());
    print_op(ctx, op, all);
    return EXIT_OK;
  }
  for (const mb_op_t *op = mb_op_next(NULL); op; op = mb_op_next(op))
    print_op(ctx, op, all);
  printf("\naliases (the predecessor tools' names):\n");
  for (size_t i = 0; i < mb_op_alias_count(); i++) {
    const char *op, *summary;
    const char *alias = mb_op_alias_name(i, &op, &summary);
    printf("  %-24s %-10s %s\n", alias, op, summary);
  }
  return EXIT_OK;
}

static void names_ops(mb_context_t *ctx) {
  (void)ctx;
  for (const mb_op_t *op = mb_op_next(NULL); op; op = mb_op_next(op))
    printf("%s\n", mb_op_name(op));
  for (size_t i = 0; i < mb_op_alias_count(); i++)
    printf("%s\n", mb_op_alias_name(i, NULL, NULL));
}

static int list_backends(mb_context_t *ctx, const cli_opts_t *o,
                         const char *name) {
  (void)o, (void)name;
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

/* The backends --backend takes: loaded ones (a module that failed to load
 * is listed by its file name). */
static void names_backends(mb_context_t *ctx) {
  for (size_t i = 0; i < mb_backend_count(ctx); i++) {
    mb_backend_info_t b = MB_BACKEND_INFO_INIT;
    if (mb_backend_info(ctx, i, &b) == MB_OK && b.loaded)
      printf("%s\n", b.name);
  }
}

static void print_peak(mb_device_t *dev, mb_dtype_t dt) {
  double pf = mb_device_peak_flops(dev, dt);
  if (pf > 0) printf(" %s %.1f GFLOP/s", mb_dtype_name(dt), pf / 1e9);
}

/* The cache levels the backend knows (0 is unknown: a GPU's L2 is its last
 * level, and it has no per-unit L2 to give). */
static void print_caches(const mb_device_info_t *d) {
  static const char *const k_level[3] = {"L1d", "L2", "last level"};
  int shown = 0;
  printf("\n    caches:");
  for (int i = 0; i < 3; i++)
    if (d->cache_bytes[i])
      printf("%s %s %llu KiB", shown++ ? "," : "", k_level[i],
             (unsigned long long)d->cache_bytes[i] >> 10);
  printf("%s\n", shown ? "" : " unknown");
}

static int list_devices(mb_context_t *ctx, const cli_opts_t *o,
                        const char *name) {
  (void)o, (void)name;
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
    print_caches(&d);
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

static void names_devices(mb_context_t *ctx) {
  for (size_t i = 0; i < mb_device_count(ctx); i++) {
    mb_device_info_t d = MB_DEVICE_INFO_INIT;
    mb_device_info(mb_device_at(ctx, i), &d);
    printf("%s:%u\n", d.backend, d.index);
  }
}

/* A preset's default expansion; NULL for `custom` (its shapes come from
 * a config file). */
static mb_shape_list_t *preset_shapes(const char *name) {
  mb_shape_list_t *l;
  return mb_preset_shapes(name, NULL, &l) == MB_OK ? l : NULL;
}

/* One preset's shapes, a line each, as --shape takes them. */
static int preset_detail(const char *name) {
  const char *summary = NULL;
  for (size_t i = 0; i < mb_preset_count(); i++)
    if (strcmp(mb_preset_name(i, &summary), name) == 0) break;
  mb_shape_list_t *l;
  mb_status_t st = mb_preset_shapes(name, NULL, &l);
  if (st != MB_OK && st != MB_ERR_INVALID_ARG)
    return cli_error("list", "%s", mb_error_last()); /* lists the presets */
  printf("%s: %s\n", name, summary);
  for (size_t j = 0; st == MB_OK && j < mb_shape_list_count(l); j++) {
    const char *sn;
    int64_t mkn[3];
    mb_shape_list_get(l, j, &sn, mkn);
    printf("  %-24s %lldx%lldx%lld\n", sn, (long long)mkn[0], (long long)mkn[1],
           (long long)mkn[2]);
  }
  if (st == MB_OK) mb_shape_list_destroy(l);
  return EXIT_OK;
}

/* A line per preset: its name, how many shapes it expands to by default,
 * its summary; `list presets NAME` gives the shapes. */
static int list_presets(mb_context_t *ctx, const cli_opts_t *o,
                        const char *name) {
  (void)ctx, (void)o;
  if (name) return preset_detail(name);
  printf("%-18s %6s  %s\n", "preset", "shapes", "summary");
  for (size_t i = 0; i < mb_preset_count(); i++) {
    const char *summary, *n = mb_preset_name(i, &summary);
    mb_shape_list_t *l = preset_shapes(n);
    char count[16] = "-";
    if (l) snprintf(count, sizeof count, "%zu", mb_shape_list_count(l));
    mb_shape_list_destroy(l);
    printf("%-18s %6s  %s\n", n, count, summary);
  }
  printf("\nthe shapes of one: mbench list presets NAME\n");
  return EXIT_OK;
}

static void names_presets(mb_context_t *ctx) {
  (void)ctx;
  for (size_t i = 0; i < mb_preset_count(); i++)
    printf("%s\n", mb_preset_name(i, NULL));
}

/* torchao's recipes: whether each trains, and the accuracy floor its
 * results are checked against (SQNR of the output vs the high-precision
 * model). */
static int list_recipes(mb_context_t *ctx, const cli_opts_t *o,
                        const char *name) {
  (void)ctx, (void)o, (void)name;
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

static void names_recipes(mb_context_t *ctx) {
  (void)ctx;
  for (int i = 0; i < MB_RECIPE_COUNT; i++)
    printf("%s\n", mb_recipe_name((mb_recipe_t)i));
}

/* torchao's model types and the composite op each mode runs (a mode
 * without a graph is left out). */
static int list_models(mb_context_t *ctx, const cli_opts_t *o,
                       const char *name) {
  (void)ctx, (void)o, (void)name;
  for (size_t i = 0; i < mb_model_count(); i++) {
    const char *summary, *model = mb_model_name(i, &summary);
    printf("%s\n    %s\n    modes:", model, summary);
    for (size_t m = 0; m < mb_mode_count(); m++) {
      const char *op;
      if (mb_model_resolve(model, mb_mode_name(m), &op, NULL) == MB_OK)
        printf(" %s (op %s)", mb_mode_name(m), op);
    }
    printf("\n");
  }
  printf(
      "\nrun one: mbench run --model NAME --recipe R --shape MxKxN "
      "[--mode training]\n");
  return EXIT_OK;
}

static void names_models(mb_context_t *ctx) {
  (void)ctx;
  for (size_t i = 0; i < mb_model_count(); i++)
    printf("%s\n", mb_model_name(i, NULL));
}

/* The element types --dtype, --out-dtype and --dtype-b take, and the
 * scale-only e8m0 (--scale-dtype): an exponent, not a number format of
 * its own. */
static int list_dtypes(mb_context_t *ctx, const cli_opts_t *o,
                       const char *name) {
  (void)ctx, (void)o, (void)name;
  printf("%-8s %4s  %s\n", "dtype", "bits", "kind");
  for (int d = MB_DTYPE_NONE + 1; d < MB_DTYPE_COUNT; d++)
    printf("%-8s %4u  %s\n", mb_dtype_name((mb_dtype_t)d),
           mb_dtype_bits((mb_dtype_t)d),
           d == MB_DTYPE_E8M0 ? "scale: a power of two (--scale-dtype)"
           : mb_dtype_is_float((mb_dtype_t)d) ? "float"
                                              : "integer");
  printf(
      "\nalso taken: common aliases (float32, bfloat16, torch.bfloat16, "
      "float8_e4m3fn, float4, int8, ...)\n");
  return EXIT_OK;
}

static void names_dtypes(mb_context_t *ctx) {
  (void)ctx;
  for (int d = MB_DTYPE_NONE + 1; d < MB_DTYPE_COUNT; d++)
    printf("%s\n", mb_dtype_name((mb_dtype_t)d));
}

/* Which of a list's two forms read the context (the backends loaded):
 * a form that does not starts at once, which completion scripts need. */
enum { CTX_LIST = 1, CTX_NAMES = 2 };

static const struct {
  const char *what;
  int (*list)(mb_context_t *, const cli_opts_t *, const char *name);
  void (*names)(mb_context_t *);
  unsigned ctx;
  int takes_name; /* list WHAT NAME: one entry in detail */
  const char *help;
} k_lists[] = {
    {"ops", list_ops, names_ops, CTX_LIST, 1,
     "ops (and aliases): shape, dtypes, operands, params, kernels per "
     "backend; NAME: one op"},
    {"backends", list_backends, names_backends, CTX_LIST | CTX_NAMES, 0,
     "every backend module tried: status, devices, version or reason"},
    {"devices", list_devices, names_devices, CTX_LIST | CTX_NAMES, 0,
     "every device: compute units, memory, caches, peaks"},
    {"presets", list_presets, names_presets, 0, 1,
     "GEMM shape presets: shape count, summary; NAME: its shapes"},
    {"recipes", list_recipes, names_recipes, 0, 0,
     "quantization recipes: trains, accuracy floor, summary"},
    {"models", list_models, names_models, 0, 0,
     "torchao model types and the op each mode runs"},
    {"dtypes", list_dtypes, names_dtypes, 0, 0,
     "element types: bits, float or integer"},
};
#define NUM_LISTS (sizeof k_lists / sizeof k_lists[0])

static void list_usage(void) {
  printf(
      "usage: mbench list LIST [NAME] [options]\n"
      "       mbench list --names\n\n"
      "What the library and this machine offer. LIST is one of:\n");
  for (size_t i = 0; i < NUM_LISTS; i++)
    printf("  %-10s %s\n", k_lists[i].what, k_lists[i].help);
  printf("\noptions:\n");
  cli_print_options(k_list_opts, NUM_LIST_OPTS);
}

static int valid_lists_error(const char *what) {
  char valid[256] = "";
  for (size_t i = 0; i < NUM_LISTS; i++)
    snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s",
             i ? ", " : "", k_lists[i].what);
  return cli_error("list", "unknown list \"%s\"; valid: %s", what, valid);
}

int cmd_list(int argc, char **argv) {
  cli_opts_t o;
  const char *words[2];
  size_t nwords;
  cli_init_opts(&o);
  if (cli_parse("list", argc, argv, 2, k_list_opts, NUM_LIST_OPTS, &o, words, 2,
                &nwords) != 0)
    return EXIT_USAGE;
  if (o.help) {
    list_usage();
    return EXIT_OK;
  }
  if (nwords == 0 && o.list_names) {
    for (size_t i = 0; i < NUM_LISTS; i++) printf("%s\n", k_lists[i].what);
    return EXIT_OK;
  }
  if (nwords == 0) {
    list_usage();
    return EXIT_USAGE;
  }
  size_t i = 0;
  while (i < NUM_LISTS && strcmp(words[0], k_lists[i].what) != 0) i++;
  if (i == NUM_LISTS) return valid_lists_error(words[0]);
  const char *name = nwords > 1 ? words[1] : NULL;
  if (name && (!k_lists[i].takes_name || o.list_names))
    return cli_error("list", "list %s%s takes no name (\"%s\")", words[0],
                     o.list_names ? " --names" : "", name);
  mb_context_t *ctx = NULL;
  if ((k_lists[i].ctx & (o.list_names ? CTX_NAMES : CTX_LIST)) &&
      cli_context("list", o.verbose, &ctx) != 0)
    return EXIT_USAGE;
  int rc = EXIT_OK;
  if (o.list_names)
    k_lists[i].names(ctx);
  else
    rc = k_lists[i].list(ctx, &o, name);
  mb_context_destroy(ctx);
  return rc;
}

int cmd_info(int argc, char **argv) {
  cli_opts_t o;
  const char *words[1];
  size_t nwords;
  cli_init_opts(&o);
  if (cli_parse("info", argc, argv, 2, k_info_opts, NUM_INFO_OPTS, &o, words, 0,
                &nwords) != 0)
    return EXIT_USAGE;
  if (o.help) {
    printf(
        "usage: mbench info [options]\n\nVersion, backends and devices.\n\n"
        "options:\n");
    cli_print_options(k_info_opts, NUM_INFO_OPTS);
    return EXIT_OK;
  }
  mb_context_t *ctx;
  if (cli_context("info", o.verbose, &ctx) != 0) return EXIT_USAGE;
  printf("libmicrobench %s (commit %s)\n\n", mb_version(), mb_git_commit());
  list_backends(ctx, &o, NULL);
  printf("\n");
  list_devices(ctx, &o, NULL);
  mb_context_destroy(ctx);
  return EXIT_OK;
}
