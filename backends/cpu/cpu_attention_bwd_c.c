/* CPU backend — attention_bwd in portable C (lib/ops/attention_bwd.c):
 * FlashAttention-2's backward, in f32, from the forward's O and row
 * log-sum-exp L:
 *   P = exp(Q K^T scale - L), dV += P^T dO, dP = dO V^T,
 *   dS = P (dP - delta), delta = rowsum(dO o O), dQ += dS K scale,
 *   dK += dS^T Q scale.
 *
 * One task per (batch, K/V head), dealt dynamically across the pinned
 * threads, so a K/V head's dK and dV — summed over its H / Hkv query heads
 * (grouped-query) — belong to one thread and need no atomics. A task keeps
 * its head's dK and dV (Skv x D) and one query head's dQ (Sq x D) as f32
 * accumulators in the thread's scratch; for each query head of the group:
 * delta per query row (FA2's preprocessing step), then for each block of
 * KB keys (K and V converted to f32 once, transposed for the products
 * along the keys) each block of QB queries that sees any of them (the
 * causal mask, bottom-right aligned, skips the earlier ones): the five
 * products of FA2 on the tile — S and dP by the forward's 4-row score
 * step, dQ, dV and dK by its 4-row accumulation (P and dS transposed for
 * the last two) — with masked and padded entries of P, hence of dS, zero.
 * dQ is scaled and rounded once when its head is done, dK and dV when the
 * group is. Nothing of size Sq x Skv is materialised.
 *
 * Parallelism is B Hkv tasks: fewer than the threads leaves some idle (a
 * plain baseline, like the forward's; FA2 splits the key blocks across
 * blocks and adds dQ atomically instead). */
#include "cpu_attention.h"

#include <math.h>
#include <stdlib.h>

_Static_assert(QB == KB, "P^T and dS^T (KB x QB) are read with rows KB apart");

typedef struct attention_bwd_c {
  int64_t batch, heads, kv_heads, group, sq, skv, d, dp;
  int64_t sqp, skvp; /* Sq, Skv rounded up to QB, KB */
  int64_t ld, kv_ld; /* elements between a head's rows: Q-like, K-like */
  int causal, bshd;
  unsigned threads;
  mb_dtype_t dtype;
  float scale;
  size_t scratch_floats; /* per thread */
  float *scratch;
} attention_bwd_c_t;

/* A thread's buffers, carved from its scratch. Rows are dp apart. */
typedef struct tile {
  float *kt, *vt;    /* dp x KB: the key block's K and V transposed */
  float *kr, *vr;    /* KB x dp: its K and V rows, zero past kn and d */
  float *q, *dout;   /* QB x dp: the query block's Q and dO */
  float *p, *ds;     /* QB x KB: P; dP, then dS */
  float *t;          /* KB x QB: P or dS transposed */
  float *dk, *dv;    /* skvp x dp: the K/V head's accumulators */
  float *dq, *delta; /* sqp x dp and sqp: one query head's */
} tile_t;

static size_t tile_floats(int64_t dp, int64_t sqp, int64_t skvp) {
  return (4 * (size_t)KB + 2 * (size_t)QB) * (size_t)dp + 3 * (size_t)QB * KB +
         (2 * (size_t)skvp + (size_t)sqp) * (size_t)dp + (size_t)sqp;
}

static tile_t carve(float *base, int64_t dp, int64_t sqp, int64_t skvp) {
  const size_t blk = (size_t)KB * (size_t)dp, sq = (size_t)QB * KB;
  tile_t t;
  t.kt = base;
  t.vt = t.kt + blk;
  t.kr = t.vt + blk;
  t.vr = t.kr + blk;
  t.q = t.vr + blk;
  t.dout = t.q + (size_t)QB * (size_t)dp;
  t.p = t.dout + (size_t)QB * (size_t)dp;
  t.ds = t.p + sq;
  t.t = t.ds + sq;
  t.dk = t.t + sq;
  t.dv = t.dk + (size_t)skvp * (size_t)dp;
  t.dq = t.dv + (size_t)skvp * (size_t)dp;
  t.delta = t.dq + (size_t)sqp * (size_t)dp;
  return t;
}

static const float k_ones[RG] = {1.0f, 1.0f, 1.0f, 1.0f};

/* kt[c][j] = rows[j][c] for the KB x dp block `rows`. */
static void transpose_block(float *restrict kt, const float *restrict rows,
                            int64_t dp) {
  for (int64_t c = 0; c < dp; ++c)
    for (int j = 0; j < KB; ++j) kt[c * KB + j] = rows[j * dp + c];
}

