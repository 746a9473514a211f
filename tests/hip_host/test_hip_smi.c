/* rocm-smi through hip_smi.c against fake libraries (fake_rocm_smi.c built
 * once per version and feature set): loading, refusal with a reason,
 * device lookup by PCI address, unit conversion, and the
 * rsmi_frequencies_t layout chosen by the library's version. */
#include <math.h>

#include "test_util.h"

#include "hip_internal.h"

/* The host API hip_smi.c logs through: keeps every message. */
typedef struct log_sink {
  char text[2048];
} log_sink_t;

static void sink_log(void *host, mb_log_level_t level, const char *fmt, ...) {
  log_sink_t *s = host;
  size_t used = strlen(s->text);
  va_list ap;
  (void)level;
  va_start(ap, fmt);
  vsnprintf(s->text + used, sizeof s->text - used, fmt, ap);
  va_end(ap);
  used = strlen(s->text);
  if (used + 1 < sizeof s->text) strcat(s->text, "\n");
}

static void sink_error(const char *fmt, ...) {
  (void)fmt;
}

static mb_host_api_t host_for(log_sink_t *sink) {
  mb_host_api_t h;
  memset(&h, 0, sizeof h);
  memset(sink, 0, sizeof *sink);
  h.struct_size = sizeof h;
  h.host = sink;
  h.log = sink_log;
  h.set_error = sink_error;
  return h;
}

static void assert_near(double got, double want) {
  if (!(fabs(got - want) <= 1e-9 * fabs(want)))
    fail_msg("got %.17g, want %.17g", got, want);
}

static mb_telemetry_t read_dev(const mb_hip_smi_t *s, uint32_t index) {
  mb_telemetry_t t = MB_TELEMETRY_INIT;
  t.sm_clock_hz = t.mem_clock_hz = t.power_w = t.temp_c = -1.0;
  t.throttle = 99;
  mb__hip_smi_read(s, index, &t);
  return t;
}

static void test_missing_library(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  assert_null(mb__hip_smi_open(&h, "/nonexistent/librocm_smi64.so"));
  assert_contains(sink.text, "rocm-smi not available");
  assert_contains(sink.text, "/nonexistent/librocm_smi64.so"); /* dlerror */
  assert_string_equal(mb__hip_smi_version(NULL), "");
  assert_int_equal(mb__hip_smi_index(NULL, 0, 3, 0, 0), UINT32_MAX);
  mb_telemetry_t t = read_dev(NULL, 0);
  assert_true(isnan(t.sm_clock_hz) && isnan(t.mem_clock_hz));
  assert_true(isnan(t.power_w) && isnan(t.temp_c));
  assert_int_equal(t.throttle, 0);
}

/* rocm_smi_lib 7.x (ROCm 6.1+): the 6.0 layout, rsmi_dev_power_get, a
 * junction sensor. */
static void test_v7_reads_everything(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  mb_hip_smi_t *s = mb__hip_smi_open(&h, FAKE_RSMI_V7);
  assert_non_null(s);
  assert_string_equal(mb__hip_smi_version(s), "rocm-smi 7.3.0");

  assert_int_equal(mb__hip_smi_index(s, 0, 0x03, 0, 0), 0);
  /* the partition bits [31:28] of device 1's id are not the address */
  assert_int_equal(mb__hip_smi_index(s, 1, 0xc1, 1, 2), 1);
  assert_int_equal(mb__hip_smi_index(s, 0, 0x04, 0, 0), UINT32_MAX);
  assert_int_equal(mb__hip_smi_index(s, 1, 0xc1, 1, 0), UINT32_MAX);
  assert_int_equal(mb__hip_smi_index(s, 0, 0xc1, 1, 2), UINT32_MAX);

  mb_telemetry_t t = read_dev(s, 0);
  assert_near(t.sm_clock_hz, 1700e6);
  assert_near(t.mem_clock_hz, 1300e6);
  assert_near(t.power_w, 350.5);
  assert_near(t.temp_c, 61.0);
  assert_int_equal(t.throttle, 0);

  t = read_dev(s, 1);
  assert_near(t.sm_clock_hz, 1600e6);
  assert_near(t.power_w, 120.25);
  /* rocm-smi's "no current level" (current = -1) is no reading */
  assert_true(isnan(t.mem_clock_hz));

  /* no device: every reading NAN, nothing read */
  t = read_dev(s, UINT32_MAX);
  assert_true(isnan(t.sm_clock_hz) && isnan(t.power_w) && isnan(t.temp_c));
  /* a device the library refuses */
  t = read_dev(s, 7);
  assert_true(isnan(t.sm_clock_hz) && isnan(t.mem_clock_hz));
  assert_true(isnan(t.power_w) && isnan(t.temp_c));
  mb__hip_smi_close(s);
}

/* Before 6.0.0: the old layout; no rsmi_dev_power_get nor socket power
 * (average power instead); no junction sensor (edge instead). */
static void test_v5_layout_and_fallbacks(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  mb_hip_smi_t *s = mb__hip_smi_open(&h, FAKE_RSMI_V5);
  assert_non_null(s);
  assert_string_equal(mb__hip_smi_version(s), "rocm-smi 5.7.1");
  mb_telemetry_t t = read_dev(s, 0);
  assert_near(t.sm_clock_hz, 1700e6);
  assert_near(t.mem_clock_hz, 1300e6);
  assert_near(t.power_w, 280.25);
  assert_near(t.temp_c, 48.0);
  mb__hip_smi_close(s);
}

/* Version 1.x: a build without git tags (Debian's 5.2.3 reports 1.0.0).
 * Its layout follows from whether it has rsmi_dev_power_get. */
