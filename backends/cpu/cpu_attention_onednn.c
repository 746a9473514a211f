/* CPU backend — bf16 attention, flash-attention tiling on oneDNN matmuls.
 *
 * For each (batch, head, block of QT queries) — the tasks dealt across the
 * pinned threads — and each block of KT keys: S = Q_blk K_blk^T (a bf16
 * matmul with f32 accumulation, on AMX tiles where oneDNN has them), the
 * online softmax in f32 (running max m and sum l per query; when m grows
 * what was accumulated is rescaled by exp(m_old - m_new)), and O += P V_blk
 * (the f32 steps: cpu_attention_loops.c).
 *
 * P is not rounded to bf16: the op's tolerance (attention_tolerance) fails
 * a kernel that does (~2^-9 of the output's scale). Each p is split into
 * two bf16 terms, hi = bf16(p) and lo = bf16(p - hi) (p - hi is exact in
 * f32), so p = hi + lo to within 2^-16 |p|: the output is then off by at
 * most 2^-16 sum_j p_j |v_j| (and, the residuals' signs mixing, far less),
 * inside the u(f32) (4 sqrt(Skv) + 16) of that scale the op allows (2^-14
 * at Skv = 4096). The two are stacked as the rows of one (2 QT) x KT bf16
 * matrix; one bf16 matmul against V (exact products, f32 sums) gives the
 * two partial outputs, added in f32. Twice the P V arithmetic, on the bf16
 * units: as fast as an f32 P V where bf16 runs at twice the f32 FMA rate
 * (AVX512-BF16), 8x faster on AMX. (Three terms, p to 2^-24, cost a third
 * more time for accuracy the op does not ask.)
 *
 * K and V are packed once per run into the blocked layout the matmuls
 * want (a reorder per key block, from the input in place or, for a last,
 * partial block, from a zero-padded copy): read in place, each matmul
 * would copy its block again for every query block (its scratchpad),
 * Sq / QT times. The packing goes a group of K/V heads at a time, within
 * MB_ATT_PACK_BYTES, each group's query blocks after it. Every primitive is
 * created once at prepare time, with fixed shapes; Q is copied per query
 * block (zero past the last query). Each thread has its own stream, memory
 * objects and scratchpads, and runs the primitives single-threaded (oneDNN
 * runs sequentially inside an OpenMP parallel region).
 *
 * Causal (bottom-right aligned, query i sees keys j <= i + Skv - Sq): key
 * blocks past the query block's last visible key are skipped, the others
 * masked per row. FLOPs are the op's (unmasked pairs only), so the masked
 * part of the diagonal blocks is work not credited. A key block whose
 * visible keys all lie in its first half (the diagonal block of every
 * other query block at Sq = Skv) runs on a second pair of matmuls over
 * half as many keys, KT / 2, its half of K and V packed for them too. */
#include "cpu_attention.h"
#include "cpu_attention_tile.h"
#include "cpu_onednn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { AQ = MB_ATT_AQ, NT = MB_ATT_NT };
/* The packed K and V of at most this many bytes at a time (at least one
 * K/V head's, 2 MiB at Skv = 4096, D = 128): a group's blocks stay in the
 * caches while its query blocks read them, and the two barriers a group
 * costs did not show (1 and 64 MiB ran alike at 1 x 16 x 4096 x 128). */
#define MB_ATT_PACK_BYTES ((size_t)1 << 20)

/* The matmuls S = Q K^T and C = P V, on packed weights; the reorders that
 * pack a K^T or V block from the input in place or from the padded copy;
 * each over a whole key block (FULL) and, causal, its first half (HALF). */
enum { QK, PV, NMM };
enum { R_K, R_KPAD, R_V, R_VPAD, NRE };
enum { FULL, HALF, NV };

typedef struct thread_bufs {
  mb_att_tile_t tile;
  dnnl_stream_t stream;
  dnnl_memory_t src[NV][NMM], wei[NV][NMM], dst[NV][NMM], scratch[NV][NMM];
  dnnl_memory_t rsrc[NV][NRE], rdst[NV][NMM]; /* the reorders' ends */
  uint16_t *q;                                /* AQ x d bf16 */
  uint16_t *kpad; /* kt x d: the last key block, zero padded */
  uint16_t *vpad; /* kt x d */
} thread_bufs_t;

