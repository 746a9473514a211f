/* HQQ: half-quadratic quantization (Badri & Shaji 2023) as torchao runs it
 * for int4wo-{g}-hqq and gemlitewo-4-{g} (pytorch/ao 36027d82,
 * torchao/quantization/quant_primitives.py: _choose_qparams_and_quantize_
 * affine_hqq with optimize_weights_proximal_legacy; the recipes' parser and
 * GemliteUIntXWeightOnlyConfig as of 985d970b / ea9cecef, before torchao
 * deleted them).
 *
 * Per group (g weights along K; torchao's axis=1 on its [N, K] weight):
 *   scale = min(qmax / (max - min), 2e4)   (HQQ's scale is 1 / step)
 *   zero  = round(-min * scale)            (rounded for 4 bits only)
 * then `iters` rounds of the proximal solver of ||W - deq(q(W))||_p^p,
 * p = lp_norm, which moves only the zero (the scale stays min-max's):
 *   Wq   = clamp(round(W scale + zero), 0, qmax)
 *   Wr   = (Wq - zero) / scale
 *   We   = shrink_p(W - Wr, beta)
 *   zero = mean over the group of (Wq - (W - We) scale)
 *   beta *= kappa
 * with shrink_p(x) = sign(x) relu(|x| - |x|^(p-1) / beta), stopping early
 * at the first round whose mean |W - Wr| over the whole tensor does not
 * improve (its zero update is kept, as torchao keeps it). Finally
 * Wq = clamp(round(W scale + zero)) and the dequantization scale is
 * 1 / scale: w ~ (Wq - zero) / scale.
 *
 * Arithmetic is f32 element by element as torchao's on a CPU (on CUDA it
 * runs the solver in f16); round is half-to-even (rintf, as torch.round).
 * The group means are summed in double, in index order, so the result does
 * not depend on threads or vector width. */
#include "ops/hqq.h"

#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/op_internal.h"

/* inv_beta: torchao's 1.0 / beta, a Python double, meets the tensor as f32. */
static float shrink(float x, float inv_beta, float lp) {
  const float ax = fabsf(x);
  /* lp < 1: |x|^(lp-1) is inf at 0, and the relu makes that 0. */
  const float r =
      lp == 1.0f ? ax - inv_beta : ax - inv_beta * powf(ax, lp - 1.0f);
  const float mag = r > 0.0f ? r : 0.0f;
  return x > 0.0f ? mag : x < 0.0f ? -mag : 0.0f;
}

static float quant(float w, float scale, float zero, float qmax) {
  return fminf(fmaxf(rintf(w * scale + zero), 0.0f), qmax);
}

/* One solver round: new zeros into z (via acc), mean |W - Wr| returned. */
static double solver_round(const float *w, int64_t k, int64_t n, int64_t g,
                           float qmax, float inv_beta, float lp,
                           const float *sc, float *z, double *acc) {
  const int64_t ng = (k / g) * n;
  double err = 0.0;
  for (int64_t i = 0; i < ng; i++) acc[i] = 0.0;
  for (int64_t r = 0; r < k; r++)
    for (int64_t c = 0; c < n; c++) {
      const int64_t gi = (r / g) * n + c;
      const float wf = w[r * n + c], s = sc[gi], zz = z[gi];
      const float wq = quant(wf, s, zz, qmax);
      const float wr = (wq - zz) / s;
      const float we = shrink(wf - wr, inv_beta, lp);
      acc[gi] += (double)(wq - (wf - we) * s);
      err += (double)fabsf(wf - wr);
    }
  for (int64_t i = 0; i < ng; i++) z[i] = (float)(acc[i] / (double)g);
  return err / (double)(k * n);
}

int mb__hqq_quantize(const float *w, int64_t k, int64_t n, int64_t g, int nbits,
                     const mb__hqq_opts_t *o, uint8_t *q, float *s, float *z) {
  const float qmax = (float)((1 << nbits) - 1);
  const int64_t ng = (k / g) * n;
  /* min-max start: s holds HQQ's scale (1 / step) until the end. */
  for (int64_t gi = 0; gi < ng; gi++) {
    const int64_t r0 = (gi / n) * g, c = gi % n;
    float lo = w[r0 * n + c], hi = lo;
    for (int64_t r = r0; r < r0 + g; r++) {
      lo = fminf(lo, w[r * n + c]);
      hi = fmaxf(hi, w[r * n + c]);
    }
    s[gi] = fminf(qmax / (hi - lo), 2e4f); /* hi == lo: inf -> 2e4 */
    z[gi] = -lo * s[gi];
    if (nbits == 4) z[gi] = rintf(z[gi]);
  }
  int rounds = 0;
  if (o->optimize) {
    double *acc = malloc((size_t)ng * sizeof *acc);
    if (!acc) return -1;
    double beta = o->beta;
    double best = 1e4;
    while (rounds < o->iters) {
      const double err = solver_round(w, k, n, g, qmax, (float)(1.0 / beta),
                                      (float)o->lp_norm, s, z, acc);
      rounds++;
      beta *= o->kappa;
      if (o->early_stop) {
        if (!(err < best)) break;
        best = err;
      }
    }
    free(acc);
  }
  for (int64_t r = 0; r < k; r++)
    for (int64_t c = 0; c < n; c++) {
      const int64_t gi = (r / g) * n + c;
      q[r * n + c] = (uint8_t)quant(w[r * n + c], s[gi], z[gi], qmax);
    }
  for (int64_t gi = 0; gi < ng; gi++) s[gi] = 1.0f / s[gi];
  return rounds;
}

/* sqrt(err2 / ref2), the relative Frobenius error. */
static double rel(double err2, double ref2) {
  return ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
}

double mb__hqq_error(const float *w, int64_t k, int64_t n, int64_t g,
                     const uint8_t *q, const float *s, const float *z) {
  double e2 = 0, r2 = 0;
  for (int64_t r = 0; r < k; r++)
    for (int64_t c = 0; c < n; c++) {
      const int64_t gi = (r / g) * n + c, i = r * n + c;
      const double d = ((double)q[i] - z[gi]) * s[gi] - w[i];
      e2 += d * d;
      r2 += (double)w[i] * w[i];
    }
  return rel(e2, r2);
}

double mb__rtn_error(const float *w, int64_t k, int64_t n, int64_t g,
                     mb_dtype_t qdtype) {
  const mb_scaling_t blk = {MB_SCALE_BLOCK, {g, 1}};
  void *q = malloc(mb_dtype_bytes(qdtype, (size_t)(k * n)));
  float *grid = malloc((size_t)((k / g) * n) * sizeof *grid);
  double e2 = 0, r2 = 0;
  if (!q || !grid) {
    free(q);
    free(grid);
    return -1.0;
  }
  mb__quantize_ref(w, k, n, &blk, qdtype, 0.0, q, grid);
  for (int64_t r = 0; r < k; r++)
    for (int64_t c = 0; c < n; c++) {
      const int64_t i = r * n + c;
      const double d =
          mb__load(q, qdtype, (size_t)i) * grid[(r / g) * n + c] - w[i];
      e2 += d * d;
      r2 += (double)w[i] * w[i];
    }
  free(q);
  free(grid);
  return rel(e2, r2);
}