/* t[j][r] = m[r][j] for the first rows4 rows of a QB x KB tile. */
static void transpose_tile(float *restrict t, const float *restrict m,
                           int64_t rows4) {
  for (int j = 0; j < KB; ++j)
    for (int64_t r = 0; r < rows4; ++r) t[j * QB + r] = m[r * KB + j];
}

/* delta[i] = rowsum(dO o O) of query head h's rows, in f32. */
static void row_deltas(const attention_bwd_c_t *k, const tile_t *t,
                       const mb_kernel_call_t *call, int64_t b, int64_t h) {
  for (int64_t i = 0; i < k->sq; ++i) {
    const size_t off = mb__cpu_att_row(k->bshd, k->d, b, h, k->heads, k->sq, i);
    mb__cpu_load_f32(t->q, call->in[3], k->dtype, off, (size_t)k->d);
    mb__cpu_load_f32(t->dout, call->in[4], k->dtype, off, (size_t)k->d);
    float s = 0.0f;
    for (int64_t c = 0; c < k->d; ++c) s += t->q[c] * t->dout[c];
    t->delta[i] = s;
  }
}

/* The five products for queries [i0, i0 + rows) of head h against the key
 * block [j0, j0 + kn) already in t->kt, kr, vt. */
MB_CPU_CLONES static void tile_step(const attention_bwd_c_t *k, const tile_t *t,
                                    const mb_kernel_call_t *call, int64_t b,
                                    int64_t h, int64_t i0, int64_t rows,
                                    int64_t j0, int64_t kn) {
  const int64_t dp = k->dp, d4 = (k->d + 3) / 4 * 4, off = k->skv - k->sq;
  const int64_t rows4 = (rows + RG - 1) / RG * RG, kn4 = (kn + 3) / 4 * 4;
  const size_t qoff = mb__cpu_att_row(k->bshd, k->d, b, h, k->heads, k->sq, i0);
  const float *l = (const float *)call->in[5] + (b * k->heads + h) * k->sq;
  mb__cpu_att_load_rows(t->q, call->in[0], k->dtype, qoff, k->ld, rows, k->d,
                        dp, rows4);
  mb__cpu_att_load_rows(t->dout, call->in[4], k->dtype, qoff, k->ld, rows, k->d,
                        dp, rows4);
  for (int64_t g = 0; g < rows4; g += RG) {
    float *p = t->p + g * KB, *ds = t->ds + g * KB;
    mb__cpu_att_scores(p, t->q + g * dp, t->kt, d4, dp, k->scale);
    mb__cpu_att_scores(ds, t->dout + g * dp, t->vt, d4, dp, 1.0f);
    for (int r = 0; r < RG; ++r) {
      /* Keys of the block query i sees: none for a padding row. */
      const int64_t i = i0 + g + r;
      int64_t see = i < i0 + rows ? kn : 0;
      if (k->causal && see) see = i + off - j0 + 1 < kn ? i + off - j0 + 1 : kn;
      const float li = see > 0 ? l[i] : 0.0f;
      const float dl = see > 0 ? t->delta[i] : 0.0f;
      float *pr = p + r * KB, *dr = ds + r * KB;
      for (int j = 0; j < KB; ++j) {
        pr[j] = mb__cpu_selectf(j < see, mb__cpu_expf(pr[j] - li), 0.0f);
        dr[j] = pr[j] * (dr[j] - dl);
      }
    }
    mb__cpu_att_accumulate(t->dq + (i0 + g) * dp, ds, t->kr, k_ones, kn4, dp);
  }
  transpose_tile(t->t, t->p, rows4);
  for (int64_t j = 0; j < kn4; j += RG)
    mb__cpu_att_accumulate(t->dv + (j0 + j) * dp, t->t + j * QB, t->dout,
                           k_ones, rows4, dp);
  transpose_tile(t->t, t->ds, rows4);
  for (int64_t j = 0; j < kn4; j += RG)
    mb__cpu_att_accumulate(t->dk + (j0 + j) * dp, t->t + j * QB, t->q, k_ones,
                           rows4, dp);
}

/* `n` rows of acc (dp apart) times f, rounded into out at the rows of
 * (b, head) of a tensor with `heads` heads and `seq` rows per head. */
static void store_rows(const attention_bwd_c_t *k, void *out, float *acc,
                       int64_t n, float f, int64_t b, int64_t head,
                       int64_t heads, int64_t seq, int64_t ld) {
  const size_t off0 = mb__cpu_att_row(k->bshd, k->d, b, head, heads, seq, 0);
  for (int64_t r = 0; r < n; ++r) {
    float *row = acc + r * k->dp;
    for (int64_t c = 0; c < k->d; ++c) row[c] *= f;
    mb__cpu_store_f32(out, k->dtype, off0 + (size_t)(r * ld), row,
                      (size_t)k->d);
  }
}