typedef struct attention_dnnl {
  int64_t bh, sq, skv, d, kt, nblk;
  int64_t heads, ld, kv_heads, kv_ld;
  int64_t group; /* K/V heads packed at a time */
  int causal, bshd;
  int nv; /* matmul variants: FULL, and HALF when causal */
  mb_att_softmax_fn softmax;
  mb_att_accumulate_fn accumulate;
  unsigned threads;
  mb_cpu_state_t *st; /* for the run's error message */
  dnnl_primitive_t mm[NV][NMM], re[NV][NRE];
  dnnl_memory_desc_t packed[NV][NMM]; /* a packed K^T block, V block */
  size_t psize[NV][NMM];              /* their bytes */
  size_t block;                       /* a key block's in the pack */
  char *pack; /* group x nblk x (K^T, V; causal, their halves too) */
  thread_bufs_t *t;
} attention_dnnl_t;

static void release_bufs(thread_bufs_t *t) {
  for (int v = 0; v < NV; ++v) {
    dnnl_memory_t *mems[] = {t->src[v], t->wei[v], t->dst[v], t->scratch[v],
                             t->rdst[v]};
    for (size_t g = 0; g < sizeof mems / sizeof *mems; ++g)
      for (int i = 0; i < NMM; ++i)
        if (mems[g][i]) dnnl_memory_destroy(mems[g][i]);
    for (int i = 0; i < NRE; ++i)
      if (t->rsrc[v][i]) dnnl_memory_destroy(t->rsrc[v][i]);
  }
  if (t->stream) dnnl_stream_destroy(t->stream);
  free(t->q);
  free(t->tile.s);
  free(t->tile.p);
  free(t->tile.c);
  free(t->tile.o);
  free(t->tile.m);
  free(t->kpad);
  free(t->vpad);
}

void mb__cpu_attention_onednn_release(void *kstate) {
  attention_dnnl_t *k = kstate;
  if (!k) return;
  if (k->t)
    for (unsigned i = 0; i < k->threads; ++i) release_bufs(&k->t[i]);
  for (int v = 0; v < NV; ++v) {
    for (int i = 0; i < NMM; ++i)
      if (k->mm[v][i]) dnnl_primitive_destroy(k->mm[v][i]);
    for (int i = 0; i < NRE; ++i)
      if (k->re[v][i]) dnnl_primitive_destroy(k->re[v][i]);
  }
  free(k->pack);
  free(k->t);
  free(k);
}

/* A rows x cols matrix whose (r, c) element is at r rs + c cs. */
static dnnl_status_t md(dnnl_memory_desc_t *d, int64_t rows, int64_t cols,
                        dnnl_data_type_t dt, int64_t rs, int64_t cs) {
  const dnnl_dims_t dims = {rows, cols}, strides = {rs, cs};
  return dnnl_memory_desc_init_by_strides(d, 2, dims, dt, strides);
}

/* Keys a block of variant v. */
static int64_t kt_of(const attention_dnnl_t *k, int v) {
  return v == HALF ? k->kt / 2 : k->kt;
}

/* Matmul i's src and dst (its weights: the layout oneDNN picks). */
static dnnl_status_t mm_mds(const attention_dnnl_t *k, int v, int i,
                            dnnl_memory_desc_t *src, dnnl_memory_desc_t *dst) {
  const int64_t d = k->d, kt = kt_of(k, v), rows = i == QK ? AQ : NT * AQ;
  const int64_t in = i == QK ? d : kt, out = i == QK ? kt : d;
  const dnnl_status_t s = md(src, rows, in, dnnl_bf16, in, 1);
  return s == dnnl_success ? md(dst, rows, out, dnnl_f32, out, 1) : s;
}

/* Reorder i's source: K^T (d x kt) or V (kt x d), in place (rows kv_ld
 * apart) or the padded copy (d apart). */
