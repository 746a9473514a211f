/* JSON: one document {schema, meta, devices, results[]}, written at close.
 * Written to a file, every result is also appended, as it finishes, to a
 * JSON-lines stream beside it (results.json -> results.jsonl): a header
 * line {schema, meta, devices}, then one result per line, each flushed. A
 * crash or Ctrl-C keeps every finished result there (`mbench merge` reads
 * streams); at close the document is written to a temporary file renamed
 * over the target, so the target is never half-written, and the stream is
 * removed. Each result is written once: O(results) bytes, where rewriting
 * the whole document after every result was O(results^2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* "<path>l" when path ends in ".json", else "<path>.jsonl". */
static char *lines_path(const char *path) {
  size_t n = strlen(path);
  int json = n >= 5 && strcmp(path + n - 5, ".json") == 0;
  char *out = malloc(n + 7);
  if (out) snprintf(out, n + 7, "%s%s", path, json ? "l" : ".jsonl");
  return out;
}

static mb_status_t put_line(mb_report_t *rep, const cJSON *obj) {
  char *text = cJSON_PrintUnformatted(obj);
  if (!text) return mb__fail(MB_ERR_NO_MEMORY, "JSON report: out of memory");
  int ok = !rep->lines_cut && fputs(text, rep->lines) >= 0 &&
           fputc('\n', rep->lines) != EOF && fflush(rep->lines) == 0;
  free(text);
  if (ok) return MB_OK;
  if (rep->lines_cut) return MB_OK; /* said once, when it failed */
  rep->lines_cut = 1;
  return mb__fail(MB_ERR_IO, "writing %s: %m", rep->lines_path);
}

mb_status_t mb__lines_open(mb_report_t *rep) {
  if (!(rep->lines_path = lines_path(rep->path)))
    return mb__fail(MB_ERR_NO_MEMORY, "mb_report_open: out of memory");
  if (!(rep->lines = fopen(rep->lines_path, "w")))
    return mb__fail(MB_ERR_IO, "cannot write %s (the stream of %s): %m",
                    rep->lines_path, rep->path);
  return put_line(rep, rep->head);
}

mb_status_t mb__lines_put(mb_report_t *rep, const cJSON *result) {
  if (!rep->lines) return MB_OK;
  rep->lines_total++;
  const int cut = rep->lines_cut;
  mb_status_t st = put_line(rep, result);
  if (st == MB_OK && !cut && !rep->lines_cut) rep->lines_kept++;
  return st;
}

mb_status_t mb__lines_finish(mb_report_t *rep, int keep) {
  if (!rep->lines) return MB_OK;
  int ok = fclose(rep->lines) == 0;
  rep->lines = NULL;
  if (!ok) return mb__fail(MB_ERR_IO, "closing %s: %m", rep->lines_path);
  if (!keep && remove(rep->lines_path) != 0)
    return mb__fail(MB_ERR_IO, "cannot remove %s: %m", rep->lines_path);
  return MB_OK;
}

/* When the document cannot be written, the error says what the stream
 * beside it holds: every result, or (its own write failed too: a full
 * disk) the results before the failure, its last line maybe cut. */
static mb_status_t put_file(const mb_report_t *rep, const char *text) {
  if (mb__write_file_atomic(rep->path, text) == MB_OK) return MB_OK;
  if (rep->lines_cut)
    return mb__fail(MB_ERR_IO,
                    "%s; %s holds only the first %zu of %zu results (writing "
                    "it failed too; its last line may be cut)",
                    mb_error_last(), rep->lines_path, rep->lines_kept,
                    rep->lines_total);
  return mb__fail(MB_ERR_IO, "%s; every result is kept in %s", mb_error_last(),
                  rep->lines_path);
}

mb_status_t mb__put_document(mb_report_t *rep, const cJSON *doc) {
  char *text = cJSON_Print(doc);
  if (!text) return mb__fail(MB_ERR_NO_MEMORY, "JSON report: out of memory");
  mb_status_t st = MB_OK;
  if (rep->path)
    st = put_file(rep, text);
  else if (fputs(text, rep->out) < 0 || fputc('\n', rep->out) == EOF ||
           fflush(rep->out) != 0)
    st = mb__fail(MB_ERR_IO, "writing the %s report: %m",
                  mb_format_name(rep->format));
  free(text);
  return st;
}

static mb_status_t json_begin(mb_report_t *rep) {
  rep->doc = rep->head;
  rep->head = NULL;
  return cJSON_AddArrayToObject(rep->doc, "results")
             ? MB_OK
             : mb__fail(MB_ERR_NO_MEMORY, "JSON report: out of memory");
}

static mb_status_t json_row(mb_report_t *rep, const mb_result_t *r) {
  cJSON *obj = mb__result_to_cjson(r);
  if (!obj) return mb__fail(MB_ERR_NO_MEMORY, "JSON report: out of memory");
  mb_status_t st = mb__lines_put(rep, obj);
  cJSON_AddItemToArray(cJSON_GetObjectItem(rep->doc, "results"), obj);
  return st;
}

static mb_status_t json_end(mb_report_t *rep) {
  return mb__put_document(rep, rep->doc);
}

const mb__writer_t mb__writer_json = {json_begin, json_row, json_end, 1};
