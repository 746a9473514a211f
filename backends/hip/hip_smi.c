/* HIP backend — rocm-smi (librocm_smi64), loaded at run time.
 *
 * The module must load where no AMD driver or ROCm is installed, so the
 * library is dlopen'ed and only the entry points below are declared; their
 * signatures, enum values and structs are ROCm/rocm_smi_lib's
 * include/rocm_smi/rocm_smi.h, checked against two versions: the current
 * one (2025, library 7.x) and Debian's librocm-smi-dev 5.2.3 (whose library
 * reports version 1.0.0). Anything rocm-smi cannot read on a device stays
 * NAN in the telemetry.
 *
 * What is read: the current system (engine) and memory clock
 * (rsmi_dev_gpu_clk_freq_get: the list of DPM levels and the index of the
 * current one, in Hz), power (rsmi_dev_power_get: current socket power where
 * the device has it, else average; older libraries: the current-socket or
 * average call; microwatts) and temperature (junction/hotspot, else edge;
 * millidegrees Celsius).
 *
 * rsmi_frequencies_t changed in rocm_smi_lib 6.0.0 (ROCm 6.0; its CHANGELOG:
 * "Added deep sleep frequency readings", the same release that "Added a
 * generic power API: rsmi_dev_power_get()"): a leading `bool has_deep_sleep`
 * and 33 instead of 32 frequencies. Which layout a library writes is decided
 * from its version (freq_layout below); the call always gets a buffer larger
 * than either, so a wrong guess can only give a wrong reading, which the
 * checks on the decoded values turn into NAN, never a write past our memory.
 * A version we cannot vouch for reads no clocks (NAN) and says so at open.
 *
 * Throttling is left 0 ("none reported"): rocm-smi exposes it only inside
 * rsmi_gpu_metrics_t (throttle_status, indep_throttle_status), a struct that
 * has grown with every gpu_metrics revision (v1.0 ... v1.8, the CHANGELOG of
 * ROCm 6.1 warns of ABI breaks in it) and whose throttle_status bits differ
 * by ASIC; MI300 reports throttling as accumulated residencies instead. We
 * cannot lay it out for an arbitrary installed version without reading past
 * or misreading it. */
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"

/* rsmi_status_t: an enum holding 0xFFFFFFFF, i.e. an unsigned int;
 * RSMI_STATUS_SUCCESS = 0. */
typedef uint32_t rsmi_status_t;

/* rsmi_clk_type_t: RSMI_CLK_TYPE_SYS = 0x0, then DF, DCEF, SOC,
 * RSMI_CLK_TYPE_MEM (= 4). rsmi_temperature_type_t: RSMI_TEMP_TYPE_EDGE = 0,
 * RSMI_TEMP_TYPE_JUNCTION (= 1). rsmi_temperature_metric_t:
 * RSMI_TEMP_CURRENT = 0x0. Enum parameters are passed as unsigned int. */
enum {
  RSMI_CLK_TYPE_SYS = 0,
  RSMI_CLK_TYPE_MEM = 4,
  RSMI_TEMP_TYPE_EDGE = 0,
  RSMI_TEMP_TYPE_JUNCTION = 1,
  RSMI_TEMP_CURRENT = 0
};
/* RSMI_POWER_TYPE (6.0+): RSMI_AVERAGE_POWER = 0, RSMI_CURRENT_POWER,
 * RSMI_INVALID_POWER = 0xFFFFFFFF. */
#define RSMI_INVALID_POWER 0xFFFFFFFFu

/* rsmi_version_t, unchanged in both headers. */
typedef struct rsmi_version {
  uint32_t major, minor, patch;
  const char *build;
} rsmi_version_t;

/* rsmi_frequencies_t before 6.0.0 (RSMI_MAX_NUM_FREQUENCIES 32) ... */
typedef struct rsmi_freq_v5 {
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[32];
} rsmi_freq_v5_t;
/* ... and from 6.0.0 on (RSMI_MAX_NUM_FREQUENCIES 33: "32 normal + 1 sleep
 * frequency"). */
