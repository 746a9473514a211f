/* CPU backend — bf16 attention, flash-attention tiling on oneDNN matmuls.
 *
 * For each (batch, head, block of QT queries) — the tasks dealt across the
 * pinned threads — and each block of KT keys: S = Q_blk K_blk^T (a bf16
 * matmul with f32 accumulation, on AMX tiles where oneDNN has them), the
 * online softmax in f32 (running max m and sum l per query; when m grows
 * what was accumulated is rescaled by exp(m_old - m_new)), and O += P V_blk.
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
 * Every matmul primitive is created once at prepare time, with fixed shapes:
 * K^T and V are read in place (strided memory descriptors; BSHD rows are
 * Hkv D apart), except a last, partial key block, copied into zero-padded
 * buffers with primitives of their own; Q is copied per query block (zero
 * past the last query). Each thread has its own stream, memory objects and
 * scratchpads, and runs the primitives single-threaded (oneDNN runs
 * sequentially inside an OpenMP parallel region).
 *
 * Causal (bottom-right aligned, query i sees keys j <= i + Skv - Sq): key
 * blocks past the query block's last visible key are skipped, the others
 * masked per row. FLOPs are the op's (unmasked pairs only), so the masked
 * part of the diagonal blocks is work not credited.
 *
 * The softmax and the accumulation run on AVX-512 where the CPU has it
 * (chosen at prepare time; bf16 rounded by VCVTNEPS2BF16 where it has
 * AVX512-BF16, the same answer), else portable loops; MB_CPU_NO_AVX512 set
 * in the environment keeps the portable ones, to test them on such a CPU. */
#include "cpu_attention.h"
#include "cpu_onednn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { AQ = 128 /* queries per block */, NT = 2 /* bf16 terms of p */ };

/* The matmuls: S = Q K^T and C = P3 V, each over the input's K/V (strided)
 * or the padded tail copy. */
enum { QK, QK_TAIL, PV, PV_TAIL, NPRIM };

struct attention_dnnl;
struct thread_bufs;
/* One key block's online softmax; o = alpha o + c (cpu_attention_onednn.c). */
typedef void (*softmax_fn)(const struct attention_dnnl *k,
                           struct thread_bufs *t, const int64_t *see,
                           float *alpha);
typedef void (*accumulate_fn)(const struct attention_dnnl *k,
                              struct thread_bufs *t, const float *alpha);

typedef struct thread_bufs {
  dnnl_stream_t stream;
  dnnl_memory_t src[NPRIM], wei[NPRIM], dst[NPRIM], scratch[NPRIM];
  uint16_t *q;    /* AQ x d bf16 */
  float *s;       /* AQ x kt scores */
  uint16_t *p;    /* NT AQ x kt: the hi rows, then the lo rows */
  float *c;       /* NT AQ x d partial outputs */
  float *o;       /* AQ x d unnormalised outputs */
  float *m, *l;   /* AQ running max and sum */
  uint16_t *kpad; /* kt x d: the last key block, zero padded */
  uint16_t *vpad; /* kt x d */
} thread_bufs_t;

typedef struct attention_dnnl {
  int64_t bh, sq, skv, d, kt;
  int64_t heads, ld, kv_heads, kv_ld;
  int causal, bshd;
  softmax_fn softmax;       /* portable or AVX-512 (kt % 16 == 0) */
  accumulate_fn accumulate; /* the same */
  unsigned threads;
  mb_cpu_state_t *st; /* for the run's error message */
  float scale;
  dnnl_primitive_t prim[NPRIM];
  thread_bufs_t *t;
} attention_dnnl_t;

static void choose_loops(attention_dnnl_t *k);

static void release_bufs(thread_bufs_t *t) {
  for (int i = 0; i < NPRIM; ++i) {
    if (t->src[i]) dnnl_memory_destroy(t->src[i]);
    if (t->wei[i]) dnnl_memory_destroy(t->wei[i]);
    if (t->dst[i]) dnnl_memory_destroy(t->dst[i]);
    if (t->scratch[i]) dnnl_memory_destroy(t->scratch[i]);
  }
  if (t->stream) dnnl_stream_destroy(t->stream);
  free(t->q);
  free(t->s);
  free(t->p);
  free(t->c);
  free(t->o);
  free(t->m);
  free(t->kpad);
  free(t->vpad);
}

