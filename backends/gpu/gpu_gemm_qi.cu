/* gemm quantize-inputs on the GPU, implementation "native"
 * (gemm_fp8_rowwise): A and B, bf16 or f32, are quantized to dtype_q
 * (f8e4m3, f8e5m2, i8) inside the timed run by the shared quantize kernel
 * (dynamic absmax with the request's scalings, exactly the op's semantics),
 * then the native kernel multiplies the quantized operands with their
 * scales (gpu_gemm.cuh) — or, with explicit dequantization
 * (gemm_fp8_rowwise_w_dequantize), without them into an f32 product that a
 * kernel of its own then scales into D.
 *
 * The quantized A and B and their scale grids need device memory: the
 * kernel's own, allocated in prepare and freed in release (untimed) through
 * the device's env->scratch_alloc / env->scratch_free. prepare gets only the
 * backend's state, so it reaches the env through mb__gpu_device_env, which
 * every backend defines (gpu_kernels.h). */
#include "gpu_gemm.cuh"

#include <stdlib.h>

namespace {

enum { SIDE_A = 0, SIDE_B = 1 };

typedef struct qi_kernel {
  const mb_gpu_env_t *env;
  mb_op_params_t p;     /* the product of the quantized operands */
  mb_op_params_t qp[2]; /* quantize A (M x K), B (K x N) */
  void *q[2];           /* quantized A, B */
  float *grid[2];       /* their scales */
  void *q_in[2][1];
  void *q_out[2][2];
  mb_kernel_call_t qcall[2];
  /* Explicit dequantization: the request (alpha, beta, D's dtype, the
   * scale blocks) and the unscaled f32 product; NULL otherwise. */
  mb_op_params_t outer;
  float *acc;
} qi_kernel_t;

enum { DQ_BLOCK = 256 };

/* D = acc ((alpha sa_i) sb_j) + beta D: row i's scale, column j's (the
 * scales hold along all of K: resolve checked), the scales' product first
 * as the JAX suite's acc * (sx * sy); the CPU's pass rounds the same way. */
__global__ void __launch_bounds__(DQ_BLOCK)
    dequant_kernel(const float *__restrict__ acc, const float *__restrict__ ga,
                   const float *__restrict__ gb, void *d, mb_dtype_t tout,
                   size_t m, size_t n, size_t bma, size_t bnb, float alpha,
                   float beta) {
  const size_t total = m * n, stride = (size_t)gridDim.x * blockDim.x;
  for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const size_t i = e / n, j = e % n;
    float v = acc[e] * ((alpha * ga[i / bma]) * gb[j / bnb]);
    if (beta != 0.0f) v += beta * mb_gpu_load(tout, d, e); /* else unread */
    mb_gpu_store(tout, d, e, v);
  }
}

mb_status_t dequant(const qi_kernel_t *k, void *d) {
  const mb_op_params_t *p = &k->outer;
  const size_t m = (size_t)p->shape[0], n = (size_t)p->shape[2];
  unsigned grid = 0;
  const mb_status_t st =
      mb_gpu_grid(k->env, "gemm dequantize", dequant_kernel, DQ_BLOCK, 0,
                  (m * n + DQ_BLOCK - 1) / DQ_BLOCK, 1, &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(dequant_kernel, grid, DQ_BLOCK, 0,
                (mb_gpu_stream_t)k->env->stream, k->acc, k->grid[0], k->grid[1],
                d, p->dtype_out, m, n, (size_t)p->scale_a.block[0],
                (size_t)p->scale_b.block[1], (float)p->alpha, (float)p->beta);
  return mb__gpu_launched(k->env, "gemm dequantize");
}

/* Quantization of one side: A (M x K) with scale_a, or B (K x N) with
 * scale_b, not transposed (the kernel reads B as K x N). */
void plan_quantize(qi_kernel_t *k, int side, const mb_op_params_t *p) {
  mb_op_params_t q = MB_OP_PARAMS_INIT;
  q.ndim = 2;
  q.shape[0] = side == SIDE_A ? p->shape[0] : p->shape[1];
  q.shape[1] = side == SIDE_A ? p->shape[1] : p->shape[2];
  q.dtype = q.dtype_b = side == SIDE_A ? p->dtype : p->dtype_b;
  q.dtype_out = p->dtype_q;
  q.dtype_acc = MB_DTYPE_F32;
  q.scale_a = side == SIDE_A ? p->scale_a : p->scale_b;
  /* gemm's static scale is the quantize op's: every scale given. */
  q.flags = p->flags & MB_PARAM_STATIC;
  q.scale = p->scale;
  /* e8m0 (MXFP8): the grids come back as bytes, which the GEMM reads as
   * such (k->p keeps dtype_scale). */
  q.dtype_scale = p->dtype_scale;
  k->qp[side] = q;
  k->q_out[side][0] = k->q[side];
  k->q_out[side][1] = k->grid[side];
  k->qcall[side] = mb_kernel_call_t{sizeof(mb_kernel_call_t),
                                    &k->qp[side],
                                    k->q_in[side],
                                    1,
                                    k->q_out[side],
                                    2,
                                    0,
                                    0u /* quantize reads it in run only */};
}

/* Device memory for both sides' Q and scales. */
mb_status_t allocate(qi_kernel_t *k, const mb_op_params_t *p) {
  const int64_t m = p->shape[0], kk = p->shape[1], n = p->shape[2];
  const size_t q_bytes[2] = {(size_t)(m * kk), (size_t)(kk * n)};
  const size_t scales[2] = {
      (size_t)(m / p->scale_a.block[0] * (kk / p->scale_a.block[1])),
      (size_t)(kk / p->scale_b.block[0] * (n / p->scale_b.block[1]))};
  mb_status_t st = MB_OK;
  for (int side = SIDE_A; side <= SIDE_B && st == MB_OK; ++side) {
    void *g = NULL;
    st = k->env->scratch_alloc(k->env, q_bytes[side], &k->q[side]);
    if (st == MB_OK) st = k->env->scratch_alloc(k->env, scales[side] * 4, &g);
    k->grid[side] = (float *)g;
  }
  return st;
}

}  // namespace

