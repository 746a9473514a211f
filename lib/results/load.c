/* Reading a results file back: the JSON document a report writes, or the
 * JSON-lines stream written while running. Both end up as one document
 * {schema, meta, devices, results[]} in memory (results_internal.h).
 *
 * Which one a file is: a stream's first non-blank line is a complete JSON
 * object with "schema" and no "results" (its header); a document's first
 * line is "{" alone (pretty-printed) or the whole document on one line,
 * which has "results". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/json_exact.h"
#include "results/result_read.h"
#include "results/results_internal.h"

/* ---- small readers shared by the results files ------------------------- */

const char *mb__json_str(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

double mb__json_num(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* ---- lines -------------------------------------------------------------- */

typedef struct line {
  const char *p;
  size_t n;
  int no;         /* 1-based */
  int terminated; /* ends with '\n': the writer finished it */
} line_t;

static int only_space(const char *p, const char *end) {
  for (; p < end; p++)
    if (!strchr(" \t\r\n", *p)) return 0;
  return 1;
}

/* The next non-blank line from *pos; 0 at the end of the text. */
static int next_line(const char *text, size_t len, size_t *pos, int *no,
                     line_t *out) {
  while (*pos < len) {
    const char *p = text + *pos;
    const char *nl = memchr(p, '\n', len - *pos);
    size_t n = nl ? (size_t)(nl - p) : len - *pos;
    *pos += n + (nl != NULL);
    ++*no;
    if (!only_space(p, p + n)) {
      *out = (line_t){p, n, *no, nl != NULL};
      return 1;
    }
  }
  return 0;
}

static int line_of(const char *text, const char *at) {
  int line = 1;
  for (const char *p = text; p < at; p++) line += *p == '\n';
  return line;
}

/* One line as one JSON value; NULL when it is not exactly that. */
static cJSON *parse_line(const line_t *l) {
  const char *end = NULL;
  cJSON *v = cJSON_ParseWithLengthOpts(l->p, l->n, &end, 0);
  if (v && !only_space(end, l->p + l->n)) {
    cJSON_Delete(v);
    v = NULL;
  }
  return v;
}

/* ---- checks ------------------------------------------------------------- */

/* `where` is "file" or "file:line". */
static mb_status_t check_schema(const cJSON *root, const char *where) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "schema");
  if (!s)
    return mb__fail(MB_ERR_PARSE,
                    "%s: no \"schema\"; expected \"%s\" (a results file "
                    "written by mbench or mb_report_open)",
                    where, MB__RESULTS_SCHEMA);
  if (!cJSON_IsString(s) || strcmp(s->valuestring, MB__RESULTS_SCHEMA) != 0)
    return mb__fail(MB_ERR_PARSE, "%s: schema \"%s\", expected \"%s\"", where,
                    cJSON_IsString(s) ? s->valuestring : "(not a string)",
                    MB__RESULTS_SCHEMA);
  return MB_OK;
}

/* meta must be an object and devices a list; both are made when absent so
 * the rest of the code never checks. */
static mb_status_t normalize_part(cJSON *doc, const char *path, const char *key,
                                  int want_array) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);
  if (!v) {
    v = want_array ? cJSON_AddArrayToObject(doc, key)
                   : cJSON_AddObjectToObject(doc, key);
    return v ? MB_OK
             : mb__fail(MB_ERR_NO_MEMORY, "reading %s: out of memory", path);
  }
  if (want_array ? cJSON_IsArray(v) : cJSON_IsObject(v)) return MB_OK;
  return mb__fail(MB_ERR_PARSE, "%s: \"%s\" is not a %s", path, key,
                  want_array ? "list" : "JSON object");
}

/* Indexes doc.results; every result must be an object with a string id. */
static mb_status_t index_results(mb_results_t *set) {
  mb_status_t st;
  if ((st = normalize_part(set->doc, set->path, "meta", 0)) != MB_OK ||
      (st = normalize_part(set->doc, set->path, "devices", 1)) != MB_OK)
    return st;
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(set->doc, "results");
  size_t n = (size_t)cJSON_GetArraySize(arr);
  set->items = calloc(n ? n : 1, sizeof *set->items);
  set->json = calloc(n ? n : 1, sizeof *set->json);
  if (!set->items || !set->json)
    return mb__fail(MB_ERR_NO_MEMORY, "reading %s: out of memory", set->path);
  const cJSON *r;
  cJSON_ArrayForEach(r, arr) {
    if (!cJSON_IsObject(r))
      return mb__fail(MB_ERR_PARSE, "%s: results[%zu] is not a JSON object",
                      set->path, set->count);
    if (!mb__json_str(r, "id"))
      return mb__fail(MB_ERR_PARSE, "%s: results[%zu] has no \"id\" string",
                      set->path, set->count);
    /* What compare, merge and report read, as the result reader checks
     * it (they read the JSON itself: a hand-edited "status": "great"
     * compared as skipped, a negative median as a time). */
    mb_result_status_t status;
    if ((st = mb__rj_status(r, &status)) != MB_OK ||
        (st = mb__rj_times(r)) != MB_OK) {
      mb__error_prefix("%s: results[%zu]", set->path, set->count);
      return st;
    }
    set->items[set->count++] = (cJSON *)r;
  }
  return MB_OK;
}

/* ---- the two layouts ---------------------------------------------------- */

