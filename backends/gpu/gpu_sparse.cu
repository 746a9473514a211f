/* Shared GPU kernels: the sparse GEMMs of torchao's sparsity recipes
 * (lib/ops/sparse.h has the formats; lib/ops/gemm_sparse.c the ops):
 *   gemm_sparse24:     D = A . W, W 2:4 along K as values + 2-bit indices
 *   gemm_block_sparse: D = A . W, W as kept 64x64 blocks + their indices
 *
 * One thread per output element, f32 accumulation, one rounding to D: the
 * kept products only (K/2 per output), read straight from the compressed
 * operands. A correctness kernel and a baseline for the vendor library
 * (cuSPARSELt, not wired yet): no tiling, no tensor cores, so far from
 * the hardware's sparse peak. */
#include "gpu_eltwise.cuh"

namespace {

template <mb_dtype_t D>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    sparse24_kernel(const void *__restrict__ a, const void *__restrict__ v,
                    const uint8_t *__restrict__ meta, void *__restrict__ d,
                    size_t m, size_t k, size_t n) {
  const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= m * n) return;
  const size_t i = e / n, j = e % n;
  float acc = 0.0f;
  for (size_t g = 0; g < k / 4; ++g) {
    const unsigned nib = (meta[g / 2 * n + j] >> (4 * (g & 1))) & 15u;
    acc += mb_gpu_load(D, a, i * k + 4 * g + (nib & 3u)) *
               mb_gpu_load(D, v, 2 * g * n + j) +
           mb_gpu_load(D, a, i * k + 4 * g + (nib >> 2)) *
               mb_gpu_load(D, v, (2 * g + 1) * n + j);
  }
  mb_gpu_store(D, d, e, acc);
}

enum { BS = 64 };

template <mb_dtype_t D>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    block_sparse_kernel(const void *__restrict__ a, const void *__restrict__ v,
                        const int32_t *__restrict__ idx, void *__restrict__ d,
                        size_t m, size_t k, size_t n) {
  const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= m * n) return;
  const size_t i = e / n, j = e % n, keep = k / (2 * BS);
  const size_t strip = j / BS, c = j % BS;
  float acc = 0.0f;
  for (size_t t = 0; t < keep; ++t) {
    const size_t kb = (size_t)idx[strip * keep + t];
    const size_t base = (strip * keep + t) * BS * BS;
    for (size_t q = 0; q < BS; ++q)
      acc += mb_gpu_load(D, a, i * k + kb * BS + q) *
             mb_gpu_load(D, v, base + q * BS + c);
  }
  mb_gpu_store(D, d, e, acc);
}

template <mb_dtype_t D>
mb_status_t launch(const mb_gpu_env_t *env, const mb_kernel_call_t *call,
                   int block) {
  const mb_op_params_t *p = call->params;
  const size_t m = (size_t)p->shape[0], k = (size_t)p->shape[1],
               n = (size_t)p->shape[2];
  const size_t blocks = (m * n + MB_GPU_ELT_BLOCK - 1) / MB_GPU_ELT_BLOCK;
  const mb_gpu_stream_t stream = (mb_gpu_stream_t)env->stream;
  if (block)
    MB_GPU_LAUNCH(block_sparse_kernel<D>, (unsigned)blocks, MB_GPU_ELT_BLOCK, 0,
                  stream, call->in[0], call->in[1],
                  (const int32_t *)call->in[2], call->out[0], m, k, n);
  else
    MB_GPU_LAUNCH(sparse24_kernel<D>, (unsigned)blocks, MB_GPU_ELT_BLOCK, 0,
                  stream, call->in[0], call->in[1],
                  (const uint8_t *)call->in[2], call->out[0], m, k, n);
  return mb__gpu_launched(env, block ? "gemm_block_sparse" : "gemm_sparse24");
}

mb_status_t run(void *kstate, const mb_kernel_call_t *call, int block) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  const char *what = block ? "gemm_block_sparse" : "gemm_sparse24";
  if (!mb_gpu_is_float(p->dtype, 0) || p->dtype_out != p->dtype)
    return mb_gpu_unsupported_dtype(env, what, p->dtype);
  if ((size_t)p->shape[0] * (size_t)p->shape[2] >
      (size_t)0x7FFFFFFF * MB_GPU_ELT_BLOCK) {
    env->host->set_error("%s: %s: %lld x %lld outputs exceed one grid",
                         env->backend, what, (long long)p->shape[0],
                         (long long)p->shape[2]);
    return MB_ERR_UNSUPPORTED;
  }
  return mb_gpu_dispatch_f32_16(p->dtype, [&](auto d) {
    return launch<decltype(d)::value>(env, call, block);
  });
}

}  // namespace

extern "C" mb_status_t mb__gpu_gemm_sparse24_run(void *kstate,
                                                 const mb_kernel_call_t *call) {
  return run(kstate, call, 0);
}

extern "C" mb_status_t mb__gpu_gemm_block_sparse_run(
    void *kstate, const mb_kernel_call_t *call) {
  return run(kstate, call, 1);
}
