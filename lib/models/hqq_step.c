/* HQQ's weight preparation as a host step of a linear layer's graph
 * (graph.h): W[K,N] (hp) -> the i4 weights, group scales and zero-point
 * offsets the int4 weight-only GEMM and its zero-point correction read
 * (layer_graph.c), plus the group-sum matrix of that correction.
 *
 * torchao hands tinygemm (q - z) s as q' = q in [0, 15] with
 * dequantization (q' - 8) s + zao, zao = (8 - z) s
 * (_convert_to_affinequantized_format), s and zao in the hp dtype. Our i4
 * is signed, so Q = q - 8 in [-8, 7]: w = Q s + zao, and
 *   X . W = X . (Q s) + (X . G) . Zao,
 * G[K, K/g] the 0/1 matrix summing each group of X's row, Zao[K/g, N] the
 * offsets: the i4 GEMM with group scales as int4wo-{g} runs, and a GEMM of
 * inner size K/g for the zero points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "models/model_ops.h"
#include "ops/eltwise.h"
#include "ops/hqq.h"

enum { H_W, H_Q, H_S, H_Z, H_G };

static const char *const k_dims[] = {"K", "N"};
static const char *const k_operands[] = {"W", "Q", "scale", "zero_offset",
                                         "group_sum"};

static int64_t group(const mb_op_params_t *p) {
  return p->scale_a.block[0];
}

static mb_status_t hqq_resolve(mb_op_params_t *p) {
  const int64_t g = group(p);
  if (p->dtype_out == MB_DTYPE_NONE) p->dtype_out = MB_DTYPE_I4;
  if (g <= 0 || p->shape[0] % g)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "hqq_weights: groups of %lld along K do not divide K = "
                    "%lld; choose a K that is a multiple of the group",
                    (long long)g, (long long)p->shape[0]);
  return mb__check_dtype(&mb__op_hqq_weights, "dtype", p->dtype, mb__elt_float,
                         MB__ELT_COUNT(mb__elt_float));
}

static void hqq_operand(const mb_op_params_t *p, uint32_t role,
                        mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  const int64_t k = p->shape[0], n = p->shape[1], kg = k / group(p);
  static const mb_dtype_t k_dt[] = {MB_DTYPE_NONE, MB_DTYPE_I4, MB_DTYPE_F32,
                                    MB_DTYPE_NONE, MB_DTYPE_NONE};
  *ndim = 2;
  *dtype = k_dt[role] != MB_DTYPE_NONE ? k_dt[role] : p->dtype;
  shape[0] = role == H_S || role == H_Z ? kg : k;
  shape[1] = role == H_G ? kg : n;
}

/* Untimed: the runner never counts it. */
static double zero(const mb_op_params_t *p) {
  (void)p;
  return 0.0;
}

const mb_op_t mb__op_hqq_weights = {
    .name = "hqq_weights",
    .summary = "HQQ: u4 weights, scales and zero points of W (host, setup)",
    .shape_syntax = "KxN",
    .dim_names = k_dims,
    .params_doc = "group (scale_a block KxN as Gx1)",
    .param_mask = MB__P_SCALE_A,
    .rank = 2,
    .num_inputs = 1,
    .num_outputs = 4,
    .operand_names = k_operands,
    .dtypes = mb__elt_float,
    .num_dtypes = MB__ELT_COUNT(mb__elt_float),
    .resolve = hqq_resolve,
    .operand = hqq_operand,
    .flop = zero,
    .bytes = zero,
    .reads_output = mb__elt_never_reads_output,
};

/* The tinygemm form of HQQ's result into the outputs; the HQQ weight error
 * beside the two round-to-nearest ones in the note. */
static void store(const mb_op_params_t *p, const uint8_t *q, const float *s,
                  const float *z, void *const *out) {
  const int64_t k = p->shape[0], n = p->shape[1], g = group(p), kg = k / g;
  for (int64_t i = 0; i < k * n; i++)
    mb__store(out[0], MB_DTYPE_I4, (size_t)i, (double)q[i] - 8.0, 0);
  for (int64_t i = 0; i < kg * n; i++) {
    const float zao = (8.0f - z[i]) * s[i]; /* f32, then to hp: torchao's */
    ((float *)out[1])[i] = (float)mb__round(s[i], p->dtype, 0);
    mb__store(out[2], p->dtype, (size_t)i, zao, 0);
  }
  for (int64_t r = 0; r < k; r++)
    for (int64_t c = 0; c < kg; c++)
      mb__store(out[3], p->dtype, (size_t)(r * kg + c), r / g == c, 0);
}

static mb_status_t hqq_host(const mb_op_params_t *p, const void *const *in,
                            void *const *out, char *note, size_t cap) {
  const int64_t k = p->shape[0], n = p->shape[1], g = group(p);
  const size_t numel = (size_t)(k * n), ng = (size_t)((k / g) * n);
  float *w = mb__model_load(in[0], p->dtype, numel);
  float *s = malloc(2 * ng * sizeof *s);
  uint8_t *q = malloc(numel);
  mb_status_t st = MB_OK;
  if (w && s && q) {
    const mb__hqq_opts_t o = MB__HQQ_OPTS_INIT;
    float *z = s + ng;
    const int rounds = mb__hqq_quantize(w, k, n, g, 4, &o, q, s, z);
    const double rtn = mb__rtn_error(w, k, n, g, MB_DTYPE_I4);
    if (rounds < 0 || rtn < 0) {
      st = mb__fail(MB_ERR_NO_MEMORY, "hqq_weights: out of host memory");
    } else {
      store(p, q, s, z, out);
      snprintf(note, cap,
               "%d solver rounds, weight error ||W - deq(W)|| / ||W|| "
               "%.4f (int4wo's round-to-nearest: %.4f)",
               rounds, mb__hqq_error(w, k, n, g, q, s, z), rtn);
    }
  } else {
    st = mb__fail(MB_ERR_NO_MEMORY, "hqq_weights: out of host memory");
  }
  free(w);
  free(s);
  free(q);
  return st;
}

uint32_t mb__graph_hqq_weights(mb__graph_t *g, const char *label, uint32_t w,
                               int64_t k, int64_t n, mb_dtype_t hp,
                               int64_t group_size) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = k;
  p.shape[1] = n;
  p.dtype = hp;
  p.scale_a = (mb_scaling_t){MB_SCALE_BLOCK, {group_size, 1}};
  const uint32_t args[5] = {w, MB__NEW, MB__NEW, MB__NEW, MB__NEW};
  return mb__graph_host_step(g, label, &mb__op_hqq_weights, &p, args, hqq_host);
}
