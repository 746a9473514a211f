/* Internal: torchao's recipe lists (torchao_recipes.c) —
 * quantization_config_recipe_names and sparsity_config_recipe_names,
 * paired as torchao's runner pairs them, for schema_torchao.c. */
#ifndef MB_LIB_PLAN_TORCHAO_RECIPES_H
#define MB_LIB_PLAN_TORCHAO_RECIPES_H

#include "plan/plan_build.h"

/* One (quantization, sparsity) pair of the file and our recipe for it. */
typedef struct mb__torchao_combo {
  const char *recipe;   /* ours: "int8dq-semi-sparse" */
  const char *quant;    /* torchao's quantization: "int8dq" */
  const char *sparsity; /* as the file wrote it; NULL: none */
} mb__torchao_combo_t;

typedef struct mb__torchao_recipes {
  const char **recipes; /* baseline first, no repeats */
  size_t num_recipes;
  int listed_baseline; /* the file names baseline (torchao pairs 2:4 then) */
  mb__torchao_combo_t *combos; /* the recipes, then the sparsity pairs */
  size_t num_combos;
} mb__torchao_recipes_t;

/* Reads both keys of pb's root into *f (zeroed by the caller). */
mb_status_t mb__torchao_read_recipes(mb__pb_t *pb, mb__torchao_recipes_t *f);
void mb__torchao_recipes_free(mb__torchao_recipes_t *f);

#endif
