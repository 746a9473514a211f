/* CPU backend — the one run-time test of the AVX-512 kernels (cpu_simd_*.c,
 * cpu_quant_x86.c, cpu_attention_loops.c): AVX-512 F, BW, VL and DQ, what
 * every one of them needs (Skylake-X and later); each asks for what it
 * needs beyond (BF16, F16C) itself. Only for x86-64 builds. */
#ifndef MB_CPU_SIMD_H
#define MB_CPU_SIMD_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MB_CPU_NO_AVX512 set (not "0"): the hand-written AVX-512 loops are left
 * out, as on a CPU without AVX-512 — the portable loops run, and such a
 * CPU's kernel defaults (cpu_vec_first.c) — so they are checked on one that
 * has it (ctest cpu_no_avx512). The compiler's clones of the portable loops
 * (MB_CPU_CLONES), oneDNN (ONEDNN_MAX_CPU_ISA) and the peak loops still
 * use what the CPU has. */
static inline int mb__cpu_has_avx512(void) {
  const char *off = getenv("MB_CPU_NO_AVX512");
  if (off && *off && strcmp(off, "0") != 0) return 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
}

/* How far ahead of a streaming loop's reads to ask for its input. On the
 * 2-core Xeon VM (KVM) this was measured on, a bf16 relu loop (load,
 * compute, non-temporal store) over 8192^2 ran at 58 % of a 4-line
 * unrolled copy without it: the hardware prefetcher does not run far
 * enough ahead of a loop that computes between its loads. Asking 1 KiB
 * ahead gave 70 %, 2 KiB 81 %, 4 KiB 88 %, 8 KiB 84 % (medians of 5, a
 * stand-alone loop). On the 2-core Zen 4 VM, bf16 relu, add and i4 -> bf16
 * dequantize ran alike with none and with 1-16 KiB ahead (2 threads,
 * 8192^2, three runs): its prefetcher keeps up; the hint stays for the
 * CPUs whose prefetcher does not. */
enum { MB_CPU_PREFETCH_AHEAD = 4096 };

/* Asks for the line MB_CPU_PREFETCH_AHEAD bytes past byte `at` of `p`, for
 * reading. Near the end of a buffer that address is past it: a prefetch
 * never faults, and the address is made as an integer, so no pointer
 * points outside its object. */
static inline void mb__cpu_prefetch_ahead(const void *p, size_t at) {
  __builtin_prefetch(
      (const void *)((uintptr_t)p + at + (uintptr_t)MB_CPU_PREFETCH_AHEAD), 0,
      3);
}

/* The prefetch ahead of a loop that steps 16 lanes of es-byte elements,
 * `at` the step's byte offset: one per 64-byte line, so every step for
 * f32 and every other one for 16-bit elements (a 32-byte step flips bit 5
 * of `at` each time, whatever the start). */
static inline void mb__cpu_prefetch_step16(const void *p, size_t at,
                                           size_t es) {
  if (es >= 4 || !(at & 32)) mb__cpu_prefetch_ahead(p, at);
}

/* Lanes [0, min(n, 16)) of a 16-lane mask: a loop's masked tail. */
static inline unsigned short mb__cpu_mask16(size_t n) {
  return n >= 16 ? 0xFFFFu : (unsigned short)((1u << (unsigned)n) - 1u);
}

/* Lanes [0, min(n, 32)) of a 32-lane mask (bytes or 16-bit lanes). */
static inline unsigned mb__cpu_mask32(size_t n) {
  return n >= 32 ? 0xFFFFFFFFu : (1u << (unsigned)n) - 1u;
}
#endif

#endif