extern "C" mb_status_t mb__gpu_gemm_qi_supports(void *bstate, uint32_t dev,
                                                const mb_op_params_t *params,
                                                const char **why) {
  (void)bstate, (void)dev; /* the answer depends on the params only */
  const char *reason = NULL;
  mb_status_t st = mb_gg_check(params, &reason);
  if (st == MB_OK && !(params->flags & MB_PARAM_QUANTIZE_INPUTS)) {
    st = MB_ERR_UNSUPPORTED;
    reason = "native gemm: these entries run quantize-inputs only";
  }
  if (st != MB_OK && why) *why = reason;
  return st;
}

extern "C" void mb__gpu_gemm_qi_release(void *kstate) {
  qi_kernel_t *k = (qi_kernel_t *)kstate;
  if (!k) return;
  for (int side = SIDE_A; side <= SIDE_B; ++side) {
    if (k->q[side]) k->env->scratch_free(k->env, k->q[side]);
    if (k->grid[side]) k->env->scratch_free(k->env, k->grid[side]);
  }
  if (k->acc) k->env->scratch_free(k->env, k->acc);
  free(k);
}

extern "C" mb_status_t mb__gpu_gemm_qi_prepare(void *bstate,
                                               const mb_kernel_call_t *call,
                                               void **kstate) {
  *kstate = NULL;
  const char *why = NULL;
  const mb_gpu_env_t *env = NULL;
  mb_status_t st = mb__gpu_device_env(bstate, call->device, &env);
  if (st != MB_OK) return st; /* the backend said why */
  const mb_op_params_t *p = call->params;
  st = mb_gg_check(p, &why);
  if (st == MB_OK && !(p->flags & MB_PARAM_QUANTIZE_INPUTS)) {
    why = "native gemm: these entries run quantize-inputs only";
    st = MB_ERR_INVALID_ARG;
  }
  if (st != MB_OK) return mb_gg_fail(env, st, why);
  qi_kernel_t *k = (qi_kernel_t *)calloc(1, sizeof *k);
  if (!k)
    return mb_gg_fail(env, MB_ERR_NO_MEMORY, "native gemm: out of host memory");
  k->env = env;
  st = allocate(k, p);
  if (st != MB_OK) {
    mb__gpu_gemm_qi_release(k);
    return st;
  }
  for (int side = SIDE_A; side <= SIDE_B; ++side) {
    plan_quantize(k, side, p);
    k->qcall[side].device = call->device;
  }
  /* The product sees an ordinary scaled GEMM of dtype_q operands. */
  k->p = *p;
  k->p.dtype = k->p.dtype_b = p->dtype_q;
  k->p.dtype_q = MB_DTYPE_NONE;
  k->p.flags &= ~(MB_PARAM_QUANTIZE_INPUTS | MB_PARAM_STATIC);
  if (p->flags & MB_PARAM_EXPLICIT_DEQUANT) { /* an unscaled f32 product */
    k->outer = *p;
    void *acc = NULL;
    st = env->scratch_alloc(
        env, (size_t)p->shape[0] * (size_t)p->shape[2] * sizeof(float), &acc);
    k->acc = (float *)acc;
    k->p.scale_a = k->p.scale_b = mb_scaling_t{MB_SCALE_NONE, {0, 0}};
    k->p.dtype_out = MB_DTYPE_F32;
    k->p.alpha = 1.0, k->p.beta = 0.0;
    k->p.flags &= ~MB_PARAM_EXPLICIT_DEQUANT;
    if (st != MB_OK) {
      mb__gpu_gemm_qi_release(k);
      return st;
    }
  }
  *kstate = k;
  return MB_OK;
}

/* Timed: quantize A, quantize B, multiply (and, explicitly, dequantize). */
extern "C" mb_status_t mb__gpu_gemm_qi_run(void *kstate,
                                           const mb_kernel_call_t *call) {
  qi_kernel_t *k = (qi_kernel_t *)kstate;
  if (call->num_in < 2 || call->num_out < 1 || !call->in[0] || !call->in[1] ||
      !call->out[0])
    return mb_gg_fail(k->env, MB_ERR_INVALID_ARG,
                      "native gemm: the call needs A, B and D");
  mb_status_t st = MB_OK;
  for (int side = SIDE_A; side <= SIDE_B && st == MB_OK; ++side) {
    k->q_in[side][0] = call->in[side];
    st = mb__gpu_quantize_run((void *)k->env, &k->qcall[side]);
  }
  if (st != MB_OK) return st;
  mb_gg_args_t g;
  mb_gg_plan(&k->p, k->q[SIDE_A], k->q[SIDE_B], k->grid[SIDE_A],
             k->grid[SIDE_B], k->acc ? k->acc : call->out[0], &g);
  st = mb_gg_launch(k->env, k->p.dtype, k->p.dtype_b, &g);
  return st == MB_OK && k->acc ? dequant(k, call->out[0]) : st;
}
