/* CPU backend — the scaled-GEMM family through oneDNN matmul ("onednn").
 *
 * Each kernel is a pipeline, all of it timed: convert the operands (C, into
 * buffers allocated at prepare), one plain oneDNN matmul (the shared
 * mb__cpu_gemm_onednn kernel over those buffers), then a C epilogue for the
 * scales, alpha, beta and the one rounding to the output dtype. Which
 * stages run depends on the variant (choose()):
 *
 *   fp8, scales constant along K: fp8 -> bf16 (exact), bf16 x bf16 -> f32
 *     (exact products, f32 sums), epilogue alpha sa(i) sb(j). No scales at
 *     all and an f32/bf16 output: the matmul writes D itself.
 *   fp8, scales varying along K (1x128, 128x128, ...): q s -> f32 (one f32
 *     rounding, as the reference's f32 scale grid allows), f32 matmul.
 *   i8 x i8 with scales: s8 x s8 -> s32 (VNNI, exact), epilogue. (Exact
 *     i8 -> i32 is the plain kernel: the .def lists it directly.)
 *   bf16/f16/f32 x i4 with group scales: B dequantized to f32 (i4 s), A
 *     widened to f32, f32 matmul: weight-only quantization as a CPU does it
 *     without fused decompression, so the dequantization is timed.
 *
 * Why an epilogue pass and not oneDNN attributes: oneDNN 2.6's brgemm
 * matmul takes per-column scales (a binary post-op on 1 x N) but falls back
 * to its reference implementation (ref_int8 / ref) for runtime output
 * scales or a per-row binary post-op, which A's row scales need; scales are
 * inputs, read at run time, so they cannot be baked in at prepare. The
 * epilogue costs one pass over D. */
#include "cpu_gemm_scaled.h"

#include <stdlib.h>

#include "cpu_onednn.h"
#include "cpu_quant.h"

#ifdef MB_HAVE_ONEDNN

typedef struct variant {
  mb_dtype_t ca, cb; /* A, B converted to (NONE: passed as stored) */
  int scale_in;      /* scales multiply while converting (vary along K) */
  mb_dtype_t acc;    /* matmul output before the epilogue; NONE: it is D */
  int rowcol;        /* epilogue multiplies by alpha sa(i) and sb(j) */
} variant_t;

static variant_t choose(const mb_cpu_sgemm_plan_t *pl) {
  const mb_dtype_t f32 = MB_DTYPE_F32, bf16 = MB_DTYPE_BF16;
  const mb_dtype_t direct_f32 = pl->tout == f32 ? MB_DTYPE_NONE : f32;
  if (pl->ta == MB_DTYPE_I8)
    return (variant_t){MB_DTYPE_NONE, MB_DTYPE_NONE, 0, MB_DTYPE_I32, 1};
  if (pl->tb == MB_DTYPE_I4)
    return (variant_t){pl->ta == f32 ? MB_DTYPE_NONE : f32, f32, 1, direct_f32,
                       0};
  if (pl->kq != pl->k) return (variant_t){f32, f32, 1, direct_f32, 0};
  if (!pl->a_scaled && !pl->b_scaled && (pl->tout == f32 || pl->tout == bf16))
    return (variant_t){bf16, bf16, 0, MB_DTYPE_NONE, 0};
  return (variant_t){bf16, bf16, 0, f32, 1};
}

typedef struct sgemm_dnnl {
  mb_cpu_state_t *st;
  mb_cpu_sgemm_plan_t pl;
  variant_t v;
  const mb_cpu_dqvec_t *va, *vb; /* converting A, B: vector loops or NULL */
  void *a, *b, *acc;             /* converted A and B, the matmul's output */
  float *rs, *cs;                /* epilogue scales per row and column */
  mb_op_params_t ip;             /* the inner, plain GEMM */
  void *ins[2], *outs[1];
  mb_kernel_call_t icall;
  void *inner;
  float *grids; /* e8m0 or e4m3 scales decoded (mb__cpu_sgemm_grids) */
} sgemm_dnnl_t;

