/* rope: rotary position embedding. X, Y [B,H,S,D] (D even) in f32, bf16 or
 * f16; each pair (x0, x1) = X[b,h,s,2j..2j+1] is turned by the angle
 * s * theta_j, theta_j = 10000^(-2j/D):
 *   Y[.., 2j]   = x0 cos - x1 sin
 *   Y[.., 2j+1] = x0 sin + x1 cos
 * the interleaved-pairs layout (GPT-J, Meta's Llama reference), which is
 * the complex product (x0 + i x1) e^(i s theta_j): the JAX suite's rope
 * benchmark, x * freq_cis over complex64, in its own layout.
 *
 * The rotation table is the second input, F [S, D] f32: F[s, 2j] = cos,
 * F[s, 2j+1] = sin of s theta_j, each computed in double and rounded once
 * to f32 by the op's post_fill (untimed preparation, positions 0..S-1), so
 * every backend reads the same table, once per call (it is broadcast over
 * batch and heads). Kernels compute in f32 and round once to Y.
 *
 * FLOP: 6 per pair (4 multiplies, 2 adds, the complex product), 3 B H S D.
 * Bytes: |X| + |Y| + |F| (the table read once: 4 S D). The suite counts
 * complex64 x and out only (16 bytes a pair, the table left out). */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

enum { RB, RH, RS, RD };
enum { ROLE_X, ROLE_F, ROLE_Y };

/* theta 10000, the base of the original RoPE paper and most models. */
#define ROPE_BASE 10000.0

static double numel(const mb_op_params_t *p) {
  return (double)p->shape[RB] * (double)p->shape[RH] * (double)p->shape[RS] *
         (double)p->shape[RD];
}

static double table_numel(const mb_op_params_t *p) {
  return (double)p->shape[RS] * (double)p->shape[RD];
}

/* theta_j for each of the D/2 pairs, in double. */
static void rope_inv_freq(int64_t d, double *f) {
  for (int64_t j = 0; j < d / 2; j++)
    f[j] = pow(ROPE_BASE, -2.0 * (double)j / (double)d);
}

static mb_status_t rope_resolve(mb_op_params_t *p) {
  const mb_op_t *op = &mb__op_rope;
  mb_status_t st = mb__elt_resolve_dtypes(op, p, mb__elt_float,
                                          MB__ELT_COUNT(mb__elt_float));
  if (st == MB_OK) st = mb__elt_check_numel(op, "X", numel(p));
  if (st == MB_OK && p->shape[RD] % 2)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "rope: head dim D %lld is odd; RoPE turns pairs of "
                    "elements, so D must be even",
                    (long long)p->shape[RD]);
  return st;
}

static void rope_operand(const mb_op_params_t *p, uint32_t role,
                         mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  if (role == ROLE_F) {
    *dtype = MB_DTYPE_F32;
    *ndim = 2;
    shape[0] = p->shape[RS];
    shape[1] = p->shape[RD];
    return;
  }
  *dtype = p->dtype;
  *ndim = 4;
  for (int i = 0; i < 4; i++) shape[i] = p->shape[i];
}

static double rope_flop(const mb_op_params_t *p) {
  return 3.0 * numel(p);
}

static double rope_bytes(const mb_op_params_t *p) {
  return 2.0 * mb__bytes(p->dtype, numel(p)) +
         mb__bytes(MB_DTYPE_F32, table_numel(p));
}

/* The table F: the rotation of every (position, pair), rounded to f32. */
static mb_status_t rope_post_fill(const mb_op_params_t *p, void *const *host,
                                  uint64_t seed) {
  const int64_t s_len = p->shape[RS], d = p->shape[RD];
  double *inv = malloc((size_t)(d / 2 > 0 ? d / 2 : 1) * sizeof *inv);
  float *f = host[ROLE_F];
  (void)seed;
  if (!inv) return mb__fail(MB_ERR_NO_MEMORY, "rope: out of memory");
  rope_inv_freq(d, inv);
  for (int64_t s = 0; s < s_len; s++)
    for (int64_t j = 0; j < d / 2; j++) {
      const double a = (double)s * inv[j];
      f[s * d + 2 * j] = (float)cos(a);
      f[s * d + 2 * j + 1] = (float)sin(a);
    }
  free(inv);
  return MB_OK;
}

/* The reference turns each pair by the exact angle, not by F's rounded
 * cos and sin, so a wrong table would be caught as well as a wrong kernel. */
typedef struct rope_ref {
  const void *x;
  mb_dtype_t dt;
  int64_t s_len, d;
  double inv[]; /* theta_j, D/2 of them */
} rope_ref_t;

static mb_status_t rope_ref_prepare(const mb_op_params_t *p,
                                    const void *const *host, void **state) {
  const int64_t d = p->shape[RD];
  rope_ref_t *r = malloc(sizeof *r + (size_t)(d / 2) * sizeof(double));
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "rope reference: out of memory");
  r->x = host[ROLE_X];
  r->dt = p->dtype;
  r->s_len = p->shape[RS];
  r->d = d;
  rope_inv_freq(d, r->inv);
  *state = r;
  return MB_OK;
}

static void rope_ref_element(const void *state, uint32_t out, size_t idx,
                             double *value, double *scale) {
  const rope_ref_t *r = state;
  const size_t d = (size_t)r->d, k = idx % d, pair = idx - k % 2;
  const double pos = (double)((idx / d) % (size_t)r->s_len);
  const double a = pos * r->inv[k / 2], c = cos(a), s = sin(a);
  const double x0 = mb__load(r->x, r->dt, pair),
               x1 = mb__load(r->x, r->dt, pair + 1);
  (void)out;
  *value = k % 2 ? x0 * s + x1 * c : x0 * c - x1 * s;
  *scale = fabs(x0) + fabs(x1);
}

static void rope_ref_release(void *state) {
  free(state);
}

static double rope_ref_cost(const mb_op_params_t *p) {
  (void)p;
  return 2.0; /* a cosine and a sine */
}

/* 0.5 ulp: one rounding to Y. Relative to |x0| + |x1|: F's cos and sin
 * rounded to f32 (0.5 u each), the two products and the sum in f32 (one u
 * each, an FMA contracting one of them); 3 u covers them. */
static mb__tolerance_t rope_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5, 3.0 * mb_dtype_unit_roundoff(p->dtype_acc)};
}

static const char *const k_dims[] = {"B", "H", "S", "D"};
static const char *const k_operands[] = {"X", "F", "Y"};

const mb_op_t mb__op_rope = {
    .name = "rope",
    .summary =
        "rotary position embedding: Y = X's pairs (2j, 2j+1) turned by "
        "s * 10000^(-2j/D) (X, Y: BxHxSxD, D even; F: the f32 cos/sin "
        "table, S x D/2 pairs)",
    .shape_syntax = "BxHxSxD",
    .dim_names = k_dims,
    .params_doc = "",
    .rank = 4,
    .num_inputs = 2,
    .num_outputs = 1,
    .operand_names = k_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = rope_resolve,
    .operand = rope_operand,
    .flop = rope_flop,
    .bytes = rope_bytes,
    .reads_output = mb__elt_never_reads_output,
    .post_fill = rope_post_fill,
    .ref_cost = rope_ref_cost,
    .ref_prepare = rope_ref_prepare,
    .ref_element = rope_ref_element,
    .ref_release = rope_ref_release,
    .tolerance = rope_tolerance,
};
