/* attention: O = softmax(Q K^T / sqrt(D) [+ causal mask]) V per (batch,
 * head). Shape (B, H, Sq, Skv, D): Q, O [B,H,Sq,D]; K, V [B,Hkv,Skv,D].
 * f32, bf16, f16 (all operands one dtype), f32 compute.
 *
 * Grouped-query attention (params.kv_heads = Hkv, H a multiple of it):
 * query head h reads K/V head h / (H / Hkv), so each K/V head serves a
 * group of H / Hkv consecutive query heads (PyTorch SDPA's enable_gqa,
 * which repeat_interleaves K and V; JAX dot_product_attention with fewer
 * K/V heads). Hkv = H (the default) is multi-head attention, Hkv = 1
 * multi-query. The math per query head is unchanged, so is the FLOP
 * count; only K and V shrink.
 *
 * MB_PARAM_BSHD: Q, O are [B,Sq,H,D] and K, V [B,Skv,H,D] — a linear
 * layer's [B*S, H*D] output viewed as heads (FlashAttention's layout), so a
 * transformer block feeds its projections to attention and attention to the
 * next GEMM without permute copies (K and V [B,Skv,Hkv,D]). Same math,
 * FLOP and bytes; only where a (batch, head, position) row lives changes:
 * rows of one head are H*D (K, V: Hkv*D) apart instead of D.
 *
 * Causal (MB_PARAM_CAUSAL): query i sees keys j <= i + (Skv - Sq), the mask
 * aligned to the bottom-right corner, so the last query sees every key —
 * FlashAttention's convention (2.1+) and PyTorch's causal_lower_right; when
 * Sq == Skv it is plain j <= i. (PyTorch SDPA's is_causal aligns top-left,
 * j <= i, which differs only when Sq != Skv.) Sq > Skv with causal would
 * leave the first queries no key at all and is rejected.
 *
 * FLOP: 4 D per (query, key) pair that is not masked — 2D for the score,
 * 2D for its share of the output; the softmax's exponentials are not
 * counted (FlashAttention's convention). Unmasked pairs: Sq Skv, or with
 * the causal mask sum_i (i + Skv - Sq + 1) = Sq (Skv - Sq) + Sq (Sq + 1)/2.
 * Bytes: |Q| + |K| + |V| + |O| (every key is seen by the last query), K
 * and V B*Hkv*Skv*D elements each. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/attention.h"
#include "ops/eltwise.h"

/* The shape, layouts, checks and pair count are shared with attention_bwd
 * (attention_shape.c). */
enum { AB = MB__ATT_B, AH, ASQ, ASKV, AD };
enum { ROLE_Q, ROLE_K, ROLE_V, ROLE_O };

static mb_status_t attention_resolve(mb_op_params_t *p) {
  return mb__att_resolve(&mb__op_attention, p);
}

static void attention_operand(const mb_op_params_t *p, uint32_t role,
                              mb_dtype_t *dtype, uint32_t *ndim,
                              int64_t *shape) {
  mb__att_operand(p, role == ROLE_K || role == ROLE_V ? ASKV : ASQ, dtype, ndim,
                  shape);
}

static double attention_flop(const mb_op_params_t *p) {
  return 4.0 * (double)p->shape[AB] * (double)p->shape[AH] *
         (double)p->shape[AD] * mb__att_pairs(p);
}

static double attention_bytes(const mb_op_params_t *p) {
  const double d = (double)p->shape[AD];
  return mb__bytes(p->dtype, 2.0 * mb__att_rows(p, ASQ) * d +
                                 2.0 * mb__att_rows(p, ASKV) * d);
}

static double attention_ref_cost(const mb_op_params_t *p) {
  return (double)p->shape[ASKV] * (double)p->shape[AD];
}

/* The error budget in u(f32) (see attention_tolerance): `units` does not
 * depend on the data, mb__att_score_units (4 sqrt(D) + 8) multiplies the
 * row's largest score magnitude a_max = max_j sum_d |q_d k_jd| / sqrt(D). */
static double units(const mb_op_params_t *p) {
  return 4.0 * sqrt((double)p->shape[ASKV]) + 16.0;
}

/* Q, K, V as f32 (exact for every input dtype), so one element's O(Skv D)
 * recomputation runs at memory speed; kept in their own layout. */
typedef struct attention_ref {
  float *q, *k, *v;
  int64_t h, group, sq, skv, d; /* group: query heads per K/V head */
  mb__att_strides_t qs, kvs;    /* Q and O; K and V */
  int causal, bshd;
  double scale, units, score_units;
} attention_ref_t;

static void attention_ref_release(void *state) {
  attention_ref_t *r = state;
  if (!r) return;
  free(r->q);
  free(r->k);
  free(r->v);
  free(r);
}

static mb_status_t attention_ref_prepare(const mb_op_params_t *p,
                                         const void *const *host,
                                         void **state) {
  attention_ref_t *r = calloc(1, sizeof *r);
  const size_t nq = (size_t)(mb__att_rows(p, ASQ) * (double)p->shape[AD]);
  const size_t nkv = (size_t)(mb__att_rows(p, ASKV) * (double)p->shape[AD]);
  if (r) {
    r->q = malloc(nq * sizeof *r->q);
    r->k = malloc(nkv * sizeof *r->k);
    r->v = malloc(nkv * sizeof *r->v);
  }
  if (!r || !r->q || !r->k || !r->v) {
    attention_ref_release(r);
    return mb__fail(MB_ERR_NO_MEMORY, "attention reference: out of memory");
  }
  mb_convert(r->q, MB_DTYPE_F32, host[ROLE_Q], p->dtype, nq, 0);
  mb_convert(r->k, MB_DTYPE_F32, host[ROLE_K], p->dtype, nkv, 0);
  mb_convert(r->v, MB_DTYPE_F32, host[ROLE_V], p->dtype, nkv, 0);
  r->h = p->shape[AH];
  r->group = p->shape[AH] / mb__att_kv_heads(p);
  r->sq = p->shape[ASQ];
  r->skv = p->shape[ASKV];
  r->d = p->shape[AD];
  r->qs = mb__att_layout(p, ASQ);
  r->kvs = mb__att_layout(p, ASKV);
  r->causal = (p->flags & MB_PARAM_CAUSAL) != 0;
  r->bshd = (p->flags & MB_PARAM_BSHD) != 0;
  r->scale = 1.0 / sqrt((double)r->d);
  r->units = units(p);
  r->score_units = mb__att_score_units(p);
  *state = r;
  return MB_OK;
}

