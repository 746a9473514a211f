/* activation: Y[M,N] = act(X), act = params.activation; and
 * silu_mul (swiglu): Z[M,N] = silu(X) * Y.
 * f32, bf16, f16, f8e4m3, f8e5m2 in; out in the input's dtype, or for fp8
 * inputs f32, bf16 or f16 if chosen (eltwise.h's rule); computed in f32 on
 * the exactly decoded inputs and rounded once.
 * FLOP: per element, per function (table below); silu_mul = silu + 1.
 * Bytes: activation |X| + |Y|; silu_mul |X| + |Y| + |Z| (fp8: 1 byte). */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

/* The functions in double, written without cancellation (gelu as
 * x * sigmoid / x * erfc / 2) so the reference is exact to ~1e-16 of |x|. */
static double act_relu(double x, double a) {
  (void)a;
  return x > 0 ? x : 0.0;
}
static double act_gelu_tanh(double x, double a) {
  /* 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = sqrt(2/pi)(x + 0.044715x^3)
   */
  const double k = 0.79788456080286535588; /* sqrt(2/pi) */
  (void)a;
  return x / (1.0 + exp(-2.0 * k * (x + 0.044715 * x * x * x)));
}
static double act_gelu_erf(double x, double a) {
  (void)a;
  return 0.5 * x * erfc(-x * 0.70710678118654752440);
}
static double act_silu(double x, double a) {
  (void)a;
  return x / (1.0 + exp(-x));
}
static double act_sigmoid(double x, double a) {
  (void)a;
  return 1.0 / (1.0 + exp(-x));
}
static double act_leakyrelu(double x, double a) {
  return x > 0 ? x : a * x;
}
static double act_relu6(double x, double a) {
  (void)a;
  return x < 0 ? 0.0 : x > 6 ? 6.0 : x;
}
static double act_hardswish(double x, double a) {
  return x * act_relu6(x + 3.0, a) / 6.0;
}

/* One row per function:
 * - flop: operations per element, a transcendental (exp, tanh, erf) or a
 *   compare-and-select counting as one: relu max; gelu_tanh x^2, *0.044715,
 *   +1, *x, *sqrt(2/pi), tanh, +1, *x, *0.5; gelu_erf *(1/sqrt2), erf, +1,
 *   *x, *0.5; silu and sigmoid -x, exp, +1, divide; leakyrelu select and
 *   multiply; relu6 max, min; hardswish +3, max, min, *x, /6.
 * - err: the f32 computation's error in units of u(f32), relative to the
 *   scale: one unit per rounding of the textbook formula plus 4 per
 *   transcendental (vectorised exp/tanh/erf approximations, oneDNN's
 *   included, are accurate to a few ulp); relu and relu6 are exact;
 *   leakyrelu rounds its slope to f32 and the product.
 * - scale: max(|x|, |y|): |y| for what is computed relative to itself,
 *   |x| for where the result cancels (1 + tanh(z) for z << 0 is computed to
 *   ~u absolute, times 0.5|x|); |y| <= |x| except for sigmoid and a
 *   leakyrelu slope above 1. Sigmoid is a quotient of positive terms,
 *   accurate relative to |y| alone. */
typedef struct act_info {
  double (*fn)(double x, double alpha);
  double flop;
  double err;
  int scale_is_y;
} act_info_t;

static const act_info_t k_act[MB_ACT_COUNT] = {
    [MB_ACT_RELU] = {act_relu, 1, 0, 0},
    [MB_ACT_GELU_TANH] = {act_gelu_tanh, 9, 12, 0},
    [MB_ACT_GELU_ERF] = {act_gelu_erf, 5, 8, 0},
    [MB_ACT_SILU] = {act_silu, 4, 7, 0},
    [MB_ACT_SIGMOID] = {act_sigmoid, 4, 7, 1},
    [MB_ACT_LEAKYRELU] = {act_leakyrelu, 2, 2, 0},
    [MB_ACT_RELU6] = {act_relu6, 2, 0, 0},
    [MB_ACT_HARDSWISH] = {act_hardswish, 5, 4, 0},
};

double mb__act_eval(mb_activation_t act, double x, double alpha) {
  return k_act[act].fn(x, alpha);
}

/* silu_mul: silu's error (relative to |x|) times |y|, plus the product's
 * rounding: relative to |x y|. */
#define SILU_MUL_FLOP 5.0
#define SILU_MUL_ERR 8.0

static mb_status_t check_activation(const mb_op_params_t *p) {
  if ((unsigned)p->activation >= MB_ACT_COUNT)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "activation: activation %d is not valid; valid: relu, "
                    "gelu_tanh, gelu_erf, silu, sigmoid, leakyrelu, relu6, "
                    "hardswish",
                    (int)p->activation);
  if (p->activation == MB_ACT_LEAKYRELU && !isfinite(p->act_alpha))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "activation: act_alpha (the leakyrelu slope) must be "
                    "finite (got %g)",
                    p->act_alpha);
  return MB_OK;
}

static mb_status_t activation_resolve(mb_op_params_t *p) {
  mb_status_t st = mb__elt_resolve_fp8_dtypes(&mb__op_activation, p, 0);
  if (st == MB_OK)
    st = mb__elt_check_numel(&mb__op_activation, "X", mb__elt_mn(p));
  return st == MB_OK ? check_activation(p) : st;
}

static mb_status_t silu_mul_resolve(mb_op_params_t *p) {
  mb_status_t st = mb__elt_resolve_fp8_dtypes(&mb__op_silu_mul, p, 0);
  if (st == MB_OK)
    st = mb__elt_check_numel(&mb__op_silu_mul, "X", mb__elt_mn(p));
  return st;
}

