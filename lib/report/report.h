/* Internal: result writers share this report object; each format is a
 * small table of three hooks. */
#ifndef MB_LIB_REPORT_REPORT_H
#define MB_LIB_REPORT_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "results/result.h"

typedef struct mb__writer {
  mb_status_t (*begin)(mb_report_t *rep);
  mb_status_t (*row)(mb_report_t *rep, const mb_result_t *r);
  mb_status_t (*end)(mb_report_t *rep);
  /* A JSON document written whole at close (json, ossdb): to a file, it is
   * the target of an atomic rename and a JSON-lines stream keeps every
   * finished result meanwhile; else rows go straight to `out`. */
  int document;
} mb__writer_t;

struct mb_report {
  mb_context_t *ctx;
  mb_format_t format;
  const mb__writer_t *writer;
  FILE *out; /* stream or opened file (CSV, table, markdown) */
  int own_out;
  /* Document writers: the file written at close (NULL: printed to `out`),
   * and the JSON-lines stream beside it (NULL when no file). */
  char *path;
  char *partial_path; /* rows (CSV, markdown, table): written here, renamed
                         onto path at close */
  char *lines_path;
  FILE *lines;
  size_t lines_kept;  /* results written whole to the stream */
  size_t lines_total; /* results offered to it */
  int lines_cut;      /* a write to the stream failed: it ends short */
  cJSON *head;        /* {schema, meta, devices}; the writer may take it over */
  cJSON *doc;         /* the document being built */
  cJSON *notes; /* markdown: lines under rows, kept until the table ends */
  size_t rows;
  /* CSV: the header goes out with the first row, whose source chooses the
   * layout (csv.c); MB__CSV_NONE until then. */
  enum { MB__CSV_NONE, MB__CSV_OURS, MB__CSV_TORCHAO } csv_layout;
  /* Table and markdown: the columns asked for and the width to fit (0:
   * streamed), and the table's layout state (table.h). */
  char *columns;
  unsigned width;
  struct mb__table *table;
};

extern const mb__writer_t mb__writer_json;
extern const mb__writer_t mb__writer_csv;
extern const mb__writer_t mb__writer_table;
extern const mb__writer_t mb__writer_markdown;
extern const mb__writer_t mb__writer_ossdb;

/* torchao.c: torchao's layouts for results of a torchao config. The
 * entry as torchao's BenchmarkConfig holds it (`config.torchao`); NULL for
 * a result of any other source. */
const cJSON *mb__torchao_facts(const mb_result_t *r);
/* torch's device name for where r ran ("cpu", "cuda"). */
const char *mb__torchao_device(const mb_result_t *r);
/* What torchao's runner reports, from what the result holds; NAN unknown
 * (not run, or no baseline). */
typedef struct mb__torchao_figures {
  double speedup;      /* compile speedup on baseline, Fwd Speedup (x) */
  double baseline_ms;  /* the baseline's median, Bfloat16 Fwd Time (ms) */
  double quantized_ms; /* this median, Quantized Fwd Time (ms) */
  double allocated_mb; /* peak memory (10^6 bytes), Allocated Memory (MB) */
} mb__torchao_figures_t;
void mb__torchao_figures(const mb_result_t *r, mb__torchao_figures_t *f);
/* CSV: torchao's column i in its order (NULL past the last), and r's cell
 * in it as Python's csv.writer writes the value ("" for None). */
const char *mb__torchao_column(size_t i);
void mb__torchao_cell(const mb_result_t *r, size_t i, char *buf, size_t cap);

/* meta.c: the run's environment and the device list. */
cJSON *mb__meta_cjson(mb_context_t *ctx, int argc, const char *const *argv);
cJSON *mb__devices_cjson(mb_context_t *ctx);

/* json.c: the JSON-lines stream of a document written to a file. Open
 * writes rep->head as its first line; each result is one more line,
 * flushed. Finish closes it and removes it when `keep` is 0. */
mb_status_t mb__lines_open(mb_report_t *rep);
mb_status_t mb__lines_put(mb_report_t *rep, const cJSON *result);
mb_status_t mb__lines_finish(mb_report_t *rep, int keep);
/* Writes a finished document: to rep->path through a temporary file and a
 * rename, or printed to rep->out. */
mb_status_t mb__put_document(mb_report_t *rep, const cJSON *doc);

#endif
