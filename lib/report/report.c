/* Opening, feeding and closing a report; the formats are in their files. */
#include "report/report.h"
#include "report/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
  const char *name;
  mb_format_t format;
  const mb__writer_t *writer;
} k_formats[] = {
    {"table", MB_FORMAT_TABLE, &mb__writer_table},
    {"json", MB_FORMAT_JSON, &mb__writer_json},
    {"csv", MB_FORMAT_CSV, &mb__writer_csv},
    {"md", MB_FORMAT_MARKDOWN, &mb__writer_markdown},
    {"markdown", MB_FORMAT_MARKDOWN, &mb__writer_markdown},
    {"ossdb", MB_FORMAT_OSSDB, &mb__writer_ossdb},
};
#define VALID_FORMATS "table, json, csv, md, ossdb"
#define NUM_FORMATS (sizeof k_formats / sizeof k_formats[0])

mb_status_t mb_format_from_name(const char *name, mb_format_t *out) {
  for (size_t i = 0; name && out && i < NUM_FORMATS; i++)
    if (strcmp(k_formats[i].name, name) == 0) {
      *out = k_formats[i].format;
      return MB_OK;
    }
  return mb__fail(MB_ERR_INVALID_ARG,
                  "unknown format \"%s\"; valid formats: " VALID_FORMATS,
                  name ? name : "(null)");
}

const char *mb_format_name(mb_format_t format) {
  for (size_t i = 0; i < NUM_FORMATS; i++)
    if (k_formats[i].format == format) return k_formats[i].name;
  return "?";
}

/* {schema, meta, devices}: the head of a document and of its stream. */
static cJSON *header(mb_context_t *ctx, const mb_report_options_t *opts) {
  cJSON *h = cJSON_CreateObject();
  cJSON *meta = mb__meta_cjson(ctx, opts->argc, opts->argv);
  cJSON *devices = mb__devices_cjson(ctx);
  if (!h || !meta || !devices ||
      !cJSON_AddStringToObject(h, "schema", "microbench.results/1")) {
    cJSON_Delete(h);
    cJSON_Delete(meta);
    cJSON_Delete(devices);
    return NULL;
  }
  cJSON_AddItemToObject(h, "meta", meta);
  cJSON_AddItemToObject(h, "devices", devices);
  return h;
}

static void free_report(mb_report_t *rep) {
  if (rep->own_out) fclose(rep->out);
  if (rep->lines) fclose(rep->lines);
  cJSON_Delete(rep->head);
  cJSON_Delete(rep->doc);
  cJSON_Delete(rep->notes);
  free(rep->path);
  free(rep->partial_path);
  free(rep->lines_path);
  free(rep->columns);
  mb__table_free(rep->table);
  free(rep);
}

/* "<path>.partial": where a row format's file grows until close renames it
 * onto path, so an existing file is replaced only by a finished one. */
static mb_status_t open_rows(mb_report_t *rep, const char *path) {
  const size_t n = strlen(path) + sizeof ".partial";
  if (!(rep->path = mb__strdup(path)) || !(rep->partial_path = malloc(n)))
    return mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
  snprintf(rep->partial_path, n, "%s.partial", path);
  rep->out = fopen(rep->partial_path, "w");
  rep->own_out = rep->out != NULL;
  return rep->out ? MB_OK
                  : mb__fail(MB_ERR_IO, "cannot write %s (growing %s): %m",
                             rep->partial_path, path);
}

/* The finished rows onto the target, which keeps its permissions. */
static mb_status_t finish_rows(mb_report_t *rep) {
  mode_t mode = 0;
  mb_status_t st = mb__output_path_ok(rep->path, &mode);
  if (st == MB_OK && ((mode && chmod(rep->partial_path, mode) != 0) ||
                      rename(rep->partial_path, rep->path) != 0))
    st = mb__fail(MB_ERR_IO, "cannot rename %s to %s: %m; the rows are in %s",
                  rep->partial_path, rep->path, rep->partial_path);
  return st;
}

