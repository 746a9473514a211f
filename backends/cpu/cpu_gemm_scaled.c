/* CPU backend — what the scaled-GEMM kernels share: the plan derived from
 * the params, per-row and per-column scales, the supports hooks, and
 * quantize-inputs (gemm_fp8_rowwise): quantize A and B inside the timed run
 * with the quantize kernels' code (bit-exact semantics), then hand the
 * quantized operands and their scale grids to the fp8 or i8 kernel of the
 * same implementation — or, with explicit dequantization
 * (gemm_fp8_rowwise_w_dequantize), the operands alone for an unscaled f32
 * product, which a pass of its own then scales into D. */
#include "cpu_gemm_scaled.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_quant.h"

void mb__cpu_sgemm_plan(const mb_op_params_t *p, mb_cpu_sgemm_plan_t *pl) {
  const int64_t m = p->shape[0], k = p->shape[1], n = p->shape[2];
  *pl = (mb_cpu_sgemm_plan_t){
      .m = m,
      .k = k,
      .n = n,
      .ta = p->dtype,
      .tb = p->dtype_b,
      .tout = p->dtype_out,
      .alpha = (float)p->alpha,
      .beta = (float)p->beta,
  };
  /* A side without scales is one block holding 1. */
  pl->a_scaled = p->scale_a.mode != MB_SCALE_NONE;
  pl->b_scaled = p->scale_b.mode != MB_SCALE_NONE;
  pl->bma = pl->a_scaled ? p->scale_a.block[0] : m;
  pl->bka = pl->a_scaled ? p->scale_a.block[1] : k;
  pl->bkb = pl->b_scaled ? p->scale_b.block[0] : k;
  pl->bnb = pl->b_scaled ? p->scale_b.block[1] : n;
  pl->gca = k / pl->bka;
  pl->gcb = n / pl->bnb;
  /* resolve() checked that one K block divides the other. */
  pl->kq = pl->bka < pl->bkb ? pl->bka : pl->bkb;
  pl->e8m0 = p->dtype_scale == MB_DTYPE_E8M0;
  pl->nv_s = p->dtype_scale == MB_DTYPE_F8E4M3 ? (float)p->scale : 0.0f;
  pl->na = m / pl->bma * pl->gca;
  pl->nb = k / pl->bkb * pl->gcb;
  pl->trans_b = (p->flags & MB_PARAM_TRANS_B) != 0;
}

mb_status_t mb__cpu_sgemm_grids_alloc(mb_cpu_state_t *st,
                                      const mb_cpu_sgemm_plan_t *pl,
                                      float **scratch) {
  void *p = NULL;
  mb_status_t s = MB_OK;
  if (pl->e8m0 || pl->nv_s > 0.0f)
    s = mb__cpu_alloc(st, (size_t)(pl->na + pl->nb) * sizeof(float), &p);
  *scratch = p;
  return s;
}

void mb__cpu_sgemm_grids(const mb_cpu_sgemm_plan_t *pl,
                         const mb_kernel_call_t *call, float *scratch,
                         const float **ga, const float **gb) {
  *ga = call->in[2];
  *gb = call->in[3];
  if (pl->nv_s > 0.0f) { /* NVFP4: fl32(s_b S), as dequantize's */
    mb__cpu_e4m3_scales(scratch, call->in[2], pl->nv_s, (size_t)pl->na);
    mb__cpu_e4m3_scales(scratch + pl->na, call->in[3], pl->nv_s,
                        (size_t)pl->nb);
    *ga = scratch;
    *gb = scratch + pl->na;
    return;
  }
  if (!pl->e8m0) return;
  /* Every power of two e8m0 holds is an f32 (2^-127 a subnormal), so the
   * kernels then apply exactly the scales the bytes say. */
  mb__cpu_e8m0_load(scratch, call->in[2], (size_t)pl->na);
  mb__cpu_e8m0_load(scratch + pl->na, call->in[3], (size_t)pl->nb);
  *ga = scratch;
  *gb = scratch + pl->na;
}

void mb__cpu_sgemm_rowcol(const mb_cpu_sgemm_plan_t *pl, const float *ga,
                          const float *gb, float *rs, float *cs) {
  for (int64_t i = 0; i < pl->m; ++i)
    rs[i] = pl->a_scaled ? pl->alpha * ga[i / pl->bma * pl->gca] : pl->alpha;
  for (int64_t j = 0; j < pl->n; ++j)
    cs[j] = pl->b_scaled ? gb[j / pl->bnb] : 1.0f;
}

/* ---- supports
 * ------------------------------------------------------------------ */

static mb_status_t refuse(const char **why, const char *reason) {
  *why = reason;
  return MB_ERR_UNSUPPORTED;
}

