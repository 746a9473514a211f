/* Typed reads of a result's JSON (result_read.h): each checks the JSON
 * type, the range of counts, and says which field was wrong. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "results/result_read.h"

/* ---- errors -------------------------------------------------------------- */

mb_status_t mb__rj_bad(const char *path, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mb__fail(MB_ERR_PARSE, "result JSON: %s: %s", path, msg);
}

/* A library parser's error (unknown dtype, ...) as a parse error at path. */
mb_status_t mb__rj_wrap(mb_status_t st, const char *path) {
  if (st == MB_OK) return MB_OK;
  mb__error_prefix("result JSON: %s", path);
  return MB_ERR_PARSE;
}

const char *mb__rj_type_name(const cJSON *v) {
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsArray(v)) return "an array";
  return "an object";
}

/* ---- typed reads ----------------------------------------------------------
 */

/* Stores into *out as the kind says: double, uint32_t, uint64_t, int (0/1),
 * const char * (borrowed from the JSON). */
mb_status_t mb__rj_item(const cJSON *v, const char *path, mb__rj_kind_t kind,
                        unsigned flags, void *out) {
  switch (kind) {
    case MB__RJ_STR:
      if (!cJSON_IsString(v))
        return mb__rj_bad(path, "expected a string, got %s",
                          mb__rj_type_name(v));
      *(const char **)out = v->valuestring;
      return MB_OK;
    case MB__RJ_BOOL:
      if (!cJSON_IsBool(v))
        return mb__rj_bad(path, "expected true or false, got %s",
                          mb__rj_type_name(v));
      *(int *)out = cJSON_IsTrue(v);
      return MB_OK;
    case MB__RJ_NUM:
      /* The writer's null is a value JSON cannot hold: inf or NaN. */
      if (cJSON_IsNull(v)) {
        *(double *)out = (flags & MB__NULL_INF) ? INFINITY : NAN;
        return MB_OK;
      }
      if (!cJSON_IsNumber(v))
        return mb__rj_bad(path, "expected a number, got %s",
                          mb__rj_type_name(v));
      *(double *)out = v->valuedouble;
      return MB_OK;
    case MB__RJ_U32:
    case MB__RJ_U64: {
      /* Counts are written as JSON numbers: exact up to 2^53. */
      const double top =
          kind == MB__RJ_U32 ? 4294967296.0 : 18446744073709551616.0;
      double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
      if (!(d >= 0 && d < top && d == floor(d)))
        return cJSON_IsNumber(v)
                   ? mb__rj_bad(path,
                                "expected an integer in 0 .. %.0f, got %.17g",
                                top - 1, d)
                   : mb__rj_bad(path, "expected an integer, got %s",
                                mb__rj_type_name(v));
      if (kind == MB__RJ_U32)
        *(uint32_t *)out = (uint32_t)d;
      else
        *(uint64_t *)out = (uint64_t)d;
      return MB_OK;
    }
  }
  return mb__rj_bad(path, "internal: unknown kind");
}

/* o.key, where o is `block` ("" at the top). A missing o has no keys. */
mb_status_t mb__rj_value(const cJSON *o, const char *block, const char *key,
                         mb__rj_kind_t kind, unsigned flags, void *out) {
  char path[160];
  snprintf(path, sizeof path, "%s%s%s", block, *block ? "." : "", key);
  const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
  if (v) return mb__rj_item(v, path, kind, flags, out);
  return (flags & MB__FIELD_OPT) ? MB_OK : mb__rj_bad(path, "missing");
}

/* A block the writer always emits as an object; NULL when missing. */
mb_status_t mb__rj_block(const cJSON *root, const char *key,
                         const cJSON **out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
  *out = NULL;
  if (v && !cJSON_IsObject(v))
    return mb__rj_bad(key, "expected an object, got %s", mb__rj_type_name(v));
  *out = v;
  return MB_OK;
}

/* An array (NULL when missing and MB__FIELD_OPT) and its length. */
mb_status_t mb__rj_array(const cJSON *o, const char *block, const char *key,
                         unsigned flags, const cJSON **out, size_t *n) {
  char path[160];
  snprintf(path, sizeof path, "%s%s%s", block, *block ? "." : "", key);
  const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
  *out = NULL;
  *n = 0;
  if (!v) return (flags & MB__FIELD_OPT) ? MB_OK : mb__rj_bad(path, "missing");
  if (!cJSON_IsArray(v))
    return mb__rj_bad(path, "expected an array, got %s", mb__rj_type_name(v));
  *out = v;
  *n = (size_t)cJSON_GetArraySize(v);
  return MB_OK;
}

mb_status_t mb__rj_fields(const cJSON *o, const char *block, void *base,
                          const mb__rj_field_t *f, size_t n) {
  mb_status_t st = MB_OK;
  for (size_t i = 0; i < n && st == MB_OK; i++)
    st = mb__rj_value(o, block, f[i].key, f[i].kind, f[i].flags,
                      (char *)base + f[i].off);
  return st;
}
