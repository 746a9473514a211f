/* Internal: what the attention ops share (attention.c defines these, and
 * attention_bwd.c, its backward, uses them): the shape (B, H, Sq, Skv, D)
 * with kv_heads (grouped-query), the [B,H,S,D] / [B,S,H,D] layouts, the
 * causal mask's pair count and the scores' error budget, so the backward
 * op takes exactly the forward's parameters and checks them the same way. */
#ifndef MB_LIB_OPS_ATTENTION_H
#define MB_LIB_OPS_ATTENTION_H

#include "ops/op_internal.h"

enum { MB__ATT_B, MB__ATT_H, MB__ATT_SQ, MB__ATT_SKV, MB__ATT_D };

/* Where row (b, h, position) of a [B,H,S,D] or [B,S,H,D] tensor starts, in
 * elements: b * batch + h * head + position * pos. */
typedef struct mb__att_strides {
  int64_t batch, head, pos;
} mb__att_strides_t;

/* Hkv: kv_heads, or H when unset (params not resolved yet). */
int64_t mb__att_kv_heads(const mb_op_params_t *p);
/* Rows of D of Q (seq MB__ATT_SQ) or of K (MB__ATT_SKV): B heads seq. */
double mb__att_rows(const mb_op_params_t *p, int seq);
/* The forward's resolve for `op`: float dtypes, kv_heads dividing H, the
 * operands' sizes, causal with Sq <= Skv; errors name `op`. */
mb_status_t mb__att_resolve(const mb_op_t *op, mb_op_params_t *p);
/* The 4-D shape of a Q-like (seq MB__ATT_SQ) or K-like (MB__ATT_SKV)
 * operand in p's layout, of p's dtype. */
void mb__att_operand(const mb_op_params_t *p, int seq, mb_dtype_t *dtype,
                     uint32_t *ndim, int64_t *shape);
/* (query, key) pairs the mask leaves, per (batch, query head). */
double mb__att_pairs(const mb_op_params_t *p);
mb__att_strides_t mb__att_layout(const mb_op_params_t *p, int seq);
/* The f32 error of a score s = q.k / sqrt(D) and its rounding against the
 * row's max, in u(f32) of a = sum_d |q_d k_d| / sqrt(D): 4 sqrt(D) + 8
 * (see attention_tolerance in attention.c). */
double mb__att_score_units(const mb_op_params_t *p);

#endif
