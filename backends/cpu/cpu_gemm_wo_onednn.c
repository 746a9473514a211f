/* CPU backend — int4 weight-only GEMM, bf16 A x i4 B with scales that vary
 * along K in groups (torchao's int4wo), on oneDNN's bf16 matmul (AMX where
 * the CPU has it) instead of an f32 matmul of the dequantized weight.
 *
 * The codes q are integers in [-8, 7], exact in bf16, and A is bf16: each
 * K group g of B's scale grid (bk rows) is one bf16 GEMM of exact operands,
 *
 *   P_g = A_g Q_g  (f32 accumulation),   D = alpha sum_g P_g diag(s_g) + beta D
 *
 * s_g being the group's column scales. The error is an f32 GEMM's: f32
 * accumulation inside each P_g, one f32 rounding per group and column (the
 * product by s_g, where the f32 path rounds each q s), the f32 sum over the
 * groups; the op's tolerance (2 sqrt(K) + 8 f32 units on sum |a b|) is
 * made for that. Rounding w = q s to bf16 instead, one bf16 GEMM, fails it
 * (499 times the allowance at 7x96x65, tests/test_cpu_gemm_wo.c).
 *
 * D is cut into MT x NT tiles, one thread each, the oneDNN calls running
 * sequentially inside our parallel region (each thread its own primitives
 * and stream); a tile's P_g lands in the thread's buffer (L2-sized) and is
 * scaled into D's tile (or an f32 accumulator) before the next group. The
 * operands are dense panels because oneDNN 2.6 takes its AMX kernel only
 * for dense operands without per-column runtime scales (strided or scaled
 * ones ran gemm:jit, 1.5-2x slower, on the Intel AMX VM): A by group,
 * [g][M][bk], copied, and Q decoded to bf16 panels, [g][column tile][bk][nt],
 * both inside the timed run. A in f32 or f16 is not exact in bf16, and
 * groups under MIN_GROUP rows make GEMMs too thin to pay: those keep the
 * f32 path (cpu_gemm_scaled_onednn.c). Measured at 2048x4096x1024 on the
 * Intel AMX VM, two rounds, this kernel / the f32 path: group 128 35-38 /
 * 63-79 ms, group 64 46-51 / 70-73 ms, group 32 89-100 / 64 ms. */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm_scaled.h"
#include "cpu_onednn.h"
#include "cpu_quant.h"

#ifdef MB_HAVE_ONEDNN

/* Tiles: P (MT x NT f32, 512 KiB) and D's tile stay in a core's L2 with
 * the panels of A (64 KiB at bk 128) and Q (128 KiB); measured at
 * 4096^3, group 128: 256 x 512 ran 430-470 GFLOP/s where 128 x 256 ran
 * 345 and 512 x 512 320-440 (a standalone loop of the same calls). */
enum { MT = 256, NT = 512, MIN_GROUP = 64 };

/* The tile sizes that occur: whole, and the edge of M / N (0: none). */
typedef struct edges {
  int64_t m[2], n[2];
} edges_t;

typedef struct wo_thread {
  void *prim[2][2]; /* [edge of M][edge of N] tile GEMMs, NULL: no such */
  dnnl_stream_t stream;
  void *ins[2];
  void *outs[1];
  mb_op_params_t ip[2][2];
  mb_kernel_call_t call;
  float *part; /* MT x NT */
} wo_thread_t;

typedef struct wo_dnnl {
  mb_cpu_state_t *st;
  mb_cpu_sgemm_plan_t pl;
  int64_t bk, groups, tm, tn;
  edges_t e;
  uint16_t *a;  /* A by group: [g][M][bk] bf16 */
  uint16_t *q;  /* B's codes as bf16: [g][tile][bk][tile width] */
  float *s;     /* [g][N] column scales */
  float *acc;   /* M x N f32; NULL when D is f32 and taken as is */
  float *grids; /* decoded e8m0 / e4m3 scales (mb__cpu_sgemm_grids) */
  const mb_cpu_dqvec_t *dq; /* i4 -> bf16 vector loops, or NULL */
  wo_thread_t *th;
  unsigned threads;
  uint32_t device;
} wo_dnnl_t;

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* ---- the panels, inside the run ------------------------------------------ */

