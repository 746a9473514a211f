/* Internal: typed reads of a result's JSON (result_read.c), shared by the
 * reader of a result's identity (result_parse.c) and of its measurement
 * (result_parse_measure.c). Every error is MB_ERR_PARSE and names the
 * field's path: "result JSON: stats.median_ns: expected a number, got a
 * string". */
#ifndef MB_LIB_RESULTS_RESULT_READ_H
#define MB_LIB_RESULTS_RESULT_READ_H

#include <cjson/cJSON.h>

#include "results/result.h"
#include "results/result_fields.h"

#define MB__COUNT(a) (sizeof(a) / sizeof *(a))

/* "result JSON: <path>: <message>" as MB_ERR_PARSE. */
mb_status_t mb__rj_bad(const char *path, const char *fmt, ...) MB__FMT(2, 3);
/* A library parser's error (unknown dtype, ...) as a parse error at path. */
mb_status_t mb__rj_wrap(mb_status_t st, const char *path);
/* "a string", "a number", ... for messages. */
const char *mb__rj_type_name(const cJSON *v);

typedef enum mb__rj_kind {
  MB__RJ_NUM,
  MB__RJ_U32,
  MB__RJ_U64,
  MB__RJ_BOOL,
  MB__RJ_STR
} mb__rj_kind_t;

/* Stores into *out as the kind says: double, uint32_t, uint64_t, int (0/1),
 * const char * (borrowed from the JSON). flags: MB__FIELD_OPT (may be
 * missing: added to the writer later), MB__NULL_INF (null is +inf). */
mb_status_t mb__rj_item(const cJSON *v, const char *path, mb__rj_kind_t kind,
                        unsigned flags, void *out);
/* o.key, where o is `block` ("" at the top). A missing o has no keys. */
mb_status_t mb__rj_value(const cJSON *o, const char *block, const char *key,
                         mb__rj_kind_t kind, unsigned flags, void *out);
/* A block the writer always emits as an object; NULL when missing. */
mb_status_t mb__rj_block(const cJSON *root, const char *key, const cJSON **out);
/* An array (NULL when missing and MB__FIELD_OPT) and its length. */
mb_status_t mb__rj_array(const cJSON *o, const char *block, const char *key,
                         unsigned flags, const cJSON **out, size_t *n);

/* A block's fields into a struct (or the result) at their offsets. */
typedef struct mb__rj_field {
  const char *key;
  size_t off;
  mb__rj_kind_t kind;
  unsigned flags;
} mb__rj_field_t;
mb_status_t mb__rj_fields(const cJSON *o, const char *block, void *base,
                          const mb__rj_field_t *f, size_t n);

/* Every block after the identity (timing, correctness, samples, stats,
 * repetitions, derived, model, notes, plan, texts), in the order each
 * needs (result_parse_measure.c). */
mb_status_t mb__rj_measurement(const cJSON *root, mb_result_t *r);
/* The result's status: one of ok, skipped, failed. */
mb_status_t mb__rj_status(const cJSON *root, mb_result_status_t *out);
/* Its times: stats.{min,median,mean,max,iqr}_ns and every samples_ns[i]
 * numbers, none negative. */
mb_status_t mb__rj_times(const cJSON *root);

#endif
