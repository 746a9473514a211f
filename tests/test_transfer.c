/* The transfers (lib/ops/copy.c). h2d and d2h on the cpu backend,
 * pageable and pinned, each checked exactly — d2h's check reads what its
 * collect hook brought back from the kernel's host buffer, so a runner that
 * skipped the hook leaves Y unwritten and fails here — with the transfer's
 * bytes (MN size, each byte across once) and no roofline (the device's copy
 * bandwidth is not a link's). On the emulated GPU (when built) pinned runs
 * and pageable is skipped with its reason. d2d on the emulated GPU with
 * MB_GPUEMU_DEVICES=2: checked exactly (through its collect hook, from the
 * peer's buffer), peer access on and off recorded, the peer (dev + 1) mod
 * count; with one device, skipped saying so. The link roof: with
 * MB_GPUEMU_PCIE the emulated device claims a PCIe link, and the
 * transfers' roof is that link's figure from the rate table. */
#include <stdlib.h>

#include "test_util.h"

#include "gpu_link_rates.h"

static mb_result_t *run_dev(mb_context_t *ctx, const char *backend,
                            uint32_t dev, const char *op, uint32_t flags) {
  mb_op_params_t p = test_shape2(MB_DTYPE_F32, 33, 65);
  p.flags = flags;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = &p;
  s.backend = backend;
  s.device = dev;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 5;
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(ctx, &s, &r), MB_OK);
  return r;
}

static mb_result_t *run_on(mb_context_t *ctx, const char *backend,
                           const char *op, uint32_t flags) {
  return run_dev(ctx, backend, 0, op, flags);
}

/* Checked exactly, with the transfer's bytes; its roof the link's figure
 * `link_gbps` (0: unknown, no roof). */
static void expect_transfer(mb_result_t *r, const char *what,
                            double link_gbps) {
  assert_true(test_result_passes(r, what));
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  assert_int_equal(mb_result_correctness(r, &c), MB_OK);
  assert_true(c.max_abs_err == 0.0);
  assert_true(c.runs_checked >= 2); /* the first run and after timing */
  mb_derived_t d = MB_DERIVED_INIT;
  assert_int_equal(mb_result_derived(r, &d), MB_OK);
  assert_true(d.bytes == 33.0 * 65 * 4);
  assert_true(d.flop == 0.0);
  assert_true(d.gbps > 0.0);
  if (link_gbps > 0) {
    assert_true(d.bandwidth_gbps == link_gbps);
    assert_true(d.roof_ns == d.bytes / link_gbps && d.pct_roof > 0);
    assert_string_equal(d.bound, "link");
  } else {
    assert_true(d.bandwidth_gbps == 0.0 && d.roof_ns == 0.0 && d.pct_roof == 0);
  }
}

static void expect_exact(mb_result_t *r, const char *what) {
  expect_transfer(r, what, 0.0);
}

/* Note `key` of r: its text, or NULL with *value set; fails if absent. */
static const char *note(const mb_result_t *r, const char *key, double *value) {
  for (size_t i = 0; i < mb_result_note_count(r); i++) {
    const char *k, *text;
    double v;
    assert_int_equal(mb_result_note(r, i, &k, &text, &v), MB_OK);
    if (strcmp(k, key)) continue;
    if (value) *value = v;
    return text;
  }
  fail_msg("no note %s", key);
  return NULL;
}

static mb_context_t *gpuemu_context(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/gpuemu", test_env_dir("MB_TEST_FIXTURE_DIR"));
  return test_context(dir);
}

static void test_cpu(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  const char *ops[] = {"h2d", "d2h"};
  for (size_t i = 0; i < 2; i++)
    for (uint32_t pinned = 0; pinned < 2; pinned++) {
      mb_result_t *r =
          run_on(ctx, "cpu", ops[i], pinned ? MB_PARAM_PINNED : 0u);
      printf("  cpu %s %s\n", ops[i], pinned ? "pinned" : "pageable");
      expect_exact(r, ops[i]);
      mb_result_destroy(r);
    }
  mb_context_destroy(ctx);
}

static void test_gpuemu(void **state) {
  (void)state;
  mb_context_t *ctx = gpuemu_context();
  const char *ops[] = {"h2d", "d2h"};
  for (size_t i = 0; i < 2; i++) {
    mb_result_t *r = run_on(ctx, "gpuemu", ops[i], MB_PARAM_PINNED);
    expect_exact(r, ops[i]);
    mb_result_destroy(r);
    r = run_on(ctx, "gpuemu", ops[i], 0u);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    assert_int_equal(mb_result_info(r, &info), MB_OK);
    assert_int_equal(info.status, MB_RESULT_SKIPPED);
    assert_contains(info.reason, "pageable host memory on a GPU");
    mb_result_destroy(r);
  }
  mb_context_destroy(ctx);
}

