/* Time one GEMM on the best available device and print the result.
 *
 *   gemm [M K N] [dtype]      e.g.  gemm 2048 2048 2048 bf16 */
#include <microbench.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = argc > 3 ? atoll(argv[1]) : 1024;
  p.shape[1] = argc > 3 ? atoll(argv[2]) : 1024;
  p.shape[2] = argc > 3 ? atoll(argv[3]) : 1024;
  if (argc > 4 && mb_dtype_from_name(argv[4], &p.dtype) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 2;
  }

  mb_context_t *ctx;
  if (mb_context_create(&ctx, NULL) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  mb_bench_spec_t spec = MB_BENCH_SPEC_INIT;
  spec.op = "gemm";
  spec.params = &p;
  spec.min_time_s = 0.2;
  mb_result_t *r;
  if (mb_bench_run(ctx, &spec, &r) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    mb_context_destroy(ctx);
    return 2;
  }

  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t check = MB_CORRECTNESS_INIT;
  mb_stats_t stats = MB_STATS_INIT;
  mb_derived_t d = MB_DERIVED_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &check);
  mb_result_stats(r, &stats);
  mb_result_derived(r, &d);
  int ok = info.status == MB_RESULT_OK && check.pass;
  if (info.status != MB_RESULT_OK)
    printf("%s: %s\n", mb_result_status_name(info.status), info.reason);
  else
    printf(
        "gemm %lldx%lldx%lld %s on %s:%u (%s, %s): median %.3f ms over %llu "
        "samples, %.1f GFLOP/s (%.0f%% of peak), check %s (SQNR %.0f dB)\n",
        (long long)p.shape[0], (long long)p.shape[1], (long long)p.shape[2],
        mb_dtype_name(info.params.dtype), info.backend, info.device_index,
        info.device, info.impl, stats.median / 1e6,
        (unsigned long long)stats.count, d.tflops * 1e3, d.pct_peak,
        check.pass ? "pass" : "FAIL", check.sqnr_db);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
  return ok ? 0 : 1;
}
