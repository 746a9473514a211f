/* Shared GPU kernels: copy (Y = X, any dtype, bit-exact) — the
 * memory-bandwidth op.
 *
 * "native": our own grid-stride kernel over the bytes of X, in 16-byte
 * words when both pointers are 16-byte aligned (else 4-byte, else single
 * bytes), four words in flight per thread per step; the bytes past the last
 * whole word are copied one per thread. It measures what a plain SM kernel
 * reaches. "memcpy": the runtime's device-to-device copy on the stream, for
 * comparison. Sizes come from the host's dtype_bytes (i4: two per byte). */
#include <stdlib.h>
#include <string.h>

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

/* ---- h2d, d2h: the host transfers ----------------------------------------
 * The runtime's copy between device memory and a page-locked host buffer of
 * the kernel's (mb_gpu_host_alloc_mapped). h2d stages X in it untimed and
 * times buffer -> Y; d2h times X -> buffer, and its collect hook (untimed)
 * copies the buffer into Y for the check and spoils it, so each check sees
 * only what the runs since the last one wrote.
 *
 * Pageable host memory is declined on a GPU: the runtime synchronises the
 * stream before a pageable copy (CUDA's "API synchronization behavior"),
 * while our timing holds the stream with a blocking kernel until the whole
 * batch is queued (docs/measurement.md#gpu-timing) — the copy would wait
 * for the kernel and the kernel for the host. The CPU backend runs both. */

namespace {

enum { SPOILED = 0xA5 };

struct transfer_t {
  const mb_gpu_env_t *env;
  void *host; /* page-locked */
  size_t bytes;
};

mb_status_t runtime_error(const mb_gpu_env_t *env, const char *what,
                          mb_gpu_error_t e) {
  (void)mb_gpu_get_last_error(); /* not left for the next launch check */
  env->host->set_error("%s: %s: %s", env->backend, what,
                       mb_gpu_error_string(e));
  return e == mb_gpu_error_oom ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

mb_status_t transfer_prepare(void *bstate, const mb_kernel_call_t *call,
                             const char *op, void **kstate) {
  *kstate = NULL;
  const mb_gpu_env_t *env = NULL;
  mb_status_t st = mb__gpu_device_env(bstate, call->device, &env);
  if (st != MB_OK) return st; /* the backend said why */
  transfer_t *k = (transfer_t *)calloc(1, sizeof *k);
  if (!k) {
    env->host->set_error("%s: %s: out of host memory", env->backend, op);
    return MB_ERR_NO_MEMORY;
  }
  k->env = env;
  k->bytes = copy_bytes(env, call->params);
  const mb_gpu_error_t e =
      mb_gpu_host_alloc_mapped(&k->host, k->bytes ? k->bytes : 1);
  if (e != mb_gpu_success) {
    free(k);
    return runtime_error(env, op, e);
  }
  memset(k->host, SPOILED, k->bytes);
  *kstate = k;
  return MB_OK;
}

/* One copy on the stream, checked. */
mb_status_t transfer(const transfer_t *k, void *dst, const void *src,
                     const char *what) {
  const mb_gpu_error_t e =
      mb_gpu_copy_async(dst, src, k->bytes, (mb_gpu_stream_t)k->env->stream);
  return e == mb_gpu_success ? MB_OK : runtime_error(k->env, what, e);
}

/* An untimed copy, finished before it returns. */
mb_status_t transfer_now(const transfer_t *k, void *dst, const void *src,
                         const char *what) {
  mb_status_t st = transfer(k, dst, src, what);
  const mb_gpu_error_t e =
      st == MB_OK ? mb_gpu_stream_sync((mb_gpu_stream_t)k->env->stream)
                  : mb_gpu_success;
  return e == mb_gpu_success ? st : runtime_error(k->env, what, e);
}

}  // namespace

extern "C" mb_status_t mb__gpu_transfer_supports(void *bstate, uint32_t dev,
                                                 const mb_op_params_t *p,
                                                 const char **why) {
  (void)bstate, (void)dev;
  if (p->flags & MB_PARAM_PINNED) return MB_OK;
  *why =
      "pageable host memory on a GPU: the runtime synchronises the stream "
      "before a pageable copy, which the GPU timing's blocking kernel holds "
      "until the batch is queued (docs/gpu.md); run with pinned";
  return MB_ERR_UNSUPPORTED;
}

extern "C" mb_status_t mb__gpu_h2d_prepare(void *bstate,
                                           const mb_kernel_call_t *call,
                                           void **kstate) {
  mb_status_t st = transfer_prepare(bstate, call, "h2d", kstate);
  if (st == MB_OK) { /* X staged on the host */
    const transfer_t *k = (const transfer_t *)*kstate;
    st = transfer_now(k, k->host, call->in[0], "h2d: staging X");
    if (st != MB_OK) mb__gpu_transfer_release(*kstate), *kstate = NULL;
  }
  return st;
}

extern "C" mb_status_t mb__gpu_h2d_run(void *kstate,
                                       const mb_kernel_call_t *call) {
  const transfer_t *k = (const transfer_t *)kstate;
  return transfer(k, call->out[0], k->host, "h2d");
}

extern "C" mb_status_t mb__gpu_h2d_collect(void *kstate,
                                           const mb_kernel_call_t *call) {
  (void)kstate, (void)call; /* the run wrote Y itself */
  return MB_OK;
}

extern "C" mb_status_t mb__gpu_d2h_prepare(void *bstate,
                                           const mb_kernel_call_t *call,
                                           void **kstate) {
  return transfer_prepare(bstate, call, "d2h", kstate);
}

extern "C" mb_status_t mb__gpu_d2h_run(void *kstate,
                                       const mb_kernel_call_t *call) {
  const transfer_t *k = (const transfer_t *)kstate;
  return transfer(k, k->host, call->in[0], "d2h");
}

extern "C" mb_status_t mb__gpu_d2h_collect(void *kstate,
                                           const mb_kernel_call_t *call) {
  const transfer_t *k = (const transfer_t *)kstate;
  mb_status_t st = transfer_now(k, call->out[0], k->host, "d2h: collecting");
  if (st == MB_OK) memset(k->host, SPOILED, k->bytes);
  return st;
}

extern "C" void mb__gpu_transfer_release(void *kstate) {
  transfer_t *k = (transfer_t *)kstate;
  if (!k) return;
  (void)mb_gpu_stream_sync((mb_gpu_stream_t)k->env->stream);
  if (k->host) (void)mb_gpu_host_free(k->host);
  free(k);
}
