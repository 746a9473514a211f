/* CPU backend — attention in portable C: one fused pass per (batch, head,
 * block of QB queries), FlashAttention's way, in f32.
 *
 * For each block of KB keys: the scores S = Q K^T / sqrt(D) of the block
 * (K transposed into the thread's buffer so the inner loop runs along the
 * keys), the online softmax (running max m and sum l per query; when m
 * grows, what was accumulated is rescaled by exp(m_old - m_new)), and
 * O += P V (inner loop along D). Nothing of size Sq x Skv is materialised.
 * K and V blocks are converted to f32 once per query block, 1/(2 QB) of
 * the arithmetic. The causal mask (bottom-right aligned: query i sees keys
 * j <= i + Skv - Sq) stops each query's key loop early; key blocks past a
 * query block's last visible key are skipped. (b, h, query block) tasks
 * are dealt dynamically across the pinned threads, since causal blocks
 * differ in work.
 *
 * Layouts: [B,H,S,D], or with MB_PARAM_BSHD [B,S,H,D]. Either way a
 * (batch, head)'s rows are D contiguous floats, `ld` apart (D, or H D for
 * BSHD), and every row is loaded into and stored from the thread's tile on
 * its own, so the layout only changes the rows' addresses.
 *
 * Grouped-query attention: K and V have kv_heads heads (their BSHD rows
 * kv_heads D apart), and query head h reads K/V head h / (H / kv_heads);
 * only the K/V rows' addresses change. */
/* QB, KB, the score and accumulation steps: cpu_attention.h, shared with
 * the backward (cpu_attention_bwd_c.c). */
#include "cpu_attention.h"

#include <math.h>
#include <stdlib.h>

typedef struct attention_c {
  int64_t bh, sq, skv, d, dp; /* dp: D rounded up to VEC (zero padded) */
  int64_t heads, ld;          /* ld: elements between a head's rows */
  int64_t kv_heads, kv_ld;    /* the same for K and V */
  int causal, bshd;
  unsigned threads;
  mb_dtype_t dtype;
  float scale;
  size_t scratch_floats; /* per thread */
  float *scratch;
} attention_c_t;

/* A thread's buffers, carved from its scratch. Rows are dp apart. */
typedef struct tile {
  float *q;     /* QB x dp */
  float *kt;    /* dp x KB: the key block transposed, zero past kn */
  float *v;     /* KB x dp, zero past kn and d */
  float *o;     /* QB x dp: unnormalised outputs */
  float *s;     /* QB x KB: scores, then probabilities */
  float *m, *l; /* QB: running max and sum */
} tile_t;

static size_t tile_floats(int64_t dp) {
  return (2 * (size_t)QB + 2 * (size_t)KB) * (size_t)dp + (size_t)QB * KB +
         2 * (size_t)QB;
}

static tile_t carve(float *base, int64_t dp) {
  tile_t t;
  t.q = base;
  t.kt = t.q + (size_t)QB * (size_t)dp;
  t.v = t.kt + (size_t)KB * (size_t)dp;
  t.o = t.v + (size_t)KB * (size_t)dp;
  t.s = t.o + (size_t)QB * (size_t)dp;
  t.m = t.s + (size_t)QB * KB;
  t.l = t.m + QB;
  return t;
}

/* Online softmax of one row's block of scores: keys at or past `see` are
 * masked; returns exp(m_old - m_new), the factor for what was summed. */
static inline float softmax_update(float *restrict s, float *m, float *l,
                                   int64_t see) {
  float mx = *m;
  for (int j = 0; j < KB; ++j) s[j] = mb__cpu_selectf(j < see, s[j], -INFINITY);
  for (int j = 0; j < KB; ++j) mx = mb__cpu_maxf(s[j], mx);
  /* A row that has seen no key yet keeps m = -inf: exp(-inf - 0) = 0. */
  const float base = mx == -INFINITY ? 0.0f : mx;
  float sum = 0.0f;
  for (int j = 0; j < KB; ++j) {
    s[j] = mb__cpu_expf(s[j] - base);
    sum += s[j];
  }
  const float alpha = mb__cpu_expf(*m - base);
  *l = *l * alpha + sum;
  *m = mx;
  return alpha;
}

