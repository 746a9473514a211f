/* The console table's columns and how they are laid out.
 *
 * Streamed (width 0: markdown, files, library callers that print as they
 * go), each row is printed as it comes at the columns' fixed widths. Fitted
 * (width N), the rows are kept and laid out at close, because only then is
 * it known which columns say nothing: an identity column (op, shape,
 * dtype, ...) with one value in every row moves to a line above the table,
 * a column with no value in any row goes, variants longer than fit become
 * [1], [2], ... with a legend under the table, and default columns that
 * still do not fit are left out in a fixed order (said under the table).
 * Columns the caller named are never left out. The JSON and CSV records
 * keep every field whatever the table shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"

typedef struct column {
  const char *key, *title;
  int width;      /* streamed; negative: left-aligned */
  int identity;   /* says which benchmark, not what it measured */
  int drop_rank;  /* left out to fit, lowest first; 0: never (what tells
                     the rows apart, the time, the verdict) */
  int is_default; /* shown unless --columns says otherwise */
  const char *help;
} column_t;

/* In enum mb__col order, which is the order columns are printed in. */
static const column_t k_columns[MB__COL_COUNT] = {
    {"name", "name", -24, 1, 0, 1,
     "a config entry's name (a streamed table shows it only when named)"},
    {"op", "op", -18, 1, 0, 1, "the op (or the alias asked for)"},
    {"shape", "shape", -16, 1, 0, 1, "the problem shape"},
    {"dtype", "dtype", -14, 1, 0, 1, "input dtype (->output when it differs)"},
    {"variant", "variant", -18, 1, 0, 1,
     "the op's parameters beyond shape and dtype, and a recipe"},
    {"backend", "backend", -7, 1, 0, 1, "the backend that ran it"},
    {"impl", "impl", -12, 1, 6, 1, "the kernel (emu: emulated formats)"},
    {"cache", "cache", -6, 1, 2, 1, "cache policy: cold, hot, rotate"},
    {"median", "median", 11, 0, 0, 1, "median sample time"},
    {"min", "min", 11, 0, 0, 0, "fastest sample"},
    {"p10", "p10", 11, 0, 0, 0, "10th percentile sample time"},
    {"p90", "p90", 11, 0, 0, 0, "90th percentile sample time"},
    {"max", "max", 11, 0, 0, 0, "slowest sample"},
    {"mean", "mean", 11, 0, 0, 0, "mean sample time"},
    {"noise", "noise", 7, 0, 5, 1, "relative standard deviation"},
    {"samples", "samples", 7, 0, 1, 1, "samples taken"},
    {"stop", "stop", -9, 0, 0, 0,
     "why sampling stopped: converged, plateau, timeout, fixed, unstable"},
    {"gflops", "GFLOP/s", 10, 0, 8, 1, "FLOP per second / 1e9"},
    {"gbps", "GB/s", 9, 0, 7, 1, "bytes moved per second / 1e9"},
    {"peak", "%peak", 6, 0, 4, 1, "% of the device's compute peak"},
    {"roof", "%roof", 6, 0, 0, 1,
     "% of the roofline bound (compute or bandwidth, whichever applies)"},
    {"speedup", "speedup", 7, 0, 3, 1, "a recipe's speedup over its baseline"},
    {"check", "check", -6, 0, 0, 1,
     "the check against the reference: pass, FAIL, or why it did not run"},
};

typedef struct kept_row {
  char *cells[MB__COL_COUNT];
  char *under; /* notes and details printed under the row, or NULL */
} kept_row_t;

struct mb__table {
  int shown[MB__COL_COUNT]; /* chosen: 1; named by the caller: 2 */
  unsigned width;
  kept_row_t *rows;
  size_t num_rows, cap_rows;
};

const char *mb_report_column(size_t i, const char **title, const char **help,
                             int *is_default) {
  if (i >= MB__COL_COUNT) return NULL;
  if (title) *title = k_columns[i].title;
  if (help) *help = k_columns[i].help;
  if (is_default) *is_default = k_columns[i].is_default;
  return k_columns[i].key;
}

static int find_key(const char *key, size_t len) {
  for (int c = 0; c < MB__COL_COUNT; c++)
    if (strlen(k_columns[c].key) == len &&
        strncmp(k_columns[c].key, key, len) == 0)
      return c;
  return -1;
}

