/* The shape, layouts and checks attention and attention_bwd share
 * (attention.h): one definition of what (B, H, Sq, Skv, D), kv_heads,
 * causal and bshd mean, so the backward takes exactly the forward's
 * parameters. */
#include <math.h>

#include "ops/attention.h"
#include "ops/eltwise.h"

int64_t mb__att_kv_heads(const mb_op_params_t *p) {
  return p->kv_heads ? p->kv_heads : p->shape[MB__ATT_H];
}

/* Heads of Q and O (seq MB__ATT_SQ) or of K and V (MB__ATT_SKV). */
static int64_t heads(const mb_op_params_t *p, int seq) {
  return seq == MB__ATT_SKV ? mb__att_kv_heads(p) : p->shape[MB__ATT_H];
}

static int bshd(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_BSHD) != 0;
}

double mb__att_rows(const mb_op_params_t *p, int seq) {
  return (double)p->shape[MB__ATT_B] * (double)heads(p, seq) *
         (double)p->shape[seq];
}

/* Fills kv_heads in (0: H) and checks H is a multiple of it. */
static mb_status_t resolve_kv_heads(const mb_op_t *op, mb_op_params_t *p) {
  const int64_t h = p->shape[MB__ATT_H];
  if (p->kv_heads == 0) p->kv_heads = h;
  if (p->kv_heads < 0)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: kv_heads = %lld; the K/V heads are a count "
                    "(0: H = %lld)",
                    op->name, (long long)p->kv_heads, (long long)h);
  if (p->kv_heads > h || h % p->kv_heads)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: H = %lld query heads is not a multiple of "
                    "kv_heads = %lld (grouped-query attention: each K/V head "
                    "serves H / kv_heads query heads; valid kv_heads divide "
                    "H, 1 to %lld)",
                    op->name, (long long)h, (long long)p->kv_heads,
                    (long long)h);
  return MB_OK;
}

mb_status_t mb__att_resolve(const mb_op_t *op, mb_op_params_t *p) {
  mb_status_t st = mb__elt_resolve_dtypes(op, p, mb__elt_float,
                                          MB__ELT_COUNT(mb__elt_float));
  if (st == MB_OK) st = resolve_kv_heads(op, p);
  const double d = (double)p->shape[MB__ATT_D];
  if (st == MB_OK)
    st = mb__elt_check_numel(op, "Q", mb__att_rows(p, MB__ATT_SQ) * d);
  if (st == MB_OK)
    st = mb__elt_check_numel(op, "K", mb__att_rows(p, MB__ATT_SKV) * d);
  const int64_t sq = p->shape[MB__ATT_SQ], skv = p->shape[MB__ATT_SKV];
  if (st == MB_OK && (p->flags & MB_PARAM_CAUSAL) && sq > skv)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: causal with Sq %lld > Skv %lld leaves the "
                    "first %lld queries without a key (the mask is aligned "
                    "bottom-right: query i sees keys j <= i + Skv - Sq)",
                    op->name, (long long)sq, (long long)skv,
                    (long long)(sq - skv));
  return st;
}

void mb__att_operand(const mb_op_params_t *p, int seq, mb_dtype_t *dtype,
                     uint32_t *ndim, int64_t *shape) {
  const int64_t s = p->shape[seq], h = heads(p, seq);
  *dtype = p->dtype;
  *ndim = 4;
  shape[0] = p->shape[MB__ATT_B];
  shape[1] = bshd(p) ? s : h;
  shape[2] = bshd(p) ? h : s;
  shape[3] = p->shape[MB__ATT_D];
}

double mb__att_pairs(const mb_op_params_t *p) {
  const double sq = (double)p->shape[MB__ATT_SQ];
  const double skv = (double)p->shape[MB__ATT_SKV];
  return (p->flags & MB_PARAM_CAUSAL) ? sq * (skv - sq) + sq * (sq + 1.0) / 2.0
                                      : sq * skv;
}

mb__att_strides_t mb__att_layout(const mb_op_params_t *p, int seq) {
  const int64_t h = heads(p, seq), s = p->shape[seq], d = p->shape[MB__ATT_D];
  return bshd(p) ? (mb__att_strides_t){s * h * d, d, h * d}
                 : (mb__att_strides_t){h * s * d, s * d, d};
}

double mb__att_score_units(const mb_op_params_t *p) {
  return 4.0 * sqrt((double)p->shape[MB__ATT_D]) + 8.0;
}