/* Queries [i0, i0 + rows) of (batch, head) bh. */
MB_CPU_CLONES static void query_block(const attention_c_t *k, const tile_t *t,
                                      const void *qp, const void *kp,
                                      const void *vp, void *op, int64_t bh,
                                      int64_t i0, int64_t rows) {
  const int64_t d = k->d, dp = k->dp, off = k->skv - k->sq;
  const int64_t groups = (rows + RG - 1) / RG, d4 = (d + 3) / 4 * 4;
  const int64_t b = bh / k->heads, h = bh % k->heads;
  const int64_t kvh = h / (k->heads / k->kv_heads); /* the K/V head */
  for (int64_t e = d * KB; e < d4 * KB; ++e) t->kt[e] = 0.0f;
  mb__cpu_att_load_rows(
      t->q, qp, k->dtype,
      mb__cpu_att_row(k->bshd, k->d, b, h, k->heads, k->sq, i0), k->ld, rows, d,
      dp, groups * RG);
  for (int64_t e = 0; e < groups * RG * dp; ++e) t->o[e] = 0.0f;
  for (int r = 0; r < QB; ++r) {
    t->m[r] = -INFINITY;
    t->l[r] = 0.0f;
  }
  const int64_t last = k->causal ? i0 + rows - 1 + off : k->skv - 1;
  for (int64_t j0 = 0; j0 <= last; j0 += KB) {
    const int64_t kn = last + 1 - j0 < KB ? last + 1 - j0 : KB;
    const size_t koff =
        mb__cpu_att_row(k->bshd, k->d, b, kvh, k->kv_heads, k->skv, j0);
    /* K lands in v's buffer first, then transposed into kt. */
    mb__cpu_att_load_rows(t->v, kp, k->dtype, koff, k->kv_ld, kn, d, dp, KB);
    for (int64_t c = 0; c < d; ++c)
      for (int j = 0; j < KB; ++j) t->kt[c * KB + j] = t->v[j * dp + c];
    mb__cpu_att_load_rows(t->v, vp, k->dtype, koff, k->kv_ld, kn, d, dp, KB);
    for (int64_t g = 0; g < groups; ++g) {
      float *s = t->s + g * RG * KB, alpha[RG];
      mb__cpu_att_scores(s, t->q + g * RG * dp, t->kt, d4, dp, k->scale);
      for (int r = 0; r < RG; ++r) {
        /* Keys query i0 + g RG + r sees in this block (causal: >= 1 in the
         * first block, since resolve rejects Sq > Skv). */
        const int64_t i = i0 + g * RG + r;
        const int64_t see = k->causal ? i + off - j0 + 1 : kn;
        alpha[r] = softmax_update(s + r * KB, &t->m[g * RG + r],
                                  &t->l[g * RG + r], see < kn ? see : kn);
      }
      mb__cpu_att_accumulate(t->o + g * RG * dp, s, t->v, alpha,
                             (kn + 3) / 4 * 4, dp);
    }
  }
  const size_t ooff = mb__cpu_att_row(k->bshd, k->d, b, h, k->heads, k->sq, i0);
  for (int64_t r = 0; r < rows; ++r) {
    const float inv = 1.0f / t->l[r];
    for (int64_t c = 0; c < d; ++c) t->o[r * dp + c] *= inv;
    mb__cpu_store_f32(op, k->dtype, ooff + (size_t)(r * k->ld), t->o + r * dp,
                      (size_t)d);
  }
}

mb_status_t mb__cpu_attention_c_prepare(void *bstate,
                                        const mb_kernel_call_t *call,
                                        void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const mb_status_t status = mb__cpu_float_dtype(st, "attention", p->dtype);
  if (status != MB_OK) return status;
  attention_c_t *k = malloc(sizeof *k);
  const int64_t dp = (p->shape[4] + VEC - 1) / VEC * VEC;
  const size_t per_thread = tile_floats(dp);
  float *scratch = malloc((size_t)st->threads * per_thread * sizeof *scratch);
  if (!k || !scratch) {
    free(k);
    free(scratch);
    MB_CPU_ERROR(st, "cpu/c: attention: out of memory for %u x %zu floats",
                 st->threads, per_thread);
    return MB_ERR_NO_MEMORY;
  }
  const int bshd = (p->flags & MB_PARAM_BSHD) != 0;
  /* Resolved params have kv_heads; 0 (a caller that did not resolve) is
   * the op's default, H. */
  const int64_t kvh = p->kv_heads ? p->kv_heads : p->shape[1];
  *k = (attention_c_t){p->shape[0] * p->shape[1],
                       p->shape[2],
                       p->shape[3],
                       p->shape[4],
                       dp,
                       p->shape[1],
                       bshd ? p->shape[1] * p->shape[4] : p->shape[4],
                       kvh,
                       bshd ? kvh * p->shape[4] : p->shape[4],
                       (p->flags & MB_PARAM_CAUSAL) != 0,
                       bshd,
                       st->threads,
                       p->dtype,
                       (float)(1.0 / sqrt((double)p->shape[4])),
                       per_thread,
                       scratch};
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_attention_c_run(void *kstate,
                                    const mb_kernel_call_t *call) {
  const attention_c_t *k = kstate;
  const int64_t blocks = (k->sq + QB - 1) / QB, tasks = k->bh * blocks;
  const void *q = call->in[0], *kp = call->in[1], *v = call->in[2];
  void *o = call->out[0];
#pragma omp parallel num_threads(k->threads) if (tasks > 1)
  {
    const tile_t t =
        carve(k->scratch + mb__cpu_thread_id() * k->scratch_floats, k->dp);
#pragma omp for schedule(dynamic, 1)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t bh = task / blocks, i0 = task % blocks * QB;
      query_block(k, &t, q, kp, v, o, bh, i0,
                  k->sq - i0 < QB ? k->sq - i0 : QB);
    }
  }
  return MB_OK;
}

void mb__cpu_attention_c_release(void *kstate) {
  attention_c_t *k = kstate;
  if (!k) return;
  free(k->scratch);
  free(k);
}