static dnnl_status_t re_md(const attention_dnnl_t *k, int v, int i,
                           dnnl_memory_desc_t *m) {
  const int64_t ld = i == R_K || i == R_V ? k->kv_ld : k->d, kt = kt_of(k, v);
  return i == R_K || i == R_KPAD ? md(m, k->d, kt, dnnl_bf16, 1, ld)
                                 : md(m, kt, k->d, dnnl_bf16, ld, 1);
}

static const char *const k_mm_names[NMM] = {"attention Q K^T", "attention P V"};

/* Creates matmul i of variant v (its weights' packed layout into
 * k->packed[v][i]) and the two reorders that pack them; `scratch` gets the
 * matmul's scratchpad. */
static mb_status_t build(mb_cpu_state_t *st, attention_dnnl_t *k, int v, int i,
                         dnnl_memory_desc_t *scratch) {
  const int64_t rows = i == QK ? AQ : NT * AQ, kt = kt_of(k, v);
  mb_status_t status = mb__cpu_onednn_packed_matmul(
      st, k_mm_names[i], rows, i == QK ? k->d : kt, i == QK ? kt : k->d,
      &k->mm[v][i], &k->packed[v][i], scratch);
  if (status == MB_OK)
    k->psize[v][i] = dnnl_memory_desc_get_size(&k->packed[v][i]);
  for (int r = 2 * i; r < 2 * i + 2 && status == MB_OK; ++r) {
    dnnl_memory_desc_t from;
    if (re_md(k, v, r, &from) != dnnl_success) return MB_ERR_BACKEND;
    status = mb__cpu_onednn_reorder(st, k_mm_names[i], &from, &k->packed[v][i],
                                    &k->re[v][r]);
  }
  return status;
}

typedef struct build_args {
  mb_cpu_state_t *st;
  attention_dnnl_t *k;
  dnnl_memory_desc_t (*scratch)[NMM]; /* NV x NMM */
} build_args_t;

/* The primitives, each run by one thread at a time on its own (with that
 * thread's scratchpad): created for one thread (mb__cpu_onednn_one_thread). */
static mb_status_t build_all(void *arg) {
  const build_args_t *b = arg;
  mb_status_t status = MB_OK;
  for (int v = 0; v < b->k->nv; ++v)
    for (int i = 0; i < NMM && status == MB_OK; ++i)
      status = build(b->st, b->k, v, i, &b->scratch[v][i]);
  return status;
}