/* Every gradient of (batch b, K/V head g). */
static void kv_head(const attention_bwd_c_t *k, const tile_t *t,
                    const mb_kernel_call_t *call, int64_t b, int64_t g) {
  const int64_t dp = k->dp, off = k->skv - k->sq;
  for (int64_t e = 0; e < 2 * k->skvp * dp; ++e) t->dk[e] = 0.0f; /* dk, dv */
  for (int64_t h = g * k->group; h < (g + 1) * k->group; ++h) {
    row_deltas(k, t, call, b, h);
    for (int64_t e = 0; e < k->sqp * dp; ++e) t->dq[e] = 0.0f;
    for (int64_t j0 = 0; j0 < k->skv; j0 += KB) {
      const int64_t kn = k->skv - j0 < KB ? k->skv - j0 : KB;
      const size_t koff =
          mb__cpu_att_row(k->bshd, k->d, b, g, k->kv_heads, k->skv, j0);
      mb__cpu_att_load_rows(t->kr, call->in[1], k->dtype, koff, k->kv_ld, kn,
                            k->d, dp, KB);
      mb__cpu_att_load_rows(t->vr, call->in[2], k->dtype, koff, k->kv_ld, kn,
                            k->d, dp, KB);
      transpose_block(t->kt, t->kr, dp);
      transpose_block(t->vt, t->vr, dp);
      /* The first query that sees key j0 (causal: j0 - (Skv - Sq)). */
      const int64_t first = k->causal && j0 > off ? j0 - off : 0;
      for (int64_t i0 = first / QB * QB; i0 < k->sq; i0 += QB)
        tile_step(k, t, call, b, h, i0, k->sq - i0 < QB ? k->sq - i0 : QB, j0,
                  kn);
    }
    store_rows(k, call->out[0], t->dq, k->sq, k->scale, b, h, k->heads, k->sq,
               k->ld);
  }
  store_rows(k, call->out[1], t->dk, k->skv, k->scale, b, g, k->kv_heads,
             k->skv, k->kv_ld);
  store_rows(k, call->out[2], t->dv, k->skv, 1.0f, b, g, k->kv_heads, k->skv,
             k->kv_ld);
}

mb_status_t mb__cpu_attention_bwd_c_prepare(void *bstate,
                                            const mb_kernel_call_t *call,
                                            void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  const mb_status_t status = mb__cpu_float_dtype(st, "attention_bwd", p->dtype);
  if (status != MB_OK) return status;
  attention_bwd_c_t *k = malloc(sizeof *k);
  const int64_t dp = (p->shape[4] + VEC - 1) / VEC * VEC;
  const int64_t sqp = (p->shape[2] + QB - 1) / QB * QB;
  const int64_t skvp = (p->shape[3] + KB - 1) / KB * KB;
  const size_t per_thread = tile_floats(dp, sqp, skvp);
  float *scratch = malloc((size_t)st->threads * per_thread * sizeof *scratch);
  if (!k || !scratch) {
    free(k);
    free(scratch);
    MB_CPU_ERROR(st, "cpu/c: attention_bwd: out of memory for %u x %zu floats",
                 st->threads, per_thread);
    return MB_ERR_NO_MEMORY;
  }
  const int bshd = (p->flags & MB_PARAM_BSHD) != 0;
  /* 0 (params not resolved) is the op's default, H. */
  const int64_t kvh = p->kv_heads ? p->kv_heads : p->shape[1];
  *k = (attention_bwd_c_t){p->shape[0],
                           p->shape[1],
                           kvh,
                           p->shape[1] / kvh,
                           p->shape[2],
                           p->shape[3],
                           p->shape[4],
                           dp,
                           sqp,
                           skvp,
                           bshd ? p->shape[1] * p->shape[4] : p->shape[4],
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

mb_status_t mb__cpu_attention_bwd_c_run(void *kstate,
                                        const mb_kernel_call_t *call) {
  const attention_bwd_c_t *k = kstate;
  const int64_t tasks = k->batch * k->kv_heads;
#pragma omp parallel num_threads(k->threads) if (tasks > 1)
  {
    const tile_t t = carve(k->scratch + mb__cpu_thread_id() * k->scratch_floats,
                           k->dp, k->sqp, k->skvp);
#pragma omp for schedule(dynamic, 1)
    for (int64_t task = 0; task < tasks; ++task)
      kv_head(k, &t, call, task / k->kv_heads, task % k->kv_heads);
  }
  return MB_OK;
}

void mb__cpu_attention_bwd_c_release(void *kstate) {
  attention_bwd_c_t *k = kstate;
  if (!k) return;
  free(k->scratch);
  free(k);
}
