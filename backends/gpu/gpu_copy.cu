/* Shared GPU kernels: copy (Y = X, any dtype, bit-exact) — the
 * memory-bandwidth op.
 *
 * "native": our own grid-stride kernel over the bytes of X, in 16-byte
 * words when both pointers are 16-byte aligned (else 4-byte, else single
 * bytes), four words in flight per thread per step; the bytes past the last
 * whole word are copied one per thread. It measures what a plain SM kernel
 * reaches. "memcpy": the runtime's device-to-device copy on the stream, for
 * comparison. Sizes come from the host's dtype_bytes (i4: two per byte). */
#include "gpu_eltwise.cuh"

namespace {

enum { UNROLL = 4 };

template <class W>
__global__ void __launch_bounds__(MB_GPU_ELT_BLOCK)
    copy_kernel(const void *__restrict__ src, void *__restrict__ dst,
                size_t bytes) {
  const W *s = (const W *)src;
  W *d = (W *)dst;
  const size_t nw = bytes / sizeof(W);
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  const size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t i = gid;
  for (; i + (UNROLL - 1) * stride < nw; i += UNROLL * stride) {
    W w[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) w[u] = s[i + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) d[i + u * stride] = w[u];
  }
  for (; i < nw; i += stride) d[i] = s[i];
  /* The bytes past the last whole word (fewer than sizeof(W)). */
  const size_t b = nw * sizeof(W) + gid;
  if (sizeof(W) > 1 && b < bytes)
    ((unsigned char *)dst)[b] = ((const unsigned char *)src)[b];
}

/* One wave of what the device holds: every thread loops, so more blocks
 * would only queue behind the first. */
template <class W>
mb_status_t launch(const mb_gpu_env_t *env, const void *src, void *dst,
                   size_t bytes) {
  const size_t items = (bytes / sizeof(W) + UNROLL - 1) / UNROLL;
  unsigned grid = 0;
  const mb_status_t st =
      mb_gpu_grid(env, "copy", copy_kernel<W>, MB_GPU_ELT_BLOCK, 0,
                  (items + MB_GPU_ELT_BLOCK - 1) / MB_GPU_ELT_BLOCK, 1, &grid);
  if (st != MB_OK) return st;
  MB_GPU_LAUNCH(copy_kernel<W>, grid, MB_GPU_ELT_BLOCK, 0,
                (mb_gpu_stream_t)env->stream, src, dst, bytes);
  return mb__gpu_launched(env, "copy");
}

size_t copy_bytes(const mb_gpu_env_t *env, const mb_op_params_t *p) {
  return env->host->dtype_bytes(p->dtype,
                                (size_t)p->shape[0] * (size_t)p->shape[1]);
}

}  // namespace

extern "C" mb_status_t mb__gpu_copy_run(void *kstate,
                                        const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const size_t bytes = copy_bytes(env, call->params);
  const void *src = call->in[0];
  void *dst = call->out[0];
  if (mb_gpu_aligned(src, 16) && mb_gpu_aligned(dst, 16))
    return launch<mb_gpu_raw<16>>(env, src, dst, bytes);
  if (mb_gpu_aligned(src, 4) && mb_gpu_aligned(dst, 4))
    return launch<uint32_t>(env, src, dst, bytes);
  return launch<unsigned char>(env, src, dst, bytes);
}

extern "C" mb_status_t mb__gpu_copy_memcpy_run(void *kstate,
                                               const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const size_t bytes = copy_bytes(env, call->params);
  const mb_gpu_error_t e = mb_gpu_memcpy_async(call->out[0], call->in[0], bytes,
                                               (mb_gpu_stream_t)env->stream);
  if (e == mb_gpu_success) return MB_OK;
  (void)mb_gpu_get_last_error(); /* not left for the next launch check */
  env->host->set_error("%s: copy (memcpy): %s", env->backend,
                       mb_gpu_error_string(e));
  return MB_ERR_BACKEND;
}
