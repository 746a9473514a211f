/* CPU backend — int4 weight-only GEMM, bf16 A x i4 B with scales, on
 * oneDNN's bf16 matmul (AMX / AVX512-BF16) instead of an f32 one.
 *
 * Why three bf16 GEMMs and not one: the op's reference multiplies a q s
 * exactly (double) and allows f32 accumulation error only (gemm_tolerance:
 * 2 sqrt(K) + 8 units of f32 on sum |a b|). Rounding the dequantized
 * weight w = q s to bf16 errs by up to 2^-8 of each product (measured:
 * 499 times the allowance at 7x96x65, tests/test_cpu_gemm_wo.c), and two
 * bf16 terms still leave up to 2^-16 per product, over the allowance's
 * (2 sqrt(K) + 8) 2^-24 below K ~ 15000 when the errors share a sign.
 * So B is split exactly: w = fl32(q s) (one f32 rounding, as the existing
 * dequantize-then-f32 path did), hi = bf16(w), mid = bf16(w - hi),
 * lo = w - hi - mid, each step taking the next 8 significant bits, so
 * hi + mid + lo == w with no rounding left (24 = 3 x 8 bits). A bf16 A
 * is exact, each product a x part is exact in the f32 accumulator, and
 *
 *   acc = A.lo;  acc += A.mid;  acc += A.hi   (oneDNN sum post-op)
 *
 * errs by f32 accumulation only; a final pass applies alpha, beta and the
 * one rounding to D's dtype (skipped for an f32 D with alpha 1, beta 0:
 * the matmuls write D). It costs three bf16 GEMMs' work, so at best a third
 * of the bf16 peak; still several times an f32 matmul where bf16 runs on
 * AMX. The split runs inside the timed run, row-parallel, one pass over B.
 * A in f32 or f16 is not exact in bf16: those keep the f32 path
 * (cpu_gemm_scaled_onednn.c). */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm_scaled.h"
#include "cpu_onednn.h"
#include "cpu_quant.h"
#include "mb_cvt.h"

#ifdef MB_HAVE_ONEDNN

enum { PARTS = 3 };

typedef struct wo_dnnl {
  mb_cpu_state_t *st;
  mb_cpu_sgemm_plan_t pl;
  uint16_t *parts;   /* PARTS K x N bf16 matrices: lo, mid, hi */
  float *acc;        /* M x N f32; NULL when D is f32 and taken as is */
  float *rowbuf;     /* per thread: N scales and N decoded nibbles */
  float *grids;      /* decoded e8m0 / e4m3 scales (mb__cpu_sgemm_grids) */
  void *first, *sum; /* acc = A.part and acc += A.part */
  mb_op_params_t ip0, ip1;
  void *ins[2], *outs[1];
  mb_kernel_call_t c0, c1;
} wo_dnnl_t;

/* i4 element e of a row-major packed matrix: low nibble first. */
static float nib(const uint8_t *p, size_t e) {
  const uint32_t v = (e & 1u) ? (uint32_t)(p[e / 2] >> 4) : p[e / 2] & 0xFu;
  return (float)((int32_t)(v ^ 8u) - 8);
}

MB_CPU_CLONES static void decode_row(float *restrict q,
                                     const uint8_t *restrict p, size_t e0,
                                     size_t n) {
  size_t j = 0;
  if ((e0 & 1u) && n) q[j++] = nib(p, e0);
  const uint8_t *restrict b = p + (e0 + j) / 2;
  const size_t pairs = (n - j) / 2;
  for (size_t t = 0; t < pairs; ++t) {
    q[j + 2 * t] = (float)((int32_t)((b[t] & 0xFu) ^ 8u) - 8);
    q[j + 2 * t + 1] = (float)((int32_t)((uint32_t)(b[t] >> 4) ^ 8u) - 8);
  }
  j += 2 * pairs;
  if (j < n) q[j] = nib(p, e0 + j);
}

/* w = fl32(q s) = hi + mid + lo exactly (see the top of the file). */
MB_CPU_CLONES static void split_row(const float *restrict q,
                                    const float *restrict s,
                                    uint16_t *restrict lo,
                                    uint16_t *restrict mid,
                                    uint16_t *restrict hi, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    const float w = q[j] * s[j];
    const uint16_t h = mb__cvt_f32_to_bf16_sw(w);
    const float r = w - mb__cvt_bf16_to_f32(h);
    const uint16_t m = mb__cvt_f32_to_bf16_sw(r);
    hi[j] = h;
    mid[j] = m;
    lo[j] = mb__cvt_f32_to_bf16_sw(r - mb__cvt_bf16_to_f32(m));
  }
}

static void split_b(const wo_dnnl_t *g, const uint8_t *b, const float *gb) {
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const size_t n = (size_t)pl->n, kn = (size_t)(pl->k * pl->n);
#pragma omp parallel num_threads(g->st->threads)
  {
    float *s = g->rowbuf + 2 * n * mb__cpu_thread_id(), *q = s + n;
    int64_t have = -1; /* the scale row s holds */
#pragma omp for schedule(static)
    for (int64_t k = 0; k < pl->k; ++k) {
      const int64_t kg = k / pl->bkb;
      if (kg != have) {
        for (size_t j = 0; j < n; ++j)
          s[j] = gb[kg * pl->gcb + (int64_t)j / pl->bnb];
        have = kg;
      }
      const size_t e0 = (size_t)k * n;
      decode_row(q, b, e0, n);
      split_row(q, s, g->parts + e0, g->parts + kn + e0, g->parts + 2 * kn + e0,
                n);
    }
  }
}

