/* Internal: a loaded results file, shared by load.c, merge.c and compare.c.
 * Every format is read into one cJSON document shaped like the JSON report
 * ({schema, meta, devices, results[]}), whatever the file held, so merge and
 * compare never care whether it was a document or a stream. */
#ifndef MB_LIB_RESULTS_RESULTS_INTERNAL_H
#define MB_LIB_RESULTS_RESULTS_INTERNAL_H

#include <cjson/cJSON.h>

#include "internal.h"

#define MB__RESULTS_SCHEMA "microbench.results/1"

struct mb_results {
  char *path;
  cJSON *doc;    /* {schema, meta, devices, results[]}; meta and devices
                    are always present (empty when the file had none) */
  cJSON **items; /* the result objects, views into doc.results */
  char **json;   /* mb_results_json's cache, one per item; NULL until asked */
  size_t count;
  char note[512]; /* mb_results_note: "" or what reading dropped */
};

/* The result objects and the document parts (owned by the set). */
const cJSON *mb__results_item(const mb_results_t *set, size_t index);
const cJSON *mb__results_meta(const mb_results_t *set);
const cJSON *mb__results_devices(const mb_results_t *set);
const char *mb__results_path(const mb_results_t *set);

/* The caller's compare options (NULL: MB_COMPARE_OPTIONS_INIT) read into
 * *out and checked; errors start with `fn`. mb_results_compare's and
 * mb_report_html's one reading of them. */
mb_status_t mb__compare_options_in(const char *fn,
                                   const mb_compare_options_t *given,
                                   mb_compare_options_t *out);

/* A string member, or NULL when absent or not a string. */
const char *mb__json_str(const cJSON *obj, const char *key);
/* A number member, or NAN when absent, null or not a number. */
double mb__json_num(const cJSON *obj, const char *key);

#endif
