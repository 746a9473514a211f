/* HIP backend — peak FLOP/s, memory bandwidth and last-level cache per
 * device.
 *
 * Known GPUs come from a table of AMD's published dense (no sparsity)
 * figures, matched by name and compute-unit count, or by processor and CU
 * count when the runtime's name names no board (containers, VFs). An MI250X
 * or MI250 board is two GCDs, each its own HIP device: the datasheet gives
 * the board, so a device gets half. Anything else is estimated as CUs x peak
 * engine clock x the processor's dense FLOP per clock per CU (rates derived
 * from the datasheet rows: peak / (CUs x peak clock)) and bandwidth as
 * memory clock x 2 x bus width; such a device is flagged `estimated` and
 * its peak_source says what was multiplied, so an estimate is never taken
 * for a datasheet figure.
 *
 * Sources (each row and rate cites its own):
 *  [R3] ROCm docs, "AMD Instinct MI300 series microarchitecture"
 *       (ROCm/ROCm docs/conceptual/gpu-arch/mi300.md): MI300X per-CU rates
 *       and peaks, 5.3 TB/s.
 *  [R2] ROCm docs, "AMD Instinct MI250 microarchitecture" (mi250.md): MI250
 *       rates and peaks, 1.7 GHz, 3.2 TB/s per board = 1.6 per GCD.
 *  [R1] ROCm docs, "AMD Instinct MI100 microarchitecture" (mi100.md): MI100
 *       rates and peaks, 1.228 TB/s.
 *  [RS] ROCm docs, "GPU hardware specifications" (reference/gpu-arch-specs):
 *       CU counts, L2 (8 MiB per GCD on MI200, 8 MiB on MI100) and the
 *       256 MiB Infinity Cache (L3) of MI300X/MI325X/MI300A/MI350X/MI355X.
 *  [LN] AMD lab notes "AMD matrix cores" (amd/amd-lab-notes
 *       matrix-cores/README.md): MI100 and MI250X FLOP/clock/CU.
 *  [WP] AMD's CDNA 2/3/4 white-paper product tables as transcribed in IREE
 *       (iree-org/iree .../GPU/TargetUtils/KnownTargets.cpp): MI250X 383.0 /
 *       95.7 / 3.2 TB/s, MI250, MI210 181.0 / 45.3 / 1.6 TB/s, MI300A 980.6
 *       / 1961.2 / 122.6, MI325X as MI300X, MI355X 2500 / 5000 / 157.3, RDNA 4
 *       product pages (RX 9070 XT 195 / 389 / 48.7).
 *  [DS] AMD's figures as reprinted at launch: the MI210 article of AnandTech
 *       (MI210/MI250/MI100/MI50 clocks, FP32 vector, INT8, bandwidth), the
 *       MI250X launch table (220 CUs, 47.9 / 95.7 / 383.0, 3.2 TB/s), the
 *       MI300A datasheet (228 CUs, 2100 MHz, 980.6 / 122.6), MI325X launch
 *       (304 CUs, 2100 MHz, 256 GB HBM3E, 6 TB/s, compute as MI300X).
 *  [G4] GPUOpen "Using the Matrix Cores of AMD RDNA 4 architecture GPUs":
 *       FP16/BF16/I8 FLOP/clock/CU of RDNA 2, 3 and 4. */
#include <stdio.h>
#include <string.h>

#include "hip_internal.h"

#define T 1e12
#define MIB ((size_t)1 << 20)

/* One board as AMD publishes it. name: a substring of the runtime's device
 * name; arch and cus must match too (cus per HIP device, i.e. per GCD);
 * min_mem_gib: the smallest memory of this row (MI325X vs MI300X). The
 * figures are the board's; gcds > 1 divides them among its devices. llc:
 * per device. */
typedef struct peak_row {
  const char *name;
  const char *arch;
  int cus;
  double min_mem_gib;
  const char *board;
  int gcds;
  double bf16, f16, fp8, int8, xf32, fp32, vec32, bw;
  size_t llc;
} peak_row_t;