void mb__cpu_attention_onednn_release(void *kstate) {
  attention_dnnl_t *k = kstate;
  if (!k) return;
  if (k->t)
    for (unsigned i = 0; i < k->threads; ++i) release_bufs(&k->t[i]);
  for (int i = 0; i < NPRIM; ++i)
    if (k->prim[i]) dnnl_primitive_destroy(k->prim[i]);
  free(k->t);
  free(k);
}

/* A rows x cols matrix whose (r, c) element is at r rs + c cs. */
static dnnl_status_t md(dnnl_memory_desc_t *d, int64_t rows, int64_t cols,
                        dnnl_data_type_t dt, int64_t rs, int64_t cs) {
  const dnnl_dims_t dims = {rows, cols}, strides = {rs, cs};
  return dnnl_memory_desc_init_by_strides(d, 2, dims, dt, strides);
}

/* The four primitives' descriptors: src, weights, dst. */
static dnnl_status_t prim_mds(const attention_dnnl_t *k, int i,
                              dnnl_memory_desc_t m[3]) {
  const int64_t d = k->d, kt = k->kt;
  const int64_t ld = i == QK || i == PV ? k->kv_ld : d;
  dnnl_status_t s;
  if (i == QK || i == QK_TAIL) {
    s = md(&m[0], AQ, d, dnnl_bf16, d, 1);
    if (s == dnnl_success) s = md(&m[1], d, kt, dnnl_bf16, 1, ld); /* K^T */
    if (s == dnnl_success) s = md(&m[2], AQ, kt, dnnl_f32, kt, 1);
  } else {
    s = md(&m[0], NT * AQ, kt, dnnl_bf16, kt, 1);
    if (s == dnnl_success) s = md(&m[1], kt, d, dnnl_bf16, ld, 1);
    if (s == dnnl_success) s = md(&m[2], NT * AQ, d, dnnl_f32, d, 1);
  }
  return s;
}

static const char *const k_prim_names[NPRIM] = {"Q K^T", "Q K^T (tail)", "P V",
                                                "P V (tail)"};

/* Creates primitive i; `scratch` gets its scratchpad's descriptor. */
static mb_status_t build(mb_cpu_state_t *st, attention_dnnl_t *k, int i,
                         dnnl_memory_desc_t *scratch) {
  dnnl_memory_desc_t m[3];
  dnnl_matmul_desc_t desc;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t s = prim_mds(k, i, m);
  if (s == dnnl_success)
    s = dnnl_matmul_desc_init(&desc, &m[0], &m[1], NULL, &m[2]);
  if (s == dnnl_success) s = dnnl_primitive_attr_create(&attr);
  /* Our scratchpad, one per thread: none is allocated inside the run. */
  if (s == dnnl_success)
    s = dnnl_primitive_attr_set_scratchpad_mode(attr,
                                                dnnl_scratchpad_mode_user);
  if (s == dnnl_success)
    s = dnnl_primitive_desc_create(&pd, &desc, attr, st->engine, NULL);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (s == dnnl_success) {
    const char *impl = NULL;
    *scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
        dnnl_success)
      impl = NULL;
    MB_CPU_LOG(st, MB_LOG_DEBUG,
               "cpu/onednn: attention %s uses %s: scratchpad %zu bytes",
               k_prim_names[i], impl ? impl : "?",
               dnnl_memory_desc_get_size(scratch));
    s = dnnl_primitive_create(&k->prim[i], pd);
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (s == dnnl_success) return MB_OK;
  MB_CPU_ERROR(st, "cpu/onednn: attention: %s matmul: %s", k_prim_names[i],
               dnnl_status2str(s));
  return MB_ERR_UNSUPPORTED;
}

typedef struct build_args {
  mb_cpu_state_t *st;
  attention_dnnl_t *k;
  dnnl_memory_desc_t *scratch; /* NPRIM */
} build_args_t;

/* The primitives, each run by one thread at a time on its own (with that
 * thread's scratchpad): created for one thread (mb__cpu_onednn_one_thread). */
static mb_status_t build_all(void *arg) {
  const build_args_t *b = arg;
  mb_status_t status = MB_OK;
  for (int i = 0; i < NPRIM && status == MB_OK; ++i)
    status = build(b->st, b->k, i, &b->scratch[i]);
  return status;
}

