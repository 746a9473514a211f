/* A table-driven option parser: --name VALUE, --name=VALUE, -x VALUE. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "mbench%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
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

void cli_init_opts(cli_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->min_time = o->max_noise = o->timeout = o->warmup = -1;
  o->act_alpha = o->eps = -1;
  o->alpha = 1;
}

int cli_parse_u64(const char *cmd, const char *name, const char *v,
                  unsigned long long max, unsigned long long *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (!*v || *end || errno || v[0] == '-' || x > max)
    return cli_error(cmd, "--%s: \"%s\" is not a non-negative integer", name,
                     v),
           -1;
  *out = x;
  return 0;
}

static int set_value(const char *cmd, const opt_def_t *d, const char *v,
                     cli_opts_t *o) {
  char *end = NULL, *field = (char *)o + d->offset;
  errno = 0;
  switch (d->kind) {
    case OPT_STR:
      *(const char **)field = v;
      return 0;
    case OPT_UINT: {
      unsigned long long x;
      if (cli_parse_u64(cmd, d->name, v, 0xFFFFFFFFull, &x) != 0) return -1;
      *(unsigned *)field = (unsigned)x;
      return 0;
    }
    case OPT_DOUBLE: {
      double x = strtod(v, &end);
      if (!*v || *end || errno || !isfinite(x))
        return cli_error(cmd, "--%s: \"%s\" is not a number", d->name, v), -1;
      *(double *)field = x;
      return 0;
    }
    case OPT_FLAG:
      *(int *)field = 1;
      return 0;
  }
  return -1;
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
