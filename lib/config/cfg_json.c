/* JSON into the config tree, through cJSON. cJSON keeps no positions, so
 * only a syntax error gets a line (counted up to where cJSON stopped);
 * later errors name the path inside the document instead. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "config/cfg_tree.h"

static int line_of(const char *text, const char *at) {
  int line = 1;
  for (const char *p = text; p < at && *p; p++) line += *p == '\n';
  return line;
}

static mb_cfg_node_t *convert(const cJSON *j, mb_status_t *st) {
  mb_cfg_node_t *n = NULL;
  if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
    n = mb__cfg_new(cJSON_IsObject(j) ? MB_CFG_MAP : MB_CFG_LIST, 0, NULL);
    mb__cfg_keyset_t ks = {0};
    for (const cJSON *c = j->child; n && c && *st == MB_OK; c = c->next) {
      int dup = 0;
      if (cJSON_IsObject(j) &&
          (*st = mb__cfg_keyset_add(&ks, n, c->string, &dup)) == MB_OK && dup)
        *st = mb__fail(MB_ERR_PARSE, "key \"%s\" appears twice", c->string);
      mb_cfg_node_t *child = *st == MB_OK ? convert(c, st) : NULL;
      if (*st != MB_OK) break;
      *st = mb__cfg_append(n, cJSON_IsObject(j) ? c->string : NULL, child);
    }
    mb__cfg_keyset_free(&ks);
  } else if (cJSON_IsString(j)) {
    n = mb__cfg_new(MB_CFG_STRING, 0, j->valuestring);
  } else if (cJSON_IsNumber(j)) {
    if ((n = mb__cfg_new(MB_CFG_NUMBER, 0, NULL))) {
      n->number = j->valuedouble;
      char *t = cJSON_PrintUnformatted(j);
      n->text = t ? strdup(t) : NULL;
      cJSON_free(t);
      if (!n->text) {
        mb__cfg_free(n);
        n = NULL;
      }
    }
  } else if (cJSON_IsBool(j)) {
    if ((n = mb__cfg_new(MB_CFG_BOOL, 0, cJSON_IsTrue(j) ? "true" : "false")))
      n->boolean = cJSON_IsTrue(j);
  } else {
    n = mb__cfg_new(MB_CFG_NULL, 0, "null");
  }
  if (!n && *st == MB_OK)
    *st = mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
  if (*st != MB_OK) {
    mb__cfg_free(n);
    return NULL;
  }
  return n;
}

mb_status_t mb__cfg_parse_json(const char *text, const char *name,
                               mb_cfg_node_t **out) {
  *out = NULL;
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
  if (!j) {
    const char *at = end ? end : cJSON_GetErrorPtr();
    return mb__fail(MB_ERR_PARSE, "%s:%d: invalid JSON near \"%.20s\"", name,
                    at ? line_of(text, at) : 0, at ? at : "");
  }
  mb_status_t st = MB_OK;
  mb_cfg_node_t *n = convert(j, &st);
  cJSON_Delete(j);
  if (st != MB_OK) {
    mb__error_prefix("%s", name);
    return st;
  }
  *out = n;
  return MB_OK;
}