void mb__cpu_sgemm_onednn_release(void *kstate) {
  sgemm_dnnl_t *g = kstate;
  if (!g) return;
  mb__cpu_onednn_release(g->inner);
  free(g->a);
  free(g->b);
  free(g->acc);
  free(g->rs);
  free(g->cs);
  free(g->grids);
  free(g);
}

mb_status_t mb__cpu_sgemm_onednn_run(void *kstate,
                                     const mb_kernel_call_t *call) {
  sgemm_dnnl_t *g = kstate;
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const unsigned threads = g->st->threads;
  const float *ga, *gb;
  mb__cpu_sgemm_grids(pl, call, g->grids, &ga, &gb);
  g->ins[0] = call->in[0];
  g->ins[1] = call->in[1];
  if (g->v.ca) {
    mb__cpu_dequant(threads, g->va, 0, call->in[0], pl->ta,
                    g->v.scale_in && pl->a_scaled ? ga : NULL, pl->bma, pl->bka,
                    g->a, g->v.ca, pl->m, pl->k);
    g->ins[0] = g->a;
  }
  if (g->v.cb) {
    mb__cpu_dequant(threads, g->vb, 0, call->in[1], pl->tb,
                    g->v.scale_in && pl->b_scaled ? gb : NULL, pl->bkb, pl->bnb,
                    g->b, g->v.cb, pl->k, pl->n);
    g->ins[1] = g->b;
  }
  if (g->v.rowcol) mb__cpu_sgemm_rowcol(pl, ga, gb, g->rs, g->cs);
  g->outs[0] = g->v.acc ? g->acc : call->out[0];
  const mb_status_t s = mb__cpu_onednn_run(g->inner, &g->icall);
  if (s != MB_OK || !g->v.acc) return s;
  mb__cpu_scale_out(threads, g->acc, g->v.acc == MB_DTYPE_I32, pl->alpha,
                    g->v.rowcol ? g->rs : NULL, g->v.rowcol ? g->cs : NULL,
                    pl->beta, call->out[0], pl->tout, pl->m, pl->n);
  return MB_OK;
}

static mb_status_t alloc_buffers(mb_cpu_state_t *st, sgemm_dnnl_t *g) {
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const size_t mk = (size_t)(pl->m * pl->k), kn = (size_t)(pl->k * pl->n),
               mn = (size_t)(pl->m * pl->n);
  mb_status_t s = MB_OK;
  void *p = NULL;
  if (g->v.ca) s = mb__cpu_alloc(st, st->host.dtype_bytes(g->v.ca, mk), &g->a);
  if (s == MB_OK && g->v.cb)
    s = mb__cpu_alloc(st, st->host.dtype_bytes(g->v.cb, kn), &g->b);
  if (s == MB_OK && g->v.acc)
    s = mb__cpu_alloc(st, st->host.dtype_bytes(g->v.acc, mn), &g->acc);
  if (s == MB_OK && g->v.rowcol)
    s = mb__cpu_alloc(st, (size_t)pl->m * sizeof(float), &p);
  if (s == MB_OK && g->v.rowcol) {
    g->rs = p;
    s = mb__cpu_alloc(st, (size_t)pl->n * sizeof(float), &p);
    if (s == MB_OK) g->cs = p;
  }
  if (s == MB_OK) s = mb__cpu_sgemm_grids_alloc(st, pl, &g->grids);
  return s;
}

/* The plain GEMM over our buffers: alpha and beta go to oneDNN only when
 * it writes D itself. */
