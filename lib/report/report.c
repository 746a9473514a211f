/* Opening, feeding and closing a report; the formats are in their files. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

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
};
#define NUM_FORMATS (sizeof k_formats / sizeof k_formats[0])

mb_status_t mb_format_from_name(const char *name, mb_format_t *out) {
  for (size_t i = 0; name && out && i < NUM_FORMATS; i++)
    if (strcmp(k_formats[i].name, name) == 0) {
      *out = k_formats[i].format;
      return MB_OK;
    }
  return mb__fail(MB_ERR_INVALID_ARG,
                  "unknown format \"%s\"; valid formats: table, json, csv, md",
                  name ? name : "(null)");
}

const char *mb_format_name(mb_format_t format) {
  for (size_t i = 0; i < NUM_FORMATS; i++)
    if (k_formats[i].format == format) return k_formats[i].name;
  return "?";
}

mb_status_t mb_report_open(mb_context_t *ctx, const mb_report_options_t *opts,
                           mb_report_t **out) {
  if (!ctx || !opts || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_report_open: NULL argument");
  *out = NULL;
  if (opts->struct_size != sizeof *opts)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_report_open: struct_size %u, expected %zu (use "
                    "MB_REPORT_OPTIONS_INIT)",
                    opts->struct_size, sizeof *opts);
  const mb__writer_t *writer = NULL;
  for (size_t i = 0; i < NUM_FORMATS; i++)
    if (k_formats[i].format == opts->format) writer = k_formats[i].writer;
  if (!writer)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_report_open: format %d; valid: table, json, csv, md",
                    (int)opts->format);
  mb_report_t *rep = calloc(1, sizeof *rep);
  if (!rep) return mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
  rep->ctx = ctx;
  rep->format = opts->format;
  rep->writer = writer;
  rep->out = opts->stream ? opts->stream : stdout;
  mb_status_t st = MB_OK;
  if (opts->path && opts->format == MB_FORMAT_JSON) {
    /* Rewritten whole after each result; see json.c. */
    if (!(rep->path = mb__strdup(opts->path)))
      st = mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
  } else if (opts->path) {
    rep->out = fopen(opts->path, "w");
    rep->own_out = rep->out != NULL;
    if (!rep->out) st = mb__fail(MB_ERR_IO, "cannot write %s: %m", opts->path);
  }
  if (st == MB_OK && opts->format == MB_FORMAT_JSON) {
    rep->doc = cJSON_CreateObject();
    if (!rep->doc)
      st = mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
    else {
      cJSON_AddStringToObject(rep->doc, "schema", "microbench.results/1");
      cJSON_AddItemToObject(rep->doc, "meta",
                            mb__meta_cjson(ctx, opts->argc, opts->argv));
      cJSON_AddItemToObject(rep->doc, "devices", mb__devices_cjson(ctx));
      cJSON_AddArrayToObject(rep->doc, "results");
    }
  }
  if (st == MB_OK) st = writer->begin(rep);
  if (st != MB_OK) {
    if (rep->own_out) fclose(rep->out);
    cJSON_Delete(rep->doc);
    free(rep->path);
    free(rep);
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
  if (rep->own_out && fclose(rep->out) != 0 && st == MB_OK)
    st = mb__fail(MB_ERR_IO, "closing the report: %m");
  cJSON_Delete(rep->doc);
  free(rep->path);
  free(rep);
  return st;
}

void mb__format_ns(double ns, char *buf, size_t cap) {
  static const struct {
    double scale;
    const char *unit;
  } k_units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
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
