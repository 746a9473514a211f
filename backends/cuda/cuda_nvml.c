/* CUDA backend — NVML, loaded at run time.
 *
 * The module must load where no driver is installed (CI, build machines),
 * so NVML is dlopen'ed rather than linked, and only the functions below are
 * declared (the toolkit here ships no nvml.h). Anything NVML cannot read on
 * this device stays NAN in the telemetry. */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

typedef int nvml_ret_t; /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_dev *nvml_dev_t;

/* nvmlClockType_t, nvmlTemperatureSensors_t */
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

/* nvmlClocksEventReasons (formerly ...ThrottleReasons) bits. GpuIdle (0x1)
 * and ApplicationsClocksSetting (0x2) are not throttling. */
#define NVML_REASON_SW_POWER_CAP 0x4ull
#define NVML_REASON_HW_SLOWDOWN 0x8ull
#define NVML_REASON_SYNC_BOOST 0x10ull
#define NVML_REASON_SW_THERMAL 0x20ull
#define NVML_REASON_HW_THERMAL 0x40ull
#define NVML_REASON_HW_POWER_BRAKE 0x80ull
#define NVML_REASON_DISPLAY_CLOCK 0x100ull

/* nvmlPciInfo_t (nvml.h), as nvmlDeviceGetNvLinkRemotePciInfo_v2 fills
 * it. */
typedef struct nvml_pci {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} nvml_pci_t;

/* NVML_NVLINK_MAX_LINKS (18 since Hopper); nvmlEnableState_t;
 * nvmlIntNvLinkDeviceType_t */
enum { NVML_NVLINK_MAX_LINKS = 18, NVML_FEATURE_ENABLED = 1 };
enum { NVML_NVLINK_DEVICE_TYPE_GPU = 0, NVML_NVLINK_DEVICE_TYPE_SWITCH = 2 };

struct mb_cuda_nvml {
  void *lib;
  nvml_ret_t (*init)(void);
  nvml_ret_t (*shutdown)(void);
  nvml_ret_t (*driver_version)(char *, unsigned);
  nvml_ret_t (*by_pci)(const char *, nvml_dev_t *);
  nvml_ret_t (*clock)(nvml_dev_t, int, unsigned *);
  nvml_ret_t (*power)(nvml_dev_t, unsigned *);
  nvml_ret_t (*temperature)(nvml_dev_t, int, unsigned *);
  nvml_ret_t (*reasons)(nvml_dev_t, unsigned long long *);
  /* the links: PCIe generation and width (maximum, current), NVLinks */
  nvml_ret_t (*pcie_max_gen)(nvml_dev_t, unsigned *);
  nvml_ret_t (*pcie_max_width)(nvml_dev_t, unsigned *);
  nvml_ret_t (*pcie_gen)(nvml_dev_t, unsigned *);
  nvml_ret_t (*pcie_width)(nvml_dev_t, unsigned *);
  nvml_ret_t (*nvlink_state)(nvml_dev_t, unsigned, int *);
  nvml_ret_t (*nvlink_remote_pci)(nvml_dev_t, unsigned, nvml_pci_t *);
  nvml_ret_t (*nvlink_remote_type)(nvml_dev_t, unsigned, int *);
  char driver[96];
};

/* dlsym into a typed function pointer without a cast between object and
 * function pointers (ISO C forbids it; POSIX guarantees the copy works). */
static int sym(void *lib, const char *name, void *fn) {
  void *p = dlsym(lib, name);
  if (p) memcpy(fn, &p, sizeof p);
  return p != NULL;
}

mb_cuda_nvml_t *mb__cuda_nvml_open(const mb_host_api_t *host,
                                   const char *soname) {
  void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    host->log(host->host, MB_LOG_DEBUG,
              "cuda: NVML not available (%s); no clocks/power/temperature",
              dlerror());
    return NULL;
  }
  mb_cuda_nvml_t *n = calloc(1, sizeof *n);
  if (!n) {
    dlclose(lib);
    return NULL;
  }
  n->lib = lib;
  int ok = sym(lib, "nvmlInit_v2", &n->init) &&
           sym(lib, "nvmlShutdown", &n->shutdown) &&
           sym(lib, "nvmlDeviceGetHandleByPciBusId_v2", &n->by_pci);
  sym(lib, "nvmlSystemGetDriverVersion", &n->driver_version);
  sym(lib, "nvmlDeviceGetClockInfo", &n->clock);
  sym(lib, "nvmlDeviceGetPowerUsage", &n->power);
  sym(lib, "nvmlDeviceGetTemperature", &n->temperature);
  if (!sym(lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->reasons))
    sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->reasons);
  sym(lib, "nvmlDeviceGetMaxPcieLinkGeneration", &n->pcie_max_gen);
  sym(lib, "nvmlDeviceGetMaxPcieLinkWidth", &n->pcie_max_width);
  sym(lib, "nvmlDeviceGetCurrPcieLinkGeneration", &n->pcie_gen);
  sym(lib, "nvmlDeviceGetCurrPcieLinkWidth", &n->pcie_width);
  sym(lib, "nvmlDeviceGetNvLinkState", &n->nvlink_state);
  sym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &n->nvlink_remote_pci);
  sym(lib, "nvmlDeviceGetNvLinkRemoteDeviceType", &n->nvlink_remote_type);
  if (!ok || n->init() != 0) {
    host->log(host->host, MB_LOG_DEBUG,
              "cuda: NVML present but not usable (init failed)");
    dlclose(lib);
    free(n);
    return NULL;
  }
  if (n->driver_version && n->driver_version(n->driver, sizeof n->driver) != 0)
    n->driver[0] = '\0';
  return n;
}