/* Specific rows first: the first match wins. 0: no such math. */
static const peak_row_t k_table[] = {
    /* [WP][DS] MI325X: MI300X's compute, HBM3E 6 TB/s, 256 GB */
    {"MI325X", "gfx942", 304, 224, "MI325X", 1, 1307.4 * T, 1307.4 * T,
     2614.9 * T, 2614.9 * T, 653.7 * T, 163.4 * T, 163.4 * T, 6.0e12,
     256 * MIB},
    /* [R3] MI300X: 304 CUs x 2100 MHz; TF32 is the "Vector TF32" row */
    {"MI300X", "gfx942", 304, 0, "MI300X", 1, 1307.4 * T, 1307.4 * T,
     2614.9 * T, 2614.9 * T, 653.7 * T, 163.4 * T, 163.4 * T, 5.3e12,
     256 * MIB},
    /* [WP][DS] MI300A: 228 CUs x 2100 MHz at MI300X's per-CU rates (xf32
     * 1024 FLOP/clk/CU [R3]: 490.3) */
    {"MI300A", "gfx942", 228, 0, "MI300A", 1, 980.6 * T, 980.6 * T, 1961.2 * T,
     1961.2 * T, 490.3 * T, 122.6 * T, 122.6 * T, 5.3e12, 256 * MIB},
    /* [DS][WP] MI210: 104 CUs x 1700 MHz, HBM2e 1.6 TB/s, L2 8 MiB [RS] */
    {"MI210", "gfx90a", 104, 0, "MI210", 1, 181.0 * T, 181.0 * T, 0, 181.0 * T,
     0, 45.3 * T, 22.6 * T, 1.6e12, 8 * MIB},
    /* [WP][LN] MI250X board: 2 x 110 CUs x 1700 MHz, 3.2 TB/s, 128 GB */
    {"MI250X", "gfx90a", 110, 0, "MI250X", 2, 383.0 * T, 383.0 * T, 0,
     383.0 * T, 0, 95.7 * T, 47.9 * T, 3.2e12, 8 * MIB},
    /* [R2] MI250 board: 2 x 104 CUs x 1700 MHz, 3.2 TB/s. The runtime may
     * name either board "MI250X/MI250": the CU count tells them apart. */
    {"MI250", "gfx90a", 104, 0, "MI250", 2, 362.1 * T, 362.1 * T, 0, 362.1 * T,
     0, 90.5 * T, 45.3 * T, 3.2e12, 8 * MIB},
    /* [R1][DS] MI100: 120 CUs x 1502 MHz; bf16 runs at half the f16 rate */
    {"MI100", "gfx908", 120, 0, "MI100", 1, 92.3 * T, 184.6 * T, 0, 184.6 * T,
     0, 46.1 * T, 23.1 * T, 1.228e12, 8 * MIB},
};

/* Dense FLOP (or integer ops) per clock per CU by processor, from the rows
 * above (peak / (CUs x peak clock)) and the sources named. prefix matches
 * the start of arch_base. vec32: f32 on the vector ALUs (AMD's figure,
 * with packed/dual-issue f32 where AMD counts it); fp32: f32 GEMM (MFMA
 * where there is one, else the vector rate). 0: no such math (or none
 * published). llc: the processor's last-level cache when every product of
 * it has the same (Infinity Cache on gfx94x/gfx950), else 0 (the L2). */
typedef struct arch_rate {
  const char *prefix;
  const char *what;
  double bf16, f16, fp8, int8, xf32, fp32, vec32;
  size_t llc;
} arch_rate_t;