static mb_status_t unknown(const char *item, size_t len) {
  char valid[512] = "";
  size_t n = 0;
  for (int c = 0; c < MB__COL_COUNT && n < sizeof valid; c++)
    n += (size_t)snprintf(valid + n, sizeof valid - n, "%s%s", c ? ", " : "",
                          k_columns[c].key);
  return mb__fail(MB_ERR_INVALID_ARG,
                  "unknown table column \"%.*s\"; valid columns: %s", (int)len,
                  item, valid);
}

/* "a,b" chooses exactly those; "+a,-b" edits the default set. */
static mb_status_t parse_columns(const char *spec, int *shown) {
  int edits = 1, any = 0;
  for (const char *p = spec; *p; p += strcspn(p, ","), p += *p == ',') {
    const size_t len = strcspn(p, ",");
    if (len) any = 1;
    if (len && *p != '+' && *p != '-') edits = 0;
  }
  if (!any)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "no table column named in \"%s\" (mb_report_column() "
                    "lists them)",
                    spec);
  for (int c = 0; c < MB__COL_COUNT; c++)
    shown[c] = edits ? k_columns[c].is_default : 0;
  for (const char *p = spec; *p; p += strcspn(p, ","), p += *p == ',') {
    size_t len = strcspn(p, ",");
    if (!len) continue;
    const int sign = *p == '-' ? -1 : *p == '+' ? 1 : 0;
    const char *key = p + (sign != 0);
    const int c = find_key(key, len - (sign != 0));
    if (c < 0) return unknown(key, len - (sign != 0));
    shown[c] = sign < 0 ? 0 : 2;
  }
  return MB_OK;
}

mb_status_t mb__table_new(const char *columns, unsigned width,
                          mb__table_t **out) {
  mb__table_t *t = calloc(1, sizeof *t);
  if (!t) return mb__fail(MB_ERR_NO_MEMORY, "table report: out of memory");
  t->width = width;
  mb_status_t st = MB_OK;
  if (columns)
    st = parse_columns(columns, t->shown);
  else
    for (int c = 0; c < MB__COL_COUNT; c++)
      t->shown[c] = k_columns[c].is_default;
  if (st != MB_OK) {
    free(t);
    return st;
  }
  /* Streamed, no empty column can be dropped: the name column, empty
   * outside a config's plan, is shown only when asked for. */
  if (!width && t->shown[MB__COL_NAME] == 1) t->shown[MB__COL_NAME] = 0;
  *out = t;
  return MB_OK;
}

void mb__table_free(mb__table_t *t) {
  if (!t) return;
  for (size_t i = 0; i < t->num_rows; i++) {
    for (int c = 0; c < MB__COL_COUNT; c++) free(t->rows[i].cells[c]);
    free(t->rows[i].under);
  }
  free(t->rows);
  free(t);
}

int mb__table_buffered(const mb__table_t *t) {
  return t->width > 0;
}

/* Cells at `widths` (negative: left-aligned), the last one unpadded so no
 * line ends in spaces. */
static void put_cells(FILE *f, int md, const int *show, const int *widths,
                      const char *const *cells) {
  int last = -1;
  for (int c = 0; c < MB__COL_COUNT; c++)
    if (show[c]) last = c;
  int first = 1;
  for (int c = 0; c < MB__COL_COUNT; c++) {
    if (!show[c]) continue;
    if (md) {
      fprintf(f, "| %s ", cells[c]);
      continue;
    }
    const int w = c == last && widths[c] < 0 ? 0 : widths[c];
    fprintf(f, "%s%*s", first ? "" : "  ", w, cells[c]);
    first = 0;
  }
  fputs(md ? "|\n" : "\n", f);
}

static void fixed_widths(int *widths) {
  for (int c = 0; c < MB__COL_COUNT; c++) widths[c] = k_columns[c].width;
}

void mb__table_put_titles(const mb__table_t *t, FILE *f, int md) {
  const char *titles[MB__COL_COUNT];
  int widths[MB__COL_COUNT];
  for (int c = 0; c < MB__COL_COUNT; c++) titles[c] = k_columns[c].title;
  fixed_widths(widths);
  put_cells(f, md, t->shown, widths, titles);
  if (!md) return;
  for (int c = 0; c < MB__COL_COUNT; c++)
    if (t->shown[c]) fputs(k_columns[c].width < 0 ? "|:---" : "|---:", f);
  fputs("|\n", f);
}

void mb__table_put_row(const mb__table_t *t, FILE *f, int md,
                       mb__cells_t cells) {
  const char *row[MB__COL_COUNT];
  int widths[MB__COL_COUNT];
  for (int c = 0; c < MB__COL_COUNT; c++) row[c] = cells[c];
  fixed_widths(widths);
  put_cells(f, md, t->shown, widths, row);
}

