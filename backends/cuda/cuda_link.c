/* CUDA backend — the links a transfer crosses, read through NVML (the
 * vendor table's link hook, gpu_host.h): the host link is PCIe at the
 * generation and width NVML gives as this GPU's and slot's maximum; the
 * direct link to a peer is its NVLinks (directly, or through an NVSwitch)
 * at the per-link rate of the GPU's NVLink generation (gpu_link_rates.h).
 * Whatever NVML cannot read is "unknown", said with the reason. */
#include <stdio.h>

#include "cuda_internal.h"
#include "gpu_link_rates.h"

static const mb_cuda_state_t *cuda_of(const mb_gpuh_state_t *st) {
  return (const mb_cuda_state_t *)(const void *)st;
}

static const mb_cuda_device_t *cdev_of(const mb_gpuh_device_t *d) {
  return (const mb_cuda_device_t *)(const void *)d;
}

/* 1 when NVML can answer for d; otherwise says why into what. */
static int nvml_ready(const mb_cuda_state_t *c, const mb_cuda_device_t *d,
                      char *what, size_t cap) {
  if (c->nvml && d->nvml_dev) return 1;
  snprintf(what, cap, "unknown: %s",
           c->nvml ? "NVML has no handle for this GPU" : "NVML is not loaded");
  return 0;
}

static double host_link(const mb_cuda_state_t *c, const mb_cuda_device_t *d,
                        char *what, size_t cap) {
  mb_cuda_pcie_t p;
  if (!nvml_ready(c, d, what, cap)) return -1;
  if (mb__cuda_nvml_pcie(c->nvml, d->nvml_dev, &p) != 0) {
    snprintf(what, cap, "unknown: NVML cannot read the PCIe link");
    return -1;
  }
  const double gbps = mb__pcie_gbps(p.max_gen, p.max_width);
  if (!(gbps > 0)) {
    snprintf(what, cap,
             "unknown: NVML reports PCIe generation %u x%u, which the rate "
             "table lacks",
             p.max_gen, p.max_width);
    return -1;
  }
  char link[128];
  mb__pcie_describe(p.max_gen, p.max_width, link, sizeof link);
  snprintf(what, cap,
           "%s (NVML: the most this GPU and slot allow; now gen %u x%u)", link,
           p.gen, p.width);
  return gbps;
}

static double direct_link(const mb_cuda_state_t *c, const mb_cuda_device_t *d,
                          const mb_cuda_device_t *peer, char *what,
                          size_t cap) {
  if (!nvml_ready(c, d, what, cap)) return -1;
  if (!peer->pci_known) {
    snprintf(what, cap, "unknown: the peer's PCI address is unknown");
    return -1;
  }
  int via_switch = 0;
  const int links =
      mb__cuda_nvml_nvlinks(c->nvml, d->nvml_dev, peer->pci_domain,
                            peer->pci_bus, peer->pci_device, &via_switch);
  if (links < 0) {
    snprintf(what, cap, "unknown: NVML cannot say where the NVLinks go");
    return -1;
  }
  if (links == 0) {
    snprintf(what, cap, "none: no NVLink between devices %d and %d",
             d->base.ordinal, peer->base.ordinal);
    return 0;
  }
  unsigned gen = 0;
  const double per = mb__nvlink_gbps(d->cc_major, d->cc_minor, &gen);
  if (!(per > 0)) {
    snprintf(what, cap,
             "unknown: %d NVLinks, but the per-link rate of %s is not in "
             "the table",
             links, d->arch);
    return -1;
  }
  snprintf(what, cap, "NVLink %u: %d links x %g GB/s%s (NVML)", gen, links, per,
           via_switch ? " through NVSwitch" : " direct");
  return links * per;
}

double mb__cuda_link(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                     mb_gpuh_device_t *peer, char *what, size_t cap) {
  return peer ? direct_link(cuda_of(st), cdev_of(d), cdev_of(peer), what, cap)
              : host_link(cuda_of(st), cdev_of(d), what, cap);
}
