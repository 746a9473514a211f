/* CPU backend — AMX tile loops for the bf16 and int8 peaks.
 *
 * On a CPU with AMX (Sapphire Rapids and later) oneDNN's bf16 and int8
 * GEMMs run on the tile unit, several times faster than any vector loop:
 * measured with vdpbf16ps alone, the bf16 "peak" sat below the GEMMs that
 * use it, and %peak above 100. So where the CPU has the tiles and Linux
 * lends them to us (the tile data state is 8 KiB per thread, granted per
 * process through arch_prctl), the peak is also measured with tile
 * dot-products and cpu_peak.c keeps the faster loop.
 *
 * The loop: all eight tiles configured 16 rows x 64 bytes; two A tiles
 * (tmm4, tmm5) times two B tiles (tmm6, tmm7) into four accumulators
 * (tmm0-tmm3), four independent dot-products per iteration, enough to keep
 * the tile multiplier busy across its latency. Like the vector loops this
 * file is compiled optimised and uninstrumented (CMakeLists.txt). */
#include "cpu_peak_amx.h"

#include <stdio.h>
#include <string.h>

/* gcc 11 and clang 12 have the AMX intrinsics; Linux the permission. */
#if defined(__x86_64__) && defined(__linux__) &&      \
    ((defined(__clang__) && __clang_major__ >= 12) || \
     (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11))
#define MB_CPU_AMX 1
#include <cpuid.h>
#include <errno.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* CPUID.(EAX=7,ECX=0):EDX bits. */
enum {
  AMX_BF16_BIT = 1u << 22,
  AMX_TILE_BIT = 1u << 24,
  AMX_INT8_BIT = 1u << 25,
};
/* <asm/prctl.h> has these only from Linux 5.16 on. */
enum { ARCH_REQ_XCOMP_PERM_ = 0x1023, XFEATURE_XTILEDATA_ = 18 };

unsigned mb__cpu_amx_verdict(const mb_cpu_amx_probe_t *p, char *why,
                             size_t cap) {
  const unsigned features =
      ((p->leaf7_edx & AMX_BF16_BIT) ? MB_CPU_AMX_BF16 : 0u) |
      ((p->leaf7_edx & AMX_INT8_BIT) ? MB_CPU_AMX_INT8 : 0u);
  if (!p->built)
    snprintf(why, cap,
             "no AMX: built without AMX intrinsics (x86-64 Linux, "
             "gcc 11 or clang 12)");
  else if (!(p->leaf7_edx & AMX_TILE_BIT))
    snprintf(why, cap, "no AMX: the CPU has no AMX-TILE");
  else if (!features)
    snprintf(why, cap,
             "no AMX: the CPU has AMX-TILE without AMX-BF16 or "
             "AMX-INT8");
  else if (p->perm_rc != 0)
    snprintf(why, cap,
             "no AMX: Linux refused the tile data (arch_prctl "
             "ARCH_REQ_XCOMP_PERM: %s)",
             strerror(p->perm_errno));
  else {
    snprintf(why, cap, "%s", "");
    return features;
  }
  return 0u;
}

unsigned mb__cpu_amx_usable(char *why, size_t cap) {
  mb_cpu_amx_probe_t p = {0, 0u, -1, 0};
#ifdef MB_CPU_AMX
  p.built = 1;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) p.leaf7_edx = edx;
  /* Only a CPU with tiles is asked about: elsewhere the answer is known. */
  if (p.leaf7_edx & AMX_TILE_BIT) {
    errno = 0;
    p.perm_rc =
        (int)syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM_, XFEATURE_XTILEDATA_);
    p.perm_errno = errno;
  }
#endif
  return mb__cpu_amx_verdict(&p, why, cap);
}

#ifdef MB_CPU_AMX
#define MB_AMX_TARGET __attribute__((target("amx-tile,amx-bf16,amx-int8")))

enum { TILE_ROWS = 16, TILE_BYTES = 64 }; /* the largest tile: 1 KiB */

/* ldtilecfg's 64-byte operand, palette 1. */
typedef struct tile_config {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config_t;

/* The compiler does not know what the tile instructions read: gcc's
 * ldtilecfg names only 8 bytes of its operand, tileloadd none. Handing the
 * address to an empty asm with a memory clobber makes every store to it
 * happen before. */
static inline void publish(const void *p) {
  __asm__ volatile("" : : "r"(p) : "memory");
}

/* Configures the eight tiles and loads A (tmm4, tmm5) and B (tmm6, tmm7)
 * from `data`, one 1 KiB tile of it; zeroes the accumulators. */
MB_AMX_TARGET static void start_tiles(const uint8_t *data) {
  tile_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = TILE_BYTES;
    cfg.rows[t] = TILE_ROWS;
  }
  publish(&cfg);
  _tile_loadconfig(&cfg);
  publish(data);
  _tile_loadd(4, data, TILE_BYTES);
  _tile_loadd(5, data, TILE_BYTES);
  _tile_loadd(6, data, TILE_BYTES);
  _tile_loadd(7, data, TILE_BYTES);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

/* Stores accumulator tmm0 and gives the tile state back (tilerelease), so
 * the thread does not carry 8 KiB of live tiles into every context switch
 * after the measurement. */
MB_AMX_TARGET static void end_tiles(void *out) {
  _tile_stored(0, out, TILE_BYTES);
  _tile_release();
}

/* bf16 0.01 (0x3c24) everywhere: an accumulator grows by 32 x 1e-4 per
 * step, far from overflow for any measuring time. */
MB_AMX_TARGET float mb__cpu_amx_bf16_loop(uint64_t iters) {
  uint16_t data[TILE_ROWS * TILE_BYTES / 2];
  for (size_t i = 0; i < sizeof data / sizeof data[0]; ++i) data[i] = 0x3c24;
  start_tiles((const uint8_t *)data);
  for (uint64_t n = 0; n < iters; ++n) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  float out[TILE_ROWS * TILE_BYTES / 4];
  end_tiles(out);
  return out[0];
}

/* int8 1 x 1: the int32 accumulators wrap harmlessly (no saturation). */
MB_AMX_TARGET float mb__cpu_amx_i8_loop(uint64_t iters) {
  uint8_t data[TILE_ROWS * TILE_BYTES];
  memset(data, 1, sizeof data);
  start_tiles(data);
  for (uint64_t n = 0; n < iters; ++n) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  int32_t out[TILE_ROWS * TILE_BYTES / 4];
  end_tiles(out);
  return (float)out[0];
}

#else /* !MB_CPU_AMX: never called, mb__cpu_amx_usable says 0 */

float mb__cpu_amx_bf16_loop(uint64_t iters) {
  (void)iters;
  return 0.0f;
}

float mb__cpu_amx_i8_loop(uint64_t iters) {
  (void)iters;
  return 0.0f;
}

#endif
