/* The HIP backend's peaks (hip_peaks.c) on synthetic device records: the
 * datasheet rows (MI250X halved per GCD), estimates from CUs x clock x rate
 * flagged as such, the conservative rate of an unknown processor, fp8
 * flavour and last-level cache, and which peak each op is held against. */
#include <math.h>

#include "test_util.h"

#include "hip_internal.h"

#define T 1e12
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

static mb_hip_device_t dev(const char *name, const char *arch, int cus,
                           double sclk_mhz, double mclk_mhz, int bus,
                           size_t mem, size_t l2) {
  mb_hip_device_t d;
  memset(&d, 0, sizeof d);
  snprintf(d.base.name, sizeof d.base.name, "%s", name);
  snprintf(d.arch_base, sizeof d.arch_base, "%s", arch);
  snprintf(d.arch, sizeof d.arch, "%s:sramecc+:xnack-", arch);
  d.base.sm_count = cus;
  d.base.clock_hz = sclk_mhz * 1e6;
  d.mclk_hz = mclk_mhz * 1e6;
  d.bus_width_bits = bus;
  d.base.memory_bytes = mem;
  d.l2_bytes = l2;
  /* what a previous call or the caller might have left */
  d.estimated = 7;
  d.fp8_fnuz = 7;
  mb__hip_peaks(&d);
  return d;
}

static mb_hip_device_t mi300x(void) {
  return dev("AMD Instinct MI300X", "gfx942", 304, 2100, 1300, 8192, 192 * GIB,
             4 * MIB);
}

static mb_hip_device_t mi250x_gcd(void) {
  return dev("AMD Instinct MI250X", "gfx90a", 110, 1700, 1600, 4096, 64 * GIB,
             8 * MIB);
}

static void assert_near(double got, double want) {
  if (!(fabs(got - want) <= 1e-9 * fabs(want)))
    fail_msg("got %.17g, want %.17g", got, want);
}

static void assert_prefix(const char *s, const char *prefix) {
  if (strncmp(s, prefix, strlen(prefix)) != 0)
    fail_msg("\"%s\" does not start with \"%s\"", s, prefix);
}

static void test_mi300x(void **state) {
  (void)state;
  mb_hip_device_t d = mi300x();
  assert_int_equal(d.estimated, 0);
  assert_string_equal(d.peak_source,
                      "table: MI300X, AMD datasheet figures, "
                      "dense");
  assert_near(d.peak[MB_DTYPE_BF16], 1307.4 * T);
  assert_near(d.peak[MB_DTYPE_F16], 1307.4 * T);
  assert_near(d.peak[MB_DTYPE_F8E4M3], 2614.9 * T);
  assert_near(d.peak[MB_DTYPE_F8E5M2], 2614.9 * T);
  assert_near(d.peak[MB_DTYPE_I8], 2614.9 * T);
  assert_near(d.peak_xf32, 653.7 * T);
  assert_near(d.peak[MB_DTYPE_F32], 163.4 * T);
  assert_near(d.peak_vec_f32, 163.4 * T);
  assert_near(d.base.mem_bw, 5.3e12);
  /* the 256 MiB Infinity Cache, not the 4 MiB L2 the runtime reports */
  assert_int_equal(d.base.llc_bytes, 256 * MIB);
  assert_int_equal(d.fp8_fnuz, 1);
  assert_true(d.peak[MB_DTYPE_I4] == 0 && d.peak[MB_DTYPE_I32] == 0);
}

/* A name that names no board: matched by processor, CU count and memory. */
static void test_by_processor(void **state) {
  (void)state;
  mb_hip_device_t d =
      dev("", "gfx942", 304, 2100, 1300, 8192, 192 * GIB, 4 * MIB);
  assert_int_equal(d.estimated, 0);
  assert_contains(d.peak_source, "table: MI300X (by processor and CU count)");
  assert_near(d.base.mem_bw, 5.3e12);
  d = dev("", "gfx942", 304, 2100, 1300, 8192, 256 * GIB, 4 * MIB);
  assert_contains(d.peak_source, "table: MI325X");
  assert_near(d.base.mem_bw, 6.0e12);
  assert_near(d.peak[MB_DTYPE_BF16], 1307.4 * T);
  d = dev("AMD Instinct MI325X", "gfx942", 304, 2100, 1300, 8192, 256 * GIB,
          4 * MIB);
  assert_contains(d.peak_source, "table: MI325X, AMD datasheet");
}

