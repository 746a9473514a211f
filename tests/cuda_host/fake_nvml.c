/* A stand-in for libnvidia-ml: the nvml* entry points cuda_nvml.c calls,
 * with NVML's names and C ABI (nvml.h), answering for two GPUs with fixed,
 * recognisable values. One source, built as several shared libraries by
 * compile definitions:
 *   FAKE_SWITCH     every one of GPU 0's 18 NVLinks is active and goes to
 *                   an NVSwitch (a DGX/HGX H100); else links 0-3 go to GPU 1
 *                   and links 4-5 to a third GPU (bus 0x3b), the rest are
 *                   inactive
 *   FAKE_NO_TYPE    no nvmlDeviceGetNvLinkRemoteDeviceType (older NVML)
 *   FAKE_NO_NVLINK  no NVLink calls at all
 * GPU 0 is PCI 0000:18:00.0, its link at most PCIe 5.0 x16, now 1.0 x16
 * (idle); GPU 1 is 0000:2a:00.0, at most and now 4.0 x8. */
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6 };

typedef struct {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} pci_t;

/* The handles are pointers to these. */
static const int k_gpu[2] = {0, 1};

static int gpu(const void *h) {
  return h == &k_gpu[0] ? 0 : h == &k_gpu[1] ? 1 : -1;
}

EXPORT int nvmlInit_v2(void) {
  return OK;
}

EXPORT int nvmlShutdown(void) {
  return OK;
}

EXPORT int nvmlSystemGetDriverVersion(char *buf, unsigned len) {
  strncpy(buf, "580.0-fake", len);
  return OK;
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, const void **h) {
  if (!strcmp(bus, "0000:18:00.0"))
    *h = &k_gpu[0];
  else if (!strcmp(bus, "0000:2a:00.0"))
    *h = &k_gpu[1];
  else
    return NOT_FOUND;
  return OK;
}

EXPORT int nvmlDeviceGetMaxPcieLinkGeneration(const void *h, unsigned *v) {
  if (gpu(h) < 0) return INVALID_ARGUMENT;
  *v = gpu(h) == 0 ? 5 : 4;
  return OK;
}

EXPORT int nvmlDeviceGetMaxPcieLinkWidth(const void *h, unsigned *v) {
  if (gpu(h) < 0) return INVALID_ARGUMENT;
  *v = gpu(h) == 0 ? 16 : 8;
  return OK;
}

EXPORT int nvmlDeviceGetCurrPcieLinkGeneration(const void *h, unsigned *v) {
  if (gpu(h) < 0) return INVALID_ARGUMENT;
  *v = gpu(h) == 0 ? 1 : 4;
  return OK;
}

EXPORT int nvmlDeviceGetCurrPcieLinkWidth(const void *h, unsigned *v) {
  if (gpu(h) < 0) return INVALID_ARGUMENT;
  *v = gpu(h) == 0 ? 16 : 8;
  return OK;
}

#ifndef FAKE_NO_NVLINK
/* GPU 0's links; GPU 1 reports none (NOT_SUPPORTED, as a GPU without
 * NVLink does). */
EXPORT int nvmlDeviceGetNvLinkState(const void *h, unsigned link, int *on) {
  if (gpu(h) != 0) return NOT_SUPPORTED;
  if (link >= 18) return INVALID_ARGUMENT;
#ifdef FAKE_SWITCH
  *on = 1;
#else
  *on = link < 6;
#endif
  return OK;
}

EXPORT int nvmlDeviceGetNvLinkRemotePciInfo_v2(const void *h, unsigned link,
                                               pci_t *pci) {
  if (gpu(h) != 0 || link >= 18) return INVALID_ARGUMENT;
  memset(pci, 0, sizeof *pci);
#ifdef FAKE_SWITCH
  pci->bus = 0x80; /* the switch */
#else
  pci->bus = link < 4 ? 0x2a : 0x3b;
#endif
  return OK;
}

#ifndef FAKE_NO_TYPE
EXPORT int nvmlDeviceGetNvLinkRemoteDeviceType(const void *h, unsigned link,
                                               int *type) {
  if (gpu(h) != 0 || link >= 18) return INVALID_ARGUMENT;
#ifdef FAKE_SWITCH
  *type = 2; /* NVML_NVLINK_DEVICE_TYPE_SWITCH */
#else
  *type = 0; /* NVML_NVLINK_DEVICE_TYPE_GPU */
#endif
  return OK;
}
#endif
#endif
