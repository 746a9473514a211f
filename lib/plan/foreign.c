/* The foreign readers' shared records: ignored keys with their one note,
 * the per-entry `config` object, and CSV file paths. */
#include <stdio.h>
#include <string.h>

#include "plan/foreign.h"

static mb_status_t no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
}

mb_status_t mb__foreign_ignore(mb__pb_t *pb, cJSON **ignored, const char *key,
                               const mb_cfg_node_t *value, const char *why) {
  if (!*ignored && !(*ignored = cJSON_CreateObject())) return no_memory();
  cJSON *v = mb__cfg_to_cjson(value);
  if (!v) return no_memory();
  cJSON_DeleteItemFromObject(*ignored, key); /* keep one per key */
  cJSON_AddItemToObject(*ignored, key, v);
  return mb__plan_note(pb, "%s: `%s` %s", pb->file, key, why);
}

cJSON *mb__foreign_config(const mb__pb_t *pb, const char *schema,
                          const char *benchmark,
                          const mb__foreign_extra_t *extras, size_t count) {
  cJSON *o = cJSON_CreateObject();
  int ok = o && cJSON_AddStringToObject(o, "file", pb->file) &&
           cJSON_AddStringToObject(o, "schema", schema) &&
           cJSON_AddStringToObject(o, "benchmark", benchmark);
  for (size_t i = 0; ok && i < count; i++) {
    if (!extras[i].obj) continue;
    cJSON *copy = cJSON_Duplicate(extras[i].obj, 1);
    ok = copy != NULL;
    if (ok) cJSON_AddItemToObject(o, extras[i].key, copy);
  }
  if (ok) return o;
  cJSON_Delete(o);
  no_memory();
  return NULL;
}

mb_status_t mb__foreign_join(const mb__pb_t *pb, const mb_cfg_node_t *at,
                             const char *path, const char *dir,
                             const char *file, char *out, size_t cap) {
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/') len--;
  const char *sep = !len || dir[len - 1] == '/' ? "" : "/";
  int w = snprintf(out, cap, "%.*s%s%s", (int)len, dir, sep, file);
  if (w < 0 || (size_t)w >= cap)
    return mb__pb_error(pb, at, path,
                        "the path \"%s%s%s\" is too long (%zu "
                        "bytes at most)",
                        dir, sep, file, cap - 1);
  return MB_OK;
}
