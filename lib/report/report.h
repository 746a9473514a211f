/* Internal: result writers share this report object; each format is a
 * small table of three hooks. */
#ifndef MB_LIB_REPORT_REPORT_H
#define MB_LIB_REPORT_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "result.h"

typedef struct mb__writer {
  mb_status_t (*begin)(mb_report_t *rep);
  mb_status_t (*row)(mb_report_t *rep, const mb_result_t *r);
  mb_status_t (*end)(mb_report_t *rep);
} mb__writer_t;

struct mb_report {
  mb_context_t *ctx;
  mb_format_t format;
  const mb__writer_t *writer;
  FILE *out; /* stream or opened file (CSV, table, markdown) */
  int own_out;
  char *path; /* JSON: the file rewritten after each row; NULL: stream */
  cJSON *doc; /* JSON: the whole document */
  size_t rows;
};

extern const mb__writer_t mb__writer_json;
extern const mb__writer_t mb__writer_csv;
extern const mb__writer_t mb__writer_table;
extern const mb__writer_t mb__writer_markdown;

/* meta.c: the run's environment and the device list. */
cJSON *mb__meta_cjson(mb_context_t *ctx, int argc, const char *const *argv);
cJSON *mb__devices_cjson(mb_context_t *ctx);

/* "1.234 ms": a duration with a unit that keeps 4 significant digits. */
void mb__format_ns(double ns, char *buf, size_t cap);

#endif