mb_status_t mb__table_keep(mb__table_t *t, mb__cells_t cells,
                           const char *under) {
  if (t->num_rows == t->cap_rows) {
    const size_t cap = t->cap_rows ? 2 * t->cap_rows : 16;
    kept_row_t *grown = realloc(t->rows, cap * sizeof *grown);
    if (!grown) return mb__fail(MB_ERR_NO_MEMORY, "table: out of memory");
    t->rows = grown;
    t->cap_rows = cap;
  }
  kept_row_t *row = &t->rows[t->num_rows];
  memset(row, 0, sizeof *row);
  int ok = !under || (row->under = mb__strdup(under));
  for (int c = 0; c < MB__COL_COUNT && ok; c++)
    ok = !t->shown[c] || (row->cells[c] = mb__strdup(cells[c])) != NULL;
  t->num_rows++; /* freed with the table even when cut short */
  return ok ? MB_OK : mb__fail(MB_ERR_NO_MEMORY, "table: out of memory");
}

/* ---- the fitted layout ---------------------------------------------------
 */

typedef struct layout {
  int show[MB__COL_COUNT];     /* printed as a column */
  int constant[MB__COL_COUNT]; /* one value in every row: above the table */
  int width[MB__COL_COUNT];    /* negative: left-aligned */
  const char **variants;       /* the abbreviated variants, [1] first */
  size_t num_variants;
  int dropped[MB__COL_COUNT]; /* left out to fit */
} layout_t;

/* A variant longer than this becomes [n] when the table does not fit. */
enum { VARIANT_KEEP = 10 };

static int blank(const char *cell) {
  return !cell || !*cell || strcmp(cell, "-") == 0;
}

/* The index of a long variant among the abbreviated ones; -1 if kept. */
static int variant_label(const layout_t *l, const char *v) {
  for (size_t i = 0; i < l->num_variants; i++)
    if (strcmp(l->variants[i], v) == 0) return (int)i;
  return -1;
}

static const char *cell_text(const layout_t *l, int c, const char *cell,
                             char *buf, size_t cap) {
  const int label = c == MB__COL_VARIANT ? variant_label(l, cell) : -1;
  if (label < 0) return cell;
  snprintf(buf, cap, "[%d]", label + 1);
  return buf;
}

static void measure_widths(const mb__table_t *t, layout_t *l) {
  for (int c = 0; c < MB__COL_COUNT; c++) {
    int w = (int)strlen(k_columns[c].title);
    for (size_t r = 0; r < t->num_rows; r++) {
      char buf[16];
      const char *s = cell_text(l, c, t->rows[r].cells[c], buf, sizeof buf);
      if (s && (int)strlen(s) > w) w = (int)strlen(s);
    }
    l->width[c] = k_columns[c].width < 0 ? -w : w;
  }
}

static int total_width(const layout_t *l) {
  int total = 0, n = 0;
  for (int c = 0; c < MB__COL_COUNT; c++)
    if (l->show[c]) total += abs(l->width[c]) + 2 * (n++ > 0);
  return total;
}

/* Columns that say nothing go, constant identity columns go above. */
static void drop_silent(const mb__table_t *t, layout_t *l) {
  for (int c = 0; c < MB__COL_COUNT; c++) {
    l->show[c] = t->shown[c] != 0;
    if (!l->show[c] || !t->num_rows) continue;
    int empty = 1, same = 1;
    for (size_t r = 0; r < t->num_rows; r++) {
      const char *s = t->rows[r].cells[c];
      empty &= blank(s);
      same &= strcmp(s, t->rows[0].cells[c]) == 0;
    }
    if (empty && t->shown[c] == 1) l->show[c] = 0;
    if (!empty && same && k_columns[c].identity && t->num_rows > 1) {
      l->show[c] = 0;
      l->constant[c] = 1;
    }
  }
}

static void abbreviate_variants(const mb__table_t *t, layout_t *l) {
  l->variants = calloc(t->num_rows ? t->num_rows : 1, sizeof *l->variants);
  if (!l->variants) return; /* then unabbreviated: wider, still right */
  for (size_t r = 0; r < t->num_rows; r++) {
    const char *v = t->rows[r].cells[MB__COL_VARIANT];
    if (strlen(v) > VARIANT_KEEP && variant_label(l, v) < 0)
      l->variants[l->num_variants++] = v;
  }
}

/* A single row that does not fit: what it is goes above it, what it
 * measured stays a row. */
