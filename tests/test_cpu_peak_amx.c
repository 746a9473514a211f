/* The CPU peaks on a CPU with AMX (backends/cpu/cpu_peak_amx.c).
 *
 * The probe's verdict is checked on faked CPUID and arch_prctl answers (the
 * file is compiled into this test), so every "no AMX" reason is seen on any
 * machine. On a machine with AMX the cpu module's bf16 and int8 peaks must
 * hold up against oneDNN's GEMMs of those dtypes: no kernel runs faster than
 * the machine's peak, so a GEMM above it means the peak missed the unit the
 * GEMM used (as the vector-only loops did: bf16 "peak" 173 GFLOP/s, bf16
 * GEMM 1-1.8 TFLOP/s). Elsewhere those tests skip, visibly. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu_peak_amx.h"
#include "test_util.h"

/* CPUID.(EAX=7,ECX=0):EDX: AMX-BF16, AMX-TILE, AMX-INT8. */
enum { BF16 = 1u << 22, TILE = 1u << 24, INT8 = 1u << 25 };

static unsigned verdict(int built, uint32_t edx, int rc, int err, char *why,
                        size_t cap) {
  const mb_cpu_amx_probe_t p = {built, edx, rc, err};
  return mb__cpu_amx_verdict(&p, why, cap);
}

static void test_verdict(void **state) {
  (void)state;
  char why[160];
  assert_int_equal(verdict(1, TILE | BF16 | INT8, 0, 0, why, sizeof why),
                   MB_CPU_AMX_BF16 | MB_CPU_AMX_INT8);
  assert_string_equal(why, "");
  assert_int_equal(verdict(1, TILE | INT8, 0, 0, why, sizeof why),
                   MB_CPU_AMX_INT8);
  assert_int_equal(verdict(1, TILE | BF16, 0, 0, why, sizeof why),
                   MB_CPU_AMX_BF16);

  /* Each way of having no AMX: 0, and the reason in peak_source's words. */
  static const struct {
    int built;
    uint32_t edx;
    int rc, err;
    const char *why;
  } none[] = {
      {0, TILE | BF16 | INT8, 0, 0, "no AMX: built without AMX intrinsics"},
      {1, 0u, -1, 0, "no AMX: the CPU has no AMX-TILE"},
      {1, BF16 | INT8, -1, 0, "no AMX: the CPU has no AMX-TILE"},
      {1, TILE, 0, 0, "no AMX: the CPU has AMX-TILE without AMX-BF16"},
      {1, TILE | BF16 | INT8, -1, EPERM,
       "no AMX: Linux refused the tile data (arch_prctl ARCH_REQ_XCOMP_PERM: "
       "Operation not permitted)"},
      {1, TILE | BF16, -1, EINVAL,
       "no AMX: Linux refused the tile data (arch_prctl ARCH_REQ_XCOMP_PERM: "
       "Invalid argument)"},
  };
  for (size_t i = 0; i < sizeof none / sizeof none[0]; ++i) {
    const unsigned got = verdict(none[i].built, none[i].edx, none[i].rc,
                                 none[i].err, why, sizeof why);
    if (got != 0u || strncmp(why, none[i].why, strlen(none[i].why)) != 0)
      fail_msg("case %zu: %u \"%s\", wanted 0 \"%s...\"", i, got, why,
               none[i].why);
  }
  /* A short buffer truncates, never overflows. */
  char small[8];
  assert_int_equal(verdict(1, 0u, -1, 0, small, sizeof small), 0u);
  assert_string_equal(small, "no AMX:");
}

/* Whether /proc/cpuinfo's flags name `flag` (a whole word). */
static int cpuinfo_flag(const char *flag) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return 0;
  static char line[65536];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0) continue;
    for (char *t = strtok(strchr(line, ':'), " :\t\n"); t && !found;
         t = strtok(NULL, " \t\n"))
      found = !strcmp(t, flag);
    break;
  }
  fclose(f);
  return found;
}

/* This machine's probe agrees with the kernel's view of the CPU. */
static void test_probe(void **state) {
  (void)state;
  char why[160];
  const unsigned amx = mb__cpu_amx_usable(why, sizeof why);
  printf("  AMX: %s%s%s\n", amx & MB_CPU_AMX_BF16 ? "bf16 " : "",
         amx & MB_CPU_AMX_INT8 ? "int8 " : "", why);
  if (amx) {
    assert_string_equal(why, "");
    assert_true(cpuinfo_flag("amx_tile"));
    assert_int_equal((amx & MB_CPU_AMX_BF16) != 0, cpuinfo_flag("amx_bf16"));
    assert_int_equal((amx & MB_CPU_AMX_INT8) != 0, cpuinfo_flag("amx_int8"));
  } else {
    assert_true(strncmp(why, "no AMX: ", 8) == 0);
    /* With the tiles in the flags only the OS may have said no. */
    if (cpuinfo_flag("amx_tile")) assert_contains(why, "Linux refused");
  }
}

/* oneDNN's gemm M x K x N = n^3 of `dtype` on the cpu: its fastest sample's
 * rate (FLOP/s) against the peak the result compares with, and the cpu
 * device's peak_source naming `loop`. Skips without oneDNN, or where the
 * kernel shows no AMX `flag`. */
