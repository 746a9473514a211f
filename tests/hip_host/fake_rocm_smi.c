/* A stand-in for librocm_smi64: the rsmi_* entry points hip_smi.c calls,
 * answering for two devices with fixed, recognisable values. One source,
 * built as several shared libraries by compile definitions:
 *   FAKE_MAJOR, FAKE_MINOR, FAKE_PATCH  what rsmi_version_get reports
 *   FAKE_LAYOUT        5: rsmi_frequencies_t as before rocm_smi_lib 6.0.0,
 *                      6: with has_deep_sleep and 33 levels (6.0.0 on)
 *   FAKE_POWER_GET     export rsmi_dev_power_get (6.0.0 on)
 *   FAKE_SOCKET_POWER  export rsmi_dev_current_socket_power_get
 *   FAKE_JUNCTION      the junction sensor is readable (else only edge)
 *   FAKE_NO_INIT       rsmi_init is missing
 *   FAKE_INIT_STATUS   what rsmi_init returns (0)
 *   FAKE_LINKS         export rsmi_dev_pci_bandwidth_get (in the
 *                      FAKE_LAYOUT's rsmi_pcie_bandwidth_t),
 *                      rsmi_topo_get_link_type and
 *                      rsmi_minmax_bandwidth_get: devices 0 and 1 linked
 *                      by xGMI, 1 hop, at most 64000 MB/s, or with
 *                      FAKE_TOPO_PCIE by PCIe
 * Device 0's PCIe levels are 2.5 GT/s x1 (current: idle) and 16 GT/s x16;
 * device 1's 2.5 GT/s x16 and 32 GT/s x16 (current).
 * Device 0 is PCI 0000:03:00.0: system clock levels 500/1200/1700 MHz with
 * 1700 current, memory 900/1300 MHz with 1300 current, power 350.5 W from
 * rsmi_dev_power_get, 349 W from the socket call, 280.25 W average,
 * junction 61 C, edge 48 C. Device 1 is 0001:c1:01.2 with partition bits
 * set: 1600 MHz, 120.25 W, and no current memory level (current = -1). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifndef FAKE_INIT_STATUS
#define FAKE_INIT_STATUS 0
#endif

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, INVALID_ARGS = 1, NOT_SUPPORTED = 2 };

typedef struct {
  uint32_t major, minor, patch;
  const char *build;
} version_t;

typedef struct {
  uint32_t num_supported, current;
  uint64_t frequency[32];
} freq_v5_t;

typedef struct {
  bool has_deep_sleep;
  uint32_t num_supported, current;
  uint64_t frequency[33];
} freq_v6_t;

#define MHZ 1000000ull

#ifndef FAKE_NO_INIT
EXPORT uint32_t rsmi_init(uint64_t flags) {
  (void)flags;
  return FAKE_INIT_STATUS;
}
#endif

EXPORT uint32_t rsmi_shut_down(void) {
  return OK;
}

EXPORT uint32_t rsmi_version_get(version_t *v) {
  v->major = FAKE_MAJOR;
  v->minor = FAKE_MINOR;
  v->patch = FAKE_PATCH;
  v->build = "fake";
  return OK;
}

EXPORT uint32_t rsmi_num_monitor_devices(uint32_t *n) {
  *n = 2;
  return OK;
}

EXPORT uint32_t rsmi_dev_pci_id_get(uint32_t dv, uint64_t *id) {
  if (dv == 0)
    *id = 0x03ull << 8;
  else if (dv == 1)
    *id = (1ull << 32) | (3ull << 28) | (0xc1ull << 8) | (1ull << 3) | 2;
  else
    return INVALID_ARGS;
  return OK;
}

EXPORT uint32_t rsmi_dev_gpu_clk_freq_get(uint32_t dv, uint32_t type, void *f) {
  static const uint64_t sys0[] = {500 * MHZ, 1200 * MHZ, 1700 * MHZ};
  static const uint64_t sys1[] = {500 * MHZ, 1600 * MHZ};
  static const uint64_t mem[] = {900 * MHZ, 1300 * MHZ};
  const uint64_t *lv;
  uint32_t n;
  if (dv > 1) return INVALID_ARGS;
  if (type == 0) {
    lv = dv == 0 ? sys0 : sys1;
    n = dv == 0 ? 3 : 2;
  } else if (type == 4) {
    lv = mem;
    n = 2;
  } else {
    return NOT_SUPPORTED;
  }
#if FAKE_LAYOUT == 5
  freq_v5_t r;
  memset(&r, 0, sizeof r);
#else
  freq_v6_t r;
  memset(&r, 0, sizeof r);
  r.has_deep_sleep = true;
#endif
  r.num_supported = n;
  r.current = dv == 1 && type == 4 ? 0xFFFFFFFFu : n - 1;
  memcpy(r.frequency, lv, n * sizeof lv[0]);
  memcpy(f, &r, sizeof r);
  return OK;
}

#ifdef FAKE_POWER_GET
EXPORT uint32_t rsmi_dev_power_get(uint32_t dv, uint64_t *uw, uint32_t *type) {
  if (dv > 1) {
    *type = 0xFFFFFFFFu; /* RSMI_INVALID_POWER */
    return INVALID_ARGS;
  }
  *uw = dv == 0 ? 350500000ull : 120250000ull;
  *type = 1; /* RSMI_CURRENT_POWER */
  return OK;
}
#endif