static void lift_identity(const mb__table_t *t, layout_t *l) {
  for (int c = 0; c < MB__COL_COUNT; c++)
    if (l->show[c] && k_columns[c].identity && !blank(t->rows[0].cells[c])) {
      l->show[c] = 0;
      l->constant[c] = 1;
    }
}

static void fit(const mb__table_t *t, layout_t *l) {
  drop_silent(t, l);
  measure_widths(t, l);
  if (total_width(l) > (int)t->width && l->show[MB__COL_VARIANT]) {
    abbreviate_variants(t, l);
    measure_widths(t, l);
  }
  if (total_width(l) > (int)t->width && t->num_rows == 1) {
    lift_identity(t, l);
    measure_widths(t, l);
  }
  while (total_width(l) > (int)t->width) {
    int victim = -1;
    for (int c = 0; c < MB__COL_COUNT; c++)
      if (l->show[c] && t->shown[c] == 1 && k_columns[c].drop_rank &&
          (victim < 0 || k_columns[c].drop_rank < k_columns[victim].drop_rank))
        victim = c;
    if (victim < 0) break; /* what is left was asked for, or is the row */
    l->show[victim] = 0;
    l->dropped[victim] = 1;
  }
}

/* `text`, line by line, each broken at spaces to fit `width`; a broken
 * line's continuation is indented two more than its own indentation. */
static void put_wrapped(FILE *f, const char *text, int width) {
  while (*text) {
    size_t len = strcspn(text, "\n");
    const size_t indent = strspn(text, " ");
    size_t col = 0, start = 0;
    while (len - start + col > (size_t)width) {
      size_t cut = start + (size_t)width - col;
      while (cut > start + indent && text[cut] != ' ') cut--;
      if (cut <= start + indent) break; /* one long word: leave it whole */
      size_t end = cut; /* no line ends in spaces, none starts with them */
      while (end > start && text[end - 1] == ' ') end--;
      fprintf(f, "%*s%.*s\n", (int)col, "", (int)(end - start), text + start);
      for (start = cut; start < len && text[start] == ' ';) start++;
      col = indent + 2;
    }
    fprintf(f, "%*s%.*s\n", (int)col, "", (int)(len - start), text + start);
    text += len + (text[len] == '\n');
  }
}

static void put_header_line(const mb__table_t *t, const layout_t *l, FILE *f) {
  char line[1024] = "";
  size_t n = 0;
  for (int c = 0; c < MB__COL_COUNT && n < sizeof line; c++)
    if (l->constant[c])
      n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %s",
                            n ? "  |  " : "", k_columns[c].title,
                            t->rows[0].cells[c]);
  if (n) put_wrapped(f, line, (int)t->width);
}

static void put_footer(const mb__table_t *t, const layout_t *l, FILE *f) {
  for (size_t i = 0; l->show[MB__COL_VARIANT] && i < l->num_variants; i++) {
    char line[MB__CELL + 16];
    snprintf(line, sizeof line, "[%zu] %s", i + 1, l->variants[i]);
    put_wrapped(f, line, (int)t->width);
  }
  char line[512] = "";
  size_t n = 0;
  for (int c = 0; c < MB__COL_COUNT && n < sizeof line; c++)
    if (l->dropped[c])
      n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", n ? ", " : "",
                            k_columns[c].title);
  if (!n) return;
  char text[768];
  snprintf(text, sizeof text,
           "(left out to fit %u columns: %s; the JSON and CSV records keep "
           "every field)",
           t->width, line);
  put_wrapped(f, text, (int)t->width);
}

void mb__table_render(const mb__table_t *t, FILE *f) {
  layout_t l;
  memset(&l, 0, sizeof l);
  fit(t, &l);
  put_header_line(t, &l, f);
  const char *titles[MB__COL_COUNT];
  for (int c = 0; c < MB__COL_COUNT; c++) titles[c] = k_columns[c].title;
  put_cells(f, 0, l.show, l.width, titles);
  for (size_t r = 0; r < t->num_rows; r++) {
    const char *cells[MB__COL_COUNT];
    char label[16];
    for (int c = 0; c < MB__COL_COUNT; c++)
      cells[c] =
          l.show[c] ? cell_text(&l, c, t->rows[r].cells[c], label, sizeof label)
                    : "";
    put_cells(f, 0, l.show, l.width, cells);
    if (t->rows[r].under) put_wrapped(f, t->rows[r].under, (int)t->width);
  }
  put_footer(t, &l, f);
  free(l.variants);
}