typedef struct rsmi_freq_v6 {
  bool has_deep_sleep;
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[33];
} rsmi_freq_v6_t;
_Static_assert(sizeof(rsmi_freq_v5_t) == 264, "rsmi_frequencies_t < 6.0");
_Static_assert(sizeof(rsmi_freq_v6_t) == 280, "rsmi_frequencies_t >= 6.0");

/* What rsmi_dev_gpu_clk_freq_get is handed: larger than every layout. */
typedef union freq_buf {
  rsmi_freq_v5_t v5;
  rsmi_freq_v6_t v6;
  uint64_t room[128];
} freq_buf_t;

enum { LAYOUT_NONE = 0, LAYOUT_V5 = 5, LAYOUT_V6 = 6 };

/* rsmi_pcie_bandwidth_t: the link's DPM levels as an rsmi_frequencies_t of
 * transfer rates (T/s), then each level's lane count, in the same two
 * layouts (RSMI_MAX_NUM_FREQUENCIES lanes: 32, then 33). */
typedef struct rsmi_pcie_v5 {
  rsmi_freq_v5_t rate;
  uint32_t lanes[32];
} rsmi_pcie_v5_t;
typedef struct rsmi_pcie_v6 {
  rsmi_freq_v6_t rate;
  uint32_t lanes[33];
} rsmi_pcie_v6_t;
typedef union pcie_buf {
  rsmi_pcie_v5_t v5;
  rsmi_pcie_v6_t v6;
  uint64_t room[128];
} pcie_buf_t;

/* RSMI_IO_LINK_TYPE */
enum { RSMI_IOLINK_TYPE_PCIEXPRESS = 1, RSMI_IOLINK_TYPE_XGMI = 2 };

struct mb_hip_smi {
  void *lib;
  rsmi_status_t (*init)(uint64_t flags);
  rsmi_status_t (*shut_down)(void);
  rsmi_status_t (*version_get)(rsmi_version_t *v);
  rsmi_status_t (*num_devices)(uint32_t *n);
  rsmi_status_t (*pci_id)(uint32_t dv, uint64_t *bdfid);
  rsmi_status_t (*clk_freq)(uint32_t dv, uint32_t clk_type, void *f);
  rsmi_status_t (*power_get)(uint32_t dv, uint64_t *uw, uint32_t *type);
  rsmi_status_t (*socket_power)(uint32_t dv, uint64_t *uw);
  rsmi_status_t (*power_ave)(uint32_t dv, uint32_t sensor, uint64_t *uw);
  rsmi_status_t (*temp)(uint32_t dv, uint32_t sensor, uint32_t metric,
                        int64_t *millic);
  /* the links: PCIe levels, the io-link type and xGMI bandwidth */
  rsmi_status_t (*pci_bandwidth)(uint32_t dv, void *b);
  rsmi_status_t (*link_type)(uint32_t src, uint32_t dst, uint64_t *hops,
                             uint32_t *type);
  rsmi_status_t (*minmax_bw)(uint32_t src, uint32_t dst, uint64_t *min_mbs,
                             uint64_t *max_mbs);
  int layout; /* LAYOUT_*: how to read rsmi_frequencies_t */
  char version[64];
};

/* dlsym into a typed function pointer without a cast between object and
 * function pointers (ISO C forbids it; POSIX guarantees the copy works). */
static int sym(void *lib, const char *name, void *fn) {
  void *p = dlsym(lib, name);
  if (p) memcpy(fn, &p, sizeof p);
  return p != NULL;
}

/* The unversioned name (a ROCm install's symlink), then the sonames of
 * ROCm 6.1+ (7), 6.0 (6), 5.x (5) and Debian's packages (1). */
