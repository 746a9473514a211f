/* attention_bwd: the gradients of attention (attention.c), computed the way
 * FlashAttention-2's backward computes them and benchmarked the way its
 * backward is benchmarked: from the forward's saved output O and row
 * log-sum-exp L, which the op's setup computes (untimed).
 *
 * Inputs Q [B,H,Sq,D], K, V [B,Hkv,Skv,D], O, dO [B,H,Sq,D] (all in one
 * float dtype) and L [B,H,Sq] f32; outputs dQ [B,H,Sq,D], dK, dV
 * [B,Hkv,Skv,D] in the inputs' dtype. The forward's parameters: shape
 * (B, H, Sq, Skv, D), causal (bottom-right aligned), bshd (every tensor
 * but L [B,S,H,D]), kv_heads (grouped-query: query head h reads K/V head
 * h / (H / Hkv)). Per (batch, query head), with scale = 1/sqrt(D) and the
 * mask's pairs only:
 *   P     = exp(Q K^T scale - L)       (recomputed, as FA2 does)
 *   dV    = P^T dO
 *   dP    = dO V^T
 *   delta = rowsum(dO o O)             (one number per query row)
 *   dS    = P o (dP - delta)
 *   dQ    = dS K scale,  dK = dS^T Q scale
 * and dK, dV of a K/V head are the sums over the H / Hkv query heads that
 * share it (the gradient of the heads' shared K and V).
 *
 * Setup (post_fill, untimed): O = softmax(Q K^T scale) V and L = max +
 * log(sum exp(s - max)) per row, in double from Q, K, V, then O rounded to
 * the dtype and L to f32: what a forward pass saves for the backward. The
 * reference then takes O and L as given (as the kernels do), so it is the
 * exact backward of the op's inputs; with O's rounding it is the gradient
 * of attention to that rounding.
 *
 * FLOP (FlashAttention-2's convention): five matmuls per unmasked (query,
 * key) pair where the forward has two (recomputing S, dV, dP, dQ, dK; 2 D
 * each): 10 D per pair, 2.5 times the forward's 4 D, halved by the causal
 * mask as the forward's (the same pair count); exponentials and the
 * element-wise dS not counted.
 * Bytes: read Q, K, V, O, dO and L, write dQ, dK and dV: (4 |Q| + 4 |K|)
 * in the dtype (|K| = B Hkv Skv D) plus 4 B H Sq for L. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/attention.h"
#include "ops/eltwise.h"
#include "parallel.h"

enum { AB = MB__ATT_B, AH, ASQ, ASKV, AD };
enum { ROLE_Q, ROLE_K, ROLE_V, ROLE_O, ROLE_DO, ROLE_L, ROLE_DQ };
enum { OUT_DQ, OUT_DK, OUT_DV };

static int causal(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_CAUSAL) != 0;
}

static mb_status_t bwd_resolve(mb_op_params_t *p) {
  return mb__att_resolve(&mb__op_attention_bwd, p);
}

/* K, V, dK, dV are K-like; L is [B, H, Sq] f32; the rest Q-like. */
static void bwd_operand(const mb_op_params_t *p, uint32_t role,
                        mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  if (role == ROLE_L) {
    *dtype = MB_DTYPE_F32;
    *ndim = 3;
    shape[0] = p->shape[AB];
    shape[1] = p->shape[AH];
    shape[2] = p->shape[ASQ];
    return;
  }
  const int kv = role == ROLE_K || role == ROLE_V || role == ROLE_DQ + OUT_DK ||
                 role == ROLE_DQ + OUT_DV;
  mb__att_operand(p, kv ? ASKV : ASQ, dtype, ndim, shape);
}

static double bwd_flop(const mb_op_params_t *p) {
  return 10.0 * (double)p->shape[AB] * (double)p->shape[AH] *
         (double)p->shape[AD] * mb__att_pairs(p);
}

static double bwd_bytes(const mb_op_params_t *p) {
  const double d = (double)p->shape[AD];
  return mb__bytes(p->dtype, 4.0 * mb__att_rows(p, ASQ) * d +
                                 4.0 * mb__att_rows(p, ASKV) * d) +
         mb__bytes(MB_DTYPE_F32, mb__att_rows(p, ASQ));
}

