/* Short recipes for embedding libmicrobench, each a function that
 * docs/embedding.md quotes: a dtype by name, a fixed number of samples on
 * a chosen backend and kernel, GFLOP/s and % of the roofline, the kernels
 * an op has, a small sweep printed as mbench's table fitted to 100
 * columns. Exits 1 when a benchmark does not run or checks wrong.
 *
 *   example_recipes [backend]          (default: cpu) */
#include <microbench.h>
#include <stdio.h>
#include <string.h>

/* [dtype-by-name] The names mbench and configs take; an unknown one is an
 * error that lists the valid names. */
static int bf16_gemm_params(mb_op_params_t *p, int64_t m, int64_t k,
                            int64_t n) {
  *p = (mb_op_params_t)MB_OP_PARAMS_INIT;
  p->ndim = 3;
  p->shape[0] = m;
  p->shape[1] = k;
  p->shape[2] = n;
  if (mb_dtype_from_name("bf16", &p->dtype) != MB_OK ||
      mb_dtype_from_name("f32", &p->dtype_out) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return -1;
  }
  return 0;
}
/* [/dtype-by-name] */

/* [fixed-samples] Exactly 20 samples, hot cache (short kernels batched),
 * on a backend and kernel by name (NULL: the best backend with a device,
 * its first kernel for the problem). */
static mb_status_t run_fixed(mb_context_t *ctx, const char *backend,
                             const char *impl, const mb_op_params_t *p,
                             mb_result_t **out) {
  mb_bench_spec_t spec = MB_BENCH_SPEC_INIT;
  spec.op = "gemm";
  spec.params = p;
  spec.backend = backend;
  spec.impl = impl;
  spec.cache = MB_CACHE_HOT;
  spec.criterion = MB_CRITERION_FIXED;
  spec.samples = 20;
  return mb_bench_run(ctx, &spec, out);
}
/* [/fixed-samples] */

/* [gflops] What a result measured: GFLOP/s and GB/s at the median, % of
 * the device's peak for that math and % of the roofline bound. */
static int print_rates(const mb_result_t *r) {
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_stats_t s = MB_STATS_INIT;
  mb_derived_t d = MB_DERIVED_INIT;
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_stats(r, &s);
  mb_result_derived(r, &d);
  mb_result_correctness(r, &c);
  if (info.status != MB_RESULT_OK) {
    printf("%s: %s\n", mb_result_status_name(info.status), info.reason);
    return -1;
  }
  printf(
      "%s/%s: median %.1f us, %.1f GFLOP/s, %.1f GB/s, %.0f%% of peak, "
      "%.0f%% of roof (%s-bound), check %s\n",
      info.backend, info.impl, s.median / 1e3, d.tflops * 1e3, d.gbps,
      d.pct_peak, d.pct_roof, d.bound, c.pass ? "pass" : "FAIL");
  return c.checked && c.pass ? 0 : -1;
}
/* [/gflops] */

/* [kernels] The kernels of an op, as mbench list ops shows them. */
static void print_kernels(const mb_context_t *ctx, const char *op) {
  for (size_t i = 0; i < mb_kernel_count(ctx); i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    if (mb_kernel_info(ctx, i, &k) == MB_OK && strcmp(k.op, op) == 0)
      printf("  %s/%s %s -> %s\n", k.backend, k.name,
             k.dtype == MB_DTYPE_NONE ? "*" : mb_dtype_name(k.dtype),
             k.dtype_out == MB_DTYPE_NONE ? "*" : mb_dtype_name(k.dtype_out));
  }
}
/* [/kernels] */

/* [table] A sweep written as mbench's table, fitted to 100 columns, with
 * the 10th and 90th percentiles added to the default columns. */
static int sweep_table(mb_context_t *ctx, const char *backend) {
  mb_report_options_t ro = MB_REPORT_OPTIONS_INIT; /* table on stdout */
  ro.columns = "+p10,+p90";
  ro.width = 100;
  mb_report_t *rep;
  if (mb_report_open(ctx, &ro, &rep) != MB_OK) return -1;
  int bad = 0;
  for (int64_t n = 64; n <= 256; n *= 2) {
    mb_op_params_t p;
    mb_result_t *r = NULL;
    bad |= bf16_gemm_params(&p, n, n, n) != 0 ||
           run_fixed(ctx, backend, NULL, &p, &r) != MB_OK ||
           mb_report_add(rep, r) != MB_OK;
    mb_result_destroy(r);
  }
  return mb_report_close(rep) == MB_OK && !bad ? 0 : -1;
}
/* [/table] */

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "cpu";
  mb_context_t *ctx;
  if (mb_context_create(&ctx, NULL) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  printf("gemm kernels:\n");
  print_kernels(ctx, "gemm");
  mb_op_params_t p;
  mb_result_t *r = NULL;
  int rc = bf16_gemm_params(&p, 256, 256, 256);
  if (rc == 0 && run_fixed(ctx, backend, NULL, &p, &r) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    rc = -1;
  }
  if (rc == 0) rc = print_rates(r);
  mb_result_destroy(r);
  if (rc == 0) rc = sweep_table(ctx, backend);
  mb_context_destroy(ctx);
  return rc == 0 ? 0 : 1;
}