static void *load(const char *path, char *why, size_t cap) {
  static const char *const names[] = {
      "librocm_smi64.so", "librocm_smi64.so.7", "librocm_smi64.so.6",
      "librocm_smi64.so.5", "librocm_smi64.so.1"};
  if (path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) snprintf(why, cap, "%s", dlerror());
    return lib;
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  snprintf(why, cap,
           "none of librocm_smi64.so, .so.7, .so.6, .so.5, .so.1 "
           "could be loaded");
  return NULL;
}

/* The entry points we cannot do without; NULL when all are there. */
static const char *bind(mb_hip_smi_t *s) {
  if (!sym(s->lib, "rsmi_init", &s->init)) return "rsmi_init";
  if (!sym(s->lib, "rsmi_shut_down", &s->shut_down)) return "rsmi_shut_down";
  if (!sym(s->lib, "rsmi_version_get", &s->version_get))
    return "rsmi_version_get";
  if (!sym(s->lib, "rsmi_num_monitor_devices", &s->num_devices))
    return "rsmi_num_monitor_devices";
  if (!sym(s->lib, "rsmi_dev_pci_id_get", &s->pci_id))
    return "rsmi_dev_pci_id_get";
  /* Each reading is optional: a missing one stays NAN. */
  sym(s->lib, "rsmi_dev_gpu_clk_freq_get", &s->clk_freq);
  sym(s->lib, "rsmi_dev_power_get", &s->power_get);
  sym(s->lib, "rsmi_dev_current_socket_power_get", &s->socket_power);
  sym(s->lib, "rsmi_dev_power_ave_get", &s->power_ave);
  sym(s->lib, "rsmi_dev_temp_metric_get", &s->temp);
  sym(s->lib, "rsmi_dev_pci_bandwidth_get", &s->pci_bandwidth);
  sym(s->lib, "rsmi_topo_get_link_type", &s->link_type);
  sym(s->lib, "rsmi_minmax_bandwidth_get", &s->minmax_bw);
  return NULL;
}

/* The rsmi_frequencies_t layout a library of this version writes.
 * 2..5: releases before 6.0.0. 6 and 7: ROCm 6.0 (6.0.0; btop's notes say
 * its release tarballs report 7.0.0) and ROCm 6.1+ (7.x, e.g. "ROCm SMI
 * 7.3.0 for ROCm 6.2.1" in the CHANGELOG). 1: the version a build without
 * git tags takes (Debian's 5.2.3 reports 1.0.0, checked; some later ROCm
 * builds reportedly do too); such a build has the 6.0 layout exactly when
 * it has rsmi_dev_power_get, added in the same release. Anything else (0,
 * 8+): unknown, clocks are not read. */
static int freq_layout(uint32_t major, int has_power_get) {
  if (major >= 2 && major <= 5) return LAYOUT_V5;
  if (major == 6 || major == 7) return LAYOUT_V6;
  if (major == 1) return has_power_get ? LAYOUT_V6 : LAYOUT_V5;
  return LAYOUT_NONE;
}

static void drop(mb_hip_smi_t *s) {
  dlclose(s->lib);
  free(s);
}

mb_hip_smi_t *mb__hip_smi_open(const mb_host_api_t *host, const char *path) {
  char why[256];
  void *lib = load(path, why, sizeof why);
  if (!lib) {
    host->log(host->host, MB_LOG_DEBUG,
              "hip: rocm-smi not available (%s); no clocks, power or "
              "temperature",
              why);
    return NULL;
  }
  mb_hip_smi_t *s = calloc(1, sizeof *s);
  if (!s) {
    dlclose(lib);
    return NULL;
  }
  s->lib = lib;
  const char *missing = bind(s);
  if (missing) {
    host->log(host->host, MB_LOG_DEBUG,
              "hip: rocm-smi not usable: the library has no %s", missing);
    drop(s);
    return NULL;
  }
  rsmi_status_t st = s->init(0);
  if (st != 0) {
    host->log(host->host, MB_LOG_DEBUG,
              "hip: rocm-smi not usable: rsmi_init failed (status %u)", st);
    drop(s);
    return NULL;
  }
  rsmi_version_t v = {0, 0, 0, NULL};
  if (s->version_get(&v) == 0)
    snprintf(s->version, sizeof s->version, "rocm-smi %u.%u.%u", v.major,
             v.minor, v.patch);
  else
    snprintf(s->version, sizeof s->version, "rocm-smi (version unknown)");
  s->layout = freq_layout(v.major, s->power_get != NULL);
  if (s->layout == LAYOUT_NONE && s->clk_freq)
    host->log(host->host, MB_LOG_DEBUG,
              "hip: %s: its rsmi_frequencies_t layout is not known to this "
              "build; clocks are not read",
              s->version);
  return s;
}

