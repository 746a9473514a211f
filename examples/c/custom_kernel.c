/* Register your own kernel for an op and let the harness time and check it
 * beside the backend's own: same inputs, same reference, same statistics. */
#include <microbench.h>
#include <stdio.h>
#include <string.h>

/* A naive f32 add on the CPU backend's (host) memory. */
static mb_status_t my_add(void *user, const mb_kernel_args_t *a) {
  (void)user;
  const float *x = mb_tensor_data(a->inputs[0]);
  const float *y = mb_tensor_data(a->inputs[1]);
  float *z = mb_tensor_data(a->outputs[0]);
  size_t n = mb_tensor_numel(a->outputs[0]);
  for (size_t i = 0; i < n; i++) z[i] = x[i] + y[i];
  return MB_OK;
}

static int run(mb_context_t *ctx, const char *impl) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2;
  p.shape[0] = 2048;
  p.shape[1] = 2048;
  mb_bench_spec_t spec = MB_BENCH_SPEC_INIT;
  spec.op = "add";
  spec.params = &p;
  spec.backend = "cpu";
  spec.impl = impl;
  spec.cache = MB_CACHE_HOT;
  spec.min_time_s = 0.2;
  spec.timeout_s = 2.0;
  mb_result_t *r;
  if (mb_bench_run(ctx, &spec, &r) != MB_OK) {
    fprintf(stderr, "%s: %s\n", impl, mb_error_last());
    return 1;
  }
  mb_stats_t s = MB_STATS_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_derived_t d = MB_DERIVED_INIT;
  mb_result_stats(r, &s);
  mb_result_correctness(r, &c);
  mb_result_derived(r, &d);
  printf("%-8s median %8.1f us  %6.1f GB/s  check %s\n", impl, s.median / 1e3,
         d.gbps, c.pass ? "pass" : "FAIL");
  int failed = !c.pass;
  mb_result_destroy(r);
  return failed;
}

int main(void) {
  mb_context_t *ctx;
  if (mb_context_create(&ctx, NULL) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  mb_kernel_desc_t k = MB_KERNEL_DESC_INIT;
  k.op = "add";
  k.name = "mine";
  k.backend = "cpu";
  k.dtype = MB_DTYPE_F32;
  k.run = my_add;
  int rc = 1;
  if (mb_kernel_register(ctx, &k) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
  } else {
    /* Yours, then every f32 add kernel the CPU backend brings. */
    rc = 0;
    for (size_t i = 0; i < mb_kernel_count(ctx); i++) {
      mb_kernel_info_t ki = MB_KERNEL_INFO_INIT;
      mb_kernel_info(ctx, i, &ki);
      if (!strcmp(ki.op, "add") && !strcmp(ki.backend, "cpu") &&
          ki.dtype == MB_DTYPE_F32)
        rc |= run(ctx, ki.name);
    }
  }
  mb_context_destroy(ctx);
  return rc;
}
