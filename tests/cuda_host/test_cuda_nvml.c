/* NVML's link figures through cuda_nvml.c and the CUDA link hook
 * (cuda_link.c), against fake NVML libraries (fake_nvml.c built per
 * topology): the host link is the PCIe maximum NVML gives, at the rate
 * table's figure, with the current (idle, trained-down) link beside it;
 * the direct link to a peer counts the NVLinks that reach it, directly or
 * through an NVSwitch, at the GPU generation's per-link rate; whatever NVML
 * cannot tell is unknown (-1), and "no NVLink" is 0. No GPU needed. */
#include <math.h>

#include "test_util.h"

#include "cuda_internal.h"
#include "gpu_link_rates.h"

static void sink_log(void *host, mb_log_level_t level, const char *fmt, ...) {
  (void)host, (void)level, (void)fmt;
}

static void sink_error(const char *fmt, ...) {
  (void)fmt;
}

static const mb_host_api_t k_host = {
    .abi_version = MB_BACKEND_ABI_VERSION,
    .struct_size = sizeof(mb_host_api_t),
    .log = sink_log,
    .set_error = sink_error,
};

/* The CUDA backend's state and two H100s as its device_open leaves them. */
typedef struct fixture {
  mb_cuda_state_t c;
  mb_cuda_device_t d[2];
} fixture_t;

static void open_fixture(fixture_t *f, const char *lib) {
  memset(f, 0, sizeof *f);
  f->c.nvml = mb__cuda_nvml_open(&k_host, lib);
  const char *bus[2] = {"0000:18:00.0", "0000:2a:00.0"};
  const unsigned pci_bus[2] = {0x18, 0x2a};
  for (int i = 0; i < 2; i++) {
    mb_cuda_device_t *d = &f->d[i];
    d->base.ordinal = i;
    d->cc_major = 9;
    snprintf(d->arch, sizeof d->arch, "sm_90");
    d->nvml_dev = mb__cuda_nvml_device(f->c.nvml, bus[i]);
    d->pci_known = 1;
    d->pci_bus = pci_bus[i];
  }
}

static double link_of(fixture_t *f, int dev, int peer, char *what) {
  return mb__cuda_link(&f->c.base, &f->d[dev].base,
                       peer < 0 ? NULL : &f->d[peer].base, what, 256);
}

static void assert_gbps(double got, double want) {
  if (!(fabs(got - want) <= 1e-12 * fabs(want)))
    fail_msg("got %.17g GB/s, want %.17g", got, want);
}

static void test_no_nvml(void **state) {
  (void)state;
  fixture_t f;
  open_fixture(&f, "/nonexistent/libnvidia-ml.so.1");
  assert_null(f.c.nvml);
  char what[256];
  assert_true(link_of(&f, 0, -1, what) < 0);
  assert_string_equal(what, "unknown: NVML is not loaded");
  assert_true(link_of(&f, 0, 1, what) < 0);
}

static void test_pcie(void **state) {
  (void)state;
  fixture_t f;
  open_fixture(&f, FAKE_NVML_DIRECT);
  assert_non_null(f.c.nvml);
  char what[256];
  /* the maximum (5.0 x16), not the idle link (1.0 x16) */
  assert_gbps(link_of(&f, 0, -1, what), 16 * 32.0 * 128 / 130 / 8);
  assert_contains(what, "PCIe 5.0 x16");
  assert_contains(what, "now gen 1 x16");
  assert_gbps(link_of(&f, 1, -1, what), 8 * 16.0 * 128 / 130 / 8);
  assert_contains(what, "PCIe 4.0 x8");
  mb__cuda_nvml_close(f.c.nvml);
}

static void test_nvlink_direct(void **state) {
  (void)state;
  fixture_t f;
  open_fixture(&f, FAKE_NVML_DIRECT);
  char what[256];
  /* links 0-3 reach GPU 1, 4-5 a third GPU: 4 x 25 GB/s */
  assert_gbps(link_of(&f, 0, 1, what), 4 * 25.0);
  assert_string_equal(what, "NVLink 4: 4 links x 25 GB/s direct (NVML)");
  /* GPU 1 has none */
  assert_true(link_of(&f, 1, 0, what) == 0.0);
  assert_contains(what, "none: no NVLink");
  /* an architecture the NVLink table lacks: unknown, not a guess */
  f.d[0].cc_minor = 6;
  snprintf(f.d[0].arch, sizeof f.d[0].arch, "sm_96");
  assert_true(link_of(&f, 0, 1, what) < 0);
  assert_contains(what, "sm_96");
  mb__cuda_nvml_close(f.c.nvml);
}

static void test_nvlink_switch(void **state) {
  (void)state;
  fixture_t f;
  open_fixture(&f, FAKE_NVML_SWITCH);
  char what[256];
  /* every link reaches every GPU through the switch: 18 x 25 GB/s */
  assert_gbps(link_of(&f, 0, 1, what), 18 * 25.0);
  assert_contains(what, "18 links x 25 GB/s through NVSwitch");
  mb__cuda_nvml_close(f.c.nvml);
}

/* Without the far end's type, links to another address may be a switch's:
 * the count is unknown. Without the NVLink calls, too; PCIe still reads. */
static void test_nvlink_unknown(void **state) {
  (void)state;
  const char *libs[] = {FAKE_NVML_NOTYPE, FAKE_NVML_NONVLINK};
  for (int i = 0; i < 2; i++) {
    fixture_t f;
    open_fixture(&f, libs[i]);
    char what[256];
    assert_true(link_of(&f, 0, 1, what) < 0);
    assert_contains(what, "unknown: NVML cannot say where the NVLinks go");
    assert_true(link_of(&f, 0, -1, what) > 0);
    mb__cuda_nvml_close(f.c.nvml);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_nvml),
      cmocka_unit_test(test_pcie),
      cmocka_unit_test(test_nvlink_direct),
      cmocka_unit_test(test_nvlink_switch),
      cmocka_unit_test(test_nvlink_unknown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