/* Thread t's buffers, streams and memory objects. */
static mb_status_t make_bufs(mb_cpu_state_t *st, attention_dnnl_t *k,
                             thread_bufs_t *t,
                             const dnnl_memory_desc_t scratch[NPRIM]) {
  const size_t d = (size_t)k->d, kt = (size_t)k->kt;
  t->q = calloc(AQ * d, sizeof *t->q);
  t->s = malloc(AQ * kt * sizeof *t->s);
  t->p = malloc(NT * AQ * kt * sizeof *t->p);
  t->c = malloc(NT * AQ * d * sizeof *t->c);
  t->o = malloc(AQ * d * sizeof *t->o);
  t->m = malloc(2 * AQ * sizeof *t->m);
  t->l = t->m ? t->m + AQ : NULL;
  t->kpad = calloc(kt * d, sizeof *t->kpad);
  t->vpad = calloc(kt * d, sizeof *t->vpad);
  if (!t->q || !t->s || !t->p || !t->c || !t->o || !t->m || !t->kpad ||
      !t->vpad) {
    MB_CPU_ERROR(st, "cpu/onednn: attention: out of memory for tiles");
    return MB_ERR_NO_MEMORY;
  }
  dnnl_status_t s =
      dnnl_stream_create(&t->stream, st->engine, dnnl_stream_default_flags);
  for (int i = 0; i < NPRIM && s == dnnl_success; ++i) {
    dnnl_memory_desc_t m[3];
    s = prim_mds(k, i, m);
    const int qk = i == QK || i == QK_TAIL;
    void *pad = i == QK_TAIL ? t->kpad : i == PV_TAIL ? t->vpad : NULL;
    if (s == dnnl_success)
      s = dnnl_memory_create(&t->src[i], &m[0], st->engine,
                             qk ? (void *)t->q : (void *)t->p);
    /* The in-place K and V are pointed at each block before it runs. */
    if (s == dnnl_success)
      s = dnnl_memory_create(&t->wei[i], &m[1], st->engine,
                             pad ? pad : (void *)t->kpad);
    if (s == dnnl_success)
      s = dnnl_memory_create(&t->dst[i], &m[2], st->engine,
                             qk ? (void *)t->s : (void *)t->c);
    if (s == dnnl_success && dnnl_memory_desc_get_size(&scratch[i]) > 0)
      s = dnnl_memory_create(&t->scratch[i], &scratch[i], st->engine,
                             DNNL_MEMORY_ALLOCATE);
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
  k->scale = (float)(1.0 / sqrt((double)p->shape[4]));
  /* Causal: smaller key blocks waste less of the diagonal (masked work). */
  k->kt = k->causal ? 128 : 256;
  choose_loops(k);
  dnnl_memory_desc_t scratch[NPRIM];
  build_args_t b = {st, k, scratch};
  status = mb__cpu_onednn_one_thread(build_all, &b);
  if (status == MB_OK) {
    k->t = calloc(k->threads, sizeof *k->t);
    if (!k->t) {
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

static int exec(const attention_dnnl_t *k, thread_bufs_t *t, int i) {
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, t->src[i]},
                             {DNNL_ARG_WEIGHTS, t->wei[i]},
                             {DNNL_ARG_DST, t->dst[i]},
                             {DNNL_ARG_SCRATCHPAD, t->scratch[i]}};
  dnnl_status_t s = dnnl_primitive_execute(k->prim[i], t->stream,
                                           t->scratch[i] ? 4 : 3, args);
  if (s == dnnl_success) s = dnnl_stream_wait(t->stream);
  return s == dnnl_success;
}

/* p = hi + lo, each bf16 (round to nearest even): p - hi is exact in f32. */
static inline void split2(float p, uint16_t *hi, uint16_t *lo) {
  const uint16_t h = mb__cvt_f32_to_bf16(p);
  *hi = h;
  *lo = mb__cvt_f32_to_bf16(p - mb__cvt_bf16_to_f32(h));
}

/* One block's online softmax for AQ rows: scores in t->s (unscaled), row r
 * sees keys [0, see[r]) of the block; writes P's two bf16 row sets (zero
 * past see[r]) and the rescale factors. The scale is applied to the max
 * alone in the first pass: it is positive and rounding is monotone, so
 * fl(scale max_j s_j) = max_j fl(scale s_j). */
MB_CPU_CLONES static void softmax_block(const attention_dnnl_t *k,
                                        thread_bufs_t *t, const int64_t *see,
                                        float *alpha) {
  const int64_t kt = k->kt;
  for (int r = 0; r < AQ; ++r) {
    const float *restrict s = t->s + r * kt;
    uint16_t *restrict hi = t->p + r * kt, *restrict lo = hi + AQ * kt;
    const int64_t n = see[r];
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; ++j) mx = mb__cpu_maxf(s[j], mx);
    mx = mb__cpu_maxf(mx * k->scale, t->m[r]);
    /* A row that has seen no key yet keeps m = -inf: exp(-inf - 0) = 0. */
    const float base = mx == -INFINITY ? 0.0f : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < kt; ++j) {
      const float e =
          mb__cpu_selectf(j < n, mb__cpu_expf(s[j] * k->scale - base), 0.0f);
      sum += e;
      split2(e, &hi[j], &lo[j]);
    }
    alpha[r] = mb__cpu_expf(t->m[r] - base);
    t->l[r] = t->l[r] * alpha[r] + sum;
    t->m[r] = mx;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "cpu_simd.h"
#include "cpu_simd_bf16.h"
#include "cpu_simd_exp.h"
#define MB_ATT_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define MB_ATT_AVX512BF16 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#define MB_ATT_SW(v) mb__cpu_bf16_sw16(v)
#define MB_ATT_HW(v) mb__cpu_bf16_hw16(v, 0xffff)

MB_ATT_AVX512 static inline __m512 f32x16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* The lanes of keys [j, j + 16) below n. */
static inline __mmask16 visible(int64_t j, int64_t n) {
  return j < n ? (__mmask16)mb__cpu_mask16((size_t)(n - j)) : 0;
}

/* softmax_block on 16 lanes (kt is a multiple of 16): the same steps, the
 * row sum in 16 partial sums, exp's argument s scale - base by one FMA; the
 * keys a row does not see are skipped in the max and stored as zeros
 * without an exp (the masked end of a causal block). What is per row (the
 * new max, the rescale factor's exp, the running sum) is done for 16 rows
 * at a time between the passes: one row at a time it cost as much as 20
 * of the row's vectors (a stand-alone loop on this VM, 128 x 256 block:
 * 11.9 -> 8.8 ns a vector; 128 x 128: 14.2 -> 9.4). CVT rounds to bf16. */
#define MB_ATT_SOFTMAX(name, TARGET, CVT)                                    \
  TARGET static void name(const attention_dnnl_t *k, thread_bufs_t *t,       \
                          const int64_t *see, float *alpha) {                \
    const int64_t kt = k->kt;                                                \
    const __m512 scale = _mm512_set1_ps(k->scale);                           \
    const __m512 ninf = _mm512_set1_ps(-INFINITY);                           \
    float mx[AQ], base[AQ], sum[AQ];                                         \
    for (int r = 0; r < AQ; ++r) {                                           \
      const float *s = t->s + r * kt;                                        \
      __m512 vmx = ninf;                                                     \
      for (int64_t j = 0; j < see[r]; j += 16)                               \
        vmx = _mm512_mask_max_ps(vmx, visible(j, see[r]), vmx,               \
                                 _mm512_loadu_ps(s + j));                    \
      mx[r] = _mm512_reduce_max_ps(vmx);                                     \
    }                                                                        \
    /* A row that has seen no key yet keeps m = -inf: exp(-inf - 0) = 0. */  \
    for (int r = 0; r < AQ; r += 16) {                                       \
      const __m512 old = _mm512_loadu_ps(t->m + r);                          \
      const __m512 m =                                                       \
          _mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(mx + r), scale), old); \
      const __m512 b = _mm512_mask_blend_ps(                                 \
          _mm512_cmp_ps_mask(m, ninf, _CMP_EQ_OQ), m, _mm512_setzero_ps());  \
      _mm512_storeu_ps(base + r, b);                                         \
      _mm512_storeu_ps(alpha + r, mb__cpu_simd_expf(_mm512_sub_ps(old, b))); \
      _mm512_storeu_ps(t->m + r, m);                                         \
    }                                                                        \
    for (int r = 0; r < AQ; ++r) {                                           \
      const float *s = t->s + r * kt;                                        \
      uint16_t *hi = t->p + r * kt, *lo = hi + AQ * kt;                      \
      const int64_t n = see[r];                                              \
      const __m512 vb = _mm512_set1_ps(base[r]);                             \
      __m512 vsum = _mm512_setzero_ps();                                     \
      int64_t j = 0;                                                         \
      for (; j < n; j += 16) {                                               \
        const __m512 e = _mm512_maskz_mov_ps(                                \
            visible(j, n), mb__cpu_simd_expf(_mm512_fmsub_ps(                \
                               _mm512_loadu_ps(s + j), scale, vb)));         \
        vsum = _mm512_add_ps(vsum, e);                                       \
        const __m256i h = CVT(e);                                            \
        _mm256_storeu_si256((__m256i *)(hi + j), h);                         \
        _mm256_storeu_si256((__m256i *)(lo + j),                             \
                            CVT(_mm512_sub_ps(e, f32x16(h))));               \
      }                                                                      \
      for (; j < kt; j += 16) {                                              \
        _mm256_storeu_si256((__m256i *)(hi + j), _mm256_setzero_si256());    \
        _mm256_storeu_si256((__m256i *)(lo + j), _mm256_setzero_si256());    \
      }                                                                      \
      sum[r] = _mm512_reduce_add_ps(vsum);                                   \
    }                                                                        \
    for (int r = 0; r < AQ; r += 16)                                         \
      _mm512_storeu_ps(t->l + r, _mm512_fmadd_ps(_mm512_loadu_ps(t->l + r),  \
                                                 _mm512_loadu_ps(alpha + r), \
                                                 _mm512_loadu_ps(sum + r))); \
  }