static void test_mi300a(void **state) {
  (void)state;
  mb_hip_device_t d = dev("AMD Instinct MI300A", "gfx942", 228, 2100, 1300,
                          8192, 128 * GIB, 4 * MIB);
  assert_int_equal(d.estimated, 0);
  assert_near(d.peak[MB_DTYPE_BF16], 980.6 * T);
  assert_near(d.peak[MB_DTYPE_F8E4M3], 1961.2 * T);
  assert_near(d.peak_xf32, 490.3 * T);
  assert_int_equal(d.base.llc_bytes, 256 * MIB);
}

/* One GCD of an MI250X board: half the board's figures. */
static void test_mi250x_gcd(void **state) {
  (void)state;
  mb_hip_device_t d = mi250x_gcd();
  assert_int_equal(d.estimated, 0);
  assert_string_equal(d.peak_source,
                      "table: MI250X, one of 2 GCDs: half the board's AMD "
                      "datasheet figures, dense");
  assert_near(d.peak[MB_DTYPE_BF16], 383.0 / 2 * T);
  assert_near(d.peak[MB_DTYPE_F16], 383.0 / 2 * T);
  assert_near(d.peak[MB_DTYPE_I8], 383.0 / 2 * T);
  assert_near(d.peak[MB_DTYPE_F32], 95.7 / 2 * T);
  assert_near(d.peak_vec_f32, 47.9 / 2 * T);
  assert_near(d.base.mem_bw, 1.6e12);
  assert_true(d.peak[MB_DTYPE_F8E4M3] == 0 && d.peak_xf32 == 0);
  assert_int_equal(d.base.llc_bytes, 8 * MIB);
  assert_int_equal(d.fp8_fnuz, 0);

  /* a runtime naming both boards alike: the CU count decides */
  d = dev("AMD Instinct MI250X/MI250", "gfx90a", 104, 1700, 1600, 4096,
          64 * GIB, 8 * MIB);
  assert_contains(d.peak_source, "table: MI250, one of 2 GCDs");
  assert_near(d.peak[MB_DTYPE_BF16], 362.1 / 2 * T);
}

static void test_mi210_and_mi100(void **state) {
  (void)state;
  mb_hip_device_t d = dev("AMD Instinct MI210", "gfx90a", 104, 1700, 1600, 4096,
                          64 * GIB, 8 * MIB);
  assert_int_equal(d.estimated, 0);
  assert_string_equal(d.peak_source,
                      "table: MI210, AMD datasheet figures, dense");
  assert_near(d.peak[MB_DTYPE_BF16], 181.0 * T);
  assert_near(d.peak[MB_DTYPE_F32], 45.3 * T);
  assert_near(d.peak_vec_f32, 22.6 * T);
  assert_near(d.base.mem_bw, 1.6e12);
  assert_int_equal(d.base.llc_bytes, 8 * MIB);

  /* MI100: bf16 at half the f16 rate */
  d = dev("AMD Instinct MI100", "gfx908", 120, 1502, 1200, 4096, 32 * GIB,
          8 * MIB);
  assert_near(d.peak[MB_DTYPE_F16], 184.6 * T);
  assert_near(d.peak[MB_DTYPE_BF16], 92.3 * T);
  assert_near(d.base.mem_bw, 1.228e12);
}

/* A gfx90a board the table does not know: CUs x clock x gfx90a's rates,
 * bandwidth from the memory clock, flagged. */