/* One device (the emulator's default): d2d is skipped, saying why. */
static void test_d2d_one_device(void **state) {
  (void)state;
  unsetenv("MB_GPUEMU_DEVICES");
  mb_context_t *ctx = gpuemu_context();
  for (uint32_t flags = 0; flags <= MB_PARAM_PEER; flags += MB_PARAM_PEER) {
    mb_result_t *r = run_on(ctx, "gpuemu", "d2d", flags);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    assert_int_equal(mb_result_info(r, &info), MB_OK);
    assert_int_equal(info.status, MB_RESULT_SKIPPED);
    assert_contains(info.reason, "d2d needs 2 devices: this machine has 1");
    mb_result_destroy(r);
  }
  mb_context_destroy(ctx);
}

/* Two devices: device 0 to 1 and 1 to 0 (the peer wraps), peer access off
 * and on, each exact and recorded; no link figure, so no roof. */
static void test_d2d_two_devices(void **state) {
  (void)state;
  setenv("MB_GPUEMU_DEVICES", "2", 1);
  mb_context_t *ctx = gpuemu_context();
  for (uint32_t dev = 0; dev < 2; dev++)
    for (uint32_t flags = 0; flags <= MB_PARAM_PEER; flags += MB_PARAM_PEER) {
      mb_result_t *r = run_dev(ctx, "gpuemu", dev, "d2d", flags);
      expect_transfer(r, "memcpy", 0.0);
      mb_result_info_t info = MB_RESULT_INFO_INIT;
      assert_int_equal(mb_result_info(r, &info), MB_OK);
      assert_int_equal(info.params.flags & MB_PARAM_PEER, flags);
      double peer = -1;
      assert_null(note(r, "peer_device", &peer));
      assert_true(peer == (double)((dev + 1) % 2));
      assert_contains(note(r, "peer_access", NULL),
                      flags ? "enabled both ways" : "possible, disabled");
      assert_contains(note(r, "link", NULL), "unknown");
      mb_result_destroy(r);
    }
  mb_context_destroy(ctx);
  unsetenv("MB_GPUEMU_DEVICES");
}

/* Devices that cannot reach each other: peer is skipped with the reason,
 * without it the copy runs (staged through host memory on a GPU). */
static void test_d2d_no_peer_access(void **state) {
  (void)state;
  setenv("MB_GPUEMU_DEVICES", "2", 1);
  setenv("MB_GPUEMU_PEER", "none", 1);
  mb_context_t *ctx = gpuemu_context();
  mb_result_t *r = run_on(ctx, "gpuemu", "d2d", MB_PARAM_PEER);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_contains(info.reason, "peer access is not possible");
  mb_result_destroy(r);
  r = run_on(ctx, "gpuemu", "d2d", 0);
  expect_transfer(r, "memcpy", 0.0);
  assert_contains(note(r, "peer_access", NULL), "not possible");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
  unsetenv("MB_GPUEMU_PEER");
  unsetenv("MB_GPUEMU_DEVICES");
}

/* A known host link (the emulated device claims PCIe 4.0 x16): the
 * environment records it, and it is the roof of h2d, d2h and of d2d (the
 * slower host link of the two devices: staged through host memory, or
 * peer to peer over PCIe, the emulated devices having no direct link). */
static void test_link_roof(void **state) {
  (void)state;
  setenv("MB_GPUEMU_DEVICES", "2", 1);
  setenv("MB_GPUEMU_PCIE", "4x16", 1);
  mb_context_t *ctx = gpuemu_context();
  const double link = mb__pcie_gbps(4, 16);
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "gpuemu", 0, &dev), MB_OK);
  int facts = 0;
  for (size_t i = 0; i < mb_device_fact_count(dev); i++) {
    const char *key, *text;
    double v;
    assert_int_equal(mb_device_fact(dev, i, &key, &text, &v), MB_OK);
    if (!strcmp(key, "host_link"))
      facts++, assert_contains(text, "PCIe 4.0 x16");
    if (!strcmp(key, "host_link_gbps")) facts++, assert_true(v == link);
  }
  assert_int_equal(facts, 2);
  const char *ops[] = {"h2d", "d2h"};
  for (size_t i = 0; i < 2; i++) {
    mb_result_t *r = run_on(ctx, "gpuemu", ops[i], MB_PARAM_PINNED);
    expect_transfer(r, ops[i], link);
    assert_contains(note(r, "link", NULL), "PCIe 4.0 x16");
    mb_result_destroy(r);
  }
  for (uint32_t flags = 0; flags <= MB_PARAM_PEER; flags += MB_PARAM_PEER) {
    mb_result_t *r = run_on(ctx, "gpuemu", "d2d", flags);
    expect_transfer(r, "memcpy", link);
    assert_contains(note(r, "link", NULL),
                    flags ? "PCIe peer to peer" : "staged through host");
    mb_result_destroy(r);
  }
  mb_context_destroy(ctx);
  unsetenv("MB_GPUEMU_PCIE");
  unsetenv("MB_GPUEMU_DEVICES");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu),
      cmocka_unit_test(test_gpuemu),
      cmocka_unit_test(test_d2d_one_device),
      cmocka_unit_test(test_d2d_two_devices),
      cmocka_unit_test(test_d2d_no_peer_access),
      cmocka_unit_test(test_link_roof),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