/* O[b,h,i,e] with a one-pass (online) softmax in double: the running max
 * only rescales the sums, exact to ~1e-16. Besides the value it gathers the
 * output's magnitude sum_j p_j |v_je| and a_max for the scale. Element idx
 * of O is (b, h, i, e) or, BSHD, (b, i, h, e); K and V are those of K/V
 * head h / group. */
static void attention_ref_element(const void *state, uint32_t out, size_t idx,
                                  double *value, double *scale) {
  const attention_ref_t *r = state;
  const int64_t e = (int64_t)idx % r->d, row = (int64_t)idx / r->d;
  const int64_t b = r->bshd ? row / (r->sq * r->h) : row / (r->h * r->sq);
  const int64_t h = r->bshd ? row % r->h : row / r->sq % r->h;
  const int64_t i = r->bshd ? row / r->h % r->sq : row % r->sq;
  const float *q = r->q + b * r->qs.batch + h * r->qs.head + i * r->qs.pos;
  const int64_t kv = b * r->kvs.batch + h / r->group * r->kvs.head;
  const int64_t ld = r->kvs.pos;
  const float *k = r->k + kv, *v = r->v + kv;
  const int64_t last = r->causal ? i + r->skv - r->sq : r->skv - 1;
  double mx = -INFINITY, z = 0, o = 0, mag = 0, a_max = 0;
  (void)out;
  for (int64_t j = 0; j <= last; j++) {
    double s = 0, a = 0;
    for (int64_t c = 0; c < r->d; c++) {
      double t = (double)q[c] * (double)k[j * ld + c];
      s += t;
      a += fabs(t);
    }
    s *= r->scale;
    a_max = fmax(a_max, a * r->scale);
    if (s > mx) { /* rescale what was summed against the old max */
      double f = exp(mx - s);
      z *= f, o *= f, mag *= f;
      mx = s;
    }
    double w = exp(s - mx), vj = (double)v[j * ld + e];
    z += w;
    o += w * vj;
    mag += w * fabs(vj);
  }
  *value = o / z;
  *scale = mag / z * (1.0 + r->score_units * a_max / r->units);
}

/* 0.5 ulp to the output plus u(f32) (4 sqrt(Skv) + 16) of the scale
 * sum_j p_j |v_je| (1 + (4 sqrt(D) + 8) a_max / (4 sqrt(Skv) + 16)), i.e.
 * an error of u sum_j p_j |v_je| times:
 * - (4 sqrt(D) + 8) a_max: each f32 score q.k_j / sqrt(D) is a D-term dot
 *   product, off by ~(2 sqrt(D) + 2) u a_j, and rounding s_j - max adds
 *   2 u a_max; exp turns that absolute error into a relative error of p_j,
 *   once through its numerator and once through the normaliser;
 * - 4 sqrt(Skv) + 16: the normaliser and the output are sums of Skv terms
 *   (2 sqrt(Skv) each), exp in both (4 + 4), the division and the online
 *   softmax's rescalings (8).
 * A kernel that rounds P or the output's accumulator to bf16 is off by
 * ~2^-9 of the scale and fails; so does truncating the output. */
static mb__tolerance_t attention_tolerance(const mb_op_params_t *p,
                                           uint32_t out) {
  (void)out;
  return (mb__tolerance_t){0.5,
                           units(p) * mb_dtype_unit_roundoff(p->dtype_acc)};
}

static const char *const k_dims[] = {"B", "H", "Sq", "Skv", "D"};
static const char *const k_operands[] = {"Q", "K", "V", "O"};

const mb_op_t mb__op_attention = {
    .name = "attention",
    .summary =
        "O = softmax(Q K^T / sqrt(D) [causal]) V (Q, O: BxHxSqxD; K, "
        "V: BxHkvxSkvxD, Hkv = kv_heads dividing H, default H; bshd: "
        "BxSxHxD)",
    .shape_syntax = "BxHxSqxSkvxD",
    .dim_names = k_dims,
    .params_doc =
        "causal: query i sees keys j <= i + Skv - Sq "
        "(bottom-right aligned); bshd: Q, K, V, O stored [B, S, H, D] (a "
        "linear layer's output viewed as heads) instead of [B, H, S, D]; "
        "kv_heads: K/V heads Hkv (grouped-query: query head h reads K/V "
        "head h / (H / Hkv); default H)",
    .param_mask = MB__P_CAUSAL | MB__P_BSHD | MB__P_KV_HEADS,
    .rank = 5,
    .num_inputs = 3,
    .num_outputs = 1,
    .operand_names = k_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = attention_resolve,
    .operand = attention_operand,
    .flop = attention_flop,
    .bytes = attention_bytes,
    .reads_output = mb__elt_never_reads_output,
    .ref_cost = attention_ref_cost,
    .ref_prepare = attention_ref_prepare,
    .ref_element = attention_ref_element,
    .ref_pure = 1,
    .ref_release = attention_ref_release,
    .tolerance = attention_tolerance,
};
