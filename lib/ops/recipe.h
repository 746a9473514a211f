/* The quantization recipes' rows (recipe.c): what a recipe quantizes and
 * how. The models' graph builders (models/layer_graph.c) read them. */
#ifndef MB_LIB_OPS_RECIPE_H
#define MB_LIB_OPS_RECIPE_H

#include "internal.h"
#include "microbench/model.h"
#include "ops/sparse.h"

/* How a recipe's weights are quantized: op quantize (symmetric, absmax
 * round-to-nearest) in a setup step, or HQQ's solver on the host
 * (models/hqq_step.c: unsigned with zero points). */
typedef enum mb__wprep { MB__WPREP_RTN = 0, MB__WPREP_HQQ } mb__wprep_t;

typedef struct mb__recipe_row {
  const char *name, *summary;
  mb_dtype_t wq;        /* weights' dtype; NONE: high precision */
  mb_scaling_t w_scale; /* on W as the GEMM's B operand */
  mb_dtype_t aq;        /* activations' dtype; NONE: weight-only */
  mb_scaling_t a_scale; /* on X as the GEMM's A operand */
  int dequant;          /* weights dequantized to hp before an hp GEMM */
  double min_sqnr_db;   /* see mb_recipe_min_sqnr_db */
  mb__wprep_t prep;
  const char *kernel_note; /* the result's "kernel" note; NULL: none */
  /* torchao's sparsity: W pruned in setup; with hp weights a sparse GEMM
   * runs, with quantized ones (int8dq, float8dq-*) the dense quantized
   * GEMM on the pruned weights. */
  mb__sparsity_t sparsity;
} mb__recipe_row_t;

/* The row of recipe r; NULL when r is not a recipe. */
const mb__recipe_row_t *mb__recipe_row(mb_recipe_t r);

#endif
