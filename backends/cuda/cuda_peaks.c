/* CUDA backend — peak FLOP/s and memory bandwidth per device.
 *
 * Known GPUs come from a table of NVIDIA's published dense (no sparsity)
 * figures, matched by name and SM count (the same name covers several
 * boards: H100 SXM has 132 SMs, H100 PCIe 114). Anything else is estimated
 * as SMs x peak clock x the architecture's dense FLOP per clock per SM, and
 * memory bandwidth as memory clock x 2 (double data rate) x bus width; the
 * device's peak_source says which, so an estimate is never mistaken for a
 * datasheet figure. */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

#define T 1e12

/* name: a substring of the device name; sms: 0 matches any count; min_mem:
 * the smallest memory (GiB) of this row (A100 40 GB and 80 GB differ). */
typedef struct peak_row {
  const char *name;
  int sms;
  double min_mem_gib;
  const char *board;
  double bf16, fp8, int8, tf32, fp32, bw;
} peak_row_t;

/* Specific rows first: the first match wins. */
static const peak_row_t k_table[] = {
    {"B200", 0, 0, "B200", 2250 * T, 4500 * T, 4500 * T, 1100 * T, 75 * T,
     8.0e12},
    {"H200 NVL", 0, 0, "H200 NVL", 835 * T, 1671 * T, 1671 * T, 418 * T, 60 * T,
     4.8e12},
    {"H200", 0, 0, "H200 SXM", 989 * T, 1979 * T, 1979 * T, 495 * T, 67 * T,
     4.8e12},
    {"H100 NVL", 0, 0, "H100 NVL", 835 * T, 1671 * T, 1671 * T, 418 * T, 60 * T,
     3.9e12},
    {"H100", 114, 0, "H100 PCIe", 756 * T, 1513 * T, 1513 * T, 378 * T, 51 * T,
     2.0e12},
    {"H100", 132, 0, "H100 SXM", 989 * T, 1979 * T, 1979 * T, 495 * T, 67 * T,
     3.35e12},
    {"A100", 108, 60, "A100 SXM 80 GB", 312 * T, 0, 624 * T, 156 * T, 19.5 * T,
     2.0e12},
    {"A100", 108, 0, "A100 40 GB", 312 * T, 0, 624 * T, 156 * T, 19.5 * T,
     1.555e12},
};

/* Dense FLOP (or integer ops) per clock per SM by architecture, from the
 * datasheets above divided by SMs x boost clock. fp8 0: no fp8 units. */
typedef struct arch_rate {
  int cc; /* major * 10 + minor: the row applies from here up */
  double bf16, fp8, int8, tf32, fp32;
} arch_rate_t;

static const arch_rate_t k_rates[] = {
    {75, 512, 0, 1024, 0, 128},           /* Turing (f16 only; bf16 as f16) */
    {80, 2048, 0, 4096, 1024, 128},       /* A100 */
    {86, 1024, 0, 2048, 512, 256},        /* GA10x */
    {89, 1024, 2048, 2048, 512, 256},     /* Ada */
    {90, 4096, 8192, 8192, 2048, 256},    /* Hopper */
    {100, 8192, 16384, 16384, 4096, 256}, /* Blackwell datacenter */
    {120, 1024, 2048, 2048, 512, 256},    /* Blackwell consumer */
};

static void set_peaks(mb_cuda_device_t *d, double bf16, double fp8, double int8,
                      double tf32, double fp32) {
  d->peak[MB_DTYPE_BF16] = d->peak[MB_DTYPE_F16] = bf16;
  d->peak[MB_DTYPE_F8E4M3] = d->peak[MB_DTYPE_F8E5M2] = fp8;
  d->peak[MB_DTYPE_I8] = int8;
  d->peak[MB_DTYPE_F32] = fp32;
  d->peak_tf32 = tf32;
}

static int from_table(mb_cuda_device_t *d) {
  const double gib = (double)d->base.memory_bytes / (1024.0 * 1024.0 * 1024.0);
  for (size_t i = 0; i < sizeof k_table / sizeof k_table[0]; i++) {
    const peak_row_t *r = &k_table[i];
    if (!strstr(d->base.name, r->name) ||
        (r->sms && r->sms != d->base.sm_count) || gib < r->min_mem_gib)
      continue;
    set_peaks(d, r->bf16, r->fp8, r->int8, r->tf32, r->fp32);
    d->base.mem_bw = r->bw;
    snprintf(d->peak_source, sizeof d->peak_source,
             "table: %s, NVIDIA datasheet, dense", r->board);
    return 1;
  }
  return 0;
}

static void estimate(mb_cuda_device_t *d) {
  const int cc = d->cc_major * 10 + d->cc_minor;
  const arch_rate_t *a = &k_rates[0];
  for (size_t i = 0; i < sizeof k_rates / sizeof k_rates[0]; i++)
    if (k_rates[i].cc <= cc) a = &k_rates[i];
  const double per_clock = (double)d->base.sm_count * d->base.clock_hz;
  set_peaks(d, a->bf16 * per_clock, a->fp8 * per_clock, a->int8 * per_clock,
            a->tf32 * per_clock, a->fp32 * per_clock);
  d->base.mem_bw = d->mem_clock_hz * 2.0 * d->bus_width_bits / 8.0;
  snprintf(d->peak_source, sizeof d->peak_source,
           "estimated (GPU not in the table): %d SMs x %.0f MHz x the "
           "sm_%d rate per SM (bf16 %.0f FLOP/clk); bandwidth from memory "
           "clock x bus width",
           d->base.sm_count, d->base.clock_hz * 1e-6, a->cc, a->bf16);
}

void mb__cuda_peaks(mb_cuda_device_t *d) {
  if (!from_table(d)) estimate(d);
}

static int is_fp8(mb_dtype_t t) {
  return t == MB_DTYPE_F8E4M3 || t == MB_DTYPE_F8E5M2;
}

double mb__cuda_peak_for(const mb_cuda_device_t *d, const char *op,
                         const mb_op_params_t *p) {
  if (!op || strcmp(op, "gemm") != 0) return d->peak[MB_DTYPE_F32];
  mb_dtype_t a = (p->flags & MB_PARAM_QUANTIZE_INPUTS) ? p->dtype_q : p->dtype;
  if (a == MB_DTYPE_F32)
    return (p->flags & MB_PARAM_TF32) ? d->peak_tf32 : d->peak[MB_DTYPE_F32];
  if (is_fp8(a) || is_fp8(p->dtype_b)) return d->peak[MB_DTYPE_F8E4M3];
  if (a == MB_DTYPE_I8) return d->peak[MB_DTYPE_I8];
  /* bf16/f16, and weight-only int4 (dequantized to the activation type) */
  return d->peak[MB_DTYPE_BF16];
}