void mb__cpu_wo_onednn_release(void *kstate) {
  wo_dnnl_t *g = kstate;
  if (!g) return;
  mb__cpu_onednn_release(g->first);
  mb__cpu_onednn_release(g->sum);
  free(g->parts);
  free(g->acc);
  free(g->rowbuf);
  free(g->grids);
  free(g);
}

mb_status_t mb__cpu_wo_onednn_run(void *kstate, const mb_kernel_call_t *call) {
  wo_dnnl_t *g = kstate;
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const float *ga, *gb;
  mb__cpu_sgemm_grids(pl, call, g->grids, &ga, &gb);
  split_b(g, call->in[1], gb);
  const size_t kn = (size_t)(pl->k * pl->n);
  g->ins[0] = call->in[0];
  g->outs[0] = g->acc ? (void *)g->acc : call->out[0];
  mb_status_t s = MB_OK;
  for (int part = 0; part < PARTS && s == MB_OK; ++part) {
    g->ins[1] = g->parts + (size_t)part * kn;
    s = mb__cpu_onednn_run(part ? g->sum : g->first, part ? &g->c1 : &g->c0);
  }
  if (s != MB_OK || !g->acc) return s;
  mb__cpu_scale_out(g->st->threads, g->acc, 0, pl->alpha, NULL, NULL, pl->beta,
                    call->out[0], pl->tout, pl->m, pl->n);
  return MB_OK;
}

/* bf16 x bf16 -> f32 over our buffers; beta 1 makes it accumulate. */
static mb_status_t prepare_inner(mb_cpu_state_t *st, wo_dnnl_t *g,
                                 const mb_kernel_call_t *call, int accumulate) {
  const mb_op_params_t *p = call->params;
  mb_op_params_t ip = MB_OP_PARAMS_INIT;
  ip.ndim = 3;
  ip.shape[0] = p->shape[0], ip.shape[1] = p->shape[1];
  ip.shape[2] = p->shape[2];
  ip.dtype = MB_DTYPE_BF16;
  ip.dtype_b = MB_DTYPE_BF16;
  ip.dtype_out = MB_DTYPE_F32;
  ip.dtype_acc = MB_DTYPE_F32;
  ip.alpha = 1.0;
  ip.beta = accumulate ? 1.0 : 0.0;
  mb_op_params_t *dst = accumulate ? &g->ip1 : &g->ip0;
  mb_kernel_call_t *c = accumulate ? &g->c1 : &g->c0;
  *dst = ip;
  g->ins[0] = call->in[0];
  g->ins[1] = g->parts;
  g->outs[0] = g->acc ? (void *)g->acc : call->out[0];
  /* B is rewritten inside every run: varying. */
  const uint32_t varying = (MB_CALL_VARYING_IN(call) & 1u) | 2u;
  *c = (mb_kernel_call_t){sizeof *c, dst, g->ins,       2,
                          g->outs,   1,   call->device, varying};
  return mb__cpu_gemm_onednn_prepare(st, c, accumulate ? &g->sum : &g->first);
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
  mb__cpu_sgemm_plan(call->params, &g->pl);
  const mb_cpu_sgemm_plan_t *pl = &g->pl;
  const size_t kn = (size_t)(pl->k * pl->n), mn = (size_t)(pl->m * pl->n);
  const int direct =
      pl->tout == MB_DTYPE_F32 && pl->alpha == 1.0f && pl->beta == 0.0f;
  void *p = NULL;
  s = mb__cpu_alloc(st, PARTS * kn * sizeof(uint16_t), &p);
  g->parts = p;
  if (s == MB_OK && !direct) {
    s = mb__cpu_alloc(st, mn * sizeof(float), &p);
    g->acc = p;
  }
  if (s == MB_OK) {
    s = mb__cpu_alloc(st, 2 * (size_t)pl->n * st->threads * sizeof(float), &p);
    g->rowbuf = p;
  }
  if (s == MB_OK) s = mb__cpu_sgemm_grids_alloc(st, pl, &g->grids);
  if (s == MB_OK) s = prepare_inner(st, g, call, 0);
  if (s == MB_OK) s = prepare_inner(st, g, call, 1);
  if (s != MB_OK) {
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

/* bf16 A only (exact in bf16); an f32 D or bf16/f16 one, no fast_accum. */
mb_status_t mb__cpu_wo_supports(void *bstate, uint32_t dev,
                                const mb_op_params_t *p, const char **why) {
  const mb_status_t s = mb__cpu_sgemm_supports_float(bstate, dev, p, why);
  if (s != MB_OK) return s;
  if (p->dtype != MB_DTYPE_BF16 || p->dtype_b != MB_DTYPE_I4) {
    *why = "bf16 x i4 only (f32/f16 A is not exact in bf16: f32 path)";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

#endif