void mb__cuda_nvml_close(mb_cuda_nvml_t *n) {
  if (!n) return;
  n->shutdown();
  dlclose(n->lib);
  free(n);
}

const char *mb__cuda_nvml_driver(const mb_cuda_nvml_t *n) {
  return n ? n->driver : "";
}

void *mb__cuda_nvml_device(mb_cuda_nvml_t *n, const char *pci_bus_id) {
  nvml_dev_t d = NULL;
  if (!n || n->by_pci(pci_bus_id, &d) != 0) return NULL;
  return d;
}

static uint32_t throttle_bits(unsigned long long r) {
  uint32_t t = 0;
  if (r & (NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_POWER_BRAKE))
    t |= MB_THROTTLE_POWER;
  if (r & (NVML_REASON_SW_THERMAL | NVML_REASON_HW_THERMAL))
    t |= MB_THROTTLE_THERMAL;
  if (r & NVML_REASON_HW_SLOWDOWN) t |= MB_THROTTLE_HW;
  if (r & (NVML_REASON_SYNC_BOOST | NVML_REASON_DISPLAY_CLOCK))
    t |= MB_THROTTLE_OTHER;
  return t;
}

void mb__cuda_nvml_read(mb_cuda_nvml_t *n, void *dev, mb_telemetry_t *out) {
  out->sm_clock_hz = out->mem_clock_hz = out->power_w = out->temp_c = NAN;
  out->throttle = 0;
  if (!n || !dev) return;
  nvml_dev_t d = dev;
  unsigned v;
  unsigned long long r;
  if (n->clock && n->clock(d, NVML_CLOCK_SM, &v) == 0)
    out->sm_clock_hz = v * 1e6;
  if (n->clock && n->clock(d, NVML_CLOCK_MEM, &v) == 0)
    out->mem_clock_hz = v * 1e6;
  if (n->power && n->power(d, &v) == 0) out->power_w = v * 1e-3;
  if (n->temperature && n->temperature(d, NVML_TEMPERATURE_GPU, &v) == 0)
    out->temp_c = v;
  if (n->reasons && n->reasons(d, &r) == 0) out->throttle = throttle_bits(r);
}

/* ---- links ----------------------------------------------------------------
 * PCIe: the maximum generation and width "possible with this device and
 * system" (a Gen5 GPU in a Gen4 slot says 4) are the link's figure; the
 * current ones are recorded beside them, since an idle GPU trains its link
 * down (Gen1) and back up under load. */

int mb__cuda_nvml_pcie(const mb_cuda_nvml_t *n, void *dev,
                       mb_cuda_pcie_t *out) {
  *out = (mb_cuda_pcie_t){0, 0, 0, 0};
  if (!n || !dev || !n->pcie_max_gen || !n->pcie_max_width) return -1;
  nvml_dev_t d = dev;
  if (n->pcie_max_gen(d, &out->max_gen) != 0 ||
      n->pcie_max_width(d, &out->max_width) != 0)
    return -1;
  if (n->pcie_gen && n->pcie_gen(d, &out->gen) != 0) out->gen = 0;
  if (n->pcie_width && n->pcie_width(d, &out->width) != 0) out->width = 0;
  return 0;
}

/* NVLinks: every active link whose far end is the peer GPU (its PCI
 * domain, bus, device), or an NVSwitch (through which each link reaches
 * every GPU of the fabric). A link whose far end NVML cannot name makes
 * the count unknown (-1), as does an NVML without the NVLink calls. */
int mb__cuda_nvml_nvlinks(const mb_cuda_nvml_t *n, void *dev, unsigned domain,
                          unsigned bus, unsigned device, int *via_switch) {
  *via_switch = 0;
  if (!n || !dev || !n->nvlink_state || !n->nvlink_remote_pci) return -1;
  nvml_dev_t d = dev;
  int links = 0;
  for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
    int active = 0;
    /* an error: no such link on this GPU, or none at all */
    if (n->nvlink_state(d, l, &active) != 0 || active != NVML_FEATURE_ENABLED)
      continue;
    int type = -1;
    if (n->nvlink_remote_type && n->nvlink_remote_type(d, l, &type) != 0)
      type = -1;
    if (type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
      *via_switch = 1;
      links++;
      continue;
    }
    nvml_pci_t pci;
    memset(&pci, 0, sizeof pci);
    if (n->nvlink_remote_pci(d, l, &pci) != 0) return -1;
    const int peer =
        pci.domain == domain && pci.bus == bus && pci.device == device;
    if (peer)
      links++;
    else if (type < 0)
      return -1; /* another GPU, or a switch NVML did not say was one */
  }
  return links;
}
