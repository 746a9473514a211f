/* What every shared kernel needs from outside its own file: the launch
 * check, the permissive supports hook, the stateless kernels' prepare. */
#include "gpu_kernels.h"
#include "gpu_runtime.h"

extern "C" mb_status_t mb__gpu_supports_any(void *bstate, uint32_t dev,
                                            const mb_op_params_t *params,
                                            const char **why) {
  (void)bstate, (void)dev, (void)params, (void)why;
  return MB_OK;
}

/* The stateless kernels' kstate is the device's env: nothing to build. */
extern "C" mb_status_t mb__gpu_prepare(void *bstate,
                                       const mb_kernel_call_t *call,
                                       void **kstate) {
  const mb_gpu_env_t *env = NULL;
  const mb_status_t s = mb__gpu_device_env(bstate, call->device, &env);
  if (s == MB_OK) *kstate = (void *)env;
  return s;
}

/* Launch errors (bad configuration, no kernel image for this GPU) are
 * reported by the runtime's last error; execution errors surface at the
 * backend's next synchronisation. */
extern "C" mb_status_t mb__gpu_launched(const mb_gpu_env_t *env,
                                        const char *what) {
  const mb_gpu_error_t e = mb_gpu_get_last_error();
  if (e == mb_gpu_success) return MB_OK;
  env->host->set_error("%s: %s: %s", env->backend, what,
                       mb_gpu_error_string(e));
  return MB_ERR_BACKEND;
}
