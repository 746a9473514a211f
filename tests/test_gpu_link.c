/* The link rate tables (backends/gpu/host/gpu_link_rates.c): PCIe per
 * generation and width after the line encoding, one direction, and NVLink
 * per link by GPU architecture; what is not in a table is 0 (unknown),
 * never a neighbour's figure. Each expected value is worked out here from
 * the specification's transfer rate and encoding, not copied from the
 * table. */
#include <math.h>

#include "test_util.h"

#include "gpu_link_rates.h"

static void assert_gbps(double got, double want) {
  if (!(fabs(got - want) <= 1e-12 * fabs(want)))
    fail_msg("got %.17g GB/s, want %.17g", got, want);
}

static void test_pcie_lanes(void **state) {
  (void)state;
  assert_gbps(mb__pcie_lane_gbps(1), 2.5 * 8 / 10 / 8);     /* 0.25 */
  assert_gbps(mb__pcie_lane_gbps(2), 5.0 * 8 / 10 / 8);     /* 0.5 */
  assert_gbps(mb__pcie_lane_gbps(3), 8.0 * 128 / 130 / 8);  /* 0.985 */
  assert_gbps(mb__pcie_lane_gbps(4), 16.0 * 128 / 130 / 8); /* 1.97 */
  assert_gbps(mb__pcie_lane_gbps(5), 32.0 * 128 / 130 / 8); /* 3.94 */
  assert_gbps(mb__pcie_lane_gbps(6), 64.0 * 242 / 256 / 8); /* 7.56 */
  assert_true(mb__pcie_lane_gbps(0) == 0.0);
  assert_true(mb__pcie_lane_gbps(7) == 0.0);
}

static void test_pcie_links(void **state) {
  (void)state;
  /* the usual GPU links: Gen3 x16 ~15.8, Gen4 x16 ~31.5, Gen5 x16 ~63 */
  assert_gbps(mb__pcie_gbps(3, 16), 16 * 8.0 * 128 / 130 / 8);
  assert_gbps(mb__pcie_gbps(4, 16), 16 * 16.0 * 128 / 130 / 8);
  assert_gbps(mb__pcie_gbps(5, 16), 16 * 32.0 * 128 / 130 / 8);
  assert_gbps(mb__pcie_gbps(4, 8), 8 * 16.0 * 128 / 130 / 8);
  assert_gbps(mb__pcie_gbps(1, 1), 0.25);
  assert_true(mb__pcie_gbps(5, 0) == 0.0);
  assert_true(mb__pcie_gbps(0, 16) == 0.0);
  char buf[128];
  mb__pcie_describe(5, 16, buf, sizeof buf);
  assert_string_equal(buf, "PCIe 5.0 x16 (32 GT/s, 128b/130b): 63.0 GB/s");
  mb__pcie_describe(2, 4, buf, sizeof buf);
  assert_string_equal(buf, "PCIe 2.0 x4 (5 GT/s, 8b/10b): 2.0 GB/s");
  mb__pcie_describe(9, 16, buf, sizeof buf);
  assert_string_equal(buf, "");
}

/* rocm-smi gives rates: each maps to its generation, nothing else does */
static void test_pcie_rates(void **state) {
  (void)state;
  const double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (unsigned g = 1; g <= 6; g++)
    assert_int_equal(mb__pcie_gen_of_rate(rates[g - 1]), g);
  assert_int_equal(mb__pcie_gen_of_rate(16.0000001), 4);
  assert_int_equal(mb__pcie_gen_of_rate(0.0), 0);
  assert_int_equal(mb__pcie_gen_of_rate(12.0), 0);
  assert_int_equal(mb__pcie_gen_of_rate(128.0), 0);
}

static void test_nvlink(void **state) {
  (void)state;
  unsigned gen = 99;
  /* 900 GB/s over 18 links, both directions: 25 GB/s one way */
  assert_gbps(mb__nvlink_gbps(9, 0, &gen), 900.0 / 18 / 2);
  assert_int_equal(gen, 4);
  assert_gbps(mb__nvlink_gbps(8, 0, &gen), 600.0 / 12 / 2);
  assert_int_equal(gen, 3);
  assert_gbps(mb__nvlink_gbps(7, 0, &gen), 300.0 / 6 / 2);
  assert_int_equal(gen, 2);
  assert_gbps(mb__nvlink_gbps(6, 0, &gen), 160.0 / 4 / 2);
  assert_int_equal(gen, 1);
  assert_gbps(mb__nvlink_gbps(10, 0, &gen), 1800.0 / 18 / 2);
  assert_int_equal(gen, 5);
  assert_gbps(mb__nvlink_gbps(10, 3, NULL), 50.0);
  /* an RTX 3090's bridge (8.6), consumer parts (12.0): unknown */
  assert_true(mb__nvlink_gbps(8, 6, &gen) == 0.0);
  assert_int_equal(gen, 0);
  assert_true(mb__nvlink_gbps(12, 0, &gen) == 0.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pcie_lanes),
      cmocka_unit_test(test_pcie_links),
      cmocka_unit_test(test_pcie_rates),
      cmocka_unit_test(test_nvlink),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
