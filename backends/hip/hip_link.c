/* HIP backend — the links a transfer crosses, read through rocm-smi (the
 * vendor table's link hook, gpu_host.h): the host link is PCIe at the
 * fastest of the link's DPM levels, its rate mapped to a generation and
 * the rate table's figure (gpu_link_rates.h); the direct link to a peer is
 * xGMI at rocm-smi's own maximum bandwidth for that io link, which comes
 * from the driver's topology, not from a table of ours (whether it counts
 * one direction or both is rocm-smi's definition, unchecked on hardware
 * here). Whatever rocm-smi cannot read is "unknown", with the reason. */
#include <stdio.h>

#include "gpu_link_rates.h"
#include "hip_internal.h"

static const mb_hip_state_t *hip_of(const mb_gpuh_state_t *st) {
  return (const mb_hip_state_t *)(const void *)st;
}

static const mb_hip_device_t *hdev_of(const mb_gpuh_device_t *d) {
  return (const mb_hip_device_t *)(const void *)d;
}

static int smi_ready(const mb_hip_state_t *h, const mb_hip_device_t *d,
                     char *what, size_t cap) {
  if (h->smi && d->smi_index != UINT32_MAX) return 1;
  snprintf(what, cap, "unknown: %s",
           h->smi ? "rocm-smi does not know this GPU's PCI address"
                  : "rocm-smi is not loaded");
  return 0;
}

static double host_link(const mb_hip_state_t *h, const mb_hip_device_t *d,
                        char *what, size_t cap) {
  mb_hip_pcie_t p;
  if (!smi_ready(h, d, what, cap)) return -1;
  if (mb__hip_smi_pcie(h->smi, d->smi_index, &p) != 0) {
    snprintf(what, cap, "unknown: rocm-smi cannot read the PCIe link");
    return -1;
  }
  const unsigned gen = mb__pcie_gen_of_rate(p.max_gt_s);
  const double gbps = mb__pcie_gbps(gen, p.max_lanes);
  if (!(gbps > 0)) {
    snprintf(what, cap,
             "unknown: rocm-smi reports %g GT/s x%u, which the rate table "
             "lacks",
             p.max_gt_s, p.max_lanes);
    return -1;
  }
  char link[128];
  mb__pcie_describe(gen, p.max_lanes, link, sizeof link);
  snprintf(what, cap,
           "%s (rocm-smi: the link's fastest level; now %g GT/s x%u)", link,
           p.gt_s, p.lanes);
  return gbps;
}

static double direct_link(const mb_hip_state_t *h, const mb_hip_device_t *d,
                          const mb_hip_device_t *peer, char *what, size_t cap) {
  if (!smi_ready(h, d, what, cap) || !smi_ready(h, peer, what, cap)) return -1;
  double mbs = 0;
  unsigned hops = 0;
  const int x =
      mb__hip_smi_xgmi(h->smi, d->smi_index, peer->smi_index, &mbs, &hops);
  if (x == 0) {
    snprintf(what, cap, "none: rocm-smi says the devices are linked by PCIe");
    return 0;
  }
  if (x < 0) {
    snprintf(what, cap, "unknown: rocm-smi cannot read the io link");
    return -1;
  }
  snprintf(what, cap,
           "xGMI: %g GB/s, rocm-smi's maximum for this io link (%u hop%s)",
           mbs * 1e-3, hops, hops == 1 ? "" : "s");
  return mbs * 1e-3;
}

double mb__hip_link(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                    mb_gpuh_device_t *peer, char *what, size_t cap) {
  return peer ? direct_link(hip_of(st), hdev_of(d), hdev_of(peer), what, cap)
              : host_link(hip_of(st), hdev_of(d), what, cap);
}