mb_status_t mb_report_open(mb_context_t *ctx, const mb_report_options_t *given,
                           mb_report_t **out) {
  if (!ctx || !given || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_report_open: NULL argument");
  *out = NULL;
  mb_report_options_t full = MB_REPORT_OPTIONS_INIT;
  const mb_report_options_t *opts = &full;
  mb_status_t st =
      mb__struct_in(MB__STRUCT_REPORT_OPTIONS, "mb_report_open", given, &full);
  if (st != MB_OK) return st;
  const mb__writer_t *writer = NULL;
  for (size_t i = 0; i < NUM_FORMATS; i++)
    if (k_formats[i].format == opts->format) writer = k_formats[i].writer;
  if (!writer)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_report_open: format %d; valid formats: " VALID_FORMATS,
                    (int)opts->format);
  if (opts->path && (st = mb__output_path_ok(opts->path, NULL)) != MB_OK)
    return st;
  mb_report_t *rep = calloc(1, sizeof *rep);
  if (!rep) return mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
  rep->ctx = ctx;
  rep->format = opts->format;
  rep->writer = writer;
  rep->out = opts->stream ? opts->stream : stdout;
  rep->width = opts->width;
  if (opts->columns && !(rep->columns = mb__strdup(opts->columns)))
    st = mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
  else if (writer->document) {
    /* Written whole at close; a file gets its JSON-lines stream now. */
    if (!(rep->head = header(ctx, opts)))
      st = mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
    else if (opts->path && !(rep->path = mb__strdup(opts->path)))
      st = mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
    else if (opts->path)
      st = mb__lines_open(rep);
  } else if (opts->path) {
    st = open_rows(rep, opts->path);
  }
  if (st == MB_OK) st = writer->begin(rep);
  if (st != MB_OK) {
    /* No result was written: no stream or partial file is left behind. */
    if (rep->lines) remove(rep->lines_path);
    if (rep->own_out) remove(rep->partial_path);
    free_report(rep);
    return st;
  }
  *out = rep;
  return MB_OK;
}

mb_status_t mb_report_add(mb_report_t *rep, const mb_result_t *r) {
  if (!rep || !r)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_report_add: NULL argument");
  mb_status_t st = rep->writer->row(rep, r);
  if (st == MB_OK) rep->rows++;
  return st;
}

mb_status_t mb_report_close(mb_report_t *rep) {
  if (!rep) return MB_OK;
  mb_status_t st = rep->writer->end(rep);
  const int rows_file = rep->own_out;
  if (rep->own_out && fclose(rep->out) != 0 && st == MB_OK)
    st = mb__fail(MB_ERR_IO, "closing %s: %m", rep->partial_path);
  rep->own_out = 0;
  if (rows_file && st == MB_OK) st = finish_rows(rep);
  /* The stream goes once the document is safely written; else it is kept
   * (the error names it) with every result. */
  mb_status_t lst = mb__lines_finish(rep, st != MB_OK);
  if (st == MB_OK) st = lst;
  free_report(rep);
  return st;
}

mb_status_t mb_report_abandon(mb_report_t *rep, char *kept, size_t cap) {
  if (kept && cap) kept[0] = '\0';
  if (!rep) return MB_OK;
  struct stat st_target;
  if (!rep->path || stat(rep->path, &st_target) != 0) {
    /* Nothing to keep safe: the finished results become the file. */
    if (kept && cap && rep->path) snprintf(kept, cap, "%s", rep->path);
    return mb_report_close(rep);
  }
  const char *where =
      rep->writer->document ? rep->lines_path : rep->partial_path;
  if (kept && cap) snprintf(kept, cap, "%s", where);
  mb_status_t st = MB_OK;
  if (rep->own_out) {
    /* The rows so far stay in <path>.partial, flushed and closed. */
    if (fclose(rep->out) != 0)
      st = mb__fail(MB_ERR_IO, "closing %s: %m", rep->partial_path);
    rep->own_out = 0;
  }
  mb_status_t lst = mb__lines_finish(rep, 1);
  if (st == MB_OK) st = lst;
  free_report(rep);
  return st;
}

void mb_format_ns(double ns, char *buf, size_t cap) {
  static const struct {
    double scale;
    const char *unit;
  } k_units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
  if (!buf || !cap) return;
  if (!isfinite(ns)) { /* absent or not measured */
    snprintf(buf, cap, "-");
    return;
  }
  for (size_t i = 0; i < sizeof k_units / sizeof k_units[0]; i++)
    if (ns >= k_units[i].scale || i + 1 == sizeof k_units / sizeof k_units[0]) {
      double v = ns / k_units[i].scale;
      snprintf(buf, cap,
               v >= 100  ? "%.1f %s"
               : v >= 10 ? "%.2f %s"
                         : "%.3f %s",
               v, k_units[i].unit);
      return;
    }
}
