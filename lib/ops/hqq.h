/* HQQ (half-quadratic quantization) of a weight matrix, as torchao's
 * _choose_qparams_and_quantize_affine_hqq with its default optimiser,
 * optimize_weights_proximal_legacy (pytorch/ao 36027d82, unchanged since
 * the int4wo-{g}-hqq recipe's parser, 985d970b). hqq.c says how. */
#ifndef MB_LIB_OPS_HQQ_H
#define MB_LIB_OPS_HQQ_H

#include <stdint.h>

#include "internal.h"

/* The proximal solver's parameters (torchao's opt_params defaults). */
typedef struct mb__hqq_opts {
  double lp_norm, beta, kappa;
  int iters, early_stop, optimize; /* optimize 0: min-max RTN only */
} mb__hqq_opts_t;
#define MB__HQQ_OPTS_INIT \
  { 0.7, 10.0, 1.01, 20, 1, 1 }

/* W[k][n] (row-major, K x N: the GEMM's B) in groups of g along K, nbits
 * unsigned: q[k][n] in [0, 2^nbits - 1] (one byte each), and per group
 * (grid [k/g][n]) the dequantization scale s and HQQ's zero z, so that
 * w ~ (q - z) s. Deterministic; f32 arithmetic as torchao's on a CPU.
 * Returns the optimiser's iterations run; -1 when out of memory. */
int mb__hqq_quantize(const float *w, int64_t k, int64_t n, int64_t g, int nbits,
                     const mb__hqq_opts_t *o, uint8_t *q, float *s, float *z);

/* ||W - (q - z) s||_F / ||W||_F of that result (HQQ's own form, f32). */
double mb__hqq_error(const float *w, int64_t k, int64_t n, int64_t g,
                     const uint8_t *q, const float *s, const float *z);
/* The same error of the symmetric round-to-nearest quantization int4wo-{g}
 * makes (absmax / qmax scales in groups of g along K; op quantize's
 * semantics); -1 when out of memory. */
double mb__rtn_error(const float *w, int64_t k, int64_t n, int64_t g,
                     mb_dtype_t qdtype);

#endif
