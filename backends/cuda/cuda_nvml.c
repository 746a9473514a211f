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
  char driver[96];
};

/* dlsym into a typed function pointer without a cast between object and
 * function pointers (ISO C forbids it; POSIX guarantees the copy works). */
static int sym(void *lib, const char *name, void *fn) {
  void *p = dlsym(lib, name);
  if (p) memcpy(fn, &p, sizeof p);
  return p != NULL;
}

mb_cuda_nvml_t *mb__cuda_nvml_open(const mb_host_api_t *host) {
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
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
