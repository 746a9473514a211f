/* Internal: aliases (the predecessors' op names) with parameter presets. */
#ifndef MB_LIB_ALIAS_H
#define MB_LIB_ALIAS_H

#include "microbench/op.h"

typedef struct mb__alias {
  const char *name;
  const char *op;
  void (*preset)(mb_op_params_t *p); /* NULL: a plain synonym */
  const char *summary;
} mb__alias_t;

const mb__alias_t *mb__alias_find(const char *name);

#endif
