/* Where results go: the chosen format to a file or stdout, plus the table
 * on stdout whenever stdout is not already taken. Shared by run, suite and
 * run --config. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_format_from_extension(const char *path) {
  static const struct {
    const char *ext, *format;
  } k_ext[] = {{".json", "json"}, {".csv", "csv"}, {".md", "md"}};
  size_t n = strlen(path);
  for (size_t i = 0; i < sizeof k_ext / sizeof k_ext[0]; i++) {
    size_t e = strlen(k_ext[i].ext);
    if (n > e && strcmp(path + n - e, k_ext[i].ext) == 0)
      return k_ext[i].format;
  }
  return "table";
}

/* Where results go: the chosen format to FILE or stdout, plus the table on
 * stdout whenever stdout is not already taken. */
int cli_open_sinks(const char *cmd, mb_context_t *ctx, const cli_opts_t *o,
                   int argc, char **argv, sinks_t *s) {
  mb_report_options_t ro = MB_REPORT_OPTIONS_INIT;
  const char *fname = o->format   ? o->format
                      : o->output ? cli_format_from_extension(o->output)
                                  : "table";
  if (mb_format_from_name(fname, &ro.format) != MB_OK)
    return cli_error(cmd, "--format: %s", mb_error_last());
  ro.path = o->output;
  ro.argc = argc;
  ro.argv = (const char *const *)argv;
  memset(s, 0, sizeof *s);
  if (mb_report_open(ctx, &ro, &s->file) != MB_OK)
    return cli_error(cmd, "%s", mb_error_last());
  if (o->output) {
    mb_report_options_t co = MB_REPORT_OPTIONS_INIT;
    if (mb_report_open(ctx, &co, &s->console) != MB_OK)
      return cli_error(cmd, "%s", mb_error_last());
  }
  return 0;
}

int cli_add_result(const char *cmd, sinks_t *s, const mb_result_t *r) {
  if (mb_report_add(s->file, r) != MB_OK ||
      (s->console && mb_report_add(s->console, r) != MB_OK))
    return cli_error(cmd, "writing results: %s", mb_error_last());
  return 0;
}

int cli_close_sinks(const char *cmd, sinks_t *s) {
  int rc = 0;
  if (mb_report_close(s->file) != MB_OK)
    rc = cli_error(cmd, "writing results: %s", mb_error_last());
  if (mb_report_close(s->console) != MB_OK)
    rc = cli_error(cmd, "writing results: %s", mb_error_last());
  return rc;
}

/* 1 when the result is a failure for the exit code: failed, or wrong. */
int cli_result_failed(const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &c);
  return info.status == MB_RESULT_FAILED || (c.checked && !c.pass);
}