static int is_fp8(mb_dtype_t d) {
  return d == MB_DTYPE_F8E4M3 || d == MB_DTYPE_F8E5M2;
}

/* Fast accumulation relaxes an fp8 tensor core's accumulator; these
 * kernels have none (fp8 is widened and multiplied in f32), so a result
 * would measure neither mode: declined, as tf32 is, rather than run under
 * a label it does not deserve (docs/gpu.md, "fp8 fast accumulation"). */
static const char k_no_fast_accum[] =
    "fast_accum: the CPU emulates fp8 (operands widened, f32 FMAs): no fp8 "
    "accumulator to run in reduced precision; drop fast_accum";

/* resolve() admits an i32 output for any inputs, but only i8 x i8 without
 * scales has an exact integer result. */
mb_status_t mb__cpu_sgemm_supports_float(void *bstate, uint32_t dev,
                                         const mb_op_params_t *p,
                                         const char **why) {
  (void)bstate, (void)dev;
  if (p->flags & MB_PARAM_FAST_ACCUM) return refuse(why, k_no_fast_accum);
  if (p->dtype_out == MB_DTYPE_I32 &&
      !(p->dtype == MB_DTYPE_I8 && p->dtype_b == MB_DTYPE_I8))
    return refuse(why, "only i8 x i8 gives i32; out: f32, bf16 or f16");
  return MB_OK;
}

/* The C kernel does every variant resolve() admits except quantize-inputs,
 * which has entries of its own. */
mb_status_t mb__cpu_sgemm_supports_c(void *bstate, uint32_t dev,
                                     const mb_op_params_t *p,
                                     const char **why) {
  if (p->flags & MB_PARAM_QUANTIZE_INPUTS)
    return refuse(why, "quantize-inputs has its own kernels");
  return mb__cpu_sgemm_supports_float(bstate, dev, p, why);
}

static mb_status_t qi_common(const mb_op_params_t *p, const char **why) {
  if (!(p->flags & MB_PARAM_QUANTIZE_INPUTS))
    return refuse(why, "only quantize-inputs (gemm_fp8_rowwise)");
  if (p->dtype_out == MB_DTYPE_I32)
    return refuse(why, "quantize-inputs rescales: out must be f32/bf16/f16");
  return MB_OK;
}

mb_status_t mb__cpu_qi_supports_fp8(void *bstate, uint32_t dev,
                                    const mb_op_params_t *p, const char **why) {
  (void)bstate, (void)dev;
  mb_status_t st = qi_common(p, why);
  if (st == MB_OK && !is_fp8(p->dtype_q))
    return refuse(why, "quantize-inputs to fp8 only (dtype_q)");
  if (st == MB_OK && (p->flags & MB_PARAM_FAST_ACCUM))
    return refuse(why, k_no_fast_accum);
  return st;
}

/* The C kernels also quantize inside to f4e2m1 (MXFP4 with e8m0 scales):
 * the quantize code and the widening C GEMM take any element format. */
mb_status_t mb__cpu_qi_supports_fp_c(void *bstate, uint32_t dev,
                                     const mb_op_params_t *p,
                                     const char **why) {
  if (p->dtype_q != MB_DTYPE_F4E2M1)
    return mb__cpu_qi_supports_fp8(bstate, dev, p, why);
  mb_status_t st = qi_common(p, why);
  if (st == MB_OK && (p->flags & MB_PARAM_FAST_ACCUM))
    return refuse(why, k_no_fast_accum);
  return st;
}

mb_status_t mb__cpu_qi_supports_i8_c(void *bstate, uint32_t dev,
                                     const mb_op_params_t *p,
                                     const char **why) {
  (void)bstate, (void)dev;
  mb_status_t st = qi_common(p, why);
  if (st == MB_OK && p->dtype_q != MB_DTYPE_I8)
    return refuse(why, "quantize-inputs to i8 only (dtype_q)");
  return st;
}

/* The oneDNN i8 kernel sums whole rows in i32 and rescales once, so scales
 * must not change along K. */
mb_status_t mb__cpu_qi_supports_i8(void *bstate, uint32_t dev,
                                   const mb_op_params_t *p, const char **why) {
  mb_status_t st = mb__cpu_qi_supports_i8_c(bstate, dev, p, why);
  mb_cpu_sgemm_plan_t pl;
  mb__cpu_sgemm_plan(p, &pl);
  if (st == MB_OK && pl.kq != pl.k)
    return refuse(why, "i8 scales varying along K: impl c");
  return st;
}

/* ---- quantize-inputs
 * ------------------------------------------------------------ */