/* n codes of B from element qe as bf16 integers at y[ye..]: the vector
 * loops where they run (scale 1: exact; tab, the thread's table of the 16
 * codes), else the portable load and store. */
static void decode(const wo_dnnl_t *g, uint16_t *y, size_t ye, const uint8_t *b,
                   size_t qe, size_t n, float *buf, mb_cpu_dqtab_t *tab) {
  if (g->dq) {
    g->dq->deq1(y, ye, b, qe, 1.0f, n, 0, tab);
    return;
  }
  mb__cpu_qrow(MB_DTYPE_I4)->load(buf, b, qe, n);
  mb__cpu_qrow(MB_DTYPE_BF16)->store(y, ye, buf, n);
}

/* Q's panels, A's groups and the column scales. */
static void panels(const wo_dnnl_t *g, const uint16_t *a, const uint8_t *b,
                   const float *gb) {
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const int64_t m = pl->m, k = pl->k, n = pl->n, bk = g->bk;
#pragma omp parallel num_threads(g->threads)
  {
    float *buf = g->th[mb__cpu_thread_id()].part; /* NT floats suffice */
    mb_cpu_dqtab_t tab;
    tab.key = 0;
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < k; ++r) {
      uint16_t *grp = g->q + r / bk * bk * n; /* the group's panels */
      for (int64_t c0 = 0; c0 < n; c0 += NT) {
        const int64_t w = min64(NT, n - c0);
        decode(g, grp + c0 * bk, (size_t)(r % bk * w), b, (size_t)(r * n + c0),
               (size_t)w, buf, &tab);
      }
    }
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < m; ++i)
      for (int64_t grp = 0; grp < g->groups; ++grp)
        memcpy(g->a + (grp * m + i) * bk, a + i * k + grp * bk,
               (size_t)bk * sizeof *a);
#pragma omp for schedule(static)
    for (int64_t grp = 0; grp < g->groups; ++grp)
      for (int64_t j = 0; j < n; ++j)
        g->s[grp * n + j] =
            pl->b_scaled ? gb[grp * pl->gcb + j / pl->bnb] : 1.0f;
  }
}

/* c[i][j] (=|+=) p[i][j] s[j], rows x cols; c's rows ldc apart. */
MB_CPU_CLONES static void scale_into(float *restrict c, int64_t ldc,
                                     const float *restrict p,
                                     const float *restrict s, int64_t rows,
                                     int64_t cols, int first) {
  for (int64_t i = 0; i < rows; ++i) {
    float *restrict ci = c + i * ldc;
    const float *restrict pi = p + i * cols;
    if (first)
      for (int64_t j = 0; j < cols; ++j) ci[j] = pi[j] * s[j];
    else
      for (int64_t j = 0; j < cols; ++j) ci[j] += pi[j] * s[j];
  }
}

/* Tile t of D (f32, ldc n): every group's GEMM, each scaled in. */
static mb_status_t tile(const wo_dnnl_t *g, wo_thread_t *th, int64_t t,
                        float *d) {
  const int64_t m = g->pl.m, n = g->pl.n, bk = g->bk;
  const int64_t i0 = t / g->tn * MT, j0 = t % g->tn * NT;
  const int64_t rows = min64(MT, m - i0), cols = min64(NT, n - j0);
  void *prim = th->prim[rows != MT][cols != NT];
  for (int64_t grp = 0; grp < g->groups; ++grp) {
    th->ins[0] = g->a + (grp * m + i0) * bk;
    th->ins[1] = g->q + grp * bk * n + j0 * bk;
    const mb_status_t s = mb__cpu_onednn_run_on(prim, &th->call, th->stream);
    if (s != MB_OK) return s;
    scale_into(d + i0 * n + j0, n, th->part, g->s + grp * n + j0, rows, cols,
               grp == 0);
  }
  return MB_OK;
}

