/* The datasheet bandwidth of the links a transfer crosses, from what a
 * vendor library reads (NVML, rocm-smi): PCIe by generation and width,
 * NVLink by the GPU's generation. Pure functions over one table each, so
 * they are tested alone (tests/test_gpu_link.c) and every backend uses the
 * same figures. GB/s are 1e9 bytes per second, one direction. */
#ifndef MB_GPU_LINK_RATES_H
#define MB_GPU_LINK_RATES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One PCIe lane of generation `gen` (1..6), one direction, after the line
 * encoding (8b/10b for 1 and 2, 128b/130b for 3 to 5, 6.0's FLIT with
 * 242 of 256 bytes carrying TLP data); 0 for a generation the table lacks.
 * Packet headers are not taken off: this is the link's figure, the roof a
 * transfer approaches, not what one reaches. */
double mb__pcie_lane_gbps(unsigned gen);
/* The generation whose lanes run at `gt_s` GT/s (2.5 -> 1 ... 64 -> 6,
 * within 1 %); 0 for any other rate. rocm-smi gives rates, not
 * generations. */
unsigned mb__pcie_gen_of_rate(double gt_s);
/* x`width` lanes of generation `gen`; 0 when either is unknown (0). */
double mb__pcie_gbps(unsigned gen, unsigned width);
/* "PCIe 4.0 x16 (16 GT/s, 128b/130b): 31.5 GB/s"; "" when unknown.
 * Returns what snprintf returns. */
int mb__pcie_describe(unsigned gen, unsigned width, char *buf, size_t cap);

/* One NVLink of the generation a GPU of compute capability
 * cc_major.cc_minor carries (6.0: NVLink 1, 20 GB/s; 7.0, 8.0, 9.0:
 * NVLink 2, 3, 4, 25 GB/s; 10.x: NVLink 5, 50 GB/s), one direction; 0
 * otherwise. *gen gets the NVLink generation (0 unknown). By architecture,
 * not by NVML's link version: NVML reports version 5.0 on some H100s,
 * whose links are NVLink 4. */
double mb__nvlink_gbps(int cc_major, int cc_minor, unsigned *gen);

#ifdef __cplusplus
}
#endif
#endif
