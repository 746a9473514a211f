/* CPU backend — AMX tile loops for the bf16 and int8 peaks (cpu_peak_amx.c).
 *
 * Kept apart from cpu_internal.h (no hwloc, no oneDNN) so a unit test can
 * compile cpu_peak_amx.c on its own and feed the probe's verdict fake
 * CPUID and arch_prctl answers. */
#ifndef MB_CPU_PEAK_AMX_H
#define MB_CPU_PEAK_AMX_H

#include <stddef.h>
#include <stdint.h>

/* The AMX features a loop needs / the machine lets us use. */
enum { MB_CPU_AMX_BF16 = 1u, MB_CPU_AMX_INT8 = 2u };

/* One iteration of a tile loop: 4 tile dot-products on 16 x 64-byte tiles,
 * each 16 x 16 outputs by a depth of 32 bf16 pairs / 64 int8 quads, a
 * multiply-add counting 2. */
#define MB_CPU_AMX_BF16_FLOP_PER_ITER (4.0 * 2 * 16 * 16 * 32)
#define MB_CPU_AMX_I8_FLOP_PER_ITER (4.0 * 2 * 16 * 16 * 64)

/* What the probe saw; filled by mb__cpu_amx_usable, faked by tests. */
typedef struct mb_cpu_amx_probe {
  int built;          /* 0: this build has no AMX loops (compiler, target) */
  uint32_t leaf7_edx; /* CPUID.(EAX=7,ECX=0):EDX */
  int perm_rc;        /* arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): 0 ok */
  int perm_errno;     /* its errno when perm_rc != 0 */
} mb_cpu_amx_probe_t;

/* The AMX features usable (MB_CPU_AMX_*) given a probe; with none, `why`
 * says why in a few words ("no AMX: ..."), else it is "". */
unsigned mb__cpu_amx_verdict(const mb_cpu_amx_probe_t *p, char *why,
                             size_t cap);

/* Probes this CPU and, where it has AMX, asks Linux for the tile data
 * state. The permission is the whole process's (every thread, those
 * started before too) and asking again is harmless, so this is called once
 * before the peak loops run on the pinned threads. */
unsigned mb__cpu_amx_usable(char *why, size_t cap);

/* `iters` iterations on this thread (its own tile configuration, released
 * at the end); the result only keeps the loop from being elided. Call only
 * when mb__cpu_amx_usable said the feature is there. */
float mb__cpu_amx_bf16_loop(uint64_t iters);
float mb__cpu_amx_i8_loop(uint64_t iters);

#endif