static void test_v1_layout_by_symbol(void **state) {
  (void)state;
  const char *libs[] = {FAKE_RSMI_V1_OLD, FAKE_RSMI_V1_NEW};
  for (size_t i = 0; i < 2; i++) {
    log_sink_t sink;
    mb_host_api_t h = host_for(&sink);
    mb_hip_smi_t *s = mb__hip_smi_open(&h, libs[i]);
    assert_non_null(s);
    assert_string_equal(mb__hip_smi_version(s), "rocm-smi 1.0.0");
    mb_telemetry_t t = read_dev(s, 0);
    assert_near(t.sm_clock_hz, 1700e6);
    assert_near(t.mem_clock_hz, 1300e6);
    mb__hip_smi_close(s);
  }
}

/* A version whose rsmi_frequencies_t we cannot vouch for: no clocks, said
 * at open; power (here from the socket call alone) and temperature are
 * still read. */
static void test_unknown_version_reads_no_clocks(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  mb_hip_smi_t *s = mb__hip_smi_open(&h, FAKE_RSMI_V9);
  assert_non_null(s);
  assert_string_equal(mb__hip_smi_version(s), "rocm-smi 9.0.0");
  assert_contains(sink.text, "rocm-smi 9.0.0");
  assert_contains(sink.text, "clocks are not read");
  mb_telemetry_t t = read_dev(s, 0);
  assert_true(isnan(t.sm_clock_hz) && isnan(t.mem_clock_hz));
  assert_near(t.power_w, 349.0);
  assert_near(t.temp_c, 61.0);
  mb__hip_smi_close(s);
}

static void test_refused_with_reason(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  assert_null(mb__hip_smi_open(&h, FAKE_RSMI_NOINIT));
  assert_contains(sink.text, "has no rsmi_init");

  h = host_for(&sink);
  assert_null(mb__hip_smi_open(&h, FAKE_RSMI_INITFAIL));
  assert_contains(sink.text, "rsmi_init failed (status 8)");
}

/* The links through the HIP link hook (hip_link.c): a backend state and
 * two devices as hip_probe leaves them, rocm-smi indices 0 and 1. */
typedef struct link_fixture {
  mb_hip_state_t h;
  mb_hip_device_t d[2];
} link_fixture_t;

static void open_links(link_fixture_t *f, mb_host_api_t *host,
                       const char *lib) {
  memset(f, 0, sizeof *f);
  f->h.smi = lib ? mb__hip_smi_open(host, lib) : NULL;
  for (uint32_t i = 0; i < 2; i++) f->d[i].smi_index = i;
}

static double link_of(link_fixture_t *f, int dev, int peer, char *what) {
  return mb__hip_link(&f->h.base, &f->d[dev].base,
                      peer < 0 ? NULL : &f->d[peer].base, what, 256);
}

/* PCIe from the fastest DPM level (not the idle current one), at the rate
 * table's figure; xGMI at rocm-smi's maximum for the io link. */
static void test_links_xgmi(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  link_fixture_t f;
  open_links(&f, &h, FAKE_RSMI_V7);
  assert_non_null(f.h.smi);
  char what[256];
  assert_near(link_of(&f, 0, -1, what), 16 * 16.0 * 128 / 130 / 8);
  assert_contains(what, "PCIe 4.0 x16");
  assert_contains(what, "now 2.5 GT/s x1");
  assert_near(link_of(&f, 1, -1, what), 16 * 32.0 * 128 / 130 / 8);
  assert_contains(what, "PCIe 5.0 x16");
  assert_near(link_of(&f, 0, 1, what), 64.0);
  assert_contains(what, "xGMI: 64 GB/s");
  mb__hip_smi_close(f.h.smi);
}

/* The pre-6.0 layout of rsmi_pcie_bandwidth_t; devices linked by PCIe:
 * no direct link (0). */
static void test_links_pcie_v5(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  link_fixture_t f;
  open_links(&f, &h, FAKE_RSMI_V5);
  char what[256];
  assert_near(link_of(&f, 0, -1, what), 16 * 16.0 * 128 / 130 / 8);
  assert_true(link_of(&f, 0, 1, what) == 0.0);
  assert_contains(what, "none: rocm-smi says the devices are linked by PCIe");
  mb__hip_smi_close(f.h.smi);
}

/* No link calls in the library, or no library: unknown, never a guess. */
static void test_links_unknown(void **state) {
  (void)state;
  log_sink_t sink;
  mb_host_api_t h = host_for(&sink);
  link_fixture_t f;
  open_links(&f, &h, FAKE_RSMI_V1_OLD);
  char what[256];
  assert_true(link_of(&f, 0, -1, what) < 0);
  assert_contains(what, "unknown: rocm-smi cannot read the PCIe link");
  assert_true(link_of(&f, 0, 1, what) < 0);
  mb__hip_smi_close(f.h.smi);
  open_links(&f, &h, NULL);
  assert_true(link_of(&f, 0, -1, what) < 0);
  assert_string_equal(what, "unknown: rocm-smi is not loaded");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_library),
      cmocka_unit_test(test_v7_reads_everything),
      cmocka_unit_test(test_v5_layout_and_fallbacks),
      cmocka_unit_test(test_v1_layout_by_symbol),
      cmocka_unit_test(test_unknown_version_reads_no_clocks),
      cmocka_unit_test(test_refused_with_reason),
      cmocka_unit_test(test_links_xgmi),
      cmocka_unit_test(test_links_pcie_v5),
      cmocka_unit_test(test_links_unknown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
