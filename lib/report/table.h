/* Internal: the console table's columns (table_layout.c) and the cells of
 * a result (table.c). Every column is one row of k_columns; a cell is
 * text, formatted once, whatever the layout. */
#ifndef MB_LIB_REPORT_TABLE_H
#define MB_LIB_REPORT_TABLE_H

#include <stddef.h>

#include "report/report.h"

typedef enum mb__col {
  MB__COL_NAME,
  MB__COL_OP,
  MB__COL_SHAPE,
  MB__COL_DTYPE,
  MB__COL_VARIANT,
  MB__COL_BACKEND,
  MB__COL_IMPL,
  MB__COL_CACHE,
  MB__COL_MEDIAN,
  MB__COL_MIN,
  MB__COL_P10,
  MB__COL_P90,
  MB__COL_MAX,
  MB__COL_MEAN,
  MB__COL_NOISE,
  MB__COL_SAMPLES,
  MB__COL_STOP,
  MB__COL_GFLOPS,
  MB__COL_GBPS,
  MB__COL_PEAK,
  MB__COL_ROOF,
  MB__COL_SPEEDUP,
  MB__COL_CHECK,
  MB__COL_COUNT
} mb__col_t;

enum { MB__CELL = 192 };
typedef char mb__cells_t[MB__COL_COUNT][MB__CELL];

/* Every cell of r's row, escaped (no control characters). */
void mb__table_cells(const mb_result_t *r, mb__cells_t cells);

/* The layout state of a table report (rep->table). */
typedef struct mb__table mb__table_t;

/* Parses rep's column choice (NULL: the default set) into a new layout
 * state; the error names an unknown key and lists the valid ones. */
mb_status_t mb__table_new(const char *columns, unsigned width,
                          mb__table_t **out);
void mb__table_free(mb__table_t *t);
/* Buffered (width > 0): laid out at close; else rows are streamed. */
int mb__table_buffered(const mb__table_t *t);
/* The title row (markdown: and its rule). */
void mb__table_put_titles(const mb__table_t *t, FILE *f, int md);
/* One row of the chosen columns: streamed at the columns' fixed widths, or
 * as markdown; no trailing spaces. */
void mb__table_put_row(const mb__table_t *t, FILE *f, int md,
                       mb__cells_t cells);
/* Keeps a row and the text that goes under it (notes, details; may be
 * NULL) for the layout at close. */
mb_status_t mb__table_keep(mb__table_t *t, mb__cells_t cells,
                           const char *under);
/* Lays the kept rows out to fit the width and prints them. */
void mb__table_render(const mb__table_t *t, FILE *f);

#endif