static const arch_rate_t k_rates[] = {
    /* [LN][R1] MI100 */
    {"gfx908", "gfx908", 512, 1024, 0, 1024, 0, 256, 128, 0},
    /* [LN][R2] MI200 */
    {"gfx90a", "gfx90a", 1024, 1024, 0, 1024, 0, 256, 128, 0},
    /* [R3] MI300 (gfx942; gfx940/gfx941: MI300 targets of early ROCm) */
    {"gfx94", "gfx94x", 2048, 2048, 4096, 4096, 1024, 256, 256, 256 * MIB},
    /* [WP] MI355X: 256 CUs x 2400 MHz: 2500 TF f16 / 614.4e9 = 4069 ~ 4096
     * (AMD rounds to 2.5 PF); 5000 fp8/int8 -> 8192; 157.3 f32 -> 256. No
     * xf32 figure published: 0. */
    {"gfx950", "gfx950", 4096, 4096, 8192, 8192, 0, 256, 256, 256 * MIB},
    /* [DS] MI50/MI60 (Vega 20): packed f16 26.5 TF / (60 x 1725 MHz) = 256,
     * f32 128; no bf16, no int8 published */
    {"gfx906", "gfx906", 0, 256, 0, 0, 0, 128, 128, 0},
    /* [G4] RDNA 1 assumed like RDNA 2 for f16/f32; RDNA 1's first chip has
     * no int8 dot instructions, so no int8 figure */
    {"gfx101", "RDNA 1 (gfx101x)", 0, 256, 0, 0, 0, 128, 128, 0},
    /* [G4] RDNA 2 (RX 6950 XT): f16 256, bf16 N/A, i8 512; f32 128 */
    {"gfx103", "RDNA 2 (gfx103x)", 0, 256, 0, 512, 0, 128, 128, 0},
    /* [G4] RDNA 3 / 3.5 WMMA (RX 7900 XTX): f16 = bf16 = i8 = 512; f32 256
     * assumed as on RDNA 4 (dual issue, as AMD counts it) */
    {"gfx11", "RDNA 3 (gfx11xx)", 512, 512, 0, 512, 0, 256, 256, 0},
    /* [G4][WP] RDNA 4 (RX 9070 XT, 64 CUs x 2970 MHz): f16/bf16 1024, i8
     * and (OCP) fp8 2048, f32 256. gfx1250 is not RDNA 4: prefix gfx120. */
    {"gfx120", "RDNA 4 (gfx120x)", 1024, 1024, 2048, 2048, 0, 256, 256, 0},
};

/* An unknown processor: the smallest rate any processor above has for each
 * math it has at all (packed f16 of GCN 5 / RDNA 1-2, one f32 FMA per lane
 * per clock), and none it might lack (fp8, xf32). */
static const arch_rate_t k_conservative = {
    .prefix = "",
    .what = "the most conservative rate in the table",
    .bf16 = 256,
    .f16 = 256,
    .int8 = 256,
    .fp32 = 128,
    .vec32 = 128};

static const arch_rate_t *rate_for(const char *arch) {
  for (size_t i = 0; i < sizeof k_rates / sizeof k_rates[0]; i++)
    if (arch[0] &&
        strncmp(arch, k_rates[i].prefix, strlen(k_rates[i].prefix)) == 0)
      return &k_rates[i];
  return NULL;
}

static void set_peaks(mb_hip_device_t *d, double bf16, double f16, double fp8,
                      double int8, double xf32, double fp32, double vec32) {
  memset(d->peak, 0, sizeof d->peak);
  d->peak[MB_DTYPE_BF16] = bf16;
  d->peak[MB_DTYPE_F16] = f16;
  d->peak[MB_DTYPE_F8E4M3] = d->peak[MB_DTYPE_F8E5M2] = fp8;
  d->peak[MB_DTYPE_I8] = int8;
  d->peak[MB_DTYPE_F32] = fp32;
  d->peak_xf32 = xf32;
  d->peak_vec_f32 = vec32;
}

static int row_matches(const mb_hip_device_t *d, const peak_row_t *r,
                       int by_name) {
  const double gib = (double)d->base.memory_bytes / (1024.0 * 1024.0 * 1024.0);
  if (r->cus != d->base.sm_count || gib < r->min_mem_gib) return 0;
  if (by_name)
    return strstr(d->base.name, r->name) &&
           (!d->arch_base[0] || strcmp(d->arch_base, r->arch) == 0);
  return strcmp(d->arch_base, r->arch) == 0;
}

/* By name first; then, for a name that names no board, by processor, CU
 * count and memory alone. */
static const peak_row_t *find_row(const mb_hip_device_t *d, int *by_name) {
  const size_t n = sizeof k_table / sizeof k_table[0];
  for (*by_name = 1; *by_name >= 0; (*by_name)--)
    for (size_t i = 0; i < n; i++)
      if (row_matches(d, &k_table[i], *by_name)) return &k_table[i];
  return NULL;
}

