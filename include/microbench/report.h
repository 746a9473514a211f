/* libmicrobench — result writers: console table, JSON, CSV, markdown,
 * ossdb (the PyTorch OSS benchmark database).
 *
 * A report is streamed: each mb_report_add() puts the row on disk before it
 * returns, so a crash keeps every finished result. CSV, markdown and table
 * rows are appended and flushed to `<path>.partial`, renamed onto the path
 * by mb_report_close() (an existing file is replaced only by a finished
 * one); JSON and ossdb files get a JSON-lines
 * stream beside them (results.json -> results.jsonl, any other path ->
 * `<path>.jsonl`: a header line, then one result per line) and the final
 * document is written, atomically, by mb_report_close(), which then
 * removes the stream (kept, and named in the error, when the document
 * cannot be written). To a stream, JSON and ossdb are printed at close.
 *
 * Threading: one thread at a time per report. */
#ifndef MICROBENCH_REPORT_H
#define MICROBENCH_REPORT_H

#include <stdio.h>

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mb_format {
  MB_FORMAT_TABLE = 0,
  MB_FORMAT_JSON = 1,
  MB_FORMAT_CSV = 2,
  MB_FORMAT_MARKDOWN = 3,
  /* The PyTorch OSS benchmark database's record list: per result, records
   * for time, TFLOP/s, speedup vs baseline and correctness. */
  MB_FORMAT_OSSDB = 4
} mb_format_t;

/* A duration in nanoseconds with a unit that keeps 4 significant digits:
 * "1.234 ms", "56.78 us". What the table prints. */
MB_API void mb_format_ns(double ns, char *buf, size_t cap);

/* `text` with every control character (bytes below 0x20, and 0x7f) written
 * as \xNN into out (cap bytes, always NUL-terminated, cut when short).
 * Returns the length the whole would take, as snprintf does. The table
 * writers and mbench print names, ids and reasons through it: text from a
 * file or a command line cannot move the cursor, clear a terminal or forge
 * a line. */
MB_API size_t mb_escape_controls(const char *text, char *out, size_t cap);

/* Whether a report may be written to `path`: a new file, or an existing
 * regular file whose owner may write it. A device, FIFO, socket or
 * directory is MB_ERR_INVALID_ARG; a read-only file MB_ERR_IO; the message
 * names the path. mb_report_open checks the same, but a program that
 * defers opening (mbench opens once a result was measured) asks first. */
MB_API mb_status_t mb_report_check_path(const char *path);
/* The same, and `path` is none of the `count` files the program reads
 * (a config, results being merged): `mbench run --config x.json -o x.json`
 * would replace the config with its own results. MB_ERR_INVALID_ARG names
 * both. */
MB_API mb_status_t mb_report_check_output(const char *path,
                                          const char *const *inputs,
                                          size_t count);

/* "table", "json", "csv", "md" (also "markdown"), "ossdb"; errors list
 * valid names. */
MB_API mb_status_t mb_format_from_name(const char *name, mb_format_t *out);
MB_API const char *mb_format_name(mb_format_t format);

typedef struct mb_report_options {
  uint32_t struct_size;
  mb_format_t format;
  const char *path; /* file to write; NULL: `stream` */
  FILE *stream;     /* NULL with NULL path: stdout; borrowed */
  int argc;         /* recorded in meta.argv; borrowed during open */
  const char *const *argv;
  /* Table and markdown: the columns, by key, comma-separated
   * (mb_report_column() lists them); "+key,-key" adds to or removes from
   * the default set. NULL: the default set. Other formats keep every field
   * whatever this says. */
  const char *columns;
  /* Table: 0 prints each row as it is added, every chosen column at a
   * fixed width. N > 0 lays the table out at close to fit N columns of
   * text: identity columns with one value in every row (and columns with
   * none) move to a line above it, long variants become [1], [2], ...
   * with a legend, and default columns that still do not fit are left out
   * (said under the table). */
  uint32_t width;
} mb_report_options_t;

#define MB_REPORT_OPTIONS_INIT                                               \
  {                                                                          \
    sizeof(mb_report_options_t), MB_FORMAT_TABLE, NULL, NULL, 0, NULL, NULL, \
        0u                                                                   \
  }

/* Table column i, in the order tables print them: returns its key (for
 * `columns`) and sets, where not NULL, its title, what it shows and
 * whether the default set has it; NULL past the last. Static strings. */
MB_API const char *mb_report_column(size_t i, const char **title,
                                    const char **help, int *is_default);

typedef struct mb_report mb_report_t;

/* The context supplies meta (version, commit, host) and devices. */
MB_API mb_status_t mb_report_open(mb_context_t *ctx,
                                  const mb_report_options_t *opts,
                                  mb_report_t **out);
/* Writes one result (copied as needed; `r` stays the caller's). */
MB_API mb_status_t mb_report_add(mb_report_t *rep, const mb_result_t *r);
/* Finishes the document and frees the report. NULL is a no-op (MB_OK). */
MB_API mb_status_t mb_report_close(mb_report_t *rep);
/* Ends a report that did not finish (a run stopped by Ctrl-C) without
 * replacing an existing file at its path with fewer results: the results
 * added so far stay in the JSON-lines stream (documents) or in
 * `<path>.partial` (CSV, markdown, table), and the existing file is left
 * as it was. When nothing was at the path, the same as mb_report_close.
 * `kept` (cap bytes) receives the path that holds the results. Frees the
 * report; NULL is a no-op. */
MB_API mb_status_t mb_report_abandon(mb_report_t *rep, char *kept, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