#ifdef FAKE_SOCKET_POWER
EXPORT uint32_t rsmi_dev_current_socket_power_get(uint32_t dv, uint64_t *uw) {
  if (dv > 1) return INVALID_ARGS;
  *uw = dv == 0 ? 349000000ull : 119000000ull;
  return OK;
}
#endif

EXPORT uint32_t rsmi_dev_power_ave_get(uint32_t dv, uint32_t sensor,
                                       uint64_t *uw) {
  if (dv > 1 || sensor != 0) return INVALID_ARGS;
  *uw = dv == 0 ? 280250000ull : 100000000ull;
  return OK;
}

EXPORT uint32_t rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensor,
                                         uint32_t metric, int64_t *mc) {
  if (dv > 1 || metric != 0) return INVALID_ARGS;
#ifdef FAKE_JUNCTION
  if (sensor == 1) {
    *mc = 61000;
    return OK;
  }
#endif
  if (sensor == 0) {
    *mc = 48000;
    return OK;
  }
  return NOT_SUPPORTED;
}

#ifdef FAKE_LINKS
EXPORT uint32_t rsmi_dev_pci_bandwidth_get(uint32_t dv, void *b) {
  static const uint64_t rates[2][2] = {{2500000000ull, 16000000000ull},
                                       {2500000000ull, 32000000000ull}};
  static const uint32_t lanes[2][2] = {{1, 16}, {16, 16}};
  if (dv > 1) return INVALID_ARGS;
#if FAKE_LAYOUT == 5
  struct {
    freq_v5_t rate;
    uint32_t lanes[32];
  } r;
#else
  struct {
    freq_v6_t rate;
    uint32_t lanes[33];
  } r;
#endif
  memset(&r, 0, sizeof r);
  r.rate.num_supported = 2;
  r.rate.current = dv == 0 ? 0 : 1;
  memcpy(r.rate.frequency, rates[dv], sizeof rates[dv]);
  memcpy(r.lanes, lanes[dv], sizeof lanes[dv]);
  memcpy(b, &r, sizeof r);
  return OK;
}

EXPORT uint32_t rsmi_topo_get_link_type(uint32_t src, uint32_t dst,
                                        uint64_t *hops, uint32_t *type) {
  if (src > 1 || dst > 1 || src == dst) return INVALID_ARGS;
  *hops = 1;
#ifdef FAKE_TOPO_PCIE
  *type = 1; /* RSMI_IOLINK_TYPE_PCIEXPRESS */
#else
  *type = 2; /* RSMI_IOLINK_TYPE_XGMI */
#endif
  return OK;
}

EXPORT uint32_t rsmi_minmax_bandwidth_get(uint32_t src, uint32_t dst,
                                          uint64_t *min_mbs,
                                          uint64_t *max_mbs) {
  if (src > 1 || dst > 1 || src == dst) return INVALID_ARGS;
#ifdef FAKE_TOPO_PCIE
  (void)min_mbs, (void)max_mbs;
  return NOT_SUPPORTED; /* rocm-smi reads it for xGMI links only */
#else
  *min_mbs = 32000;
  *max_mbs = 64000;
  return OK;
#endif
}
#endif