void mb__hip_smi_close(mb_hip_smi_t *s) {
  if (!s) return;
  s->shut_down();
  drop(s);
}

const char *mb__hip_smi_version(const mb_hip_smi_t *s) {
  return s ? s->version : "";
}

/* BDFID = ((DOMAIN & 0xFFFFFFFF) << 32) | ((Partition & 0xF) << 28)
 *         | ((BUS & 0xFF) << 8) | ((DEVICE & 0x1F) << 3) | (FUNCTION & 0x7)
 * (rsmi_dev_pci_id_get; bits 31:28 were reserved before ROCm 6.1.1 and are
 * ignored here). A partitioned MI300 (CPX, ...) has several rocm-smi
 * devices on one PCI address; the first is taken. */
static int bdf_is(uint64_t id, uint32_t domain, uint32_t bus, uint32_t device,
                  uint32_t function) {
  return (uint32_t)(id >> 32) == domain && ((id >> 8) & 0xFF) == bus &&
         ((id >> 3) & 0x1F) == device && (id & 0x7) == function;
}

uint32_t mb__hip_smi_index(const mb_hip_smi_t *s, uint32_t domain, uint32_t bus,
                           uint32_t device, uint32_t function) {
  uint32_t n = 0;
  if (!s || s->num_devices(&n) != 0) return UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t id = 0;
    if (s->pci_id(i, &id) == 0 && bdf_is(id, domain, bus, device, function))
      return i;
  }
  return UINT32_MAX;
}

/* The current level's frequency in Hz: rocm-smi marks "no current level" as
 * current = -1 (UINT32_MAX), which the range check turns into NAN. */
static double pick(uint32_t num, uint32_t cur, uint32_t max,
                   const uint64_t *freq) {
  if (num == 0 || num > max || cur >= num || freq[cur] == 0) return NAN;
  return (double)freq[cur];
}

static double clock_hz(const mb_hip_smi_t *s, uint32_t dv, uint32_t type) {
  if (!s->clk_freq || s->layout == LAYOUT_NONE) return NAN;
  freq_buf_t f;
  memset(&f, 0, sizeof f);
  if (s->clk_freq(dv, type, &f) != 0) return NAN;
  if (s->layout == LAYOUT_V5)
    return pick(f.v5.num_supported, f.v5.current, 32, f.v5.frequency);
  return pick(f.v6.num_supported, f.v6.current, 33, f.v6.frequency);
}

/* Watts, from microwatts: the generic call (6.0+), else current socket
 * power, else average power (older libraries and ASICs). */
static double power_w(const mb_hip_smi_t *s, uint32_t dv) {
  uint64_t uw = 0;
  uint32_t type = RSMI_INVALID_POWER;
  if (s->power_get && s->power_get(dv, &uw, &type) == 0 &&
      type != RSMI_INVALID_POWER)
    return (double)uw * 1e-6;
  if (s->socket_power && s->socket_power(dv, &uw) == 0)
    return (double)uw * 1e-6;
  if (s->power_ave && s->power_ave(dv, 0, &uw) == 0) return (double)uw * 1e-6;
  return NAN;
}

/* Degrees Celsius, from millidegrees: junction (hotspot) where readable —
 * MI300 reports no edge sensor — else edge. */
