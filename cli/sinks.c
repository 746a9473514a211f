/* Where results go: the chosen format to a file or stdout, plus the table
 * on stdout whenever stdout is not already taken. Shared by run, suite and
 * run --config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- a file written only once something was measured ------------------ */

static int out_start(const char *cmd, cli_out_t *out) {
  if (mb_report_open(out->ctx, &out->ro, &out->rep) != MB_OK)
    return cli_error(cmd, "%s", mb_error_last());
  return 0;
}

/* Opens the report and writes the held results into it, in their order. */
static int out_release(const char *cmd, cli_out_t *out) {
  int rc = out_start(cmd, out);
  for (size_t i = 0; i < out->num_held; i++) {
    mb_result_t *r = NULL;
    if (rc == 0 && (mb_result_from_json(out->held[i], &r) != MB_OK ||
                    mb_report_add(out->rep, r) != MB_OK))
      rc = cli_error(cmd, "writing results: %s", mb_error_last());
    mb_result_destroy(r);
    free(out->held[i]);
  }
  free(out->held);
  out->held = NULL;
  out->num_held = 0;
  return rc;
}

int cli_out_open(const char *cmd, mb_context_t *ctx,
                 const mb_report_options_t *ro, const char *input,
                 cli_out_t *out) {
  memset(out, 0, sizeof *out);
  out->ctx = ctx;
  out->ro = *ro;
  /* A path that cannot take results, or that names the config being run,
   * is refused before anything runs. */
  const size_t num_inputs = input ? 1 : 0;
  if (ro->path && mb_report_check_output(ro->path, &input, num_inputs) != MB_OK)
    return cli_error(cmd, "-o: %s", mb_error_last());
  /* stdout is no file to keep: the results go there as they come. */
  return ro->path ? 0 : out_start(cmd, out);
}

int cli_out_add(const char *cmd, cli_out_t *out, const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  if (!out->rep && info.status != MB_RESULT_SKIPPED &&
      out_release(cmd, out) != 0)
    return -1;
  if (out->rep) {
    if (mb_report_add(out->rep, r) != MB_OK)
      return cli_error(cmd, "writing results: %s", mb_error_last());
    return 0;
  }
  const char *json = mb_result_json(r);
  char **grown = realloc(out->held, (out->num_held + 1) * sizeof *grown);
  if (grown) out->held = grown;
  if (!json || !grown || !(out->held[out->num_held] = strdup(json)))
    return cli_error(cmd, "out of memory");
  out->num_held++;
  return 0;
}

int cli_out_close(const char *cmd, cli_out_t *out) {
  /* Nothing measured: an earlier run's results are worth more than these
   * skips, so an existing file stays; a new one records why. */
  struct stat st;
  if (!out->rep && stat(out->ro.path, &st) == 0) {
    for (size_t i = 0; i < out->num_held; i++) free(out->held[i]);
    free(out->held);
    out->held = NULL;
    out->num_held = 0;
    fprintf(stderr,
            "mbench %s: nothing was measured: %s left as it was (not "
            "overwritten with skipped results)\n",
            cmd, out->ro.path);
    return 1;
  }
  /* Stopped by Ctrl-C or SIGTERM: an existing file is not replaced by the
   * few results that finished; they stay in the stream or .partial file. */
  if (out->rep && out->ro.path && cli_interrupted()) {
    char kept[4096];
    const mb_status_t st = mb_report_abandon(out->rep, kept, sizeof kept);
    out->rep = NULL;
    if (st != MB_OK) return cli_error(cmd, "%s", mb_error_last());
    if (strcmp(kept, out->ro.path) != 0)
      fprintf(stderr,
              "mbench %s: interrupted: %s left as it was; the finished "
              "results are in %s\n",
              cmd, out->ro.path, kept);
    return 0;
  }
  int rc = !out->rep ? out_release(cmd, out) : 0;
  if (mb_report_close(out->rep) != MB_OK && rc == 0)
    rc = cli_error(cmd, "writing results: %s", mb_error_last());
  out->rep = NULL;
  return rc ? -1 : 0;
}

/* ---- the sinks of a command -----------------------------------------------
 */

/* --columns checked by the library that will read it, on a table that
 * goes nowhere, before any output is opened. */
