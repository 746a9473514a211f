/* Shared GPU kernels: copy (Y = X, any dtype, bit-exact) — the
 * memory-bandwidth op.
 *
 * "native": our own grid-stride kernel over the bytes of X, in 16-byte
 * words when both pointers are 16-byte aligned (else 4-byte, else single
 * bytes), four words in flight per thread per step; the bytes past the last
 * whole word are copied one per thread. It measures what a plain SM kernel
 * reaches. "memcpy": the runtime's device-to-device copy on the stream, for
 * comparison. Sizes come from the host's dtype_bytes (i4: two per byte). */
#include <stdio.h>
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
  double link_gbps; /* the host link's datasheet figure; <= 0 unknown */
  char link[256];   /* what it is, or why it is unknown */
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
  k->link_gbps =
      mb__gpu_link(bstate, call->device, -1, k->link, sizeof k->link);
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

/* The link a transfer crosses: what it is, and its figure when known
 * (the result's roof, MB_KERNEL_NOTE_LINK). */
uint32_t link_notes(const char *link, double gbps, mb_kernel_note_t *out,
                    uint32_t max) {
  const mb_kernel_note_t notes[] = {{"link", link, 0},
                                    {MB_KERNEL_NOTE_LINK, NULL, gbps}};
  const uint32_t n = gbps > 0 ? 2u : 1u;
  for (uint32_t i = 0; i < n && i < max; i++) out[i] = notes[i];
  return n;
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

extern "C" uint32_t mb__gpu_transfer_notes(void *kstate, mb_kernel_note_t *out,
                                           uint32_t max) {
  const transfer_t *k = (const transfer_t *)kstate;
  return link_notes(k->link, k->link_gbps, out, max);
}

extern "C" void mb__gpu_transfer_release(void *kstate) {
  transfer_t *k = (transfer_t *)kstate;
  if (!k) return;
  (void)mb_gpu_stream_sync((mb_gpu_stream_t)k->env->stream);
  if (k->host) (void)mb_gpu_host_free(k->host);
  free(k);
}

/* ---- d2d: a copy to a second device --------------------------------------
 * X on the benchmark's device to a buffer on the peer (mb__gpu_peer_of:
 * device (dev + 1) mod count), allocated there in prepare; the runtime's
 * peer copy on the benchmark's stream (cudaMemcpyPeerAsync,
 * hipMemcpyPeerAsync). With MB_PARAM_PEER, prepare enables peer access
 * both ways (as CUDA's p2pBandwidthLatencyTest does); without it, it
 * disables access the process may have enabled before, so the runtime
 * stages the copy through host memory. Peer access is process-wide and is
 * left as this prepare set it: every d2d sets what its flag asks. The
 * collect hook copies the peer's buffer into Y for the check and spoils
 * it, as d2h's. */

namespace {

struct peer_copy_t {
  void *bstate;
  uint32_t dev;
  mb_gpu_peer_t peer;
  const mb_gpu_env_t *env, *peer_env;
  void *dst; /* on the peer */
  size_t bytes;
  const char *access;
  double link_gbps; /* <= 0 unknown */
  char link[640];
};

/* Peer access from the current device to `target` as `on` asks; the
 * runtime's "already so" is success. */
mb_gpu_error_t set_access(int on, int target) {
  const mb_gpu_error_t e = on ? mb_gpu_enable_peer_access(target)
                              : mb_gpu_disable_peer_access(target);
  if (e == mb_gpu_success ||
      e == (on ? mb_gpu_error_peer_enabled : mb_gpu_error_peer_not_enabled)) {
    (void)mb_gpu_get_last_error();
    return mb_gpu_success;
  }
  return e;
}

/* The link the copy crosses. Peer access on: the direct link (NVLink,
 * xGMI) when the devices have one, else PCIe peer to peer; off: the
 * runtime stages through host memory, over both devices' host links. The
 * PCIe figure is the slower of the two host links; a link the backend
 * could not read leaves the copy without a figure. */
void peer_link(peer_copy_t *k, int on) {
  char a[256], b[256], direct[256] = "";
  if (on) {
    const double d = mb__gpu_link(k->bstate, k->dev, (int)k->peer.index, direct,
                                  sizeof direct);
    if (d != 0) { /* the direct link's figure, or unknown */
      k->link_gbps = d;
      snprintf(k->link, sizeof k->link, "direct: %s", direct);
      return;
    }
  }
  const double ha = mb__gpu_link(k->bstate, k->dev, -1, a, sizeof a);
  const double hb = mb__gpu_link(k->bstate, k->peer.index, -1, b, sizeof b);
  k->link_gbps = ha > 0 && hb > 0 ? (ha < hb ? ha : hb) : -1;
  snprintf(k->link, sizeof k->link,
           "%s: the slower host link of device %u (%s) and device %u (%s)%s%s",
           on ? "PCIe peer to peer" : "staged through host memory", k->dev, a,
           k->peer.index, b, on ? "; no direct link: " : "", direct);
}

}  // namespace

extern "C" mb_status_t mb__gpu_d2d_supports(void *bstate, uint32_t dev,
                                            const mb_op_params_t *p,
                                            const char **why) {
  mb_gpu_peer_t peer;
  return mb__gpu_peer_of(bstate, dev, p->flags, &peer, why);
}

extern "C" mb_status_t mb__gpu_d2d_prepare(void *bstate,
                                           const mb_kernel_call_t *call,
                                           void **kstate) {
  *kstate = NULL;
  const mb_gpu_env_t *env = NULL;
  mb_status_t st = mb__gpu_device_env(bstate, call->device, &env);
  if (st != MB_OK) return st;
  peer_copy_t *k = (peer_copy_t *)calloc(1, sizeof *k);
  if (!k) {
    env->host->set_error("%s: d2d: out of host memory", env->backend);
    return MB_ERR_NO_MEMORY;
  }
  k->bstate = bstate;
  k->dev = call->device;
  k->env = env;
  k->bytes = copy_bytes(env, call->params);
  const int on = (call->params->flags & MB_PARAM_PEER) != 0;
  const char *why = NULL;
  st = mb__gpu_peer_of(bstate, k->dev, call->params->flags, &k->peer, &why);
  if (st != MB_OK) env->host->set_error("%s: d2d: %s", env->backend, why);
  /* On the peer: Y's twin, spoiled, and its access to us. */
  if (st == MB_OK) st = mb__gpu_device_env(bstate, k->peer.index, &k->peer_env);
  if (st == MB_OK)
    st = k->peer_env->scratch_alloc(k->peer_env, k->bytes ? k->bytes : 1,
                                    &k->dst);
  mb_gpu_error_t e = mb_gpu_success;
  if (st == MB_OK &&
      ((e = mb_gpu_memset_async(k->dst, SPOILED, k->bytes,
                                (mb_gpu_stream_t)k->peer_env->stream)) !=
           mb_gpu_success ||
       (e = mb_gpu_stream_sync((mb_gpu_stream_t)k->peer_env->stream)) !=
           mb_gpu_success ||
       (e = set_access(on, k->peer.self_ordinal)) != mb_gpu_success))
    st = runtime_error(env, "d2d: on the peer", e);
  /* Back on the benchmark's device, current for the runs. */
  if (st == MB_OK) st = mb__gpu_device_env(bstate, k->dev, &k->env);
  if (st == MB_OK && (e = set_access(on, k->peer.ordinal)) != mb_gpu_success)
    st = runtime_error(env, "d2d: peer access", e);
  if (st != MB_OK) {
    mb__gpu_d2d_release(k);
    return st;
  }
  k->access = on ? "enabled both ways: device to device"
              : k->peer.can_access
                  ? "possible, disabled: the runtime stages the copy through "
                    "host memory"
                  : "not possible: the runtime stages the copy through host "
                    "memory";
  peer_link(k, on);
  *kstate = k;
  return MB_OK;
}

extern "C" mb_status_t mb__gpu_d2d_run(void *kstate,
                                       const mb_kernel_call_t *call) {
  const peer_copy_t *k = (const peer_copy_t *)kstate;
  const mb_gpu_error_t e = mb_gpu_memcpy_peer_async(
      k->dst, k->peer.ordinal, call->in[0], k->peer.self_ordinal, k->bytes,
      (mb_gpu_stream_t)k->env->stream);
  return e == mb_gpu_success ? MB_OK : runtime_error(k->env, "d2d", e);
}

extern "C" mb_status_t mb__gpu_d2d_collect(void *kstate,
                                           const mb_kernel_call_t *call) {
  const peer_copy_t *k = (const peer_copy_t *)kstate;
  mb_gpu_stream_t s = (mb_gpu_stream_t)k->env->stream;
  mb_gpu_error_t e = mb_gpu_memcpy_peer_async(
      call->out[0], k->peer.self_ordinal, k->dst, k->peer.ordinal, k->bytes, s);
  if (e == mb_gpu_success) e = mb_gpu_stream_sync(s);
  /* Spoiled on the peer's own stream, then the benchmark's device again. */
  const mb_gpu_env_t *penv = NULL;
  mb_status_t st = e == mb_gpu_success
                       ? mb__gpu_device_env(k->bstate, k->peer.index, &penv)
                       : runtime_error(k->env, "d2d: collecting", e);
  if (st == MB_OK && ((e = mb_gpu_memset_async(
                           k->dst, SPOILED, k->bytes,
                           (mb_gpu_stream_t)penv->stream)) != mb_gpu_success ||
                      (e = mb_gpu_stream_sync((mb_gpu_stream_t)penv->stream)) !=
                          mb_gpu_success))
    st = runtime_error(k->env, "d2d: spoiling the peer's buffer", e);
  const mb_gpu_env_t *env = NULL;
  const mb_status_t back = mb__gpu_device_env(k->bstate, k->dev, &env);
  return st == MB_OK ? back : st;
}

extern "C" uint32_t mb__gpu_d2d_notes(void *kstate, mb_kernel_note_t *out,
                                      uint32_t max) {
  const peer_copy_t *k = (const peer_copy_t *)kstate;
  const mb_kernel_note_t notes[] = {
      {"peer_device", NULL, (double)k->peer.index},
      {"peer_access", k->access, 0}};
  const uint32_t n = sizeof notes / sizeof notes[0];
  for (uint32_t i = 0; i < n && i < max; i++) out[i] = notes[i];
  return n + link_notes(k->link, k->link_gbps, max > n ? out + n : out,
                        max > n ? max - n : 0);
}

extern "C" void mb__gpu_d2d_release(void *kstate) {
  peer_copy_t *k = (peer_copy_t *)kstate;
  if (!k) return;
  (void)mb_gpu_stream_sync((mb_gpu_stream_t)k->env->stream);
  const mb_gpu_env_t *penv = NULL;
  if (k->dst && mb__gpu_device_env(k->bstate, k->peer.index, &penv) == MB_OK)
    penv->scratch_free(penv, k->dst); /* synchronises the peer's stream */
  const mb_gpu_env_t *env = NULL;
  (void)mb__gpu_device_env(k->bstate, k->dev, &env);
  free(k);
}
