/* Internal: what the composite ops (linear.c, ln_linear.c,
 * transformer_block.c, moe_layer_proxy.c) share: resolving a model's params,
 * its FLOP and byte models from its graph, input distributions, and the pieces
 * of the high-precision reference (the model in double, no quantization). */
#ifndef MB_LIB_MODELS_MODEL_OPS_H
#define MB_LIB_MODELS_MODEL_OPS_H

#include "models/graph.h"

/* The model ops (catalogue.c lists them with the primitives). */
extern const mb_op_t mb__op_linear;
extern const mb_op_t mb__op_linear_training;
extern const mb_op_t mb__op_ln_linear;
extern const mb_op_t mb__op_transformer_block;
extern const mb_op_t mb__op_moe_layer_proxy;

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
/* Element `first` onward of host operand `src` (dtype dt: 16 or 32 bits),
 * `count` of them, as f32 into dst. */
void mb__model_load_at(float *dst, const void *src, mb_dtype_t dt, size_t first,
                       size_t count);
/* out[rows, n] = in[rows, kin] . W[kin, n] in double, W (host, dtype dt)
 * converted one row at a time into `wrow` (n floats) so it streams once
 * for all the rows; mag (NULL: not wanted) gets sum |in W| per element. */
void mb__model_matmul_rows(const double *in, int64_t rows, int64_t kin,
                           const void *w, mb_dtype_t dt, int64_t n, float *wrow,
                           double *out, double *mag);
/* sum a[i] b[i] in double, and sum |a[i] b[i]|. */
double mb__model_dot(const float *a, const float *b, int64_t n, double *mag);

#endif