/* O and L come from post_fill: a constant fill skips drawing them. */
static void bwd_fill(const mb_op_params_t *p, uint32_t role, mb_fill_t *f) {
  (void)p;
  if (role == ROLE_O || role == ROLE_L) f->kind = MB_FILL_CONSTANT, f->a = 0.0;
}

/* Q, K, V (then O, dO) as f32, exact for every input dtype, in their own
 * layouts; h, group, strides as the forward's reference keeps them. */
typedef struct att_f32 {
  float *q, *k, *v, *o, *dout;
  const float *l; /* [B, H, Sq] */
  int64_t h, group, sq, skv, d;
  mb__att_strides_t qs, kvs;
  int causal, bshd;
  double scale;
} att_f32_t;

static void att_f32_free(att_f32_t *a) {
  free(a->q);
  free(a->k);
  free(a->v);
  free(a->o);
  free(a->dout);
}

/* Converts the inputs Q, K, V (and, `all`, O and dO) to f32. */
static mb_status_t att_f32_load(const mb_op_params_t *p,
                                const void *const *host, int all,
                                att_f32_t *a) {
  const size_t nq = (size_t)(mb__att_rows(p, ASQ) * (double)p->shape[AD]);
  const size_t nkv = (size_t)(mb__att_rows(p, ASKV) * (double)p->shape[AD]);
  *a = (att_f32_t){0};
  a->q = malloc(nq * sizeof(float));
  a->k = malloc(nkv * sizeof(float));
  a->v = malloc(nkv * sizeof(float));
  if (all) {
    a->o = malloc(nq * sizeof(float));
    a->dout = malloc(nq * sizeof(float));
  }
  if (!a->q || !a->k || !a->v || (all && (!a->o || !a->dout))) {
    att_f32_free(a);
    return mb__fail(MB_ERR_NO_MEMORY, "attention_bwd: out of memory");
  }
  mb_convert(a->q, MB_DTYPE_F32, host[ROLE_Q], p->dtype, nq, 0);
  mb_convert(a->k, MB_DTYPE_F32, host[ROLE_K], p->dtype, nkv, 0);
  mb_convert(a->v, MB_DTYPE_F32, host[ROLE_V], p->dtype, nkv, 0);
  if (all) {
    mb_convert(a->o, MB_DTYPE_F32, host[ROLE_O], p->dtype, nq, 0);
    mb_convert(a->dout, MB_DTYPE_F32, host[ROLE_DO], p->dtype, nq, 0);
    a->l = host[ROLE_L];
  }
  a->h = p->shape[AH];
  a->group = p->shape[AH] / mb__att_kv_heads(p);
  a->sq = p->shape[ASQ];
  a->skv = p->shape[ASKV];
  a->d = p->shape[AD];
  a->qs = mb__att_layout(p, ASQ);
  a->kvs = mb__att_layout(p, ASKV);
  a->causal = causal(p);
  a->bshd = (p->flags & MB_PARAM_BSHD) != 0;
  a->scale = 1.0 / sqrt((double)a->d);
  return MB_OK;
}

/* Offsets of query row (b, h, i) and of key row (b, K/V head of h, j). */
static int64_t q_row(const att_f32_t *a, int64_t b, int64_t h, int64_t i) {
  return b * a->qs.batch + h * a->qs.head + i * a->qs.pos;
}
static int64_t kv_row(const att_f32_t *a, int64_t b, int64_t g, int64_t j) {
  return b * a->kvs.batch + g * a->kvs.head + j * a->kvs.pos;
}

/* The last key query i sees, and the first query that sees key j. */
static int64_t last_key(const att_f32_t *a, int64_t i) {
  return a->causal ? i + a->skv - a->sq : a->skv - 1;
}
static int64_t first_query(const att_f32_t *a, int64_t j) {
  const int64_t i = j - (a->skv - a->sq);
  return a->causal && i > 0 ? i : 0;
}

/* ---- setup: the forward's O and L --------------------------------------- */

typedef struct fwd_job {
  const att_f32_t *a;
  void *o;
  float *l;
  mb_dtype_t dt;
} fwd_job_t;

/* Rows [lo, hi) of [B, H, Sq] ((b, h, i) in that order): the online softmax in
 * double, as the forward's reference; O rounded once to the dtype, L to f32. */
