/* The schema readers' shared vocabulary: error wording, paths, typed reads
 * of scalar nodes, key checks, and the tree as JSON for records. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_build.h"

mb_status_t mb__pb_error(const mb__pb_t *pb, const mb_cfg_node_t *at,
                         const char *path, const char *fmt, ...) {
  /* Formatted first: an argument may be mb_error_last(), which the call to
   * mb__fail below overwrites. */
  char msg[2048], where[64] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (at && at->line > 0) snprintf(where, sizeof where, ":%d", at->line);
  return mb__fail(MB_ERR_PARSE, "%s%s: %s%s%s", pb->file, where,
                  path && *path ? path : "", path && *path ? ": " : "", msg);
}

void mb__path_index(char *buf, size_t cap, const char *parent, size_t i) {
  snprintf(buf, cap, "%s[%zu]", parent ? parent : "", i);
}

void mb__path_key(char *buf, size_t cap, const char *parent, const char *key) {
  snprintf(buf, cap, "%s%s%s", parent ? parent : "",
           parent && *parent ? "." : "", key);
}

static mb_status_t wrong_type(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, const char *want) {
  if (n->text && (n->kind == MB_CFG_STRING || n->kind == MB_CFG_NUMBER ||
                  n->kind == MB_CFG_BOOL))
    return mb__pb_error(pb, n, path, "expected %s, got %s \"%s\"", want,
                        mb__cfg_kind_name(n->kind), n->text);
  return mb__pb_error(pb, n, path, "expected %s, got a %s", want,
                      mb__cfg_kind_name(n->kind));
}

mb_status_t mb__pb_string(const mb__pb_t *pb, const mb_cfg_node_t *n,
                          const char *path, const char **out) {
  if (n->kind != MB_CFG_STRING || !n->text)
    return wrong_type(pb, n, path, "a string");
  *out = n->text;
  return MB_OK;
}

mb_status_t mb__pb_number(const mb__pb_t *pb, const mb_cfg_node_t *n,
                          const char *path, double *out) {
  if (n->kind != MB_CFG_NUMBER || !isfinite(n->number))
    return wrong_type(pb, n, path, "a number");
  *out = n->number;
  return MB_OK;
}

mb_status_t mb__pb_int(const mb__pb_t *pb, const mb_cfg_node_t *n,
                       const char *path, int64_t lo, int64_t hi, int64_t *out) {
  if (n->kind != MB_CFG_NUMBER || !isfinite(n->number) ||
      n->number != floor(n->number))
    return wrong_type(pb, n, path, "an integer");
  if (n->number < (double)lo || n->number > (double)hi)
    return mb__pb_error(pb, n, path,
                        "%s is out of range; valid: %" PRId64 " to %" PRId64,
                        n->text ? n->text : "the value", lo, hi);
  *out = (int64_t)n->number;
  return MB_OK;
}

mb_status_t mb__pb_bool(const mb__pb_t *pb, const mb_cfg_node_t *n,
                        const char *path, int *out) {
  if (n->kind != MB_CFG_BOOL) return wrong_type(pb, n, path, "true or false");
  *out = n->boolean;
  return MB_OK;
}

mb_status_t mb__pb_check_keys(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, const char *const *known) {
  if (n->kind != MB_CFG_MAP) return wrong_type(pb, n, path, "a map");
  for (size_t i = 0; i < n->count; i++) {
    size_t k = 0;
    while (known[k] && strcmp(known[k], n->keys[i]) != 0) k++;
    if (known[k]) continue;
    char valid[1024] = "";
    size_t len = 0;
    for (k = 0; known[k] && len < sizeof valid; k++) {
      int w = snprintf(valid + len, sizeof valid - len, "%s%s", k ? ", " : "",
                       known[k]);
      if (w < 0) break;
      len += (size_t)w;
    }
    char here[512];
    mb__path_key(here, sizeof here, path, n->keys[i]);
    /* The key's own line: a block value starts on a later one. */
    mb_cfg_node_t at = *n->items[i];
    if (at.key_line > 0) at.line = at.key_line;
    return mb__pb_error(pb, &at, here, "unknown key \"%s\"; valid: %s",
                        n->keys[i], valid);
  }
  return MB_OK;
}

cJSON *mb__cfg_to_cjson(const mb_cfg_node_t *n) {
  cJSON *j = NULL;
  switch (n->kind) {
    case MB_CFG_NULL:
      return cJSON_CreateNull();
    case MB_CFG_BOOL:
      return cJSON_CreateBool(n->boolean);
    case MB_CFG_NUMBER:
      return isfinite(n->number) ? cJSON_CreateNumber(n->number)
                                 : cJSON_CreateString(n->text ? n->text : "");
    case MB_CFG_STRING:
      return cJSON_CreateString(n->text ? n->text : "");
    case MB_CFG_LIST:
      j = cJSON_CreateArray();
      break;
    case MB_CFG_MAP:
      j = cJSON_CreateObject();
      break;
  }
  for (size_t i = 0; j && i < n->count; i++) {
    cJSON *c = mb__cfg_to_cjson(n->items[i]);
    if (!c) {
      cJSON_Delete(j);
      return NULL;
    }
    if (n->kind == MB_CFG_MAP)
      cJSON_AddItemToObject(j, n->keys[i], c);
    else
      cJSON_AddItemToArray(j, c);
  }
  return j;
}
