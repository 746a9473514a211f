/* mbench's gemm against a direct oneDNN call on the same shape, in the same
 * process, interleaved round by round so drift hits both alike. Both sides
 * are timed the same way: hot cache, one run per sample, median of the
 * samples. Prints a markdown table for docs/results/cpu.md.
 *
 *   cpu_vs_onednn [M K N] [rounds] [samples-per-round]   (default 2048^3 5 6)
 */
#include <dnnl.h>
#include <microbench.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define CHECK(x)                                                           \
  do {                                                                     \
    if ((x) != dnnl_success) {                                             \
      fprintf(stderr, "oneDNN call failed: %s (line %d)\n", #x, __LINE__); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

typedef struct direct {
  dnnl_engine_t eng;
  dnnl_stream_t stream;
  dnnl_primitive_t prim;
  dnnl_memory_t a, b, d;
} direct_t;

static void direct_init(direct_t *x, int64_t m, int64_t k, int64_t n,
                        dnnl_data_type_t in, dnnl_data_type_t out) {
  dnnl_memory_desc_t ad, bd, dd;
  dnnl_dims_t adims = {m, k}, bdims = {k, n}, ddims = {m, n};
  CHECK(dnnl_engine_create(&x->eng, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&x->stream, x->eng, dnnl_stream_default_flags));
  CHECK(dnnl_memory_desc_init_by_tag(&ad, 2, adims, in, dnnl_ab));
  CHECK(dnnl_memory_desc_init_by_tag(&bd, 2, bdims, in, dnnl_ab));
  CHECK(dnnl_memory_desc_init_by_tag(&dd, 2, ddims, out, dnnl_ab));
  dnnl_matmul_desc_t md;
  CHECK(dnnl_matmul_desc_init(&md, &ad, &bd, NULL, &dd));
  dnnl_primitive_desc_t pd;
  CHECK(dnnl_primitive_desc_create(&pd, &md, NULL, x->eng, NULL));
  CHECK(dnnl_primitive_create(&x->prim, pd));
  CHECK(dnnl_primitive_desc_destroy(pd));
  CHECK(dnnl_memory_create(&x->a, &ad, x->eng, DNNL_MEMORY_ALLOCATE));
  CHECK(dnnl_memory_create(&x->b, &bd, x->eng, DNNL_MEMORY_ALLOCATE));
  CHECK(dnnl_memory_create(&x->d, &dd, x->eng, DNNL_MEMORY_ALLOCATE));
  /* Same distribution as mbench's inputs (seeded normal), so the data-
   * dependent cost (none expected for GEMM, but checked) is the same. */
  void *pa, *pb;
  CHECK(dnnl_memory_get_data_handle(x->a, &pa));
  CHECK(dnnl_memory_get_data_handle(x->b, &pb));
  mb_dtype_t dt = in == dnnl_f32 ? MB_DTYPE_F32 : MB_DTYPE_BF16;
  mb_fill_t f = MB_FILL_INIT;
  mb_fill_host(pa, dt, (size_t)(m * k), &f);
  f.seed = 1;
  mb_fill_host(pb, dt, (size_t)(k * n), &f);
}

static double direct_run(direct_t *x) {
  dnnl_exec_arg_t args[] = {
      {DNNL_ARG_SRC, x->a}, {DNNL_ARG_WEIGHTS, x->b}, {DNNL_ARG_DST, x->d}};
  double t0 = now_ns();
  CHECK(dnnl_primitive_execute(x->prim, x->stream, 3, args));
  CHECK(dnnl_stream_wait(x->stream));
  return now_ns() - t0;
}

static void direct_fini(direct_t *x) {
  dnnl_memory_destroy(x->a);
  dnnl_memory_destroy(x->b);
  dnnl_memory_destroy(x->d);
  dnnl_primitive_destroy(x->prim);
  dnnl_stream_destroy(x->stream);
  dnnl_engine_destroy(x->eng);
}

int main(int argc, char **argv) {
  int64_t m = 2048, k = 2048, n = 2048;
  int rounds = 5, per_round = 6;
  if (argc >= 4) m = atoll(argv[1]), k = atoll(argv[2]), n = atoll(argv[3]);
  if (argc >= 5) rounds = atoi(argv[4]);
  if (argc >= 6) per_round = atoi(argv[5]);

  mb_context_t *ctx;
  mb_device_t *dev;
  if (mb_context_create(&ctx, NULL) != MB_OK ||
      mb_device_find(ctx, "cpu", 0, &dev) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  mb_device_info_t di = MB_DEVICE_INFO_INIT;
  mb_device_info(dev, &di);
  double peak32 = mb_device_peak_flops(dev, MB_DTYPE_F32);
  double peak16 = mb_device_peak_flops(dev, MB_DTYPE_BF16);
  printf(
      "device: %s, %u cores; peaks (%s): f32 %.1f GFLOP/s, bf16 %.1f "
      "GFLOP/s\nlibmicrobench %s (commit %s), oneDNN %d.%d.%d\n\n",
      di.name, di.compute_units, di.peak_source, peak32 / 1e9, peak16 / 1e9,
      mb_version(), mb_git_commit(), dnnl_version()->major,
      dnnl_version()->minor, dnnl_version()->patch);

  static const struct {
    const char *label;
    mb_dtype_t in, out;
    dnnl_data_type_t din, dout;
  } k_cases[] = {
      {"f32 -> f32", MB_DTYPE_F32, MB_DTYPE_F32, dnnl_f32, dnnl_f32},
      {"bf16 -> bf16", MB_DTYPE_BF16, MB_DTYPE_BF16, dnnl_bf16, dnnl_bf16},
  };
  printf(
      "| gemm %lldx%lldx%lld | mbench GFLOP/s | direct oneDNN GFLOP/s | "
      "mbench / direct | %% of measured peak |\n|---|---:|---:|---:|---:|\n",
      (long long)m, (long long)k, (long long)n);
  for (size_t c = 0; c < sizeof k_cases / sizeof k_cases[0]; c++) {
    mb_op_params_t p = MB_OP_PARAMS_INIT;
    p.ndim = 3;
    p.shape[0] = m, p.shape[1] = k, p.shape[2] = n;
    p.dtype = k_cases[c].in;
    p.dtype_out = k_cases[c].out;
    mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
    s.op = "gemm";
    s.params = &p;
    s.backend = "cpu";
    s.impl = "onednn";
    s.cache = MB_CACHE_HOT;
    s.batch = 1;
    s.criterion = MB_CRITERION_FIXED;
    s.samples = (uint32_t)per_round;
    direct_t d;
    direct_init(&d, m, k, n, k_cases[c].din, k_cases[c].dout);
    direct_run(&d); /* warm-up, as mbench's */
    size_t total = (size_t)rounds * (size_t)per_round;
    double *lib = calloc(total, sizeof *lib), *dir = calloc(total, sizeof *dir);
    size_t nl = 0, nd = 0;
    for (int r = 0; r < rounds; r++) {
      mb_result_t *res;
      if (mb_bench_run(ctx, &s, &res) != MB_OK) {
        fprintf(stderr, "%s\n", mb_error_last());
        return 1;
      }
      size_t cnt;
      const double *v = mb_result_samples(res, &cnt);
      mb_correctness_t corr = MB_CORRECTNESS_INIT;
      mb_result_correctness(res, &corr);
      if (!corr.pass)
        fprintf(stderr, "warning: mbench result failed its check\n");
      for (size_t i = 0; i < cnt && nl < total; i++) lib[nl++] = v[i];
      mb_result_destroy(res);
      for (int i = 0; i < per_round; i++) dir[nd++] = direct_run(&d);
    }
    double flop = 2.0 * (double)m * (double)k * (double)n;
    double gl = flop / median(lib, nl), gd = flop / median(dir, nd);
    double peak = k_cases[c].in == MB_DTYPE_F32 ? peak32 : peak16;
    printf("| %s | %.1f | %.1f | %.3f | %.1f %% |\n", k_cases[c].label, gl, gd,
           gl / gd, 100.0 * gl * 1e9 / peak);
    free(lib);
    free(dir);
    direct_fini(&d);
  }
  mb_context_destroy(ctx);
  return 0;
}