static void fwd_rows(void *arg, size_t lo, size_t hi) {
  const fwd_job_t *job = arg;
  const att_f32_t *a = job->a;
  double *acc = malloc((size_t)a->d * sizeof *acc);
  if (!acc) return; /* O and L stay 0: the check then fails, loudly */
  for (size_t row = lo; row < hi; row++) {
    const int64_t i = (int64_t)row % a->sq, bh = (int64_t)row / a->sq;
    const int64_t b = bh / a->h, h = bh % a->h;
    const float *q = a->q + q_row(a, b, h, i);
    const int64_t kv0 = kv_row(a, b, h / a->group, 0);
    double mx = -INFINITY, z = 0;
    for (int64_t c = 0; c < a->d; c++) acc[c] = 0;
    for (int64_t j = 0; j <= last_key(a, i); j++) {
      const float *k = a->k + kv0 + j * a->kvs.pos;
      const float *v = a->v + kv0 + j * a->kvs.pos;
      double s = 0;
      for (int64_t c = 0; c < a->d; c++) s += (double)q[c] * (double)k[c];
      s *= a->scale;
      if (s > mx) {
        const double f = exp(mx - s);
        z *= f;
        for (int64_t c = 0; c < a->d; c++) acc[c] *= f;
        mx = s;
      }
      const double w = exp(s - mx);
      z += w;
      for (int64_t c = 0; c < a->d; c++) acc[c] += w * (double)v[c];
    }
    const int64_t o = q_row(a, b, h, i);
    for (int64_t c = 0; c < a->d; c++)
      mb__store(job->o, job->dt, (size_t)(o + c), acc[c] / z, 0);
    job->l[row] = (float)(mx + log(z));
  }
  free(acc);
}

static mb_status_t bwd_post_fill(const mb_op_params_t *p, void *const *host,
                                 uint64_t seed) {
  att_f32_t a;
  (void)seed;
  mb_status_t st = att_f32_load(p, (const void *const *)host, 0, &a);
  if (st != MB_OK) return st;
  fwd_job_t job = {&a, host[ROLE_O], host[ROLE_L], p->dtype};
  const size_t rows = (size_t)(mb__att_rows(p, ASQ) + 0.5);
  const double work = (double)a.skv * (double)a.d;
  const size_t min_part = work >= 65536.0 ? 1 : (size_t)(65536.0 / work);
  mb__parallel_for(rows, min_part, 1, fwd_rows, &job);
  att_f32_free(&a);
  return MB_OK;
}

/* ---- reference ------------------------------------------------------------
 */

typedef struct bwd_ref {
  att_f32_t a;
  double *delta;     /* rowsum(dO o O) per [B, H, Sq] row */
  double *delta_mag; /* sum |dO o O| */
  double units_q, units_kv, score_units;
} bwd_ref_t;

static void bwd_ref_release(void *state) {
  bwd_ref_t *r = state;
  if (!r) return;
  att_f32_free(&r->a);
  free(r->delta);
  free(r->delta_mag);
  free(r);
}

/* The error budget in u(f32), see bwd_tolerance: sums of Skv terms (dQ)
 * or of (H / Hkv) Sq terms (dK, dV), as the forward's 4 sqrt(n) + 16. */
static double units_of(double n) {
  return 4.0 * sqrt(n) + 16.0;
}

static mb_status_t bwd_ref_prepare(const mb_op_params_t *p,
                                   const void *const *host, void **state) {
  bwd_ref_t *r = calloc(1, sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "attention_bwd: out of memory");
  mb_status_t st = att_f32_load(p, host, 1, &r->a);
  const size_t rows = (size_t)(mb__att_rows(p, ASQ) + 0.5);
  if (st == MB_OK) {
    r->delta = malloc(rows * sizeof *r->delta);
    r->delta_mag = malloc(rows * sizeof *r->delta_mag);
  }
  if (st != MB_OK || !r->delta || !r->delta_mag) {
    bwd_ref_release(r);
    return st != MB_OK
               ? st
               : mb__fail(MB_ERR_NO_MEMORY, "attention_bwd: out of memory");
  }
  const att_f32_t *a = &r->a;
  for (size_t row = 0; row < rows; row++) {
    const int64_t i = (int64_t)row % a->sq, bh = (int64_t)row / a->sq;
    const int64_t off = q_row(a, bh / a->h, bh % a->h, i);
    double s = 0, m = 0;
    for (int64_t c = 0; c < a->d; c++) {
      const double t = (double)a->dout[off + c] * (double)a->o[off + c];
      s += t;
      m += fabs(t);
    }
    r->delta[row] = s;
    r->delta_mag[row] = m;
  }
  r->units_q = units_of((double)a->skv);
  r->units_kv = units_of((double)a->group * (double)a->sq);
  r->score_units = mb__att_score_units(p);
  *state = r;
  return MB_OK;
}