mb_status_t mb__cpu_wo_onednn_run(void *kstate, const mb_kernel_call_t *call) {
  wo_dnnl_t *g = kstate;
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const float *ga, *gb;
  mb__cpu_sgemm_grids(pl, call, g->grids, &ga, &gb);
  panels(g, call->in[0], call->in[1], gb);
  float *d = g->acc ? g->acc : call->out[0];
  mb_status_t status = MB_OK;
#pragma omp parallel num_threads(g->threads)
  {
    wo_thread_t *th = &g->th[mb__cpu_thread_id()];
    mb_status_t mine = MB_OK;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < g->tm * g->tn; ++t)
      if (mine == MB_OK) mine = tile(g, th, t, d);
    if (mine != MB_OK) {
#pragma omp critical(mb_cpu_wo)
      status = mine;
    }
  }
  if (status != MB_OK || !g->acc) return status;
  mb__cpu_scale_out(g->threads, g->acc, 0, pl->alpha, NULL, NULL, pl->beta,
                    call->out[0], pl->tout, pl->m, pl->n);
  return MB_OK;
}

void mb__cpu_wo_onednn_release(void *kstate) {
  wo_dnnl_t *g = kstate;
  if (!g) return;
  for (unsigned t = 0; g->th && t < g->threads; ++t) {
    wo_thread_t *th = &g->th[t];
    for (int em = 0; em < 2; ++em)
      for (int en = 0; en < 2; ++en) mb__cpu_onednn_release(th->prim[em][en]);
    if (th->stream) dnnl_stream_destroy(th->stream);
    free(th->part);
  }
  free(g->th);
  free(g->a);
  free(g->q);
  free(g->s);
  free(g->acc);
  free(g->grids);
  free(g);
}

/* ---- prepare ------------------------------------------------------------- */

/* Thread th's GEMM for rows x cols tiles: bf16 (rows x bk) x (bk x cols)
 * into its part buffer, f32. */
static mb_status_t prepare_tile(mb_cpu_state_t *st, const wo_dnnl_t *g,
                                wo_thread_t *th, int em, int en) {
  const int64_t rows = g->e.m[em], cols = g->e.n[en];
  if (!rows || !cols) return MB_OK;
  mb_op_params_t ip = MB_OP_PARAMS_INIT;
  ip.ndim = 3;
  ip.shape[0] = rows, ip.shape[1] = g->bk, ip.shape[2] = cols;
  ip.dtype = ip.dtype_b = MB_DTYPE_BF16;
  ip.dtype_out = ip.dtype_acc = MB_DTYPE_F32;
  ip.alpha = 1.0, ip.beta = 0.0;
  th->ip[em][en] = ip;
  th->ins[0] = g->a, th->ins[1] = g->q, th->outs[0] = th->part;
  /* The panels are rewritten inside every run: varying. */
  th->call = (mb_kernel_call_t){
      sizeof th->call, &th->ip[em][en], th->ins, 2, th->outs, 1, g->device, 3u};
  return mb__cpu_gemm_onednn_prepare(st, &th->call, &th->prim[em][en]);
}

/* Every thread's stream, buffer and primitives; each primitive runs on its
 * thread alone, so it is created for one (mb__cpu_onednn_one_thread). */
static mb_status_t prepare_threads(void *arg) {
  wo_dnnl_t *g = arg;
  mb_cpu_state_t *st = g->st;
  g->th = calloc(g->threads, sizeof *g->th);
  if (!g->th) return MB_ERR_NO_MEMORY;
  for (unsigned t = 0; t < g->threads; ++t) {
    wo_thread_t *th = &g->th[t];
    th->part = malloc((size_t)MT * NT * sizeof *th->part);
    if (!th->part) return MB_ERR_NO_MEMORY;
    if (dnnl_stream_create(&th->stream, st->engine,
                           dnnl_stream_default_flags) != dnnl_success) {
      MB_CPU_ERROR(st, "cpu/onednn: gemm bf16 x i4: stream creation failed");
      return MB_ERR_BACKEND;
    }
    for (int em = 0; em < 2; ++em)
      for (int en = 0; en < 2; ++en) {
        const mb_status_t s = prepare_tile(st, g, th, em, en);
        if (s != MB_OK) return s;
      }
  }
  return MB_OK;
}