/* Thread t's buffers, streams and memory objects. */
static mb_status_t make_bufs(mb_cpu_state_t *st, attention_dnnl_t *k,
                             thread_bufs_t *t,
                             const dnnl_memory_desc_t scratch[NV][NMM]) {
  const size_t d = (size_t)k->d, kt = (size_t)k->kt;
  mb_att_tile_t *a = &t->tile;
  t->q = calloc(AQ * d, sizeof *t->q);
  a->s = malloc(AQ * kt * sizeof *a->s);
  a->p = malloc(NT * AQ * kt * sizeof *a->p);
  a->c = malloc(NT * AQ * d * sizeof *a->c);
  a->o = malloc(AQ * d * sizeof *a->o);
  a->m = malloc(2 * AQ * sizeof *a->m);
  a->l = a->m ? a->m + AQ : NULL;
  a->kt = k->kt;
  a->d = k->d;
  a->scale = (float)(1.0 / sqrt((double)k->d));
  t->kpad = calloc(kt * d, sizeof *t->kpad);
  t->vpad = calloc(kt * d, sizeof *t->vpad);
  if (!t->q || !a->s || !a->p || !a->c || !a->o || !a->m || !t->kpad ||
      !t->vpad) {
    MB_CPU_ERROR(st, "cpu/onednn: attention: out of memory for tiles");
    return MB_ERR_NO_MEMORY;
  }
  dnnl_status_t s =
      dnnl_stream_create(&t->stream, st->engine, dnnl_stream_default_flags);
  /* Handles pointed at each block before it runs: the packed blocks, the
   * in-place K and V (oneDNN only reads through those). HALF's S and P
   * are the first AQ x kt / 2 and NT AQ x kt / 2 of the same buffers. */
  for (int v = 0; v < k->nv; ++v) {
    for (int i = 0; i < NMM && s == dnnl_success; ++i) {
      dnnl_memory_desc_t src, dst;
      s = mm_mds(k, v, i, &src, &dst);
      if (s == dnnl_success)
        s = dnnl_memory_create(&t->src[v][i], &src, st->engine,
                               i == QK ? (void *)t->q : (void *)a->p);
      if (s == dnnl_success)
        s = dnnl_memory_create(&t->wei[v][i], &k->packed[v][i], st->engine,
                               DNNL_MEMORY_NONE);
      if (s == dnnl_success)
        s = dnnl_memory_create(&t->dst[v][i], &dst, st->engine,
                               i == QK ? (void *)a->s : (void *)a->c);
      if (s == dnnl_success && dnnl_memory_desc_get_size(&scratch[v][i]) > 0)
        s = dnnl_memory_create(&t->scratch[v][i], &scratch[v][i], st->engine,
                               DNNL_MEMORY_ALLOCATE);
      if (s == dnnl_success)
        s = dnnl_memory_create(&t->rdst[v][i], &k->packed[v][i], st->engine,
                               DNNL_MEMORY_NONE);
    }
    for (int r = 0; r < NRE && s == dnnl_success; ++r) {
      dnnl_memory_desc_t from;
      void *pad = r == R_KPAD ? t->kpad : r == R_VPAD ? t->vpad : NULL;
      s = re_md(k, v, r, &from);
      if (s == dnnl_success)
        s = dnnl_memory_create(&t->rsrc[v][r], &from, st->engine,
                               pad ? pad : DNNL_MEMORY_NONE);
    }
  }
  if (s == dnnl_success) return MB_OK;
  MB_CPU_ERROR(st, "cpu/onednn: attention: memory objects: %s",
               dnnl_status2str(s));
  return MB_ERR_BACKEND;
}

mb_status_t mb__cpu_attention_onednn_prepare(void *bstate,
                                             const mb_kernel_call_t *call,
                                             void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  mb_status_t status = mb__cpu_onednn_check(st, "attention bf16");
  if (status != MB_OK) return status;
  attention_dnnl_t *k = calloc(1, sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/onednn: attention: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  const int bshd = (p->flags & MB_PARAM_BSHD) != 0;
  const int64_t kvh = p->kv_heads ? p->kv_heads : p->shape[1];
  k->bh = p->shape[0] * p->shape[1];
  k->heads = p->shape[1];
  k->sq = p->shape[2];
  k->skv = p->shape[3];
  k->d = p->shape[4];
  k->ld = bshd ? p->shape[1] * p->shape[4] : p->shape[4];
  k->kv_heads = kvh;
  k->kv_ld = bshd ? kvh * p->shape[4] : p->shape[4];
  k->causal = (p->flags & MB_PARAM_CAUSAL) != 0;
  k->bshd = bshd;
  k->threads = st->threads;
  k->st = st;
  /* 256 keys a block, causal too: 128 would halve the masked work on the
   * diagonal (3 % of the pairs at Sq = Skv = 4096, against 6 %), but the
   * smaller matmuls cost more (on the Zen 4 VM, 4 rounds interleaved:
   * 47.1 -> 48.6 % of the peak at the median with 256). Causal, the
   * diagonal blocks whose visible keys fit in 128 run on 128 (HALF). */
  k->kt = 256;
  k->nv = k->causal ? NV : 1;
  k->nblk = (k->skv + k->kt - 1) / k->kt;
  mb__cpu_att_loops(k->kt, &k->softmax, &k->accumulate);
  dnnl_memory_desc_t scratch[NV][NMM];
  build_args_t b = {st, k, scratch};
  status = mb__cpu_onednn_one_thread(build_all, &b);
  if (status == MB_OK) {
    for (int v = 0; v < k->nv; ++v)
      k->block += k->psize[v][QK] + k->psize[v][PV];
    const size_t head = (size_t)k->nblk * k->block;
    const int64_t kvbh = p->shape[0] * kvh;
    k->group = (int64_t)(MB_ATT_PACK_BYTES / head);
    k->group = k->group < 1 ? 1 : k->group > kvbh ? kvbh : k->group;
    k->pack = malloc((size_t)k->group * head);
    k->t = calloc(k->threads, sizeof *k->t);
    if (!k->pack || !k->t) {
      MB_CPU_ERROR(st, "cpu/onednn: attention: out of memory");
      status = MB_ERR_NO_MEMORY;
    }
  }
  for (unsigned i = 0; i < k->threads && status == MB_OK; ++i)
    status = make_bufs(st, k, &k->t[i], scratch);
  if (status != MB_OK) {
    mb__cpu_attention_onednn_release(k);
    return status;
  }
  *kstate = k;
  return MB_OK;
}

static int matmul(const attention_dnnl_t *k, thread_bufs_t *t, int v, int i,
                  void *packed) {
  const dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, t->src[v][i]},
                                   {DNNL_ARG_WEIGHTS, t->wei[v][i]},
                                   {DNNL_ARG_DST, t->dst[v][i]},
                                   {DNNL_ARG_SCRATCHPAD, t->scratch[v][i]}};
  return dnnl_memory_set_data_handle(t->wei[v][i], packed) == dnnl_success &&
         mb__cpu_onednn_exec(k->mm[v][i], t->stream, t->scratch[v][i] ? 4 : 3,
                             args) == dnnl_success;
}