/* One unmasked pair (query row i of head h, key j): P, dS and what their
 * f32 errors are relative to. */
typedef struct pair {
  double p, ds;
  double p_err;  /* P's relative error, in units of the output's budget */
  double ds_mag; /* |dP - delta| (1 + p_err) + the dot products' share */
} pair_t;

static pair_t pair_at(const bwd_ref_t *r, int64_t b, int64_t h, int64_t i,
                      int64_t j, double units) {
  const att_f32_t *a = &r->a;
  const int64_t qo = q_row(a, b, h, i), ko = kv_row(a, b, h / a->group, j);
  const int64_t row = (b * a->h + h) * a->sq + i;
  double s = 0, s_abs = 0, dp = 0, dp_abs = 0;
  for (int64_t c = 0; c < a->d; c++) {
    const double qk = (double)a->q[qo + c] * (double)a->k[ko + c];
    const double dv = (double)a->dout[qo + c] * (double)a->v[ko + c];
    s += qk;
    s_abs += fabs(qk);
    dp += dv;
    dp_abs += fabs(dv);
  }
  const double x = s * a->scale - (double)a->l[row];
  pair_t t;
  t.p = exp(x);
  t.ds = t.p * (dp - r->delta[row]);
  /* exp turns the score's absolute error (the D-term dot product and the
   * subtraction of L, counted twice for a kernel working in base 2) into
   * P's relative error. */
  t.p_err = (r->score_units * s_abs * a->scale + 2.0 * fabs(x)) / units;
  /* dP and delta are D-term f32 dot products too: their error is relative
   * to sum |dO V| and sum |dO O|, not to |dP - delta|, which cancels. */
  t.ds_mag = fabs(dp - r->delta[row]) * (1.0 + t.p_err) +
             r->score_units * (dp_abs + r->delta_mag[row]) / units;
  return t;
}

/* dQ[b,h,i,e] = scale sum_j dS_ij K_je; dK[b,g,j,e] = scale sum over the
 * group's heads h and queries i of dS_ij Q_ie; dV[b,g,j,e] = sum P_ij
 * dO_ie. Element idx in the output's layout, (b, head, pos, e) or, BSHD,
 * (b, pos, head, e). The scale: each term's magnitude times its relative
 * error in units of the output's budget (see bwd_tolerance). */
static void bwd_ref_element(const void *state, uint32_t out, size_t idx,
                            double *value, double *scale) {
  const bwd_ref_t *r = state;
  const att_f32_t *a = &r->a;
  const int kv = out != OUT_DQ;
  const int64_t heads = kv ? a->h / a->group : a->h, seq = kv ? a->skv : a->sq;
  const int64_t e = (int64_t)idx % a->d, row = (int64_t)idx / a->d;
  const int64_t b = a->bshd ? row / (seq * heads) : row / (heads * seq);
  const int64_t hh = a->bshd ? row % heads : row / seq % heads;
  const int64_t pos = a->bshd ? row / heads % seq : row % seq;
  double v = 0, mag = 0;
  if (!kv) {
    const double units = r->units_q;
    for (int64_t j = 0; j <= last_key(a, pos); j++) {
      const pair_t t = pair_at(r, b, hh, pos, j, units);
      const double k = a->k[kv_row(a, b, hh / a->group, j) + e];
      v += t.ds * k;
      mag += t.p * t.ds_mag * fabs(k);
    }
    *value = v * a->scale;
    *scale = mag * a->scale;
    return;
  }
  const double units = r->units_kv;
  for (int64_t h = hh * a->group; h < (hh + 1) * a->group; h++)
    for (int64_t i = first_query(a, pos); i < a->sq; i++) {
      const pair_t t = pair_at(r, b, h, i, pos, units);
      const int64_t qo = q_row(a, b, h, i) + e;
      if (out == OUT_DV) {
        v += t.p * a->dout[qo];
        mag += t.p * (1.0 + t.p_err) * fabs(a->dout[qo]);
      } else {
        v += t.ds * a->q[qo];
        mag += t.p * t.ds_mag * fabs(a->q[qo]);
      }
    }
  const double f = out == OUT_DV ? 1.0 : a->scale;
  *value = v * f;
  *scale = mag * f;
}