static void test_unknown_gfx90a_board(void **state) {
  (void)state;
  mb_hip_device_t d = dev("AMD Instinct MI2xx Test", "gfx90a", 96, 1500, 1600,
                          4096, 48 * GIB, 8 * MIB);
  const double pc = 96 * 1500e6;
  assert_int_equal(d.estimated, 1);
  assert_prefix(d.peak_source, "estimated (GPU not in the table): ");
  assert_contains(d.peak_source, "96 CUs x 1500 MHz x the gfx90a rate");
  assert_near(d.peak[MB_DTYPE_BF16], pc * 1024);
  assert_near(d.peak[MB_DTYPE_F16], pc * 1024);
  assert_near(d.peak[MB_DTYPE_I8], pc * 1024);
  assert_near(d.peak[MB_DTYPE_F32], pc * 256);
  assert_near(d.peak_vec_f32, pc * 128);
  assert_true(d.peak[MB_DTYPE_F8E4M3] == 0 && d.peak_xf32 == 0);
  assert_near(d.base.mem_bw, 1600e6 * 2 * 4096 / 8);
  assert_int_equal(d.base.llc_bytes, 8 * MIB);
  assert_int_equal(d.fp8_fnuz, 0);

  /* MI300X in CPX mode: one XCD, 38 CUs, is not the board's row */
  d = dev("AMD Instinct MI300X", "gfx942", 38, 2100, 1300, 8192, 24 * GIB,
          4 * MIB);
  assert_int_equal(d.estimated, 1);
  assert_near(d.peak[MB_DTYPE_BF16], 38 * 2100e6 * 2048); /* 1/8 board */
  assert_near(d.peak[MB_DTYPE_F8E4M3], 38 * 2100e6 * 4096);
  assert_int_equal(d.fp8_fnuz, 1);
  assert_int_equal(d.base.llc_bytes, 256 * MIB);
}

/* RDNA and CDNA 4 estimates: CUs x clock x the rates derived from AMD's
 * figures for those boards. */
static void test_rate_table(void **state) {
  (void)state;
  /* RX 7900 XTX: 96 CUs x 2500 MHz */
  mb_hip_device_t d = dev("Radeon RX 7900 XTX", "gfx1100", 96, 2500, 1250, 384,
                          24 * GIB, 6 * MIB);
  assert_int_equal(d.estimated, 1);
  assert_contains(d.peak_source, "RDNA 3");
  assert_near(d.peak[MB_DTYPE_F16], 96 * 2500e6 * 512);
  assert_near(d.peak_vec_f32, 96 * 2500e6 * 256);
  assert_true(d.peak[MB_DTYPE_F8E4M3] == 0);
  assert_int_equal(d.base.llc_bytes, 6 * MIB);
  /* RX 9070 XT: 64 x 2970 MHz; OCP fp8 */
  d = dev("Radeon RX 9070 XT", "gfx1201", 64, 2970, 1258, 256, 16 * GIB,
          8 * MIB);
  assert_near(d.peak[MB_DTYPE_F8E4M3], 64 * 2970e6 * 2048);
  assert_int_equal(d.fp8_fnuz, 0);
  /* MI355X (not in the table): 256 x 2400 MHz, OCP fp8, 256 MiB LLC */
  d = dev("AMD Instinct MI355X", "gfx950", 256, 2400, 2000, 8192, 288 * GIB,
          4 * MIB);
  assert_int_equal(d.estimated, 1);
  assert_near(d.peak[MB_DTYPE_BF16], 256 * 2400e6 * 4096);
  assert_near(d.peak[MB_DTYPE_F8E4M3], 256 * 2400e6 * 8192);
  assert_int_equal(d.fp8_fnuz, 0);
  assert_int_equal(d.base.llc_bytes, 256 * MIB);
}

