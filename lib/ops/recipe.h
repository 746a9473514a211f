/* The quantization recipes' rows (recipe.c): what a recipe quantizes and
 * how. The models' graph builders (models/layer_graph.c) read them. */
#ifndef MB_LIB_OPS_RECIPE_H
#define MB_LIB_OPS_RECIPE_H

#include "internal.h"
#include "microbench/model.h"

typedef struct mb__recipe_row {
  const char *name, *summary;
  mb_dtype_t wq;        /* weights' dtype; NONE: high precision */
  mb_scaling_t w_scale; /* on W as the GEMM's B operand */
  mb_dtype_t aq;        /* activations' dtype; NONE: weight-only */
  mb_scaling_t a_scale; /* on X as the GEMM's A operand */
  int dequant;          /* weights dequantized to hp before an hp GEMM */
  double min_sqnr_db;   /* see mb_recipe_min_sqnr_db */
} mb__recipe_row_t;

/* The row of recipe r; NULL when r is not a recipe. */
const mb__recipe_row_t *mb__recipe_row(mb_recipe_t r);

#endif
