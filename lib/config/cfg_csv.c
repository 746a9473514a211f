/* CSV into the config tree, for the JAX suite's csv_shapes files: the
 * rows as the maps Python's csv.DictReader makes of them (cfg_tree.h). A
 * hand-written reader: RFC 4180 is small, and the library has no CSV
 * dependency to lean on. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_tree.h"
#include "error.h"

typedef struct cursor {
  const char *p, *end;
  const char *name;
  int line;
} cursor_t;

/* Growable field text. */
typedef struct field {
  char *s;
  size_t len, cap;
} field_t;

static int push(field_t *f, char c) {
  if (f->len + 1 >= f->cap) {
    size_t cap = f->cap ? 2 * f->cap : 64;
    char *s = realloc(f->s, cap);
    if (!s) return 0;
    f->s = s, f->cap = cap;
  }
  f->s[f->len++] = c;
  f->s[f->len] = '\0';
  return 1;
}

static mb_status_t no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a CSV file");
}

/* One field into f (emptied first); *eol when it ended its record. */
static mb_status_t read_field(cursor_t *c, field_t *f, int *eol) {
  f->len = 0;
  if (!push(f, '\0')) return no_memory();
  f->len = 0;
  int quoted = c->p < c->end && *c->p == '"', start = c->line;
  if (quoted) c->p++;
  for (; c->p < c->end; c->p++) {
    char ch = *c->p;
    if (quoted && ch == '"') {
      if (c->p + 1 < c->end && c->p[1] == '"') {
        c->p++;
      } else {
        quoted = 0; /* closing quote: the field goes on unquoted */
        continue;
      }
    } else if (!quoted && (ch == ',' || ch == '\n' || ch == '\r')) {
      break;
    }
    if (ch == '\n') c->line++;
    if (!push(f, ch)) return no_memory();
  }
  if (quoted)
    return mb__fail(MB_ERR_PARSE,
                    "%s:%d: a quoted field is not closed before the end of "
                    "the file",
                    c->name, start);
  *eol = c->p >= c->end || *c->p != ',';
  if (c->p < c->end && *c->p == '\r') c->p++;
  if (c->p < c->end) { /* the separator or the line end */
    if (*c->p == '\n') c->line++;
    c->p++;
  }
  return MB_OK;
}

/* A cell as DictReader + csv_loader type it: "" null, a number, else the
 * text as written. */
static mb_cfg_node_t *typed(const char *s, int line) {
  if (!*s) return mb__cfg_new(MB_CFG_NULL, line, s);
  size_t a = 0, b = strlen(s);
  while (a < b && isspace((unsigned char)s[a])) a++;
  while (b > a && isspace((unsigned char)s[b - 1])) b--;
  char *trim = strndup(s + a, b - a);
  double v;
  int num = trim && mb__cfg_number(trim, &v);
  mb_cfg_node_t *n =
      mb__cfg_new(num ? MB_CFG_NUMBER : MB_CFG_STRING, line, num ? trim : s);
  if (n && num) n->number = v;
  free(trim);
  return n;
}

/* One record's fields; *count 0 for a blank line. */
static mb_status_t read_record(cursor_t *c, field_t *f, mb_cfg_node_t *cells) {
  int eol = 0;
  mb_status_t st = MB_OK;
  while (st == MB_OK && !eol) {
    const int line = c->line;
    st = read_field(c, f, &eol);
    mb_cfg_node_t *cell = st == MB_OK ? typed(f->s, line) : NULL;
    if (st == MB_OK)
      st = cell ? mb__cfg_append(cells, NULL, cell) : no_memory();
  }
  return st;
}

static mb_status_t rows(cursor_t *c, field_t *f, mb_cfg_node_t *out) {
  mb_cfg_node_t *header = mb__cfg_new(MB_CFG_LIST, c->line, NULL);
  mb_status_t st = header ? read_record(c, f, header) : no_memory();
  if (st == MB_OK && header->count == 1 &&
      header->items[0]->kind == MB_CFG_NULL)
    st = mb__fail(MB_ERR_PARSE, "%s:1: no header row (the column names)",
                  c->name);
  for (size_t i = 0; st == MB_OK && i < header->count; i++)
    for (size_t j = 0; j < i; j++)
      if (!strcmp(header->items[i]->text, header->items[j]->text)) {
        st = mb__fail(MB_ERR_PARSE, "%s:1: column \"%s\" appears twice",
                      c->name, header->items[i]->text);
        break;
      }
  while (st == MB_OK && c->p < c->end) {
    const int line = c->line;
    mb_cfg_node_t *cells = mb__cfg_new(MB_CFG_LIST, line, NULL);
    mb_cfg_node_t *row = mb__cfg_new(MB_CFG_MAP, line, NULL);
    st = cells && row ? read_record(c, f, cells) : no_memory();
    if (st == MB_OK && cells->count > header->count)
      st = mb__fail(MB_ERR_PARSE,
                    "%s:%d: %zu fields, but the header names %zu columns",
                    c->name, line, cells->count, header->count);
    const int blank =
        cells && cells->count == 1 && cells->items[0]->kind == MB_CFG_NULL;
    for (size_t i = 0; st == MB_OK && !blank && i < header->count; i++) {
      mb_cfg_node_t *v = i < cells->count ? cells->items[i]
                                          : mb__cfg_new(MB_CFG_NULL, line, "");
      if (i < cells->count) cells->items[i] = NULL;
      st = v ? mb__cfg_append(row, header->items[i]->text, v) : no_memory();
    }
    mb__cfg_free(cells); /* what moved into row is NULL here */
    if (st == MB_OK && !blank) {
      st = mb__cfg_append(out, NULL, row);
      row = NULL;
    }
    mb__cfg_free(row);
  }
  mb__cfg_free(header);
  return st;
}

mb_status_t mb__cfg_parse_csv(const char *text, size_t len, const char *name,
                              mb_cfg_node_t **out) {
  cursor_t c = {text, text + len, name, 1};
  field_t f = {NULL, 0, 0};
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) c.p += 3; /* a BOM */
  *out = mb__cfg_new(MB_CFG_LIST, 1, NULL);
  mb_status_t st = *out ? rows(&c, &f, *out) : no_memory();
  free(f.s);
  if (st != MB_OK) {
    mb__cfg_free(*out);
    *out = NULL;
  }
  return st;
}
