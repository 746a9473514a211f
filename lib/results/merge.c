/* Merging result files (several hosts, devices or runs) into one document.
 * Every input is loaded before anything is written, and the output is
 * written to a temporary file renamed over the target, so a bad input or a
 * crash never leaves a half-merged file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/json_exact.h"
#include "results/results_internal.h"

/* meta.host is {"hostname": ...} as written by lib/report/meta.c; a plain
 * string is accepted too. NULL when the meta has none (a merged file). */
static const char *host_of(const cJSON *meta) {
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(meta, "host");
  return cJSON_IsString(h) ? h->valuestring : mb__json_str(h, "hostname");
}

static cJSON *str_or_null(const char *s) {
  return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* {merged, library, version, git_commit (the first input's), merged_from:
 * [{file, meta}]}. */
static cJSON *merged_meta(mb_results_t *const *sets, size_t count) {
  static const char *const k_first_keys[] = {"library", "version",
                                             "git_commit"};
  cJSON *meta = cJSON_CreateObject();
  if (!meta) return NULL;
  cJSON_AddBoolToObject(meta, "merged", 1);
  for (size_t k = 0; k < sizeof k_first_keys / sizeof k_first_keys[0]; k++) {
    const char *v = mb__json_str(mb__results_meta(sets[0]), k_first_keys[k]);
    if (v) cJSON_AddStringToObject(meta, k_first_keys[k], v);
  }
  cJSON *from = cJSON_AddArrayToObject(meta, "merged_from");
  for (size_t i = 0; from && i < count; i++) {
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "file", mb__results_path(sets[i]));
    cJSON_AddItemToObject(f, "meta",
                          cJSON_Duplicate(mb__results_meta(sets[i]), 1));
    cJSON_AddItemToArray(from, f);
  }
  return meta;
}

/* The union of the inputs' devices. Each is tagged with its input's host
 * first, so the same model on two hosts stays two devices while one host's
 * device listed by two runs is kept once. */
static int add_devices(cJSON *out, const mb_results_t *set) {
  const char *host = host_of(mb__results_meta(set));
  const cJSON *d;
  cJSON_ArrayForEach(d, mb__results_devices(set)) {
    cJSON *c = cJSON_Duplicate(d, 1);
    if (!c) return -1;
    if (host && cJSON_IsObject(c) &&
        !cJSON_GetObjectItemCaseSensitive(c, "host"))
      cJSON_AddStringToObject(c, "host", host);
    const cJSON *have;
    int seen = 0;
    cJSON_ArrayForEach(have, out) seen |= cJSON_Compare(have, c, 1);
    if (seen)
      cJSON_Delete(c);
    else
      cJSON_AddItemToArray(out, c);
  }
  return 0;
}

/* Each result with source {file, host}; one that already has a source (it
 * came from a merged file) keeps it: that names where it really ran. */
static int add_results(cJSON *out, const mb_results_t *set) {
  const char *host = host_of(mb__results_meta(set));
  for (size_t i = 0; i < mb_results_count(set); i++) {
    cJSON *r = cJSON_Duplicate(mb__results_item(set, i), 1);
    if (!r) return -1;
    if (!cJSON_GetObjectItemCaseSensitive(r, "source")) {
      cJSON *src = cJSON_AddObjectToObject(r, "source");
      cJSON_AddStringToObject(src, "file", mb__results_path(set));
      cJSON_AddItemToObject(src, "host", str_or_null(host));
    }
    cJSON_AddItemToArray(out, r);
  }
  return 0;
}

/* A result and where it goes: its name's place in the list asked for, or
 * after them all; its input position breaks ties, so the sort is stable. */
typedef struct placed {
  cJSON *item;
  size_t key, pos;
} placed_t;

static int by_place(const void *a, const void *b) {
  const placed_t *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The results array put in the order of `names` (each result's "name"). */
static int order_results(cJSON *results, const char *const *names,
                         size_t num_names) {
  const size_t n = (size_t)cJSON_GetArraySize(results);
  placed_t *p = calloc(n ? n : 1, sizeof *p);
  if (!p) return -1;
  for (size_t i = 0; i < n; i++) {
    cJSON *r = cJSON_DetachItemFromArray(results, 0);
    const char *name = mb__json_str(r, "name");
    p[i] = (placed_t){r, num_names + i, i};
    for (size_t j = 0; name && j < num_names; j++)
      if (names[j] && !strcmp(name, names[j])) {
        p[i].key = j;
        break;
      }
  }
  qsort(p, n, sizeof *p, by_place);
  for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(results, p[i].item);
  free(p);
  return 0;
}

/* NULL: out of memory. */
static cJSON *merged_document(mb_results_t *const *sets, size_t count,
                              const char *const *names, size_t num_names) {
  cJSON *doc = cJSON_CreateObject();
  if (!doc) return NULL;
  cJSON_AddStringToObject(doc, "schema", MB__RESULTS_SCHEMA);
  cJSON_AddItemToObject(doc, "meta", merged_meta(sets, count));
  cJSON *devices = cJSON_AddArrayToObject(doc, "devices");
  cJSON *results = cJSON_AddArrayToObject(doc, "results");
  int ok = devices && results;
  for (size_t i = 0; ok && i < count; i++)
    ok = add_devices(devices, sets[i]) == 0 &&
         add_results(results, sets[i]) == 0;
  if (ok && names) ok = order_results(results, names, num_names) == 0;
  if (!ok) {
    cJSON_Delete(doc);
    return NULL;
  }
  return doc;
}

static mb_status_t write_atomically(const cJSON *doc, const char *path) {
  char *text = mb__json_print_exact(doc, 1);
  if (!text)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_merge: out of memory");
  mb_status_t st = mb__write_file_atomic(path, text);
  free(text);
  return st;
}

mb_status_t mb_results_merge(const char *const *paths, size_t count,
                             const char *out_path) {
  return mb_results_merge_ordered(paths, count, NULL, 0, out_path);
}

mb_status_t mb_results_merge_ordered(const char *const *paths, size_t count,
                                     const char *const *names, size_t num_names,
                                     const char *out_path) {
  if (!paths || !out_path)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_results_merge: NULL argument");
  if (count == 0)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_results_merge: no input files; give at least one");
  /* Before anything is read: the output must not be an input, and an
   * input given twice would have every result twice. */
  for (size_t i = 0; i < count; i++)
    for (size_t j = 0; paths[i] && j < i; j++)
      if (paths[j] && mb__same_file(paths[i], paths[j]))
        return mb__fail(MB_ERR_INVALID_ARG,
                        "input %zu (%s) is the same file as input %zu (%s): "
                        "its results would be there twice",
                        i + 1, paths[i], j + 1, paths[j]);
  mb_status_t st = mb__output_not_input(out_path, paths, count);
  if (st != MB_OK) return st;
  mb_results_t **sets = calloc(count, sizeof *sets);
  if (!sets)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_results_merge: out of memory");
  for (size_t i = 0; st == MB_OK && i < count; i++)
    st = paths[i] ? mb_results_load(paths[i], &sets[i])
                  : mb__fail(MB_ERR_INVALID_ARG,
                             "mb_results_merge: paths[%zu] is NULL", i);
  if (st == MB_OK) {
    cJSON *doc = merged_document(sets, count, names, num_names);
    st = doc ? write_atomically(doc, out_path)
             : mb__fail(MB_ERR_NO_MEMORY, "mb_results_merge: out of memory");
    cJSON_Delete(doc);
  }
  for (size_t i = 0; i < count; i++) mb_results_destroy(sets[i]);
  free(sets);
  return st;
}