/* An unknown processor: the most conservative rate, and it says so. */
static void test_unknown_arch(void **state) {
  (void)state;
  const char *archs[] = {"gfx1300", "gfx1250", ""};
  for (size_t i = 0; i < 3; i++) {
    mb_hip_device_t d = dev("Some Future GPU", archs[i], 80, 2000, 1000, 2048,
                            32 * GIB, 16 * MIB);
    const double pc = 80 * 2000e6;
    assert_int_equal(d.estimated, 1);
    assert_prefix(d.peak_source, "estimated (GPU not in the table): ");
    assert_contains(d.peak_source, "the most conservative rate");
    if (archs[i][0]) assert_contains(d.peak_source, archs[i]);
    assert_near(d.peak[MB_DTYPE_BF16], pc * 256);
    assert_near(d.peak[MB_DTYPE_I8], pc * 256);
    assert_near(d.peak[MB_DTYPE_F32], pc * 128);
    assert_near(d.peak_vec_f32, pc * 128);
    assert_true(d.peak[MB_DTYPE_F8E4M3] == 0 && d.peak_xf32 == 0);
    assert_near(d.base.mem_bw, 1000e6 * 2 * 2048 / 8);
    assert_int_equal(d.base.llc_bytes, 16 * MIB);
    assert_int_equal(d.fp8_fnuz, 0);
  }
}

static mb_op_params_t gemm(mb_dtype_t a, mb_dtype_t b, uint32_t flags) {
  mb_op_params_t p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.dtype = a;
  p.dtype_b = b;
  p.flags = flags;
  return p;
}

static void test_peak_for(void **state) {
  (void)state;
  const mb_hip_device_t x = mi300x();
  mb_op_params_t p = gemm(MB_DTYPE_F8E4M3, MB_DTYPE_F8E4M3, 0);
  assert_near(mb__hip_peak_for(&x, "gemm", &p), 2614.9 * T);
  p = gemm(MB_DTYPE_F32, MB_DTYPE_F32, MB_PARAM_TF32);
  assert_near(mb__hip_peak_for(&x, "gemm", &p), 653.7 * T);
  p = gemm(MB_DTYPE_I8, MB_DTYPE_I8, 0);
  assert_near(mb__hip_peak_for(&x, "gemm", &p), 2614.9 * T);
  /* quantize-inputs: the math is dtype_q's */
  p = gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, MB_PARAM_QUANTIZE_INPUTS);
  p.dtype_q = MB_DTYPE_F8E4M3;
  assert_near(mb__hip_peak_for(&x, "gemm", &p), 2614.9 * T);

  /* MI250X: f32 matrix and vector differ, no xf32 */
  const mb_hip_device_t g = mi250x_gcd();
  p = gemm(MB_DTYPE_F32, MB_DTYPE_F32, 0);
  assert_near(mb__hip_peak_for(&g, "gemm", &p), 95.7 / 2 * T);
  p.flags = MB_PARAM_TF32;
  assert_true(mb__hip_peak_for(&g, "gemm", &p) == 0);
  /* weight-only int4: the bf16 math it dequantizes to */
  p = gemm(MB_DTYPE_BF16, MB_DTYPE_I4, 0);
  assert_near(mb__hip_peak_for(&g, "gemm", &p), 383.0 / 2 * T);
  /* element-wise ops: the vector f32 peak */
  p = gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, 0);
  assert_near(mb__hip_peak_for(&g, "add", &p), 47.9 / 2 * T);
  assert_near(mb__hip_peak_for(&g, "softmax", &p), 47.9 / 2 * T);
  assert_near(mb__hip_peak_for(&g, NULL, &p), 47.9 / 2 * T);

  /* MI100: f16 and bf16 GEMMs each against their own rate */
  const mb_hip_device_t m = dev("AMD Instinct MI100", "gfx908", 120, 1502, 1200,
                                4096, 32 * GIB, 8 * MIB);
  p = gemm(MB_DTYPE_F16, MB_DTYPE_F16, 0);
  assert_near(mb__hip_peak_for(&m, "gemm", &p), 184.6 * T);
  p = gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, 0);
  assert_near(mb__hip_peak_for(&m, "gemm", &p), 92.3 * T);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mi300x),
      cmocka_unit_test(test_by_processor),
      cmocka_unit_test(test_mi300a),
      cmocka_unit_test(test_mi250x_gcd),
      cmocka_unit_test(test_mi210_and_mi100),
      cmocka_unit_test(test_unknown_gfx90a_board),
      cmocka_unit_test(test_rate_table),
      cmocka_unit_test(test_unknown_arch),
      cmocka_unit_test(test_peak_for),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
