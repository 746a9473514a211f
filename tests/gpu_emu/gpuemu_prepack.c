/* A test double of a vendor GEMM that pre-packs B in prepare, as cuBLASLt's
 * fp8 kernel does (its B^T copy): prepare copies B once, run multiplies
 * with the copy (the shared native kernel does the arithmetic). Listed
 * first in gpuemu64's table, so a composite's fp8 GEMM steps meet it the
 * way they meet cuBLASLt on a GPU. It keeps the contract of varying_in
 * (sys/backend.h): a B written inside the timed run is declined, and the
 * composite falls back to the next kernel. What it catches: a composite
 * that prepares a step before the setup steps have written its weights (a
 * stale, empty copy), and one that hides a varying B from its kernels. */
#include <stdlib.h>
#include <string.h>

#include "gpu_host.h"
#include "gpu_kernels.h"
#include "gpuemu_prepack.h"

typedef struct prepack {
  const mb_gpu_env_t *env;
  void *b; /* B as it was at prepare */
} prepack_t;

mb_status_t mb__emu_prepack_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate) {
  mb_gpuh_state_t *st = bstate;
  *kstate = NULL;
  if (MB_CALL_VARYING_IN(call) & 2u) {
    st->host.set_error(
        "%s: prepack gemm: B is written inside the timed run; a copy made "
        "in prepare would be stale",
        st->vendor->name);
    return MB_ERR_UNSUPPORTED;
  }
  const mb_gpu_env_t *env = NULL;
  mb_status_t s = mb__gpu_device_env(bstate, call->device, &env);
  if (s != MB_OK) return s;
  prepack_t *k = calloc(1, sizeof *k);
  if (!k) {
    st->host.set_error("%s: prepack gemm: out of host memory",
                       st->vendor->name);
    return MB_ERR_NO_MEMORY;
  }
  k->env = env;
  const mb_op_params_t *p = call->params;
  const size_t bytes =
      st->host.dtype_bytes(p->dtype_b, (size_t)(p->shape[1] * p->shape[2]));
  s = env->scratch_alloc(env, bytes ? bytes : 1, &k->b);
  /* Everything enqueued before (the fill, a composite's setup steps) has
   * finished; the emulated device's memory is host memory. */
  if (s == MB_OK) s = mb__gpuh_sync(bstate, call->device);
  if (s == MB_OK) memcpy(k->b, call->in[1], bytes);
  if (s != MB_OK) {
    mb__emu_prepack_release(k);
    return s;
  }
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__emu_prepack_run(void *kstate, const mb_kernel_call_t *call) {
  const prepack_t *k = kstate;
  void *in[4] = {call->in[0], k->b, call->in[2], call->in[3]};
  mb_kernel_call_t c = *call;
  c.in = in;
  return mb__gpu_gemm_run((void *)k->env, &c);
}

void mb__emu_prepack_release(void *kstate) {
  prepack_t *k = kstate;
  if (!k) return;
  if (k->b) k->env->scratch_free(k->env, k->b);
  free(k);
}