static double temp_c(const mb_hip_smi_t *s, uint32_t dv) {
  int64_t mc = 0;
  if (!s->temp) return NAN;
  if (s->temp(dv, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, &mc) == 0)
    return (double)mc * 1e-3;
  if (s->temp(dv, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &mc) == 0)
    return (double)mc * 1e-3;
  return NAN;
}

void mb__hip_smi_read(const mb_hip_smi_t *s, uint32_t index,
                      mb_telemetry_t *out) {
  out->sm_clock_hz = out->mem_clock_hz = out->power_w = out->temp_c = NAN;
  out->throttle = 0; /* not read: see the top of this file */
  if (!s || index == UINT32_MAX) return;
  out->sm_clock_hz = clock_hz(s, index, RSMI_CLK_TYPE_SYS);
  out->mem_clock_hz = clock_hz(s, index, RSMI_CLK_TYPE_MEM);
  out->power_w = power_w(s, index);
  out->temp_c = temp_c(s, index);
}

/* ---- links ----------------------------------------------------------------
 * PCIe: the link's DPM levels (pp_dpm_pcie: "0: 2.5GT/s, x1", "1: 16.0GT/s,
 * x16 *"); the fastest level is what the link can do, the current one is
 * recorded beside it (an idle GPU parks its link at a low level). */

int mb__hip_smi_pcie(const mb_hip_smi_t *s, uint32_t index,
                     mb_hip_pcie_t *out) {
  *out = (mb_hip_pcie_t){0, 0, 0, 0};
  if (!s || index == UINT32_MAX || !s->pci_bandwidth ||
      s->layout == LAYOUT_NONE)
    return -1;
  pcie_buf_t b;
  memset(&b, 0, sizeof b);
  if (s->pci_bandwidth(index, &b) != 0) return -1;
  const int v5 = s->layout == LAYOUT_V5;
  const uint32_t num = v5 ? b.v5.rate.num_supported : b.v6.rate.num_supported;
  const uint32_t cur = v5 ? b.v5.rate.current : b.v6.rate.current;
  const uint64_t *rate = v5 ? b.v5.rate.frequency : b.v6.rate.frequency;
  const uint32_t *lanes = v5 ? b.v5.lanes : b.v6.lanes;
  if (num == 0 || num > (v5 ? 32u : 33u)) return -1;
  for (uint32_t i = 0; i < num; i++)
    if ((double)rate[i] > out->max_gt_s * 1e9 ||
        ((double)rate[i] == out->max_gt_s * 1e9 && lanes[i] > out->max_lanes)) {
      out->max_gt_s = (double)rate[i] * 1e-9;
      out->max_lanes = lanes[i];
    }
  if (cur < num) {
    out->gt_s = (double)rate[cur] * 1e-9;
    out->lanes = lanes[cur];
  }
  return out->max_gt_s > 0 && out->max_lanes > 0 ? 0 : -1;
}

/* xGMI between two devices: 1 with rocm-smi's maximum bandwidth of the
 * io link (MB/s, from the driver's topology) and its hops; 0 when rocm-smi
 * says the devices are linked over PCIe; -1 unknown. */
int mb__hip_smi_xgmi(const mb_hip_smi_t *s, uint32_t index, uint32_t peer,
                     double *max_mbs, unsigned *hops) {
  *max_mbs = 0;
  *hops = 0;
  if (!s || index == UINT32_MAX || peer == UINT32_MAX || !s->link_type)
    return -1;
  uint64_t h = 0, lo = 0, hi = 0;
  uint32_t type = 0;
  if (s->link_type(index, peer, &h, &type) != 0) return -1;
  *hops = (unsigned)h;
  if (type == RSMI_IOLINK_TYPE_PCIEXPRESS) return 0;
  if (type != RSMI_IOLINK_TYPE_XGMI || !s->minmax_bw ||
      s->minmax_bw(index, peer, &lo, &hi) != 0 || hi == 0)
    return -1;
  *max_mbs = (double)hi;
  return 1;
}