/* Key block j of K/V head g (of the group at g0) in the pack, variant v's
 * matmul i's weights: K^T, V, then (causal) their halves. */
static char *packed(const attention_dnnl_t *k, int64_t g, int64_t j, int v,
                    int i) {
  size_t at = ((size_t)g * (size_t)k->nblk + (size_t)j) * k->block;
  for (int u = 0; u < v; ++u) at += k->psize[u][QK] + k->psize[u][PV];
  return k->pack + at + (i == PV ? k->psize[v][QK] : 0);
}

/* Packs key block j of K/V head kvbh (batch b, head kvh) into slot g. */
static int pack_block(const attention_dnnl_t *k, thread_bufs_t *t,
                      const uint16_t *kp, const uint16_t *vp, int64_t kvbh,
                      int64_t g, int64_t j) {
  const int64_t d = k->d, j0 = j * k->kt, b = kvbh / k->kv_heads;
  const size_t off = mb__cpu_att_row(k->bshd, d, b, kvbh % k->kv_heads,
                                     k->kv_heads, k->skv, j0);
  const int64_t kn = k->skv - j0 < k->kt ? k->skv - j0 : k->kt;
  /* The last, partial block: zero padded (its rows past kn stay zero). */
  for (int64_t r = 0; kn < k->kt && r < kn; ++r) {
    memcpy(t->kpad + r * d, kp + off + (size_t)(r * k->kv_ld), (size_t)d * 2);
    memcpy(t->vpad + r * d, vp + off + (size_t)(r * k->kv_ld), (size_t)d * 2);
  }
  for (int v = 0; v < k->nv; ++v)
    for (int i = 0; i < NMM; ++i) {
      const int pad = kn < kt_of(k, v), r = (i == QK ? R_K : R_V) + pad;
      const void *from = i == QK ? kp + off : vp + off;
      const dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, t->rsrc[v][r]},
                                       {DNNL_ARG_TO, t->rdst[v][i]}};
      if ((!pad && dnnl_memory_set_data_handle(t->rsrc[v][r], (void *)from) !=
                       dnnl_success) ||
          dnnl_memory_set_data_handle(t->rdst[v][i], packed(k, g, j, v, i)) !=
              dnnl_success ||
          mb__cpu_onednn_exec(k->re[v][r], t->stream, 2, args) != dnnl_success)
        return 0;
    }
  return 1;
}

/* Queries [i0, i0 + rows) of (batch, head) bh, its K/V in slot g of the
 * pack; 0 when a matmul failed. */