MB_ATT_SOFTMAX(softmax_block_avx512, MB_ATT_AVX512, MB_ATT_SW)
MB_ATT_SOFTMAX(softmax_block_avx512bf16, MB_ATT_AVX512BF16, MB_ATT_HW)

MB_ATT_AVX512 static void accumulate_avx512(const attention_dnnl_t *k,
                                            thread_bufs_t *t,
                                            const float *alpha) {
  const int64_t d = k->d, d16 = d / 16 * 16;
  for (int r = 0; r < AQ; ++r) {
    float *o = t->o + r * d;
    const float *c0 = t->c + r * d, *c1 = c0 + AQ * d;
    const __m512 a = _mm512_set1_ps(alpha[r]);
    int64_t e = 0;
    for (; e < d16; e += 16) {
      const __m512 c =
          _mm512_add_ps(_mm512_loadu_ps(c0 + e), _mm512_loadu_ps(c1 + e));
      _mm512_storeu_ps(o + e, _mm512_fmadd_ps(_mm512_loadu_ps(o + e), a, c));
    }
    for (; e < d; ++e) o[e] = o[e] * alpha[r] + (c0[e] + c1[e]);
  }
}
#endif

/* o = alpha o + (c_hi + c_lo), row by row. */
MB_CPU_CLONES static void accumulate(const attention_dnnl_t *k,
                                     thread_bufs_t *t, const float *alpha) {
  const int64_t d = k->d;
  for (int r = 0; r < AQ; ++r) {
    float *restrict o = t->o + r * d;
    const float *restrict c0 = t->c + r * d, *restrict c1 = c0 + AQ * d;
    const float a = alpha[r];
    for (int64_t e = 0; e < d; ++e) o[e] = o[e] * a + (c0[e] + c1[e]);
  }
}