static void gemm_vs_peak(mb_dtype_t dtype, const char *flag, const char *loop) {
  /* The kernel's word, not the probe's: a probe that lost AMX must fail
   * here, not skip. */
  if (!cpuinfo_flag("amx_tile") || !cpuinfo_flag(flag)) {
    printf("  SKIP: /proc/cpuinfo has no amx_tile and %s\n", flag);
    skip();
  }
  /* Measured now by this build's loops, not read from an older cache (the
   * module starts, and measures, when the device is first asked for). */
  setenv("MB_REMEASURE_PEAK", "1", 1);
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "cpu", 0, &dev), MB_OK);
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  assert_int_equal(mb_device_info(dev, &info), MB_OK);
  unsetenv("MB_REMEASURE_PEAK");
  printf("  peak_source: %s\n", info.peak_source);

  const mb_op_params_t p = test_shape3(dtype, 1024, 1024, 1024);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "gemm";
  s.params = &p;
  s.backend = "cpu";
  s.impl = "onednn";
  s.cache = MB_CACHE_HOT; /* its fastest: the strongest check */
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 10;
  mb_result_t *r = NULL;
  if (mb_bench_run(ctx, &s, &r) != MB_OK) {
    printf("  SKIP: no oneDNN gemm: %s\n", mb_error_last());
    mb_context_destroy(ctx);
    skip();
  }
  mb_stats_t st = MB_STATS_INIT;
  mb_derived_t d = MB_DERIVED_INIT;
  const int got = mb_result_stats(r, &st) == MB_OK &&
                  mb_result_derived(r, &d) == MB_OK && st.min > 0;
  const double peak = mb_device_peak_flops(dev, dtype);
  char source[1024];
  snprintf(source, sizeof source, "%s", info.peak_source);
  /* Released before any assertion: a failure leaves no module running. */
  mb_result_destroy(r);
  mb_context_destroy(ctx);
  assert_true(got);
  const double best = d.flop / st.min * 1e9;
  printf("  %s gemm 1024^3: best %.1f GFLOP/s, peak %.1f GFLOP/s\n",
         mb_dtype_name(dtype), 1e-9 * best, 1e-9 * d.peak_flops);
  /* The %peak compares with the dtype's peak, the one now with AMX. */
  assert_true(d.peak_flops == peak);
  /* A few % for the two measurements' noise; the vector-only peak was
   * 3-10x below. */
  if (best > 1.05 * peak)
    fail_msg("%s gemm at %.1f GFLOP/s beats the %s peak %.1f GFLOP/s",
             mb_dtype_name(dtype), 1e-9 * best, mb_dtype_name(dtype),
             1e-9 * peak);
  /* And it was the tile loop that set it. */
  assert_contains(source, loop);
}

static void test_bf16_gemm_below_peak(void **state) {
  (void)state;
  gemm_vs_peak(MB_DTYPE_BF16, "amx_bf16", "bf16 amx_bf16 tdpbf16ps");
}

static void test_i8_gemm_below_peak(void **state) {
  (void)state;
  gemm_vs_peak(MB_DTYPE_I8, "amx_int8", "i8 amx_int8 tdpbssd");
}

/* An add's roof (peak_for) in a fresh context: measured (remeasure) or read
 * from the cache; the device's bf16 peak in *device. */
static double add_peak(int remeasure, double *device) {
  if (remeasure) setenv("MB_REMEASURE_PEAK", "1", 1);
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "cpu", 0, &dev), MB_OK);
  *device = mb_device_peak_flops(dev, MB_DTYPE_BF16);
  unsetenv("MB_REMEASURE_PEAK");
  const mb_op_params_t p = test_shape2(MB_DTYPE_BF16, 256, 256);
  mb_result_t *r = test_run_cpu(ctx, "add", &p, 1);
  mb_derived_t d = MB_DERIVED_INIT;
  assert_int_equal(mb_result_derived(r, &d), MB_OK);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
  return d.peak_flops;
}

/* An element-wise op cannot use the tiles: its roof stays the vector
 * loops' bf16 peak, measured and cached with the others. */
static void test_eltwise_keeps_vector_peak(void **state) {
  (void)state;
  if (!cpuinfo_flag("amx_tile") || !cpuinfo_flag("amx_bf16")) {
    printf("  SKIP: /proc/cpuinfo has no amx_tile and amx_bf16\n");
    skip();
  }
  double device = 0.0, cached_device = 0.0;
  const double measured = add_peak(1, &device);
  const double cached = add_peak(0, &cached_device);
  printf("  bf16 add roof %.1f GFLOP/s (cached %.1f), device bf16 peak %.1f\n",
         1e-9 * measured, 1e-9 * cached, 1e-9 * device);
  assert_true(measured > 0.0);
  /* The tile loop is many times the vector one (seen: 27x). */
  assert_true(measured < 0.5 * device);
  assert_true(fabs(cached - measured) <= 1.0);
  assert_true(fabs(cached_device - device) <= 1.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_verdict),
      cmocka_unit_test(test_probe),
      cmocka_unit_test(test_bf16_gemm_below_peak),
      cmocka_unit_test(test_i8_gemm_below_peak),
      cmocka_unit_test(test_eltwise_keeps_vector_peak),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