typedef struct qi {
  mb_cpu_quant_t qa, qb;
  void *a, *b;    /* quantized operands (dtype_q) */
  float *ga, *gb; /* their scale grids */
  mb_op_params_t p;
  void *ins[4], *outs[1];
  mb_kernel_call_t call;
  void *inner;
  mb_kernel_run_fn run;
  void (*release)(void *);
  uint32_t (*notes)(void *, mb_kernel_note_t *, uint32_t);
  /* Explicit dequantization: the request's plan (alpha, beta, D's dtype,
   * the scale blocks), the f32 product and the row and column scales. */
  mb_cpu_sgemm_plan_t outer;
  float *acc, *rs, *cs;
  unsigned threads;
} qi_t;

void mb__cpu_qi_release(void *kstate) {
  qi_t *q = kstate;
  if (!q) return;
  if (q->inner) q->release(q->inner);
  mb__cpu_quant_fini(&q->qa);
  mb__cpu_quant_fini(&q->qb);
  free(q->a);
  free(q->b);
  free(q->ga);
  free(q->gb);
  free(q->acc);
  free(q->rs);
  free(q->cs);
  free(q);
}

/* The inner GEMM writes the unscaled product in f32 into q->acc; run()
 * scales it (explicit_dequant). */
static mb_status_t explicit_dequant(mb_cpu_state_t *st, qi_t *q,
                                    const mb_op_params_t *request) {
  mb__cpu_sgemm_plan(request, &q->outer);
  q->threads = st->threads;
  const size_t m = (size_t)q->outer.m, n = (size_t)q->outer.n;
  void *acc = NULL, *rs = NULL, *cs = NULL;
  mb_status_t s = mb__cpu_alloc(st, m * n * sizeof(float), &acc);
  if (s == MB_OK) s = mb__cpu_alloc(st, m * sizeof(float), &rs);
  if (s == MB_OK) s = mb__cpu_alloc(st, n * sizeof(float), &cs);
  q->acc = acc, q->rs = rs, q->cs = cs;
  q->p.scale_a = q->p.scale_b = (mb_scaling_t){MB_SCALE_NONE, {0, 0}};
  q->p.dtype_out = MB_DTYPE_F32;
  q->p.alpha = 1.0, q->p.beta = 0.0;
  q->p.flags &= ~MB_PARAM_EXPLICIT_DEQUANT;
  return s;
}

/* D = acc (rs_i cs_j) + beta D, the scales' product first as the JAX
 * suite's acc * (sx * sy); rows split across the threads. */
static void dequant_pass(const qi_t *q, void *d) {
  const mb_cpu_sgemm_plan_t *pl = &q->outer;
  const mb_cpu_qrow_t *o = mb__cpu_qrow(pl->tout);
  mb__cpu_sgemm_rowcol(pl, q->ga, q->gb, q->rs, q->cs);
  const int64_t m = pl->m, n = pl->n;
#pragma omp parallel num_threads(q->threads) if (m * n >= (1 << 15))
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    float row[256], old[256];
    for (int64_t i = m * t / nt; i < m * (t + 1) / nt; ++i)
      for (int64_t j0 = 0; j0 < n; j0 += 256) {
        const size_t w = (size_t)(n - j0 < 256 ? n - j0 : 256);
        const size_t e0 = (size_t)(i * n + j0);
        for (size_t j = 0; j < w; ++j)
          row[j] = q->acc[e0 + j] * (q->rs[i] * q->cs[j0 + j]);
        if (pl->beta != 0.0f) { /* beta == 0 must not read D */
          o->load(old, d, e0, w);
          for (size_t j = 0; j < w; ++j) row[j] += pl->beta * old[j];
        }
        o->store(d, e0, row, w);
      }
  }
}

static mb_status_t alloc_qi(mb_cpu_state_t *st, qi_t *q) {
  const mb_op_params_t *p = &q->p;
  const int64_t m = p->shape[0], k = p->shape[1], n = p->shape[2];
  mb_status_t s = mb__cpu_alloc(
      st, st->host.dtype_bytes(p->dtype_q, (size_t)(m * k)), &q->a);
  if (s == MB_OK)
    s = mb__cpu_alloc(st, st->host.dtype_bytes(p->dtype_q, (size_t)(k * n)),
                      &q->b);
  void *g = NULL;
  if (s == MB_OK)
    s = mb__cpu_alloc(st, (size_t)(q->qa.gr * q->qa.gc) * sizeof(float), &g);
  q->ga = g;
  if (s == MB_OK)
    s = mb__cpu_alloc(st, (size_t)(q->qb.gr * q->qb.gc) * sizeof(float), &g);
  if (s == MB_OK) q->gb = g;
  return s;
}

/* The inner kernel sees an ordinary scaled GEMM on the quantized operands:
 * dtype_q inputs, scale grids as inputs, no quantize flag. */
