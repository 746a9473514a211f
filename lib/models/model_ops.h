/* Internal: what the composite ops (linear.c, ln_linear.c,
 * transformer_block.c) share: resolving a model's params, its FLOP and
 * byte models from its graph, input distributions, and the pieces of the
 * high-precision reference (the model in double, no quantization). */
#ifndef MB_LIB_MODELS_MODEL_OPS_H
#define MB_LIB_MODELS_MODEL_OPS_H

#include "models/graph.h"

/* The model ops (catalogue.c lists them with the primitives). */
extern const mb_op_t mb__op_linear;
extern const mb_op_t mb__op_linear_training;
extern const mb_op_t mb__op_ln_linear;
extern const mb_op_t mb__op_transformer_block;

/* The torchao model name a composite op runs ("linear", "ln_linear_gelu")
 * for a result's model field (model_list.c). */
void mb__model_label(const mb_op_t *op, const mb_op_params_t *p, char *buf,
                     size_t cap);

/* Shape checked by the caller (mb_op_resolve). Defaults: bf16 (torchao's
 * high-precision dtype), every operand in it, f32 accumulation. Checks the
 * dtype (f32, bf16, f16), the recipe, `training` recipes, then composes the
 * graph so a recipe the shape cannot take (a 1x128 block on K = 96) is an
 * error here, naming the step. */
mb_status_t mb__model_resolve(const mb_op_t *op, mb_op_params_t *p,
                              int training);
/* FLOP: the baseline graph's (so every recipe of a model shares one FLOP
 * count and TFLOP/s compare); bytes: this recipe's graph (quantized
 * weights move fewer bytes, intermediates are written and read). */
double mb__model_flop(const mb_op_t *op, const mb_op_params_t *p);
double mb__model_bytes(const mb_op_t *op, const mb_op_params_t *p);
/* Weights ~ normal(0, 1/sqrt(fan_in)) (outputs stay ~unit variance, as
 * torch's initialisation keeps them); norm weights ~ normal(1, 0.1), biases
 * ~ normal(0, 0.1); activations and gradients normal(0, 1). */
void mb__model_fill_weight(int64_t fan_in, mb_fill_t *f);
void mb__model_fill_norm(int is_bias, mb_fill_t *f);
/* The composites' reference tolerance: a loose bound (4 ulps of the hp
 * dtype relative to the output's magnitude). Whether a composite is right
 * is decided by its steps' checks and its accuracy floor, not by this. */
mb__tolerance_t mb__model_tolerance(const mb_op_params_t *p, uint32_t out);

/* Reference helpers: host operand `src` (dtype, count) as f32, malloc'd
 * (NULL on OOM); transposed: rows x cols in, cols x rows out. */
float *mb__model_load(const void *src, mb_dtype_t dtype, size_t count);
float *mb__model_load_t(const void *src, mb_dtype_t dtype, int64_t rows,
                        int64_t cols);
/* sum a[i] b[i] in double, and sum |a[i] b[i]|. */
double mb__model_dot(const float *a, const float *b, int64_t n, double *mag);

#endif
