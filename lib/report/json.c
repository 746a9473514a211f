/* JSON: one document {schema, meta, devices, results[]}. Written to a file,
 * the whole document is rewritten after every result into a temporary file
 * that is renamed over the target, so the file on disk is always complete
 * and valid: a crash or Ctrl-C keeps every finished result. The cost is
 * O(results^2) bytes written, negligible for plans of hundreds of results. */
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

static mb_status_t write_atomically(const mb_report_t *rep) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", rep->path);
  char *text = cJSON_Print(rep->doc);
  if (!text) return mb__fail(MB_ERR_NO_MEMORY, "JSON report: out of memory");
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(text);
    return mb__fail(MB_ERR_IO, "cannot write %s: %m", tmp);
  }
  int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  ok = (fclose(f) == 0) && ok;
  free(text);
  if (!ok || rename(tmp, rep->path) != 0) {
    remove(tmp);
    return mb__fail(MB_ERR_IO, "cannot write %s: %m", rep->path);
  }
  return MB_OK;
}

static mb_status_t json_begin(mb_report_t *rep) {
  return rep->path ? write_atomically(rep) : MB_OK;
}

static mb_status_t json_row(mb_report_t *rep, const mb_result_t *r) {
  cJSON *obj = mb__result_to_cjson(r);
  if (!obj) return mb__fail(MB_ERR_NO_MEMORY, "JSON report: out of memory");
  cJSON_AddItemToArray(cJSON_GetObjectItem(rep->doc, "results"), obj);
  return rep->path ? write_atomically(rep) : MB_OK;
}

static mb_status_t json_end(mb_report_t *rep) {
  if (rep->path) return write_atomically(rep);
  char *text = cJSON_Print(rep->doc);
  if (!text) return mb__fail(MB_ERR_NO_MEMORY, "JSON report: out of memory");
  fputs(text, rep->out);
  fputc('\n', rep->out);
  free(text);
  return fflush(rep->out) == 0 ? MB_OK
                               : mb__fail(MB_ERR_IO, "writing JSON: %m");
}

const mb__writer_t mb__writer_json = {json_begin, json_row, json_end};