static mb_status_t qi_prepare(
    void *bstate, const mb_kernel_call_t *call, void **kstate,
    mb_status_t (*prepare)(void *, const mb_kernel_call_t *, void **),
    mb_kernel_run_fn run, void (*release)(void *),
    uint32_t (*notes)(void *, mb_kernel_note_t *, uint32_t)) {
  mb_cpu_state_t *st = bstate;
  qi_t *q = calloc(1, sizeof *q);
  if (!q) {
    MB_CPU_ERROR(st, "cpu: gemm quantize-inputs: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  q->p = *call->params;
  const int64_t m = q->p.shape[0], k = q->p.shape[1], n = q->p.shape[2];
  /* A static scale (0: none, absmax) is the op's semantics: pass it on;
   * NVFP4's is the per-tensor S of both sides, its blocks dynamic (as the
   * quantize kernel takes it). */
  const int nv = q->p.dtype_scale == MB_DTYPE_F8E4M3;
  const double fixed = (q->p.flags & MB_PARAM_STATIC) && !nv ? q->p.scale : 0.0;
  mb_status_t s = mb__cpu_quant_init(st, &q->qa, q->p.dtype, q->p.dtype_q, m, k,
                                     &q->p.scale_a, 0, fixed);
  if (s == MB_OK)
    s = mb__cpu_quant_init(st, &q->qb, q->p.dtype_b, q->p.dtype_q, k, n,
                           &q->p.scale_b, 0, fixed);
  if (s == MB_OK && nv) q->qa.nv_s = q->qb.nv_s = (float)q->p.scale;
  /* e8m0 (MXFP8): both grids are written as bytes, which the inner kernel
   * reads as such (q->p keeps dtype_scale). */
  if (s == MB_OK) s = mb__cpu_quant_scales(st, &q->qa, q->p.dtype_scale);
  if (s == MB_OK) s = mb__cpu_quant_scales(st, &q->qb, q->p.dtype_scale);
  if (s == MB_OK) s = alloc_qi(st, q);
  q->p.dtype = q->p.dtype_b = q->p.dtype_q;
  q->p.dtype_q = MB_DTYPE_NONE;
  q->p.flags &= ~(MB_PARAM_QUANTIZE_INPUTS | MB_PARAM_STATIC);
  if (s == MB_OK && (call->params->flags & MB_PARAM_EXPLICIT_DEQUANT))
    s = explicit_dequant(st, q, call->params);
  q->ins[0] = q->a, q->ins[1] = q->b, q->ins[2] = q->ga, q->ins[3] = q->gb;
  q->outs[0] = q->acc ? q->acc : call->out[0];
  /* The quantized operands and their grids are written inside the run. */
  q->call = (mb_kernel_call_t){sizeof q->call, &q->p, q->ins,       4,
                               q->outs,        1,     call->device, 0xfu};
  q->run = run;
  q->release = release;
  q->notes = notes;
  if (s == MB_OK) s = prepare(bstate, &q->call, &q->inner);
  if (s != MB_OK) {
    mb__cpu_qi_release(q);
    return s;
  }
  *kstate = q;
  return MB_OK;
}

/* Timed: both quantizations, then the scaled GEMM. */
mb_status_t mb__cpu_qi_run(void *kstate, const mb_kernel_call_t *call) {
  qi_t *q = kstate;
  mb__cpu_quant_run(&q->qa, call->in[0], q->a, q->ga);
  mb__cpu_quant_run(&q->qb, call->in[1], q->b, q->gb);
  if (!q->acc) {
    q->outs[0] = call->out[0];
    return q->run(q->inner, &q->call);
  }
  const mb_status_t s = q->run(q->inner, &q->call);
  if (s == MB_OK) dequant_pass(q, call->out[0]);
  return s;
}

uint32_t mb__cpu_qi_notes(void *kstate, mb_kernel_note_t *out, uint32_t max) {
  const qi_t *q = kstate;
  return q->notes(q->inner, out, max);
}

mb_status_t mb__cpu_qi_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                 void **kstate) {
  return qi_prepare(bstate, call, kstate, mb__cpu_sgemm_c_prepare,
                    mb__cpu_sgemm_c_run, mb__cpu_sgemm_c_release,
                    mb__cpu_sgemm_c_notes);
}

#ifdef MB_HAVE_ONEDNN
mb_status_t mb__cpu_qi_onednn_prepare(void *bstate,
                                      const mb_kernel_call_t *call,
                                      void **kstate) {
  return qi_prepare(bstate, call, kstate, mb__cpu_sgemm_onednn_prepare,
                    mb__cpu_sgemm_onednn_run, mb__cpu_sgemm_onednn_release,
                    mb__cpu_sgemm_onednn_notes);
}
#endif
