/* Internal: what the two foreign readers (torchao's schema and the JAX
 * suite's) share: keys accepted for compatibility but without effect here,
 * the `config` record each entry carries, and where a block's CSV goes. */
#ifndef MB_LIB_PLAN_FOREIGN_H
#define MB_LIB_PLAN_FOREIGN_H

#include "plan/plan_build.h"

/* Records `key` -> `value` in *ignored (an object, created on first use;
 * the caller owns it) and notes once per key "FILE: `KEY` WHY". */
mb_status_t mb__foreign_ignore(mb__pb_t *pb, cJSON **ignored, const char *key,
                               const mb_cfg_node_t *value, const char *why);

/* {"file", "schema", "benchmark"} plus copies of the objects in `extras`
 * under their names (an entry with a NULL object is left out), e.g.
 * {"ignored", obj}. NULL on out of memory (the message is set). */
typedef struct mb__foreign_extra {
  const char *key;
  const cJSON *obj;
} mb__foreign_extra_t;
cJSON *mb__foreign_config(const mb__pb_t *pb, const char *schema,
                          const char *benchmark,
                          const mb__foreign_extra_t *extras, size_t count);

/* out = "DIR/FILE" with exactly one slash between; DIR's trailing slashes
 * dropped ("/" stays the root). MB_ERR_PARSE at at/path when it does not
 * fit in cap bytes. */
mb_status_t mb__foreign_join(const mb__pb_t *pb, const mb_cfg_node_t *at,
                             const char *path, const char *dir,
                             const char *file, char *out, size_t cap);

#endif