static mb_status_t prepare_inner(mb_cpu_state_t *st, sgemm_dnnl_t *g,
                                 const mb_kernel_call_t *call) {
  const mb_op_params_t *p = call->params;
  mb_op_params_t ip = MB_OP_PARAMS_INIT;
  ip.ndim = 3;
  ip.shape[0] = p->shape[0], ip.shape[1] = p->shape[1];
  ip.shape[2] = p->shape[2];
  ip.dtype = g->v.ca ? g->v.ca : p->dtype;
  ip.dtype_b = g->v.cb ? g->v.cb : p->dtype_b;
  ip.dtype_out = g->v.acc ? g->v.acc : p->dtype_out;
  ip.dtype_acc = ip.dtype == MB_DTYPE_I8 ? MB_DTYPE_I32 : MB_DTYPE_F32;
  ip.alpha = g->v.acc ? 1.0 : p->alpha;
  ip.beta = g->v.acc ? 0.0 : p->beta;
  g->ip = ip;
  g->ins[0] = g->v.ca ? g->a : call->in[0];
  g->ins[1] = g->v.cb ? g->b : call->in[1];
  g->outs[0] = g->v.acc ? g->acc : call->out[0];
  /* A and B converted inside the run are written there: varying. */
  const uint32_t varying = (MB_CALL_VARYING_IN(call) & 3u) |
                           (g->v.ca ? 1u : 0u) | (g->v.cb ? 2u : 0u);
  g->icall = (mb_kernel_call_t){sizeof g->icall, &g->ip, g->ins,       2,
                                g->outs,         1,      call->device, varying};
  return mb__cpu_gemm_onednn_prepare(st, &g->icall, &g->inner);
}

mb_status_t mb__cpu_sgemm_onednn_prepare(void *bstate,
                                         const mb_kernel_call_t *call,
                                         void **kstate) {
  mb_cpu_state_t *st = bstate;
  mb_status_t s = mb__cpu_onednn_check(st, "scaled gemm");
  if (s != MB_OK) return s;
  sgemm_dnnl_t *g = calloc(1, sizeof *g);
  if (!g) {
    MB_CPU_ERROR(st, "cpu/onednn: scaled gemm: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  g->st = st;
  mb__cpu_sgemm_plan(call->params, &g->pl);
  g->v = choose(&g->pl);
  g->va = g->v.ca ? mb__cpu_dqvec(g->pl.ta, g->v.ca) : NULL;
  g->vb = g->v.cb ? mb__cpu_dqvec(g->pl.tb, g->v.cb) : NULL;
  if (!mb__cpu_qrow(g->pl.tout) || !mb__cpu_qrow(g->pl.tout)->store) {
    MB_CPU_ERROR(st, "cpu/onednn: scaled gemm -> %s is not implemented",
                 st->host.dtype_name(g->pl.tout));
    s = MB_ERR_UNSUPPORTED;
  }
  if (s == MB_OK) s = alloc_buffers(st, g);
  if (s == MB_OK) s = prepare_inner(st, g, call);
  if (s != MB_OK) {
    mb__cpu_sgemm_onednn_release(g);
    return s;
  }
  *kstate = g;
  return MB_OK;
}

uint32_t mb__cpu_sgemm_onednn_notes(void *kstate, mb_kernel_note_t *out,
                                    uint32_t max) {
  const sgemm_dnnl_t *g = kstate;
  if (max >= 1)
    out[0] = (mb_kernel_note_t){MB_KERNEL_NOTE_MATH,
                                g->st->host.dtype_name(g->ip.dtype), 0};
  return 1;
}

mb_status_t mb__cpu_sgemm_supports_i8(void *bstate, uint32_t dev,
                                      const mb_op_params_t *p,
                                      const char **why) {
  (void)bstate, (void)dev;
  mb_cpu_sgemm_plan_t pl;
  mb__cpu_sgemm_plan(p, &pl);
  if (p->dtype_out == MB_DTYPE_I32) {
    *why = "i8 -> i32 is the plain oneDNN kernel";
    return MB_ERR_UNSUPPORTED;
  }
  if (pl.kq != pl.k) {
    *why = "i8 scales varying along K: impl c";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

#endif