static mb_status_t alloc_panels(mb_cpu_state_t *st, wo_dnnl_t *g) {
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const size_t mk = (size_t)(pl->m * pl->k), kn = (size_t)(pl->k * pl->n);
  void *p = NULL;
  mb_status_t s = mb__cpu_alloc(st, mk * sizeof(uint16_t), &p);
  g->a = p;
  if (s == MB_OK) s = mb__cpu_alloc(st, kn * sizeof(uint16_t), &p);
  if (s == MB_OK) g->q = p;
  if (s == MB_OK)
    s = mb__cpu_alloc(st, (size_t)(g->groups * pl->n) * sizeof(float), &p);
  if (s == MB_OK) g->s = p;
  const int direct =
      pl->tout == MB_DTYPE_F32 && pl->alpha == 1.0f && pl->beta == 0.0f;
  if (s == MB_OK && !direct) {
    s = mb__cpu_alloc(st, (size_t)(pl->m * pl->n) * sizeof(float), &p);
    if (s == MB_OK) g->acc = p;
  }
  if (s == MB_OK) s = mb__cpu_sgemm_grids_alloc(st, pl, &g->grids);
  return s;
}

mb_status_t mb__cpu_wo_onednn_prepare(void *bstate,
                                      const mb_kernel_call_t *call,
                                      void **kstate) {
  mb_cpu_state_t *st = bstate;
  mb_status_t s = mb__cpu_onednn_check(st, "gemm bf16 x i4");
  if (s != MB_OK) return s;
  wo_dnnl_t *g = calloc(1, sizeof *g);
  if (!g) {
    MB_CPU_ERROR(st, "cpu/onednn: gemm bf16 x i4: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  g->st = st;
  g->threads = st->threads;
  g->device = call->device;
  mb__cpu_sgemm_plan(call->params, &g->pl);
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  g->bk = pl->b_scaled ? pl->bkb : pl->k;
  g->groups = pl->k / g->bk;
  g->tm = (pl->m + MT - 1) / MT;
  g->tn = (pl->n + NT - 1) / NT;
  g->e = (edges_t){{pl->m >= MT ? MT : 0, pl->m % MT},
                   {pl->n >= NT ? NT : 0, pl->n % NT}};
  g->dq = mb__cpu_dqvec(MB_DTYPE_I4, MB_DTYPE_BF16);
  s = alloc_panels(st, g);
  if (s == MB_OK) s = mb__cpu_onednn_one_thread(prepare_threads, g);
  if (s != MB_OK) {
    if (s == MB_ERR_NO_MEMORY)
      MB_CPU_ERROR(st, "cpu/onednn: gemm bf16 x i4: out of memory");
    mb__cpu_wo_onednn_release(g);
    return s;
  }
  *kstate = g;
  return MB_OK;
}

uint32_t mb__cpu_wo_onednn_notes(void *kstate, mb_kernel_note_t *out,
                                 uint32_t max) {
  (void)kstate;
  if (max >= 1) out[0] = (mb_kernel_note_t){MB_KERNEL_NOTE_MATH, "bf16", 0};
  return 1;
}

/* A CPU with bf16 dot products (AVX512-BF16; every AMX CPU has them): the
 * only kind this kernel was measured on; elsewhere oneDNN's bf16 matmul is
 * emulated or absent, and the f32 path stays the default. */
static int bf16_cpu(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
#else
  return 0;
#endif
}

/* bf16 A, unscaled (weight-only); i4 B as stored (K x N), its scale blocks
 * at least MIN_GROUP rows; D f32, bf16 or f16, no fast_accum; bf16_cpu. */
mb_status_t mb__cpu_wo_supports(void *bstate, uint32_t dev,
                                const mb_op_params_t *p, const char **why) {
  const mb_status_t s = mb__cpu_sgemm_supports_float(bstate, dev, p, why);
  if (s != MB_OK) return s;
  if (p->dtype != MB_DTYPE_BF16 || p->dtype_b != MB_DTYPE_I4) {
    *why = "bf16 x i4 only (f32/f16 A is not exact in bf16: f32 path)";
    return MB_ERR_UNSUPPORTED;
  }
  mb_cpu_sgemm_plan_t pl;
  mb__cpu_sgemm_plan(p, &pl);
  if (pl.a_scaled || pl.trans_b || (pl.b_scaled && pl.bkb < MIN_GROUP)) {
    *why = "weight-only with K groups of 64 or more rows, B as stored";
    return MB_ERR_UNSUPPORTED;
  }
  if (!bf16_cpu()) {
    *why = "needs a CPU with AVX512-BF16 (the f32 path runs elsewhere)";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

#endif