/* The loops this CPU runs (kt is 128 or 256, a multiple of 16). */
static void choose_loops(attention_dnnl_t *k) {
  k->softmax = softmax_block;
  k->accumulate = accumulate;
#if defined(__x86_64__) && defined(__GNUC__)
  if (mb__cpu_has_avx512() && k->kt % 16 == 0) {
    k->softmax = __builtin_cpu_supports("avx512bf16") ? softmax_block_avx512bf16
                                                      : softmax_block_avx512;
    k->accumulate = accumulate_avx512;
  }
#endif
}

/* Queries [i0, i0 + rows) of (batch, head) bh; 0 when a matmul failed. */
static int query_block(const attention_dnnl_t *k, thread_bufs_t *t,
                       const uint16_t *q, const uint16_t *kp,
                       const uint16_t *vp, void *op, int64_t bh, int64_t i0,
                       int64_t rows) {
  const int64_t d = k->d, kt = k->kt, off = k->skv - k->sq;
  const int64_t b = bh / k->heads, h = bh % k->heads;
  const int64_t kvh = h / (k->heads / k->kv_heads);
  const size_t qoff = mb__cpu_att_row(k->bshd, d, b, h, k->heads, k->sq, i0);
  for (int64_t r = 0; r < AQ; ++r) {
    if (r < rows)
      memcpy(t->q + r * d, q + qoff + (size_t)(r * k->ld), (size_t)d * 2);
    else
      memset(t->q + r * d, 0, (size_t)d * 2);
    t->m[r] = -INFINITY;
    t->l[r] = 0.0f;
  }
  memset(t->o, 0, (size_t)(AQ * d) * sizeof *t->o);
  const int64_t last = k->causal ? i0 + rows - 1 + off : k->skv - 1;
  for (int64_t j0 = 0; j0 <= last; j0 += kt) {
    const size_t koff =
        mb__cpu_att_row(k->bshd, d, b, kvh, k->kv_heads, k->skv, j0);
    const int64_t kn = k->skv - j0 < kt ? k->skv - j0 : kt;
    int qk = QK, pv = PV;
    if (kn < kt) { /* the last, partial block: copied, zero padded */
      for (int64_t j = 0; j < kn; ++j) {
        memcpy(t->kpad + j * d, kp + koff + (size_t)(j * k->kv_ld),
               (size_t)d * 2);
        memcpy(t->vpad + j * d, vp + koff + (size_t)(j * k->kv_ld),
               (size_t)d * 2);
      }
      qk = QK_TAIL;
      pv = PV_TAIL;
    } else {
      /* oneDNN only reads through the handle. */
      if (dnnl_memory_set_data_handle(t->wei[QK], (void *)(kp + koff)) !=
              dnnl_success ||
          dnnl_memory_set_data_handle(t->wei[PV], (void *)(vp + koff)) !=
              dnnl_success)
        return 0;
    }
    if (!exec(k, t, qk)) return 0;
    int64_t see[AQ];
    float alpha[AQ];
    for (int64_t r = 0; r < AQ; ++r) {
      const int64_t vis = k->causal ? i0 + r + off - j0 + 1 : kn;
      see[r] = vis < 0 ? 0 : vis < kn ? vis : kn;
    }
    k->softmax(k, t, see, alpha);
    if (!exec(k, t, pv)) return 0;
    k->accumulate(k, t, alpha);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float *o = t->o + r * d;
    const float inv = 1.0f / t->l[r];
    for (int64_t e = 0; e < d; ++e) o[e] *= inv;
    mb__cpu_store_f32(op, MB_DTYPE_BF16, qoff + (size_t)(r * k->ld), o,
                      (size_t)d);
  }
  return 1;
}

mb_status_t mb__cpu_attention_onednn_run(void *kstate,
                                         const mb_kernel_call_t *call) {
  attention_dnnl_t *k = kstate;
  const int64_t blocks = (k->sq + AQ - 1) / AQ, tasks = k->bh * blocks;
  const uint16_t *q = call->in[0], *kp = call->in[1], *v = call->in[2];
  void *o = call->out[0];
  int ok = 1;
#pragma omp parallel num_threads(k->threads) if (tasks > 1) reduction(&& : ok)
  {
    thread_bufs_t *t = &k->t[mb__cpu_thread_id()];
#pragma omp for schedule(dynamic, 1)
    for (int64_t task = 0; task < tasks; ++task) {
      /* Causal blocks differ in work: the longest (last) ones first. */
      const int64_t rev = k->causal ? tasks - 1 - task : task;
      const int64_t bh = rev / blocks, i0 = rev % blocks * AQ;
      if (ok)
        ok = query_block(k, t, q, kp, v, o, bh, i0,
                         k->sq - i0 < AQ ? k->sq - i0 : AQ);
    }
  }
  if (ok) return MB_OK;
  MB_CPU_ERROR(k->st, "cpu/onednn: attention: a tile matmul failed");
  return MB_ERR_BACKEND;
}
