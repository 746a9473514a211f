/* A table-driven option parser: --name VALUE, --name=VALUE, -x VALUE. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Messages quote what the user gave (a name from a file, an option's
 * value): control characters in it are escaped, not sent to the terminal. */
int cli_error(const char *cmd, const char *fmt, ...) {
  char msg[4096], safe[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mb_escape_controls(msg, safe, sizeof safe);
  fprintf(stderr, "mbench%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", safe);
  return EXIT_USAGE;
}

int cli_context(const char *cmd, int verbose, mb_context_t **ctx) {
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  o.log_level = verbose ? MB_LOG_DEBUG : MB_LOG_WARN;
  if (mb_context_create(ctx, &o) != MB_OK) {
    cli_error(cmd, "%s", mb_error_last());
    return -1;
  }
  return 0;
}

void cli_apply_remeasure(const cli_opts_t *o) {
  if (o->remeasure_peak && !o->child_index) setenv("MB_REMEASURE_PEAK", "1", 1);
}

void cli_init_opts(cli_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->alpha = 1;
  o->have_start_cpus =
      sched_getaffinity(0, sizeof o->start_cpus, &o->start_cpus) == 0;
}

int cli_given(const cli_opts_t *o, size_t offset) {
  for (size_t i = 0; i < o->num_given; i++)
    if (o->given[i] == offset) return 1;
  return 0;
}

int cli_split_list(const char *cmd, const char *opt, const char *list,
                   char (*items)[CLI_ITEM], size_t *n) {
  *n = 0;
  for (const char *p = list;; p++) {
    const size_t len = strcspn(p, ",");
    if (!len || len >= CLI_ITEM)
      return cli_error(cmd, "--%s \"%s\": %s item in the list", opt, list,
                       len ? "an overlong" : "an empty");
    if (*n == CLI_MAX_ITEMS)
      return cli_error(cmd, "--%s: at most %d items", opt, CLI_MAX_ITEMS);
    memcpy(items[*n], p, len);
    items[(*n)++][len] = '\0';
    p += len;
    if (!*p) return 0;
  }
}

int cli_parse_u64(const char *cmd, const char *name, const char *v,
                  unsigned long long max, unsigned long long *out) {
  char *end = NULL;
  errno = 0;
  const int digits = *v && strspn(v, "0123456789") == strlen(v);
  unsigned long long x = digits ? strtoull(v, &end, 10) : 0;
  if (!digits)
    return cli_error(cmd, "--%s: \"%s\" is not a non-negative integer", name,
                     v),
           -1;
  if (errno == ERANGE || x > max)
    return cli_error(cmd, "--%s: %s is out of range (at most %llu)", name, v,
                     max),
           -1;
  *out = x;
  return 0;
}

/* Where a number has a range, the range; every other number is any
 * finite value (alpha, beta, a leaky ReLU's slope, -0.5 included). */
typedef enum { ANY, POSITIVE, NON_NEGATIVE } range_t;
#define O(field) offsetof(cli_opts_t, field)
static const struct {
  size_t offset;
  range_t range;
} k_ranges[] = {
    {O(samples), POSITIVE},         {O(min_samples), POSITIVE},
    {O(repetitions), POSITIVE},     {O(timeout), POSITIVE},
    {O(max_noise), POSITIVE},       {O(min_time), NON_NEGATIVE},
    {O(warmup), NON_NEGATIVE},      {O(max_flop), POSITIVE},
    {O(isolate_timeout), POSITIVE}, {O(eps), POSITIVE},
    {O(static_scale), POSITIVE},    {O(threshold), NON_NEGATIVE},
    {O(kv_heads), POSITIVE},        {O(rank_wait), POSITIVE},
};
#undef O

static int in_range(const char *cmd, const opt_def_t *d, const char *v,
                    double x) {
  range_t r = ANY;
  for (size_t i = 0; i < sizeof k_ranges / sizeof *k_ranges; i++)
    if (k_ranges[i].offset == d->offset) r = k_ranges[i].range;
  if ((r == POSITIVE && !(x > 0)) || (r == NON_NEGATIVE && !(x >= 0)))
    return cli_error(cmd, "--%s: %s is out of range; valid: %s", d->name, v,
                     r == POSITIVE ? (d->kind == OPT_UINT ? "1 or more" : "> 0")
                                   : ">= 0"),
           0;
  return 1;
}

static int parse_value(const char *cmd, const opt_def_t *d, const char *v,
                       void *field) {
  char *end = NULL;
  errno = 0;
  switch (d->kind) {
    case OPT_STR:
      *(const char **)field = v;
      return 0;
    case OPT_UINT: {
      unsigned long long x;
      if (cli_parse_u64(cmd, d->name, v, 0xFFFFFFFFull, &x) != 0 ||
          !in_range(cmd, d, v, (double)x))
        return -1;
      *(unsigned *)field = (unsigned)x;
      return 0;
    }
    case OPT_DOUBLE: {
      double x = strtod(v, &end);
      if (!*v || *end || errno || !isfinite(x))
        return cli_error(cmd, "--%s: \"%s\" is not a number", d->name, v), -1;
      if (!in_range(cmd, d, v, x)) return -1;
      *(double *)field = x;
      return 0;
    }
    case OPT_FLAG:
      *(int *)field = 1;
      return 0;
  }
  return -1;
}

static int set_value(const char *cmd, const opt_def_t *d, const char *v,
                     cli_opts_t *o) {
  if (parse_value(cmd, d, v, (char *)o + d->offset) != 0) return -1;
  if (!cli_given(o, d->offset) &&
      o->num_given < sizeof o->given / sizeof *o->given)
    o->given[o->num_given++] = d->offset;
  return 0;
}

static const opt_def_t *find_def(const opt_def_t *defs, size_t n,
                                 const char *name, size_t len,
                                 char short_name) {
  for (size_t i = 0; i < n; i++) {
    if (short_name && defs[i].short_name == short_name) return &defs[i];
    if (!short_name && strlen(defs[i].name) == len &&
        strncmp(defs[i].name, name, len) == 0)
      return &defs[i];
  }
  return NULL;
}

int cli_parse(const char *cmd, int argc, char **argv, int first,
              const opt_def_t *defs, size_t num_defs, cli_opts_t *opts,
              const char **words, size_t max_words, size_t *num_words) {
  *num_words = 0;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || a[1] == '\0') {
      if (*num_words == max_words)
        return cli_error(cmd,
                         "unexpected argument \"%s\"; see mbench %s --help", a,
                         cmd),
               -1;
      words[(*num_words)++] = a;
      continue;
    }
    const opt_def_t *d;
    const char *inline_value = NULL;
    if (a[1] == '-') {
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      d = find_def(defs, num_defs, a + 2, len, 0);
      if (eq) inline_value = eq + 1;
    } else {
      d = a[2] == '\0' ? find_def(defs, num_defs, NULL, 0, a[1]) : NULL;
    }
    if (!d)
      return cli_error(cmd, "unknown option %s; see mbench %s --help", a, cmd),
             -1;
    if (d->kind == OPT_FLAG) {
      if (inline_value)
        return cli_error(cmd, "--%s takes no value", d->name), -1;
      set_value(cmd, d, "", opts);
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc)
        return cli_error(cmd, "--%s needs a value (%s)", d->name, d->metavar),
               -1;
      inline_value = argv[++i];
    }
    if (set_value(cmd, d, inline_value, opts) != 0) return -1;
  }
  return 0;
}

void cli_print_options(const opt_def_t *defs, size_t num_defs) {
  for (size_t i = 0; i < num_defs; i++) {
    char left[64];
    snprintf(left, sizeof left, "%s%c%s--%s %s", defs[i].short_name ? "-" : "",
             defs[i].short_name ? defs[i].short_name : ' ',
             defs[i].short_name ? ", " : " ", defs[i].name,
             defs[i].metavar ? defs[i].metavar : "");
    printf("  %-30s %s\n", left, defs[i].help);
  }
}

int cli_parse_command(const cli_command_t *c, int argc, char **argv, int first,
                      cli_opts_t *opts, const char **words, size_t max_words,
                      size_t *num_words) {
  if (cli_parse(c->name, argc, argv, first, c->defs, c->num_defs, opts, words,
                max_words, num_words) != 0)
    return -1;
  if (!opts->help) return 0;
  fputs(c->usage, stdout);
  cli_print_options(c->defs, c->num_defs);
  return 1;
}