/* Every operand is M x N: the inputs of dtype, the output (the last role)
 * of dtype_out. */
static void act_operand(const mb_op_t *op, const mb_op_params_t *p,
                        uint32_t role, mb_dtype_t *dtype, uint32_t *ndim,
                        int64_t *shape) {
  mb__elt_operand_mn(p, role < op->num_inputs ? p->dtype : p->dtype_out, dtype,
                     ndim, shape);
}
static void activation_operand(const mb_op_params_t *p, uint32_t role,
                               mb_dtype_t *dtype, uint32_t *ndim,
                               int64_t *shape) {
  act_operand(&mb__op_activation, p, role, dtype, ndim, shape);
}
static void silu_mul_operand(const mb_op_params_t *p, uint32_t role,
                             mb_dtype_t *dtype, uint32_t *ndim,
                             int64_t *shape) {
  act_operand(&mb__op_silu_mul, p, role, dtype, ndim, shape);
}

static double activation_flop(const mb_op_params_t *p) {
  return k_act[p->activation].flop * mb__elt_mn(p);
}
static double activation_bytes(const mb_op_params_t *p) {
  return mb__bytes(p->dtype, mb__elt_mn(p)) +
         mb__bytes(p->dtype_out, mb__elt_mn(p));
}
static double silu_mul_flop(const mb_op_params_t *p) {
  return SILU_MUL_FLOP * mb__elt_mn(p);
}
static double silu_mul_bytes(const mb_op_params_t *p) {
  return 2.0 * mb__bytes(p->dtype, mb__elt_mn(p)) +
         mb__bytes(p->dtype_out, mb__elt_mn(p));
}

typedef struct act_ref {
  const void *x, *y;
  mb_dtype_t dt, out;
  mb_activation_t act;
  double alpha;
} act_ref_t;

static mb_status_t act_ref_prepare(const mb_op_params_t *p,
                                   const void *const *host, void **state) {
  act_ref_t *r = malloc(sizeof *r);
  if (!r)
    return mb__fail(MB_ERR_NO_MEMORY, "activation reference: out of memory");
  *r = (act_ref_t){host[0],      host[1],       p->dtype,
                   p->dtype_out, p->activation, p->act_alpha};
  *state = r;
  return MB_OK;
}

static void activation_ref_element(const void *state, uint32_t out, size_t idx,
                                   double *value, double *scale) {
  const act_ref_t *r = state;
  const act_info_t *a = &k_act[r->act];
  double x = mb__load(r->x, r->dt, idx);
  (void)out;
  *value = mb__elt_ref_sat(r->out, a->fn(x, r->alpha));
  *scale = a->scale_is_y ? fabs(*value) : fmax(fabs(x), fabs(*value));
}

static void silu_mul_ref_element(const void *state, uint32_t out, size_t idx,
                                 double *value, double *scale) {
  const act_ref_t *r = state;
  double x = mb__load(r->x, r->dt, idx), y = mb__load(r->y, r->dt, idx);
  (void)out;
  *value = mb__elt_ref_sat(r->out, act_silu(x, 0) * y);
  *scale = fabs(x * y);
}

static void act_ref_release(void *state) {
  free(state);
}

/* 0.5 ulp: one rounding to the output; err u(f32) of the scale: the f32
 * computation (see k_act). */
static mb__tolerance_t activation_tolerance(const mb_op_params_t *p,
                                            uint32_t out) {
  (void)out;
  return (mb__tolerance_t){
      0.5, k_act[p->activation].err * mb_dtype_unit_roundoff(p->dtype_acc)};
}

static mb__tolerance_t silu_mul_tolerance(const mb_op_params_t *p,
                                          uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5,
                           SILU_MUL_ERR * mb_dtype_unit_roundoff(p->dtype_acc)};
}

static const char *const k_silu_operands[] = {"X", "Y", "Z"};

const mb_op_t mb__op_activation = {
    .name = "activation",
    .summary =
        "Y = act(X), element-wise (X, Y: MxN); Y in X's dtype unless "
        "chosen (fp8 X)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc =
        "activation: relu|gelu_tanh|gelu_erf|silu|sigmoid|leakyrelu|"
        "relu6|hardswish (relu); act_alpha: leakyrelu slope (0.01)",
    .param_mask = MB__P_ACT,
    .rank = 2,
    .num_inputs = 1,
    .num_outputs = 1,
    .operand_names = mb__operands_xy,
    .dtypes = mb__elt_float_fp8,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float_fp8),
    .resolve = activation_resolve,
    .operand = activation_operand,
    .flop = activation_flop,
    .bytes = activation_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = act_ref_prepare,
    .ref_element = activation_ref_element,
    .ref_release = act_ref_release,
    .tolerance = activation_tolerance,
};

const mb_op_t mb__op_silu_mul = {
    .name = "silu_mul",
    .summary =
        "Z = silu(X) * Y, element-wise (SwiGLU's gate; X, Y, Z: MxN); "
        "Z in X's dtype unless chosen (fp8 X)",
    .shape_syntax = "MxN",
    .dim_names = mb__dims_mn,
    .params_doc = "",
    .rank = 2,
    .num_inputs = 2,
    .num_outputs = 1,
    .operand_names = k_silu_operands,
    .dtypes = mb__elt_float_fp8,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float_fp8),
    .resolve = silu_mul_resolve,
    .operand = silu_mul_operand,
    .flop = silu_mul_flop,
    .bytes = silu_mul_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = mb__elt_ref_cost_one,
    .ref_prepare = act_ref_prepare,
    .ref_element = silu_mul_ref_element,
    .ref_release = act_ref_release,
    .tolerance = silu_mul_tolerance,
};