static int query_block(const attention_dnnl_t *k, thread_bufs_t *t,
                       const uint16_t *q, void *op, int64_t bh, int64_t g,
                       int64_t i0, int64_t rows) {
  mb_att_tile_t *a = &t->tile;
  const int64_t d = k->d, kt = k->kt, off = k->skv - k->sq;
  const int64_t b = bh / k->heads, h = bh % k->heads;
  const size_t qoff = mb__cpu_att_row(k->bshd, d, b, h, k->heads, k->sq, i0);
  for (int64_t r = 0; r < AQ; ++r) {
    if (r < rows)
      memcpy(t->q + r * d, q + qoff + (size_t)(r * k->ld), (size_t)d * 2);
    else
      memset(t->q + r * d, 0, (size_t)d * 2);
    a->m[r] = -INFINITY;
    a->l[r] = 0.0f;
  }
  memset(a->o, 0, (size_t)(AQ * d) * sizeof *a->o);
  const int64_t last = k->causal ? i0 + rows - 1 + off : k->skv - 1;
  for (int64_t j0 = 0; j0 <= last; j0 += kt) {
    /* Every visible key of the block in its first half: HALF's matmuls. */
    const int v = k->nv > 1 && last - j0 < kt / 2 ? HALF : FULL;
    const int64_t kv = kt_of(k, v);
    const int64_t kn = k->skv - j0 < kv ? k->skv - j0 : kv;
    a->kt = kv;
    if (!matmul(k, t, v, QK, packed(k, g, j0 / kt, v, QK))) return 0;
    int64_t see[AQ];
    float alpha[AQ];
    for (int64_t r = 0; r < AQ; ++r) {
      const int64_t vis = k->causal ? i0 + r + off - j0 + 1 : kn;
      see[r] = vis < 0 ? 0 : vis < kn ? vis : kn;
    }
    k->softmax(a, see, alpha);
    if (!matmul(k, t, v, PV, packed(k, g, j0 / kt, v, PV))) return 0;
    k->accumulate(a, alpha);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float *o = a->o + r * d;
    const float inv = 1.0f / a->l[r];
    for (int64_t e = 0; e < d; ++e) o[e] *= inv;
    mb__cpu_store_f32(op, MB_DTYPE_BF16, qoff + (size_t)(r * k->ld), o,
                      (size_t)d);
  }
  return 1;
}

mb_status_t mb__cpu_attention_onednn_run(void *kstate,
                                         const mb_kernel_call_t *call) {
  attention_dnnl_t *k = kstate;
  const int64_t blocks = (k->sq + AQ - 1) / AQ;
  const int64_t per_kv = k->heads / k->kv_heads; /* query heads per K/V head */
  const int64_t kvbh = k->bh / per_kv;
  const uint16_t *q = call->in[0], *kp = call->in[1], *v = call->in[2];
  void *o = call->out[0];
  int ok = 1;
  for (int64_t g0 = 0; g0 < kvbh && ok; g0 += k->group) {
    const int64_t ng = kvbh - g0 < k->group ? kvbh - g0 : k->group;
    const int64_t packs = ng * k->nblk, tasks = ng * per_kv * blocks;
#pragma omp parallel num_threads(k->threads) reduction(&& : ok)
    {
      thread_bufs_t *t = &k->t[mb__cpu_thread_id()];
#pragma omp for schedule(static)
      for (int64_t i = 0; i < packs; ++i)
        if (ok)
          ok = pack_block(k, t, kp, v, g0 + i / k->nblk, i / k->nblk,
                          i % k->nblk);
#pragma omp for schedule(dynamic, 1)
      for (int64_t task = 0; task < tasks; ++task) {
        /* Causal blocks differ in work: the longest (last) ones first. */
        const int64_t rev = k->causal ? tasks - 1 - task : task;
        const int64_t g = rev / (per_kv * blocks), i0 = rev % blocks * AQ;
        const int64_t kvg = g0 + g; /* batch * Hkv + K/V head */
        const int64_t bh = kvg / k->kv_heads * k->heads +
                           kvg % k->kv_heads * per_kv + rev / blocks % per_kv;
        if (ok)
          ok = query_block(k, t, q, o, bh, g, i0,
                           k->sq - i0 < AQ ? k->sq - i0 : AQ);
      }
    }
  }
  if (ok) return MB_OK;
  MB_CPU_ERROR(k->st, "cpu/onednn: attention: a tile matmul failed");
  return MB_ERR_BACKEND;
}