static mb_status_t load_document(mb_results_t *set, const char *text,
                                 size_t len) {
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!doc)
    return mb__fail(MB_ERR_PARSE, "%s:%d: not valid JSON", set->path,
                    end ? line_of(text, end) : 1);
  set->doc = doc;
  if (!only_space(end, text + len))
    return mb__fail(MB_ERR_PARSE,
                    "%s:%d: text after the end of the JSON document", set->path,
                    line_of(text, end));
  if (!cJSON_IsObject(doc))
    return mb__fail(MB_ERR_PARSE,
                    "%s: not a JSON object; expected a \"%s\" document",
                    set->path, MB__RESULTS_SCHEMA);
  mb_status_t st = check_schema(doc, set->path);
  if (st != MB_OK) return st;
  if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "results")))
    return mb__fail(MB_ERR_PARSE, "%s: \"results\" is missing or not a list",
                    set->path);
  return MB_OK;
}

/* The header is taken over; lines from *pos on are results. A last line
 * that is cut short (no newline and not valid JSON: the writer died in the
 * middle of it) is dropped; any other bad line is an error. */
static mb_status_t load_stream(mb_results_t *set, cJSON *header,
                               const line_t *first, const char *text,
                               size_t len, size_t pos, int no) {
  set->doc = header;
  char where[4096 + 16];
  snprintf(where, sizeof where, "%s:%d", set->path, first->no);
  mb_status_t st = check_schema(header, where);
  if (st != MB_OK) return st;
  cJSON *arr = cJSON_AddArrayToObject(header, "results");
  if (!arr)
    return mb__fail(MB_ERR_NO_MEMORY, "reading %s: out of memory", set->path);
  line_t l;
  while (next_line(text, len, &pos, &no, &l)) {
    cJSON *r = parse_line(&l);
    if (!r && !l.terminated) { /* truncated last line */
      snprintf(set->note, sizeof set->note,
               "%s:%d: the last line is cut short (the run that wrote it "
               "stopped in the middle of it): dropped, %d results read",
               set->path, l.no, cJSON_GetArraySize(arr));
      break;
    }
    if (!r || !cJSON_IsObject(r)) {
      cJSON_Delete(r);
      return mb__fail(MB_ERR_PARSE,
                      "%s:%d: not a result (one JSON object per line "
                      "expected): \"%.40s%s\"",
                      set->path, l.no, l.p, l.n > 40 ? "..." : "");
    }
    cJSON_AddItemToArray(arr, r);
    if (!mb__json_str(r, "id"))
      return mb__fail(MB_ERR_PARSE, "%s:%d: result has no \"id\" string",
                      set->path, l.no);
  }
  return MB_OK;
}

static mb_status_t load_text(mb_results_t *set, const char *text, size_t len) {
  size_t pos = 0;
  int no = 0;
  line_t first;
  if (!next_line(text, len, &pos, &no, &first))
    return mb__fail(MB_ERR_PARSE,
                    "%s: empty file; expected a \"%s\" document or stream",
                    set->path, MB__RESULTS_SCHEMA);
  cJSON *head = parse_line(&first);
  if (cJSON_IsObject(head) &&
      cJSON_GetObjectItemCaseSensitive(head, "schema") &&
      !cJSON_GetObjectItemCaseSensitive(head, "results"))
    return load_stream(set, head, &first, text, len, pos, no);
  cJSON_Delete(head);
  return load_document(set, text, len);
}

mb_status_t mb_results_load(const char *path, mb_results_t **out) {
  if (!path || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_results_load: NULL argument");
  *out = NULL;
  mb_results_t *set = calloc(1, sizeof *set);
  if (!set || !(set->path = mb__strdup(path))) {
    free(set);
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_load: out of memory");
  }
  char *text = NULL;
  size_t len = 0;
  mb_status_t st = mb__read_file(path, &text, &len);
  if (st == MB_OK) st = load_text(set, text, len);
  if (st == MB_OK) st = index_results(set);
  free(text);
  if (st != MB_OK) {
    mb_results_destroy(set);
    return st;
  }
  *out = set;
  return MB_OK;
}

void mb_results_destroy(mb_results_t *set) {
  if (!set) return;
  for (size_t i = 0; set->json && i < set->count; i++) free(set->json[i]);
  free(set->json);
  free(set->items);
  cJSON_Delete(set->doc);
  free(set->path);
  free(set);
}

const char *mb_results_note(const mb_results_t *set) {
  return set ? set->note : "";
}

size_t mb_results_count(const mb_results_t *set) {
  return set ? set->count : 0;
}

const cJSON *mb__results_item(const mb_results_t *set, size_t index) {
  return set && index < set->count ? set->items[index] : NULL;
}

const char *mb_results_id(const mb_results_t *set, size_t index) {
  return mb__json_str(mb__results_item(set, index), "id");
}

/* Printed on first use: compare and merge never need the text. */
const char *mb_results_json(const mb_results_t *set, size_t index) {
  const cJSON *r = mb__results_item(set, index);
  if (!r) return NULL;
  if (!set->json[index] && !(set->json[index] = mb__json_print_exact(r, 0)))
    mb__fail(MB_ERR_NO_MEMORY, "mb_results_json: out of memory");
  return set->json[index];
}

const cJSON *mb__results_meta(const mb_results_t *set) {
  return cJSON_GetObjectItemCaseSensitive(set->doc, "meta");
}

const cJSON *mb__results_devices(const mb_results_t *set) {
  return cJSON_GetObjectItemCaseSensitive(set->doc, "devices");
}

const char *mb__results_path(const mb_results_t *set) {
  return set->path;
}