static int check_columns(const char *cmd, mb_context_t *ctx,
                         const char *columns) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = columns ? open_memstream(&text, &len) : NULL;
  if (!columns) return 0;
  if (!f) return cli_error(cmd, "out of memory");
  mb_report_options_t ro = MB_REPORT_OPTIONS_INIT;
  ro.format = MB_FORMAT_MARKDOWN;
  ro.stream = f;
  ro.columns = columns;
  mb_report_t *rep = NULL;
  const mb_status_t st = mb_report_open(ctx, &ro, &rep);
  mb_report_close(rep);
  fclose(f);
  free(text);
  return st == MB_OK ? 0 : cli_error(cmd, "--columns: %s", mb_error_last());
}

unsigned cli_terminal_width(void) {
  const char *env = getenv("COLUMNS");
  char *end = NULL;
  const long cols = env ? strtol(env, &end, 10) : 0;
  if (env && *env && !*end && cols > 0 && cols < 100000) return (unsigned)cols;
  struct winsize ws;
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
      ws.ws_col > 0)
    return ws.ws_col;
  return 100;
}

/* -o's directory exists and takes new files: mbench makes none for -o (a
 * config's CSV directories it does make), and the file itself is opened
 * only at the first result, so a missing one would be found after the
 * first benchmark ran. */
static int check_out_dir(const char *cmd, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return 0; /* the current directory */
  char dir[4096];
  const int len = slash == path ? 1 : (int)(slash - path);
  snprintf(dir, sizeof dir, "%.*s", len, path);
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return cli_error(cmd, "-o %s: no directory %s (make it first)", path, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return cli_error(cmd, "-o %s: cannot create files in %s: %s", path, dir,
                     strerror(errno));
  return 0;
}

/* Where results go: the chosen format to FILE or stdout, plus the table on
 * stdout whenever stdout is not already taken. The table on stdout fits
 * the terminal; one written to a file streams every chosen column. */
int cli_open_sinks(const char *cmd, mb_context_t *ctx, const cli_opts_t *o,
                   int argc, char **argv, sinks_t *s) {
  mb_report_options_t ro = MB_REPORT_OPTIONS_INIT;
  const char *fname = o->format   ? o->format
                      : o->output ? cli_format_from_extension(o->output)
                                  : "table";
  memset(s, 0, sizeof *s);
  if (mb_format_from_name(fname, &ro.format) != MB_OK)
    return cli_error(cmd, "--format: %s", mb_error_last());
  if (check_columns(cmd, ctx, o->columns) != 0) return -1;
  ro.path = o->output;
  ro.argc = argc;
  ro.argv = (const char *const *)argv;
  ro.columns = o->columns;
  if (!o->output) ro.width = cli_terminal_width();
  if (o->output && strcmp(o->output, "-") != 0 &&
      check_out_dir(cmd, o->output) != 0)
    return -1;
  if (cli_out_open(cmd, ctx, &ro, o->config, &s->file) != 0) return -1;
  if (o->output) {
    mb_report_options_t co = MB_REPORT_OPTIONS_INIT;
    co.columns = o->columns;
    co.width = cli_terminal_width();
    if (mb_report_open(ctx, &co, &s->console) != MB_OK)
      return cli_error(cmd, "%s", mb_error_last());
  }
  return 0;
}

int cli_add_result(const char *cmd, sinks_t *s, const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  s->results++;
  if (info.status == MB_RESULT_SKIPPED && !s->skipped++) {
    snprintf(s->skip_reason, sizeof s->skip_reason, "%s", info.reason);
    s->skip_on_cpu = info.backend && !strcmp(info.backend, "cpu");
  }
  if (cli_out_add(cmd, &s->file, r) != 0) return -1;
  if (s->console && mb_report_add(s->console, r) != MB_OK)
    return cli_error(cmd, "writing results: %s", mb_error_last());
  return 0;
}

int cli_close_sinks(const char *cmd, sinks_t *s) {
  int rc = cli_out_close(cmd, &s->file) < 0 ? -1 : 0;
  if (mb_report_close(s->console) != MB_OK)
    rc = cli_error(cmd, "writing results: %s", mb_error_last());
  return rc;
}

int cli_result_unfinished(const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  return info.status == MB_RESULT_FAILED && info.reason &&
         !strcmp(info.reason, "interrupted");
}

/* 1 when the result is a failure for the exit code: failed, or wrong. */
int cli_result_failed(const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &c);
  return info.status == MB_RESULT_FAILED || (c.checked && !c.pass);
}