static int from_table(mb_hip_device_t *d) {
  int by_name;
  const peak_row_t *r = find_row(d, &by_name);
  if (!r) return 0;
  const double g = r->gcds;
  set_peaks(d, r->bf16 / g, r->f16 / g, r->fp8 / g, r->int8 / g, r->xf32 / g,
            r->fp32 / g, r->vec32 / g);
  d->base.mem_bw = r->bw / g;
  d->base.llc_bytes = r->llc;
  const char *how = by_name ? "" : " (by processor and CU count)";
  if (r->gcds > 1)
    snprintf(d->peak_source, sizeof d->peak_source,
             "table: %s%s, one of %d GCDs: half the board's AMD datasheet "
             "figures, dense",
             r->board, how, r->gcds);
  else
    snprintf(d->peak_source, sizeof d->peak_source,
             "table: %s%s, AMD datasheet figures, dense", r->board, how);
  return 1;
}

static void estimate(mb_hip_device_t *d) {
  const arch_rate_t *a = rate_for(d->arch_base);
  const arch_rate_t *r = a ? a : &k_conservative;
  const double per_clock = (double)d->base.sm_count * d->base.clock_hz;
  set_peaks(d, r->bf16 * per_clock, r->f16 * per_clock, r->fp8 * per_clock,
            r->int8 * per_clock, r->xf32 * per_clock, r->fp32 * per_clock,
            r->vec32 * per_clock);
  d->base.mem_bw = d->mclk_hz * 2.0 * d->bus_width_bits / 8.0;
  d->base.llc_bytes = r->llc ? r->llc : d->l2_bytes;
  d->estimated = 1;
  char rate[96];
  if (a)
    snprintf(rate, sizeof rate, "the %s rate", a->what);
  else
    snprintf(rate, sizeof rate, "%s (processor \"%s\" unknown)", r->what,
             d->arch_base);
  snprintf(d->peak_source, sizeof d->peak_source,
           "estimated (GPU not in the table): %d CUs x %.0f MHz x %s "
           "(bf16 %.0f FLOP/clk/CU); bandwidth: mclk x 2 x bus width",
           d->base.sm_count, d->base.clock_hz * 1e-6, rate, r->bf16);
}

/* gfx94x's matrix cores take the FNUZ fp8 encodings; gfx950 and RDNA 4
 * take OCP e4m3/e5m2, the ones our tensors hold. */
static int is_fnuz_arch(const char *arch) {
  return strcmp(arch, "gfx940") == 0 || strcmp(arch, "gfx941") == 0 ||
         strcmp(arch, "gfx942") == 0;
}

void mb__hip_peaks(mb_hip_device_t *d) {
  d->estimated = 0;
  d->fp8_fnuz = is_fnuz_arch(d->arch_base);
  if (!from_table(d)) estimate(d);
}

static int is_fp8(mb_dtype_t t) {
  return t == MB_DTYPE_F8E4M3 || t == MB_DTYPE_F8E5M2;
}

double mb__hip_peak_for(const mb_hip_device_t *d, const char *op,
                        const mb_op_params_t *p) {
  if (!op || !p || strcmp(op, "gemm") != 0) return d->peak_vec_f32;
  const mb_dtype_t a =
      (p->flags & MB_PARAM_QUANTIZE_INPUTS) ? p->dtype_q : p->dtype;
  if (a == MB_DTYPE_F32)
    return (p->flags & MB_PARAM_TF32) ? d->peak_xf32 : d->peak[MB_DTYPE_F32];
  /* (the op takes fp8 B only with fp8 A: a decides) */
  if (is_fp8(a)) return d->peak[MB_DTYPE_F8E4M3];
  if (a == MB_DTYPE_I8) return d->peak[MB_DTYPE_I8];
  /* f16 has its own rate on MI100; bf16, and weight-only int4 dequantized
   * to a bf16 activation, the bf16 one */
  if (a == MB_DTYPE_F16) return d->peak[MB_DTYPE_F16];
  return d->peak[MB_DTYPE_BF16];
}