/* Per element: the keys a dQ row sums, or the (head, query) pairs a dK or
 * dV row sums, each two D-term dot products. */
static double bwd_ref_cost(const mb_op_params_t *p) {
  const double g = (double)p->shape[AH] / (double)mb__att_kv_heads(p);
  const double n = fmax((double)p->shape[ASKV], g * (double)p->shape[ASQ]);
  return 2.0 * n * (double)p->shape[AD];
}

/* 0.5 ulp to the output plus u(f32) (4 sqrt(n) + 16) of the scale, n the
 * terms the output sums (dQ: Skv keys; dK, dV: H / Hkv heads times Sq
 * queries; the sum's 2 sqrt(n) twice over, as the forward's, and the
 * products' roundings). The scale adds up each term's magnitude times
 * (1 + its relative error / (4 sqrt(n) + 16)):
 * - P = exp(s - L) errs relatively by the score's absolute error, the
 *   forward's (4 sqrt(D) + 8) a (a = sum |q k| / sqrt(D)), plus 2 |s - L|
 *   for the subtraction (a kernel in base 2 scales it by log2 e);
 * - dS = P (dP - delta): dP = dO.V_j and delta = dO.O are D-term f32 dot
 *   products whose error is (4 sqrt(D) + 8) u of sum |dO V_j| and
 *   sum |dO O|, and which cancel where the gradient is small.
 * A kernel that leaves delta out, or the scale, or a query head of a
 * group, is off by the size of the gradient and fails. */
static mb__tolerance_t bwd_tolerance(const mb_op_params_t *p, uint32_t out) {
  const double g = (double)p->shape[AH] / (double)mb__att_kv_heads(p);
  const double n =
      out == OUT_DQ ? (double)p->shape[ASKV] : g * (double)p->shape[ASQ];
  return (mb__tolerance_t){0.5,
                           units_of(n) * mb_dtype_unit_roundoff(p->dtype_acc)};
}

static const char *const k_dims[] = {"B", "H", "Sq", "Skv", "D"};
static const char *const k_operands[] = {"Q", "K",  "V",  "O", "dO",
                                         "L", "dQ", "dK", "dV"};

const mb_op_t mb__op_attention_bwd = {
    .name = "attention_bwd",
    .summary =
        "dQ, dK, dV of attention given dO, from the forward's O and row "
        "log-sum-exp L (FlashAttention-2's backward; Q, O, dO, dQ: "
        "BxHxSqxD; K, V, dK, dV: BxHkvxSkvxD; L: BxHxSq f32; O and L "
        "computed by the setup)",
    .shape_syntax = "BxHxSqxSkvxD",
    .dim_names = k_dims,
    .params_doc =
        "as attention's: causal (bottom-right aligned); bshd: every "
        "tensor but L stored [B, S, H, D]; kv_heads: K/V heads Hkv "
        "(dK, dV summed over the H / Hkv query heads sharing one)",
    .param_mask = MB__P_CAUSAL | MB__P_BSHD | MB__P_KV_HEADS,
    .rank = 5,
    .num_inputs = 6,
    .num_outputs = 3,
    .operand_names = k_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = bwd_resolve,
    .operand = bwd_operand,
    .flop = bwd_flop,
    .bytes = bwd_bytes,
    .reads_output = mb__elt_never_reads_output,
    .fill = bwd_fill,
    .post_fill = bwd_post_fill,
    .ref_cost = bwd_ref_cost,
    .ref_prepare = bwd_ref_prepare,
    .ref_element = bwd_ref_element,
    .ref_pure = 1,
    .ref_release = bwd_ref_release,
    .tolerance = bwd_tolerance,
};
