/* Link rates (gpu_link_rates.h): the PCIe and NVLink tables. */
#include "gpu_link_rates.h"

#include <math.h>
#include <stdio.h>

/* PCIe per generation: transfer rate per lane and the share of the bits
 * that carry data (PCI-SIG base specifications 1.0a to 6.0). */
static const struct {
  unsigned gen;
  double gt_s;          /* giga-transfers (bits) per second per lane */
  unsigned data, coded; /* data bits per coded bits, or bytes per flit */
  const char *encoding;
} k_pcie[] = {
    {1, 2.5, 8, 10, "8b/10b"},
    {2, 5.0, 8, 10, "8b/10b"},
    {3, 8.0, 128, 130, "128b/130b"},
    {4, 16.0, 128, 130, "128b/130b"},
    {5, 32.0, 128, 130, "128b/130b"},
    {6, 64.0, 242, 256, "PAM4, FLIT 242B/256B"},
};

static int pcie_row(unsigned gen) {
  for (size_t i = 0; i < sizeof k_pcie / sizeof k_pcie[0]; i++)
    if (k_pcie[i].gen == gen) return (int)i;
  return -1;
}

double mb__pcie_lane_gbps(unsigned gen) {
  const int i = pcie_row(gen);
  return i < 0 ? 0.0 : k_pcie[i].gt_s * k_pcie[i].data / k_pcie[i].coded / 8.0;
}

unsigned mb__pcie_gen_of_rate(double gt_s) {
  for (size_t i = 0; i < sizeof k_pcie / sizeof k_pcie[0]; i++)
    if (fabs(gt_s - k_pcie[i].gt_s) <= 0.01 * k_pcie[i].gt_s)
      return k_pcie[i].gen;
  return 0;
}

double mb__pcie_gbps(unsigned gen, unsigned width) {
  return width ? mb__pcie_lane_gbps(gen) * width : 0.0;
}

int mb__pcie_describe(unsigned gen, unsigned width, char *buf, size_t cap) {
  const int i = pcie_row(gen);
  if (i < 0 || !width) return snprintf(buf, cap, "%s", "");
  return snprintf(buf, cap, "PCIe %u.0 x%u (%g GT/s, %s): %.1f GB/s", gen,
                  width, k_pcie[i].gt_s, k_pcie[i].encoding,
                  mb__pcie_gbps(gen, width));
}

/* NVLink per GPU generation (NVIDIA's P100, V100, A100, H100 and B200
 * datasheets: their total bidirectional NVLink bandwidth over their link
 * count, halved for one direction). Data-centre parts only: minor -1
 * takes every minor of the major; 8.6's NVLink bridge (RTX 3090) has
 * other links, so 8.6 is not 8.0 and stays unknown. */
static const struct {
  int major, minor;
  unsigned gen;
  double gbps; /* one link, one direction */
} k_nvlink[] = {
    {6, 0, 1, 20.0},   /* P100: 4 links, 160 GB/s */
    {7, 0, 2, 25.0},   /* V100: 6 links, 300 GB/s */
    {8, 0, 3, 25.0},   /* A100: 12 links, 600 GB/s */
    {9, 0, 4, 25.0},   /* H100: 18 links, 900 GB/s */
    {10, -1, 5, 50.0}, /* B200, B300: 18 links, 1.8 TB/s */
};

double mb__nvlink_gbps(int cc_major, int cc_minor, unsigned *gen) {
  for (size_t i = 0; i < sizeof k_nvlink / sizeof k_nvlink[0]; i++)
    if (k_nvlink[i].major == cc_major &&
        (k_nvlink[i].minor < 0 || k_nvlink[i].minor == cc_minor)) {
      if (gen) *gen = k_nvlink[i].gen;
      return k_nvlink[i].gbps;
    }
  if (gen) *gen = 0;
  return 0.0;
}
